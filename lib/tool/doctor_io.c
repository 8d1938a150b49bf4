/*
 * doctor_io.c -- the requests both doctors make, each answer turned into
 * a finding or into the plain data a judgement takes (doctor_int.h).
 * One request at a time, waited for (tool_call); nothing retries.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/xmalloc.h"
#include "codec/lease.h"
#include "codec/leasecand.h"
#include "codec/leaseview.h"
#include "codec/legacy.h"
#include "codec/review.h"
#include "tool/doctor_int.h"

int
doctor_names_add(struct doctor_names *s, const char *name)
{
	size_t	 i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return (int)i;
	if (s->n == DOCTOR_NAMES_MAX || name[0] == '\0')
		return -1;
	snprintf(s->v[s->n], sizeof(s->v[s->n]), "%s", name);
	return (int)s->n++;
}

int
doctor_names_has(const struct doctor_names *s, const char *name)
{
	size_t	 i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i], name) == 0)
			return 1;
	return 0;
}

int
doctor_call(struct doctor_run *d, const char *method, const char *path,
    const char *body, const char *verb, struct tool_answer *a)
{
	if (tool_call(d->t, method, path, body, NULL, verb, a) == -1)
		return -1;
	if (a->res.date_s != 0) {
		d->date_s = a->res.date_s;
		d->date_local_us = clock_wall_us();
	}
	return 0;
}

int
doctor_get(struct doctor_run *d, char *path, const char *verb,
    struct tool_answer *a)
{
	int	 rc;

	rc = doctor_call(d, "GET", path, NULL, verb, a);
	free(path);
	return rc;
}

int64_t
doctor_offset_ms(const struct doctor_run *d)
{
	/* The Date is the server's second, cut: its middle is the best. */
	if (d->date_s == 0)
		return 0;
	return (d->date_local_us - (d->date_s * 1000000 + 500000)) / 1000;
}

int64_t
doctor_now_us(const struct doctor_run *d)
{
	int64_t	 off = doctor_offset_ms(d);

	/* Within the Date's resolution our own clock is the finer one. */
	if (off >= -1000 && off <= 1000)
		return clock_wall_us();
	return clock_wall_us() - off * 1000;
}

void
doctor_answer_text(const struct tool_answer *a, char *buf, size_t len)
{
	const struct kube_result	*r = &a->res;

	if (r->status == 0)
		snprintf(buf, len, "%s", r->message[0] != '\0' ? r->message :
		    "no answer");
	else if (r->message[0] != '\0')
		snprintf(buf, len, "%ld %s: %s", r->status, r->reason,
		    r->message);
	else
		snprintf(buf, len, "%ld %s", r->status, r->reason);
}

/* Send a review and judge its answer as a. */
static void
review(struct doctor_run *d, const char *path, char *body,
    struct doctor_access *acc)
{
	struct tool_answer	 a;
	char			 reason[256], err[256];
	int			 allowed = 0;

	reason[0] = '\0';
	acc->reason = reason;
	if (d->no_reviews) {
		acc->answer = DOCTOR_NOANSWER;
		snprintf(reason, sizeof(reason), "the access review API is not "
		    "served");
		doctor_judge_access(&d->rep, acc);
		free(body);
		return;
	}
	if (doctor_call(d, "POST", path, body, "create", &a) == -1) {
		free(body);
		acc->answer = DOCTOR_NOANSWER;
		doctor_judge_access(&d->rep, acc);
		return;
	}
	free(body);
	if (a.res.status != 201 && a.res.status != 200) {
		doctor_answer_text(&a, reason, sizeof(reason));
		if (a.res.status == 404)
			d->no_reviews = 1;
		acc->answer = DOCTOR_NOANSWER;
	} else if (review_decode(a.body, a.len, &allowed, reason,
	    sizeof(reason), err, sizeof(err)) == -1) {
		snprintf(reason, sizeof(reason), "%s", err);
		acc->answer = DOCTOR_NOANSWER;
	} else
		acc->answer = allowed ? DOCTOR_ALLOWED : DOCTOR_DENIED;
	tool_answer_free(&a);
	doctor_judge_access(&d->rep, acc);
}

/* The judgement's question from the review's. */
static void
access_of(struct doctor_access *acc, const struct review_ask *ask,
    const char *subject, const char *grant_to, const char *need)
{
	memset(acc, 0, sizeof(*acc));
	acc->subject = subject;
	acc->grant_to = grant_to;
	acc->verb = ask->verb;
	acc->resource = ask->resource;
	acc->group = ask->group;
	acc->ns = ask->ns;
	acc->name = ask->name;
	acc->need = need;
}

