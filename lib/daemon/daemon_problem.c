/*
 * daemon_problem.c -- why an instance does not lead, or works wrong, in
 * one place (docs/api.md "Problems"): each condition the daemon can see
 * from what the API server says, from the records it observes and from
 * its own candidacy becomes a problem in /leader (st.problems, in order
 * of importance) with a one-line message naming the cause.  A problem is
 * logged when it begins, again every PROBLEM_REPEAT_MS while it holds,
 * and once when it clears; those with an Event reason are recorded as
 * Warning Events on the pod (on the lock when the pod's name is not
 * known) at the same pace.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kube.h"
#include "api/lock.h"
#include "api/watch.h"
#include "base/clock.h"
#include "base/log.h"
#include "codec/apiobj.h"
#include "codec/apitime.h"
#include "daemon/daemon_int.h"

#define PROBLEM_TICK_MS		5000	/* reminders, the watch, staleness */
#define PROBLEM_REPEAT_MS	60000	/* a problem's log line and Event */
#define PROBLEM_LONG_FACTOR	4	/* "far beyond" our lease_duration */
#define SA_NAMESPACE_FILE \
	"/var/run/secrets/kubernetes.io/serviceaccount/namespace"

/* Each code's name, severity and Warning Event reason (NULL: none). */
static const struct {
	const char	*code;
	const char	*severity;
	const char	*reason;
} problems[PROBLEM_N] = {
	{ "unauthorized",	"error",	"Unauthorized" },
	{ "forbidden",		"error",	"Forbidden" },
	{ "unreachable",	"error",	NULL },
	{ "duplicate_identity",	"error",	"DuplicateIdentity" },
	{ "split_lock",		"error",	"SplitLock" },
	{ "foreign_long_lease",	"error",	"ForeignLongLease" },
	{ "not_candidate",	"warning",	NULL },
	{ "watch_down",		"warning",	NULL },
	{ "clock_skew",		"warning",	"ClockSkew" },
	{ "lock_namespace",	"warning",	NULL },
};

void
daemon_problem_time(int64_t us, char *buf)
{
	apitime_format_micro(us, buf);
	memcpy(buf + 19, "Z", 2);
}

/* The Warning Event of problem c, if it has one, at most once a period. */
static void
problem_event(struct election *e, int c, uint64_t now_ms)
{
	struct localapi_problem	*p = &e->st.problems[c];

	if (problems[c].reason == NULL || (e->pr.event_ms[c] != 0 &&
	    now_ms - e->pr.event_ms[c] < PROBLEM_REPEAT_MS))
		return;
	e->pr.event_ms[c] = now_ms;
	daemon_record_event(e, problems[c].reason, p->message);
}

void
daemon_problem_set(struct election *e, int c, const char *msg)
{
	struct localapi_problem	*p = &e->st.problems[c];
	uint64_t		 now_ms = clock_mono_ms();

	snprintf(p->message, sizeof(p->message), "%s", msg);
	if (p->code != NULL)
		return;
	p->code = problems[c].code;
	p->severity = problems[c].severity;
	p->since_us = clock_wall_us();
	e->pr.since_ms[c] = now_ms;
	problem_event(e, c, now_ms);
	/* One that comes and goes is said at most once a period. */
	if (e->pr.said_ms[c] != 0 &&
	    now_ms - e->pr.said_ms[c] < PROBLEM_REPEAT_MS)
		return;
	e->pr.said_ms[c] = now_ms;
	e->pr.said[c] = 1;
	log_warnx("lease %s: problem %s: %s", e->lock, p->code, p->message);
}

void
daemon_problem_clear(struct election *e, int c)
{
	struct localapi_problem	*p = &e->st.problems[c];

	if (p->code == NULL)
		return;
	if (e->pr.said[c])
		log_info("lease %s: problem %s cleared after %llus", e->lock,
		    p->code, (unsigned long long)((clock_mono_ms() -
		    e->pr.since_ms[c]) / 1000));
	e->pr.said[c] = 0;
	p->code = NULL;
}

/* The reminders of what still holds, every PROBLEM_REPEAT_MS. */
static void
remind(struct election *e, uint64_t now_ms)
{
	struct localapi_problem	*p;
	char			 t[APITIME_MICRO_LEN];
	int			 c;

	for (c = 0; c < PROBLEM_N; c++) {
		p = &e->st.problems[c];
		if (p->code == NULL ||
		    now_ms - e->pr.said_ms[c] < PROBLEM_REPEAT_MS)
			continue;
		e->pr.said_ms[c] = now_ms;
		e->pr.said[c] = 1;
		daemon_problem_time(p->since_us, t);
		log_warnx("lease %s: problem %s still holds since %s: %s",
		    e->lock, p->code, t, p->message);
		problem_event(e, c, now_ms);
	}
}

