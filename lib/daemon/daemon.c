/*
 * daemon.c -- the driver.  It turns elector actions into API requests,
 * API answers into elector inputs, keeps one timer for the elector's wake
 * time, answers the local API from the elector's state at the moment of
 * each request, and logs the events that matter.
 */

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "actions/actions.h"
#include "api/kube.h"
#include "api/lock.h"
#include "api/watch.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "codec/lease.h"
#include "config/config.h"
#include "core/elector.h"
#include "daemon/daemon.h"
#include "server/httpd.h"
#include "server/localapi.h"
#include "server/metrics.h"

/*
 * While the watch is healthy a follower still reads the Lease this often,
 * as a safety net against a stream that looks open but delivers nothing
 * (docs/operations.md "Watching the Lease").
 */
#define WATCH_POLL_MS	60000

struct daemon {
	struct ev_loop		*loop;
	const struct config	*conf;
	struct elector		 el;
	struct curlev		*cv;
	struct kube		*kube;
	struct kube		*events;	/* a second client, for Events */
	struct watch		*watch;		/* the Lease watch, or NULL */
	struct lease		 pend_rec;	/* watched while a request ran */
	char			*pend_obj;	/* its object; NULL = none */
	int			 pend_reread;	/* a DELETED or 410 came then */
	int			 watch_started;	/* after the first read */
	struct lock		*lk;		/* the lock objects, over kube */
	int			 warned;	/* an API Warning was logged */
	struct httpd		*httpd;
	ev_timer		 wake;		/* the elector's wake time */
	ev_timer		 hard_stop;	/* exit even if the API hangs */
	ev_signal		 sigterm;
	ev_signal		 sigint;
	ev_signal		 sighup;
	struct localapi_state	 st;		/* what the local API reports */
	enum elector_action_kind req;		/* request in flight */
	char			 lock[2 * CONFIG_STR_MAX + 34]; /* "ns/name",
						    "type/ns/name" */
	char			 api_err[4][768]; /* last error logged, by
						    request kind; 0: Events */
	int			 stopping;	/* a signal arrived */
	uint64_t		 stop_until_ms;	/* the shutdown budget ends */
	int			 released;	/* the release was written */
	ev_timer		 lead_end;	/* re-check is_leader at its end */
	struct actions		*act;		/* command and label (actions.h) */
	char *const		*cmd;		/* run mode's command, or NULL */
	struct metrics		 metrics;	/* GET /metrics */
	int			 prev_get;	/* the last answer was a GET's */
	int			 req_renew;	/* the request renews our lease */
	int			 release_state;	/* RELEASE_* of POST /leader/release */
};

#define RELEASE_NONE	0	/* no step-down asked, or answered */
#define RELEASE_PENDING	1	/* stepped down; release not written yet */
#define RELEASE_DONE	2	/* the release was written */
#define RELEASE_MOOT	3	/* another holder wrote first */

static void	step(struct daemon *, enum elector_input_kind,
		    const struct lease *);
static void	notify_local(struct daemon *);
static void	stop_daemon(struct daemon *, const char *);

/*
 * Log an API error once per change of what the server says for that kind
 * of request (slot: an elector_action_kind, or 0 for Events), so a long
 * outage, or a GET that works beside a PUT that is forbidden, is one
 * line and not one per retry.
 */
static void
api_error(struct daemon *d, int slot, const struct kube_result *res)
{
	char	 line[sizeof(d->api_err[0])];

	if (res->status != 0)
		snprintf(line, sizeof(line), "%ld %s: %s", res->status,
		    res->reason, res->message);
	else
		snprintf(line, sizeof(line), "%s: %s", res->reason,
		    res->message);
	log_debug("lease %s: request %d failed: %s", d->lock, slot, line);
	if (strcmp(line, d->api_err[slot]) == 0)
		return;
	memcpy(d->api_err[slot], line, sizeof(line));
	if (slot == 0) {
		log_warnx("lease %s: cannot record an Event: %s", d->lock,
		    line);
		return;
	}
	log_warnx("lease %s: API error: %s", d->lock, line);
	if (res->status == 403)
		log_warnx("lease %s: leaderd needs %s in namespace %s; check "
		    "the Role bound to its service account", d->lock,
		    lock_rbac(d->lk), d->conf->lock_namespace);
}

