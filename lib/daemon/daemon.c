/*
 * daemon.c -- the driver's loop.  daemon_run makes each election's state
 * and has daemon_setup.c set up the clients, the watch, the actions and
 * the local API; then it feeds the elector its inputs and carries out its
 * actions (daemon_step), keeps one timer for the elector's wake time and
 * one for the end of our leadership, and frees it all when the loop ends.
 * The stop on a signal, within the shutdown budget, is daemon_stop.c's.
 * The API's answers become inputs in daemon_api.c; the local API's daemon
 * answers are in daemon_http.c.
 */

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "actions/actions.h"
#include "api/curlev.h"
#include "api/kube.h"
#include "api/lock.h"
#include "api/token.h"
#include "api/watch.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "codec/lease.h"
#include "config/config.h"
#include "core/elector.h"
#include "daemon/daemon.h"
#include "daemon/daemon_int.h"
#include "server/httpd.h"
#include "server/localapi.h"
#include "server/metrics.h"

static void
arm_wake(struct election *e, uint64_t wake_ms)
{
	struct ev_loop	*loop = e->d->loop;
	uint64_t	 now_ms;

	ev_timer_stop(loop, &e->wake);
	e->st.wake_ms = wake_ms;
	if (wake_ms == 0)
		return;
	ev_now_update(loop);
	now_ms = clock_mono_ms();
	ev_timer_set(&e->wake, wake_ms > now_ms ?
	    clock_timer_seconds(wake_ms - now_ms) : 0., 0.);
	ev_timer_start(loop, &e->wake);
}

/* Whether every election has stopped (its release done or given up). */
static int
all_stopped(const struct daemon *d)
{
	int	 i;

	for (i = 0; i < d->nel; i++)
		if (d->el[i].el.state != ELECTOR_STOPPED)
			return 0;
	return 1;
}

/*
 * Tell the actions (command, label) until when we lead, after every
 * elector step; they keep their own timer for the end of the claim.
 */
static void
sync_actions(struct election *e)
{
	uint64_t	 now_ms = clock_mono_ms();
	char		 token[LEASE_TOKEN_MAX];

	if (e->act == NULL)
		return;
	lease_fencing_token(&e->el.observed, token, sizeof(token));
	actions_sync(e->act, elector_is_leader(&e->el, now_ms) ?
	    e->el.lead_until_ms : 0, token, now_ms);
}

#ifdef LEADERD_TEST_HOOKS
/*
 * Test builds only: with $LEADERD_TEST_ELECTOR_TRACE set, every step is
 * appended to the file of that name plus ".PID", as the lock's name (64
 * bytes), the elector
 * before it, the input, whether it carries a record, the record (or
 * zeros), in.to (LEASE_HOLDER_MAX bytes) and the action, in this
 * machine's layout; test/unit/elector_replay.c reads it back.
 */
static void
trace_step(const char *lock, const struct elector *pre,
    const struct elector_input *in, const struct elector_action *act)
{
	static FILE	*f;
	const char	*path = getenv("LEADERD_TEST_ELECTOR_TRACE");
	char		 name[64], to[LEASE_HOLDER_MAX], file[4096];
	struct lease	 rec;
	int		 has = in->record != NULL;

	if (path == NULL)
		return;
	snprintf(file, sizeof(file), "%s.%ld", path, (long)getpid());
	if (f == NULL && (f = fopen(file, "ab")) == NULL)
		return;
	memset(name, 0, sizeof(name));
	memset(to, 0, sizeof(to));
	memset(&rec, 0, sizeof(rec));
	memcpy(name, lock, strnlen(lock, sizeof(name) - 1));
	snprintf(to, sizeof(to), "%s", in->to != NULL ? in->to : "");
	if (has)
		rec = *in->record;
	fwrite(name, sizeof(name), 1, f);
	fwrite(pre, sizeof(*pre), 1, f);
	fwrite(in, sizeof(*in), 1, f);
	fwrite(&has, sizeof(has), 1, f);
	fwrite(&rec, sizeof(rec), 1, f);
	fwrite(to, sizeof(to), 1, f);
	fwrite(act, sizeof(*act), 1, f);
	fflush(f);
}
#endif

/*
 * Feed one input to the elector and carry out its action.  A request that
 * cannot be started comes back as FAILED, which the elector answers with
 * a later retry, so the loop ends.
 */
