/*
 * daemon.c -- the driver.  It turns elector actions into API requests,
 * API answers into elector inputs, keeps one timer for the elector's wake
 * time, answers the local API from the elector's state at the moment of
 * each request, and logs the events that matter.
 */

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "clock.h"
#include "config.h"
#include "daemon.h"
#include "elector.h"
#include "httpd.h"
#include "kube.h"
#include "localapi.h"
#include "lease.h"
#include "lock.h"
#include "log.h"
#include "xmalloc.h"

struct daemon {
	struct ev_loop		*loop;
	const struct config	*conf;
	struct elector		 el;
	struct curlev		*cv;
	struct kube		*kube;
	struct kube		*events;	/* a second client, for Events */
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
};

static void	step(struct daemon *, enum elector_input_kind,
		    const struct lease *);

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
	switch (res->outcome) {
	case KUBE_OK:
		api_ok(d, req);
		if (req != ELECTOR_DO_GET)
			d->st.written_ms = clock_mono_ms();
		step(d, req == ELECTOR_DO_GET ? ELECTOR_IN_GOT :
		    ELECTOR_IN_WRITTEN, rec);
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
		step(d, ELECTOR_IN_NOTFOUND, NULL);
		return;
	case KUBE_CONFLICT:
		api_ok(d, req);
		log_debug("lease %s: conflict: %s", d->lock, res->message);
		step(d, ELECTOR_IN_CONFLICT, NULL);
		return;
	case KUBE_FAILED:
		if (res->status == 401)
			kube_token_stale(d->kube);
		api_error(d, req, res);
		step(d, ELECTOR_IN_FAILED, NULL);
		return;
	}
}

/* Start the request an action names; -1 if it could not be started. */
static int
send_request(struct daemon *d, const struct elector_action *act)
{
	int			 rv = -1;

	d->req = act->kind;
	d->st.req_deadline_ms = clock_mono_ms() + act->timeout_ms;
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
	if (ev & ELECTOR_EV_RELEASED)
		log_info("released lease %s", d->lock);
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
		elector_step(&d->el, &in, &act);
		log_events(d, act.events);
		if (d->el.state == ELECTOR_STOPPED) {
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

static void
hard_stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon	*d = w->data;

	(void)revents;
	log_warnx("lease %s: shutdown took request_timeout; exiting without "
	    "waiting for the API server", d->lock);
	ev_break(loop, EVBREAK_ALL);
}

static void
signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct daemon	*d = w->data;
	double		 t;

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
	d->stopping = 1;
	log_info("%s: stopping", w->signum == SIGTERM ? "SIGTERM" : "SIGINT");
	t = (double)d->conf->request_timeout_ms / 1000.0;
	ev_timer_init(&d->hard_stop, hard_stop_cb, t, 0.);
	d->hard_stop.data = d;
	ev_timer_start(loop, &d->hard_stop);
	step(d, ELECTOR_IN_STOP, NULL);
}

static void
http_cb(const struct http_request *req, struct httpd_reply *reply, void *arg)
{
	struct daemon	*d = arg;

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
	if ((d->lk = lock_new(d->kube, c->lock_type, c->lock_namespace,
	    c->lock_name, c->identity, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	d->httpd = httpd_new(d->loop, http_cb, d);
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
	return 0;
}

int
daemon_run(const struct config *c, const struct kube_creds *creds)
{
	struct daemon	 d;
	int		 status = 1;

	memset(&d, 0, sizeof(d));
	d.conf = c;
	d.st.conf = c;
	d.st.el = &d.el;
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
	if (d.httpd != NULL)
		httpd_free(d.httpd);
	lock_free(d.lk);
	if (d.kube != NULL)
		kube_free(d.kube);
	if (d.events != NULL)
		kube_free(d.events);
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