static void
api_ok(struct daemon *d, int slot)
{
	if (d->api_err[slot][0] != '\0') {
		if (slot != 0)
			log_info("lease %s: API requests succeed again",
			    d->lock);
		d->api_err[slot][0] = '\0';
	}
}

static void
event_done_cb(const struct kube_result *res, void *arg)
{
	struct daemon	*d = arg;

	if (res->outcome == KUBE_OK)
		api_ok(d, 0);
	else
		api_error(d, 0, res);
}

/*
 * Record "<identity> became leader" or "... stopped leading" as a
 * Kubernetes Event on the lock, as client-go does (ref 3.2).  Events are
 * best effort: one at a time, dropped while one is in flight, never
 * waited for.
 */
static void
record_event(struct daemon *d, const char *what)
{
	char	 msg[CONFIG_STR_MAX + 32];

	if (d->events == NULL || kube_busy(d->events)) {
		log_debug("lease %s: Event \"%s\" dropped", d->lock, what);
		return;
	}
	snprintf(msg, sizeof(msg), "%s %s", d->conf->identity, what);
	if (lock_record_event(d->lk, d->events, msg, clock_wall_us(),
	    d->conf->request_timeout_ms, event_done_cb, d) == -1)
		log_debug("lease %s: Event \"%s\" not sent", d->lock, what);
}

static void	watched(struct daemon *, const struct lease *, char *);

/*
 * The watch starts from the version of the first record read or written,
 * so it carries changes only, never a replay of the state just read.
 * Until a Lease exists (the create is answered) there is nothing to
 * watch from.
 */
static void
start_watch(struct daemon *d, const char *rv)
{
	if (d->watch == NULL || d->watch_started)
		return;
	d->watch_started = 1;
	watch_start(d->watch, rv);
}
static void	reread(struct daemon *);

/* Feed what the watch delivered while the request ran, now it is done. */
static void
watch_pending(struct daemon *d)
{
	char	*obj;

	if (d->req != ELECTOR_DO_NOTHING)
		return;
	if (d->pend_obj != NULL) {
		obj = d->pend_obj;
		d->pend_obj = NULL;
		watched(d, &d->pend_rec, obj);
	}
	if (d->pend_reread && d->req == ELECTOR_DO_NOTHING) {
		d->pend_reread = 0;
		reread(d);
	}
}

static void
api_done_cb(const struct kube_result *res, const struct lease *rec,
    void *arg)
{
	struct daemon		*d = arg;
	enum elector_action_kind req = d->req;

	d->req = ELECTOR_DO_NOTHING;
	d->st.req_deadline_ms = 0;
	if (res->warning[0] != '\0' && !d->warned) {
		/* Endpoints are deprecated on new API servers: say it once. */
		log_warnx("lease %s: the API server warns: %s", d->lock,
		    res->warning);
		d->warned = 1;
	}
	d->prev_get = req == ELECTOR_DO_GET;
	if (d->req_renew && res->outcome != KUBE_OK)
		d->metrics.renew_failures++;
	d->req_renew = 0;
	switch (res->outcome) {
	case KUBE_OK:
		api_ok(d, req);
		if (req != ELECTOR_DO_GET)
			d->st.written_ms = clock_mono_ms();
		if (d->watch != NULL)
			watch_seen(d->watch, rec->rv);
		start_watch(d, rec->rv);
		step(d, req == ELECTOR_DO_GET ? ELECTOR_IN_GOT :
		    ELECTOR_IN_WRITTEN, rec);
		watch_pending(d);
		return;
	case KUBE_NOTFOUND:
		api_ok(d, req);
		if (req != ELECTOR_DO_GET) {
			/* A write to a missing namespace or a bad path. */
			api_error(d, req, res);
			step(d, ELECTOR_IN_FAILED, NULL);
			return;
		}
		log_debug("lease %s: not found", d->lock);
		d->pend_reread = 0;
		step(d, ELECTOR_IN_NOTFOUND, NULL);
		watch_pending(d);
		return;
	case KUBE_CONFLICT:
		api_ok(d, req);
		log_debug("lease %s: conflict: %s", d->lock, res->message);
		step(d, ELECTOR_IN_CONFLICT, NULL);
		watch_pending(d);
		return;
	case KUBE_FAILED:
		if (res->status == 401)
			kube_token_stale(d->kube);
		api_error(d, req, res);
		step(d, ELECTOR_IN_FAILED, NULL);
		watch_pending(d);
		return;
	}
}