void
doctor_self(struct doctor_run *d, const char *subject, const char *grant_to,
    const struct review_ask *ask, const char *need)
{
	struct doctor_access	 acc;

	access_of(&acc, ask, subject, grant_to, need);
	review(d, REVIEW_SSAR_PATH, review_encode_self(ask), &acc);
}

void
doctor_sa(struct doctor_run *d, const char *sa_ns, const char *sa,
    const char *pods, const struct review_ask *ask, const char *need)
{
	struct doctor_access	 acc;
	char			 subject[LEASE_HOLDER_MAX * 3];
	char			 grant[LEASE_HOLDER_MAX * 2];

	snprintf(subject, sizeof(subject), "service account %s/%s (pods %s)",
	    sa_ns, sa, pods);
	snprintf(grant, sizeof(grant), "system:serviceaccount:%s:%s", sa_ns,
	    sa);
	access_of(&acc, ask, subject, grant, need);
	review(d, REVIEW_SAR_PATH, review_encode_sa(sa_ns, sa, ask), &acc);
}

int
doctor_read_lease(struct doctor_run *d, const char *ns, const char *name,
    struct lease *rec, char *manager, size_t managerlen)
{
	struct tool_answer	 a;
	char			*path, *ens, *ename, err[300];
	int			 rc = -1;

	memset(rec, 0, sizeof(*rec));
	manager[0] = '\0';
	ens = tool_escape(ns);
	ename = tool_escape(name);
	xasprintf(&path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/"
	    "%s", ens, ename);
	free(ens);
	free(ename);
	if (doctor_get(d, path, "get", &a) == -1)
		return -1;
	if (a.res.status == 404)
		rc = 0;
	else if (a.res.status != 200) {
		doctor_answer_text(&a, err, sizeof(err));
		doctor_add(&d->rep, DOCTOR_SKIP, "lease", "lease %s/%s cannot "
		    "be read: %s", ns, name, err);
	} else if (lease_decode(a.body, a.len, rec, err, sizeof(err)) == -1)
		doctor_add(&d->rep, DOCTOR_SKIP, "lease", "lease %s/%s is not "
		    "a Lease leaderd can read: %s", ns, name, err);
	else {
		(void)review_spec_manager(a.body, a.len, manager, managerlen,
		    err, sizeof(err));
		rc = 1;
	}
	tool_answer_free(&a);
	return rc;
}

struct cands {
	const char		*lease;
	int64_t			 now_us;
	struct doctor_names	*out;
};

static void
cand_cb(const char *ns, const struct lease_cand *c, void *arg)
{
	struct cands	*cs = arg;

	(void)ns;
	if (strcmp(c->lease_name, cs->lease) == 0 &&
	    lease_cand_live(c, cs->now_us))
		doctor_names_add(cs->out, c->name);
}

int
doctor_live_cands(struct doctor_run *d, const char *ns, const char *lease,
    struct doctor_names *out)
{
	struct tool_answer	 a;
	struct cands		 cs = { lease, 0, out };
	char			*path, *ens, err[200];
	unsigned		 skipped = 0;
	int			 rc = -1;

	ens = tool_escape(ns);
	xasprintf(&path, "/apis/coordination.k8s.io/v1beta1/namespaces/%s/"
	    "leasecandidates", ens);
	free(ens);
	if (doctor_get(d, path, "list", &a) == -1)
		return -1;
	cs.now_us = doctor_now_us(d);
	if (a.res.status == 200 && leaseview_cands(a.body, a.len, cand_cb,
	    &cs, &skipped, err, sizeof(err)) == 0)
		rc = (int)out->n;
	tool_answer_free(&a);
	return rc;
}

enum doctor_live
doctor_pod(struct doctor_run *d, const char *ns, const char *pod, char *sa,
    size_t salen)
{
	struct tool_answer	 a;
	enum doctor_live	 live = DOCTOR_LIVE_UNKNOWN;
	char			*path, *ens, *epod, err[200];

	ens = tool_escape(ns);
	epod = tool_escape(pod);
	xasprintf(&path, "/api/v1/namespaces/%s/pods/%s", ens, epod);
	free(ens);
	free(epod);
	if (doctor_get(d, path, "get", &a) == -1)
		return live;
	if (a.res.status == 404)
		live = DOCTOR_LIVE_NO;
	else if (a.res.status == 200) {
		live = DOCTOR_LIVE_YES;
		if (sa != NULL && review_pod_sa(a.body, a.len, sa, salen, err,
		    sizeof(err)) == -1)
			sa[0] = '\0';
	}
	tool_answer_free(&a);
	return live;
}

