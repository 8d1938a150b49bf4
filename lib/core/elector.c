/*
 * elector.c -- the election state machine.  No I/O, no clock, no
 * allocation, no logging: every decision is a function of the state, the
 * input and its time stamps (see elector.h and DESIGN.md "Time").
 *
 * Section numbers refer to ref/clientgo-leaderelection.md.
 */

#include <stdio.h>
#include <string.h>

#include "core/elector.h"

#define MS_PER_S	1000ULL
#define US_PER_S	1000000LL

static const char *const state_names[] = {
	"candidate", "follower", "leader", "stopping", "stopped"
};

const char *
elector_state_name(enum elector_state s)
{
	if ((unsigned)s >= sizeof(state_names) / sizeof(state_names[0]))
		return "unknown";
	return state_names[s];
}

int
elector_check_timing(uint64_t lease_duration_ms, uint64_t renew_deadline_ms,
    uint64_t retry_period_ms, char *err, size_t errlen)
{
	/* The order and wording follow NewLeaderElector (1). */
	if (lease_duration_ms <= renew_deadline_ms) {
		snprintf(err, errlen,
		    "lease_duration must be greater than renew_deadline");
		return -1;
	}
	/* renew_deadline > 1.2 x retry_period, in integers. */
	if (renew_deadline_ms * 5 <= retry_period_ms * 6) {
		snprintf(err, errlen, "renew_deadline must be greater than "
		    "retry_period x 1.2");
		return -1;
	}
	if (lease_duration_ms == 0 || renew_deadline_ms == 0 ||
	    retry_period_ms == 0) {
		snprintf(err, errlen, "%s must be greater than zero",
		    lease_duration_ms == 0 ? "lease_duration" :
		    renew_deadline_ms == 0 ? "renew_deadline" : "retry_period");
		return -1;
	}
	/* leaseDurationSeconds is an integer; client-go floors silently. */
	if (lease_duration_ms % MS_PER_S != 0) {
		snprintf(err, errlen,
		    "lease_duration must be a whole number of seconds");
		return -1;
	}
	return 0;
}

int
elector_init(struct elector *e, const struct elector_config *conf,
    uint64_t now_ms, char *err, size_t errlen)
{
	memset(e, 0, sizeof(*e));
	if (elector_check_timing(conf->lease_duration_ms,
	    conf->renew_deadline_ms, conf->retry_period_ms, err, errlen) == -1)
		return -1;
	if (conf->identity[0] == '\0') {
		snprintf(err, errlen, "identity must not be empty");
		return -1;
	}
	if (conf->request_timeout_ms == 0) {
		snprintf(err, errlen, "request_timeout must be greater than "
		    "zero");
		return -1;
	}
	e->conf = *conf;
	if (e->conf.cooldown_ms == 0)
		e->conf.cooldown_ms = conf->lease_duration_ms;
	e->conf.identity[sizeof(e->conf.identity) - 1] = '\0';
	e->state = ELECTOR_CANDIDATE;
	e->next_kind = ELECTOR_DO_GET;
	e->next_ms = now_ms;
	e->rng = conf->seed ^ 0x9e3779b97f4a7c15ULL;
	if (e->rng == 0)
		e->rng = 1;
	return 0;
}

int
elector_is_leader(const struct elector *e, uint64_t now_ms)
{
	return e->state == ELECTOR_LEADER && now_ms < e->lead_until_ms;
}

const char *
elector_holder(const struct elector *e)
{
	return e->have_observed ? e->observed.holder : "";
}

/*
 * The acquire retry interval: retry_period x [1, 2.2), as client-go's
 * JitterUntil with JitterFactor 1.2 (2.2).
 */
static uint64_t
jitter(struct elector *e)
{
	uint64_t	 r;

	e->rng ^= e->rng << 13;
	e->rng ^= e->rng >> 7;
	e->rng ^= e->rng << 17;
	r = e->rng % 10000;
	return e->conf.retry_period_ms +
	    e->conf.retry_period_ms * 12 * r / 100000;
}

/*
 * While watching, candidates woken by the same watch event (a release,
 * or the expiry they all measured from the same renew) spread their
 * writes over 0-20 ms, so one PUT usually lands alone and the others'
 * 409s are answered by the next watch event, not by a GET storm.
 */
