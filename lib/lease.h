/*
 * lease.h -- the coordination.k8s.io/v1 Lease record and its JSON codec.
 *
 * lease.c and legacy.c (the Endpoints and ConfigMap locks' codec) are
 * the only files that include jansson.h: every JSON document that leaderd
 * reads or writes (Lease objects, legacy lock objects, Status bodies)
 * passes through them as a byte string.  The functions are pure: no I/O, no
 * clock, no logging.  Errors are written into the caller's buffer.
 */

#ifndef LEASE_H
#define LEASE_H

#include <stddef.h>
#include <stdint.h>

#define LEASE_HOLDER_MAX	256	/* identity incl. NUL; pod names <= 253 */
#define LEASE_RV_MAX		64	/* resourceVersion incl. NUL */
#define LEASE_STRATEGY_MAX	128	/* spec.strategy incl. NUL */
#define LEASE_MICROTIME_LEN	28	/* "2006-01-02T15:04:05.000000Z" + NUL */
#define LEASE_BODY_MAX		(1024 * 1024)	/* larger API answers are refused */

/*
 * The leader-election record as it is stored in a Lease spec
 * (ref/clientgo-leaderelection.md 3.2, 4.2).  Absent fields read as
 * empty / zero; a zero time means "null".
 */
struct lease {
	char	 holder[LEASE_HOLDER_MAX];	/* spec.holderIdentity; "" = free */
	int32_t	 duration_s;		/* spec.leaseDurationSeconds; 0 = absent */
	int32_t	 transitions;		/* spec.leaseTransitions */
	int64_t	 acquire_us;		/* spec.acquireTime, wall clock µs */
	int64_t	 renew_us;		/* spec.renewTime, wall clock µs */
	char	 strategy[LEASE_STRATEGY_MAX];	/* spec.strategy (CLE), kept */
	char	 preferred[LEASE_HOLDER_MAX];	/* spec.preferredHolder (CLE) */
	char	 rv[LEASE_RV_MAX];	/* metadata.resourceVersion */
	char	 uid[LEASE_RV_MAX];	/* metadata.uid */
};

/*
 * Decode a Lease object (the body of a GET, POST or PUT answer).  Fields
 * of the wrong type, an object that is not a Lease, times that are not
 * RFC 3339, negative durations or transitions and strings that do not fit
 * are errors: return -1 and describe the problem in err.  A missing
 * spec or missing spec fields are not errors; they read as absent.
 */
int	lease_decode(const char *buf, size_t len, struct lease *out,
	    char *err, size_t errlen);

/*
 * Encode the body of a POST that creates the Lease ns/name holding rec.
 * Returns a NUL-terminated string the caller frees.
 */
char	*lease_encode_create(const char *ns, const char *name,
	    const struct lease *rec);

/*
 * Encode the body of a PUT: the object base (the last Lease body the
 * server returned, with its metadata, uid, resourceVersion, labels and
 * annotations) with its spec replaced by rec, as client-go's LeaseLock
 * does.  strategy and preferredHolder are written only when non-empty.
 * Returns a string the caller frees, or NULL with err filled when base
 * is not a Lease object.
 */
char	*lease_encode_update(const char *base, size_t baselen,
	    const struct lease *rec, char *err, size_t errlen);

/*
 * Encode a core/v1 Event about the Lease ns/name, as client-go's event
 * recorder writes for its lock (ref 3.2): reason "LeaderElection", type
 * Normal, the given message ("<identity> became leader"), the Lease as
 * involvedObject (with rec's uid and resourceVersion), source and
 * reporting instance identity.  now_us (wall clock) names the event
 * "<name>.<hex ns>" and stamps it.  Returns a string the caller frees.
 */
char	*lease_encode_event(const char *ns, const char *name,
	    const struct lease *rec, const char *identity,
	    const char *message, int64_t now_us);

/*
 * The same Event about any object of the lock: api_version and kind name
 * the involvedObject ("v1" and "Endpoints" or "ConfigMap" for the legacy
 * locks); rec carries that object's uid and resourceVersion.
 */
char	*lease_encode_event_on(const char *api_version, const char *kind,
	    const char *ns, const char *name, const struct lease *rec,
	    const char *identity, const char *message, int64_t now_us);

/*
 * Whether two records are the same as client-go sees them: holder,
 * duration, acquire and renew time at second precision, transitions,
 * strategy and preferred holder (client-go compares the JSON of its
 * LeaderElectionRecord, whose times have second precision).
 * resourceVersion is ignored.
 */
int	lease_same_record(const struct lease *, const struct lease *);

#define LEASE_TOKEN_MAX	(11 + LEASE_RV_MAX)	/* fencing token incl. NUL */

/*
 * Write the fencing token of the term rec records into buf (at least
 * LEASE_TOKEN_MAX bytes): leaseTransitions as ten zero-padded digits, a
 * '-', then metadata.uid ("0000000007-6f1c...").  Within one Lease
 * object, a later term has more transitions, so its token compares
 * greater as a plain string; a Lease deleted and created again has a new
 * uid, so no token is ever repeated.  Every instance that observes the
 * same record computes the same token.  Writes "" when rec has no holder
 * (no term is running).
 */
void	lease_fencing_token(const struct lease *rec, char *buf, size_t len);

/*
 * Format a wall-clock time in µs as a MicroTime: exactly six fractional
 * digits and "Z" (ref 4.3).  buf must hold LEASE_MICROTIME_LEN bytes.
 */
void	lease_format_microtime(int64_t us, char *buf);

/*
 * Parse an RFC 3339 time (any number of fractional digits, "Z" or an
 * offset) into wall-clock µs.  Returns 0, or -1 if s is not RFC 3339.
 */
int	lease_parse_time(const char *s, int64_t *us);

/*
 * Read the "reason" and "message" of a Kubernetes Status body into the
 * caller's buffers (either may be NULL).  Returns 0, or -1 when the body
 * is not a Status; the buffers then hold "".
 */
int	lease_status(const char *buf, size_t len, char *reason,
	    size_t reasonlen, char *message, size_t messagelen);

/* The types of a watch event (the "type" of a watch.Event). */
enum lease_event_type {
	LEASE_EV_ADDED,
	LEASE_EV_MODIFIED,
	LEASE_EV_DELETED,
	LEASE_EV_BOOKMARK,	/* only metadata.resourceVersion is set */
	LEASE_EV_ERROR		/* a Status: 410 Expired, ... */
};

struct lease_event {
	enum lease_event_type	 type;
	struct lease		 rec;	/* ADDED, MODIFIED, DELETED */
	char			 rv[LEASE_RV_MAX]; /* the event's version */
	long			 code;	/* ERROR: the Status code */
	char			 reason[64];	/* ERROR: the Status reason */
	char			 message[256];	/* ERROR: the Status message */
};

/*
 * Decode one line of a watch stream ({"type": ..., "object": ...}).  For
 * ADDED and MODIFIED, *object is set to the Lease object as JSON (the
 * body the next PUT goes over; the caller frees it); otherwise to NULL.
 * An event whose object is not a valid Lease, an unknown type or a line
 * that is not JSON is an error: -1 with err.
 */
int	lease_decode_event(const char *buf, size_t len,
	    struct lease_event *ev, char **object, char *err, size_t errlen);

/*
 * For legacy.c, the other jansson user: lease_json_init() makes jansson
 * allocate through xmalloc (call it before building or parsing a
 * document); lease_json_dump() serialises root compactly, in insertion
 * order, and frees it.
 */
struct json_t;
void	lease_json_init(void);
char	*lease_json_dump(struct json_t *root);

#endif /* LEASE_H */
