/*
 * endpoints.h -- the leader's endpoints (actions.endpoints): keeps the
 * EndpointSlice "<service>-leader" of a selectorless Service naming this
 * pod's IP while it leads, and with actions.endpoints.legacy the core/v1
 * Endpoints object of the Service too, through a Kubernetes client of its
 * own per object so a slow write never delays a renew of the Lease.
 *
 * Like label.c, the caller says what the object should say (this pod, or
 * no endpoint) and endpoints.c converges on it: one write at a time, the
 * latest wish sent after the one in flight, a failed write retried with
 * backoff (1s doubling to 30s), and every endpoints_set re-asserts it.
 * A write is an unconditional PUT of the whole object (only the Lease
 * holder writes it, so the last writer is right and nothing needs to be
 * read first); a 404 creates it, a 409 on that create (another instance
 * created it meanwhile) PUTs again at once.
 */

#ifndef ENDPOINTS_H
#define ENDPOINTS_H

#include <ev.h>

#include "api/curlev.h"
#include "api/kube.h"
#include "config/config.h"
#include "config/creds.h"

struct endpoints;

/*
 * A keeper of the slice (legacy 0) or of the Endpoints object (legacy 1)
 * for the Service, IP and port in c (borrowed); the namespace is
 * actions.endpoints.namespace, else the lock's.  Requests are bounded by
 * c->request_timeout_ms and carry token (borrowed; it must outlive e).
 * Returns NULL with err on failure.
 */
struct endpoints *endpoints_new(struct ev_loop *loop, struct curlev *cv,
		    const struct kube_creds *creds, struct token *token,
		    const char *user_agent, const struct config *c,
		    int legacy, char *err, size_t errlen);

/*
 * Want the object to name this pod (1) or no endpoint (0); write it.  A 0
 * is ignored unless this instance named itself there (set 1) and has not
 * cleared it since: another leader's endpoint is never cleared.
 */
void		 endpoints_set(struct endpoints *e, int leader);

/*
 * Shutdown: want no endpoint, and call done_cb(arg) once such a write has
 * been answered (successfully or not; its request timeout bounds the
 * wait), or at once if this instance never named itself there.  Later
 * endpoints_set calls are ignored.
 */
void		 endpoints_finish(struct endpoints *e, void (*done_cb)(void *),
		    void *arg);

/*
 * Called with ok 1 when a write naming this pod succeeded, 0 when one
 * failed (the keeper retries it); it may not free e or call into it.
 */
typedef void (*endpoints_result_cb)(int ok, void *arg);

/* Tell cb(ok, arg) how each write naming this pod ends. */
void		 endpoints_set_notify(struct endpoints *e,
		    endpoints_result_cb cb, void *arg);

/* Cancel what runs and free e. */
void		 endpoints_free(struct endpoints *e);

/* Report e's requests to cb(arg) (kube_set_observer). */
void		 endpoints_set_observer(struct endpoints *e, kube_observe_cb cb,
		    void *arg);

#endif /* ENDPOINTS_H */
