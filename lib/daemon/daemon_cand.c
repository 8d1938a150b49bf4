/*
 * daemon_cand.c -- coordinated election (candidacy.coordinated,
 * KEP-4355): the LeaseCandidate named after our identity, in the Lease's
 * namespace, kept on a client and a timer of its own.
 *
 * At start it is created (a 409 reads the one our previous process left,
 * by name, and renews it).  Then ours is read by name every
 * retry_period: it is renewed when the API server's election controller
 * pings it (pingTime newer than renewTime) or when client-go's interval
 * (5 minutes) has passed since the last renew, and created again if it
 * went missing (garbage-collected).  Nothing another candidate holds
 * can stop that read.  With handover: auto, while we lead, the
 * namespace's candidates are also listed, for the live one of our Lease
 * to hand to (lease_cand_scan_list: a co-tenant's candidate of another
 * Lease is passed over unread).  On exit ours is deleted, beside the
 * release, within the shutdown budget.
 *
 * A 404 on the create means the API is not served (the
 * CoordinatedLeaderElection gate is off, or coordination.k8s.io/v1beta1
 * is not enabled): one log line, the elector competes as usual
 * (ELECTOR_IN_COORDINATED off) and GET /leader says coordinated: false
 * with the reason.  Every other failure is retried after a backoff
 * (retry_period doubling to CAND_BACKOFF_MAX_MS; the first 409 or 404
 * of a run at once) and logged, the elector still waiting for the
 * controller; while ours cannot be read or written GET /leader says
 * coordinated: false with the error.  A failed list only leaves
 * handover: auto without a pick (it releases) and is retried with the
 * same backoff.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "base/clock.h"
#include "base/log.h"
#include "codec/leasecand.h"
#include "daemon/daemon_int.h"

#define CAND_RENEW_MS	(5 * 60 * 1000)	/* client-go's requeueInterval */
#define CAND_BACKOFF_MAX_MS 30000	/* failures retried at most this far
					   apart (or retry_period if longer) */

enum { CAND_REQ_NONE, CAND_REQ_CREATE, CAND_REQ_GET, CAND_REQ_RENEW,
    CAND_REQ_LIST, CAND_REQ_DELETE };

static const char *const cand_verb[] = { "", "create", "read", "renew",
    "list", "delete" };

static void	cand_send(struct daemon *, int);

/* Send req after_ms from now (at once for 0). */
static void
cand_later(struct daemon *d, int req, uint64_t after_ms)
{
	ev_timer_stop(d->loop, &d->cand_timer);
	d->cand_next = req;
	if (after_ms == 0) {
		cand_send(d, req);
		return;
	}
	ev_timer_set(&d->cand_timer, clock_timer_seconds(after_ms), 0.);
	ev_timer_start(d->loop, &d->cand_timer);
}

/* The delay after fails failures in a row: retry_period, doubling. */
static uint64_t
cand_backoff_ms(const struct daemon *d, int fails)
{
	uint64_t	 ms = d->conf->retry_period_ms;
	uint64_t	 max = ms > CAND_BACKOFF_MAX_MS ? ms : CAND_BACKOFF_MAX_MS;
	int		 i;

	for (i = 1; i < fails && ms < max; i++)
		ms *= 2;
	return ms < max ? ms : max;
}

/* Ours, as we write it; the time and version given. */
static void
cand_self(struct daemon *d, struct lease_cand *c)
{
	const struct config	*conf = d->conf;

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", conf->identity);
	snprintf(c->lease_name, sizeof(c->lease_name), "%s", conf->lock_name);
	snprintf(c->binary_version, sizeof(c->binary_version), "%s",
	    conf->binary_version);
	snprintf(c->emulation_version, sizeof(c->emulation_version), "%s",
	    conf->emulation_version[0] != '\0' ? conf->emulation_version :
	    conf->binary_version);
	snprintf(c->strategy, sizeof(c->strategy), "%s", conf->cle_strategy);
}

/*
 * A failure of req (what: the API's answer or the decoder's error),
 * then next after the backoff, or at once if quick and the first in a
 * row (logged at info: ours left by our last process, or collected).
 * Logged when it differs from the last one (a list's: never compared),
 * and again at the 2nd, 4th, 8th... in a row, so a loop always shows.
 * GET /leader says coordinated: false with it, unless it is such a
 * first one or only the list failed: that leaves handover: auto without a pick, and the list waits
 * out its own backoff while ours is read as usual.
 */
