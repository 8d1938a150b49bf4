/*
 * doctor.h -- the doctor's checks: what is wrong with an election, each
 * finding one line with a one-line fix.  Two commands share them:
 * `leaderd doctor` inside the pod, with the pod's own configuration and
 * token (doctor_pod.c), and `kubectl leaderd doctor [LEASE]` from
 * outside, with a kubeconfig (doctor_kubectl.c).
 *
 * The judgement functions here (doctor_judge.c) are pure: they take what
 * the requests found as plain data, with the time passed in, and add
 * findings to a report; no I/O, no clock, no logging.  doctor.c holds
 * the report, its output and its exit status, which both commands share
 * (docs/operations.md, "Doctor"; leaderd(8)).
 */

#ifndef TOOL_DOCTOR_H
#define TOOL_DOCTOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "codec/lease.h"

struct config;
struct kube_creds;

/*
 * `leaderd doctor` (doctor_pod.c): every check of the configuration c
 * (checked) from inside the pod, with creds (taken over); pod_ns this
 * pod's namespace ("" when not known).  Prints the report on stdout and
 * returns the exit status.
 */
int	doctor_pod_main(const struct config *c, struct kube_creds *creds,
	    const char *pod_ns);

/* The exit statuses of both doctors. */
#define DOCTOR_EXIT_OK		0	/* no problem found (warnings may be) */
#define DOCTOR_EXIT_PROBLEM	1	/* a problem found, or the checks
					   could not run (one line says why) */
#define DOCTOR_EXIT_USAGE	2	/* bad usage or configuration */

/* A finding's weight, in the order of its word on the output. */
enum doctor_sev {
	DOCTOR_OK,		/* "ok": checked, nothing wrong */
	DOCTOR_SKIP,		/* "skip": could not be checked (not allowed,
				   not served); does not change the exit */
	DOCTOR_WARN,		/* "warn": may be deliberate; exit 0 */
	DOCTOR_FAIL		/* "FAIL": wrong; exit 1 */
};

#define DOCTOR_CHECK_MAX	16	/* a check's name incl. NUL */
#define DOCTOR_LINE_MAX		512	/* a finding's line or its fix */
#define DOCTOR_FINDINGS_MAX	96	/* more are counted, not kept */

struct doctor_finding {
	enum doctor_sev	 sev;
	char		 check[DOCTOR_CHECK_MAX];	/* "access", "lease",
							   ... */
	char		 what[DOCTOR_LINE_MAX];	/* the finding, one line */
	char		 fix[DOCTOR_LINE_MAX];	/* its fix, one line; "" for
						   ok and skip */
};

struct doctor_report {
	struct doctor_finding	 f[DOCTOR_FINDINGS_MAX];
	size_t			 n;		/* findings kept */
	size_t			 dropped;	/* past DOCTOR_FINDINGS_MAX */
	unsigned		 count[DOCTOR_FAIL + 1]; /* per weight, all */
};

/* Empty r. */
void	doctor_init(struct doctor_report *r);

/*
 * Add a finding of weight sev to check, its line printf-style; returns
 * it, for doctor_fix (a finding past DOCTOR_FINDINGS_MAX is counted and
 * a scratch finding returned).  Lines are cut at DOCTOR_LINE_MAX.
 */
