/*
 * review.h -- what the doctor asks the API server and reads back beside
 * the lock: access reviews (authorization.k8s.io/v1
 * SelfSubjectAccessReview and SubjectAccessReview), who a token is
 * (authentication.k8s.io/v1 SelfSubjectReview), a pod's service
 * account, and the field manager that last wrote an object's spec.
 * Pure, like lease.h.
 */

#ifndef REVIEW_H
#define REVIEW_H

#include <stddef.h>
#include <stdint.h>

#define REVIEW_SSAR_PATH \
	"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
#define REVIEW_SAR_PATH	"/apis/authorization.k8s.io/v1/subjectaccessreviews"
#define REVIEW_SSR_PATH	"/apis/authentication.k8s.io/v1/selfsubjectreviews"

/* One question: may the subject do verb on group/resource ns/name? */
struct review_ask {
	const char	*verb;		/* "update" */
	const char	*group;		/* "coordination.k8s.io"; "" for core */
	const char	*resource;	/* "leases" */
	const char	*ns;		/* "" for cluster-wide */
	const char	*name;		/* "" for any */
};

/*
 * The body of a SelfSubjectAccessReview asking a (POST it to
 * REVIEW_SSAR_PATH).  The caller frees it.
 */
char	*review_encode_self(const struct review_ask *a);

/*
 * The body of a SubjectAccessReview asking a for the service account
 * sa_ns/sa: user system:serviceaccount:SA_NS:SA in the groups every
 * service account is in (system:serviceaccounts,
 * system:serviceaccounts:SA_NS, system:authenticated), so that bindings
 * to those groups count too.  The caller frees it.
 */
char	*review_encode_sa(const char *sa_ns, const char *sa,
	    const struct review_ask *a);

/*
 * Read a review's answer (either kind): *allowed 1 or 0, and its
 * status.reason, else status.evaluationError, into reason ("" if none).
 * Returns 0, or -1 with err when the body is not a review with a status.
 */
int	review_decode(const char *buf, size_t len, int *allowed, char *reason,
	    size_t reasonlen, char *err, size_t errlen);

/*
 * A SelfSubjectReview's status.userInfo.username into user.  Returns 0,
 * or -1 with err.
 */
int	review_whoami(const char *buf, size_t len, char *user, size_t userlen,
	    char *err, size_t errlen);

/*
 * A Pod's spec.serviceAccountName into sa ("default" when absent, as the
 * API server sets it).  Returns 0, or -1 with err.
 */
int	review_pod_sa(const char *buf, size_t len, char *sa, size_t salen,
	    char *err, size_t errlen);

/*
 * The names of a PodList's items, each to cb(name, arg).  Returns 0, or
 * -1 with err when the body is not a list.
 */
int	review_pod_list(const char *buf, size_t len,
	    void (*cb)(const char *name, void *arg), void *arg, char *err,
	    size_t errlen);

/*
 * The identities an EventList names as leaders: each item of reason
 * "LeaderElection" whose message is "ID became leader" (as client-go's
 * elector and leaderd record them), ID to cb(id, arg), in the list's
 * order.  Returns 0, or -1 with err when the body is not a list.
 */
int	review_event_leaders(const char *buf, size_t len,
	    void (*cb)(const char *id, void *arg), void *arg, char *err,
	    size_t errlen);

/*
 * The field manager of the latest "Update" entry of an object's
 * metadata.managedFields whose fields include its spec (fieldsV1 "f:spec"),
 * by time, into manager ("" when there is none).  Returns 0, or -1 with
 * err when the body is not an object.
 */
int	review_spec_manager(const char *buf, size_t len, char *manager,
	    size_t managerlen, char *err, size_t errlen);

/*
 * The "exp" claim of the JWT token (a service account token), read
 * without verifying it: Unix seconds into *exp_s.  Returns 0, or -1 when
 * token is not a JWT or has no numeric exp.  The token never appears in
 * an error.
 */
int	review_jwt_exp(const char *token, int64_t *exp_s);

#endif /* REVIEW_H */