/*
 * A record from the watch.  The elector takes it only between requests
 * and only if it is newer than what it has seen (a GET answer may have
 * overtaken the event).  The object becomes the body the next PUT goes
 * over only if the elector takes the record (elector_takes_watched): a
 * write must go over the record it was decided on.
 */
static void
watched(struct daemon *d, const struct lease *rec, char *obj)
{
	if (d->req != ELECTOR_DO_NOTHING) {
		d->pend_rec = *rec;
		free(d->pend_obj);
		d->pend_obj = obj;
		return;
	}
	if ((d->el.have_observed &&
	    !watch_rv_newer(rec->rv, d->el.observed.rv)) ||
	    !elector_takes_watched(&d->el)) {
		free(obj);
		return;
	}
	lock_adopt(d->lk, obj, rec);
	step(d, ELECTOR_IN_WATCHED, rec);
}

/* The Lease was deleted, or the watch's version is too old: read it. */
static void
reread(struct daemon *d)
{
	if (d->req != ELECTOR_DO_NOTHING) {
		d->pend_reread = 1;
		return;
	}
	step(d, ELECTOR_IN_REREAD, NULL);
}

static void
watch_record_cb(const struct lease *rec, char *obj, void *arg)
{
	watched(arg, rec, obj);
}

static void
watch_reread_cb(void *arg)
{
	reread(arg);
}

static void
watch_health_cb(int healthy, void *arg)
{
	struct daemon	*d = arg;

	if (d->el.state != ELECTOR_STOPPED)
		step(d, healthy ? ELECTOR_IN_WATCH_UP : ELECTOR_IN_WATCH_DOWN,
		    NULL);
}

/*
 * Metrics: leader_election_slowpath_total counts the writes (acquire or
 * renew, not a release) sent right after a GET answer, i.e. those that
 * needed a read first; client-go counts its renews that fell back from
 * the optimistic update to a GET.  A renew is an UPDATE while leading.
 */
static void
count_request(struct daemon *d, const struct elector_action *act)
{
	d->req_renew = 0;
	if (act->kind == ELECTOR_DO_GET || d->el.releasing)
		return;
	if (d->prev_get)
		d->metrics.slowpath++;
	d->req_renew = act->kind == ELECTOR_DO_UPDATE &&
	    d->el.state == ELECTOR_LEADER;
}

static void
api_observe_cb(const char *verb, long status, double seconds, void *arg)
{
	struct daemon	*d = arg;

	metrics_api_request(&d->metrics, verb, status, seconds);
}