static uint64_t
spread(struct elector *e)
{
	if (!e->watching)
		return 0;
	e->rng ^= e->rng << 13;
	e->rng ^= e->rng >> 7;
	e->rng ^= e->rng << 17;
	return e->rng % 21;
}

static int
is_self(const struct elector *e, const struct lease *rec)
{
	return strcmp(rec->holder, e->conf.identity) == 0;
}

/*
 * A record belongs to our term when it names us and carries the
 * acquireTime and leaseTransitions of the lease this process took.  A
 * record left by another process with our identity has other values and
 * is treated as foreign (see elector.h).
 */
static int
is_ours(const struct elector *e, const struct lease *rec)
{
	return e->have_term && is_self(e, rec) &&
	    rec->acquire_us == e->term_acquire_us &&
	    rec->transitions == e->term_transitions;
}

/*
 * Until when a write of ours that carried renew_us and was sent at
 * sent_ms keeps us leading: renew_deadline from its send time, but never
 * past lease_duration from the first write of the same renewTime second.
 * client-go followers compare records at one-second precision (2.4), so
 * for them a renew in the same second as the one before it changes
 * nothing, and their expiry runs from the first.  The cap only binds
 * when lease_duration < renew_deadline + 1s.
 */
static uint64_t
lead_until(const struct elector *e, int64_t renew_us, uint64_t sent_ms)
{
	unsigned	 i, n;
	uint64_t	 first = sent_ms, until;

	n = e->nsends < ELECTOR_SENDS ? e->nsends : ELECTOR_SENDS;
	for (i = 0; i < n; i++)
		if (e->sends[i].renew_us / US_PER_S == renew_us / US_PER_S &&
		    e->sends[i].sent_ms < first)
			first = e->sends[i].sent_ms;
	until = sent_ms + e->conf.renew_deadline_ms;
	if (until > first + e->conf.lease_duration_ms)
		until = first + e->conf.lease_duration_ms;
	return until;
}

/* The send time of our write that carried renew_us, or 0 if unknown. */
static uint64_t
send_time(const struct elector *e, int64_t renew_us)
{
	unsigned	 i, n;

	n = e->nsends < ELECTOR_SENDS ? e->nsends : ELECTOR_SENDS;
	for (i = 0; i < n; i++)
		if (e->sends[i].renew_us == renew_us)
			return e->sends[i].sent_ms;
	return 0;
}

/*
 * Whether rec is a write this process sent (a takeover or a create whose
 * answer we abandoned or lost): it names us and carries the renewTime of
 * one of our recent writes.
 */
static int
sent_by_us(const struct elector *e, const struct lease *rec)
{
	unsigned	 i, n;

	if (!is_self(e, rec) || rec->renew_us == 0)
		return 0;
	n = e->nsends < ELECTOR_SENDS ? e->nsends : ELECTOR_SENDS;
	for (i = 0; i < n; i++)
		if (!e->sends[i].release &&
		    e->sends[i].renew_us == rec->renew_us)
			return 1;
	return 0;
}

static void
report_holder(struct elector *e, struct elector_action *act)
{
	if (strcmp(e->observed.holder, e->reported) != 0) {
		memcpy(e->reported, e->observed.holder, sizeof(e->reported));
		act->events |= ELECTOR_EV_NEW_LEADER;
	}
}

/*
 * Take in a record read or written.  observed_ms moves when the record
 * changed as client-go compares it (2.4 step 3), or its version did.
 */
static void
observe(struct elector *e, const struct lease *rec, uint64_t now_ms,
    struct elector_action *act)
{
	/*
	 * A new resourceVersion counts as a change too: any write is a sign
	 * of life, even one whose record looks the same (a renew in the same
	 * second, or an answer with renewTime missing, F23).  Waiting longer
	 * than client-go would is safe.
	 */
	if (!e->have_observed || !lease_same_record(&e->observed, rec) ||
	    strcmp(e->observed.rv, rec->rv) != 0)
		e->observed_ms = now_ms;
	if (!e->have_observed)
		act->events |= ELECTOR_EV_OBSERVED;
	/*
	 * A failed write of ours can no longer land once the lock has moved
	 * past the version it went over (the CAS refuses it).
	 */
	if (e->unsure && strcmp(rec->rv, e->write_rv) != 0)
		e->unsure = 0;
	e->observed = *rec;
	e->have_observed = 1;
	e->ours = is_ours(e, rec);
	report_holder(e, act);
}

