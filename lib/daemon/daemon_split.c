/*
 * daemon_split.c -- the old-style lock checks of daemon_problem.c: a
 * "leases" election reads the Endpoints and the ConfigMap of the same
 * name, an "endpoints" or "configmaps" one the Lease, once at start and
 * every PROBLEM_SPLIT_MS, one GET at a time on a client of their own,
 * each on a connection of its own (kube_set_one_shot).
 * A live leader record there means electors on the other lock type
 * elect apart: the split_lock problem.  A refusal (403) or any other
 * failure is no problem by itself: it is logged at debug level only.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/kube.h"
#include "base/clock.h"
#include "base/log.h"
#include "codec/apitime.h"
#include "codec/lease.h"
#include "codec/legacy.h"
#include "daemon/daemon_int.h"

#define PROBLEM_SPLIT_MS	300000	/* the checks' period */

static void	split_send(struct daemon *);

/*
 * The answer to an old-style lock check: a live leader record on the
 * object of the other lock type is a split election.
 */
static void
split_cb(const struct kube_result *res, void *arg)
{
	struct daemon	*d = arg;
	struct election	*e = &d->el[d->side_el];
	struct lease	 rec;
	const char	*kind, *lt = e->conf->lock_type;
	char		 err[256], msg[LOCALAPI_PROBLEM_MAX];
	char		 t[APITIME_MICRO_LEN];
	int		 rc = -1;

	kind = strcmp(lt, "leases") != 0 ? "Lease" : d->side_step == 0 ?
	    "Endpoints" : "ConfigMap";
	memset(&rec, 0, sizeof(rec));
	if (res->outcome != KUBE_OK)
		log_debug("lease %s: old-style lock check: %s: %ld %s",
		    e->lock, kind, res->status, res->reason);
	else if (strcmp(kind, "Lease") == 0)
		rc = lease_decode(res->body, res->len, &rec, err, sizeof(err));
	else
		rc = legacy_decode(kind, res->body, res->len, &rec, err,
		    sizeof(err));
	/* Our own lease duration allows for the skew of the two clocks. */
	if (rc == 0 && legacy_record_live(&rec, clock_wall_us(),
	    (int64_t)e->conf->lease_duration_ms * 1000)) {
		daemon_problem_time(rec.renew_us, t);
		snprintf(msg, sizeof(msg), "the %s %.64s/%.64s of the same "
		    "name holds a live leader record of %.128s (renewed %s): electors on "
		    "that lock elect apart from this %s lock, so two may lead; "
		    "use lock type %s while migrating (docs/migrating.md)",
		    kind, e->conf->lock_namespace, e->conf->lock_name,
		    rec.holder, t, lt, strcmp(lt, "configmaps") == 0 ||
		    strcmp(kind, "ConfigMap") == 0 ? "configmapsleases" :
		    "endpointsleases");
		daemon_problem_set(e, PROBLEM_SPLIT_LOCK, msg);
		d->side_el = -1;
		return;
	}
	d->side_step++;
	if (strcmp(lt, "leases") == 0 && d->side_step < 2) {
		split_send(d);
		return;
	}
	daemon_problem_clear(e, PROBLEM_SPLIT_LOCK);
	d->side_el = -1;
}

/* Send the current check: the object of the other lock type. */
static void
split_send(struct daemon *d)
{
	struct election		*e = &d->el[d->side_el];
	const struct config	*c = e->conf;
	int			 rv;

	if (strcmp(c->lock_type, "leases") == 0)
		rv = kube_core_get(d->side, d->side_step == 0 ? "endpoints" :
		    "configmaps", c->lock_namespace, c->lock_name,
		    c->request_timeout_ms, split_cb, d);
	else
		rv = kube_lease_get(d->side, c->lock_namespace, c->lock_name,
		    c->request_timeout_ms, split_cb, d);
	if (rv == -1)
		d->side_el = -1;
}

void
daemon_split_due(struct daemon *d, uint64_t now_ms)
{
	int	 i;

	if (d->side == NULL || d->side_el >= 0 || d->stopping)
		return;
	for (i = 0; i < d->nel; i++) {
		if (d->el[i].pr.split_next_ms > now_ms)
			continue;
		d->el[i].pr.split_next_ms = now_ms + PROBLEM_SPLIT_MS;
		d->side_el = i;
		d->side_step = 0;
		split_send(d);
		return;
	}
}

