/*
 * lock.h -- the lock objects between the elector and kube.c, as
 * client-go's resourcelock (ref/clientgo-leaderelection.md 3): Get,
 * Create and Update of a leader-election record on a Lease, on the
 * annotation of an Endpoints or a ConfigMap, or on a MultiLock (a legacy
 * primary object and a Lease as secondary).
 *
 * The elector sees one struct lease whatever the lock; this module is the
 * only one that knows which objects carry it and turns records into
 * object bodies and back (through lease.c and legacy.c).  It logs
 * nothing: answers, including the API server's, come back in struct
 * kube_result as from kube.c.
 */

#ifndef LOCK_H
#define LOCK_H

#include <stddef.h>
#include <stdint.h>

#include "api/kube.h"
#include "codec/lease.h"

/*
 * The answer to one lock operation.  res->outcome is the operation's:
 * KUBE_OK with rec the record read or written (borrowed until the
 * callback returns); otherwise rec is NULL and res is the answer that
 * failed (a body that does not decode is KUBE_FAILED with reason
 * "BadLease" or "BadRecord").  res->warning holds the first Warning
 * header met by any of the operation's requests.
 */
typedef void (*lock_done_cb)(const struct kube_result *res,
	    const struct lease *rec, void *arg);

struct lock;

/*
 * Whether type names a lock: "leases", "endpoints", "configmaps",
 * "endpointsleases" or "configmapsleases".
 */
int	lock_type_valid(const char *type);

/*
 * A lock of the given type on ns/name for the elector named identity,
 * sending its requests through k (borrowed; one request at a time on
 * it).  Returns NULL with err if type is not a lock type.
 */
struct lock *lock_new(struct kube *k, const char *type, const char *ns,
	    const char *name, const char *identity, char *err,
	    size_t errlen);

/*
 * Get the record; create the lock holding rec; update it to rec (over
 * the objects last read or written, with their resourceVersion, so a
 * concurrent writer makes it a conflict).  For a MultiLock, as
 * client-go's: Get reads the primary then the secondary (the primary
 * decides; holders that differ read as a foreign holder, see lock.c; a
 * missing secondary reads as the primary alone); Create and Update write the
 * primary then the secondary (Update creates the secondary if it was
 * missing, and writes over the version last seen otherwise, so a Lease
 * taken meanwhile by a Lease-only elector makes it a conflict; see
 * lock.c; a release, holder "", whose secondary write conflicts reads the
 * secondary again and releases it once more if it still holds our term:
 * a renew of ours abandoned at shutdown landed after all).  The whole
 * operation is bounded by timeout_ms;
 * done_cb runs once from the loop.  Returns 0, or -1 if the operation
 * could not be started (done_cb will not run).
 */
int	lock_get(struct lock *l, uint64_t timeout_ms, lock_done_cb done_cb,
	    void *arg);
int	lock_create(struct lock *l, const struct lease *rec,
	    uint64_t timeout_ms, lock_done_cb done_cb, void *arg);
int	lock_update(struct lock *l, const struct lease *rec,
	    uint64_t timeout_ms, lock_done_cb done_cb, void *arg);

/*
 * Make l, a "leases" lock, one held for life as nais/elector holds its
 * Lease (core/elector.h): read the uid of the pod named pod in the
 * lock's namespace, the owner its create names.  done_cb runs once with
 * the GET's answer, KUBE_OK once the uid is read (a body without one is
 * KUBE_FAILED with reason "BadPod"); call it again after a failure.
 * From this call on, l refuses updates and, until the uid is read,
 * creates (they return -1): its create carries the pod as the Lease's
 * only ownerReference and a spec of holderIdentity and acquireTime,
 * and nothing is written after it.  Returns 0, or -1 if the read could
 * not be started or l is not a "leases" lock (done_cb will not run).
 */
int	lock_owner_get(struct lock *l, const char *pod, uint64_t timeout_ms,
	    kube_done_cb done_cb, void *arg);

/*
 * Record the core/v1 Event "message" about the lock through ev (a kube
 * client of its own, idle), as client-go's RecordEvent does: about the
 * primary object (its kind, uid and resourceVersion as last seen) and,
 * for a MultiLock, then about the Lease too.  done_cb runs once per Event
 * sent, each bounded by timeout_ms; the Lease's is under way before the
 * first one's done_cb runs, so ev is idle (kube_busy) in a done_cb only
 * once this lock has nothing more to send.  Returns 0, or -1 if nothing
 * could be started (done_cb will not run).
 */
int	lock_record_event(struct lock *l, struct kube *ev, const char *message,
	    int64_t now_us, uint64_t timeout_ms, kube_done_cb done_cb,
	    void *arg);

/*
 * A Lease object a watch delivered (JSON, stolen) and its record become
 * what the next update of a "leases" lock goes over, as if a Get had
 * returned them.  Any other lock type frees object and changes nothing.
 */
void	lock_adopt(struct lock *l, char *object, const struct lease *rec);

/* "leases/ns/name", "endpoints/ns/name", ...: for logs and /leader. */
const char *lock_describe(const struct lock *l);

/* The lock type, as configured ("leases", "endpointsleases", ...). */
const char *lock_type(const struct lock *l);

/* What the lock needs from RBAC, for the error logged on a 403. */
const char *lock_rbac(const struct lock *l);

/*
 * Labels the create of a Lease carries (a NULL-ended list of key, value
 * pairs, borrowed: it must outlive l), as a shard group's Leases carry
 * leaderd.io/shard-group.  Updates keep whatever labels the object has.
 */
void	lock_set_labels(struct lock *l, const char *const *labels);

/* Abort the running operation, if any; its done_cb does not run. */
void	lock_cancel(struct lock *l);

/* Cancel what runs and free l (not the kube client). */
void	lock_free(struct lock *l);

#endif /* LOCK_H */
