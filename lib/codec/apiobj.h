/*
 * apiobj.h -- the API objects leaderd reads or writes that are not the
 * lock itself: Status bodies, core/v1 Events and watch events.
 *
 * Pure, as lease.h: no I/O, no clock, no logging; errors are written into
 * the caller's buffer.
 */

#ifndef APIOBJ_H
#define APIOBJ_H

#include <stddef.h>
#include <stdint.h>

#include "codec/lease.h"

/*
 * Read the "reason" and "message" of a Kubernetes Status body into the
 * caller's buffers (either may be NULL).  Returns 0, or -1 when the body
 * is not a Status; the buffers then hold "".
 */
int	apiobj_status(const char *buf, size_t len, char *reason,
	    size_t reasonlen, char *message, size_t messagelen);

/*
 * Encode a core/v1 Event about the Lease ns/name, as client-go's event
 * recorder writes for its lock (ref/clientgo-leaderelection.md 3.2):
 * reason "LeaderElection", type Normal, the given message ("<identity>
 * became leader"), the Lease as involvedObject (with rec's uid and
 * resourceVersion), source and reporting instance identity.  now_us
 * (wall clock) names the event "<name>.<hex ns>" and stamps it.  Returns
 * a string the caller frees.
 */
char	*apiobj_encode_event(const char *ns, const char *name,
	    const struct lease *rec, const char *identity,
	    const char *message, int64_t now_us);

/*
 * The same Event about any object of the lock: api_version and kind name
 * the involvedObject ("v1" and "Endpoints" or "ConfigMap" for the legacy
 * locks); rec carries that object's uid and resourceVersion.
 */
char	*apiobj_encode_event_on(const char *api_version, const char *kind,
	    const char *ns, const char *name, const struct lease *rec,
	    const char *identity, const char *message, int64_t now_us);

/*
 * A Warning Event with the given reason ("Forbidden", "ClockSkew", ...)
 * about the object api_version/kind ns/name (a Pod: "v1", "Pod"), its
 * uid unknown, from identity, as apiobj_encode_event_on writes the
 * others.  The caller frees it.
 */
char	*apiobj_encode_warning(const char *api_version, const char *kind,
	    const char *ns, const char *name, const char *identity,
	    const char *reason, const char *message, int64_t now_us);

/*
 * Read metadata.uid of an object of the given kind (a Pod: the owner of
 * a Lease held for life) into uid.  A body that is not JSON, an object
 * of another kind ("kind" absent is taken as given) and a uid that is
 * missing, empty or too long are errors: -1 with err.
 */
int	apiobj_uid(const char *buf, size_t len, const char *kind, char *uid,
	    size_t uidlen, char *err, size_t errlen);

/* The types of a watch event (the "type" of a watch.Event). */
enum apiobj_watch_type {
	APIOBJ_WATCH_ADDED,
	APIOBJ_WATCH_MODIFIED,
	APIOBJ_WATCH_DELETED,
	APIOBJ_WATCH_BOOKMARK,	/* only metadata.resourceVersion is set */
	APIOBJ_WATCH_ERROR	/* a Status: 410 Expired, ... */
};

/* One event of a Lease watch. */
struct apiobj_watch_event {
	enum apiobj_watch_type	 type;
	struct lease		 rec;	/* ADDED, MODIFIED, DELETED */
	char			 name[LEASE_HOLDER_MAX]; /* its metadata.name */
	char			 rv[LEASE_RV_MAX]; /* the event's version */
	long			 code;	/* ERROR: the Status code */
	char			 reason[64];	/* ERROR: the Status reason */
	char			 message[256];	/* ERROR: the Status message */
};

/*
 * Decode one line of a Lease watch stream ({"type": ..., "object": ...}).
 * For ADDED and MODIFIED, *object is set to the Lease object as JSON (the
 * body the next PUT goes over; the caller frees it); otherwise to NULL.
 * An event whose object is not a valid Lease, an unknown type or a line
 * that is not JSON is an error: -1 with err.
 */
int	apiobj_decode_watch_event(const char *buf, size_t len,
	    struct apiobj_watch_event *ev, char **object, char *err,
	    size_t errlen);

/*
 * Whether rv is newer than than: both resourceVersions (an object's
 * metadata.resourceVersion) as decimal integers, as the API server's etcd
 * revisions are.  A version that is not a number is newer whenever it
 * differs; "" is never newer.
 */
int	apiobj_rv_newer(const char *rv, const char *than);

#endif /* APIOBJ_H */
