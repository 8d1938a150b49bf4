/*
 * elector_handover.c -- the elector's handlers of what the daemon asks:
 * STOP, STEP_DOWN, CANDIDACY, HANDOVER and COORDINATED, the ways the
 * lease is handed back, handed on, or left for a controller to assign;
 * and the tests decide (elector.c) makes of a record handed over to us,
 * preferring another holder, or assigned to us.  Pure, as elector.c is:
 * no I/O, no clock, no allocation, no logging.
 *
 * It stands beside the transition table's core in elector.c, which
 * dispatches to it from elector_step (elector_int.h).
 *
 * Section numbers refer to ref/clientgo-leaderelection.md.
 */

#include <stdio.h>
#include <string.h>

#include "core/elector.h"
#include "core/elector_int.h"

/*
 * Whether rec is a lease handed to us (elector.h, HANDOVER): it names us
 * and says so in its handover annotation, starts a term (acquireTime =
 * renewTime), and is not a write of this process.
 */
int
elector_handed_to_us(const struct elector *e, const struct lease *rec)
{
	return elector_is_self(e, rec) &&
	    strcmp(rec->handover, e->conf.identity) == 0 &&
	    rec->acquire_us != 0 && rec->acquire_us == rec->renew_us &&
	    !elector_sent_by_us(e, rec);
}

/*
 * Whether rec is a lease assigned to us in coordinated mode (elector.h):
 * it names us, was not written by this process, and its renewTime is not
 * the one a leaderd's mark (LEASE_RENEWED) says it wrote: the controller
 * rewrote it.
 */
int
elector_assigned_to_us(const struct elector *e, const struct lease *rec)
{
	return e->coordinated && elector_is_self(e, rec) && !e->ours &&
	    !elector_sent_by_us(e, rec) && rec->renew_us != 0 &&
	    rec->mark_us != rec->renew_us;
}

/* The identity our own record prefers over us (preferredHolder), or NULL. */
const char *
elector_preferred_other(const struct elector *e)
{
	const struct lease	*o = &e->observed;

	if (e->conf.for_life || !e->ours || o->preferred[0] == '\0' ||
	    o->strategy[0] == '\0' || strcmp(o->preferred, e->conf.identity) ==
	    0)
		return NULL;
	return o->preferred;
}

int
elector_preferred_due(const struct elector *e, uint64_t now_ms)
{
	return elector_preferred_other(e) != NULL &&
	    elector_is_leader(e, now_ms) && now_ms >= e->hold_until_ms;
}

/*
 * The hold is one lease_duration: the rate at which a holder's crash
 * moves the lease, which every elector already lives with.  It counts
 * from the take's send time (e->sent_ms), as leadership does.
 */
