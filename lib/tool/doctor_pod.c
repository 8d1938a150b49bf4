/*
 * doctor_pod.c -- `leaderd doctor`: the checks inside the pod, with the
 * daemon's own configuration (file and flags) and credentials (the
 * in-cluster service account, or kubernetes.kubeconfig).  In order:
 * the token (a SelfSubjectReview: accepted, and as whom; the JWT's
 * expiry), the lock's namespace against the pod's, one access review
 * per verb the configuration needs, the lock judged against our
 * durations, the same name elsewhere, and our clock against the API
 * server's Date.  docs/operations.md, "Doctor".
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/xmalloc.h"
#include "codec/epslice.h"
#include "codec/lease.h"
#include "codec/legacy.h"
#include "codec/review.h"
#include "config/config.h"
#include "config/creds.h"
#include "tool/doctor.h"
#include "tool/doctor_int.h"
#include "tool/tool.h"

#define G_COORD		"coordination.k8s.io"
#define G_DISCOVERY	"discovery.k8s.io"

/* One verb the configuration needs, and what for. */
struct need {
	const char	*verb, *group, *resource, *ns, *name, *why;
};

/* Whether the lock type uses the Lease, or the old-style object kind. */
static int
lock_has(const char *lock_type, const char *what)
{
	return strstr(lock_type, what) != NULL;
}

/*
 * The verbs the configuration needs, into n (at most max): the lock's
 * objects (get, update by name; create; watch when the Lease is watched),
 * Events, and what the actions and candidacy use; slice (slicelen
 * bytes) holds the leader EndpointSlice's name the needs point at.
 */
static size_t
needs(const struct config *c, struct need *n, size_t max, char *slice,
    size_t slicelen)
{
	const char	*ns = c->lock_namespace, *name = c->lock_name;
	size_t		 k = 0;

	epslice_name(c->ep_service, slice, slicelen);

#define NEED(v, g, r, s, o, w) do {					\
	if (k < max) {							\
		struct need	 x_ = { v, g, r, s, o, w };		\
		n[k++] = x_;						\
	}								\
} while (0)
	if (lock_has(c->lock_type, "leases")) {
		NEED("get", G_COORD, "leases", ns, name, "to read the Lease");
		NEED("update", G_COORD, "leases", ns, name, "to renew the "
		    "Lease and take it over");
		NEED("create", G_COORD, "leases", ns, "", "to create the "
		    "Lease the first time");
		if (c->watch)
			NEED("watch", G_COORD, "leases", ns, name, "to watch "
			    "the Lease; without it, it is read every "
			    "retry_period");
	}
	if (lock_has(c->lock_type, "endpoints")) {
		NEED("get", "", "endpoints", ns, name, "to read the lock");
		NEED("update", "", "endpoints", ns, name, "to renew the lock");
		NEED("create", "", "endpoints", ns, "", "to create the lock");
	}
	if (lock_has(c->lock_type, "configmaps")) {
		NEED("get", "", "configmaps", ns, name, "to read the lock");
		NEED("update", "", "configmaps", ns, name, "to renew the lock");
		NEED("create", "", "configmaps", ns, "", "to create the lock");
	}
	NEED("create", "", "events", ns, "", "to record leadership Events");
	if (c->label_enabled)
		NEED("patch", "", "pods", c->label_namespace[0] != '\0' ?
		    c->label_namespace : ns, c->label_pod, "to keep the "
		    "pod's label, actions.label");
	if (c->ep_service[0] != '\0') {
		const char	*ens = c->ep_namespace[0] != '\0' ?
		    c->ep_namespace : ns;

		if (c->ep_slice) {
			NEED("create", G_DISCOVERY, "endpointslices", ens, "",
			    "to publish the leader's EndpointSlice");
			NEED("update", G_DISCOVERY, "endpointslices", ens,
			    slice, "to keep the leader's EndpointSlice");
		}
		if (c->ep_legacy) {
			NEED("create", "", "endpoints", ens, "", "to publish "
			    "the leader's Endpoints");
			NEED("update", "", "endpoints", ens, c->ep_service,
			    "to keep the leader's Endpoints");
		}
	}
	if (c->coordinated || strcmp(c->handover, "auto") == 0) {
		NEED("list", G_COORD, "leasecandidates", ns, "", "to find the "
		    "candidates of a coordinated election or handover: auto");
	}
	if (c->coordinated) {
		NEED("create", G_COORD, "leasecandidates", ns, "",
		    "to register as a candidate of a coordinated election");
		NEED("get", G_COORD, "leasecandidates", ns, c->identity,
		    "to read its candidacy back");
		NEED("update", G_COORD, "leasecandidates", ns, c->identity,
		    "to answer the election controller's pings");
		NEED("delete", G_COORD, "leasecandidates", ns, c->identity,
		    "to withdraw the candidacy on exit");
	}