static void
cand_retry(struct daemon *d, int req, const char *what, int next, int quick)
{
	char		 msg[sizeof(d->cand_err)];
	uint64_t	 ms;
	int		 fails, list = req == CAND_REQ_LIST;

	if (list) {
		fails = ++d->cand_list_fails;
		ms = cand_backoff_ms(d, fails);
		d->cand_list_ms = clock_mono_ms() + ms;
		d->has_pick = 0;
	} else {
		fails = ++d->cand_fails;
		ms = quick && fails == 1 ? 0 : cand_backoff_ms(d, fails);
	}
	snprintf(msg, sizeof(msg), "%s: %s", cand_verb[req], what);
	if (ms == 0)
		log_info("lease %s: LeaseCandidate %s; %s it", d->el[0].lock,
		    msg, next == CAND_REQ_GET ? "reading" : "creating");
	else if ((fails & (fails - 1)) == 0 ||
	    (!list && strcmp(msg, d->cand_err) != 0))
		log_warnx("lease %s: LeaseCandidate %s (%d in a row; again in "
		    "%llu ms)", d->el[0].lock, msg, fails,
		    (unsigned long long)ms);
	if (!list && ms != 0)
		memcpy(d->cand_err, msg, sizeof(d->cand_err));
	if (list) {
		cand_later(d, next, d->conf->retry_period_ms);
		return;
	}
	if (ms == 0) {
		cand_later(d, next, 0);
		return;
	}
	snprintf(d->cand_reason, sizeof(d->cand_reason), "the LeaseCandidate "
	    "could not be %s: %s", req == CAND_REQ_GET ? "read" :
	    req == CAND_REQ_CREATE ? "created" : "written", what);
	d->el[0].st.coordinated = LOCALAPI_COORD_OFF;
	d->el[0].st.coordinated_reason = d->cand_reason;
	cand_later(d, next, ms);
}

/* The API's answer r to req, as cand_retry takes it. */
static void
cand_retry_api(struct daemon *d, int req, const struct kube_result *r,
    int next, int quick)
{
	char	 what[400];

	snprintf(what, sizeof(what), "%ld %.60s%s%.300s", r->status,
	    r->reason, r->message[0] != '\0' ? ": " : "", r->message);
	cand_retry(d, req, what, next, quick);
}

/* The API is not served: elect without the controller. */
static void
cand_fallback(struct daemon *d)
{
	log_warnx("lease %s: coordinated election off: the LeaseCandidate "
	    "API (coordination.k8s.io/v1beta1) is not served (404; the "
	    "CoordinatedLeaderElection feature gate is off); electing as "
	    "usual", d->el[0].lock);
	d->el[0].st.coordinated = LOCALAPI_COORD_OFF;
	d->el[0].st.coordinated_reason = "the LeaseCandidate API "
	    "(coordination.k8s.io/v1beta1) is not served";
	d->cand_on = 0;
	ev_timer_stop(d->loop, &d->cand_timer);
	daemon_step(&d->el[0], ELECTOR_IN_COORDINATED, NULL);
}

static void
cand_working(struct daemon *d)
{
	if (d->cand_err[0] != '\0')
		log_info("lease %s: LeaseCandidate %s/%s kept again", d->el[0].lock,
		    d->conf->lock_namespace, d->conf->identity);
	d->cand_err[0] = '\0';
	d->cand_fails = 0;
	d->el[0].st.coordinated = LOCALAPI_COORD_ON;
	d->el[0].st.coordinated_reason = "";
}

/* After ours is kept: the list, if handover: auto wants it now, or ours
 * read again a retry_period from now. */
static void
cand_next_round(struct daemon *d)
{
	uint64_t	 now_ms = clock_mono_ms();

	if (strcmp(d->conf->handover, "auto") == 0 &&
	    elector_is_leader(&d->el[0].el, now_ms) &&
	    now_ms >= d->cand_list_ms) {
		cand_send(d, CAND_REQ_LIST);
		return;
	}
	cand_later(d, CAND_REQ_GET, d->conf->retry_period_ms);
}

