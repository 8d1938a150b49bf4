/*
 * label.h -- the leader pod label (actions.label): keeps
 * "<key>: leader|standby" on this pod by JSON merge PATCH on pods/NAME,
 * through a Kubernetes client of its own so a slow PATCH never delays a
 * renew of the Lease.
 *
 * The caller says what the label should be; label.c converges on it: one
 * PATCH at a time, the latest wish sent after the one in flight, a
 * failed PATCH retried with backoff (1s doubling to 30s), and every
 * label_set re-asserts the value even when nothing changed (a label
 * edited by hand is put back at the next renew).
 */

#ifndef LABEL_H
#define LABEL_H

#include <stdint.h>

#include <ev.h>

#include "api/curlev.h"
#include "api/kube.h"
#include "config/config.h"
#include "config/creds.h"

struct label;

/*
 * A label keeper for the pod and key in c (borrowed); the namespace is
 * actions.label.namespace, else the lock's.  Requests are bounded by
 * c->request_timeout_ms and carry token (borrowed, shared with the
 * daemon's other clients; it must outlive l).  Returns NULL with err on
 * failure.
 */
struct label	*label_new(struct ev_loop *loop, struct curlev *cv,
		    const struct kube_creds *creds, struct token *token,
		    const char *user_agent, const struct config *c,
		    char *err, size_t errlen);

/* Want the label to say leader (1) or standby (0); PATCH it (again). */
void		 label_set(struct label *l, int leader);

/*
 * Shutdown: want standby, and call done_cb(arg) once a standby PATCH has
 * been answered (successfully or not: the release must not wait on a
 * dead API server; its own request timeout bounds the wait).  Later
 * label_set calls are ignored.
 */
void		 label_finish(struct label *l, void (*done_cb)(void *),
		    void *arg);

/* Cancel what runs and free l. */
void		 label_free(struct label *l);

/* Report l's PATCH requests to cb(arg) (kube_set_observer). */
void		 label_set_observer(struct label *l, kube_observe_cb cb,
		    void *arg);

#endif /* LABEL_H */