#undef NEED
	return k;
}

/* The token: accepted, as whom, until when.  0, or -1: go no further. */
static int
check_token(struct doctor_run *d, const struct kube_creds *creds)
{
	struct tool_answer	 a;
	struct doctor_token	 tok;
	char			 user[LEASE_HOLDER_MAX], err[300], src[600];
	char			*raw;
	int64_t			 exp_s = 0;

	memset(&tok, 0, sizeof(tok));
	user[0] = '\0';
	err[0] = '\0';
	if (creds->token_file != NULL) {
		snprintf(src, sizeof(src), "the file %s", creds->token_file);
		if ((raw = creds_read_token(creds->token_file, err,
		    sizeof(err))) != NULL) {
			(void)review_jwt_exp(raw, &exp_s);
			explicit_bzero(raw, strlen(raw));
			free(raw);
		}
	} else if (creds->token != NULL) {
		snprintf(src, sizeof(src), "the kubeconfig");
		(void)review_jwt_exp(creds->token, &exp_s);
	} else {
		/* A client certificate: the review still says who we are. */
		snprintf(src, sizeof(src), "the client certificate");
	}
	tok.source = src;
	tok.exp_us = exp_s * 1000000;
	if (doctor_call(d, "POST", REVIEW_SSR_PATH, "{\"kind\":"
	    "\"SelfSubjectReview\",\"apiVersion\":\"authentication.k8s.io/v1\""
	    "}", "create", &a) == -1)
		return -1;
	tok.status = a.res.status;
	doctor_answer_text(&a, err, sizeof(err));
	tok.error = err;
	if (a.res.status == 201 || a.res.status == 200)
		(void)review_whoami(a.body, a.len, user, sizeof(user), err,
		    sizeof(err));
	else if (a.res.status != 0 && a.res.status != 401)
		tok.status = 200;	/* not served, or refused: known */
	tok.user = user;
	snprintf(d->user, sizeof(d->user), "%s", user);
	tool_answer_free(&a);
	doctor_judge_token(&d->rep, &tok, clock_wall_us());
	return tok.status == 0 || tok.status == 401 ? -1 : 0;
}

/* The lock's record, judged against our durations. */
static void
check_lock(struct doctor_run *d, const struct config *c, struct lease *rec,
    int *have)
{
	struct doctor_lease	 l;
	struct doctor_names	 cands;
	char			 manager[128];
	int			 exists, ncand;

	*have = 0;
	if (!lock_has(c->lock_type, "leases")) {
		/* An old-style lock alone: a Lease beside it elects apart. */
		if (doctor_read_lease(d, c->lock_namespace, c->lock_name, rec,
		    manager, sizeof(manager)) == 1) {
			struct doctor_other	 o = { "Lease",
			    c->lock_namespace, c->lock_name, rec };

			doctor_judge_other(&d->rep, &o, c->lock_type, NULL,
			    doctor_now_us(d));
		}
		return;
	}
	exists = doctor_read_lease(d, c->lock_namespace, c->lock_name, rec,
	    manager, sizeof(manager));
	memset(&l, 0, sizeof(l));
	l.ns = c->lock_namespace;
	l.name = c->lock_name;
	l.exists = exists;
	l.rec = rec;
	l.now_us = doctor_now_us(d);
	l.lease_ms = c->lease_duration_ms;
	l.identity = c->identity;
	l.manager = manager;
	l.holder_live = l.preferred_live = DOCTOR_LIVE_UNKNOWN;
	if (exists == 1) {
		*have = 1;
		memset(&cands, 0, sizeof(cands));
		ncand = doctor_live_cands(d, c->lock_namespace, c->lock_name,
		    &cands);
		if (strcmp(rec->holder, c->identity) == 0 ||
		    doctor_names_has(&cands, rec->holder))
			l.holder_live = DOCTOR_LIVE_YES;
		else
			l.holder_live = doctor_pod(d, c->lock_namespace,
			    rec->holder, NULL, 0);
		if (rec->preferred[0] != '\0') {
			if (strcmp(rec->preferred, c->identity) == 0 ||
			    doctor_names_has(&cands, rec->preferred))
				l.preferred_live = DOCTOR_LIVE_YES;
			else if (ncand > 0)
				l.preferred_live = DOCTOR_LIVE_NO;
			else
				l.preferred_live = doctor_pod(d,
				    c->lock_namespace, rec->preferred, NULL, 0);
		}
	}
	doctor_judge_lease(&d->rep, &l);
}