static void
lose(struct elector *e, enum elector_state to, const char *why,
    struct elector_action *act)
{
	if (e->state == ELECTOR_LEADER) {
		act->events |= ELECTOR_EV_LOST;
		e->why = why;
	}
	e->state = to;
	e->lead_until_ms = 0;
}

static void
become_leader(struct elector *e, struct elector_action *act)
{
	if (e->state != ELECTOR_LEADER)
		act->events |= ELECTOR_EV_LEADING;
	e->state = ELECTOR_LEADER;
}

static void
stopped(struct elector *e, struct elector_action *act)
{
	e->state = ELECTOR_STOPPED;
	e->lead_until_ms = 0;
	e->next_kind = ELECTOR_DO_NOTHING;
	act->events |= ELECTOR_EV_STOPPED;
}

static void
schedule(struct elector *e, enum elector_action_kind kind, uint64_t at_ms)
{
	e->next_kind = kind;
	e->next_release = 0;
	e->next_ms = at_ms;
}

/* When a foreign record stops being live (2.4, DESIGN.md "Time"). */
static uint64_t
expiry(const struct elector *e)
{
	uint64_t	 d = e->conf.lease_duration_ms;

	if ((uint64_t)e->observed.duration_s * MS_PER_S > d)
		d = (uint64_t)e->observed.duration_s * MS_PER_S;
	return e->observed_ms + d;
}

/* What to do after a successful read, in any state but STOPPING. */
static void
decide(struct elector *e, uint64_t now_ms, struct elector_action *act)
{
	uint64_t	 at, sent, until;

	if (e->ours && e->stepdown) {
		/* Stepping down: hand our record back (CAS on its version). */
		schedule(e, ELECTOR_DO_UPDATE, now_ms);
		e->next_release = 1;
		return;
	}
	if (e->ours) {
		/*
		 * Our own record stands, possibly from a write whose answer
		 * was lost: it counts from its send time (reliability a.3.4).
		 */
		if ((sent = send_time(e, e->observed.renew_us)) != 0 &&
		    (until = lead_until(e, e->observed.renew_us, sent)) >
		    e->lead_until_ms)
			e->lead_until_ms = until;
		if (now_ms < e->lead_until_ms)
			become_leader(e, act);
		schedule(e, ELECTOR_DO_UPDATE, now_ms);
		return;
	}
	if (e->state == ELECTOR_LEADER)
		lose(e, ELECTOR_FOLLOWER, e->observed.holder[0] == '\0' ?
		    "the lease was released by someone else" :
		    "another holder took the lease", act);
	/* The record is not ours: nothing is left to release. */
	e->stepdown = 0;
	if (now_ms < e->cooldown_until_ms) {
		/* Cooling down after a step-down: follow, read, never take. */
		e->state = ELECTOR_FOLLOWER;
		at = now_ms + (e->watching ? e->watch_poll_ms : jitter(e));
		if (at > e->cooldown_until_ms)
			at = e->cooldown_until_ms;
		schedule(e, ELECTOR_DO_GET, at);
		return;
	}
	if (e->observed.holder[0] == '\0') {
		/* An empty holder is free at once (2.4). */
		e->state = ELECTOR_CANDIDATE;
		schedule(e, ELECTOR_DO_UPDATE, now_ms + spread(e));
		return;
	}
	if (now_ms >= expiry(e)) {
		e->state = ELECTOR_CANDIDATE;
		schedule(e, ELECTOR_DO_UPDATE, now_ms + spread(e));
		return;
	}
	e->state = ELECTOR_FOLLOWER;
	/*
	 * Poll again after the jittered retry period (or, while a watch
	 * delivers changes, after the slow safety-net period), or take over
	 * right at expiry: an UPDATE carrying the resourceVersion just read
	 * succeeds only if nobody has written since, which is what expiry
	 * means.
	 */
	at = now_ms + (e->watching ? e->watch_poll_ms : jitter(e));
	if (expiry(e) <= at)
		schedule(e, ELECTOR_DO_UPDATE, expiry(e) + spread(e));
	else
		schedule(e, ELECTOR_DO_GET, at);
}