void
elector_hold_term(struct elector *e)
{
	if (e->ours)
		return;
	if (elector_handed_to_us(e, &e->observed) ||
	    elector_assigned_to_us(e, &e->observed))
		e->hold_until_ms = e->sent_ms + e->conf.lease_duration_ms;
	else
		e->hold_until_ms = 0;
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

/*
 * Hand the lease over to `to` now: stop leading, abandon the request in
 * flight, write the handover over the last version (make_record).
 */
void
elector_hand_over(struct elector *e, uint64_t now_ms, const char *to,
    struct elector_action *act)
{
	elector_lose(e, ELECTOR_FOLLOWER, "handed over", act);
	e->stepdown = 1;
	e->release_cooldown_ms = e->conf.cooldown_ms;
	e->cooldown_until_ms = now_ms + e->conf.cooldown_ms;
	snprintf(e->handover_to, sizeof(e->handover_to), "%s", to);
	abandon(e, act);
	elector_schedule(e, ELECTOR_DO_UPDATE, now_ms);
	e->next_release = 1;
}

void
elector_on_stop(struct elector *e, const struct elector_input *in,
    enum elector_action_kind req, int release, struct elector_action *act)
{
	if (e->state == ELECTOR_STOPPING || e->state == ELECTOR_STOPPED)
		return;
	elector_lose(e, ELECTOR_STOPPING, "shutting down", act);
	e->stop_until_ms = in->until_ms != 0 ? in->until_ms :
	    in->now_ms + e->conf.request_timeout_ms;
	if (!e->conf.release_on_cancel) {
		elector_stopped(e, act);
		return;
	}
	/* client-go's ReleaseOnCancel cancels the renew in flight (2.6). */
	abandon(e, act);
	if (e->have_observed &&
	    (e->ours || elector_sent_by_us(e, &e->observed))) {
		/*
		 * Release at once over the last version we know: our term, or
		 * a takeover of ours whose answer was lost.
		 */
		elector_schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
		e->next_release = 1;
	} else if (req == ELECTOR_DO_CREATE ||
	    (req == ELECTOR_DO_UPDATE && !release) || e->unsure) {
		/*
		 * A takeover or a create, abandoned now or failed before, may
		 * have landed: read, then decide (on_got).
		 */
		elector_schedule(e, ELECTOR_DO_GET, in->now_ms);
	} else
		elector_stopped(e, act);
}

void
elector_on_step_down(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	/* For life, the lease is never released (elector.h). */
	if (!elector_is_leader(e, in->now_ms) || e->conf.for_life)
		return;
	elector_lose(e, ELECTOR_FOLLOWER, "stepped down", act);
	e->stepdown = 1;
	e->release_cooldown_ms = e->conf.cooldown_ms;
	e->cooldown_until_ms = in->now_ms + e->conf.cooldown_ms;
	/* We lead, so the record observed is ours: release it at once. */
	abandon(e, act);
	elector_schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
	e->next_release = 1;
}

/* HANDOVER (elector.h): a directed release. */
void
elector_on_handover(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	if (e->conf.for_life || in->to == NULL || in->to[0] == '\0' ||
	    strcmp(in->to, e->conf.identity) == 0 ||
	    !elector_is_leader(e, in->now_ms))
		return;
	elector_hand_over(e, in->now_ms, in->to, act);
}

/*
 * Candidacy on or off (the application's health, a client, a pause).  Off
 * while leading is a step-down whose cooldown is the input's; off while
 * a takeover or create is due cancels it (one in flight is handed back
 * by on_written if it lands).  On: read, then decide.
 */
void
elector_on_candidacy(struct elector *e, const struct elector_input *in,
    struct elector_action *act)
{
	/* For life, the lease is never released (elector.h). */
	if (e->state == ELECTOR_STOPPING || e->state == ELECTOR_STOPPED ||
	    e->conf.for_life)
		return;
	if (in->candidate) {
		if (!e->passive)
			return;
		e->passive = 0;
		if (e->inflight == ELECTOR_DO_NOTHING &&
		    (e->state == ELECTOR_FOLLOWER ||
		    e->state == ELECTOR_CANDIDATE))
			elector_schedule(e, ELECTOR_DO_GET, in->now_ms);
		return;
	}
	if (e->passive)
		return;
	e->passive = 1;
	e->release_cooldown_ms = in->cooldown_ms;
	if (elector_is_leader(e, in->now_ms)) {
		elector_lose(e, ELECTOR_FOLLOWER, "no longer a candidate", act);
		e->stepdown = 1;
		e->cooldown_until_ms = in->now_ms + in->cooldown_ms;
		abandon(e, act);
		elector_schedule(e, ELECTOR_DO_UPDATE, in->now_ms);
		e->next_release = 1;
		return;
	}
	if (e->state == ELECTOR_LEADER)
		elector_lose(e, ELECTOR_FOLLOWER, "no longer a candidate", act);
	if (e->next_kind == ELECTOR_DO_CREATE ||
	    (e->next_kind == ELECTOR_DO_UPDATE && !e->next_release)) {
		e->state = ELECTOR_FOLLOWER;
		elector_schedule(e, ELECTOR_DO_GET, in->now_ms + (e->watching ?
		    e->watch_poll_ms : elector_jitter(e)));
	}
}

/*
 * Coordinated election on or off (elector.h): off, a follower or a
 * candidate reads the lease at once and competes as usual.
 */
void
elector_on_coordinated(struct elector *e, const struct elector_input *in)
{
	if (e->conf.for_life || e->coordinated == (in->candidate != 0))
		return;
	e->coordinated = in->candidate != 0;
	if (e->inflight == ELECTOR_DO_NOTHING &&
	    (e->state == ELECTOR_FOLLOWER || e->state == ELECTOR_CANDIDATE))
		elector_schedule(e, ELECTOR_DO_GET, in->now_ms);
}