/* Start the request an action names; -1 if it could not be started. */
static int
send_request(struct daemon *d, const struct elector_action *act)
{
	int			 rv = -1;

	d->req = act->kind;
	d->st.req_deadline_ms = clock_mono_ms() + act->timeout_ms;
	count_request(d, act);
	switch (act->kind) {
	case ELECTOR_DO_GET:
		rv = lock_get(d->lk, act->timeout_ms, api_done_cb, d);
		break;
	case ELECTOR_DO_CREATE:
		rv = lock_create(d->lk, &act->record, act->timeout_ms,
		    api_done_cb, d);
		break;
	case ELECTOR_DO_UPDATE:
		if ((rv = lock_update(d->lk, &act->record, act->timeout_ms,
		    api_done_cb, d)) == -1)
			log_warnx("lease %s: cannot build the update",
			    d->lock);
		break;
	case ELECTOR_DO_NOTHING:
		rv = 0;
		break;
	}
	if (rv == -1) {
		d->req = ELECTOR_DO_NOTHING;
		d->st.req_deadline_ms = 0;
	}
	return rv;
}

static void
log_events(struct daemon *d, unsigned ev)
{
	const struct lease	*o = &d->el.observed;

	if (ev & ELECTOR_EV_OBSERVED)
		d->st.ready = 1;
	if ((ev & ELECTOR_EV_NEW_LEADER) && !(ev & ELECTOR_EV_OBSERVED))
		d->metrics.transitions++;
	if (d->release_state == RELEASE_PENDING && !d->stopping) {
		if (ev & ELECTOR_EV_RELEASED)
			d->release_state = RELEASE_DONE;
		else if (!d->el.stepdown)
			d->release_state = RELEASE_MOOT;
		if (d->release_state != RELEASE_PENDING && d->httpd != NULL)
			httpd_wake(d->httpd);
	}
	if (ev & ELECTOR_EV_LOST) {
		log_warnx("stopped leading lease %s: %s", d->lock,
		    d->el.why != NULL ? d->el.why : "unknown");
		record_event(d, "stopped leading");
	}
	if (ev & ELECTOR_EV_LEADING) {
		log_info("became leader of lease %s (transitions %d)",
		    d->lock, o->transitions);
		record_event(d, "became leader");
	}
	if ((ev & ELECTOR_EV_NEW_LEADER) && !(ev & ELECTOR_EV_RELEASED)) {
		if (o->holder[0] == '\0')
			log_info("lease %s is free", d->lock);
		else
			log_info("new leader of lease %s: %s", d->lock,
			    o->holder);
	}
	if ((ev & ELECTOR_EV_RELEASED) && d->stopping)
		d->released = 1;
	if (ev & ELECTOR_EV_RELEASED)
		log_info("released lease %s%s", d->lock, d->stopping ? "" :
		    "; stepping down (POST /leader/release)");
}

static void
arm_wake(struct daemon *d, uint64_t wake_ms)
{
	uint64_t	 now_ms;

	ev_timer_stop(d->loop, &d->wake);
	d->st.wake_ms = wake_ms;
	if (wake_ms == 0)
		return;
	ev_now_update(d->loop);
	now_ms = clock_mono_ms();
	ev_timer_set(&d->wake, wake_ms > now_ms ?
	    clock_timer_seconds(wake_ms - now_ms) : 0., 0.);
	ev_timer_start(d->loop, &d->wake);
}

/*
 * Tell the actions (command, label) until when we lead, after every
 * elector step; they keep their own timer for the end of the claim.
 */
static void
sync_actions(struct daemon *d)
{
	uint64_t	 now_ms = clock_mono_ms();
	char		 token[LEASE_TOKEN_MAX];

	if (d->act == NULL)
		return;
	lease_fencing_token(&d->el.observed, token, sizeof(token));
	actions_sync(d->act, elector_is_leader(&d->el, now_ms) ?
	    d->el.lead_until_ms : 0, token, now_ms);
}

/*
 * Feed one input to the elector and carry out its action.  A request that
 * cannot be started comes back as FAILED, which the elector answers with
 * a later retry, so the loop ends.
 */