/* Ours, read by name: renew it if pinged or due. */
static void
cand_read(struct daemon *d, const struct kube_result *r)
{
	char	 err[256];

	if (lease_cand_decode(r->body, r->len, &d->mine, err,
	    sizeof(err)) == -1) {
		cand_retry(d, CAND_REQ_GET, err, CAND_REQ_GET, 0);
		return;
	}
	if (d->mine.ping_us > d->mine.renew_us ||
	    clock_mono_ms() >= d->cand_renew_ms) {
		if (d->mine.ping_us > d->mine.renew_us)
			log_debug("lease %s: LeaseCandidate pinged",
			    d->el[0].lock);
		cand_send(d, CAND_REQ_RENEW);
		return;
	}
	cand_working(d);
	cand_next_round(d);
}

/* The namespace's candidates: the pick of handover: auto. */
static void
cand_listed(struct daemon *d, const struct kube_result *r)
{
	struct lease_cand_scan	 sc;
	char			 err[256];

	memset(&sc, 0, sizeof(sc));
	sc.lease_name = d->conf->lock_name;
	sc.skip = d->conf->identity;
	sc.by_version = strcmp(d->conf->cle_strategy,
	    "OldestEmulationVersion") == 0;
	sc.now_us = clock_wall_us();
	if (lease_cand_scan_list(r->body, r->len, &sc, err,
	    sizeof(err)) == -1) {
		cand_retry(d, CAND_REQ_LIST, err, CAND_REQ_GET, 0);
		return;
	}
	d->cand_list_fails = 0;
	d->cand_list_ms = 0;
	if (sc.skipped != d->cand_skipped && sc.skipped > 0)
		log_warnx("lease %s: %zu of its %zu LeaseCandidates passed "
		    "over for handover: auto (the first: %s)", d->el[0].lock,
		    sc.skipped, sc.n, sc.why);
	d->cand_skipped = sc.skipped;
	d->has_pick = sc.found;
	if (sc.found)
		d->pick = sc.best;
	cand_later(d, CAND_REQ_GET, d->conf->retry_period_ms);
}

static void
cand_done_cb(const struct kube_result *r, void *arg)
{
	struct daemon		*d = arg;
	int			 req = d->cand_req;
	char			 err[256];

	d->cand_req = CAND_REQ_NONE;
	if (req == CAND_REQ_DELETE) {
		if (r->outcome == KUBE_OK || r->outcome == KUBE_NOTFOUND)
			log_info("lease %s: LeaseCandidate %s/%s deleted",
			    d->el[0].lock, d->conf->lock_namespace,
			    d->conf->identity);
		else
			log_warnx("lease %s: LeaseCandidate delete: %ld %.60s",
			    d->el[0].lock, r->status, r->reason);
		if (d->exit_wait)
			ev_break(d->loop, EVBREAK_ALL);
		return;
	}
	if (r->outcome == KUBE_NOTFOUND && req == CAND_REQ_CREATE) {
		cand_fallback(d);
		return;
	}
	if (r->outcome != KUBE_OK) {
		if (req == CAND_REQ_LIST)
			cand_retry_api(d, req, r, CAND_REQ_GET, 0);
		else if (r->outcome == KUBE_CONFLICT)
			/* Ours exists already (create) or moved (renew). */
			cand_retry_api(d, req, r, CAND_REQ_GET, 1);
		else if (r->outcome == KUBE_NOTFOUND)
			/* Gone (garbage-collected, or deleted by hand). */
			cand_retry_api(d, req, r, CAND_REQ_CREATE, 1);
		else
			cand_retry_api(d, req, r, d->mine.rv[0] != '\0' ?
			    CAND_REQ_GET : CAND_REQ_CREATE, 0);
		return;
	}
	if (req == CAND_REQ_LIST) {
		cand_listed(d, r);
		return;
	}
	if (req == CAND_REQ_GET) {
		cand_read(d, r);
		return;
	}
	if (lease_cand_decode(r->body, r->len, &d->mine, err,
	    sizeof(err)) == -1)
		log_warnx("lease %s: LeaseCandidate answer: %s", d->el[0].lock, err);
	if (req == CAND_REQ_CREATE || d->el[0].st.coordinated != LOCALAPI_COORD_ON)
		log_info("lease %s: coordinated election: LeaseCandidate "
		    "%s/%s (binary %s, emulation %s, strategy %s)", d->el[0].lock,
		    d->conf->lock_namespace, d->conf->identity,
		    d->conf->binary_version, d->conf->emulation_version[0] !=
		    '\0' ? d->conf->emulation_version : d->conf->binary_version,
		    d->conf->cle_strategy);
	cand_working(d);
	d->cand_renew_ms = clock_mono_ms() + CAND_RENEW_MS;
	cand_next_round(d);
}

