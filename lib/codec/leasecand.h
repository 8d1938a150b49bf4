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
#define LEASECAND_VERSION_MAX	64	/* a version string incl. NUL */

struct lease_cand {
	char	 name[LEASE_HOLDER_MAX];	/* metadata.name: the identity */
	char	 lease_name[LEASE_HOLDER_MAX];	/* spec.leaseName */
	char	 binary_version[LEASECAND_VERSION_MAX]; /* spec.binaryVersion */
	char	 emulation_version[LEASECAND_VERSION_MAX]; /* spec.
					   emulationVersion; "" = absent */
	char	 strategy[LEASE_STRATEGY_MAX];	/* spec.strategy */
	int64_t	 ping_us;		/* spec.pingTime; 0 = absent */
	int64_t	 renew_us;		/* spec.renewTime; 0 = absent */
	int64_t	 created_us;		/* metadata.creationTimestamp */
	char	 rv[LEASE_RV_MAX];	/* metadata.resourceVersion */
};

/*
 * Decode one LeaseCandidate object.  Returns 0, or -1 with err for
 * malformed JSON, another kind, or fields of the wrong type or too long.
 */
int	lease_cand_decode(const char *buf, size_t len, struct lease_cand *out,
	    char *err, size_t errlen);

/*
 * Decode a LeaseCandidateList: the items whose spec.leaseName is
 * lease_name (all when lease_name is NULL) go to out, at most max of them;
 * *n is how many.  Returns 0, or -1 with err as lease_cand_decode.
 */
int	lease_cand_decode_list(const char *buf, size_t len,
	    const char *lease_name, struct lease_cand *out, size_t max,
	    size_t *n, char *err, size_t errlen);

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
 * Of the candidates c[0..n), the one the OldestEmulationVersion strategy
 * picks (lowest emulationVersion, then binaryVersion, then the oldest
 * creationTimestamp, then name), skipping skip (an identity, or NULL) and
 * those not renewed since not_before_us; -1 if none.
 */
int	lease_cand_pick(const struct lease_cand *c, size_t n,
	    const char *skip, int64_t not_before_us);

/*
 * Whether s is a version the API server takes: semver, MAJOR.MINOR.PATCH
 * in digits, maybe followed by -pre or +build (kube-apiserver refuses
 * "1.0" with "must be a valid semantic version").
 */
int	lease_cand_version_ok(const char *s);

#endif /* LEASECAND_H */
