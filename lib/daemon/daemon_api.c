/*
 * daemon_api.c -- the daemon's side of the API: it starts the request
 * each elector action names, turns the answers and the watch's records
 * into elector inputs, logs API errors once per change, and turns the
 * elector's events into log lines, Kubernetes Events and counters.
 * Apart from daemon.c so the loop's file keeps to the loop.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kube.h"
#include "api/lock.h"
#include "api/watch.h"
#include "base/clock.h"
#include "base/log.h"
#include "codec/lease.h"
#include "config/config.h"
#include "core/elector.h"
#include "daemon/daemon_int.h"
#include "server/httpd.h"
#include "server/metrics.h"


/*
 * Log an API error once per change of what the server says for that kind
 * of request (slot: an elector_action_kind, or 0 for Events), so a long
 * outage, or a GET that works beside a PUT that is forbidden, is one
 * line and not one per retry.
 */
static void
api_error(struct election *e, int slot, const struct kube_result *res)
{
	char	 line[sizeof(e->api_err[0])];

	if (res->status != 0)
		snprintf(line, sizeof(line), "%ld %s: %s", res->status,
		    res->reason, res->message);
	else
		snprintf(line, sizeof(line), "%s: %s", res->reason,
		    res->message);
	log_debug("lease %s: request %d failed: %s", e->lock, slot, line);
	if (strcmp(line, e->api_err[slot]) == 0)
		return;
	memcpy(e->api_err[slot], line, sizeof(line));
	if (slot == 0) {
		log_warnx("lease %s: cannot record an Event: %s", e->lock,
		    line);
		return;
	}
	log_warnx("lease %s: API error: %s", e->lock, line);
	if (res->status == 403)
		log_warnx("lease %s: leaderd needs %s in namespace %s; check "
		    "the Role bound to its service account", e->lock,
		    lock_rbac(e->lk), e->conf->lock_namespace);
}

static void
api_ok(struct election *e, int slot)
{
	if (e->api_err[slot][0] != '\0') {
		if (slot != 0)
			log_info("lease %s: API requests succeed again",
			    e->lock);
		e->api_err[slot][0] = '\0';
	}
}

static void	events_send(struct daemon *);

static void
event_done_cb(const struct kube_result *res, void *arg)
{
	struct election	*e = arg;

	daemon_problem_api(e, 0, res);
	if (res->outcome == KUBE_OK)
		api_ok(e, 0);
	else
		api_error(e, 0, res);
	events_send(e->d);
}

/*
 * Send the queued Events, oldest first, one at a time on the shared
 * client: the next when the last is answered (event_done_cb).  One that
 * cannot be started is dropped, and the next one tried.
 */
static void
events_send(struct daemon *d)
{
	struct daemon_event	 ev, *head;

	while (!kube_busy(d->events) && (head = fifo_peek(&d->evq)) != NULL) {
		/* Off the queue first: the send may answer at once. */
		ev = *head;
		fifo_pop(&d->evq);
		if (ev.reason != NULL ? daemon_problem_event(d, &ev,
		    event_done_cb) == 0 : lock_record_event(ev.e->lk,
		    d->events, ev.msg, ev.at_us,
		    ev.e->conf->request_timeout_ms, event_done_cb,
		    ev.e) == 0)
			return;
		log_debug("lease %s: Event \"%s\" not sent", ev.e->lock,
		    ev.msg);
	}
}

/*
 * Record "<identity> became leader" or "... stopped leading" as a
 * Kubernetes Event on the lock, as client-go does (ref 3.2), or a
 * problem's Warning (daemon_problem.c).  Events are best effort and
 * never waited for, but one election's does not push out another's:
 * they queue (DAEMON_EVENTS_MAX, the oldest dropped and counted when
 * full) for the one Events client, stamped with the time they happened.
 */