struct same {
	struct doctor_run	*d;
	const char		*ns;
	const char		*lock_type;
	const struct lease	*ours;
	int64_t			 now_us;
	unsigned		 others;
};

static void
same_cb(const struct leaseview *v, void *arg)
{
	struct same		*s = arg;
	struct doctor_other	 o = { "Lease", v->ns, v->name, &v->rec };

	if (strcmp(v->ns, s->ns) == 0)
		return;
	s->others++;
	doctor_judge_other(&s->d->rep, &o, s->lock_type, s->ours, s->now_us);
}

/* The Leases of that name in every other namespace. */
static void
same_leases(struct doctor_run *d, const char *ns, const char *name,
    const char *lock_type, const struct lease *ours)
{
	struct tool_answer	 a;
	struct same		 s = { d, ns, lock_type, ours, 0, 0 };
	struct lease_list	 page;
	char			*path, *sel, err[300];

	xasprintf(&sel, "metadata.name=%s", name);
	path = tool_escape(sel);
	free(sel);
	sel = path;
	xasprintf(&path, "/apis/coordination.k8s.io/v1/leases?fieldSelector="
	    "%s&limit=%d", sel, TOOL_PAGE);
	free(sel);
	if (doctor_get(d, path, "list", &a) == -1)
		return;
	s.now_us = doctor_now_us(d);
	if (a.res.status != 200) {
		doctor_answer_text(&a, err, sizeof(err));
		doctor_add(&d->rep, DOCTOR_SKIP, "split", "Leases named %s in "
		    "other namespaces not checked: %s", name, err);
	} else if (leaseview_list(a.body, a.len, same_cb, &s, &page, err,
	    sizeof(err)) == -1)
		doctor_add(&d->rep, DOCTOR_SKIP, "split", "Leases named %s in "
		    "other namespaces not checked: %s", name, err);
	else if (s.others == 0)
		doctor_add(&d->rep, DOCTOR_OK, "split", "no Lease named %s in "
		    "another namespace", name);
	tool_answer_free(&a);
}

/* The old-style lock object resource ns/name, if any. */
static void
same_legacy(struct doctor_run *d, const char *resource, const char *kind,
    const char *ns, const char *name, const char *lock_type,
    const struct lease *ours)
{
	struct tool_answer	 a;
	struct lease		 rec;
	struct doctor_other	 o = { kind, ns, name, &rec };
	char			*path, *ens, *ename, err[300];

	ens = tool_escape(ns);
	ename = tool_escape(name);
	xasprintf(&path, "/api/v1/namespaces/%s/%s/%s", ens, resource, ename);
	free(ens);
	free(ename);
	if (doctor_get(d, path, "get", &a) == -1)
		return;
	memset(&rec, 0, sizeof(rec));
	if (a.res.status == 404)
		doctor_add(&d->rep, DOCTOR_OK, "split", "no %s %s/%s beside "
		    "the Lease", resource, ns, name);
	else if (a.res.status != 200) {
		doctor_answer_text(&a, err, sizeof(err));
		doctor_add(&d->rep, DOCTOR_SKIP, "split", "%s %s/%s not "
		    "checked: %s", resource, ns, name, err);
	} else if (legacy_decode(kind, a.body, a.len, &rec, err,
	    sizeof(err)) == -1)
		doctor_add(&d->rep, DOCTOR_SKIP, "split", "%s %s/%s: %s",
		    resource, ns, name, err);
	else if (strcmp(rec.holder, LEGACY_UNKNOWN_LEADER) == 0)
		doctor_add(&d->rep, DOCTOR_OK, "split", "%s %s/%s carries no "
		    "leader record", resource, ns, name);
	else
		doctor_judge_other(&d->rep, &o, lock_type, ours,
		    doctor_now_us(d));
	tool_answer_free(&a);
}

void
doctor_same_name(struct doctor_run *d, const char *ns, const char *name,
    const char *lock_type, const struct lease *ours)
{
	same_leases(d, ns, name, lock_type, ours);
	same_legacy(d, "endpoints", "Endpoints", ns, name, lock_type, ours);
	same_legacy(d, "configmaps", "ConfigMap", ns, name, lock_type, ours);
}
