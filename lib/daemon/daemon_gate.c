/*
 * daemon_gate.c -- candidacy (issue "leadership follows the
 * application"): the application probe's results, the local clients'
 * streams and the pause by hand go into core/gate.c; its verdict goes to
 * the elector as ELECTOR_IN_CANDIDACY, so that the election's rules
 * (the CAS release, the cooldown, never two leaders) stay the elector's.
 * In run mode the command is stopped before the lease is released, as on
 * SIGTERM.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "codec/http_parse.h"
#include "core/elector.h"
#include "core/gate.h"
#include "daemon/daemon_int.h"

static void
feed(struct election *e, int on)
{
	struct daemon	*d = e->d;

	e->cand = on;
	e->cand_in = on;
	e->cand_cooldown_ms = on ? 0 : gate_cooldown(&d->gate, d->reason);
	e->cand_lost = on ? NULL : gate_reason_text(d->reason);
	daemon_step(e, ELECTOR_IN_CANDIDACY, NULL);
	e->cand_lost = NULL;
}

/* Run mode: the command is gone; candidacy can end now. */
static void
held_cb(void *arg)
{
	struct daemon	*d = arg;

	if (!d->holding)
		return;
	d->holding = 0;
	if (!d->stopping && d->reason != GATE_OK)
		feed(&d->el[0], 0);
}

/* Apply the gate's verdict: to the local API, the log and the elector. */
static void
apply(struct daemon *d)
{
	struct election		*e = &d->el[0];
	uint64_t		 now_ms = clock_mono_ms(), wake;
	enum gate_reason	 r = gate_verdict(&d->gate, now_ms);
	int			 changed, i;

	ev_timer_stop(d->loop, &d->gate_timer);
	if ((wake = gate_wake(&d->gate, now_ms)) != 0) {
		ev_now_update(d->loop);
		ev_timer_set(&d->gate_timer, clock_timer_seconds(wake -
		    now_ms), 0.);
		ev_timer_start(d->loop, &d->gate_timer);
	}
	if (r != d->reason) {
		if (r == GATE_OK)
			log_info("lease %s: a candidate again", e->lock);
		else
			log_info("lease %s: not a candidate: %s", e->lock,
			    gate_reason_text(r));
	}
	changed = r != d->reason;
	d->reason = r;
	for (i = 0; i < d->nel; i++)
		d->el[i].st.not_candidate = r == GATE_OK ? NULL :
		    gate_reason_text(r);
	if (d->stopping)
		return;
	/* The first election: in run mode its command goes first. */
	if (r == GATE_OK && changed && d->cmd != NULL && e->act != NULL) {
		d->holding = 0;
		actions_hold(e->act, 0, NULL, NULL);
	}
	if (r == GATE_OK && !e->cand)
		feed(e, 1);
	else if (r != GATE_OK && e->cand && !d->holding) {
		if (d->cmd != NULL && e->act != NULL &&
		    elector_is_leader(&e->el, now_ms)) {
			/* The command first, then the release (held_cb). */
			d->holding = 1;
			actions_hold(e->act, 1, held_cb, d);
		} else {
			if (d->cmd != NULL && e->act != NULL)
				actions_hold(e->act, 1, NULL, NULL);
			feed(e, 0);
		}
	}
	/*
	 * The others follow the verdict at once: they have no command.  A
	 * shard group's shards follow the planner, which reads the verdict.
	 */
	for (i = 1; i < d->ngate; i++) {
		if (r == GATE_OK && !d->el[i].cand)
			feed(&d->el[i], 1);
		else if (r != GATE_OK && d->el[i].cand)
			feed(&d->el[i], 0);
	}
	daemon_shards_changed(d);
	/* Push a changed candidate_reason to the local API's clients. */
	if (changed)
		for (i = 0; i < d->nel; i++)
			daemon_step(&d->el[i], ELECTOR_IN_TICK, NULL);
}

static void
probe_cb(int ok, uint64_t took_ms, const char *why, void *arg)
{
	struct daemon	*d = arg;

	metrics_app_probe(&d->el[0].metrics, ok, (double)took_ms / 1000.0);
	if (!ok)
		snprintf(d->probe_why, sizeof(d->probe_why), "%s",
		    why != NULL ? why : "unknown");
	if (!ok && (d->gate.last_ok || !d->gate.probed))
		log_warnx("lease %s: the application's probe failed: %s",
		    d->el[0].lock, why != NULL ? why : "unknown");
	else if (ok && d->gate.probed && !d->gate.last_ok)
		log_info("lease %s: the application's probe succeeds again",
		    d->el[0].lock);
	gate_probe(&d->gate, ok);
	apply(d);
}

/*
 * The application's streams changed (their number: daemon_gate_setup
 * says which count).  httpd may be in the middle of its work: apply the
 * change from the loop, at once.
 */
