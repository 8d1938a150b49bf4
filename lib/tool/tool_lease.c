/*
 * tool_lease.c -- the Leases and LeaseCandidates the tools read and
 * write: a list of every Lease (one namespace or all, a label selector,
 * page by page), one Lease, the candidates, and the paths of their
 * collections.  Every failure is one line (tool_fail).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "codec/leaseview.h"
#include "tool/tool.h"
#include "tool/tool_lease.h"

#define LEASES_V1	"/apis/coordination.k8s.io/v1"
#define CANDS_V1BETA1	"/apis/coordination.k8s.io/v1beta1"

char *
tool_collection(const char *group, const char *ns, const char *resource)
{
	char	*ens, *p;

	if (ns == NULL) {
		xasprintf(&p, "%s/%s", group, resource);
		return p;
	}
	ens = tool_escape(ns);
	xasprintf(&p, "%s/namespaces/%s/%s", group, ens, resource);
	free(ens);
	return p;
}

char *
tool_lease_path(const char *ns, const char *name)
{
	char	*coll, *ename, *p;

	coll = tool_collection(LEASES_V1, ns, "leases");
	ename = tool_escape(name);
	xasprintf(&p, "%s/%s", coll, ename);
	free(coll);
	free(ename);
	return p;
}

char *
tool_leases_path(const char *ns, const char *query)
{
	char	*coll, *p;

	coll = tool_collection(LEASES_V1, ns, "leases");
	xasprintf(&p, "%s%s%s", coll, query[0] != '\0' ? "?" : "", query);
	free(coll);
	return p;
}

int
tool_list_leases(struct tool *t, const char *ns, const char *selector,
    void (*cb)(const struct leaseview *, void *), void *arg, char *rv,
    size_t rvlen)
{
	struct tool_answer	 a;
	struct lease_list	 page;
	char			 query[4096], err[256], *sel = NULL, *cont;
	char			*path;
	unsigned		 skipped = 0;
	char			 why[sizeof(page.why)] = "";
	int			 first = 1;

	if (selector != NULL)
		sel = tool_escape(selector);
	page.cont[0] = '\0';
	while (first || page.cont[0] != '\0') {
		cont = page.cont[0] != '\0' ? tool_escape(page.cont) : NULL;
		snprintf(query, sizeof(query), "limit=%d%s%s%s%s", TOOL_PAGE,
		    sel != NULL ? "&labelSelector=" : "", sel != NULL ? sel :
		    "", cont != NULL ? "&continue=" : "", cont != NULL ?
		    cont : "");
		free(cont);
		path = tool_leases_path(ns, query);
		if (tool_request(t, "GET", path, NULL, NULL, "list", "leases",
		    ns != NULL ? ns : "", NULL, 0, &a) == -1) {
			free(path);
			free(sel);
			return -1;
		}
		free(path);
		if (leaseview_list(a.body, a.len, cb, arg, &page, err,
		    sizeof(err)) == -1) {
			tool_err(t, "list leases: the answer is not a "
			    "LeaseList: %s", err);
			tool_answer_free(&a);
			free(sel);
			return -1;
		}
		tool_answer_free(&a);
		if (first && rv != NULL)
			snprintf(rv, rvlen, "%s", page.rv);
		if (page.skipped > 0 && why[0] == '\0')
			snprintf(why, sizeof(why), "%s", page.why);
		skipped += page.skipped;
		first = 0;
	}
	free(sel);
	if (skipped > 0)
		tool_err(t, "%u Lease%s could not be read and %s left out "
		    "(%s)", skipped, skipped == 1 ? "" : "s", skipped == 1 ?
		    "is" : "are", why);
	return 0;
}

int
tool_get_lease(struct tool *t, const char *ns, const char *name,
    struct leaseview *v)
{
	struct tool_answer	 a;
	char			*path, err[256];
	int			 rc;

	path = tool_lease_path(ns, name);
	rc = tool_request(t, "GET", path, NULL, NULL, "get", "leases", ns,
	    name, 0, &a);
	free(path);
	if (rc != 0)
		return -1;
	if ((rc = leaseview_one(a.body, a.len, v, err, sizeof(err))) == -1)
		tool_err(t, "Lease \"%s\" in namespace \"%s\" cannot be read: "
		    "%s", name, ns, err);
	tool_answer_free(&a);
	return rc;
}

int
tool_list_cands(struct tool *t, const char *ns, int warn_forbidden,
    void (*cb)(const char *, const struct lease_cand *, void *), void *arg)
{
	struct tool_answer	 a;
	char			*path, err[256];
	unsigned		 skipped;
	int			 rc;

	path = tool_collection(CANDS_V1BETA1, ns, "leasecandidates");
	if (tool_call(t, "GET", path, NULL, NULL, "list", &a) == -1) {
		free(path);
		return -1;
	}
	free(path);
	/* Not served: the CoordinatedLeaderElection gate is off. */
	if (a.res.status == 404) {
		tool_answer_free(&a);
		return 1;
	}
	/* Refused: the counts are unknown, the rest can still be shown. */
	if (a.res.status == 403 && warn_forbidden) {
		tool_err(t, "warning: not allowed to list leasecandidates%s%s "
		    "(403): CANDIDATES is unknown", ns != NULL ?
		    " in namespace " : "", ns != NULL ? ns : "");
		tool_answer_free(&a);
		return 2;
	}
	if (a.res.outcome != KUBE_OK) {
		tool_fail(t, &a.res, "list", "leasecandidates",
		    ns != NULL ? ns : "", NULL);
		tool_answer_free(&a);
		return -1;
	}
	rc = leaseview_cands(a.body, a.len, cb, arg, &skipped, err,
	    sizeof(err));
	if (rc == -1)
		tool_err(t, "list leasecandidates: the answer is not a list: "
		    "%s", err);
	tool_answer_free(&a);
	return rc;
}

void
tool_expiry(const struct lease *rec, int64_t now_us, char *buf, size_t len)
{
	int64_t	 end_us;

	if (rec->renew_us == 0 || rec->duration_s <= 0) {
		snprintf(buf, len, "%s", "");
		return;
	}
	end_us = rec->renew_us + (int64_t)rec->duration_s * 1000000;
	if (end_us <= now_us)
		snprintf(buf, len, "expired");
	else
		tool_age(end_us - now_us, buf, len);
}
