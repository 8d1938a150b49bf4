/*
 * kube.h -- requests to the Kubernetes API server: URLs, TLS and
 * authentication, per-request timeouts, and the mapping of answers to
 * what the election needs (ok, not found, conflict, failure).
 *
 * kube.c knows nothing of the elector.  It logs nothing either: every
 * answer, including transport errors and the API server's Status message,
 * comes back to the caller in struct kube_result, and the caller decides
 * what is worth a log line.  Bearer tokens never appear in results.
 *
 * kube.c is the request engine, kube_rest.c the requests below, kube_tls.c
 * how a client reaches its server; the bearer token is a struct token
 * (token.h) that all the clients of one daemon share.
 */

#ifndef KUBE_H
#define KUBE_H

#include <stddef.h>
#include <stdint.h>

#include "config/creds.h"

struct curlev;
struct token;

enum kube_outcome {
	KUBE_OK,		/* 200 or 201 */
	KUBE_NOTFOUND,		/* 404 */
	KUBE_CONFLICT,		/* 409 (Conflict or AlreadyExists) */
	KUBE_FAILED		/* transport error, timeout, any other status */
};

struct kube_result {
	enum kube_outcome outcome;
	long		 status;	/* HTTP status; 0 on a transport error */
	const char	*body;		/* borrowed until the callback returns */
	size_t		 len;		/* body length */
	char		 reason[64];	/* Status reason, or a curl error name */
	char		 message[512];	/* Status message, or curl's error text */
	int		 timed_out;	/* the request hit its timeout */
	char		 warning[256];	/* first "Warning:" header, or "" */
	const char	*verb;		/* RBAC's verb of the request ("get",
					   "create", "update", "watch", ...;
					   an Event's "create"), static */
	char		 target[320];	/* what it was on, from its URL:
					   "leases/NAME in namespace NS",
					   "events in namespace NS" */
	int64_t		 date_s;	/* the answer's Date header, Unix
					   seconds; 0 = none */
};

typedef void (*kube_done_cb)(const struct kube_result *res, void *arg);

/*
 * Whether the API server could not answer res: no status (unreachable,
 * a transport error, a timeout), a 5xx, or a 429.  Anything else is its
 * answer, a 401 or 403 included.
 */
int	kube_unanswered(const struct kube_result *res);

struct kube;

/*
 * A client for the server in creds (copied, but for its token), sending
 * the bearer token of token (borrowed: it must outlive k; see token.h)
 * and user_agent on every request.  Returns NULL with err on failure (for
 * instance a tls-server-name with a server URL it cannot rewrite).
 */
struct kube	*kube_new(struct curlev *cv, const struct kube_creds *creds,
	    struct token *token, const char *user_agent, char *err,
	    size_t errlen);

/*
 * The Lease ns/name: GET it, POST body to create it, PUT body over it.
 * The request is bounded by timeout_ms (a connection that timed out is
 * closed, not reused); done_cb runs from the loop with the outcome.  One
 * request per client at a time: starting one while another runs is a
 * programming error.  Returns 0, or -1 if the request could not be
 * started (done_cb will not run).
 */
int	kube_lease_get(struct kube *k, const char *ns, const char *name,
	    uint64_t timeout_ms, kube_done_cb done_cb, void *arg);
int	kube_lease_create(struct kube *k, const char *ns, const char *body,
	    uint64_t timeout_ms, kube_done_cb done_cb, void *arg);
int	kube_lease_update(struct kube *k, const char *ns, const char *name,
	    const char *body, uint64_t timeout_ms, kube_done_cb done_cb,
	    void *arg);

/*
 * The core/v1 object ns/name of the given resource ("endpoints" or
 * "configmaps", under /api/v1/namespaces/ns/; "pods" for a GET only):
 * GET it, POST body to create it, PUT body over it; same rules as the
 * Lease requests.
 */
int	kube_core_get(struct kube *k, const char *resource, const char *ns,
	    const char *name, uint64_t timeout_ms, kube_done_cb done_cb,
	    void *arg);
int	kube_core_create(struct kube *k, const char *resource, const char *ns,
	    const char *body, uint64_t timeout_ms, kube_done_cb done_cb,
	    void *arg);
int	kube_core_update(struct kube *k, const char *resource, const char *ns,
	    const char *name, const char *body, uint64_t timeout_ms,
	    kube_done_cb done_cb, void *arg);

/*
 * POST body (a core/v1 Event) to the events of namespace ns; same rules
 * as the Lease requests.
 */
int	kube_event_create(struct kube *k, const char *ns, const char *body,
	    uint64_t timeout_ms, kube_done_cb done_cb, void *arg);

/*
 * Called with each complete line of a watch stream (without its newline),
 * and once with line NULL when the stream opens (a 200), from inside
 * libcurl's callbacks: it must not start or cancel requests.  Return 0,
 * or -1 to abort the stream (done_cb then reports a failure).
 */
typedef int (*kube_line_cb)(const char *line, size_t len, void *arg);

/*
 * Watch the Lease ns/name from resourceVersion rv ("" for "now"): a GET
 * on the collection with watch=1, a fieldSelector on the name (or, name
 * NULL, the Leases of ns matching the label selector labels: a shard
 * group's),
 * allowWatchBookmarks and timeoutSeconds=timeout_s, so the API server
 * ends the stream after timeout_s.  While the answer is 200, each line
 * goes to line_cb; any other status is collected as a body and reported
 * by done_cb like any request.  done_cb runs when the stream ends: KUBE_OK
 * for a clean end, KUBE_FAILED for a cut or for limit_ms passing (the
 * bound on the whole stream, which also catches a silent one).  Use a
 * client of its own: it is busy for as long as the stream lasts.
 */
