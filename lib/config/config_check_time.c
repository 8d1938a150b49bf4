/*
 * config_check_time.c -- the timing rules: client-go's order of
 * lease_duration, renew_deadline and retry_period, the API request and
 * watch timeouts, run.grace within the lease, and the shutdown budget.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/duration.h"
#include "config/config.h"
#include "config/config_check_int.h"
#include "config/config_int.h"
#include "core/elector.h"

void
config_check_timing(const struct config *c, struct config_errs *e)
{
	char		 ld[32], rd[32], rp[32], min[64], lo[32], hi[32];
	char		 why[256];
	uint64_t	 l = c->lease_duration_ms, r = c->renew_deadline_ms;
	uint64_t	 p = c->retry_period_ms;
	int		 n = e->n;

	duration_format(l, ld, sizeof(ld));
	duration_format(r, rd, sizeof(rd));
	duration_format(p, rp, sizeof(rp));
	if (l == 0)
		config_errs_add(e, ORIGIN(c, CONFIG_LEASE_DURATION),
		    "lease_duration must be greater than zero");
	else if (l % 1000 != 0) {
		duration_format(l / 1000 * 1000, lo, sizeof(lo));
		duration_format((l / 1000 + 1) * 1000, hi, sizeof(hi));
		config_errs_add(e, ORIGIN(c, CONFIG_LEASE_DURATION),
		    "lease_duration (%s) must be a whole number of seconds, "
		    "as the Lease stores leaseDurationSeconds; use %s%s%s", ld,
		    l < 1000 ? "" : lo, l < 1000 ? "" : " or ", hi);
	} else if (l / 1000 > INT32_MAX)
		config_errs_add(e, ORIGIN(c, CONFIG_LEASE_DURATION),
		    "lease_duration (%s) is too long for the Lease's "
		    "leaseDurationSeconds", ld);
	if (r == 0)
		config_errs_add(e, ORIGIN(c, CONFIG_RENEW_DEADLINE),
		    "renew_deadline must be greater than zero");
	if (p == 0)
		config_errs_add(e, ORIGIN(c, CONFIG_RETRY_PERIOD),
		    "retry_period must be greater than zero");
	if (l > 0 && r > 0 && r >= l)
		config_errs_add(e, ORIGIN(c, config_later(c,
		    CONFIG_RENEW_DEADLINE, CONFIG_LEASE_DURATION)),
		    "renew_deadline (%s) must be less "
		    "than lease_duration (%s); lower renew_deadline or raise "
		    "lease_duration", rd, ld);
	if (r > 0 && p > 0 && r * 5 <= p * 6) {
		/* NewLeaderElector (ref 1): renewDeadline > 1.2 x retryPeriod. */
		min[0] = '\0';
		if (p * 6 % 5 == 0) {
			snprintf(min, sizeof(min), ", that is more than ");
			duration_format(p * 6 / 5, min + strlen(min),
			    sizeof(min) - strlen(min));
		}
		config_errs_add(e, ORIGIN(c, config_later(c,
		    CONFIG_RENEW_DEADLINE, CONFIG_RETRY_PERIOD)),
		    "renew_deadline (%s) must be more "
		    "than 1.2 x retry_period (%s)%s; raise renew_deadline or "
		    "lower retry_period", rd, rp, min);
	}
	/* The elector's own check must agree; if not, say so anyway. */
	if (e->n == n && elector_check_timing(l, r, p, why, sizeof(why)) == -1)
		config_errs_add(e, ORIGIN(c, CONFIG_RENEW_DEADLINE), "%s", why);
}

void
config_check_request_timeout(const struct config *c, struct config_errs *e)
{
	char		 rd[32], rt[32];
	uint64_t	 r = c->renew_deadline_ms, t = c->request_timeout_ms;

	duration_format(r, rd, sizeof(rd));
	duration_format(t, rt, sizeof(rt));
	if (t == 0)
		config_errs_add(e, ORIGIN(c, CONFIG_REQUEST_TIMEOUT),
		    "kubernetes.request_timeout must be greater than zero");
	else if (r > 0 && t >= r)
		config_errs_add(e, ORIGIN(c, config_later(c,
		    CONFIG_REQUEST_TIMEOUT, CONFIG_RENEW_DEADLINE)),
		    "kubernetes.request_timeout (%s) "
		    "must be less than renew_deadline (%s), so that a renew "
		    "can fail and be retried in time; lower request_timeout or "
		    "raise renew_deadline", rt, rd);
}

/*
 * A watch shorter than a second is a request loop; the API server caps
 * timeoutSeconds by its own --min-request-timeout range anyway (1800 s
 * at most by default), so longer values are refused here.
 */
void
config_check_watch_timeout(const struct config *c, struct config_errs *e)
{
	uint64_t	 t = c->watch_timeout_ms;

	if (t < 1000 || t > 1800000 || t % 1000 != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_WATCH_TIMEOUT),
		    "kubernetes.watch_timeout must be a whole number of "
		    "seconds from 1s to 30m (default 5m)");
}

int
config_check_grace(const struct config *c, char *err, size_t errlen)
{
	uint64_t	 room;

	room = c->lease_duration_ms > c->renew_deadline_ms ?
	    c->lease_duration_ms - c->renew_deadline_ms : 0;
	if (c->run_grace_ms <= room)
		return 0;
	snprintf(err, errlen, "run.grace %llums is longer than lease_duration "
	    "- renew_deadline (%llums): a command that ignores SIGTERM may "
	    "still run when another instance takes the lease; lower "
	    "run.grace (--grace) or widen that gap",
	    (unsigned long long)c->run_grace_ms, (unsigned long long)room);
	return -1;
}

int
config_check_shutdown(const struct config *c, char *err, size_t errlen)
{
	struct config_errs	 e = { err, errlen, 0, 0 };
	char			 st[32], g[32];

	if (errlen > 0)
		err[0] = '\0';
	if (!c->set[CONFIG_SHUTDOWN_TIMEOUT] ||
	    c->shutdown_timeout_ms > c->run_grace_ms)
		return 0;
	duration_format(c->shutdown_timeout_ms, st, sizeof(st));
	duration_format(c->run_grace_ms, g, sizeof(g));
	config_errs_add(&e, ORIGIN(c, config_later(c,
	    CONFIG_SHUTDOWN_TIMEOUT, CONFIG_RUN_GRACE)),
	    "shutdown_timeout (%s) must be longer than "
	    "run.grace (%s): the budget counts from the signal and covers the "
	    "command's stop, then the release; raise shutdown_timeout (e.g. "
	    "to run.grace + 5s) or lower run.grace", st, g);
	return -1;
}

uint64_t
config_shutdown_ms(const struct config *c, uint64_t actions_ms)
{
	if (c->set[CONFIG_SHUTDOWN_TIMEOUT])
		return c->shutdown_timeout_ms;
	return c->shutdown_timeout_ms + actions_ms;
}
