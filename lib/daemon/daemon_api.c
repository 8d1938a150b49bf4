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

	/* nais/elector records none, and its Role grants no events. */
	if (d->for_life)
		return;
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
	/* nais/elector's election counters: its creates won and lost. */
	if (d->for_life && req == ELECTOR_DO_CREATE) {
		if (res->outcome == KUBE_OK)
			d->metrics.elections_won++;
		else if (res->outcome == KUBE_CONFLICT)
			d->metrics.elections_lost++;
	}
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
		daemon_step(d, req == ELECTOR_DO_GET ? ELECTOR_IN_GOT :
		    ELECTOR_IN_WRITTEN, rec);
		watch_pending(d);
		return;
	case KUBE_NOTFOUND:
		api_ok(d, req);
		if (req != ELECTOR_DO_GET) {
			/* A write to a missing namespace or a bad path. */
			api_error(d, req, res);
			daemon_step(d, ELECTOR_IN_FAILED, NULL);
			return;
		}
		log_debug("lease %s: not found", d->lock);
		d->pend_reread = 0;
		daemon_step(d, ELECTOR_IN_NOTFOUND, NULL);
		watch_pending(d);
		return;
	case KUBE_CONFLICT:
		api_ok(d, req);
		log_debug("lease %s: conflict: %s", d->lock, res->message);
		daemon_step(d, ELECTOR_IN_CONFLICT, NULL);
		watch_pending(d);
		return;
	case KUBE_FAILED:
		if (res->status == 401)
			kube_token_stale(d->kube);
		api_error(d, req, res);
		daemon_step(d, ELECTOR_IN_FAILED, NULL);
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
	daemon_step(d, ELECTOR_IN_WATCHED, rec);
}

/* The Lease was deleted, or the watch's version is too old: read it. */
static void
reread(struct daemon *d)
{
	if (d->req != ELECTOR_DO_NOTHING) {
		d->pend_reread = 1;
		return;
	}
	daemon_step(d, ELECTOR_IN_REREAD, NULL);
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
	struct daemon	*d = arg;

	if (d->el.state != ELECTOR_STOPPED)
		daemon_step(d, healthy ? ELECTOR_IN_WATCH_UP :
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
owner_later(struct daemon *d)
{
	ev_now_update(d->loop);
	ev_timer_init(&d->owner_retry, owner_retry_cb,
	    clock_timer_seconds(d->conf->retry_period_ms), 0.);
	d->owner_retry.data = d;
	ev_timer_start(d->loop, &d->owner_retry);
}

/* The pod's answer: the election starts, or the read is tried again. */
static void
owner_done_cb(const struct kube_result *res, void *arg)
{
	struct daemon	*d = arg;

	d->st.req_deadline_ms = 0;
	if (res->outcome == KUBE_OK) {
		api_ok(d, ELECTOR_DO_GET);
		d->st.owner_read = 1;
		log_info("lease %s: held for life (compat nais), owned by pod "
		    "%s", d->lock, d->conf->identity);
		daemon_step(d, ELECTOR_IN_TICK, NULL);
		return;
	}
	if (res->status == 401)
		kube_token_stale(d->kube);
	api_error(d, ELECTOR_DO_GET, res);
	if (res->outcome == KUBE_NOTFOUND && !d->owner_hint) {
		log_warnx("lease %s: no pod %s in namespace %s: under compat "
		    "nais the hostname must be the pod's name, in the "
		    "election's namespace", d->lock, d->conf->identity,
		    d->conf->lock_namespace);
		d->owner_hint = 1;
	}
	owner_later(d);
}

void
daemon_owner_read(struct daemon *d)
{
	if (d->stopping)
		return;
	d->st.req_deadline_ms = clock_mono_ms() + d->conf->request_timeout_ms;
	if (lock_owner_get(d->lk, d->conf->identity,
	    d->conf->request_timeout_ms, owner_done_cb, d) == -1) {
		d->st.req_deadline_ms = 0;
		log_warnx("lease %s: cannot read pod %s", d->lock,
		    d->conf->identity);
		owner_later(d);
	}
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

void
daemon_api_observe_cb(const char *verb, long status, double seconds,
    void *arg)
{
	struct daemon	*d = arg;

	metrics_api_request(&d->metrics, verb, status, seconds);
}

/* Start the request an action names; -1 if it could not be started. */
int
daemon_send_request(struct daemon *d, const struct elector_action *act)
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

void
daemon_log_events(struct daemon *d, unsigned ev)
{
	const struct lease	*o = &d->el.observed;
	char			 what[128];

	if (ev & ELECTOR_EV_OBSERVED)
		d->st.ready = 1;
	if ((ev & ELECTOR_EV_NEW_LEADER) && !(ev & ELECTOR_EV_OBSERVED))
		d->metrics.transitions++;
	if (d->release_state == RELEASE_PENDING && !d->stopping &&
	    !d->release_holding) {
		if (ev & ELECTOR_EV_RELEASED)
			d->release_state = RELEASE_DONE;
		else if (!d->el.stepdown)
			d->release_state = RELEASE_MOOT;
		if (d->release_state != RELEASE_PENDING && d->httpd != NULL)
			httpd_wake(d->httpd);
	}
	if ((ev & ELECTOR_EV_LOST) && d->cand_lost != NULL) {
		/* Released for the application's sake: say why, and Event. */
		log_warnx("stopped leading lease %s: not a candidate: %s; "
		    "releasing it", d->lock, d->cand_lost);
		snprintf(what, sizeof(what), "stopped leading and released "
		    "the lease: not a candidate (%s)", d->cand_lost);
		record_event(d, what);
	} else if (ev & ELECTOR_EV_LOST) {
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
	if ((ev & ELECTOR_EV_RELEASED) && (ev & ELECTOR_EV_HANDED)) {
		log_info("handed lease %s over to %s", d->lock, o->holder);
		snprintf(what, sizeof(what), "handed the lease over to %.64s",
		    o->holder);
		record_event(d, what);
	} else if (ev & ELECTOR_EV_RELEASED)
		log_info("released lease %s%s", d->lock, d->stopping ? "" :
		    d->el.passive ? "; not a candidate" :
		    "; stepping down (POST /leader/release)");
}