int	kube_lease_watch(struct kube *k, const char *ns, const char *name,
	    const char *labels, const char *rv, unsigned timeout_s, uint64_t limit_ms,
	    kube_line_cb line_cb, kube_done_cb done_cb, void *arg);

/*
 * List one page of the Leases of ns whose labels match selector (a label
 * selector, "leaderd.io/shard-group=NAME"), at most limit of them (0: no
 * limit).  cont NULL asks for the first page from the API server's cache
 * (resourceVersion=0: a shard group's view of its members need not be
 * read from etcd; a cache that keeps no pages answers every item at
 * once); cont "" for the first page from storage, where limit holds;
 * otherwise for the page after that continue token.  The LeaseList is
 * res->body, its metadata.continue the next page's token.
 */
int	kube_lease_list(struct kube *k, const char *ns, const char *selector,
	    unsigned limit, const char *cont, uint64_t timeout_ms,
	    kube_done_cb done_cb, void *arg);

/*
 * Delete the Lease ns/name if its resourceVersion is still rv (the
 * DeleteOptions' precondition, so a Lease written since is kept).
 */
int	kube_lease_delete(struct kube *k, const char *ns, const char *name,
	    const char *rv, uint64_t timeout_ms, kube_done_cb done_cb,
	    void *arg);

/*
 * The leader's EndpointSlice (actions.endpoints): POST body into the
 * discovery.k8s.io/v1 endpointslices of ns, or PUT it onto ns/name; same
 * rules as the Lease requests.
 */
int	kube_slice_create(struct kube *k, const char *ns, const char *body,
	    uint64_t timeout_ms, kube_done_cb done_cb, void *arg);
int	kube_slice_update(struct kube *k, const char *ns, const char *name,
	    const char *body, uint64_t timeout_ms, kube_done_cb done_cb,
	    void *arg);

/*
 * PATCH body, a JSON merge patch, onto the pod ns/name (the leader
 * label); same rules as the Lease requests.  The answer is the Pod.
 */
int	kube_pod_patch(struct kube *k, const char *ns, const char *name,
	    const char *body, uint64_t timeout_ms, kube_done_cb done_cb,
	    void *arg);

/*
 * The LeaseCandidates (coordination.k8s.io/v1beta1) of namespace ns:
 * list them all, GET ns/name, POST body to create one, PUT body over
 * ns/name, DELETE ns/name; same rules as the Lease requests.  A 404 on
 * the list or the create means the API is not served (the
 * CoordinatedLeaderElection gate is off).
 */
int	kube_cand_list(struct kube *k, const char *ns, uint64_t timeout_ms,
	    kube_done_cb done_cb, void *arg);
int	kube_cand_get(struct kube *k, const char *ns, const char *name,
	    uint64_t timeout_ms, kube_done_cb done_cb, void *arg);
int	kube_cand_create(struct kube *k, const char *ns, const char *body,
	    uint64_t timeout_ms, kube_done_cb done_cb, void *arg);
int	kube_cand_update(struct kube *k, const char *ns, const char *name,
	    const char *body, uint64_t timeout_ms, kube_done_cb done_cb,
	    void *arg);
int	kube_cand_delete(struct kube *k, const char *ns, const char *name,
	    uint64_t timeout_ms, kube_done_cb done_cb, void *arg);

/*
 * Any other request, for the operator's tools (lib/tool/): method on
 * path, from the server's root ("/apis/coordination.k8s.io/v1/leases?
 * limit=500"), its segments and query already escaped, with body (NULL:
 * none) of media type ctype (NULL: application/json); same rules as the
 * Lease requests.  verb names it for the observer ("list", "patch").
 */
int	kube_call(struct kube *k, const char *method, const char *path,
	    const char *body, const char *ctype, const char *verb,
	    uint64_t timeout_ms, kube_done_cb done_cb, void *arg);

/*
 * A GET on path whose answer is a stream of lines (a watch), as
 * kube_lease_watch: lines to line_cb while the answer is 200, the whole
 * stream bounded by limit_ms.
 */
int	kube_call_stream(struct kube *k, const char *path, uint64_t limit_ms,
	    kube_line_cb line_cb, kube_done_cb done_cb, void *arg);

/*
 * Called as each request ends, before its done_cb, with its verb
 * ("get", "create", "update", "watch", "patch" or "event"), its HTTP
 * status (0 for a transport error or a timeout) and how long it took,
 * for metrics.  A cancelled request is not reported.
 */
typedef void (*kube_observe_cb)(const char *verb, long status,
	    double seconds, void *arg);

/* Report every request of k to cb(arg) from now on (NULL: none). */
void	kube_set_observer(struct kube *k, kube_observe_cb cb, void *arg);

/*
 * From now on, every request of k opens a connection of its own and
 * closes it when answered, for a client whose requests are rare: the
 * loop's clients share one pool of idle connections, where a kept-alive
 * one of k would serve the next renew, and libcurl re-sends a request
 * that meets a closed kept-alive connection on the next idle one, so
 * each spare connection is one more silent try of a renew.
 */
void	kube_set_one_shot(struct kube *k);

/* Abort the running request, if any; its done_cb does not run. */
void	kube_cancel(struct kube *k);

/* Whether a request is running. */
int	kube_busy(const struct kube *k);

/*
 * Re-read the token file on the next request of any client that shares
 * k's token (token_stale; kube.c does it by itself after a 401).
 */
void	kube_token_stale(struct kube *k);

/* Cancel what runs and free k. */
void	kube_free(struct kube *k);

#endif /* KUBE_H */