static void
streams_cb(int n, void *arg)
{
	struct daemon	*d = arg;

	gate_clients(&d->gate, (unsigned)n, clock_mono_ms());
	ev_timer_stop(d->loop, &d->gate_timer);
	ev_timer_set(&d->gate_timer, 0., 0.);
	ev_timer_start(d->loop, &d->gate_timer);
}

static void
gate_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	apply(w->data);
}

int
daemon_gate_setup(struct daemon *d)
{
	const struct config	*c = d->conf;
	struct gate_config	 gc;
	struct appprobe_config	 pc;
	char			 err[512], warn[CONFIG_ERR_MAX];
	int			 i;

	memset(&gc, 0, sizeof(gc));
	gc.probe = c->probe_url[0] != '\0';
	gc.failure_threshold = (unsigned)c->probe_failures;
	gc.success_threshold = (unsigned)c->probe_successes;
	gc.require_client = c->require_client;
	gc.client_grace_ms = c->client_grace_ms;
	gc.cooldown_ms = c->candidacy_cooldown_ms;
	gate_init(&d->gate, &gc);
	ev_init(&d->gate_timer, gate_timer_cb);
	d->gate_timer.data = d;
	for (i = 0; i < d->nel; i++)
		d->el[i].cand = 1;
	d->reason = GATE_OK;
	/*
	 * The application's stream is the first election's, from this pod:
	 * channel 0 (/leader/watch, /sse, /leader/NAME/watch for its NAME)
	 * and a peer's own (GET /sse under compat nais).  Not
	 * /leaders/watch, another election's or /shards/watch, nor a peer
	 * off the loopback (review L2).
	 */
	if (c->require_client)
		httpd_set_streams_cb(d->httpd, UINT32_C(1) << 0 |
		    UINT32_C(1) << LOCALAPI_PEER_CHANNEL, streams_cb, d);
	if (config_check_client_listen(c, warn, sizeof(warn)) == -1)
		log_warnx("%s", warn);
	if (gc.probe) {
		memset(&pc, 0, sizeof(pc));
		snprintf(pc.url, sizeof(pc.url), "%s", c->probe_url);
		pc.period_ms = c->probe_period_ms;
		pc.timeout_ms = c->probe_timeout_ms;
		d->el[0].metrics.app_probe = 1;
		if ((d->probe = appprobe_new(d->loop, d->cv, &pc, probe_cb, d,
		    err, sizeof(err))) == NULL) {
			log_warnx("candidacy.probe.url: %s", err);
			return -1;
		}
	}
	if (gate_verdict(&d->gate, clock_mono_ms()) != GATE_OK) {
		d->reason = gate_verdict(&d->gate, clock_mono_ms());
		for (i = 0; i < d->nel; i++)
			d->el[i].st.not_candidate = gate_reason_text(d->reason);
		log_info("lease %s: not a candidate yet: %s", d->el[0].lock,
		    gate_reason_text(d->reason));
		for (i = 0; i < d->ngate; i++)
			feed(&d->el[i], 0);
	}
	return 0;
}

void
daemon_gate_free(struct daemon *d)
{
	ev_timer_stop(d->loop, &d->gate_timer);
	appprobe_free(d->probe);
	d->probe = NULL;
}

/*
 * POST /leader/pause: leave candidacy by hand (a leader releases at once,
 * as on SIGTERM; in run mode the command goes first) until POST
 * /leader/resume.  A restart is a candidate again.  Served on the unix
 * socket and on a loopback listener only.
 */
void
daemon_pause_reply(const struct http_request *req,
    struct httpd_reply *reply, void *arg)
{
	struct daemon	*d = arg;
	int		 pause = strcmp(req->path, "/leader/pause") == 0, n;
	char		*body;

	if (req->query[0] != '\0') {
		reply->status = 400;
		reply->content_type = "application/json";
		if ((n = asprintf(&body, "{\"error\":\"%s takes no "
		    "parameters\",\"status\":400}\n", req->path)) >= 0) {
			reply->body = body;
			reply->len = (size_t)n;
		}
		return;
	}
	if (d->stopping) {
		reply->status = 409;
		reply->content_type = "application/json";
		if ((n = asprintf(&body, "{\"error\":\"leaderd is stopping\","
		    "\"status\":409}\n")) >= 0) {
			reply->body = body;
			reply->len = (size_t)n;
		}
		return;
	}
	if (pause != d->gate.paused)
		log_info("lease %s: %s (POST %s)", d->el[0].lock, pause ?
		    "paused" :
		    "resumed", req->path);
	gate_pause(&d->gate, pause);
	apply(d);
	reply->status = 200;
	reply->content_type = "application/json";
	if ((n = asprintf(&body, "{\"paused\":%s,\"candidate\":%s,"
	    "\"candidate_reason\":\"%s\",\"is_leader\":%s}\n",
	    pause ? "true" : "false", d->reason == GATE_OK ? "true" : "false",
	    gate_reason_text(d->reason), elector_is_leader(&d->el[0].el,
	    clock_mono_ms()) ? "true" : "false")) >= 0) {
		reply->body = body;
		reply->len = (size_t)n;
	}
}
