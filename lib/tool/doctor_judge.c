/*
 * doctor_judge.c -- the doctors' judgements: what the requests found,
 * as plain data, into findings with their fixes (doctor.h).  Pure: the
 * time comes in, nothing is read, printed or logged here.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "codec/apitime.h"
#include "codec/lease.h"
#include "codec/legacy.h"
#include "tool/doctor.h"

#define SEC_US	1000000LL

/* Seconds from us1 to us2, rounded down (negative when us2 is earlier). */
static long long
secs(int64_t from_us, int64_t to_us)
{
	int64_t	 d = to_us - from_us;

	return (long long)(d >= 0 ? d / SEC_US : -((-d + SEC_US - 1) / SEC_US));
}

/* "leases.coordination.k8s.io" or "endpoints" for a core resource. */
static void
resource_word(const char *resource, const char *group, char *buf,
    size_t len)
{
	if (group == NULL || group[0] == '\0')
		snprintf(buf, len, "%s", resource);
	else
		snprintf(buf, len, "%s.%s", resource, group);
}

void
doctor_judge_access(struct doctor_report *r, const struct doctor_access *a)
{
	struct doctor_finding	*f;
	char			 res[128], obj[400], where[300];

	resource_word(a->resource, a->group, res, sizeof(res));
	if (a->name != NULL && a->name[0] != '\0')
		snprintf(obj, sizeof(obj), "%s/%s", res, a->name);
	else
		snprintf(obj, sizeof(obj), "%s", res);
	if (a->ns != NULL && a->ns[0] != '\0')
		snprintf(where, sizeof(where), "in namespace %s", a->ns);
	else
		snprintf(where, sizeof(where), "cluster-wide");
	switch (a->answer) {
	case DOCTOR_ALLOWED:
		doctor_add(r, DOCTOR_OK, "access", "%s may %s %s %s",
		    a->subject, a->verb, obj, where);
		return;
	case DOCTOR_NOANSWER:
		doctor_add(r, DOCTOR_SKIP, "access", "%s %s %s %s: no answer "
		    "from the access review%s%s", a->subject, a->verb, obj,
		    where, a->reason != NULL && a->reason[0] != '\0' ? ": " :
		    "", a->reason != NULL ? a->reason : "");
		return;
	default:
		break;
	}
	f = doctor_add(r, DOCTOR_FAIL, "access", "%s may not %s %s %s%s%s%s",
	    a->subject, a->verb, obj, where,
	    a->need != NULL && a->need[0] != '\0' ? " (needed " : "",
	    a->need != NULL ? a->need : "",
	    a->need != NULL && a->need[0] != '\0' ? ")" : "");
	if (a->ns != NULL && a->ns[0] != '\0')
		doctor_fix(f, "add verb \"%s\" on resource \"%s\" (apiGroup "
		    "\"%s\") to the Role in namespace %s bound to %s "
		    "(deploy/base/role.yaml)", a->verb, a->resource,
		    a->group != NULL ? a->group : "", a->ns,
		    a->grant_to != NULL ? a->grant_to : "that service account");
	else
		doctor_fix(f, "add verb \"%s\" on resource \"%s\" (apiGroup "
		    "\"%s\") to a ClusterRole bound to %s", a->verb,
		    a->resource, a->group != NULL ? a->group : "",
		    a->grant_to != NULL ? a->grant_to : "that service account");
}

