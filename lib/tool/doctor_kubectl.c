/*
 * doctor_kubectl.c -- `kubectl leaderd doctor [LEASE]`: the checks an
 * operator runs by hand when nobody leads, from outside the pods, with
 * the kubeconfig's rights.  For each Lease (LEASE, else every Lease of
 * the namespace):
 *
 * - its candidates: the live LeaseCandidates naming it, the pods of -l
 *   SELECTOR, the identities its record names (holderIdentity,
 *   preferredHolder) and its recent holders (its Events' "ID became
 *   leader"), each traced to its pod (the identity, or the host
 *   part of client-go's HOST_UUID); the service accounts those pods run
 *   as are asked about by SubjectAccessReview: get and update on the
 *   Lease, create too while it does not exist;
 * - the Lease judged (doctor_judge_lease): stale, held for life, a ghost
 *   holder, a preferredHolder that is no live candidate, a client-go
 *   holder, a renewTime in the server's future;
 * - the pods its holder, preferredHolder and recent holders name,
 *   whether they exist;
 * - the same name in other namespaces and as an old-style lock.
 *
 * The output and exit status are the in-pod doctor's (doctor.h).
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "codec/lease.h"
#include "codec/leaseview.h"
#include "codec/review.h"
#include "tool/doctor.h"
#include "tool/doctor_int.h"
#include "tool/tool.h"


/* The candidates' pods, by service account. */
struct accounts {
	struct doctor_names	 sa;		/* service account names */
	char			 pods[DOCTOR_NAMES_MAX][400]; /* "a, b" */
};

static void
account_add(struct accounts *acc, const char *sa, const char *pod)
{
	size_t	 used;
	int	 i;

	if ((i = doctor_names_add(&acc->sa, sa)) == -1)
		return;
	used = strlen(acc->pods[i]);
	snprintf(acc->pods[i] + used, sizeof(acc->pods[i]) - used, "%s%s",
	    used > 0 ? ", " : "", pod);
}

static void
pod_cb(const char *name, void *arg)
{
	doctor_names_add(arg, name);
}

/* The pods of the selector, as candidates by name. */
static void
selector_pods(struct doctor_run *d, const char *ns, const char *selector,
    struct doctor_names *ids)
{
	struct tool_answer	 a;
	char			*path, *ens, *esel, err[300];

	ens = tool_escape(ns);
	esel = tool_escape(selector);
	xasprintf(&path, "/api/v1/namespaces/%s/pods?labelSelector=%s", ens,
	    esel);
	free(ens);
	free(esel);
	if (doctor_get(d, path, "list", &a) == -1)
		return;
	if (a.res.status != 200) {
		doctor_answer_text(&a, err, sizeof(err));
		doctor_add(&d->rep, DOCTOR_SKIP, "candidates", "pods of %s not "
		    "listed: %s", selector, err);
	} else if (review_pod_list(a.body, a.len, pod_cb, ids, err,
	    sizeof(err)) == -1)
		doctor_add(&d->rep, DOCTOR_SKIP, "candidates", "pods of %s: "
		    "%s", selector, err);
	tool_answer_free(&a);
}

/* The identities the Lease's Events name as leaders, into ids. */
static void
recent_leaders(struct doctor_run *d, const char *ns, const char *name,
    struct doctor_names *ids)
{
	struct tool_answer	 a;
	char			*path, *ens, *sel, *esel, err[300];

	ens = tool_escape(ns);
	xasprintf(&sel, "involvedObject.kind=Lease,involvedObject.name=%s",
	    name);
	esel = tool_escape(sel);
	xasprintf(&path, "/api/v1/namespaces/%s/events?fieldSelector=%s", ens,
	    esel);
	free(ens);
	free(sel);
	free(esel);
	if (doctor_get(d, path, "list", &a) == -1)
		return;
	if (a.res.status != 200) {
		doctor_answer_text(&a, err, sizeof(err));
		doctor_add(&d->rep, DOCTOR_SKIP, "pods", "the Events of lease "
		    "%s/%s not read (recent holders): %s", ns, name, err);
	} else
		(void)review_event_leaders(a.body, a.len, pod_cb, ids, err,
		    sizeof(err));
	tool_answer_free(&a);
}

