/*
 * legacy.h -- the leader-election record of the legacy locks: an
 * Endpoints or a ConfigMap whose annotation
 * control-plane.alpha.kubernetes.io/leader holds the LeaderElectionRecord
 * as JSON (ref/clientgo-leaderelection.md 3.1, 3.3).
 *
 * The annotation is written byte for byte as client-go v0.23's
 * json.Marshal(LeaderElectionRecord) and the classic leader-elector
 * sidecar write it: holderIdentity, leaseDurationSeconds, acquireTime,
 * renewTime (RFC 3339 at second precision, UTC, null when zero) and
 * leaderTransitions, in that order.  It is read as Go's encoding/json
 * reads it into that struct: unknown keys ignored, keys matched without
 * regard to case, null leaves a field zero.
 *
 * Pure functions like lease.c's: no I/O, no clock, no logging; errors go
 * to the caller's buffer.  json_t never leaves legacy.c.
 */

#ifndef LEGACY_H
#define LEGACY_H

#include <stddef.h>
#include <stdint.h>

#include "codec/lease.h"

#define LEGACY_ANNOTATION	"control-plane.alpha.kubernetes.io/leader"
#define LEGACY_UNKNOWN_LEADER	"leaderelection.k8s.io/unknown"

/*
 * Decode an annotation value (len bytes at s) into rec's holder,
 * duration_s, acquire_us, renew_us and transitions; the other fields of
 * rec are zeroed, except rv and uid which are left as they are.  A value
 * that is not a LeaderElectionRecord (not JSON, a field of the wrong
 * type, a time that is not RFC 3339, a negative number, a string that
 * does not fit) is an error: return -1 with err filled and rec untouched.
 */
int	legacy_record_decode(const char *s, size_t len, struct lease *rec,
	    char *err, size_t errlen);

/*
 * Whether rec names a live leader at now_us (wall clock): a holder that
 * is neither empty nor LEGACY_UNKNOWN_LEADER, renewed no longer ago than
 * its duration plus grace_us (a reader's allowance for the skew and the
 * delay of its own reads).  A record held for life (no duration, no
 * renewTime) is not live here: a caller that counts it says so.  Pure.
 */
int	legacy_record_live(const struct lease *rec, int64_t now_us,
	    int64_t grace_us);

/*
 * Encode rec as the annotation value (strategy and preferredHolder are
 * not part of the legacy record and are dropped).  Returns a
 * NUL-terminated string the caller frees.
 */
char	*legacy_record_encode(const struct lease *rec);

/*
 * Decode a core/v1 object of the given kind ("Endpoints" or "ConfigMap")
 * into out: its metadata.resourceVersion and uid, and the record from
 * its annotation.  An object without the annotation reads as held by
 * LEGACY_UNKNOWN_LEADER, where client-go reads an empty record, a free
 * lock: the annotation may have been deleted by hand under a live
 * leader, so it is waited out like any foreign holder rather than taken
 * at once (a release writes holderIdentity "", which is free).  A body that is not such an object, or an
 * annotation that does not decode (an empty string included, which Go
 * refuses too), is an error: -1 with err, out untouched.
 */
int	legacy_decode(const char *kind, const char *buf, size_t len,
	    struct lease *out, char *err, size_t errlen);

/*
 * The body of a POST creating the object kind ns/name with rec in its
 * annotation.  Returns a string the caller frees.
 */
char	*legacy_encode_create(const char *kind, const char *ns,
	    const char *name, const struct lease *rec);

/*
 * The body of a PUT: the object base (the last body the server returned)
 * with only the annotation replaced by rec; everything else (metadata,
 * uid, resourceVersion, other annotations, subsets, data) is kept, as
 * client-go's EndpointsLock and ConfigMapLock do.  Returns a string the
 * caller frees, or NULL with err when base is not an object of kind.
 */
char	*legacy_encode_update(const char *kind, const char *base,
	    size_t baselen, const struct lease *rec, char *err,
	    size_t errlen);

#endif /* LEGACY_H */