void
doctor_judge_token(struct doctor_report *r, const struct doctor_token *t,
    int64_t now_us)
{
	struct doctor_finding	*f;
	char			 exp[APITIME_MICRO_LEN], until[128] = "";

	if (t->exp_us != 0) {
		apitime_format_micro(t->exp_us, exp);
		exp[19] = 'Z';			/* whole seconds */
		exp[20] = '\0';
		if (t->exp_us > now_us)
			snprintf(until, sizeof(until), "; it expires at %s (in "
			    "%lld s)", exp, secs(now_us, t->exp_us));
		else
			snprintf(until, sizeof(until), "; it expired at %s "
			    "(%lld s ago)", exp, secs(t->exp_us, now_us));
	}
	if (t->status == 0) {
		f = doctor_add(r, DOCTOR_FAIL, "api", "the API server did not "
		    "answer: %s", t->error != NULL && t->error[0] != '\0' ?
		    t->error : "no answer");
		doctor_fix(f, "check the server address, the network path and "
		    "any proxy between this host and the API server");
		return;
	}
	if (t->status == 401) {
		f = doctor_add(r, DOCTOR_FAIL, "token", "the API server "
		    "rejects the token from %s (401 Unauthorized)%s",
		    t->source, until);
		if (t->exp_us != 0 && t->exp_us <= now_us)
			doctor_fix(f, "the token has expired: make sure the "
			    "kubelet refreshes the projected token (%s), or "
			    "issue a new one", t->source);
		else
			doctor_fix(f, "the token is revoked (its Secret or pod "
			    "deleted) or from another cluster: restart the pod "
			    "for a fresh projected token, or recreate its "
			    "service account token");
		return;
	}
	if (t->exp_us != 0 && t->exp_us <= now_us) {
		f = doctor_add(r, DOCTOR_FAIL, "token", "the token from %s is "
		    "past its expiry%s; the API server still accepts it, for "
		    "now", t->source, until);
		doctor_fix(f, "make sure the token file is refreshed (a "
		    "projected service account token), or issue a new token");
		return;
	}
	doctor_add(r, DOCTOR_OK, "token", "the API server accepts the token "
	    "from %s%s%s%s", t->source, t->user != NULL && t->user[0] != '\0' ?
	    " as " : "", t->user != NULL ? t->user : "", until);
}

int
doctor_manager_not_elector(const char *manager)
{
	return manager == NULL || manager[0] == '\0' ||
	    strcmp(manager, "leaderd") == 0 ||
	    strncmp(manager, "kubectl", 7) == 0;
}

void
doctor_identity_pod(const char *identity, char *pod, size_t len)
{
	const char	*u = strrchr(identity, '_');
	size_t		 n = strlen(identity), i;

	/* client-go's examples: id := hostname + "_" + uuid (36 chars). */
	if (u != NULL && u != identity && strlen(u + 1) == 36) {
		for (i = 1; i <= 36; i++)
			if (!((u[i] >= '0' && u[i] <= '9') ||
			    (u[i] >= 'a' && u[i] <= 'f') || u[i] == '-'))
				break;
		if (i > 36)
			n = (size_t)(u - identity);
	}
	snprintf(pod, len, "%.*s", (int)n, identity);
}

/* The two ways to free a Lease held by a ghost, as one fix. */
static void
fix_free(struct doctor_finding *f, const char *ns, const char *name)
{
	doctor_fix(f, "free it: kubectl patch lease -n %s %s --type merge -p "
	    "'{\"spec\":{\"holderIdentity\":\"\"}}' (a candidate leads within "
	    "milliseconds), or kubectl delete lease -n %s %s (within "
	    "renew_deadline)", ns, name, ns, name);
}

/* Held for life: nais's elector writes no duration and no renewTime. */
static void
judge_for_life(struct doctor_report *r, const struct doctor_lease *l)
{
	const struct lease	*rec = l->rec;
	struct doctor_finding	*f;

	if (l->holder_live == DOCTOR_LIVE_NO) {
		f = doctor_add(r, DOCTOR_FAIL, "lease", "lease %s/%s is held "
		    "for life by %s (no leaseDurationSeconds, no renewTime: "
		    "nais's elector), and no pod or candidate of that name is "
		    "left",
		    l->ns, l->name, rec->holder);
		doctor_fix(f, "kubectl delete lease -n %s %s (its owner's "
		    "deletion should have taken it: check its "
		    "ownerReferences)", l->ns, l->name);
		return;
	}
	f = doctor_add(r, DOCTOR_WARN, "lease", "lease %s/%s is held for life "
	    "by %s (no leaseDurationSeconds, no renewTime: nais's elector): "
	    "it changes hands only when its holder's pod is deleted", l->ns,
	    l->name, rec->holder);
	doctor_fix(f, "to move it, delete the holder's pod (kubectl delete "
	    "pod -n %s POD), not the Lease", l->ns);
}