void
daemon_step(struct election *e, enum elector_input_kind kind,
    const struct lease *rec)
{
	struct daemon		*d = e->d;
	struct elector_input	 in;
	struct elector_action	 act;

	for (;;) {
		memset(&in, 0, sizeof(in));
		in.kind = kind;
		in.now_ms = clock_mono_ms();
		in.wall_us = clock_wall_us();
		in.record = rec;
		if (kind == ELECTOR_IN_STOP)
			in.until_ms = d->stop_until_ms;
		if (kind == ELECTOR_IN_WATCH_UP)
			in.poll_ms = WATCH_POLL_MS;
		if (kind == ELECTOR_IN_HANDOVER)
			in.to = e->handover_to;
		if (kind == ELECTOR_IN_CANDIDACY) {
			in.candidate = e->cand_in;
			in.cooldown_ms = e->cand_cooldown_ms;
		}
#ifdef LEADERD_TEST_HOOKS
		struct elector	 pre = e->el;

		elector_step(&e->el, &in, &act);
		trace_step(e->lock, &pre, &in, &act);
#else
		elector_step(&e->el, &in, &act);
#endif
		if (act.cancel) {
			/*
			 * Abandon the request in flight (a stalled renew): its
			 * connection is dropped and the release goes out at
			 * once on a fresh one.
			 */
			log_debug("lease %s: request in flight abandoned",
			    e->lock);
			lock_cancel(e->lk);
			e->req = ELECTOR_DO_NOTHING;
			e->req_renew = 0;
			e->st.req_deadline_ms = 0;
		}
		daemon_log_events(e, act.events);
		daemon_notify_local(e);
		sync_actions(e);
		daemon_shards_changed(d);
		if (e->el.state == ELECTOR_STOPPED) {
			if (d->stopping && !e->released &&
			    in.now_ms >= e->el.stop_until_ms)
				daemon_say_unreleased(e);
			lock_cancel(e->lk);
			e->req = ELECTOR_DO_NOTHING;
			e->st.req_deadline_ms = 0;
			ev_timer_stop(d->loop, &e->wake);
			/*
			 * The loop ends once every election has stopped, after
			 * a group's member Lease is deleted and the
			 * LeaseCandidate's delete, if one is under way.
			 */
			if (all_stopped(d) && !daemon_shards_stopped(d)) {
				if (d->stopping && daemon_cand_busy(d))
					d->exit_wait = 1;
				else
					ev_break(d->loop, EVBREAK_ALL);
			}
			return;
		}
		if (act.kind == ELECTOR_DO_NOTHING ||
		    daemon_send_request(e, &act) == 0)
			break;
		kind = ELECTOR_IN_FAILED;
		rec = NULL;
	}
	arm_wake(e, act.wake_ms);
}

static void
wake_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct election	*e = w->data;

	(void)loop;
	(void)revents;
	e->st.wake_ms = 0;
	daemon_step(e, ELECTOR_IN_TICK, NULL);
}

/*
 * Push a change of who leads to the local API's clients: the event to
 * every stream, an answer to every blocking read.  Called after each
 * elector step and when our leadership runs out, which happens by time
 * alone (elector_is_leader turns false at lead_until_ms without any
 * input), so a timer is kept at that moment.
 */
void
daemon_notify_local(struct election *e)
{
	struct daemon	*d = e->d;
	uint64_t	 now_ms = clock_mono_ms();
	char		*ev;
	size_t		 len;

	daemon_resume_arm(d);
	if (d->httpd == NULL)
		return;
	if (localapi_changed(&e->st, now_ms, clock_wall_us())) {
		/*
		 * Its own streams (the first's are /leader/watch's too), and
		 * with several elections GET /leaders/watch's.
		 */
		ev = localapi_event(&e->st, now_ms, &len);
		httpd_stream_send_on(d->httpd, e->st.channel, ev, len);
		if (e->st.all != NULL)
			httpd_stream_send_on(d->httpd, LOCALAPI_ALL_CHANNEL,
			    ev, len);
		free(ev);
		httpd_wake(d->httpd);
	}
	/* A peer's own view, and its streams (nais's /sse). */
	if (e->idx == 0 && (ev = localapi_peer_event(&e->st, now_ms,
	    clock_wall_us(), &len)) != NULL) {
		httpd_stream_send_on(d->httpd, LOCALAPI_PEER_CHANNEL, ev, len);
		free(ev);
	}
	ev_timer_stop(d->loop, &e->lead_end);
	/* A claim held for life ends by a read, never by time. */
	if (elector_is_leader(&e->el, now_ms) &&
	    e->el.lead_until_ms != ELECTOR_FOR_LIFE_MS) {
		ev_now_update(d->loop);
		ev_timer_set(&e->lead_end, clock_timer_seconds(
		    e->el.lead_until_ms - now_ms), 0.);
		ev_timer_start(d->loop, &e->lead_end);
	}
}

static void
lead_end_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	daemon_notify_local(w->data);
}

/* Election i's state before set-up: its config, name, timers. */
static void
election_init(struct daemon *d, int i)
{
	struct election		*e = &d->el[i];
	const struct config	*c;

	e->d = d;
	e->idx = i;
	if (i == 0)
		e->conf = d->conf;
	else {
		e->own = xcalloc(1, sizeof(*e->own));
		if (d->sh != NULL)
			daemon_shards_conf(d, i, e->own);
		else
			config_election(d->conf, i, e->own);
		e->conf = e->own;
	}
	c = e->conf;
	e->st.conf = c;
	e->st.el = &e->el;
	e->st.election = d->sh != NULL ? c->lock_name :
	    config_election_name(d->conf, i);
	e->st.channel = i == 0 ? 0 : LOCALAPI_ELECTION_CHANNEL + i;
	metrics_init(&e->metrics, e->st.election, LEADERD_VERSION);
	metrics_lock(&e->metrics, c->lock_type, c->lock_namespace,
	    c->lock_name, c->identity);
	/* Leases keep the log lines they always had: "lease ns/name". */
	snprintf(e->lock, sizeof(e->lock), "%s%s%s/%s",
	    strcmp(c->lock_type, "leases") == 0 ? "" : c->lock_type,
	    strcmp(c->lock_type, "leases") == 0 ? "" : "/",
	    c->lock_namespace, c->lock_name);
	ev_timer_init(&e->wake, wake_cb, 0., 0.);
	e->wake.data = e;
	ev_init(&e->lead_end, lead_end_cb);
	e->lead_end.data = e;
}

