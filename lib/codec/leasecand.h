/*
 * leasecand.h -- the coordination.k8s.io/v1beta1 LeaseCandidate and its
 * JSON codec (Coordinated Leader Election, KEP-4355; ref/frontier-2026.md
 * 1.2).  A candidate names the Lease it would hold (leaseName), its
 * binary and emulation versions and the strategy; the API server's
 * election controller pings it (pingTime) and the candidate answers by
 * writing renewTime.  Pure, like lease.h.
 */

#ifndef LEASECAND_H
#define LEASECAND_H

#include <stddef.h>
#include <stdint.h>

#include "codec/lease.h"

#define LEASECAND_API_VERSION	"coordination.k8s.io/v1beta1"
/*
 * The API server checks a version with semver.Parse alone: no length
 * limit.  What the order needs is kept: MAJOR.MINOR.PATCH and any
 * -prerelease, build metadata (+...) dropped, as the order ignores it;
 * a longer one is cut and the candidate marked (lease_cand.cut).
 */
#define LEASECAND_VERSION_MAX	128	/* a version as kept, incl. NUL */
/* handover: auto's liveness (lease_cand_live). */
#define LEASECAND_LIVE_US	(330LL * 1000000) /* client-go renews every
					   5 minutes: renewed within 5.5 */
#define LEASECAND_SKEW_US	(5LL * 1000000)	/* renewTime may be this far
					   ahead of our clock */

struct lease_cand {
	char	 name[LEASE_HOLDER_MAX];	/* metadata.name: the identity */
	char	 lease_name[LEASE_HOLDER_MAX];	/* spec.leaseName */
	char	 binary_version[LEASECAND_VERSION_MAX]; /* spec.binaryVersion */
	char	 emulation_version[LEASECAND_VERSION_MAX]; /* spec.
					   emulationVersion; "" = absent */
	char	 strategy[LEASE_STRATEGY_MAX];	/* spec.strategy */
	int	 cut;			/* a version too long to keep whole:
					   never picked */
	int64_t	 ping_us;		/* spec.pingTime; 0 = absent */
	int64_t	 renew_us;		/* spec.renewTime; 0 = absent */
	int64_t	 created_us;		/* metadata.creationTimestamp */
	char	 rv[LEASE_RV_MAX];	/* metadata.resourceVersion */
};

/*
 * Decode one LeaseCandidate object.  Returns 0, or -1 with err for
 * malformed JSON, another kind, or fields of the wrong type or longer
 * than the API allows.  Versions never fail for their length (see
 * LEASECAND_VERSION_MAX).
 */
int	lease_cand_decode(const char *buf, size_t len, struct lease_cand *out,
	    char *err, size_t errlen);

/*
 * What lease_cand_scan_list looks for and finds: of the items whose
 * spec.leaseName is lease_name, the one handover: auto hands to.
 */
struct lease_cand_scan {
	const char		*lease_name;	/* in: the Lease */
	const char		*skip;		/* in: never picked (our
						   identity), or NULL */
	int			 by_version;	/* in: OldestEmulationVersion's
						   order; 0: the one renewed
						   last */
	int64_t			 now_us;	/* in: wall clock, for
						   lease_cand_live */
	struct lease_cand	 best;		/* out: the pick, if found */
	int			 found;		/* out: best is set */
	size_t			 n;		/* out: items of lease_name */
	size_t			 skipped;	/* out: of those, not decoded */
	char			 why[160];	/* out: the first one's error */
};

/*
 * Scan a LeaseCandidateList for s->lease_name's pick: an item of another
 * Lease is passed over once its spec.leaseName is read (nothing else of
 * it is decoded, so no co-tenant's candidate can fail the scan); one of
 * ours that does not decode is counted in s->skipped and passed over.
 * Of the rest, the live ones (lease_cand_live) but s->skip compete: the
 * OldestEmulationVersion order with s->by_version, else the latest
 * renewTime.  Returns 0, or -1 with err when the list itself is not one
 * (malformed JSON, items not an array, over LEASE_BODY_MAX).
 */
int	lease_cand_scan_list(const char *buf, size_t len,
	    struct lease_cand_scan *s, char *err, size_t errlen);

/*
 * Whether c counts as live for handover: auto at now_us, by the rule of
 * the API server's election controller, which elects only candidates
 * that answered its ping (renewTime not before pingTime): renewed, not
 * more than LEASECAND_SKEW_US in the future (a renewTime far ahead is a
 * forgery, not a clock), within LEASECAND_LIVE_US (client-go's renew
 * interval: the controller pings older ones before it elects), no ping
 * left unanswered, and its versions kept whole.
 */
int	lease_cand_live(const struct lease_cand *c, int64_t now_us);

/*
 * Whether x comes before y in the OldestEmulationVersion order: lowest
 * emulationVersion (binaryVersion when absent), then binaryVersion,
 * then the oldest creationTimestamp, then name.
 */
int	lease_cand_better(const struct lease_cand *x,
	    const struct lease_cand *y);

/*
 * The body of a POST creating c in namespace ns: metadata.name, and a
 * spec of leaseName, binaryVersion, emulationVersion (when not empty),
 * strategy and renewTime (c->renew_us).  With c->rv set it is the body of
 * a PUT over that version instead: metadata.resourceVersion, and the
 * server's pingTime (c->ping_us) kept.  The caller frees it.
 */
char	*lease_cand_encode_create(const char *ns, const struct lease_cand *c);

/*
 * The body of a PUT renewing the candidate: the object base (the last
 * body the server returned) with spec.renewTime set to renew_us and the
 * versions and strategy set from c; nothing else changes.  Returns NULL
 * with err when base is not a LeaseCandidate.  The caller frees it.
 */
char	*lease_cand_encode_update(const char *base, size_t baselen,
	    const struct lease_cand *c, int64_t renew_us, char *err,
	    size_t errlen);

/*
 * Compare two versions as the controller does (semver: major, minor,
 * patch numerically; a missing part is 0; anything after them, as a
 * string).  Returns <0, 0 or >0.
 */
int	lease_cand_version_cmp(const char *a, const char *b);

/*
 * Whether s is a version the API server takes: semver, MAJOR.MINOR.PATCH
 * in digits, maybe followed by -pre or +build (kube-apiserver refuses
 * "1.0" with "must be a valid semantic version").
 */
int	lease_cand_version_ok(const char *s);

#endif /* LEASECAND_H */
