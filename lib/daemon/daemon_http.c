/*
 * daemon_http.c -- the local API's answers that need the daemon, not
 * only the elector's state: GET /metrics (counters and gauges) and
 * POST /leader/release (the step-down, answered once settled).  They
 * are entries of localapi_routes.c's route table, registered by
 * daemon_setup.c.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "codec/http_parse.h"
#include "config/config.h"
#include "core/elector.h"
#include "core/gate.h"
#include "daemon/daemon_int.h"
#include "server/httpd.h"
#include "server/metrics.h"

static void
reply_json_text(struct httpd_reply *reply, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
reply_json_text(struct httpd_reply *reply, int status, const char *fmt, ...)
{
	va_list	 ap;
	char	*body;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	reply->status = status;
	reply->content_type = "application/json";
	reply->body = body;
	reply->len = (size_t)n;
}

/* Election e's gauges at now_ms. */
static void
gauges(const struct election *e, uint64_t now_ms, struct metrics_gauges *g)
{
	const struct lease	*o = &e->el.observed;
	uint64_t		 exp;

	memset(g, 0, sizeof(*g));
	g->master = !e->d->stopping && elector_is_leader(&e->el, now_ms);
	g->connections = httpd_conns(e->d->httpd);
	/* As /leader's candidate: no gate reason, and no cooldown. */
	g->candidate = e->st.not_candidate == NULL &&
	    !elector_cooling_down(&e->el, now_ms);
	/* A lease held for life never expires: 0. */
	if (e->el.conf.for_life)
		g->expires_in_s = 0;
	else if (g->master)
		g->expires_in_s = (double)(e->el.lead_until_ms - now_ms) /
		    1000.0;
	else if (e->el.have_observed && o->holder[0] != '\0' &&
	    !e->el.ours) {
		exp = elector_expires_ms(&e->el);
		g->expires_in_s = exp > now_ms ?
		    (double)(exp - now_ms) / 1000.0 : 0;
	}
}

/*
 * GET /metrics: the counters and the gauges of this moment; with
 * several elections, each one's series labelled with its name.
 */
void
daemon_metrics_reply(const struct http_request *req,
    struct httpd_reply *reply, void *arg)
{
	struct daemon		*d = arg;
	struct metrics_gauges	 g;
	struct metrics_election	*els;
	const struct election	*e;
	struct buf		 b = { 0 };
	uint64_t		 now_ms = clock_mono_ms();
	char			*body;
	size_t			 len;
	int			 i;

	(void)req;
	els = xcalloc((size_t)d->nel, sizeof(*els));
	for (i = 0; i < d->nel; i++) {
		e = &d->el[i];
		gauges(e, now_ms, &g);
		els[i].m = &e->metrics;
		els[i].master = (uint64_t)g.master;
		els[i].slowpath = e->metrics.slowpath;
		els[i].transitions = e->metrics.transitions;
		els[i].renew_failures = e->metrics.renew_failures;
		els[i].expires_in_s = g.expires_in_s;
		els[i].candidate = (uint64_t)g.candidate;
	}
	gauges(&d->el[0], now_ms, &g);
	reply->status = 200;
	reply->content_type = METRICS_CONTENT_TYPE;
	reply->body = metrics_render_elections(&d->el[0].metrics, &g, els,
	    (size_t)d->nel, &reply->len);
	free(els);
	if (d->sh != NULL) {
		/* The group's own gauges after the elections' series. */
		body = reply->body;
		buf_add(&b, body, reply->len);
		free(body);
		daemon_shards_metrics(d, now_ms, &b);
		reply->body = buf_steal(&b, &len);
		reply->len = len;
	}
}

/* The answer to a step-down, once settled or out of time. */
static void
release_answer(struct election *e, struct httpd_reply *reply)
{
	int	 state = e->release_state;

	e->release_state = RELEASE_NONE;
	if (state == RELEASE_PENDING)
		reply_json_text(reply, 202, "{\"released\":false,"
		    "\"is_leader\":false,\"cooldown_ms\":%llu,"
		    "\"reason\":\"the release is not written yet; leaderd no "
		    "longer leads and keeps trying\"}\n",
		    (unsigned long long)e->el.conf.cooldown_ms);
	else
		reply_json_text(reply, 200, "{\"released\":%s,"
		    "\"is_leader\":false,\"cooldown_ms\":%llu}\n",
		    state == RELEASE_DONE ? "true" : "false",
		    (unsigned long long)e->el.conf.cooldown_ms);
}

/* Run mode: the command is gone; hand over or release now. */
static void
release_held_cb(void *arg)
{
	struct election	*e = arg;
	struct daemon	*d = e->d;

	e->release_holding = 0;
	if (d->stopping || e->release_state != RELEASE_PENDING)
		return;
	if (!elector_is_leader(&e->el, clock_mono_ms())) {
		/* The claim ended while the command stopped. */
		e->release_state = RELEASE_MOOT;
		if (d->httpd != NULL)
			httpd_wake(d->httpd);
		return;
	}
	if (e->handover_to[0] != '\0')
		daemon_step(e, ELECTOR_IN_HANDOVER, NULL);
	else
		daemon_step(e, ELECTOR_IN_STEP_DOWN, NULL);
	if (e->act != NULL && d->reason == GATE_OK)
		actions_hold(e->act, 0, NULL, NULL);
}

