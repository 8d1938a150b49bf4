/*
 * daemon.c -- the driver's loop.  It sets up the clients, the watch, the
 * actions and the local API, feeds the elector its inputs and carries
 * out its actions (daemon_step), keeps one timer for the elector's wake
 * time and one for the end of our leadership, and stops on a signal
 * within the shutdown budget.  The API's answers become inputs in
 * daemon_api.c; the local API's daemon answers are in daemon_http.c.
 */

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
#include "config/compat.h"
#include "config/config.h"
#include "core/elector.h"
#include "daemon/daemon.h"
#include "daemon/daemon_int.h"
#include "server/httpd.h"
#include "server/localapi.h"
#include "server/metrics.h"

static void	notify_local(struct election *);
static void	stop_daemon(struct daemon *, const char *);

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
		elector_step(&e->el, &in, &act);
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
		notify_local(e);
		sync_actions(e);
		daemon_shards_changed(d);
		if (e->el.state == ELECTOR_STOPPED) {
			if (d->stopping && !e->released &&
			    in.now_ms >= e->el.stop_until_ms)
				log_warnx("lease %s: shutdown_timeout spent; the "
				    "release was not written, followers take "
				    "over after lease_duration", e->lock);
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
static void
notify_local(struct election *e)
{
	struct daemon	*d = e->d;
	uint64_t	 now_ms = clock_mono_ms();
	char		*ev;
	size_t		 len;

	if (d->httpd == NULL)
		return;
	if (localapi_changed(&e->st, now_ms, clock_wall_us())) {
		/* Its own streams; the first's are /leader/watch's too. */
		ev = localapi_event(&e->st, now_ms, &len);
		httpd_stream_send_on(d->httpd, e->st.channel, ev, len);
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
	notify_local(w->data);
}

/* The shutdown budget is spent: say what did not finish, and exit. */
static void
hard_stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon	*d = w->data;
	struct election	*e;
	const char	*what;
	int		 i;

	(void)revents;
	for (i = 0; i < d->nel; i++) {
		e = &d->el[i];
		if (e->act != NULL &&
		    (what = actions_unfinished(e->act)) != NULL)
			log_warnx("lease %s: shutdown_timeout spent: %s",
			    e->lock, what);
		if (!e->released && e->el.state != ELECTOR_STOPPED)
			log_warnx("lease %s: shutdown_timeout spent; the "
			    "release was not written, followers take over "
			    "after lease_duration", e->lock);
	}
	log_warnx("lease %s: exiting without waiting for the API server",
	    d->el[0].lock);
	ev_break(loop, EVBREAK_ALL);
}

static void
signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct daemon	*d = w->data;

	(void)revents;
	if (w->signum == SIGHUP) {
		log_info("SIGHUP ignored; restart leaderd to change its "
		    "configuration");
		return;
	}
	if (d->stopping) {
		log_warnx("second signal; exiting now");
		ev_break(loop, EVBREAK_ALL);
		return;
	}
	stop_daemon(d, w->signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

/*
 * handover: auto, for the first election: hand the lease to the live
 * candidate the controller would pick (coordinated), and the STOP that
 * follows sends it; else the STOP releases as usual.
 */
static void
stop_handover(struct election *e)
{
	struct daemon	*d = e->d;
	const char	*to;

	if (e->idx != 0 || strcmp(d->conf->handover, "auto") != 0 ||
	    !elector_is_leader(&e->el, clock_mono_ms()))
		return;
	if ((to = d->auto_to[0] != '\0' ? d->auto_to : NULL) == NULL) {
		log_info("lease %s: handover auto: no live candidate known; "
		    "releasing", e->lock);
		return;
	}
	log_info("lease %s: handover auto: handing the lease to %s", e->lock,
	    to);
	snprintf(e->handover_to, sizeof(e->handover_to), "%s", to);
	daemon_step(e, ELECTOR_IN_HANDOVER, NULL);
}

/* The actions are stopped (command gone, label standby): release. */
static void
actions_stopped_cb(void *arg)
{
	struct election	*e = arg;
	struct daemon	*d = e->d;
	int		 i;

	stop_handover(e);
	daemon_step(e, ELECTOR_IN_STOP, NULL);
	/* Run mode in a shard group: the shards once the command is gone. */
	if (d->sh != NULL && e->idx == 0)
		for (i = 1; i < d->nel; i++)
			daemon_step(&d->el[i], ELECTOR_IN_STOP, NULL);
}

/* The command ended leaderd (run.restart never): stop as on SIGTERM. */
static void
command_quit_cb(void *arg)
{
	struct daemon	*d = arg;

	if (!d->stopping)
		stop_daemon(d, "the command exited");
}

/*
 * Stop: the actions first (the command must be gone before the lease is
 * released), then the elector's release, which abandons a request in
 * flight and retries until the budget is spent; all bounded by the hard
 * stop, shutdown_timeout from now (config_shutdown_ms).
 */
static void
stop_daemon(struct daemon *d, const char *why)
{
	double		 t;
	uint64_t	 budget, ms, act_ms = 0;
	int		 i;

	d->stopping = 1;
	/* is_leader is false from now on, even while the actions stop. */
	for (i = 0; i < d->nel; i++) {
		d->el[i].st.stopping = 1;
		notify_local(&d->el[i]);
		if (d->el[i].act != NULL &&
		    (ms = actions_shutdown_ms(d->el[i].act)) > act_ms)
			act_ms = ms;
	}
	daemon_shards_stopping(d);
	log_info("%s: stopping", why);
	/* One budget for all: the elections stop side by side. */
	budget = config_shutdown_ms(d->conf, act_ms);
	d->stop_until_ms = clock_mono_ms() + budget;
	ev_now_update(d->loop);
	t = clock_timer_seconds(budget);
	ev_timer_init(&d->hard_stop, hard_stop_cb, t, 0.);
	d->hard_stop.data = d;
	ev_timer_start(d->loop, &d->hard_stop);
	/* The successor is chosen before our candidate goes. */
	d->auto_to[0] = '\0';
	if (daemon_cand_pick(d) != NULL)
		snprintf(d->auto_to, sizeof(d->auto_to), "%s",
		    daemon_cand_pick(d));
	daemon_cand_stop(d, d->stop_until_ms);
	for (i = 0; i < d->nel; i++) {
		if (d->el[i].act != NULL)
			actions_shutdown(d->el[i].act, actions_stopped_cb,
			    &d->el[i]);
		else if (d->sh != NULL && i > 0 && d->el[0].act != NULL)
			continue;	/* after the command (actions_stopped_cb) */
		else {
			stop_handover(&d->el[i]);
			daemon_step(&d->el[i], ELECTOR_IN_STOP, NULL);
		}
	}
}

/* Set up election e's elector, its client, lock, watch and label. */
static int
election_setup(struct election *e, const struct kube_creds *creds,
    const char *ua)
{
	struct daemon		*d = e->d;
	const struct config	*c = e->conf;
	struct elector_config	 ec;
	char			 err[512];

	memset(&ec, 0, sizeof(ec));
	snprintf(ec.identity, sizeof(ec.identity), "%s", c->identity);
	ec.lease_duration_ms = c->lease_duration_ms;
	ec.renew_deadline_ms = c->renew_deadline_ms;
	ec.retry_period_ms = c->retry_period_ms;
	ec.request_timeout_ms = c->request_timeout_ms;
	ec.release_on_cancel = c->release_on_cancel;
	ec.cooldown_ms = c->step_down_cooldown_ms;
	ec.for_life = e->idx == 0 && d->for_life;
	ec.coordinated = e->idx == 0 && c->coordinated;
	ec.seed = (uint64_t)clock_wall_us() ^ ((uint64_t)getpid() << 32) ^
	    ((uint64_t)e->idx << 16);
	if (elector_init(&e->el, &ec, clock_mono_ms(), err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		return -1;
	}
	if ((e->kube = kube_new(d->cv, creds, d->token, ua, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	kube_set_observer(e->kube, daemon_api_observe_cb, d);
	if ((e->lk = lock_new(e->kube, c->lock_type, c->lock_namespace,
	    c->lock_name, c->identity, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	if (d->sh != NULL)
		daemon_shards_labels(e);
	/*
	 * Only a Lease can be watched: the legacy locks are polled.  A shard
	 * group's Leases are followed by the group's list instead.
	 */
	if (c->watch && strcmp(c->lock_type, "leases") == 0 && d->sh == NULL) {
		struct watch_cbs	 cbs = { daemon_watch_record_cb,
					    daemon_watch_reread_cb,
					    daemon_watch_health_cb, NULL };
		struct kube		*wk;

		if ((wk = kube_new(d->cv, creds, d->token, ua, err,
		    sizeof(err))) == NULL) {
			log_warnx("%s", err);
			return -1;
		}
		kube_set_observer(wk, daemon_api_observe_cb, d);
		e->watch = watch_new(d->loop, wk, c->lock_namespace,
		    c->lock_name, c->watch_timeout_ms, c->request_timeout_ms,
		    &cbs, e);
	}
	/* The command and the endpoints are the first election's. */
	if (((e->idx == 0 && (d->cmd != NULL || c->ep_service[0] != '\0')) ||
	    c->label_enabled) &&
	    (e->act = actions_new(
	    d->loop, d->cv, creds, d->token, ua, c, e->idx == 0 ? d->cmd :
	    NULL, command_quit_cb, d, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	if (e->act != NULL)
		actions_set_observer(e->act, daemon_api_observe_cb, d);
	return 0;
}

static int
daemon_setup(struct daemon *d, const struct config *c,
    const struct kube_creds *creds)
{
	struct localapi_state	**sts;
	void			**args;
	char			 err[512], ua[64];
	int			 i;

	d->for_life = compat_for_life(c->compat);
	if ((d->cv = curlev_new(d->loop, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	snprintf(ua, sizeof(ua), "leaderd/%s", LEADERD_VERSION);
	/* One token for every client: a rotation reaches them all. */
	if ((d->token = token_new(creds, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	if ((d->events = kube_new(d->cv, creds, d->token, ua, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	kube_set_observer(d->events, daemon_api_observe_cb, d);
	fifo_init(&d->evq, d->evq_slots, DAEMON_EVENTS_MAX,
	    sizeof(d->evq_slots[0]));
	for (i = 0; i < d->nel; i++)
		if (election_setup(&d->el[i], creds, ua) == -1)
			return -1;
	if (daemon_cand_setup(d, creds, ua) == -1)
		return -1;
	if (d->sh != NULL && daemon_shards_setup(d, creds, ua) == -1)
		return -1;
	localapi_routes(&d->el[0].st, daemon_metrics_reply,
	    daemon_release_reply, daemon_pause_reply, d);
	sts = xcalloc((size_t)d->nel, sizeof(*sts));
	args = xcalloc((size_t)d->nel, sizeof(*args));
	for (i = 0; i < d->nel; i++) {
		sts[i] = &d->el[i].st;
		args[i] = &d->el[i];
	}
	/* /leader/release is the first election's. */
	for (i = 0; d->el[0].st.routes[i].path != NULL; i++)
		if (d->el[0].st.routes[i].handler == daemon_release_reply)
			d->el[0].st.routes[i].arg = &d->el[0];
	d->routes = localapi_routes_elections(sts, (size_t)d->nel,
	    daemon_release_reply, args);
	free(args);
	d->sts = sts;	/* the states keep pointing at it (GET /leaders) */
	d->routes = daemon_shards_routes(d, d->routes);
	d->httpd = httpd_new(d->loop, d->routes);
	httpd_set_max_streams(d->httpd, c->listen_max_streams);
	if (c->listen_http[0] != '\0' &&
	    httpd_listen_tcp(d->httpd, c->listen_http, err, sizeof(err)) ==
	    -1) {
		log_warnx("%s", err);
		return -1;
	}
	if (c->listen_unix[0] != '\0' &&
	    httpd_listen_unix(d->httpd, c->listen_unix, err, sizeof(err)) ==
	    -1) {
		log_warnx("%s", err);
		return -1;
	}
	if (c->listen_probes[0] != '\0' &&
	    httpd_listen_probes(d->httpd, c->listen_probes, err,
	    sizeof(err)) == -1) {
		log_warnx("%s", err);
		return -1;
	}
	if (c->listen_metrics[0] != '\0' &&
	    httpd_listen_metrics(d->httpd, c->listen_metrics, err,
	    sizeof(err)) == -1) {
		log_warnx("%s", err);
		return -1;
	}
	return daemon_gate_setup(d);
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
		e->own = xmalloc(sizeof(*e->own));
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
	for (i = 0; i < d.nel; i++)
		election_init(&d, i);
	ev_init(&d.hard_stop, hard_stop_cb);
	d.hard_stop.data = &d;
	ev_init(&d.owner_retry, NULL);
	d.owner_retry.data = &d;
	ev_signal_init(&d.sigterm, signal_cb, SIGTERM);
	ev_signal_init(&d.sigint, signal_cb, SIGINT);
	ev_signal_init(&d.sighup, signal_cb, SIGHUP);
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
	ev_loop_destroy(d.loop);
	if (status == 0)
		log_info("exiting");
	return status;
}