void
daemon_record_event(struct election *e, const char *reason, const char *what)
{
	struct daemon		*d = e->d;
	struct daemon_event	*ev;
	int			 dropped;

	/* nais/elector records none, and its Role grants no events. */
	if (d->for_life || d->events == NULL)
		return;
	ev = fifo_push(&d->evq, &dropped);
	if (dropped) {
		d->el[0].metrics.events_dropped++;
		if (!d->evq_warned)
			log_warnx("more than %d Events waiting to be sent; "
			    "dropping the oldest (leaderd_events_dropped_"
			    "total counts them)", DAEMON_EVENTS_MAX);
		d->evq_warned = 1;
	}
	ev->e = e;
	ev->at_us = clock_wall_us();
	ev->reason = reason;
	if (reason != NULL)
		snprintf(ev->msg, sizeof(ev->msg), "%s", what);
	else
		snprintf(ev->msg, sizeof(ev->msg), "%s %s", e->conf->identity,
		    what);
	events_send(d);
}

static void	watched(struct election *, const struct lease *, char *);

/*
 * The watch starts from the version of the first record read or written,
 * so it carries changes only, never a replay of the state just read.
 * Until a Lease exists (the create is answered) there is nothing to
 * watch from.
 */
static void
start_watch(struct election *e, const char *rv)
{
	if (e->watch == NULL || e->watch_started)
		return;
	e->watch_started = 1;
	watch_start(e->watch, rv);
}
static void	reread(struct election *);

/* Feed what the watch delivered while the request ran, now it is done. */
static void
watch_pending(struct election *e)
{
	char	*obj;

	if (e->req != ELECTOR_DO_NOTHING)
		return;
	if (e->pend_obj != NULL) {
		obj = e->pend_obj;
		e->pend_obj = NULL;
		watched(e, &e->pend_rec, obj);
	}
	if (e->pend_reread && e->req == ELECTOR_DO_NOTHING) {
		e->pend_reread = 0;
		reread(e);
	}
}

