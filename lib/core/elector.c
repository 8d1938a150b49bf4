/*
 * elector.c -- the election state machine's transitions: elector_step,
 * decide, and the handlers of what the API server says (a read, a write's
 * answer, a failure, the watch).  No I/O, no clock, no allocation, no
 * logging: every decision is a function of the state, the input and its
 * time stamps (see elector.h and DESIGN.md "Time").
 *
 * elector_handover.c holds the handlers of what the daemon asks (stop,
 * step down, candidacy, handover, coordinated election); elector_send.c
 * what the table uses without deciding (set-up, the moves of state, the
 * random draws, our recent writes, the request due, the queries);
 * elector_int.h what the three files share.
 *
 * Section numbers refer to ref/clientgo-leaderelection.md.
 */

#include <string.h>

#include "codec/apiobj.h"
#include "core/elector.h"
#include "core/elector_int.h"

/*
 * decide for life (elector.h): the holder the record names leads while
 * the record exists.  Lead if it names us, else follow, never take it;
 * read again at the poll period to see it go.
 */
static void
decide_for_life(struct elector *e, uint64_t now_ms,
    struct elector_action *act)
{
	if (elector_is_self(e, &e->observed)) {
		e->lead_until_ms = ELECTOR_FOR_LIFE_MS;
		elector_become_leader(e, act);
	} else if (e->state == ELECTOR_LEADER)
		elector_lose(e, ELECTOR_FOLLOWER,
		    e->observed.holder[0] == '\0' ?
		    "the lease names no holder" :
		    "another holder took the lease", act);
	else
		e->state = ELECTOR_FOLLOWER;
	elector_schedule(e, ELECTOR_DO_GET, now_ms + (e->watching ?
	    e->watch_poll_ms : elector_jitter(e)));
}

/*
 * Coordinated and watching: the controller assigns the lease once it
 * expires, and a watch on a frozen API server delivers nothing without
 * breaking.  So read at the expiry of the record observed, and every
 * jittered retry period after it, if that comes before `at` (the watch's
 * safety-net poll).  A live holder's renews, watched, move it on.
 */
static uint64_t
coordinated_read(struct elector *e, uint64_t now_ms, uint64_t at)
{
	uint64_t	 exp = elector_expires_ms(e), r;

	r = now_ms >= exp ? now_ms + elector_jitter(e) : exp;
	return r < at ? r : at;
}