/*
 * A record delivered by the watch, taken like a read.  Our own renew
 * echoed back changes nothing: leadership is extended only by the
 * answers to our writes, counted from their send times.
 */
static void
on_watched(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	observe(e, in->record, in->now_ms, act);
	if (e->state == ELECTOR_LEADER && e->ours)
		return;
	decide(e, in->now_ms, act);
}

static void
on_got(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	observe(e, in->record, in->now_ms, act);
	if (e->state == ELECTOR_STOPPING) {
		if ((e->ours || sent_by_us(e, in->record)) &&
		    e->conf.release_on_cancel) {
			schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
			e->next_release = 1;
		} else
			stopped(e, act);
		return;
	}
	decide(e, in->now_ms, act);
}

static void
on_notfound(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	uint64_t	 at = in->now_ms;

	/*
	 * A 404 after we saw a holder, unless we still lead, is a lease
	 * deleted by hand under someone who may lead (F13).  That holder may lead until renew_deadline after
	 * its last write, and every write it got in was sent before now (a
	 * PUT carrying the old uid cannot land on a new object), so the new
	 * lease is created renew_deadline from now.  client-go creates at
	 * once.  A process that never saw the lease cannot tell a deletion
	 * from a lease that never existed and creates at once.
	 */
	if (e->have_observed && e->observed.holder[0] != '\0' &&
	    !elector_is_leader(e, in->now_ms))
		at = in->now_ms + e->conf.renew_deadline_ms;
	if (!e->have_observed)
		act->events |= ELECTOR_EV_OBSERVED;
	memset(&e->observed, 0, sizeof(e->observed));
	e->have_observed = 1;
	e->observed_ms = in->now_ms;
	e->ours = 0;
	report_holder(e, act);
	if (e->state == ELECTOR_STOPPING) {
		stopped(e, act);
		return;
	}
	/*
	 * The lease is gone (deleted by hand, F13).  Whoever creates it
	 * first leads; until our create succeeds we do not.
	 */
	lose(e, ELECTOR_CANDIDATE, "the lease was deleted", act);
	e->state = ELECTOR_CANDIDATE;
	e->stepdown = 0;
	if (at < e->cooldown_until_ms)
		at = e->cooldown_until_ms;
	schedule(e, ELECTOR_DO_CREATE, at);
}

static void
on_written(struct elector *e, const struct elector_input *in, int release,
    struct elector_action *act)
{
	uint64_t	 until;

	e->conflicts = 0;
	if (!release && !is_self(e, in->record)) {
		/* A write answered with a foreign record: trust the record. */
		observe(e, in->record, in->now_ms, act);
		decide(e, in->now_ms, act);
		return;
	}
	if (!release) {
		e->have_term = 1;
		e->term_acquire_us = in->record->acquire_us;
		e->term_transitions = in->record->transitions;
	}
	observe(e, in->record, in->now_ms, act);
	if (release) {
		act->events |= ELECTOR_EV_RELEASED;
		if (e->state == ELECTOR_STOPPING) {
			stopped(e, act);
			return;
		}
		/* A step-down's release: the cooldown runs from now. */
		e->stepdown = 0;
		e->cooldown_until_ms = in->now_ms + e->conf.cooldown_ms;
		e->state = ELECTOR_FOLLOWER;
		decide(e, in->now_ms, act);
		return;
	}
	if ((until = lead_until(e, in->record->renew_us, e->sent_ms)) >
	    e->lead_until_ms)
		e->lead_until_ms = until;
	if (e->state == ELECTOR_STOPPING || e->stepdown) {
		/* A renew landed after STOP or a step-down: hand it back. */
		schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
		e->next_release = 1;
		e->lead_until_ms = 0;
		return;
	}
	if (in->now_ms < e->lead_until_ms) {
		become_leader(e, act);
		/*
		 * Renew every retry_period after a success (2.3), or at once
		 * when a round trip as slow as this one would otherwise end
		 * the claim before its answer came (F6): with one request in
		 * flight, a renew sent RP after a slow answer lands past the
		 * deadline once 2 x rtt >= renew_deadline - retry_period.
		 */
		e->rtt_ms = in->now_ms - e->sent_ms;
		if (in->now_ms + e->conf.retry_period_ms + e->rtt_ms >=
		    e->lead_until_ms)
			schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
		else
			schedule(e, ELECTOR_DO_UPDATE,
			    in->now_ms + e->conf.retry_period_ms);
	} else {
		/* The answer came too late to lead on; renew at once. */
		lose(e, ELECTOR_CANDIDATE, "the renew answer came after the "
		    "renew deadline", act);
		schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
	}
}