static void
step(struct daemon *d, enum elector_input_kind kind, const struct lease *rec)
{
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
		elector_step(&d->el, &in, &act);
		if (act.cancel) {
			/*
			 * Abandon the request in flight (a stalled renew): its
			 * connection is dropped and the release goes out at
			 * once on a fresh one.
			 */
			log_debug("lease %s: request in flight abandoned",
			    d->lock);
			lock_cancel(d->lk);
			d->req = ELECTOR_DO_NOTHING;
			d->req_renew = 0;
			d->st.req_deadline_ms = 0;
		}
		log_events(d, act.events);
		notify_local(d);
		sync_actions(d);
		if (d->el.state == ELECTOR_STOPPED) {
			if (d->stopping && !d->released &&
			    in.now_ms >= d->el.stop_until_ms)
				log_warnx("lease %s: shutdown_timeout spent; the "
				    "release was not written, followers take "
				    "over after lease_duration", d->lock);
			lock_cancel(d->lk);
			d->req = ELECTOR_DO_NOTHING;
			d->st.req_deadline_ms = 0;
			ev_timer_stop(d->loop, &d->wake);
			ev_break(d->loop, EVBREAK_ALL);
			return;
		}
		if (act.kind == ELECTOR_DO_NOTHING || send_request(d, &act) == 0)
			break;
		kind = ELECTOR_IN_FAILED;
		rec = NULL;
	}
	arm_wake(d, act.wake_ms);
}

static void
wake_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon	*d = w->data;

	(void)loop;
	(void)revents;
	d->st.wake_ms = 0;
	step(d, ELECTOR_IN_TICK, NULL);
}

/*
 * Push a change of who leads to the local API's clients: the event to
 * every stream, an answer to every blocking read.  Called after each
 * elector step and when our leadership runs out, which happens by time
 * alone (elector_is_leader turns false at lead_until_ms without any
 * input), so a timer is kept at that moment.
 */
