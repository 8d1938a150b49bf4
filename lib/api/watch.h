/*
 * watch.h -- one watch on the Lease (or on a label selector's Leases): a streamed GET with watch=1 kept
 * open on its own API client, events decoded as they arrive and handed
 * to the daemon from the loop, and the reconnect policy (jittered
 * backoff, 410 Gone, a silent stream, a watch the server refuses).
 *
 * The watch only wakes the elector sooner; it never decides anything.
 * Safety comes from the elector's clock rules whether or not events
 * arrive (DESIGN.md "Time").  watch.c knows nothing of the elector.
 */

#ifndef WATCH_H
#define WATCH_H

#include <stdint.h>
#include <ev.h>

#include "api/kube.h"
#include "codec/lease.h"

struct watch_cbs {
	/*
	 * ADDED or MODIFIED: the record and its object as JSON (the caller
	 * takes object and frees it).
	 */
	void	(*record_cb)(const struct lease *rec, char *object, void *arg);
	/*
	 * DELETED, or 410 Gone: read the Lease again (a collection: list
	 * it again) and call watch_seen.
	 */
	void	(*reread_cb)(void *arg);
	/* The stream went up (1) or down (0). */
	void	(*health_cb)(int healthy, void *arg);
	/*
	 * A collection (watch_new_labels) instead of record_cb: the Lease
	 * name's newest record and object (taken), object NULL for DELETED.
	 */
	void	(*item_cb)(const char *name, const struct lease *rec,
		    char *object, void *arg);
};

struct watch;

/*
 * A watch on the Lease ns/name through k (taken: freed by watch_free),
 * each stream lasting timeout_ms (whole seconds) and given up when it
 * has run timeout_ms + slack_ms.  Nothing starts before watch_start.
 */
struct watch	*watch_new(struct ev_loop *loop, struct kube *k,
		    const char *ns, const char *name, uint64_t timeout_ms,
		    uint64_t slack_ms, const struct watch_cbs *cbs, void *arg);

/*
 * The same for the Leases of ns matching the label selector labels,
 * events to cbs->item_cb.
 */
struct watch	*watch_new_labels(struct ev_loop *loop, struct kube *k,
		    const char *ns, const char *labels, uint64_t timeout_ms,
		    uint64_t slack_ms, const struct watch_cbs *cbs, void *arg);

/* Open the first stream, from resourceVersion rv ("" for now). */
void	watch_start(struct watch *w, const char *rv);

/*
 * The caller read or wrote the Lease at resourceVersion rv: a stream
 * that has to start again starts from the newest version known.
 */
void	watch_seen(struct watch *w, const char *rv);

/* Whether a stream is open and answering 200. */
int	watch_healthy(const struct watch *w);

/*
 * Why the last stream failed ("watch leases/NAME in namespace NS: 401
 * Unauthorized: ..."), "" if none has; borrowed until the next stream
 * ends.
 */
const char *watch_error(const struct watch *w);

/*
 * Whether rv is newer than than: apiobj_rv_newer (codec/apiobj.h), the
 * one rule, under the name the watch's callers know.
 */
int	watch_rv_newer(const char *rv, const char *than);

/* Stop the stream and free w and its client. */
void	watch_free(struct watch *w);

#endif /* WATCH_H */
