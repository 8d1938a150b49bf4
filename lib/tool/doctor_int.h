/*
 * doctor_int.h -- what the two doctors share beside the judgements: the
 * requests (doctor_io.c), each answer turned into a finding or into the
 * plain data a judgement takes.  Private to tool/.
 */

#ifndef TOOL_DOCTOR_INT_H
#define TOOL_DOCTOR_INT_H

#include <stddef.h>
#include <stdint.h>

#include "codec/lease.h"
#include "codec/review.h"
#include "tool/doctor.h"
#include "tool/tool.h"

#define DOCTOR_NAMES_MAX	32	/* identities or accounts kept */

/* A small set of names (identities, pods, service accounts). */
struct doctor_names {
	char	 v[DOCTOR_NAMES_MAX][LEASE_HOLDER_MAX];
	size_t	 n;
};

/* Add s unless there or full.  Returns its index, or -1 when full. */
int	doctor_names_add(struct doctor_names *s, const char *name);

/* Whether s holds name. */
int	doctor_names_has(const struct doctor_names *s, const char *name);

/* One doctor's run: its connection, its report, the server's clock. */
struct doctor_run {
	struct tool		*t;
	struct doctor_report	 rep;
	int64_t			 date_s;	/* the last answer's Date;
						   0: none yet */
	int64_t			 date_local_us;	/* our wall clock then */
	int			 no_reviews;	/* the access review API is
						   not served: skip them */
	char			 user[LEASE_HOLDER_MAX]; /* who the token is,
						   by a SelfSubjectReview */
};

/*
 * tool_call, noting the answer's Date.  Returns 0 with *a (free it), or
 * -1 when the request could not be started (a transport error is an
 * answer of status 0).
 */
int	doctor_call(struct doctor_run *d, const char *method, const char *path,
	    const char *body, const char *verb, struct tool_answer *a);

/*
 * doctor_call's GET of path, which it frees (the callers build it with
 * xasprintf for this one request).
 */
int	doctor_get(struct doctor_run *d, char *path, const char *verb,
	    struct tool_answer *a);

/*
 * The API server's time now, by its last Date, when our wall clock is
 * more than the Date's 1 s resolution off it; else our wall clock.
 */
int64_t	doctor_now_us(const struct doctor_run *d);

/* Our wall clock minus the server's, in ms; 0 without a Date. */
int64_t	doctor_offset_ms(const struct doctor_run *d);

/* A short description of a failed answer: "403 Forbidden: ...". */
void	doctor_answer_text(const struct tool_answer *a, char *buf,
	    size_t len);

/*
 * Ask a SelfSubjectAccessReview (subject: our own token's user; grant_to
 * for the fix) and judge it; need says what the verb is for.
 */
void	doctor_self(struct doctor_run *d, const char *subject,
	    const char *grant_to, const struct review_ask *ask,
	    const char *need);

/*
 * Ask a SubjectAccessReview for the service account sa_ns/sa, which the
 * pods in pods run as ("a, b"), and judge it.
 */
void	doctor_sa(struct doctor_run *d, const char *sa_ns, const char *sa,
	    const char *pods, const struct review_ask *ask, const char *need);

/*
 * GET the Lease ns/name into rec, and its spec's last field manager
 * into manager.  Returns 1, 0 for a 404, -1 when it cannot be read (a
 * skip says why).
 */
int	doctor_read_lease(struct doctor_run *d, const char *ns,
	    const char *name, struct lease *rec, char *manager,
	    size_t managerlen);

/*
 * The live LeaseCandidates (lease_cand_live) of the Lease ns/lease into
 * out.  Returns how many, or -1 when they cannot be listed (the API not
 * served, or refused: nothing said).
 */
int	doctor_live_cands(struct doctor_run *d, const char *ns,
	    const char *lease, struct doctor_names *out);

/*
 * Whether the pod ns/pod exists; its service account into sa (when
 * not NULL) when it does.
 */
enum doctor_live doctor_pod(struct doctor_run *d, const char *ns,
	    const char *pod, char *sa, size_t salen);

/*
 * The same name elsewhere: the Leases of that name in other namespaces
 * (a list of every namespace's, skipped when refused), and the
 * Endpoints and ConfigMap ns/name that old-style electors keep their
 * record on; each judged (doctor_judge_other) against lock_type and
 * ours (the Lease's record, or NULL).
 */
void	doctor_same_name(struct doctor_run *d, const char *ns,
	    const char *name, const char *lock_type, const struct lease *ours);

#endif /* TOOL_DOCTOR_INT_H */