static void
on_conflict(struct elector *e, const struct elector_input *in)
{
	/*
	 * Someone wrote since we read, or an earlier write of ours landed
	 * after all: read the record before deciding anything (2.4, a.3.4).
	 * A second conflict in a row waits a retry period.
	 */
	e->conflicts++;
	schedule(e, ELECTOR_DO_GET, e->conflicts > 1 ?
	    in->now_ms + e->conf.retry_period_ms : in->now_ms);
}

static void
on_failed(struct elector *e, enum elector_action_kind req, int release,
    const struct elector_input *in)
{
	uint64_t	 d;

	/* A write that failed may still land (a timeout, a lost answer). */
	if (req != ELECTOR_DO_GET && !release)
		e->unsure = 1;
	switch (e->state) {
	case ELECTOR_LEADER:
		/* Keep trying every retry period until the deadline (2.3). */
		schedule(e, req, in->now_ms + e->conf.retry_period_ms);
		break;
	case ELECTOR_STOPPING:
		d = e->conf.retry_period_ms < 250 ? e->conf.retry_period_ms :
		    250;
		schedule(e, req, in->now_ms + d);
		e->next_release = release;
		break;
	default:
		schedule(e, ELECTOR_DO_GET, in->now_ms + jitter(e));
		break;
	}
}

/*
 * A stop or a step-down abandons the request in flight: the caller
 * aborts it (act->cancel) and its answer is never fed.  Whatever it was,
 * the server refuses it if it lands after our release, since both carry
 * the version we last saw.
 */
static void
abandon(struct elector *e, struct elector_action *act)
{
	if (e->inflight == ELECTOR_DO_NOTHING)
		return;
	e->inflight = ELECTOR_DO_NOTHING;
	e->releasing = 0;
	act->cancel = 1;
}

static void
on_stop(struct elector *e, const struct elector_input *in,
    enum elector_action_kind req, int release, struct elector_action *act)
{
	if (e->state == ELECTOR_STOPPING || e->state == ELECTOR_STOPPED)
		return;
	lose(e, ELECTOR_STOPPING, "shutting down", act);
	e->stop_until_ms = in->until_ms != 0 ? in->until_ms :
	    in->now_ms + e->conf.request_timeout_ms;
	if (!e->conf.release_on_cancel) {
		stopped(e, act);
		return;
	}
	/* client-go's ReleaseOnCancel cancels the renew in flight (2.6). */
	abandon(e, act);
	if (e->have_observed && (e->ours || sent_by_us(e, &e->observed))) {
		/*
		 * Release at once over the last version we know: our term, or
		 * a takeover of ours whose answer was lost.
		 */
		schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
		e->next_release = 1;
	} else if (req == ELECTOR_DO_CREATE ||
	    (req == ELECTOR_DO_UPDATE && !release) || e->unsure) {
		/*
		 * A takeover or a create, abandoned now or failed before, may
		 * have landed: read, then decide (on_got).
		 */
		schedule(e, ELECTOR_DO_GET, in->now_ms);
	} else
		stopped(e, act);
}

static void
on_step_down(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	if (!elector_is_leader(e, in->now_ms))
		return;
	lose(e, ELECTOR_FOLLOWER, "stepped down", act);
	e->stepdown = 1;
	e->cooldown_until_ms = in->now_ms + e->conf.cooldown_ms;
	/* We lead, so the record observed is ours: release it at once. */
	abandon(e, act);
	schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
	e->next_release = 1;
}

/*
 * The watch went up or down.  Going down while following brings the next
 * read within a jittered retry period, whether the next request was the
 * slow poll or the takeover at expiry (the read decides that again).
 */