/*
 * The failure res of a request as a problem (PROBLEM_*, or -1 for one
 * that is not), its message in msg.
 */
static int
api_problem(struct election *e, const struct kube_result *res, char *msg,
    size_t len)
{
	char		 what[sizeof(res->target) + CONFIG_STR_MAX + 16];
	char		 tok[1024];
	const char	*in;

	/* A create's URL has no name: the lock's is the one refused. */
	snprintf(what, sizeof(what), "%s", res->target);
	if ((in = strstr(res->target, " in namespace ")) != NULL &&
	    memchr(res->target, '/', (size_t)(in - res->target)) == NULL &&
	    strncmp(res->target, "events", 6) != 0)
		snprintf(what, sizeof(what), "%.*s/%s%s",
		    (int)(in - res->target), res->target, e->conf->lock_name,
		    in);
	if (res->status == 403) {
		snprintf(msg, len, "%s %.200s is forbidden (403): the Role "
		    "bound to leaderd's service account must allow %s on it; "
		    "leaderd needs %.200s", res->verb, what, res->verb,
		    lock_rbac(e->lk));
		return PROBLEM_FORBIDDEN;
	}
	if (res->status == 401) {
		token_describe(e->d->token, tok, sizeof(tok));
		snprintf(msg, len, "%s %.200s: the API server rejects the "
		    "credentials (401 %.100s); they come from %.300s",
		    res->verb, what, res->message, tok);
		return PROBLEM_UNAUTHORIZED;
	}
	if (!kube_unanswered(res))
		return -1;
	if (res->status == 0)
		snprintf(msg, len, "%s %.200s: the API server cannot be "
		    "reached: %.64s: %.300s", res->verb, what, res->reason,
		    res->message);
	else
		snprintf(msg, len, "%s %.200s: the API server answers %ld "
		    "%.64s: %.300s", res->verb, what, res->status, res->reason,
		    res->message);
	return PROBLEM_UNREACHABLE;
}

/*
 * Problems c that come from answers hold while the last answer of some
 * request kind was one: the Lease's kinds first, then the Events'.
 */
static void
api_sync(struct election *e, int c)
{
	static const int	 order[4] = { 1, 2, 3, 0 };
	int			 i;

	for (i = 0; i < 4; i++)
		if (e->pr.api_code[order[i]] == c) {
			daemon_problem_set(e, c, e->pr.api_msg[order[i]]);
			return;
		}
	daemon_problem_clear(e, c);
}

/* The API server's Date against our wall clock. */
static void
clock_check(struct election *e, int64_t date_s)
{
	int64_t		 now_ms, off_ms, lim_ms;
	char		 msg[LOCALAPI_PROBLEM_MAX];

	/*
	 * The Date is whole seconds, stamped before the answer reached us:
	 * the server's clock read between date_s and date_s + 1 when ours
	 * read at most now.  A skew is one beyond the limit whatever the
	 * fraction; its middle is what the message says.
	 */
	now_ms = clock_wall_us() / 1000;
	off_ms = now_ms - (date_s * 1000 + 500);
	lim_ms = (int64_t)e->conf->renew_deadline_ms / 4;
	if (now_ms - (date_s + 1) * 1000 <= lim_ms &&
	    date_s * 1000 - now_ms <= lim_ms) {
		daemon_problem_clear(e, PROBLEM_CLOCK_SKEW);
		return;
	}
	snprintf(msg, sizeof(msg), "this clock is %+.1fs off the API "
	    "server's (its Date header; more than a quarter of renew_deadline, "
	    "%lldms): the times leaderd writes into the Lease and Events are "
	    "off by as much; the election itself does not depend on them",
	    (double)off_ms / 1000.0, (long long)lim_ms);
	daemon_problem_set(e, PROBLEM_CLOCK_SKEW, msg);
}