/* A preferredHolder that is not live: a leaderd holder hands over to it. */
static void
judge_preferred(struct doctor_report *r, const struct doctor_lease *l)
{
	const struct lease	*rec = l->rec;
	struct doctor_finding	*f;

	if (rec->preferred[0] == '\0' || l->preferred_live != DOCTOR_LIVE_NO ||
	    strcmp(rec->preferred, rec->holder) == 0)
		return;
	f = doctor_add(r, DOCTOR_FAIL, "preferred", "lease %s/%s prefers "
	    "holder %s (spec.preferredHolder%s%s), which is no live candidate: "
	    "a leaderd holder hands the Lease to it and nobody takes it up",
	    l->ns, l->name, rec->preferred, rec->strategy[0] != '\0' ?
	    ", strategy " : "", rec->strategy);
	doctor_fix(f, "kubectl patch lease -n %s %s --type merge -p "
	    "'{\"spec\":{\"preferredHolder\":null,\"strategy\":null}}', or "
	    "kubectl leaderd move %s --to LIVE-ID", l->ns, l->name, l->name);
}

/* The holder's clock, from a renewTime in the server's future. */
static void
judge_future(struct doctor_report *r, const struct doctor_lease *l)
{
	const struct lease	*rec = l->rec;
	struct doctor_finding	*f;
	int64_t			 ahead_us = rec->renew_us - l->now_us;

	if (rec->renew_us == 0 || ahead_us <= DOCTOR_FUTURE_MS * 1000LL)
		return;
	f = doctor_add(r, DOCTOR_WARN, "clock", "lease %s/%s: renewTime is "
	    "%lld s ahead of the API server's clock: the clock of %s's node "
	    "runs ahead (its Lease times and Events read out of order; the "
	    "election does not depend on them)", l->ns, l->name,
	    (long long)(ahead_us / SEC_US), rec->holder);
	doctor_fix(f, "synchronise that node's clock (NTP, chrony)");
}

void
doctor_judge_lease(struct doctor_report *r, const struct doctor_lease *l)
{
	const struct lease	*rec = l->rec;
	struct doctor_finding	*f;
	int64_t			 dur_us, age_s, long_s;
	int			 ours;

	if (l->exists == 0) {
		doctor_add(r, DOCTOR_OK, "lease", "lease %s/%s does not exist: "
		    "the first candidate that may create it does", l->ns,
		    l->name);
		return;
	}
	if (l->exists < 0 || rec == NULL)
		return;
	if (rec->holder[0] == '\0') {
		doctor_add(r, DOCTOR_OK, "lease", "lease %s/%s is free: the "
		    "next candidate to try takes it", l->ns, l->name);
		judge_preferred(r, l);
		return;
	}
	ours = l->identity != NULL && strcmp(rec->holder, l->identity) == 0;
	if (rec->duration_s == 0 && rec->renew_us == 0) {
		judge_for_life(r, l);
		return;
	}
	dur_us = (int64_t)rec->duration_s * SEC_US;
	age_s = secs(rec->renew_us, l->now_us);
	judge_future(r, l);
	if (rec->renew_us + dur_us < l->now_us) {
		f = doctor_add(r, DOCTOR_FAIL, "lease", "lease %s/%s is stale: "
		    "%s renewed it %lld s ago, past its %d s duration, and no "
		    "candidate has taken it over", l->ns, l->name, rec->holder,
		    (long long)age_s, rec->duration_s);
		if (l->holder_live == DOCTOR_LIVE_YES)
			doctor_fix(f, "%s is alive but cannot renew: read its "
			    "log (leaderd status) and the access checks; the "
			    "candidates need get, update and create on the "
			    "Lease", rec->holder);
		else
			doctor_fix(f, "make sure a candidate runs and may "
			    "update the Lease (the access checks); or free it: "
			    "kubectl patch lease -n %s %s --type merge -p "
			    "'{\"spec\":{\"holderIdentity\":\"\"}}'", l->ns,
			    l->name);
	} else {
		/* A foreign holder asking far more than we would wait. */
		long_s = l->lease_ms != 0 ? (int64_t)(l->lease_ms / 1000) *
		    DOCTOR_LONG_FACTOR : DOCTOR_LONG_S;
		if (!ours && rec->duration_s > long_s &&
		    l->holder_live != DOCTOR_LIVE_YES) {
			char	 until[APITIME_MICRO_LEN], ourd[64] = "";

			apitime_format_micro(rec->renew_us + dur_us, until);
			until[19] = 'Z';
			until[20] = '\0';
			if (l->lease_ms != 0)
				snprintf(ourd, sizeof(ourd), " (ours %llu s)",
				    (unsigned long long)(l->lease_ms / 1000));
			f = doctor_add(r, DOCTOR_FAIL, "lease", "lease %s/%s: "
			    "holder %s asks %d s%s and is no live pod or "
			    "candidate%s: a hand edit or a ghost; nobody takes "
			    "over before %s", l->ns, l->name, rec->holder,
			    rec->duration_s, ourd, l->holder_live ==
			    DOCTOR_LIVE_UNKNOWN ? " that could be checked" : "",
			    until);
			fix_free(f, l->ns, l->name);
		} else if (rec->duration_s > long_s) {
			/* Held "for life" by a huge duration. */
			f = doctor_add(r, DOCTOR_WARN, "lease", "lease %s/%s "
			    "is held by %s%s with a %d s duration, renewed "
			    "%lld s ago: should it stop without releasing, "
			    "nobody takes over for that long", l->ns, l->name,
			    rec->holder, ours ? " (us)" : "", rec->duration_s,
			    (long long)(age_s < 0 ? 0 : age_s));
			doctor_fix(f, "give its electors a lease_duration "
			    "of seconds (15 s, client-go's default), not of "
			    "hours");
		} else
			doctor_add(r, DOCTOR_OK, "lease", "lease %s/%s is held "
			    "by %s%s, renewed %lld s ago (duration %d s)",
			    l->ns, l->name, rec->holder, ours ? " (us)" : "",
			    (long long)(age_s < 0 ? 0 : age_s),
			    rec->duration_s);
	}
	judge_preferred(r, l);
	/*
	 * An elector renews: a one-off edit leaves renewTime at acquireTime
	 * (within the second a hand-made pair of times may differ by).
	 */
	if (!doctor_manager_not_elector(l->manager) &&
	    rec->renew_us - rec->acquire_us >= SEC_US) {
		f = doctor_add(r, DOCTOR_WARN, "holder", "lease %s/%s was last "
		    "written by %s, a client-go elector: it drops "
		    "spec.strategy and spec.preferredHolder when it renews, so "
		    "neither moves the Lease", l->ns, l->name, l->manager);
		doctor_fix(f, "to move it, stop %s's holder (it releases, or "
		    "its lease runs out) rather than setting preferredHolder",
		    l->manager);
	}
}