static void
election_free(struct election *e)
{
	struct ev_loop	*loop = e->d->loop;

	ev_timer_stop(loop, &e->wake);
	ev_timer_stop(loop, &e->lead_end);
	watch_free(e->watch);
	free(e->pend_obj);
	lock_free(e->lk);
	if (e->kube != NULL)
		kube_free(e->kube);
	free(e->own);
}

int
daemon_run(const struct config *c, const struct kube_creds *creds,
    char *const *cmd)
{
	struct daemon	 d;
	struct election	*e;
	int		 status = 1, i;

	memset(&d, 0, sizeof(d));
	d.cmd = cmd;
	d.conf = c;
	d.nel = 1 + c->nelections;
	daemon_shards_init(&d);
	d.ngate = d.sh != NULL ? 1 : d.nel;
	d.el = xcalloc((size_t)d.nel, sizeof(*d.el));
	signal(SIGPIPE, SIG_IGN);
	d.loop = ev_default_loop(EVFLAG_AUTO);
	daemon_resume_init(&d);
	for (i = 0; i < d.nel; i++)
		election_init(&d, i);
	ev_init(&d.hard_stop, daemon_hard_stop_cb);
	d.hard_stop.data = &d;
	ev_init(&d.owner_retry, NULL);
	d.owner_retry.data = &d;
	ev_signal_init(&d.sigterm, daemon_signal_cb, SIGTERM);
	ev_signal_init(&d.sigint, daemon_signal_cb, SIGINT);
	ev_signal_init(&d.sighup, daemon_signal_cb, SIGHUP);
	d.sigterm.data = d.sigint.data = d.sighup.data = &d;
	ev_signal_start(d.loop, &d.sigterm);
	ev_signal_start(d.loop, &d.sigint);
	ev_signal_start(d.loop, &d.sighup);

	if (daemon_setup(&d, c, creds) == 0) {
		/* A shard group's shards: one line (daemon_shards_start). */
		for (i = 0; i < (d.sh != NULL ? 1 : d.nel); i++) {
			e = &d.el[i];
			log_info("leaderd %s: identity %s, lease %s, "
			    "lease_duration %llums, renew_deadline %llums, "
			    "retry_period %llums%s%s", LEADERD_VERSION,
			    c->identity, e->lock,
			    (unsigned long long)e->conf->lease_duration_ms,
			    (unsigned long long)e->conf->renew_deadline_ms,
			    (unsigned long long)e->conf->retry_period_ms,
			    d.nel > 1 ? ", election " : "",
			    d.nel > 1 ? e->st.election : "");
		}
		/* For life, the Lease's owner is read first (nais's setup). */
		if (d.for_life)
			daemon_owner_read(&d);
		else if (d.sh != NULL) {
			daemon_step(&d.el[0], ELECTOR_IN_TICK, NULL);
			daemon_shards_start(&d);
		} else
			for (i = 0; i < d.nel && !d.stopping; i++)
				daemon_step(&d.el[i], ELECTOR_IN_TICK, NULL);
		ev_run(d.loop, 0);
		status = 0;
	}

	ev_timer_stop(d.loop, &d.hard_stop);
	ev_timer_stop(d.loop, &d.owner_retry);
	for (i = 0; i < d.nel; i++) {
		e = &d.el[i];
		if (e->act == NULL)
			continue;
		if (i == 0 && status == 0 && actions_exit_code(e->act) >= 0)
			status = actions_exit_code(e->act);
		actions_free(e->act);
	}
	daemon_gate_free(&d);
	daemon_problem_free(&d);
	daemon_cand_free(&d);
	if (d.httpd != NULL)
		httpd_free(d.httpd);
	free(d.routes);
	free(d.sts);
	daemon_shards_free(&d);
	for (i = 0; i < d.nel; i++)
		election_free(&d.el[i]);
	free(d.el);
	if (d.events != NULL)
		kube_free(d.events);
	/* After every client that borrows it, the label's included. */
	token_free(d.token);
	if (d.cv != NULL)
		curlev_free(d.cv);
	ev_signal_stop(d.loop, &d.sigterm);
	ev_signal_stop(d.loop, &d.sigint);
	ev_signal_stop(d.loop, &d.sighup);
	daemon_resume_free(&d);
	ev_loop_destroy(d.loop);
	if (status == 0)
		log_info("exiting");
	return status;
}