void
daemon_problem_api(struct election *e, int slot, const struct kube_result *res)
{
	uint64_t	 now_ms = clock_mono_ms();
	int		 c, i;

	if (slot < 0 || slot > 3)
		return;
	if (res->date_s != 0)
		clock_check(e, res->date_s);
	c = -1;
	if (res->outcome == KUBE_FAILED)
		c = api_problem(e, res, e->pr.api_msg[slot],
		    sizeof(e->pr.api_msg[slot]));
	else if (slot != 0 && (res->outcome == KUBE_OK ||
	    (res->outcome == KUBE_NOTFOUND && slot == ELECTOR_DO_GET))) {
		/* The record, or its absence, confirmed from the API. */
		e->st.confirmed_us = clock_wall_us();
		e->st.confirmed_ms = now_ms;
	}
	e->pr.api_code[slot] = c;
	/*
	 * Any answer shows the server reachable, and one that is not a 401
	 * the credentials good, for every kind of request: a kind not sent
	 * since (the Events) must not keep those alive.  A 403 is the
	 * kind's own.
	 */
	if (res->status != 0 && res->status != 401 && res->status < 500 &&
	    res->status != 429)
		for (i = 0; i < 4; i++)
			if (e->pr.api_code[i] == PROBLEM_UNAUTHORIZED ||
			    e->pr.api_code[i] == PROBLEM_UNREACHABLE)
				e->pr.api_code[i] = -1;
	api_sync(e, PROBLEM_UNAUTHORIZED);
	api_sync(e, PROBLEM_FORBIDDEN);
	api_sync(e, PROBLEM_UNREACHABLE);
}

/*
 * A record naming our identity that we did not write, renewed again
 * since we first saw it: another process shares our identity (one left
 * by an earlier process of ours is never renewed).
 */
static void
check_duplicate(struct election *e)
{
	const struct lease	*o = &e->el.observed;
	char			 msg[LOCALAPI_PROBLEM_MAX];

	if (!e->el.have_observed || e->el.ours || e->el.coordinated ||
	    strcmp(o->holder, e->conf->identity) != 0) {
		e->pr.self_renews = 0;
		e->pr.self_renew_us = 0;
		daemon_problem_clear(e, PROBLEM_DUPLICATE_IDENTITY);
		return;
	}
	if (o->renew_us != e->pr.self_renew_us) {
		if (e->pr.self_renew_us != 0)
			e->pr.self_renews++;
		e->pr.self_renew_us = o->renew_us;
	}
	if (e->pr.self_renews == 0)
		return;
	snprintf(msg, sizeof(msg), "lease %.200s is renewed under our "
	    "identity %.128s by another process: two instances share "
	    "identity %.128s; this "
	    "one will not lead while that lasts (give each a unique --id, "
	    "e.g. $POD_NAME)", e->lock, e->conf->identity, e->conf->identity);
	daemon_problem_set(e, PROBLEM_DUPLICATE_IDENTITY, msg);
}

/*
 * A foreign holder whose record asks far more than our lease_duration
 * and that has not renewed for longer than our lease_duration: a hand
 * edit or a ghost, waited out for its whole duration (elector.h).
 */
static void
check_long_lease(struct election *e, uint64_t now_ms)
{
	const struct lease	*o = &e->el.observed;
	char			 msg[LOCALAPI_PROBLEM_MAX];
	char			 ren[APITIME_MICRO_LEN], end[APITIME_MICRO_LEN];
	uint64_t		 exp_ms;

	if (!e->el.have_observed || o->holder[0] == '\0' ||
	    strcmp(o->holder, e->conf->identity) == 0 ||
	    (uint64_t)o->duration_s * 1000 <= PROBLEM_LONG_FACTOR *
	    e->conf->lease_duration_ms) {
		e->pr.holder[0] = '\0';
		daemon_problem_clear(e, PROBLEM_FOREIGN_LONG_LEASE);
		return;
	}
	if (strcmp(o->holder, e->pr.holder) != 0 ||
	    o->renew_us != e->pr.holder_renew_us) {
		snprintf(e->pr.holder, sizeof(e->pr.holder), "%s", o->holder);
		e->pr.holder_renew_us = o->renew_us;
		e->pr.holder_since_ms = now_ms;
		daemon_problem_clear(e, PROBLEM_FOREIGN_LONG_LEASE);
		return;
	}
	if (now_ms - e->pr.holder_since_ms <= e->conf->lease_duration_ms)
		return;
	exp_ms = elector_expires_ms(&e->el);
	daemon_problem_time(o->renew_us, ren);
	daemon_problem_time(clock_wall_us() + (int64_t)(exp_ms > now_ms ? exp_ms -
	    now_ms : 0) * 1000, end);
	snprintf(msg, sizeof(msg), "holder %.128s has not renewed since %s and "
	    "its record asks leaseDurationSeconds %d (ours %llus): probably "
	    "a hand edit or a ghost; nobody takes over before %s; to free "
	    "the lease, set spec.holderIdentity to \"\" or delete the Lease "
	    "(docs/operations.md)", o->holder, ren, o->duration_s,
	    (unsigned long long)(e->conf->lease_duration_ms / 1000), end);
	daemon_problem_set(e, PROBLEM_FOREIGN_LONG_LEASE, msg);
}

