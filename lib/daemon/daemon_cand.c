/*
 * daemon_cand.c -- coordinated election (candidacy.coordinated,
 * KEP-4355): the LeaseCandidate named after our identity, in the Lease's
 * namespace, kept on a client and a timer of its own.
 *
 * At start it is created (a 409 finds the one our previous process left
 * and renews it).  Then the candidates of the namespace are listed every
 * retry_period: ours is renewed when the API server's election
 * controller pings it (pingTime newer than renewTime) or when client-go's
 * interval (5 minutes) has passed since the last renew, and created again
 * if it went missing (garbage-collected); the others of the same Lease
 * are remembered for handover: auto.  On exit it is deleted, beside the
 * release, within the shutdown budget.
 *
 * A 404 on the create or the list means the API is not served (the
 * CoordinatedLeaderElection gate is off, or coordination.k8s.io/v1beta1
 * is not enabled): one log line, the elector competes as usual
 * (ELECTOR_IN_COORDINATED off) and GET /leader says coordinated: false
 * with the reason.  Other failures are retried every retry_period, the
 * elector still waiting for the controller.
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
#define CAND_LIVE_US	(330LL * 1000000) /* renewed this recently: live */

enum { CAND_REQ_NONE, CAND_REQ_CREATE, CAND_REQ_LIST, CAND_REQ_RENEW,
    CAND_REQ_DELETE };

static void	cand_send(struct daemon *, int);

static void
cand_arm(struct daemon *d, uint64_t after_ms)
{
	ev_timer_stop(d->loop, &d->cand_timer);
	ev_timer_set(&d->cand_timer, clock_timer_seconds(after_ms), 0.);
	ev_timer_start(d->loop, &d->cand_timer);
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

/* Log a failure once until the next success; note it for /leader. */
static void
cand_failed(struct daemon *d, const char *what, const struct kube_result *r)
{
	char	 msg[sizeof(d->cand_err)];

	snprintf(msg, sizeof(msg), "%s: %ld %.60s%s%.300s", what, r->status,
	    r->reason, r->message[0] != '\0' ? ": " : "", r->message);
	if (strcmp(msg, d->cand_err) != 0)
		log_warnx("lease %s: LeaseCandidate %s", d->el[0].lock, msg);
	memcpy(d->cand_err, msg, sizeof(d->cand_err));
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
	d->el[0].st.coordinated = LOCALAPI_COORD_ON;
	d->el[0].st.coordinated_reason = "";
}

/* The list: ours, and the others of our Lease. */
static void
cand_listed(struct daemon *d, const struct kube_result *r)
{
	struct lease_cand	*mine = NULL;
	char			 err[256];
	size_t			 i, n;
	uint64_t		 now_ms = clock_mono_ms();

	if (lease_cand_decode_list(r->body, r->len, d->conf->lock_name,
	    d->cands, DAEMON_CANDS, &n, err, sizeof(err)) == -1) {
		log_warnx("lease %s: LeaseCandidate list: %s", d->el[0].lock, err);
		cand_arm(d, d->conf->retry_period_ms);
		return;
	}
	d->ncands = n;
	for (i = 0; i < n; i++)
		if (strcmp(d->cands[i].name, d->conf->identity) == 0)
			mine = &d->cands[i];
	if (mine == NULL) {
		/* Gone (garbage-collected, or deleted by hand): again. */
		cand_send(d, CAND_REQ_CREATE);
		return;
	}
	d->mine = *mine;
	if (mine->ping_us > mine->renew_us || now_ms >= d->cand_renew_ms) {
		if (mine->ping_us > mine->renew_us)
			log_debug("lease %s: LeaseCandidate pinged",
			    d->el[0].lock);
		cand_send(d, CAND_REQ_RENEW);
		return;
	}
	cand_arm(d, d->conf->retry_period_ms);
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
			cand_failed(d, "delete", r);
		if (d->exit_wait)
			ev_break(d->loop, EVBREAK_ALL);
		return;
	}
	if (r->outcome == KUBE_NOTFOUND &&
	    (req == CAND_REQ_CREATE || req == CAND_REQ_LIST)) {
		cand_fallback(d);
		return;
	}
	if (r->outcome == KUBE_CONFLICT) {
		/* Ours exists already (create) or moved (renew): list. */
		cand_send(d, CAND_REQ_LIST);
		return;
	}
	if (r->outcome != KUBE_OK) {
		cand_failed(d, req == CAND_REQ_CREATE ? "create" :
		    req == CAND_REQ_LIST ? "list" : "renew", r);
		if (d->el[0].st.coordinated != LOCALAPI_COORD_ON)
			d->el[0].st.coordinated_reason = "the LeaseCandidate could "
			    "not be written yet";
		cand_arm(d, d->conf->retry_period_ms);
		return;
	}
	if (req == CAND_REQ_LIST) {
		cand_listed(d, r);
		return;
	}
	if (lease_cand_decode(r->body, r->len, &d->mine, err,
	    sizeof(err)) == -1)
		log_warnx("lease %s: LeaseCandidate answer: %s", d->el[0].lock, err);
	if (req == CAND_REQ_CREATE || d->el[0].st.coordinated != LOCALAPI_COORD_ON)
		log_info("lease %s: coordinated election: LeaseCandidate "
		    "%s/%s (binary %s, emulation %s, strategy %s)", d->el[0].lock,
		    d->conf->lock_namespace, d->conf->identity,
		    d->mine.binary_version, d->mine.emulation_version,
		    d->mine.strategy);
	cand_working(d);
	d->cand_renew_ms = clock_mono_ms() + CAND_RENEW_MS;
	cand_arm(d, d->conf->retry_period_ms);
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
		cand_arm(d, d->conf->retry_period_ms);
	}
}

static void
cand_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon	*d = w->data;

	(void)loop;
	(void)revents;
	if (d->cand_on && d->cand_req == CAND_REQ_NONE)
		cand_send(d, d->el[0].st.coordinated == LOCALAPI_COORD_ON ? CAND_REQ_LIST :
		    CAND_REQ_CREATE);
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
	int64_t		 now_us = clock_wall_us();
	size_t		 i;
	int		 best = -1;

	if (d->el[0].st.coordinated != LOCALAPI_COORD_ON || d->ncands == 0)
		return NULL;
	if (strcmp(d->conf->cle_strategy, "OldestEmulationVersion") == 0)
		best = lease_cand_pick(d->cands, d->ncands, d->conf->identity,
		    now_us - CAND_LIVE_US);
	else
		for (i = 0; i < d->ncands; i++)
			if (strcmp(d->cands[i].name, d->conf->identity) != 0 &&
			    d->cands[i].renew_us >= now_us - CAND_LIVE_US &&
			    (best == -1 || d->cands[i].renew_us >
			    d->cands[best].renew_us))
				best = (int)i;
	return best == -1 ? NULL : d->cands[best].name;
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
