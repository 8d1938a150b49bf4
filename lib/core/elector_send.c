/*
 * elector_send.c -- the elector's set-up, its moves of state, its
 * requests and its queries: the record taken in and the few moves the
 * handlers make (lose, lead, stop, schedule), the random draws that time
 * its retries, the ring of its recent writes and what is asked of it
 * (whose record is this, when was it sent, until when does it keep us
 * leading), the building and sending of the request due, and the
 * read-only queries of elector.h.  Like elector.c it does no I/O, reads
 * no clock, allocates nothing and never logs.
 *
 * It is a file apart so that the transition table stays whole in
 * elector.c and elector_handover.c: nothing here decides what to do
 * next.  The handlers decide, and call in here to move the state, to draw
 * a time, to ask about our writes, or to send what they scheduled
 * (elector_int.h).
 *
 * Section numbers refer to ref/clientgo-leaderelection.md.
 */

#include <stdio.h>
#include <string.h>

#include "core/elector.h"
#include "core/elector_int.h"

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
	e->coordinated = conf->coordinated && !conf->for_life;
	/* For life, nothing is ever written after the create. */
	if (e->conf.for_life)
		e->conf.release_on_cancel = 0;
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
elector_cooling_down(const struct elector *e, uint64_t now_ms)
{
	return !e->passive && e->state != ELECTOR_STOPPING &&
	    e->state != ELECTOR_STOPPED && now_ms < e->cooldown_until_ms;
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

/* When a foreign record stops being live (2.4, DESIGN.md "Time"). */
uint64_t
elector_expires_ms(const struct elector *e)
{
	uint64_t	 d = e->conf.lease_duration_ms;

	if ((uint64_t)e->observed.duration_s * MS_PER_S > d)
		d = (uint64_t)e->observed.duration_s * MS_PER_S;
	return e->observed_ms + d;
}

/* ELECTOR_EV_NEW_LEADER if the holder observed is not the one reported. */
void
elector_report_holder(struct elector *e, struct elector_action *act)
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
void
elector_observe(struct elector *e, const struct lease *rec, uint64_t now_ms,
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
	e->ours = elector_is_ours(e, rec);
	elector_report_holder(e, act);
}

void
elector_lose(struct elector *e, enum elector_state to, const char *why,
    struct elector_action *act)
{
	if (e->state == ELECTOR_LEADER) {
		act->events |= ELECTOR_EV_LOST;
		e->why = why;
	}
	e->state = to;
	e->lead_until_ms = 0;
}

void
elector_become_leader(struct elector *e, struct elector_action *act)
{
	if (e->state != ELECTOR_LEADER)
		act->events |= ELECTOR_EV_LEADING;
	e->state = ELECTOR_LEADER;
}

void
elector_stopped(struct elector *e, struct elector_action *act)
{
	e->state = ELECTOR_STOPPED;
	e->lead_until_ms = 0;
	e->next_kind = ELECTOR_DO_NOTHING;
	act->events |= ELECTOR_EV_STOPPED;
}

void
elector_schedule(struct elector *e, enum elector_action_kind kind,
    uint64_t at_ms)
{
	e->next_kind = kind;
	e->next_release = 0;
	e->next_ms = at_ms;
}

/* A draw in [0, n) from the xorshift64 state. */
static uint64_t
draw(struct elector *e, uint64_t n)
{
	e->rng ^= e->rng << 13;
	e->rng ^= e->rng >> 7;
	e->rng ^= e->rng << 17;
	return e->rng % n;
}

/*
 * The acquire retry interval: retry_period x [1, 2.2), as client-go's
 * JitterUntil with JitterFactor 1.2 (2.2).
 */
uint64_t
elector_jitter(struct elector *e)
{
	return e->conf.retry_period_ms +
	    e->conf.retry_period_ms * 12 * draw(e, 10000) / 100000;
}

/*
 * The retry after a failed request.  One that failed fast (refused, a
 * 503) is retried within retry_period x [0.5, 1): at least once per
 * retry_period, so a lone elector is back within one retry_period of the
 * API server's recovery, and still spread over half a period, so a herd
 * that failed together does not retry together.  Requests that ran to
 * their timeout are held somewhere: by an API server stopped or
 * overloaded, whose queue serves them all the moment it recovers, or
 * by a black hole on the way.  Each one in a row doubles the window,
 * retry_period x 2^hung up to lease_duration, and the retry is drawn
 * from its upper half: a herd then keeps fewer requests waiting in the
 * server's queue, and comes back spread over the window.
 */
uint64_t
elector_retry_jitter(struct elector *e)
{
	uint64_t	 w = e->conf.retry_period_ms, cap;
	unsigned	 i;

	cap = e->conf.lease_duration_ms > w ? e->conf.lease_duration_ms : w;
	for (i = 0; i < e->hung && w < cap; i++)
		w *= 2;
	if (w > cap)
		w = cap;
	return w / 2 + w * draw(e, 10000) / 20000;
}

/*
 * While watching, candidates woken by the same watch event (a release,
 * or the expiry they all measured from the same renew) spread their
 * writes over 0-20 ms, so one PUT usually lands alone and the others'
 * 409s are answered by the next watch event, not by a GET storm.
 */
uint64_t
elector_spread(struct elector *e)
{
	if (!e->watching)
		return 0;
	return draw(e, 21);
}

int
elector_is_self(const struct elector *e, const struct lease *rec)
{
	return strcmp(rec->holder, e->conf.identity) == 0;
}

/*
 * A record belongs to our term when it names us and carries the
 * acquireTime and leaseTransitions of the lease this process took.  A
 * record left by another process with our identity has other values and
 * is treated as foreign (see elector.h).
 */
int
elector_is_ours(const struct elector *e, const struct lease *rec)
{
	/* For life, a record naming us is ours, whoever wrote it. */
	if (e->conf.for_life)
		return elector_is_self(e, rec);
	return e->have_term && elector_is_self(e, rec) &&
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
uint64_t
elector_lead_until(const struct elector *e, int64_t renew_us, uint64_t sent_ms)
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
uint64_t
elector_send_time(const struct elector *e, int64_t renew_us)
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
int
elector_sent_by_us(const struct elector *e, const struct lease *rec)
{
	unsigned	 i, n;

	if (!elector_is_self(e, rec) || rec->renew_us == 0)
		return 0;
	n = e->nsends < ELECTOR_SENDS ? e->nsends : ELECTOR_SENDS;
	for (i = 0; i < n; i++)
		if (!e->sends[i].release &&
		    e->sends[i].renew_us == rec->renew_us)
			return 1;
	return 0;
}

/* Build the record for the request due now. */
static void
make_record(struct elector *e, const struct elector_input *in,
    struct lease *rec)
{
	int64_t	 wall_us = in->wall_us;

	memset(rec, 0, sizeof(*rec));
	/* Coordinated election's fields stay as the record has them. */
	memcpy(rec->strategy, e->observed.strategy, sizeof(rec->strategy));
	memcpy(rec->preferred, e->observed.preferred, sizeof(rec->preferred));
	if (e->next_release && e->handover_to[0] != '\0') {
		/* A directed handover: a new term for the successor. */
		memcpy(rec->holder, e->handover_to, sizeof(rec->holder));
		memcpy(rec->handover, e->handover_to, sizeof(rec->handover));
		rec->duration_s = (int32_t)(e->conf.lease_duration_ms /
		    MS_PER_S);
		rec->acquire_us = rec->renew_us = wall_us;
		rec->transitions = e->observed.transitions + 1;
		/*
		 * The preferred holder is served: clear it, as the controller
		 * does when it assigns (client-go's coordinated elector does
		 * not renew a lease that names one).
		 */
		if (strcmp(rec->preferred, e->handover_to) == 0)
			rec->preferred[0] = '\0';
		return;
	}
	if (e->next_release) {
		/* Release as client-go writes it (2.6). */
		rec->duration_s = 1;
		rec->acquire_us = rec->renew_us = wall_us;
		rec->transitions = e->observed.transitions;
		return;
	}
	memcpy(rec->holder, e->conf.identity, sizeof(rec->holder));
	if (e->conf.for_life) {
		/* nais/elector's record: holderIdentity and acquireTime. */
		rec->acquire_us = wall_us;
		return;
	}
	rec->duration_s = (int32_t)(e->conf.lease_duration_ms / MS_PER_S);
	if (e->next_kind == ELECTOR_DO_CREATE) {
		rec->acquire_us = rec->renew_us = wall_us;
		return;
	}
	if (e->ours || e->handed) {
		/*
		 * A renew keeps acquireTime and leaseTransitions (2.4); so
		 * does the first write of a lease handed to us, whose term
		 * the handover began.
		 */
		rec->acquire_us = e->observed.acquire_us;
		rec->transitions = e->observed.transitions;
		rec->renew_us = wall_us;
	} else {
		/* A takeover: a new term (2.4 step 4). */
		rec->acquire_us = rec->renew_us = wall_us;
		rec->transitions = e->observed.transitions + 1;
	}
}

/* Coordinated: every write carries its renewTime as our mark. */
static void
mark_record(const struct elector *e, struct lease *rec)
{
	if (e->coordinated)
		rec->mark_us = rec->renew_us;
}

void
elector_send_due(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	uint64_t	 now_ms = in->now_ms, limit = 0;
	struct elector_send *s;

	act->kind = e->next_kind;
	if (act->kind != ELECTOR_DO_GET) {
		make_record(e, in, &act->record);
		mark_record(e, &act->record);
	}
	e->handed = 0;
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
	e->req_timeout_ms = act->timeout_ms;
	e->next_kind = ELECTOR_DO_NOTHING;
	e->next_release = 0;
}

int
elector_takes_watched(const struct elector *e)
{
	return e->inflight == ELECTOR_DO_NOTHING &&
	    e->state != ELECTOR_STOPPING && e->state != ELECTOR_STOPPED;
}