/* Not a candidate, and why: the gate's reason with what it rests on. */
static void
check_candidate(struct election *e, uint64_t now_ms)
{
	struct daemon	*d = e->d;
	char		 msg[LOCALAPI_PROBLEM_MAX];

	if (e->st.not_candidate != NULL && d->reason == GATE_UNHEALTHY)
		snprintf(msg, sizeof(msg), "candidate: no (%s): the probe "
		    "%.200s fails: %.200s (%u in a row)", e->st.not_candidate,
		    d->conf->probe_url, d->probe_why[0] != '\0' ?
		    d->probe_why : "unknown", d->gate.run);
	else if (e->st.not_candidate != NULL && d->reason == GATE_PAUSED)
		snprintf(msg, sizeof(msg), "candidate: no (%s): paused by "
		    "POST /leader/pause; `leaderd resume` ends it",
		    e->st.not_candidate);
	else if (e->st.not_candidate != NULL && d->reason == GATE_NO_CLIENT)
		snprintf(msg, sizeof(msg), "candidate: no (%s): "
		    "candidacy.require_client is set and no client follows "
		    "/leader/watch", e->st.not_candidate);
	else if (e->st.not_candidate == NULL && !e->el.passive &&
	    e->el.state != ELECTOR_LEADER &&
	    elector_cooling_down(&e->el, now_ms))
		snprintf(msg, sizeof(msg), "candidate: no (cooldown): no "
		    "takeover for step_down.cooldown after a step-down, or "
		    "candidacy.cooldown after a release for ill health");
	else {
		daemon_problem_clear(e, PROBLEM_NOT_CANDIDATE);
		return;
	}
	daemon_problem_set(e, PROBLEM_NOT_CANDIDATE, msg);
}

void
daemon_problem_step(struct election *e)
{
	uint64_t	 now_ms = clock_mono_ms();

	if (e->d->stopping)
		return;
	check_duplicate(e);
	check_long_lease(e, now_ms);
	check_candidate(e, now_ms);
}

void
daemon_problem_watch(struct election *e, int healthy)
{
	e->pr.watch_up = healthy;
	if (healthy) {
		e->pr.watch_down_ms = 0;
		daemon_problem_clear(e, PROBLEM_WATCH_DOWN);
	} else if (e->pr.watch_down_ms == 0)
		e->pr.watch_down_ms = clock_mono_ms();
}

/* The watch down for longer than renew_deadline. */
static void
check_watch(struct election *e, uint64_t now_ms)
{
	char		 msg[LOCALAPI_PROBLEM_MAX], t[APITIME_MICRO_LEN];
	const char	*why = e->watch != NULL ? watch_error(e->watch) : "";

	/* A shard's watch is its group's: its health comes by the callback. */
	if (e->watch != NULL ? watch_healthy(e->watch) : e->pr.watch_up) {
		/* A live stream keeps confirming the record. */
		e->st.confirmed_us = clock_wall_us();
		e->st.confirmed_ms = now_ms;
		return;
	}
	/* One that never came up (refused at once) is down too. */
	if (e->watch != NULL && e->watch_started && e->pr.watch_down_ms == 0)
		e->pr.watch_down_ms = now_ms;
	if (e->pr.watch_down_ms == 0 ||
	    now_ms - e->pr.watch_down_ms <= e->conf->renew_deadline_ms)
		return;
	daemon_problem_time(clock_wall_us() -
	    (int64_t)(now_ms - e->pr.watch_down_ms) * 1000, t);
	snprintf(msg, sizeof(msg), "the watch is down since %s (%.400s); "
	    "following the lease by polling every retry_period", t,
	    why[0] != '\0' ? why : "no stream yet");
	daemon_problem_set(e, PROBLEM_WATCH_DOWN, msg);
}

static void
tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon	*d = w->data;
	uint64_t	 now_ms = clock_mono_ms();
	int		 i;

	(void)loop;
	(void)revents;
	if (d->stopping)
		return;
	for (i = 0; i < d->nel; i++) {
		check_watch(&d->el[i], now_ms);
		check_long_lease(&d->el[i], now_ms);
		check_candidate(&d->el[i], now_ms);
		remind(&d->el[i], now_ms);
	}
	daemon_split_due(d, now_ms);
}

