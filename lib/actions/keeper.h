/*
 * keeper.h -- keep one object on the API server in the state the claim
 * says: leader (1) or not (0).  The pod label (label.c) and the leader's
 * endpoints (endpoints.c) are keepers; each says how to write its object
 * and how to name it in the log, and keeper.c does the rest.
 *
 * The caller says what the state should be; the keeper converges on it
 * through a Kubernetes client of its own: one write at a time, the latest
 * wish sent after the one in flight, a failed write retried with backoff
 * (1s doubling to 30s), every keeper_set re-asserting the state, and each
 * error logged once until it changes.
 */

#ifndef KEEPER_H
#define KEEPER_H

#include <stddef.h>

#include <ev.h>

#include "api/curlev.h"
#include "api/kube.h"
#include "config/creds.h"

struct keeper;

/* What a keeper's log line describes. */
enum keeper_say {
	KEEPER_WISH,		/* the wanted state changed */
	KEEPER_WRITE,		/* a write (the line goes on "failed: ...") */
	KEEPER_WRITTEN		/* a write succeeded */
};

/* The part of a keeper that is its object's own; obj is its argument. */
struct keeper_ops {
	/*
	 * Start the write of state (1 or 0) on kube, a create if create is
	 * 1, else an update; its answer goes to cb(res, cbarg).  Returns 0,
	 * or -1 if the request could not be started.
	 */
	int	(*send)(void *obj, struct kube *kube, int state, int create,
		    kube_done_cb cb, void *cbarg);
	/*
	 * The text of a log line about state, without its level (say
	 * what), into buf.
	 */
	void	(*describe)(void *obj, enum keeper_say what, int state,
		    char *buf, size_t len);
	/*
	 * Optional: the answer res to a write (a create if created) calls
	 * for another at once: 1 a create, 0 an update; -1 it does not.
	 */
	int	(*redo)(void *obj, const struct kube_result *res, int created);
	/* Optional: a write of sent succeeded, want being the wish now. */
	void	(*written)(void *obj, int sent, int want);
	/*
	 * Optional: a write of sent failed (after redo; it is retried
	 * unless finishing).  It may not call back into the keeper.
	 */
	void	(*failed)(void *obj, int sent);
};

/*
 * A keeper of the object that ops (borrowed) and obj describe, wanting
 * state 0 until told otherwise.  Its client reaches the server of creds
 * with token (both borrowed; they must outlive the keeper).  needs is what
 * the service account needs, named in the log after a 403.  Returns NULL
 * with err on failure.
 */
struct keeper	*keeper_new(struct ev_loop *loop, struct curlev *cv,
		    const struct kube_creds *creds, struct token *token,
		    const char *user_agent, const struct keeper_ops *ops,
		    void *obj, const char *needs, char *err, size_t errlen);

/* Want state 1 or 0; write it (again).  Ignored once finishing. */
void		 keeper_set(struct keeper *k, int state);

/* Whether keeper_finish was called. */
int		 keeper_finishing(const struct keeper *k);

/*
 * Shutdown: want state 0, and call done_cb(arg) once a write of 0 has
 * been answered (successfully or not: the release must not wait on a
 * dead API server; the request timeout bounds the wait).  With clear 0
 * (nothing of ours to undo) and no write in flight, done_cb is called at
 * once and nothing is written.  Later keeper_set calls are ignored.
 */
void		 keeper_finish(struct keeper *k, int clear,
		    void (*done_cb)(void *), void *arg);

/* Report k's requests to cb(arg) (kube_set_observer). */
void		 keeper_set_observer(struct keeper *k, kube_observe_cb cb,
		    void *arg);

/* Cancel what runs and free k. */
void		 keeper_free(struct keeper *k);

#endif /* KEEPER_H */