static void
on_watch(struct elector *e, const struct elector_input *in)
{
	uint64_t	 at;

	e->watching = in->kind == ELECTOR_IN_WATCH_UP;
	if (e->watching) {
		e->watch_poll_ms = in->poll_ms;
		return;
	}
	if (e->state != ELECTOR_FOLLOWER || e->inflight != ELECTOR_DO_NOTHING)
		return;
	at = in->now_ms + jitter(e);
	if (e->next_kind != ELECTOR_DO_NOTHING && e->next_ms > at)
		schedule(e, ELECTOR_DO_GET, at);
}

/* The watch saw the Lease deleted, or its version expired: read it. */
static void
on_reread(struct elector *e, const struct elector_input *in)
{
	if ((e->state != ELECTOR_FOLLOWER && e->state != ELECTOR_CANDIDATE) ||
	    e->inflight != ELECTOR_DO_NOTHING)
		return;
	schedule(e, ELECTOR_DO_GET, in->now_ms);
}

/* Build the record for the request due now. */
static void
make_record(struct elector *e, const struct elector_input *in,
    struct lease *rec)
{
	int64_t	 wall_us = in->wall_us;

	memset(rec, 0, sizeof(*rec));
	if (e->next_release) {
		/* Release as client-go writes it (2.6). */
		rec->duration_s = 1;
		rec->acquire_us = rec->renew_us = wall_us;
		rec->transitions = e->observed.transitions;
		return;
	}
	memcpy(rec->holder, e->conf.identity, sizeof(rec->holder));
	rec->duration_s = (int32_t)(e->conf.lease_duration_ms / MS_PER_S);
	if (e->next_kind == ELECTOR_DO_CREATE) {
		rec->acquire_us = rec->renew_us = wall_us;
		return;
	}
	if (e->ours) {
		/* A renew keeps acquireTime and leaseTransitions (2.4). */
		rec->acquire_us = e->observed.acquire_us;
		rec->transitions = e->observed.transitions;
		rec->renew_us = wall_us;
	} else {
		/* A takeover: a new term (2.4 step 4). */
		rec->acquire_us = rec->renew_us = wall_us;
		rec->transitions = e->observed.transitions + 1;
	}
}

static void
send_due(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	uint64_t	 now_ms = in->now_ms, limit = 0;
	struct elector_send *s;

	act->kind = e->next_kind;
	if (act->kind != ELECTOR_DO_GET)
		make_record(e, in, &act->record);
	if (act->kind == ELECTOR_DO_UPDATE && !e->next_release &&
	    !e->have_observed)
		act->kind = ELECTOR_DO_GET;	/* nothing to write over yet */
	act->timeout_ms = e->conf.request_timeout_ms;
	/*
	 * A renew may run past the end of the claim it extends (F6): the
	 * claim still ends at lead_until_ms, judged by the clock, and a late
	 * success counts from its send time, so waiting for the answer up to
	 * renew_deadline costs no safety and keeps a leader whose API round
	 * trips are slow but below renew_deadline.  Only shutdown keeps its
	 * hard bound.
	 */
	if (e->state == ELECTOR_LEADER &&
	    act->timeout_ms > e->conf.renew_deadline_ms)
		act->timeout_ms = e->conf.renew_deadline_ms;
	else if (e->state == ELECTOR_STOPPING)
		limit = e->stop_until_ms;
	if (limit != 0 && limit - now_ms < act->timeout_ms)
		act->timeout_ms = limit - now_ms;
	if (act->kind != ELECTOR_DO_GET && !e->next_release)
		snprintf(e->write_rv, sizeof(e->write_rv), "%s",
		    act->kind == ELECTOR_DO_UPDATE ? e->observed.rv : "");
	if (act->kind != ELECTOR_DO_GET) {
		s = &e->sends[e->nsends++ % ELECTOR_SENDS];
		s->renew_us = act->record.renew_us;
		s->sent_ms = now_ms;
		s->release = e->next_release;
	}
	e->inflight = act->kind;
	e->releasing = e->next_release;
	e->sent_ms = now_ms;
	e->next_kind = ELECTOR_DO_NOTHING;
	e->next_release = 0;
}