static void
cand_send(struct daemon *d, int req)
{
	struct lease_cand	 c;
	const char		*ns = d->conf->lock_namespace;
	char			*body = NULL;
	int			 rc = -1;

	cand_self(d, &c);
	c.renew_us = clock_wall_us();
	d->cand_req = req;
	switch (req) {
	case CAND_REQ_CREATE:
		body = lease_cand_encode_create(ns, &c);
		rc = kube_cand_create(d->ck, ns, body,
		    d->conf->request_timeout_ms, cand_done_cb, d);
		break;
	case CAND_REQ_GET:
		rc = kube_cand_get(d->ck, ns, c.name,
		    d->conf->request_timeout_ms, cand_done_cb, d);
		break;
	case CAND_REQ_RENEW:
		snprintf(c.rv, sizeof(c.rv), "%s", d->mine.rv);
		c.ping_us = d->mine.ping_us;
		body = lease_cand_encode_create(ns, &c);
		rc = kube_cand_update(d->ck, ns, c.name, body,
		    d->conf->request_timeout_ms, cand_done_cb, d);
		break;
	case CAND_REQ_LIST:
		rc = kube_cand_list(d->ck, ns, d->conf->request_timeout_ms,
		    cand_done_cb, d);
		break;
	}
	free(body);
	if (rc == -1) {
		d->cand_req = CAND_REQ_NONE;
		cand_retry(d, req, "the request could not be started",
		    req == CAND_REQ_LIST ? CAND_REQ_GET : req, 0);
	}
}

static void
cand_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon	*d = w->data;

	(void)loop;
	(void)revents;
	if (d->cand_on && d->cand_req == CAND_REQ_NONE)
		cand_send(d, d->cand_next);
}

int
daemon_cand_setup(struct daemon *d, const struct kube_creds *creds,
    const char *ua)
{
	char	 err[512];

	ev_init(&d->cand_timer, cand_timer_cb);
	d->cand_timer.data = d;
	d->el[0].st.coordinated = LOCALAPI_COORD_NONE;
	d->el[0].st.coordinated_reason = "";
	if (!d->conf->coordinated)
		return 0;
	if ((d->ck = kube_new(d->cv, creds, d->token, ua, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	kube_set_observer(d->ck, daemon_api_observe_cb, d);
	d->cand_on = 1;
	d->el[0].st.coordinated = LOCALAPI_COORD_OFF;
	d->el[0].st.coordinated_reason = "the LeaseCandidate is not created yet";
	cand_send(d, CAND_REQ_CREATE);
	return 0;
}

const char *
daemon_cand_pick(struct daemon *d)
{
	if (d->el[0].st.coordinated != LOCALAPI_COORD_ON || !d->has_pick ||
	    !lease_cand_live(&d->pick, clock_wall_us()))
		return NULL;
	return d->pick.name;
}

void
daemon_cand_stop(struct daemon *d, uint64_t until_ms)
{
	uint64_t	 now_ms = clock_mono_ms();

	ev_timer_stop(d->loop, &d->cand_timer);
	if (d->ck == NULL || !d->cand_on)
		return;
	d->cand_on = 0;
	if (d->cand_req != CAND_REQ_NONE)
		kube_cancel(d->ck);
	d->cand_req = CAND_REQ_DELETE;
	if (kube_cand_delete(d->ck, d->conf->lock_namespace,
	    d->conf->identity, until_ms > now_ms ? until_ms - now_ms : 1,
	    cand_done_cb, d) == -1)
		d->cand_req = CAND_REQ_NONE;
}

int
daemon_cand_busy(const struct daemon *d)
{
	return d->cand_req == CAND_REQ_DELETE;
}

void
daemon_cand_free(struct daemon *d)
{
	ev_timer_stop(d->loop, &d->cand_timer);
	if (d->ck != NULL)
		kube_free(d->ck);
	d->ck = NULL;
}
