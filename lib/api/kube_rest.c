/*
 * kube_rest.c -- the requests leaderd makes, as URLs and methods on the
 * request engine (kube_request, kube.c): the Lease (GET, POST, PUT and
 * its watch), the core/v1 Endpoints and ConfigMap locks, the Events, the
 * leader's EndpointSlice (POST, PUT) and the merge PATCH of the pod
 * label; and any request on a path the operator's tools build
 * (kube_call, kube_call_stream).  Path segments are URL-escaped here,
 * but for those.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kube_int.h"
#include "base/xmalloc.h"

/*
 * The URL of resource ns/name under the API path group ("/api/v1",
 * "/apis/coordination.k8s.io/v1"), or of its collection (name NULL).
 */
static char *
object_url(struct kube *k, const char *group, const char *resource,
    const char *ns, const char *name)
{
	char	*ens, *ename = NULL, *url = NULL;

	if ((ens = curl_easy_escape(k->easy, ns, 0)) == NULL)
		return NULL;
	if (name != NULL &&
	    (ename = curl_easy_escape(k->easy, name, 0)) == NULL) {
		curl_free(ens);
		return NULL;
	}
	xasprintf(&url, "%s%s/namespaces/%s/%s%s%s", k->server, group, ens,
	    resource, name != NULL ? "/" : "", name != NULL ? ename : "");
	curl_free(ens);
	curl_free(ename);
	return url;
}

/* The URL of the Lease ns/name, or of the Lease collection (name NULL). */
static char *
lease_url(struct kube *k, const char *ns, const char *name)
{
	return object_url(k, "/apis/coordination.k8s.io/v1", "leases", ns,
	    name);
}

int
kube_lease_get(struct kube *k, const char *ns, const char *name,
    uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	return kube_request(k, "GET", lease_url(k, ns, name), NULL,
	    timeout_ms, cb, arg);
}

int
kube_lease_create(struct kube *k, const char *ns, const char *body,
    uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	return kube_request(k, "POST", lease_url(k, ns, NULL), body,
	    timeout_ms, cb, arg);
}

int
kube_event_create(struct kube *k, const char *ns, const char *body,
    uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	char	*ens, *url;

	if ((ens = curl_easy_escape(k->easy, ns, 0)) == NULL)
		return -1;
	xasprintf(&url, "%s/api/v1/namespaces/%s/events", k->server, ens);
	curl_free(ens);
	if (!k->busy)
		k->verb = "event";
	return kube_request(k, "POST", url, body, timeout_ms, cb, arg);
}

int
kube_lease_update(struct kube *k, const char *ns, const char *name,
    const char *body, uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	return kube_request(k, "PUT", lease_url(k, ns, name), body,
	    timeout_ms, cb, arg);
}

int
kube_lease_watch(struct kube *k, const char *ns, const char *name,
    const char *labels, const char *rv, unsigned timeout_s,
    uint64_t limit_ms, kube_line_cb line_cb, kube_done_cb cb, void *arg)
{
	char	*base, *sel, *erv = NULL, *url;
	int	 rc;

	if ((base = lease_url(k, ns, NULL)) == NULL)
		return -1;
	if (name != NULL)
		xasprintf(&sel, "metadata.name=%s", name);
	else
		sel = xstrdup(labels);
	url = curl_easy_escape(k->easy, sel, 0);
	free(sel);
	if (url == NULL || (rv[0] != '\0' &&
	    (erv = curl_easy_escape(k->easy, rv, 0)) == NULL)) {
		curl_free(url);
		free(base);
		return -1;
	}
	xasprintf(&sel, "%s?watch=1&%s=%s&allowWatchBookmarks=true"
	    "&timeoutSeconds=%u%s%s", base, name != NULL ? "fieldSelector" :
	    "labelSelector", url, timeout_s,
	    erv != NULL ? "&resourceVersion=" : "", erv != NULL ? erv : "");
	curl_free(url);
	curl_free(erv);
	free(base);
	if (!k->busy)
		k->verb = "watch";
	if ((rc = kube_request(k, "GET", sel, NULL, limit_ms, cb, arg)) == 0)
		k->line_cb = line_cb;
	return rc;
}