/*
 * POST /leader/release[?to=IDENTITY]: step down, or hand the lease to
 * IDENTITY (a directed handover: the lease is written over to it, and a
 * leaderd successor takes it at once; a client-go one at its next poll;
 * an absent one lets it expire).  Served on the unix socket and on a TCP
 * listener bound to loopback only.  In run mode the command is stopped
 * first.  The answer waits for the release or handover to be written
 * (200), or for another holder's write that made it moot (200,
 * "released": false); if neither comes within renew_deadline +
 * request_timeout (+ run.grace in run mode), 202: leaderd no longer
 * leads and keeps trying.  Without waiting requests
 * (listen.max_streams 0) the answer is 202 at once.
 */
void
daemon_release_reply(const struct http_request *req,
    struct httpd_reply *reply, void *arg)
{
	struct election	*e = arg;
	struct daemon	*d = e->d;
	uint64_t	 now_ms = clock_mono_ms();
	int		 state = e->release_state;
	char		 to[LEASE_HOLDER_MAX], key[32];
	const char	*q = req->query;
	size_t		 n;

	if (reply->waited || reply->wait_over) {
		/* The step-down this request asked for. */
		if (state == RELEASE_PENDING && !reply->wait_over)
			reply->mode = HTTPD_REPLY_WAIT;
		else
			release_answer(e, reply);
		return;
	}
	to[0] = '\0';
	if (q[0] != '\0') {
		n = strcspn(q, "=&");
		snprintf(key, sizeof(key), "%.*s", (int)(n < 31 ? n : 31), q);
		if (strcmp(key, "to") != 0 || q[n] != '=' ||
		    http_query_get(q, "to", to, sizeof(to)) < 0 ||
		    to[0] == '\0' ||
		    strchr(q + n + 1, '&') != NULL) {
			reply_json_text(reply, 400, "{\"error\":\"POST "
			    "/leader/release takes one parameter, to=IDENTITY "
			    "(a directed handover)\",\"status\":400}\n");
			return;
		}
		if (config_identity_bad(to) != (size_t)-1 ||
		    strlen(to) > 253) {
			reply_json_text(reply, 400, "{\"error\":\"to: not an "
			    "identity (1 to 253 letters, digits, '-', '.' and "
			    "'_', starting and ending with a letter or "
			    "digit)\",\"status\":400}\n");
			return;
		}
		if (strcmp(to, e->conf->identity) == 0) {
			reply_json_text(reply, 400, "{\"error\":\"to: this "
			    "instance's own identity; name another\","
			    "\"status\":400}\n");
			return;
		}
		if (strcmp(e->conf->lock_type, "leases") != 0 ||
		    d->for_life) {
			reply_json_text(reply, 400, "{\"error\":\"a directed "
			    "handover needs lock.type leases\","
			    "\"status\":400}\n");
			return;
		}
	}
	if (state == RELEASE_DONE || state == RELEASE_MOOT) {
		/* Settled, and nobody waited for it (the wait was refused). */
		e->release_state = state = RELEASE_NONE;
	}
	if (d->stopping || state != RELEASE_NONE || d->for_life ||
	    !elector_is_leader(&e->el, now_ms)) {
		reply_json_text(reply, 409, "{\"error\":\"%s\","
		    "\"status\":409}\n", d->stopping ? "leaderd is stopping" :
		    d->for_life ? "the lease is held for life (compat nais) "
		    "and never released; it goes when the pod is deleted" :
		    state != RELEASE_NONE ? "a step-down is already under way" :
		    "not the leader");
		return;
	}
	snprintf(e->handover_to, sizeof(e->handover_to), "%s", to);
	if (to[0] != '\0')
		log_info("lease %s: handing over to %s (POST /leader/release), "
		    "cooldown %llu ms", e->lock, to,
		    (unsigned long long)e->el.conf.cooldown_ms);
	else
		log_info("lease %s: stepping down (POST /leader/release), "
		    "cooldown %llu ms", e->lock,
		    (unsigned long long)e->el.conf.cooldown_ms);
	e->release_state = RELEASE_PENDING;
	if (e->idx == 0 && d->cmd != NULL && e->act != NULL) {
		/* The command must be gone before the lease moves. */
		e->release_holding = 1;
		actions_hold(e->act, 1, release_held_cb, e);
	} else if (to[0] != '\0')
		daemon_step(e, ELECTOR_IN_HANDOVER, NULL);
	else
		daemon_step(e, ELECTOR_IN_STEP_DOWN, NULL);
	if (e->release_state == RELEASE_PENDING &&
	    d->conf->listen_max_streams > 0) {
		reply->mode = HTTPD_REPLY_WAIT;
		reply->wait_ms = e->conf->renew_deadline_ms +
		    e->conf->request_timeout_ms +
		    (e->idx == 0 && d->cmd != NULL ? e->conf->run_grace_ms :
		    0);
		return;
	}
	release_answer(e, reply);
}