static void
api_done_cb(const struct kube_result *res, const struct lease *rec,
    void *arg)
{
	struct election		*e = arg;
	enum elector_action_kind req = e->req;

	e->req = ELECTOR_DO_NOTHING;
	e->st.req_deadline_ms = 0;
	daemon_problem_api(e, req, res);
	if (res->warning[0] != '\0' && !e->warned) {
		/* Endpoints are deprecated on new API servers: say it once. */
		log_warnx("lease %s: the API server warns: %s", e->lock,
		    res->warning);
		e->warned = 1;
	}
	e->prev_get = req == ELECTOR_DO_GET;
	/* nais/elector's election counters: its creates won and lost. */
	if (e->d->for_life && req == ELECTOR_DO_CREATE) {
		if (res->outcome == KUBE_OK)
			e->metrics.elections_won++;
		else if (res->outcome == KUBE_CONFLICT)
			e->metrics.elections_lost++;
	}
	if (e->req_renew && res->outcome != KUBE_OK)
		e->metrics.renew_failures++;
	e->req_renew = 0;
	switch (res->outcome) {
	case KUBE_OK:
		api_ok(e, req);
		if (req != ELECTOR_DO_GET)
			e->st.written_ms = clock_mono_ms();
		if (e->watch != NULL)
			watch_seen(e->watch, rec->rv);
		start_watch(e, rec->rv);
		daemon_step(e, req == ELECTOR_DO_GET ? ELECTOR_IN_GOT :
		    ELECTOR_IN_WRITTEN, rec);
		watch_pending(e);
		return;
	case KUBE_NOTFOUND:
		api_ok(e, req);
		if (req != ELECTOR_DO_GET) {
			/* A write to a missing namespace or a bad path. */
			api_error(e, req, res);
			daemon_step(e, ELECTOR_IN_FAILED, NULL);
			return;
		}
		log_debug("lease %s: not found", e->lock);
		e->pend_reread = 0;
		daemon_step(e, ELECTOR_IN_NOTFOUND, NULL);
		watch_pending(e);
		return;
	case KUBE_CONFLICT:
		api_ok(e, req);
		log_debug("lease %s: conflict: %s", e->lock, res->message);
		daemon_step(e, ELECTOR_IN_CONFLICT, NULL);
		watch_pending(e);
		return;
	case KUBE_FAILED:
		if (res->status == 401)
			kube_token_stale(e->kube);
		api_error(e, req, res);
		daemon_step(e, ELECTOR_IN_FAILED, NULL);
		watch_pending(e);
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
watched(struct election *e, const struct lease *rec, char *obj)
{
	if (e->req != ELECTOR_DO_NOTHING) {
		e->pend_rec = *rec;
		free(e->pend_obj);
		e->pend_obj = obj;
		return;
	}
	if ((e->el.have_observed &&
	    !watch_rv_newer(rec->rv, e->el.observed.rv)) ||
	    !elector_takes_watched(&e->el)) {
		free(obj);
		return;
	}
	lock_adopt(e->lk, obj, rec);
	daemon_step(e, ELECTOR_IN_WATCHED, rec);
}

/* The Lease was deleted, or the watch's version is too old: read it. */
static void
reread(struct election *e)
{
	if (e->req != ELECTOR_DO_NOTHING) {
		e->pend_reread = 1;
		return;
	}
	daemon_step(e, ELECTOR_IN_REREAD, NULL);
}

void
daemon_watch_record_cb(const struct lease *rec, char *obj, void *arg)
{
	watched(arg, rec, obj);
}

void
daemon_watch_reread_cb(void *arg)
{
	reread(arg);
}

void
daemon_watch_health_cb(int healthy, void *arg)
{
	struct election	*e = arg;

	daemon_problem_watch(e, healthy);
	if (e->el.state != ELECTOR_STOPPED)
		daemon_step(e, healthy ? ELECTOR_IN_WATCH_UP :
		    ELECTOR_IN_WATCH_DOWN, NULL);
}

static void
owner_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	daemon_owner_read(w->data);
}

/* Read the pod again a retry_period from now. */
static void
owner_later(struct election *e)
{
	ev_now_update(e->d->loop);
	ev_timer_init(&e->d->owner_retry, owner_retry_cb,
	    clock_timer_seconds(e->conf->retry_period_ms), 0.);
	e->d->owner_retry.data = e->d;
	ev_timer_start(e->d->loop, &e->d->owner_retry);
}

/* The pod's answer: the election starts, or the read is tried again. */
static void
owner_done_cb(const struct kube_result *res, void *arg)
{
	struct election	*e = arg;

	e->st.req_deadline_ms = 0;
	if (res->outcome == KUBE_OK) {
		api_ok(e, ELECTOR_DO_GET);
		e->st.owner_read = 1;
		log_info("lease %s: held for life (compat nais), owned by pod "
		    "%s", e->lock, e->conf->identity);
		daemon_step(e, ELECTOR_IN_TICK, NULL);
		return;
	}
	if (res->status == 401)
		kube_token_stale(e->kube);
	api_error(e, ELECTOR_DO_GET, res);
	if (res->outcome == KUBE_NOTFOUND && !e->d->owner_hint) {
		log_warnx("lease %s: no pod %s in namespace %s: under compat "
		    "nais the hostname must be the pod's name, in the "
		    "election's namespace", e->lock, e->conf->identity,
		    e->conf->lock_namespace);
		e->d->owner_hint = 1;
	}
	owner_later(e);
}

void
daemon_owner_read(struct daemon *d)
{
	struct election	*e = &d->el[0];

	if (e->d->stopping)
		return;
	e->st.req_deadline_ms = clock_mono_ms() + e->conf->request_timeout_ms;
	if (lock_owner_get(e->lk, e->conf->identity,
	    e->conf->request_timeout_ms, owner_done_cb, e) == -1) {
		e->st.req_deadline_ms = 0;
		log_warnx("lease %s: cannot read pod %s", e->lock,
		    e->conf->identity);
		owner_later(e);
	}
}

/*
 * Metrics: leader_election_slowpath_total counts the writes (acquire or
 * renew, not a release) sent right after a GET answer, i.e. those that
 * needed a read first; client-go counts its renews that fell back from
 * the optimistic update to a GET.  A renew is an UPDATE while leading.
 */
static void
count_request(struct election *e, const struct elector_action *act)
{
	e->req_renew = 0;
	if (act->kind == ELECTOR_DO_GET || e->el.releasing)
		return;
	if (e->prev_get)
		e->metrics.slowpath++;
	e->req_renew = act->kind == ELECTOR_DO_UPDATE &&
	    e->el.state == ELECTOR_LEADER;
}

void
daemon_api_observe_cb(const char *verb, long status, double seconds,
    void *arg)
{
	struct daemon	*d = arg;

	/* The requests of every election, counted once: the first's. */
	metrics_api_request(&d->el[0].metrics, verb, status, seconds);
}

/* Start the request an action names; -1 if it could not be started. */
int
daemon_send_request(struct election *e, const struct elector_action *act)
{
	int			 rv = -1;

	e->req = act->kind;
	e->st.req_deadline_ms = clock_mono_ms() + act->timeout_ms;
	count_request(e, act);
	switch (act->kind) {
	case ELECTOR_DO_GET:
		rv = lock_get(e->lk, act->timeout_ms, api_done_cb, e);
		break;
	case ELECTOR_DO_CREATE:
		rv = lock_create(e->lk, &act->record, act->timeout_ms,
		    api_done_cb, e);
		break;
	case ELECTOR_DO_UPDATE:
		if ((rv = lock_update(e->lk, &act->record, act->timeout_ms,
		    api_done_cb, e)) == -1)
			log_warnx("lease %s: cannot build the update",
			    e->lock);
		break;
	case ELECTOR_DO_NOTHING:
		rv = 0;
		break;
	}
	if (rv == -1) {
		e->req = ELECTOR_DO_NOTHING;
		e->st.req_deadline_ms = 0;
	}
	return rv;
}

void
daemon_log_events(struct election *e, unsigned ev)
{
	const struct lease	*o = &e->el.observed;
	const struct localapi_problem *top;
	char			 what[LOCALAPI_PROBLEM_MAX + 160];

	daemon_problem_step(e);
	if (ev & ELECTOR_EV_OBSERVED)
		e->st.ready = 1;
	if ((ev & ELECTOR_EV_NEW_LEADER) && !(ev & ELECTOR_EV_OBSERVED))
		e->metrics.transitions++;
	if (e->release_state == RELEASE_PENDING && !e->d->stopping &&
	    !e->release_holding) {
		if (ev & ELECTOR_EV_RELEASED)
			e->release_state = RELEASE_DONE;
		else if (!e->el.stepdown)
			e->release_state = RELEASE_MOOT;
		if (e->release_state != RELEASE_PENDING && e->d->httpd != NULL)
			httpd_wake(e->d->httpd);
	}
	if ((ev & ELECTOR_EV_LOST) && e->cand_lost != NULL) {
		/* Released for the application's sake: say why, and Event. */
		log_warnx("stopped leading lease %s: not a candidate: %s; "
		    "releasing it", e->lock, e->cand_lost);
		snprintf(what, sizeof(what), "stopped leading and released "
		    "the lease: not a candidate (%s)", e->cand_lost);
		daemon_record_event(e, NULL, what);
	} else if (ev & ELECTOR_EV_LOST) {
		log_warnx("stopped leading lease %s: %s", e->lock,
		    e->el.why != NULL ? e->el.why : "unknown");
		/* The why, and what the API server said if anything. */
		top = localapi_problem_top(&e->st);
		snprintf(what, sizeof(what), "stopped leading: %s%s%s%s",
		    e->el.why != NULL ? e->el.why : "unknown", top != NULL ?
		    " (" : "", top != NULL ? top->message : "", top != NULL ?
		    ")" : "");
		daemon_record_event(e, NULL, what);
	}
	if (ev & ELECTOR_EV_LEADING) {
		log_info("became leader of lease %s (transitions %d)",
		    e->lock, o->transitions);
		daemon_record_event(e, NULL, "became leader");
	}
	if ((ev & ELECTOR_EV_NEW_LEADER) && !(ev & ELECTOR_EV_RELEASED)) {
		if (o->holder[0] == '\0')
			log_info("lease %s is free", e->lock);
		else
			log_info("new leader of lease %s: %s", e->lock,
			    o->holder);
	}
	if ((ev & ELECTOR_EV_RELEASED) && e->d->stopping)
		e->released = 1;
	if ((ev & ELECTOR_EV_RELEASED) && (ev & ELECTOR_EV_HANDED)) {
		log_info("handed lease %s over to %s", e->lock, o->holder);
		snprintf(what, sizeof(what), "handed the lease over to %.64s",
		    o->holder);
		daemon_record_event(e, NULL, what);
	} else if (ev & ELECTOR_EV_RELEASED)
		log_info("released lease %s%s", e->lock, e->d->stopping ? "" :
		    e->el.passive ? "; not a candidate" :
		    "; stepping down (POST /leader/release)");
}