int
kube_lease_list(struct kube *k, const char *ns, const char *selector,
    unsigned limit, const char *cont, uint64_t timeout_ms, kube_done_cb cb,
    void *arg)
{
	char	*base, *esel, *econt = NULL, *url;
	char	 lim[32] = "";

	if ((base = lease_url(k, ns, NULL)) == NULL)
		return -1;
	if ((esel = curl_easy_escape(k->easy, selector, 0)) == NULL ||
	    (cont != NULL && cont[0] != '\0' &&
	    (econt = curl_easy_escape(k->easy, cont, 0)) == NULL)) {
		curl_free(esel);
		free(base);
		return -1;
	}
	if (limit > 0)
		snprintf(lim, sizeof(lim), "&limit=%u", limit);
	/* A continue token carries its version: none beside it. */
	xasprintf(&url, "%s?labelSelector=%s%s%s%s%s", base, esel, lim,
	    econt != NULL ? "&continue=" : "", econt != NULL ? econt : "",
	    cont == NULL ? "&resourceVersion=0" : "");
	curl_free(econt);
	curl_free(esel);
	free(base);
	if (!k->busy)
		k->verb = "list";
	return kube_request(k, "GET", url, NULL, timeout_ms, cb, arg);
}

int
kube_lease_delete(struct kube *k, const char *ns, const char *name,
    const char *rv, uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	char	*body;
	int	 rc;

	/* rv is a resourceVersion the server gave: digits, no quoting. */
	xasprintf(&body, "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\","
	    "\"preconditions\":{\"resourceVersion\":\"%s\"}}", rv);
	if (!k->busy)
		k->verb = "delete";
	rc = kube_request(k, "DELETE", lease_url(k, ns, name), body,
	    timeout_ms, cb, arg);
	free(body);
	return rc;
}

/*
 * Pods: a JSON merge patch (RFC 7386) on pods/NAME, for the leader
 * label.  Its own function so the Content-Type stays with it.
 */
int
kube_pod_patch(struct kube *k, const char *ns, const char *name,
    const char *body, uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	char	*ens, *ename, *url;
	int	 rv;

	ens = curl_easy_escape(k->easy, ns, 0);
	ename = curl_easy_escape(k->easy, name, 0);
	if (ens == NULL || ename == NULL) {
		curl_free(ens);
		curl_free(ename);
		return -1;
	}
	xasprintf(&url, "%s/api/v1/namespaces/%s/pods/%s", k->server, ens,
	    ename);
	curl_free(ens);
	curl_free(ename);
	k->ctype = "Content-Type: application/merge-patch+json";
	rv = kube_request(k, "PATCH", url, body, timeout_ms, cb, arg);
	k->ctype = NULL;
	return rv;
}

/* The URL of core/v1 resource ns/name, or of the collection (name NULL). */
static char *
core_url(struct kube *k, const char *resource, const char *ns,
    const char *name)
{
	return object_url(k, "/api/v1", resource, ns, name);
}

int
kube_core_get(struct kube *k, const char *resource, const char *ns,
    const char *name, uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	return kube_request(k, "GET", core_url(k, resource, ns, name), NULL,
	    timeout_ms, cb, arg);
}

int
kube_core_create(struct kube *k, const char *resource, const char *ns,
    const char *body, uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	return kube_request(k, "POST", core_url(k, resource, ns, NULL), body,
	    timeout_ms, cb, arg);
}

int
kube_core_update(struct kube *k, const char *resource, const char *ns,
    const char *name, const char *body, uint64_t timeout_ms,
    kube_done_cb cb, void *arg)
{
	return kube_request(k, "PUT", core_url(k, resource, ns, name), body,
	    timeout_ms, cb, arg);
}

/* The URL of EndpointSlice ns/name, or of the collection (name NULL). */
static char *
slice_url(struct kube *k, const char *ns, const char *name)
{
	return object_url(k, "/apis/discovery.k8s.io/v1", "endpointslices",
	    ns, name);
}