static void
notify_local(struct daemon *d)
{
	uint64_t	 now_ms = clock_mono_ms();
	char		*ev;
	size_t		 len;

	if (d->httpd == NULL)
		return;
	if (localapi_changed(&d->st, now_ms, clock_wall_us())) {
		ev = localapi_event(&d->st, now_ms, &len);
		httpd_stream_send(d->httpd, ev, len);
		free(ev);
		httpd_wake(d->httpd);
	}
	ev_timer_stop(d->loop, &d->lead_end);
	if (elector_is_leader(&d->el, now_ms)) {
		ev_now_update(d->loop);
		ev_timer_set(&d->lead_end, clock_timer_seconds(
		    d->el.lead_until_ms - now_ms), 0.);
		ev_timer_start(d->loop, &d->lead_end);
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
	const char	*what;

	(void)revents;
	if (d->act != NULL && (what = actions_unfinished(d->act)) != NULL)
		log_warnx("lease %s: shutdown_timeout spent: %s", d->lock,
		    what);
	if (!d->released && d->el.state != ELECTOR_STOPPED)
		log_warnx("lease %s: shutdown_timeout spent; the release was "
		    "not written, followers take over after lease_duration",
		    d->lock);
	log_warnx("lease %s: exiting without waiting for the API server",
	    d->lock);
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

/* The actions are stopped (command gone, label standby): release. */
static void
actions_stopped_cb(void *arg)
{
	struct daemon	*d = arg;

	step(d, ELECTOR_IN_STOP, NULL);
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
	uint64_t	 budget;

	d->stopping = 1;
	/* is_leader is false from now on, even while the actions stop. */
	d->st.stopping = 1;
	notify_local(d);
	log_info("%s: stopping", why);
	budget = config_shutdown_ms(d->conf, d->act != NULL ?
	    actions_shutdown_ms(d->act) : 0);
	d->stop_until_ms = clock_mono_ms() + budget;
	ev_now_update(d->loop);
	t = clock_timer_seconds(budget);
	ev_timer_init(&d->hard_stop, hard_stop_cb, t, 0.);
	d->hard_stop.data = d;
	ev_timer_start(d->loop, &d->hard_stop);
	if (d->act != NULL)
		actions_shutdown(d->act, actions_stopped_cb, d);
	else
		step(d, ELECTOR_IN_STOP, NULL);
}

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

/* GET /metrics: the counters and the gauges of this moment. */
static void
metrics_reply(struct daemon *d, const struct http_request *req,
    struct httpd_reply *reply)
{
	struct metrics_gauges	 g;
	const struct lease	*o = &d->el.observed;
	uint64_t		 now_ms = clock_mono_ms(), dur, exp;

	if (strcmp(req->method, "GET") != 0 &&
	    strcmp(req->method, "HEAD") != 0) {
		reply->allow = "GET, HEAD";
		reply_json_text(reply, 405, "{\"error\":\"method not "
		    "allowed\",\"status\":405}\n");
		return;
	}
	memset(&g, 0, sizeof(g));
	g.master = !d->stopping && elector_is_leader(&d->el, now_ms);
	g.connections = httpd_conns(d->httpd);
	if (g.master)
		g.expires_in_s = (double)(d->el.lead_until_ms - now_ms) /
		    1000.0;
	else if (d->el.have_observed && o->holder[0] != '\0' &&
	    !d->el.ours) {
		/* As elector.c's expiry: the longer duration wins. */
		dur = (uint64_t)o->duration_s * 1000;
		if (dur < d->conf->lease_duration_ms)
			dur = d->conf->lease_duration_ms;
		exp = d->el.observed_ms + dur;
		g.expires_in_s = exp > now_ms ?
		    (double)(exp - now_ms) / 1000.0 : 0;
	}
	reply->status = 200;
	reply->content_type = METRICS_CONTENT_TYPE;
	reply->body = metrics_render(&d->metrics, &g, &reply->len);
}

/* The answer to a step-down, once settled or out of time. */
static void
release_answer(struct daemon *d, struct httpd_reply *reply)
{
	int	 state = d->release_state;

	d->release_state = RELEASE_NONE;
	if (state == RELEASE_PENDING)
		reply_json_text(reply, 202, "{\"released\":false,"
		    "\"is_leader\":false,\"cooldown_ms\":%llu,"
		    "\"reason\":\"the release is not written yet; leaderd no "
		    "longer leads and keeps trying\"}\n",
		    (unsigned long long)d->el.conf.cooldown_ms);
	else
		reply_json_text(reply, 200, "{\"released\":%s,"
		    "\"is_leader\":false,\"cooldown_ms\":%llu}\n",
		    state == RELEASE_DONE ? "true" : "false",
		    (unsigned long long)d->el.conf.cooldown_ms);
}

/*
 * POST /leader/release: step down.  Served on the unix socket and on a
 * TCP listener bound to loopback only.  The answer waits for the
 * release to be written (200), or for another holder's write that made
 * it moot (200, "released": false); if neither comes within
 * renew_deadline + request_timeout, 202: leaderd no longer leads and
 * keeps trying to release.  Without waiting requests
 * (listen.max_streams 0) the answer is 202 at once.
 */
static void
release_reply(struct daemon *d, const struct http_request *req,
    struct httpd_reply *reply)
{
	uint64_t	 now_ms = clock_mono_ms();
	int		 state = d->release_state;

	if (strcmp(req->method, "POST") != 0) {
		reply->allow = "POST";
		reply_json_text(reply, 405, "{\"error\":\"method not "
		    "allowed; use POST\",\"status\":405}\n");
		return;
	}
	if (!reply->local) {
		reply_json_text(reply, 403, "{\"error\":\"step-down is "
		    "served on the unix socket and on a loopback listener "
		    "only\",\"status\":403}\n");
		return;
	}
	if (req->query[0] != '\0') {
		reply_json_text(reply, 400, "{\"error\":\"%s\","
		    "\"status\":400}\n", strncmp(req->query, "handover", 8) ==
		    0 ? "handover to a chosen identity is not supported" :
		    "POST /leader/release takes no parameters");
		return;
	}
	if (reply->waited || reply->wait_over) {
		/* The step-down this request asked for. */
		if (state == RELEASE_PENDING && !reply->wait_over)
			reply->mode = HTTPD_REPLY_WAIT;
		else
			release_answer(d, reply);
		return;
	}
	if (state == RELEASE_DONE || state == RELEASE_MOOT) {
		/* Settled, and nobody waited for it (the wait was refused). */
		d->release_state = state = RELEASE_NONE;
	}
	if (d->stopping || d->cmd != NULL || state != RELEASE_NONE ||
	    !elector_is_leader(&d->el, now_ms)) {
		reply_json_text(reply, 409, "{\"error\":\"%s\","
		    "\"status\":409}\n", d->stopping ? "leaderd is stopping" :
		    d->cmd != NULL ? "in run mode, stop leaderd (SIGTERM) to "
		    "step down: the command must be gone before the lease is "
		    "released" : state != RELEASE_NONE ? "a step-down is "
		    "already under way" : "not the leader");
		return;
	}
	log_info("lease %s: stepping down (POST /leader/release), cooldown "
	    "%llu ms", d->lock, (unsigned long long)d->el.conf.cooldown_ms);
	d->release_state = RELEASE_PENDING;
	step(d, ELECTOR_IN_STEP_DOWN, NULL);
	if (d->release_state == RELEASE_PENDING &&
	    d->conf->listen_max_streams > 0) {
		reply->mode = HTTPD_REPLY_WAIT;
		reply->wait_ms = d->conf->renew_deadline_ms +
		    d->conf->request_timeout_ms;
		return;
	}
	release_answer(d, reply);
}

static void
http_cb(const struct http_request *req, struct httpd_reply *reply, void *arg)
{
	struct daemon	*d = arg;

	if (strcmp(req->path, "/metrics") == 0)
		metrics_reply(d, req, reply);
	else if (strcmp(req->path, "/leader/release") == 0)
		release_reply(d, req, reply);
	else
		localapi_reply(&d->st, req, clock_mono_ms(), reply);
}

static int
daemon_setup(struct daemon *d, const struct config *c,
    const struct kube_creds *creds)
{
	struct elector_config	 ec;
	char			 err[512], ua[64];

	memset(&ec, 0, sizeof(ec));
	snprintf(ec.identity, sizeof(ec.identity), "%s", c->identity);
	ec.lease_duration_ms = c->lease_duration_ms;
	ec.renew_deadline_ms = c->renew_deadline_ms;
	ec.retry_period_ms = c->retry_period_ms;
	ec.request_timeout_ms = c->request_timeout_ms;
	ec.release_on_cancel = c->release_on_cancel;
	ec.cooldown_ms = c->step_down_cooldown_ms;
	ec.seed = (uint64_t)clock_wall_us() ^ ((uint64_t)getpid() << 32);
	if (elector_init(&d->el, &ec, clock_mono_ms(), err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		return -1;
	}
	if ((d->cv = curlev_new(d->loop, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	snprintf(ua, sizeof(ua), "leaderd/%s", LEADERD_VERSION);
	if ((d->kube = kube_new(d->cv, creds, ua, err, sizeof(err))) ==
	    NULL) {
		log_warnx("%s", err);
		return -1;
	}
	if ((d->events = kube_new(d->cv, creds, ua, err, sizeof(err))) ==
	    NULL) {
		log_warnx("%s", err);
		return -1;
	}
	kube_share_token(d->events, d->kube);
	kube_set_observer(d->kube, api_observe_cb, d);
	kube_set_observer(d->events, api_observe_cb, d);
	if ((d->lk = lock_new(d->kube, c->lock_type, c->lock_namespace,
	    c->lock_name, c->identity, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	/* Only a Lease can be watched: the legacy locks are polled. */
	if (c->watch && strcmp(c->lock_type, "leases") == 0) {
		struct watch_cbs	 cbs = { watch_record_cb,
					    watch_reread_cb, watch_health_cb };
		struct kube		*wk;

		if ((wk = kube_new(d->cv, creds, ua, err, sizeof(err))) ==
		    NULL) {
			log_warnx("%s", err);
			return -1;
		}
		kube_share_token(wk, d->kube);
		kube_set_observer(wk, api_observe_cb, d);
		d->watch = watch_new(d->loop, wk, c->lock_namespace,
		    c->lock_name, c->watch_timeout_ms, c->request_timeout_ms,
		    &cbs, d);
	}
	if ((d->cmd != NULL || c->label_enabled) && (d->act = actions_new(
	    d->loop, d->cv, creds, ua, c, d->cmd, command_quit_cb, d, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	if (d->act != NULL)
		actions_set_observer(d->act, api_observe_cb, d);
	d->httpd = httpd_new(d->loop, http_cb, d);
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
	return 0;
}

int
daemon_run(const struct config *c, const struct kube_creds *creds,
    char *const *cmd)
{
	struct daemon	 d;
	int		 status = 1;

	memset(&d, 0, sizeof(d));
	d.cmd = cmd;
	d.conf = c;
	d.st.conf = c;
	d.st.el = &d.el;
	metrics_init(&d.metrics, c->lock_name, LEADERD_VERSION);
	/* Leases keep the log lines they always had: "lease ns/name". */
	snprintf(d.lock, sizeof(d.lock), "%s%s%s/%s",
	    strcmp(c->lock_type, "leases") == 0 ? "" : c->lock_type,
	    strcmp(c->lock_type, "leases") == 0 ? "" : "/",
	    c->lock_namespace, c->lock_name);
	signal(SIGPIPE, SIG_IGN);
	d.loop = ev_default_loop(EVFLAG_AUTO);
	ev_timer_init(&d.wake, wake_cb, 0., 0.);
	d.wake.data = &d;
	ev_init(&d.hard_stop, hard_stop_cb);
	d.hard_stop.data = &d;
	ev_init(&d.lead_end, lead_end_cb);
	d.lead_end.data = &d;
	ev_signal_init(&d.sigterm, signal_cb, SIGTERM);
	ev_signal_init(&d.sigint, signal_cb, SIGINT);
	ev_signal_init(&d.sighup, signal_cb, SIGHUP);
	d.sigterm.data = d.sigint.data = d.sighup.data = &d;
	ev_signal_start(d.loop, &d.sigterm);
	ev_signal_start(d.loop, &d.sigint);
	ev_signal_start(d.loop, &d.sighup);

	if (daemon_setup(&d, c, creds) == 0) {
		log_info("leaderd %s: identity %s, lease %s, lease_duration "
		    "%llums, renew_deadline %llums, retry_period %llums",
		    LEADERD_VERSION, c->identity, d.lock,
		    (unsigned long long)c->lease_duration_ms,
		    (unsigned long long)c->renew_deadline_ms,
		    (unsigned long long)c->retry_period_ms);
		step(&d, ELECTOR_IN_TICK, NULL);
		ev_run(d.loop, 0);
		status = 0;
	}

	ev_timer_stop(d.loop, &d.wake);
	ev_timer_stop(d.loop, &d.hard_stop);
	ev_timer_stop(d.loop, &d.lead_end);
	if (d.act != NULL) {
		if (status == 0 && actions_exit_code(d.act) >= 0)
			status = actions_exit_code(d.act);
		actions_free(d.act);
	}
	if (d.httpd != NULL)
		httpd_free(d.httpd);
	/* The clients that share d.kube's token go first. */
	watch_free(d.watch);
	free(d.pend_obj);
	lock_free(d.lk);
	if (d.events != NULL)
		kube_free(d.events);
	if (d.kube != NULL)
		kube_free(d.kube);
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