/* One Lease, every check. */
static void
doctor_one(struct doctor_run *d, const char *ns, const char *name)
{
	struct tool		*t = d->t;
	struct doctor_lease	 l;
	struct doctor_names	 cands, ids, recent;
	struct accounts		*acc;
	struct lease		 rec;
	struct review_ask	 ask;
	enum doctor_live	 live;
	char			 manager[128], pod[LEASE_HOLDER_MAX];
	char			 sa[LEASE_HOLDER_MAX];
	int			 exists, ncand;
	size_t			 i;

	exists = doctor_read_lease(d, ns, name, &rec, manager,
	    sizeof(manager));
	memset(&cands, 0, sizeof(cands));
	memset(&ids, 0, sizeof(ids));
	ncand = doctor_live_cands(d, ns, name, &cands);
	for (i = 0; i < cands.n; i++)
		doctor_names_add(&ids, cands.v[i]);
	if (t->o.selector != NULL)
		selector_pods(d, ns, t->o.selector, &ids);
	if (exists == 1) {
		doctor_names_add(&ids, rec.holder);
		doctor_names_add(&ids, rec.preferred);
	}
	memset(&recent, 0, sizeof(recent));
	recent_leaders(d, ns, name, &recent);
	for (i = 0; i < recent.n; i++)
		doctor_names_add(&ids, recent.v[i]);

	memset(&l, 0, sizeof(l));
	l.ns = ns;
	l.name = name;
	l.exists = exists;
	l.rec = &rec;
	l.now_us = doctor_now_us(d);
	l.manager = manager;
	acc = xcalloc(1, sizeof(*acc));
	/* Each identity to its pod, each pod to its service account. */
	for (i = 0; i < ids.n; i++) {
		const char	*id = ids.v[i];
		int		 cand = doctor_names_has(&cands, id);

		doctor_identity_pod(id, pod, sizeof(pod));
		sa[0] = '\0';
		live = doctor_pod(d, ns, pod, sa, sizeof(sa));
		if (live == DOCTOR_LIVE_YES && sa[0] != '\0')
			account_add(acc, sa, pod);
		if (exists == 1 && strcmp(id, rec.holder) == 0) {
			doctor_judge_pod(&d->rep, ns, "holder", id, pod, live,
			    cand);
			l.holder_live = cand ? DOCTOR_LIVE_YES : live;
		}
		if (doctor_names_has(&recent, id) && (exists != 1 ||
		    (strcmp(id, rec.holder) != 0 &&
		    strcmp(id, rec.preferred) != 0)))
			doctor_judge_pod(&d->rep, ns, "recent holder", id, pod,
			    live, cand);
		if (exists == 1 && strcmp(id, rec.preferred) == 0) {
			if (strcmp(id, rec.holder) != 0)
				doctor_judge_pod(&d->rep, ns,
				    "preferredHolder", id, pod, live, cand);
			/* A candidate's name is what a handover needs. */
			l.preferred_live = cand ? DOCTOR_LIVE_YES :
			    ncand > 0 && live != DOCTOR_LIVE_NO ?
			    DOCTOR_LIVE_UNKNOWN : live;
		}
	}
	doctor_judge_lease(&d->rep, &l);

	ask.group = "coordination.k8s.io";
	ask.resource = "leases";
	ask.ns = ns;
	if (acc->sa.n == 0)
		doctor_add(&d->rep, DOCTOR_SKIP, "candidates", "lease %s/%s: "
		    "no candidate's pod found (no live LeaseCandidate, no pod "
		    "named by its holder or preferredHolder%s), so no service "
		    "account's access was checked", ns, name, t->o.selector !=
		    NULL ? ", none of the selector's" : "; name them with -l "
		    "SELECTOR");
	for (i = 0; i < acc->sa.n; i++) {
		ask.name = name;
		ask.verb = "get";
		doctor_sa(d, ns, acc->sa.v[i], acc->pods[i], &ask,
		    "to read the Lease");
		ask.verb = "update";
		doctor_sa(d, ns, acc->sa.v[i], acc->pods[i], &ask,
		    "to renew the Lease and take it over");
		if (exists == 0) {
			ask.verb = "create";
			ask.name = "";
			doctor_sa(d, ns, acc->sa.v[i], acc->pods[i], &ask,
			    "to create the Lease");
		}
	}
	free(acc);
	doctor_same_name(d, ns, name, NULL, exists == 1 ? &rec : NULL);
}

