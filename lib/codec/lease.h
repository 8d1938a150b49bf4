/*
 * lease.h -- the coordination.k8s.io/v1 Lease record and its JSON codec.
 *
 * The files of codec/ are the only ones that include jansson.h: every
 * JSON document that leaderd reads or writes (Lease objects here, legacy
 * lock objects in legacy.h, Status, Event and watch-event bodies in
 * apiobj.h) passes through them as a byte string.  The functions are
 * pure: no I/O, no clock, no logging.  Errors are written into the
 * caller's buffer.
 */

#ifndef LEASE_H
#define LEASE_H

#include <stddef.h>
#include <stdint.h>

#define LEASE_HOLDER_MAX	256	/* identity incl. NUL; pod names <= 253 */
#define LEASE_RV_MAX		64	/* resourceVersion incl. NUL */
#define LEASE_STRATEGY_MAX	(253 + 1 + 63 + 1) /* spec.strategy incl. NUL:
				   the API's qualified name, prefix/name */
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
	char	 handover[LEASE_HOLDER_MAX];	/* annotation LEASE_HANDOVER:
					   the identity this record was
					   handed to; "" = none */
	int64_t	 mark_us;		/* annotation LEASE_RENEWED; 0 = none */
};

/*
 * The annotation a coordinated leaderd writes beside each record: the
 * record's own renewTime.  The coordinated election controller rewrites
 * renewTime and keeps annotations, so a record naming us whose mark is
 * not its renewTime was written by the controller (an assignment), and
 * one whose mark is, by a leaderd (another process of our identity).
 * Written only when set, removed otherwise.
 */
#define LEASE_RENEWED	"leaderd.io/renewed"


/*
 * The annotation a directed handover writes beside its record: the
 * identity it names, so that a leaderd successor can tell a lease handed
 * to it from one written by another process under its identity.  Every
 * other write leaderd makes removes it.
 */
#define LEASE_HANDOVER	"leaderd.io/handover-to"

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
 * The same with metadata.labels: labels is a NULL-ended list of key,
 * value pairs (a shard group's leaderd.io/shard-group), or NULL.
 */
char	*lease_encode_create_labeled(const char *ns, const char *name,
	    const struct lease *rec, const char *const *labels);

/*
 * Decode a LeaseList (the answer to a list of a namespace's Leases):
 * item_cb(name, rec, object, arg) for each item, object the item as
 * JSON with its kind and apiVersion restored (the body a PUT can go
 * over; item_cb takes it and frees it).  The list's resourceVersion goes
 * to rv.  An item that is not a valid Lease is an error: -1 with err,
 * after the items before it were given.
 */
int	lease_list_decode(const char *buf, size_t len,
	    void (*item_cb)(const char *name, const struct lease *rec,
	    char *object, void *arg), void *arg, char *rv, size_t rvlen,
	    char *err, size_t errlen);

/* The object a Lease created for life is owned by (ownerReferences). */
struct lease_owner {
	char	 api_version[16];		/* "v1" */
	char	 kind[32];			/* "Pod" */
	char	 name[LEASE_HOLDER_MAX];	/* the pod's name */
	char	 uid[LEASE_RV_MAX];		/* its metadata.uid */
};

/*
 * Encode the body of a POST that creates the Lease ns/name for life, as
 * nais/elector creates it: metadata.ownerReferences holds owner alone
 * (apiVersion, kind, name, uid; no controller, no blockOwnerDeletion),
 * so the garbage collector deletes the Lease with its owner, and the
 * spec holds rec's holderIdentity and acquireTime only (no
 * leaseDurationSeconds, renewTime or leaseTransitions).  Returns a
 * NUL-terminated string the caller frees.
 */
char	*lease_encode_create_owned(const char *ns, const char *name,
	    const struct lease *rec, const struct lease_owner *owner);

/*
 * Encode the body of a PUT: the object base (the last Lease body the
 * server returned, with its metadata, uid, resourceVersion, labels and
 * annotations) with its spec replaced by rec, as client-go's LeaseLock
 * does.  strategy and preferredHolder are written only when non-empty.
 * The annotation LEASE_HANDOVER is set to rec->handover when that is not
 * empty, and removed otherwise; LEASE_RENEWED likewise to rec->mark_us
 * as a MicroTime; no other metadata changes.
 * Returns a string the caller frees, or NULL with err filled when base
 * is not a Lease object.
 */
char	*lease_encode_update(const char *base, size_t baselen,
	    const struct lease *rec, char *err, size_t errlen);

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


#endif /* LEASE_H */