struct doctor_finding *doctor_add(struct doctor_report *r,
	    enum doctor_sev sev, const char *check, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

/* Set f's fix, printf-style. */
void	doctor_fix(struct doctor_finding *f, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/* The word a weight is printed as: "ok", "skip", "warn", "FAIL". */
const char *doctor_sev_word(enum doctor_sev sev);

/*
 * Print r as the doctors do: per finding "WORD  CHECK: WHAT" and, when it
 * has one, "      fix: FIX" beneath it; then one summary line, "doctor:
 * N problem(s), M warning(s)" followed by what was checked (about).
 * Text from the API passes through text_escape.  Problems (FAIL) first,
 * then warnings, then the rest, each in the order found.
 */
void	doctor_print(const struct doctor_report *r, const char *about,
	    FILE *fp);

/* The exit status r calls for: DOCTOR_EXIT_PROBLEM with a FAIL in it. */
int	doctor_exit(const struct doctor_report *r);

/*
 * doctor_judge.c: the judgements.  Each adds its findings to r.
 */

/* An access review's answer. */
enum doctor_answer {
	DOCTOR_ALLOWED,
	DOCTOR_DENIED,
	DOCTOR_NOANSWER		/* the review itself failed */
};

/* One access review: may subject do verb on resource? */
struct doctor_access {
	const char	*subject;	/* "this pod's service account", or
					   "service account NS/SA (pods a,
					   b)" */
	const char	*grant_to;	/* whom the Role is bound to, for the
					   fix ("system:serviceaccount:ns:sa");
					   NULL: unknown */
	const char	*verb;		/* "update" */
	const char	*resource;	/* "leases" */
	const char	*group;		/* "coordination.k8s.io", "" for core */
	const char	*ns;		/* namespace; "" for cluster-wide */
	const char	*name;		/* object name, or "" for any */
	const char	*need;		/* what it is needed for, "to renew the
					   Lease" */
	enum doctor_answer answer;
	const char	*reason;	/* the review's reason or its error;
					   "" for none */
};

/*
 * A denied verb is a FAIL whose fix names the Role's rule to add; an
 * allowed one is ok; a review that got no answer is skip.
 */
void	doctor_judge_access(struct doctor_report *r,
	    const struct doctor_access *a);

/* The bearer token, as the checks found it. */
struct doctor_token {
	const char	*source;	/* "the file PATH", "the
					   kubeconfig" */
	long		 status;	/* a request's HTTP status; 0: no answer
					   (transport error) */
	const char	*error;		/* that error's text, or "" */
	const char	*user;		/* who the server says we are, or "" */
	int64_t		 exp_us;	/* the JWT's exp, wall clock µs; 0: not
					   a JWT, or no exp */
};

/*
 * A 401 is a FAIL (rejected: revoked, expired or for another cluster);
 * an exp in the past a FAIL; no answer at all a FAIL (unreachable);
 * else ok, with the user and the expiry.  now_us: the wall clock.
 */
void	doctor_judge_token(struct doctor_report *r,
	    const struct doctor_token *t, int64_t now_us);

/* Whether something was found alive: a pod or a live candidate. */
enum doctor_live {
	DOCTOR_LIVE_UNKNOWN,	/* not checked, or not allowed to */
	DOCTOR_LIVE_YES,
	DOCTOR_LIVE_NO
};

/* The Lease and what is known around it. */
struct doctor_lease {
	const char		*ns, *name;
	int			 exists;	/* 1; 0 for a 404; -1 unread */
	const struct lease	*rec;		/* when exists */
	int64_t			 now_us;	/* the API server's time (its
						   Date), or the wall clock */
	uint64_t		 lease_ms;	/* our lease_duration; 0: not
						   known (kubectl) */
	const char		*identity;	/* ours, or NULL (kubectl) */
	enum doctor_live	 holder_live;	/* holder: a pod or a live
						   candidate? */
	enum doctor_live	 preferred_live; /* preferredHolder: a live
						   candidate, or a live pod? */
	const char		*manager;	/* the field manager of the last
						   update of its spec, or "" */
};

/*
 * The Lease judged: absent or free (ok); held for life (no duration, no
 * renewTime: nais's elector; warn, a FAIL when its holder is gone);
 * stale (renewTime plus its duration past); a foreign holder asking a
 * duration far beyond ours (or over DOCTOR_LONG_S when ours is not
 * known) that is no live pod or candidate (a live one: a warning, held
 * "for life" by its duration); a renewTime in the server's
 * future; a preferredHolder that is not live (a leaderd holder hands the
 * Lease to it, and nobody takes it); a holder that writes as client-go
 * (drops spec.strategy and preferredHolder when it renews: warn): the
 * last writer of the spec is neither leaderd nor kubectl, and renews
 * (renewTime a second or more after acquireTime).
 */
void	doctor_judge_lease(struct doctor_report *r,
	    const struct doctor_lease *l);

#define DOCTOR_LONG_FACTOR	4	/* "far beyond ours": 4 times */
#define DOCTOR_LONG_S		600	/* without ours: over 10 minutes */
#define DOCTOR_FUTURE_MS	2000	/* renewTime ahead by more: a clock */

/*
 * Whether manager, a Lease's last field manager, is leaderd's own
 * ("leaderd", the user agent's product) or a kubectl edit's: either is
 * not a client-go elector.
 */
int	doctor_manager_not_elector(const char *manager);

/*
 * The pod an identity names: the identity itself, or for client-go's
 * "HOST_UUID" form the HOST part (the pod's host name).  Writes it into
 * pod (at least LEASE_HOLDER_MAX bytes).
 */
void	doctor_identity_pod(const char *identity, char *pod, size_t len);

/* A pod named by one of the Lease's identities: does it exist? */
void	doctor_judge_pod(struct doctor_report *r, const char *ns,
	    const char *role, const char *identity, const char *pod,
	    enum doctor_live exists, int candidate);

/* The same name elsewhere: another Lease, or an old-style lock object. */
struct doctor_other {
	const char		*kind;	/* "Lease", "Endpoints", "ConfigMap" */
	const char		*ns, *name;
	const struct lease	*rec;	/* its record (an old-style
					   lock's: its annotation's) */
};

/*
 * Another namespace's Lease of the same name held live (renewed within
 * its duration) is a warning: two elections where one may be meant.  An
 * old-style lock object in our namespace with a live leader record is a
 * FAIL while lock_type does not include it (a split election: its
 * electors elect apart from the Lease), ok within a migration lock
 * (endpointsleases, configmapsleases); lock_type NULL (kubectl): a FAIL
 * when the Lease is held live too by another holder, else a warning.
 * A live Lease beside a lock_type without leases (endpoints,
 * configmaps) is a FAIL too.  A record that is not live is ok.
 */
void	doctor_judge_other(struct doctor_report *r,
	    const struct doctor_other *o, const char *lock_type,
	    const struct lease *ours, int64_t now_us);

/*
 * This host's clock against the API server's: offset_ms = local wall
 * clock minus the server's (its Date header, whole seconds, so 1 s is
 * allowed for), a FAIL past a quarter of renew_deadline_ms.
 */
void	doctor_judge_clock(struct doctor_report *r, int64_t offset_ms,
	    uint64_t renew_deadline_ms);

/*
 * The lock's namespace against this pod's own (pod_ns "" or NULL: not
 * known): a warning when they differ, which may be deliberate.
 */
void	doctor_judge_namespace(struct doctor_report *r, const char *lock_ns,
	    const char *pod_ns);

#endif /* TOOL_DOCTOR_H */