struct names_cb {
	struct doctor_names	*names;
	char			 (*ns)[LEASE_HOLDER_MAX];
	unsigned		 more;
};

static void
list_cb(const struct leaseview *v, void *arg)
{
	struct names_cb	*nc = arg;
	int		 i;

	if (nc->names->n == DOCTOR_NAMES_MAX) {
		nc->more++;
		return;
	}
	i = (int)nc->names->n;
	snprintf(nc->names->v[i], sizeof(nc->names->v[i]), "%s", v->name);
	snprintf(nc->ns[i], sizeof(nc->ns[i]), "%s", v->ns);
	nc->names->n++;
}

int
plugin_doctor(struct tool *t)
{
	struct doctor_run	*d;
	struct tool_answer	 a;
	struct doctor_names	*names;
	char			(*nss)[LEASE_HOLDER_MAX];
	struct names_cb		 nc;
	struct lease_list	 page;
	char			*path, *ens, about[600], err[300];
	size_t			 i;
	int			 ret;

	d = xcalloc(1, sizeof(*d));
	d->t = t;
	doctor_init(&d->rep);
	names = xcalloc(1, sizeof(*names));
	nss = xcalloc(DOCTOR_NAMES_MAX, sizeof(*nss));
	if (t->o.nargs > 0) {
		doctor_names_add(names, t->o.args[0]);
		snprintf(nss[0], sizeof(nss[0]), "%s", t->ns);
		snprintf(about, sizeof(about), "lease %s/%s", t->ns,
		    t->o.args[0]);
	} else {
		if (t->o.all_ns)
			xasprintf(&path, "/apis/coordination.k8s.io/v1/leases?"
			    "limit=%d", DOCTOR_NAMES_MAX);
		else {
			ens = tool_escape(t->ns);
			xasprintf(&path, "/apis/coordination.k8s.io/v1/"
			    "namespaces/%s/leases?limit=%d", ens,
			    DOCTOR_NAMES_MAX);
			free(ens);
		}
		ret = tool_request(t, "GET", path, NULL, NULL, "list",
		    "leases", t->o.all_ns ? "" : t->ns, NULL, 0, &a);
		free(path);
		if (ret != 0)
			goto fail;
		nc.names = names;
		nc.ns = nss;
		nc.more = 0;
		if (leaseview_list(a.body, a.len, list_cb, &nc, &page, err,
		    sizeof(err)) == -1) {
			tool_err(t, "doctor: the list of Leases: %s", err);
			tool_answer_free(&a);
			goto fail;
		}
		tool_answer_free(&a);
		snprintf(about, sizeof(about), "%zu Lease%s %s%s", names->n,
		    names->n == 1 ? "" : "s", t->o.all_ns ? "in every "
		    "namespace" : "in namespace ", t->o.all_ns ? "" : t->ns);
		if (page.cont[0] != '\0' || nc.more > 0)
			doctor_add(&d->rep, DOCTOR_SKIP, "lease", "only the "
			    "first %d Leases were checked: name one (doctor "
			    "LEASE)", DOCTOR_NAMES_MAX);
	}
	/* The first request says whether we may ask at all. */
	if (doctor_call(d, "GET", "/version", NULL, "get", &a) == -1)
		goto fail;
	if (a.res.status == 0 || a.res.status == 401) {
		tool_fail(t, &a.res, "get", "version", "", NULL);
		tool_answer_free(&a);
		goto fail;
	}
	tool_answer_free(&a);
	for (i = 0; i < names->n; i++)
		doctor_one(d, nss[i], names->v[i]);
	doctor_print(&d->rep, about, stdout);
	ret = doctor_exit(&d->rep);
	free(names);
	free(nss);
	free(d);
	return ret;
fail:
	free(names);
	free(nss);
	free(d);
	return DOCTOR_EXIT_PROBLEM;
}