void
doctor_judge_pod(struct doctor_report *r, const char *ns, const char *role,
    const char *identity, const char *pod, enum doctor_live exists,
    int candidate)
{
	struct doctor_finding	*f;

	switch (exists) {
	case DOCTOR_LIVE_YES:
		doctor_add(r, DOCTOR_OK, "pods", "%s %s: pod %s/%s exists",
		    role, identity, ns, pod);
		return;
	case DOCTOR_LIVE_UNKNOWN:
		doctor_add(r, DOCTOR_SKIP, "pods", "%s %s: pod %s/%s not "
		    "checked", role, identity, ns, pod);
		return;
	default:
		break;
	}
	if (candidate) {
		doctor_add(r, DOCTOR_OK, "pods", "%s %s: no pod %s/%s, but a "
		    "live LeaseCandidate of that name", role, identity, ns,
		    pod);
		return;
	}
	f = doctor_add(r, DOCTOR_WARN, "pods", "%s %s: no pod %s/%s and no "
	    "live LeaseCandidate of that name: it is gone, or its identity is "
	    "not its pod's name", role, identity, ns, pod);
	doctor_fix(f, "give each candidate its pod's name as identity (--id "
	    "$(POD_NAME)), so that a holder can be traced to its pod");
}

/*
 * Whether rec is held at now_us: held for life (nais's elector writes no
 * duration and no renewTime), or a live record as the daemon's own
 * old-style lock check judges it, without its allowance for skew.
 */
static int
held_live(const struct lease *rec, int64_t now_us)
{
	if (rec == NULL)
		return 0;
	if (rec->holder[0] != '\0' && rec->duration_s == 0 &&
	    rec->renew_us == 0)
		return 1;
	return legacy_record_live(rec, now_us, 0);
}