int
kube_slice_create(struct kube *k, const char *ns, const char *body,
    uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	return kube_request(k, "POST", slice_url(k, ns, NULL), body,
	    timeout_ms, cb, arg);
}

int
kube_slice_update(struct kube *k, const char *ns, const char *name,
    const char *body, uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	return kube_request(k, "PUT", slice_url(k, ns, name), body,
	    timeout_ms, cb, arg);
}

/*
 * The LeaseCandidates of coordinated election (coordination.k8s.io/
 * v1beta1), ns/name, or the collection (name NULL).
 */
static char *
cand_url(struct kube *k, const char *ns, const char *name)
{
	return object_url(k, "/apis/coordination.k8s.io/v1beta1",
	    "leasecandidates", ns, name);
}

int
kube_cand_list(struct kube *k, const char *ns, uint64_t timeout_ms,
    kube_done_cb cb, void *arg)
{
	if (!k->busy)
		k->verb = "list";
	return kube_request(k, "GET", cand_url(k, ns, NULL), NULL,
	    timeout_ms, cb, arg);
}

int
kube_cand_get(struct kube *k, const char *ns, const char *name,
    uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	return kube_request(k, "GET", cand_url(k, ns, name), NULL,
	    timeout_ms, cb, arg);
}

int
kube_cand_create(struct kube *k, const char *ns, const char *body,
    uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	return kube_request(k, "POST", cand_url(k, ns, NULL), body,
	    timeout_ms, cb, arg);
}

int
kube_cand_update(struct kube *k, const char *ns, const char *name,
    const char *body, uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	return kube_request(k, "PUT", cand_url(k, ns, name), body,
	    timeout_ms, cb, arg);
}

int
kube_cand_delete(struct kube *k, const char *ns, const char *name,
    uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	return kube_request(k, "DELETE", cand_url(k, ns, name), NULL,
	    timeout_ms, cb, arg);
}

int
kube_call(struct kube *k, const char *method, const char *path,
    const char *body, const char *ctype, const char *verb,
    uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	char	*url;
	int	 rv;

	xasprintf(&url, "%s%s", k->server, path);
	if (ctype != NULL) {
		snprintf(k->ctype_hdr, sizeof(k->ctype_hdr),
		    "Content-Type: %s", ctype);
		k->ctype = k->ctype_hdr;
	}
	if (!k->busy && verb != NULL)
		k->verb = verb;
	rv = kube_request(k, method, url, body, timeout_ms, cb, arg);
	k->ctype = NULL;
	return rv;
}

int
kube_call_stream(struct kube *k, const char *path, uint64_t limit_ms,
    kube_line_cb line_cb, kube_done_cb cb, void *arg)
{
	char	*url;
	int	 rc;

	xasprintf(&url, "%s%s", k->server, path);
	if (!k->busy)
		k->verb = "watch";
	if ((rc = kube_request(k, "GET", url, NULL, limit_ms, cb, arg)) == 0)
		k->line_cb = line_cb;
	return rc;
}

/* Copy the path segment at p (up to '/', '?' or the end) into buf. */
static const char *
segment(const char *p, char *buf, size_t len)
{
	size_t	 n = strcspn(p, "/?");

	snprintf(buf, len, "%.*s", (int)n, p);
	return p + n;
}

void
kube_url_target(const char *url, char *buf, size_t len)
{
	const char	*p;
	char		 ns[128], res[64], name[128];

	buf[0] = '\0';
	if ((p = strstr(url, "/namespaces/")) == NULL)
		return;
	p = segment(p + 12, ns, sizeof(ns));
	res[0] = name[0] = '\0';
	if (*p == '/')
		p = segment(p + 1, res, sizeof(res));
	if (*p == '/')
		segment(p + 1, name, sizeof(name));
	snprintf(buf, len, "%s%s%s in namespace %s", res, name[0] != '\0' ?
	    "/" : "", name, ns);
}