/* What to do after a successful read, in any state but STOPPING. */
static void
decide(struct elector *e, uint64_t now_ms, struct elector_action *act)
{
	uint64_t	 at, sent, until;

	if (e->conf.for_life) {
		decide_for_life(e, now_ms, act);
		return;
	}
	if (e->ours && e->passive)
		e->stepdown = 1;
	if (e->ours && e->stepdown) {
		/* Stepping down: hand our record back (CAS on its version). */
		elector_schedule(e, ELECTOR_DO_UPDATE, now_ms);
		e->next_release = 1;
		return;
	}
	if (e->ours && elector_preferred_due(e, now_ms)) {
		/* The record prefers another holder: hand it over now. */
		elector_hand_over(e, now_ms, elector_preferred_other(e), act);
		return;
	}
	if (e->ours) {
		/*
		 * Our own record stands, possibly from a write whose answer
		 * was lost: it counts from its send time (reliability a.3.4).
		 */
		if ((sent = elector_send_time(e, e->observed.renew_us)) != 0 &&
		    (until = elector_lead_until(e, e->observed.renew_us,
		    sent)) > e->lead_until_ms)
			e->lead_until_ms = until;
		if (now_ms < e->lead_until_ms)
			elector_become_leader(e, act);
		elector_schedule(e, ELECTOR_DO_UPDATE, now_ms);
		return;
	}
	if (e->state == ELECTOR_LEADER)
		elector_lose(e, ELECTOR_FOLLOWER,
		    e->observed.holder[0] == '\0' ?
		    "the lease was released by someone else" :
		    "another holder took the lease", act);
	/* The record is not ours: nothing is left to release. */
	e->stepdown = 0;
	e->handover_to[0] = '\0';
	if (!e->passive && elector_handed_to_us(e, &e->observed)) {
		/* Handed to us: renew it as ours, at once. */
		e->state = ELECTOR_CANDIDATE;
		e->handed = 1;
		elector_schedule(e, ELECTOR_DO_UPDATE, now_ms);
		return;
	}
	if (!e->passive && now_ms >= e->cooldown_until_ms &&
	    elector_assigned_to_us(e, &e->observed)) {
		/* The controller chose us: renew it as a new term of ours. */
		e->state = ELECTOR_CANDIDATE;
		elector_schedule(e, ELECTOR_DO_UPDATE, now_ms);
		return;
	}
	if (e->passive || now_ms < e->cooldown_until_ms || e->coordinated) {
		/*
		 * Not a candidate, cooling down after a step-down, or
		 * coordinated (the controller assigns the lease): follow,
		 * read, never take.
		 */
		e->state = ELECTOR_FOLLOWER;
		at = now_ms + (e->watching ? e->watch_poll_ms :
		    elector_jitter(e));
		if (e->coordinated && e->watching && !e->passive)
			at = coordinated_read(e, now_ms, at);
		if (!e->passive && at > e->cooldown_until_ms &&
		    now_ms < e->cooldown_until_ms)
			at = e->cooldown_until_ms;
		elector_schedule(e, ELECTOR_DO_GET, at);
		return;
	}
	if (e->observed.holder[0] == '\0') {
		/* An empty holder is free at once (2.4). */
		e->state = ELECTOR_CANDIDATE;
		elector_schedule(e, ELECTOR_DO_UPDATE,
		    now_ms + elector_spread(e));
		return;
	}
	if (now_ms >= elector_expires_ms(e)) {
		e->state = ELECTOR_CANDIDATE;
		elector_schedule(e, ELECTOR_DO_UPDATE,
		    now_ms + elector_spread(e));
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
	at = now_ms + (e->watching ? e->watch_poll_ms : elector_jitter(e));
	if (elector_expires_ms(e) <= at)
		elector_schedule(e, ELECTOR_DO_UPDATE,
		    elector_expires_ms(e) + elector_spread(e));
	else
		elector_schedule(e, ELECTOR_DO_GET, at);
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
	elector_observe(e, in->record, in->now_ms, act);
	if (e->state == ELECTOR_LEADER && e->ours &&
	    !elector_preferred_due(e, in->now_ms))
		return;
	decide(e, in->now_ms, act);
}

/*
 * A read answered from the past: a version older than the record
 * observed, as a lagging cache serves it (another API server's, or a GET
 * served from the watch cache).  It says nothing new, and taken as news
 * it would move observed_ms (another holder's term seen to run longer
 * than its newest version allows) or make our own renew of a term we
 * have since released or handed over look like a claim.
 */
static int
older_than_observed(const struct elector *e, const struct lease *rec)
{
	return e->have_observed && rec->rv[0] != '\0' &&
	    strcmp(rec->rv, e->observed.rv) != 0 &&
	    !apiobj_rv_newer(rec->rv, e->observed.rv);
}

static void
on_got(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	struct lease		 newest;
	const struct lease	*rec = in->record;

	/* Decide on the newest record instead, as it was observed. */
	if (older_than_observed(e, rec)) {
		newest = e->observed;
		rec = &newest;
	}
	elector_observe(e, rec, in->now_ms, act);
	if (e->state == ELECTOR_STOPPING) {
		if ((e->ours || elector_sent_by_us(e, rec)) &&
		    e->conf.release_on_cancel) {
			elector_schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
			e->next_release = 1;
		} else
			elector_stopped(e, act);
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
	 * from a lease that never existed and creates at once.  For life
	 * there is no such bound to wait out: nais/elector creates at once.
	 */
	if (e->have_observed && e->observed.holder[0] != '\0' &&
	    !elector_is_leader(e, in->now_ms) && !e->conf.for_life)
		e->create_after_ms = in->now_ms + e->conf.renew_deadline_ms;
	/*
	 * A later 404 finds no holder to wait for (observed was cleared),
	 * but the one seen before the deletion may still lead: the bound
	 * set then holds until it passes.
	 */
	if (at < e->create_after_ms)
		at = e->create_after_ms;
	if (!e->have_observed)
		act->events |= ELECTOR_EV_OBSERVED;
	memset(&e->observed, 0, sizeof(e->observed));
	e->have_observed = 1;
	e->observed_ms = in->now_ms;
	e->ours = 0;
	elector_report_holder(e, act);
	if (e->state == ELECTOR_STOPPING) {
		elector_stopped(e, act);
		return;
	}
	/*
	 * The lease is gone (deleted by hand, F13).  Whoever creates it
	 * first leads; until our create succeeds we do not.
	 */
	elector_lose(e, ELECTOR_CANDIDATE, "the lease was deleted", act);
	e->state = ELECTOR_CANDIDATE;
	e->stepdown = 0;
	if (e->passive || e->coordinated) {
		/*
		 * Not a candidate, or coordinated (the controller creates
		 * it): read again, never create.
		 */
		e->state = ELECTOR_FOLLOWER;
		elector_schedule(e, ELECTOR_DO_GET, in->now_ms + (e->watching ?
		    e->watch_poll_ms : elector_jitter(e)));
		return;
	}
	if (at < e->cooldown_until_ms)
		at = e->cooldown_until_ms;
	elector_schedule(e, ELECTOR_DO_CREATE, at);
}

static void
on_written(struct elector *e, const struct elector_input *in, int release,
    struct elector_action *act)
{
	uint64_t	 until;

	e->conflicts = 0;
	if (!release && !elector_is_self(e, in->record)) {
		/* A write answered with a foreign record: trust the record. */
		elector_observe(e, in->record, in->now_ms, act);
		decide(e, in->now_ms, act);
		return;
	}
	if (!release) {
		elector_hold_term(e);
		e->have_term = 1;
		e->term_acquire_us = in->record->acquire_us;
		e->term_transitions = in->record->transitions;
	}
	elector_observe(e, in->record, in->now_ms, act);
	if (e->conf.for_life) {
		/* Our create: we lead for as long as it stands. */
		decide(e, in->now_ms, act);
		return;
	}
	if (release) {
		act->events |= ELECTOR_EV_RELEASED;
		if (e->handover_to[0] != '\0')
			act->events |= ELECTOR_EV_HANDED;
		e->handover_to[0] = '\0';
		if (e->state == ELECTOR_STOPPING) {
			elector_stopped(e, act);
			return;
		}
		/* A step-down's release: the cooldown runs from now. */
		e->stepdown = 0;
		e->cooldown_until_ms = in->now_ms + e->release_cooldown_ms;
		e->state = ELECTOR_FOLLOWER;
		decide(e, in->now_ms, act);
		return;
	}
	if ((until = elector_lead_until(e, in->record->renew_us, e->sent_ms)) >
	    e->lead_until_ms)
		e->lead_until_ms = until;
	if (e->state == ELECTOR_STOPPING || e->stepdown || e->passive) {
		/*
		 * A renew landed after STOP or a step-down, or a takeover
		 * after candidacy ended: hand it back.
		 */
		if (e->passive && e->state != ELECTOR_STOPPING) {
			e->stepdown = 1;
			e->state = ELECTOR_FOLLOWER;
		}
		elector_schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
		e->next_release = 1;
		e->lead_until_ms = 0;
		return;
	}
	if (in->now_ms < e->lead_until_ms) {
		if (elector_preferred_due(e, in->now_ms)) {
			/*
			 * Our record prefers another holder and the term's
			 * hold has passed: hand over (a leader that does not
			 * watch sees preferredHolder here).
			 */
			elector_hand_over(e, in->now_ms,
			    elector_preferred_other(e), act);
			return;
		}
		elector_become_leader(e, act);
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
			elector_schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
		else
			elector_schedule(e, ELECTOR_DO_UPDATE,
			    in->now_ms + e->conf.retry_period_ms);
	} else {
		/* The answer came too late to lead on; renew at once. */
		elector_lose(e, ELECTOR_CANDIDATE, "the renew answer came "
		    "after the renew deadline", act);
		elector_schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
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
	elector_schedule(e, ELECTOR_DO_GET, e->conflicts > 1 ?
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
		elector_schedule(e, req, in->now_ms + e->conf.retry_period_ms);
		break;
	case ELECTOR_STOPPING:
		d = e->conf.retry_period_ms < 250 ? e->conf.retry_period_ms :
		    250;
		elector_schedule(e, req, in->now_ms + d);
		e->next_release = release;
		break;
	default:
		/*
		 * Within a retry period, jittered; later after requests
		 * that hung (elector_retry_jitter).
		 */
		elector_schedule(e, ELECTOR_DO_GET,
		    in->now_ms + elector_retry_jitter(e));
		break;
	}
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
	/* A leader for life polls as a follower does, to see the end. */
	if ((e->state != ELECTOR_FOLLOWER && !(e->conf.for_life &&
	    e->state == ELECTOR_LEADER)) || e->inflight != ELECTOR_DO_NOTHING)
		return;
	at = in->now_ms + elector_jitter(e);
	if (e->next_kind != ELECTOR_DO_NOTHING && e->next_ms > at)
		elector_schedule(e, ELECTOR_DO_GET, at);
}

/*
 * The watch saw the Lease deleted, or its version expired: read it.  A
 * leader finds out at its next renew, but a leader for life never
 * writes, so it reads too.
 */
static void
on_reread(struct elector *e, const struct elector_input *in)
{
	if ((e->state != ELECTOR_FOLLOWER && e->state != ELECTOR_CANDIDATE &&
	    !(e->conf.for_life && e->state == ELECTOR_LEADER)) ||
	    e->inflight != ELECTOR_DO_NOTHING)
		return;
	elector_schedule(e, ELECTOR_DO_GET, in->now_ms);
}

void
elector_step(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	enum elector_action_kind req = e->inflight;
	int			 release = e->releasing;
	uint64_t		 now_ms = in->now_ms, wake, at;

	memset(act, 0, sizeof(*act));
	act->kind = ELECTOR_DO_NOTHING;

	if (in->kind == ELECTOR_IN_WATCHED &&
	    (!elector_takes_watched(e) || in->record == NULL))
		goto out;	/* the caller feeds it after the answer */
	if (in->kind == ELECTOR_IN_WATCHED &&
	    older_than_observed(e, in->record))
		goto out;	/* replayed, or reordered: nothing new */
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
		/* A failure that took its whole timeout hung (the retry). */
		if (in->kind == ELECTOR_IN_FAILED && now_ms - e->sent_ms +
		    e->req_timeout_ms / 10 >= e->req_timeout_ms)
			e->hung++;
		else
			e->hung = 0;
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
		elector_on_stop(e, in, req, release, act);
		break;
	case ELECTOR_IN_WATCHED:
		on_watched(e, in, act);
		break;
	case ELECTOR_IN_STEP_DOWN:
		elector_on_step_down(e, in, act);
		break;
	case ELECTOR_IN_WATCH_UP:
	case ELECTOR_IN_WATCH_DOWN:
		on_watch(e, in);
		break;
	case ELECTOR_IN_REREAD:
		on_reread(e, in);
		break;
	case ELECTOR_IN_CANDIDACY:
		elector_on_candidacy(e, in, act);
		break;
	case ELECTOR_IN_HANDOVER:
		elector_on_handover(e, in, act);
		break;
	case ELECTOR_IN_COORDINATED:
		elector_on_coordinated(e, in);
		break;
	}

	/* Deadlines hold whatever the input was. */
	if (e->state == ELECTOR_LEADER && now_ms >= e->lead_until_ms) {
		elector_lose(e, ELECTOR_CANDIDATE, "no renew succeeded within "
		    "renew_deadline", act);
		/*
		 * Go back to competing (7.1 item 17): read, then decide,
		 * within a retry period as after any failure, and no later
		 * than the renew that was due.
		 */
		at = now_ms + elector_retry_jitter(e);
		if (e->next_kind != ELECTOR_DO_NOTHING && e->next_ms < at)
			at = e->next_ms;
		elector_schedule(e, ELECTOR_DO_GET, at);
	}
	if (e->state == ELECTOR_STOPPING && now_ms >= e->stop_until_ms)
		elector_stopped(e, act);

	if (e->state != ELECTOR_STOPPED &&
	    e->inflight == ELECTOR_DO_NOTHING &&
	    e->next_kind != ELECTOR_DO_NOTHING && now_ms >= e->next_ms)
		elector_send_due(e, in, act);

out:
	wake = 0;
	if (e->state != ELECTOR_STOPPED) {
		if (e->inflight == ELECTOR_DO_NOTHING &&
		    e->next_kind != ELECTOR_DO_NOTHING)
			wake = e->next_ms;
		if (e->state == ELECTOR_LEADER &&
		    e->lead_until_ms != ELECTOR_FOR_LIFE_MS &&
		    (wake == 0 || e->lead_until_ms < wake))
			wake = e->lead_until_ms;
		if (e->state == ELECTOR_STOPPING &&
		    (wake == 0 || e->stop_until_ms < wake))
			wake = e->stop_until_ms;
	}
	act->wake_ms = wake;
}