/* One election's checks: its verbs, its lock, its name elsewhere. */
static void
check_election(struct doctor_run *d, const struct config *c)
{
	struct need		 n[24];
	struct review_ask	 ask;
	struct lease		 rec;
	char			 slice[LEASE_HOLDER_MAX];
	size_t			 i, k;
	int			 have;

	k = needs(c, n, sizeof(n) / sizeof(n[0]), slice, sizeof(slice));
	for (i = 0; i < k; i++) {
		ask.verb = n[i].verb;
		ask.group = n[i].group;
		ask.resource = n[i].resource;
		ask.ns = n[i].ns;
		ask.name = n[i].name;
		doctor_self(d, "this pod's service account", d->user[0] !=
		    '\0' ? d->user : NULL, &ask, n[i].why);
	}
	memset(&rec, 0, sizeof(rec));
	check_lock(d, c, &rec, &have);
	doctor_same_name(d, c->lock_namespace, c->lock_name, c->lock_type,
	    have ? &rec : NULL);
}

int
doctor_pod_main(const struct config *c, struct kube_creds *creds,
    const char *pod_ns)
{
	struct tool		 t;
	struct doctor_run	*d;
	struct config		*e;
	char			 about[1200];
	int			 i, ret;

	if (tool_open_creds(&t, "leaderd doctor", creds, c->lock_namespace,
	    c->request_timeout_ms) == -1)
		return DOCTOR_EXIT_PROBLEM;
	d = xcalloc(1, sizeof(*d));
	e = xcalloc(1, sizeof(*e));
	d->t = &t;
	doctor_init(&d->rep);
	if (c->nelections == 0)
		snprintf(about, sizeof(about), "%s %s/%s, identity %s, as this "
		    "pod", c->lock_type, c->lock_namespace, c->lock_name,
		    c->identity);
	else
		snprintf(about, sizeof(about), "%d elections from %s %s/%s, "
		    "identity %s, as this pod", c->nelections + 1, c->lock_type,
		    c->lock_namespace, c->lock_name, c->identity);
	if (check_token(d, &t.creds) == -1)
		goto done;
	doctor_judge_namespace(&d->rep, c->lock_namespace, pod_ns);
	if (config_shards_on(c))
		doctor_add(&d->rep, DOCTOR_SKIP, "shards", "shard group %s: "
		    "only its member Lease is checked here; kubectl leaderd "
		    "shards %s shows the shards", c->shards_group,
		    c->shards_group);
	for (i = 0; i <= c->nelections; i++) {
		config_election(c, i, e);
		check_election(d, e);
	}
	if (d->date_s != 0)
		doctor_judge_clock(&d->rep, doctor_offset_ms(d),
		    c->renew_deadline_ms);
	else
		doctor_add(&d->rep, DOCTOR_SKIP, "clock", "the API server's "
		    "answers carry no Date header");
done:
	doctor_print(&d->rep, about, stdout);
	ret = doctor_exit(&d->rep);
	free(e);
	free(d);
	tool_close(&t);
	return ret;
}