void
doctor_judge_other(struct doctor_report *r, const struct doctor_other *o,
    const char *lock_type, const struct lease *ours, int64_t now_us)
{
	struct doctor_finding	*f;
	char			 kind[32];
	size_t			 i;
	int			 legacy = strcmp(o->kind, "Lease") != 0, sev;

	for (i = 0; o->kind[i] != '\0' && i < sizeof(kind) - 1; i++)
		kind[i] = (char)(o->kind[i] >= 'A' && o->kind[i] <= 'Z' ?
		    o->kind[i] - 'A' + 'a' : o->kind[i]);
	kind[i] = '\0';
	if (!held_live(o->rec, now_us)) {
		doctor_add(r, DOCTOR_OK, "split", "%s %s/%s of the same name "
		    "holds no live leader record", kind, o->ns, o->name);
		return;
	}
	if (!legacy && lock_type != NULL && strstr(lock_type, "leases") ==
	    NULL) {
		/* We elect on an old-style lock; the Lease is held apart. */
		f = doctor_add(r, DOCTOR_FAIL, "split", "lease %s/%s holds a "
		    "live record, renewed %lld s ago by %s: electors on the "
		    "Lease elect apart from those on lock type %s", o->ns,
		    o->name, secs(o->rec->renew_us, now_us), o->rec->holder,
		    lock_type);
		doctor_fix(f, "migrate every elector through lock type "
		    "%sleases (docs/migrating.md)", lock_type);
		return;
	}
	if (!legacy) {
		f = doctor_add(r, DOCTOR_WARN, "split", "lease %s/%s of the "
		    "same name is held too, by %s, renewed %lld s ago: pods "
		    "there elect apart from this Lease's", o->ns, o->name,
		    o->rec->holder, secs(o->rec->renew_us, now_us));
		doctor_fix(f, "if both belong to one application, give all "
		    "its pods one lock.namespace (--election-namespace)");
		return;
	}
	/* endpointsleases, configmapsleases: the migration's MultiLock. */
	if (lock_type != NULL && strncmp(lock_type, kind, strlen(kind)) == 0) {
		doctor_add(r, DOCTOR_OK, "split", "%s %s/%s holds a live "
		    "leader record (%s), which lock type %s keeps", kind, o->ns,
		    o->name, o->rec->holder, lock_type);
		return;
	}
	if (lock_type != NULL)
		sev = DOCTOR_FAIL;
	else
		sev = held_live(ours, now_us) && strcmp(ours->holder,
		    o->rec->holder) != 0 ? DOCTOR_FAIL : DOCTOR_WARN;
	f = doctor_add(r, (enum doctor_sev)sev, "split", "%s %s/%s holds a "
	    "leader record renewed %lld s ago by %s: electors on the %s lock "
	    "elect apart from those on the Lease", kind, o->ns, o->name,
	    secs(o->rec->renew_us, now_us), o->rec->holder, kind);
	doctor_fix(f, "migrate every elector through lock type %sleases "
	    "(docs/migrating.md) before any uses leases alone", kind);
}

void
doctor_judge_clock(struct doctor_report *r, int64_t offset_ms,
    uint64_t renew_deadline_ms)
{
	struct doctor_finding	*f;
	int64_t			 mag = offset_ms < 0 ? -offset_ms : offset_ms;
	int64_t			 limit = (int64_t)(renew_deadline_ms / 4);

	/* The Date header has whole seconds: up to 1 s is its rounding. */
	if (mag <= limit + 1000) {
		doctor_add(r, DOCTOR_OK, "clock", "this host's clock is within "
		    "%lld ms of the API server's (limit: a quarter of "
		    "renew_deadline, %lld ms, plus 1 s for the Date header)",
		    (long long)mag, (long long)limit);
		return;
	}
	f = doctor_add(r, DOCTOR_FAIL, "clock", "this host's clock is "
	    "%lld.%03lld s %s the API server's, more than a quarter of "
	    "renew_deadline "
	    "(%lld ms): the times it writes into the Lease and its Events are "
	    "off", (long long)(mag / 1000), (long long)(mag % 1000),
	    offset_ms > 0 ? "ahead of" : "behind", (long long)limit);
	doctor_fix(f, "synchronise this node's clock (NTP, chrony); the "
	    "election itself times from its own observations");
}

void
doctor_judge_namespace(struct doctor_report *r, const char *lock_ns,
    const char *pod_ns)
{
	struct doctor_finding	*f;

	if (pod_ns == NULL || pod_ns[0] == '\0' || strcmp(lock_ns, pod_ns) == 0)
		return;
	f = doctor_add(r, DOCTOR_WARN, "namespace", "the lock's namespace %s "
	    "is not this pod's namespace %s: pods configured otherwise elect "
	    "apart", lock_ns, pod_ns);
	doctor_fix(f, "if it is not deliberate, set lock.namespace "
	    "(--election-namespace) to %s on every pod of the application",
	    pod_ns);
}