/* The pod's own namespace: $POD_NAMESPACE, else the service account's. */
static void
pod_namespace(char *buf, size_t len)
{
	const char	*v;
	FILE		*f;

	buf[0] = '\0';
	if ((v = getenv("POD_NAMESPACE")) != NULL && *v != '\0') {
		snprintf(buf, len, "%s", v);
		return;
	}
	if ((f = fopen(SA_NAMESPACE_FILE, "r")) == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, " \t\r\n")] = '\0';
	fclose(f);
}

int
daemon_problem_setup(struct daemon *d, const struct kube_creds *creds,
    const char *ua)
{
	struct election	*e;
	char		 err[512], msg[LOCALAPI_PROBLEM_MAX];
	int		 i, c, checks = 0;

	snprintf(d->pod_name, sizeof(d->pod_name), "%s", d->conf->label_pod);
	pod_namespace(d->pod_ns, sizeof(d->pod_ns));
	d->side_el = -1;
	for (i = 0; i < d->nel; i++) {
		e = &d->el[i];
		for (c = 0; c < 4; c++)
			e->pr.api_code[c] = -1;
		/* Old-style locks beside a Lease, or a Lease beside them. */
		if (strcmp(e->conf->lock_type, "leases") == 0 ||
		    strcmp(e->conf->lock_type, "endpoints") == 0 ||
		    strcmp(e->conf->lock_type, "configmaps") == 0)
			checks = 1;
		else
			e->pr.split_next_ms = UINT64_MAX;
		if (d->conf->compat[0] != '\0' || d->pod_ns[0] == '\0' ||
		    strcmp(d->pod_ns, e->conf->lock_namespace) == 0)
			continue;
		snprintf(msg, sizeof(msg), "the lock's namespace %.128s is "
		    "not this pod's namespace %.128s: instances given another "
		    "--election-namespace elect apart (this may be "
		    "deliberate)", e->conf->lock_namespace, d->pod_ns);
		daemon_problem_set(e, PROBLEM_LOCK_NAMESPACE, msg);
	}
	if (checks && !d->for_life && d->sh == NULL) {
		if ((d->side = kube_new(d->cv, creds, d->token, ua, err,
		    sizeof(err))) == NULL) {
			log_warnx("%s", err);
			return -1;
		}
		kube_set_observer(d->side, daemon_api_observe_cb, d);
		/* Rare checks: no idle connection of theirs in the pool. */
		kube_set_one_shot(d->side);
	}
	ev_timer_init(&d->problem_timer, tick_cb, PROBLEM_TICK_MS / 1000.,
	    PROBLEM_TICK_MS / 1000.);
	d->problem_timer.data = d;
	ev_timer_start(d->loop, &d->problem_timer);
	/* The first check at once, from the loop. */
	ev_feed_event(d->loop, &d->problem_timer, EV_TIMER);
	return 0;
}

void
daemon_problem_free(struct daemon *d)
{
	ev_timer_stop(d->loop, &d->problem_timer);
	if (d->side != NULL)
		kube_free(d->side);
	d->side = NULL;
}

int
daemon_problem_event(struct daemon *d, const struct daemon_event *ev,
    kube_done_cb done_cb)
{
	const struct config	*c = ev->e->conf;
	const char		*lt = c->lock_type, *ns = c->lock_namespace;
	char			*body;
	int			 rv;

	if (d->pod_name[0] != '\0') {
		ns = d->pod_ns[0] != '\0' ? d->pod_ns : ns;
		body = apiobj_encode_warning("v1", "Pod", ns, d->pod_name,
		    c->identity, ev->reason, ev->msg, ev->at_us);
	} else if (strncmp(lt, "endpoints", 9) == 0)
		body = apiobj_encode_warning("v1", "Endpoints", ns,
		    c->lock_name, c->identity, ev->reason, ev->msg, ev->at_us);
	else if (strncmp(lt, "configmaps", 10) == 0)
		body = apiobj_encode_warning("v1", "ConfigMap", ns,
		    c->lock_name, c->identity, ev->reason, ev->msg, ev->at_us);
	else
		body = apiobj_encode_warning("coordination.k8s.io/v1", "Lease",
		    ns, c->lock_name, c->identity, ev->reason, ev->msg,
		    ev->at_us);
	rv = kube_event_create(d->events, ns, body, c->request_timeout_ms,
	    done_cb, ev->e);
	free(body);
	return rv;
}