void
elector_step(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	enum elector_action_kind req = e->inflight;
	int			 release = e->releasing;
	uint64_t		 now_ms = in->now_ms, wake;

	memset(act, 0, sizeof(*act));
	act->kind = ELECTOR_DO_NOTHING;

	if (in->kind == ELECTOR_IN_WATCHED &&
	    (!elector_takes_watched(e) || in->record == NULL))
		goto out;	/* the caller feeds it after the answer */
	if (in->kind == ELECTOR_IN_GOT || in->kind == ELECTOR_IN_NOTFOUND ||
	    in->kind == ELECTOR_IN_WRITTEN || in->kind == ELECTOR_IN_CONFLICT ||
	    in->kind == ELECTOR_IN_FAILED) {
		/* An answer: ignore one that nothing asked for. */
		if (req == ELECTOR_DO_NOTHING || e->state == ELECTOR_STOPPED)
			goto out;
		/* GOT answers a GET; WRITTEN answers a CREATE or UPDATE. */
		if ((in->kind == ELECTOR_IN_GOT) != (req == ELECTOR_DO_GET) &&
		    (in->kind == ELECTOR_IN_GOT ||
		    in->kind == ELECTOR_IN_WRITTEN))
			goto out;
		e->inflight = ELECTOR_DO_NOTHING;
		e->releasing = 0;
		if ((in->kind == ELECTOR_IN_GOT ||
		    in->kind == ELECTOR_IN_WRITTEN) && in->record == NULL)
			goto out;
	}

	switch (in->kind) {
	case ELECTOR_IN_TICK:
		break;
	case ELECTOR_IN_GOT:
		on_got(e, in, act);
		break;
	case ELECTOR_IN_NOTFOUND:
		on_notfound(e, in, act);
		break;
	case ELECTOR_IN_WRITTEN:
		on_written(e, in, release, act);
		break;
	case ELECTOR_IN_CONFLICT:
		on_conflict(e, in);
		break;
	case ELECTOR_IN_FAILED:
		on_failed(e, req, release, in);
		break;
	case ELECTOR_IN_STOP:
		on_stop(e, in, req, release, act);
		break;
	case ELECTOR_IN_WATCHED:
		on_watched(e, in, act);
		break;
	case ELECTOR_IN_STEP_DOWN:
		on_step_down(e, in, act);
		break;
	case ELECTOR_IN_WATCH_UP:
	case ELECTOR_IN_WATCH_DOWN:
		on_watch(e, in);
		break;
	case ELECTOR_IN_REREAD:
		on_reread(e, in);
		break;
	}

	/* Deadlines hold whatever the input was. */
	if (e->state == ELECTOR_LEADER && now_ms >= e->lead_until_ms) {
		lose(e, ELECTOR_CANDIDATE, "no renew succeeded within "
		    "renew_deadline", act);
		/* Go back to competing (7.1 item 17): read, then decide. */
		schedule(e, ELECTOR_DO_GET, now_ms + jitter(e));
	}
	if (e->state == ELECTOR_STOPPING && now_ms >= e->stop_until_ms)
		stopped(e, act);

	if (e->state != ELECTOR_STOPPED &&
	    e->inflight == ELECTOR_DO_NOTHING &&
	    e->next_kind != ELECTOR_DO_NOTHING && now_ms >= e->next_ms)
		send_due(e, in, act);

out:
	wake = 0;
	if (e->state != ELECTOR_STOPPED) {
		if (e->inflight == ELECTOR_DO_NOTHING &&
		    e->next_kind != ELECTOR_DO_NOTHING)
			wake = e->next_ms;
		if (e->state == ELECTOR_LEADER &&
		    (wake == 0 || e->lead_until_ms < wake))
			wake = e->lead_until_ms;
		if (e->state == ELECTOR_STOPPING &&
		    (wake == 0 || e->stop_until_ms < wake))
			wake = e->stop_until_ms;
	}
	act->wake_ms = wake;
}

int
elector_takes_watched(const struct elector *e)
{
	return e->inflight == ELECTOR_DO_NOTHING &&
	    e->state != ELECTOR_STOPPING && e->state != ELECTOR_STOPPED;
}
