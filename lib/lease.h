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

#endif /* LEASE_H */
