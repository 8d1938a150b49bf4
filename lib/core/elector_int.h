/*
 * elector_int.h -- what elector.c (the transition table's core),
 * elector_handover.c (the handlers of what the daemon asks) and
 * elector_send.c (set-up, moves of state, random draws, our recent
 * writes, the request due) share; private to core/.
 */

#ifndef ELECTOR_INT_H
#define ELECTOR_INT_H

#include <stdint.h>

#include "codec/lease.h"
#include "core/elector.h"

#define MS_PER_S	1000ULL
#define US_PER_S	1000000LL

/* The acquire retry interval, retry_period x [1, 2.2) (2.2); draws. */
uint64_t elector_jitter(struct elector *e);

/*
 * The retry after a failed request: retry_period x [0.5, 1), the window
 * doubled for each request in a row that hung to its timeout, up to
 * lease_duration; draws.
 */
uint64_t elector_retry_jitter(struct elector *e);

/* A write's spread over 0-20 ms while watching, 0 otherwise; draws. */
uint64_t elector_spread(struct elector *e);

/* Whether rec names our identity, whoever wrote it. */
int	 elector_is_self(const struct elector *e, const struct lease *rec);

/* Whether rec belongs to the term this process took. */
int	 elector_is_ours(const struct elector *e, const struct lease *rec);

/*
 * Until when our write that carried renew_us, sent at sent_ms, keeps us
 * leading.
 */
uint64_t elector_lead_until(const struct elector *e, int64_t renew_us,
	    uint64_t sent_ms);

/* The send time of our write that carried renew_us, or 0 if unknown. */
uint64_t elector_send_time(const struct elector *e, int64_t renew_us);

/* Whether rec is a takeover or a create that this process sent. */
int	 elector_sent_by_us(const struct elector *e, const struct lease *rec);

/*
 * Send the request scheduled (e->next_kind, now due and nothing in
 * flight): fill *act with it, remember a write in the ring, and mark it
 * in flight.
 */
void	 elector_send_due(struct elector *e, const struct elector_input *in,
	    struct elector_action *act);

/* elector_send.c: the record taken in, and the moves of state. */

/*
 * Take in rec, read or written: observed_ms moves if it changed (or its
 * version did), and ELECTOR_EV_NEW_LEADER if its holder did.
 */
void	 elector_observe(struct elector *e, const struct lease *rec,
	    uint64_t now_ms, struct elector_action *act);

/* ELECTOR_EV_NEW_LEADER if the holder observed is not the one reported. */
void	 elector_report_holder(struct elector *e, struct elector_action *act);

/* Move to state `to`, with ELECTOR_EV_LOST and why if we were leading. */
void	 elector_lose(struct elector *e, enum elector_state to,
	    const char *why, struct elector_action *act);

/* Move to LEADER, with ELECTOR_EV_LEADING if we were not. */
void	 elector_become_leader(struct elector *e, struct elector_action *act);

/* Move to STOPPED: nothing scheduled, ELECTOR_EV_STOPPED. */
void	 elector_stopped(struct elector *e, struct elector_action *act);

/* Schedule the request `kind` (not a release) at at_ms. */
void	 elector_schedule(struct elector *e, enum elector_action_kind kind,
	    uint64_t at_ms);

/* elector_handover.c: the handover's and coordinated election's tests. */

/* Whether rec is a lease handed to us (elector.h, HANDOVER). */
int	 elector_handed_to_us(const struct elector *e,
	    const struct lease *rec);

/* Whether rec is a lease assigned to us in coordinated mode (elector.h). */
int	 elector_assigned_to_us(const struct elector *e,
	    const struct lease *rec);

/* The identity our own record prefers over us (preferredHolder), or NULL. */
const char *elector_preferred_other(const struct elector *e);

/*
 * Whether e, leading at now_ms, is to hand over to preferredHolder now:
 * it names another identity and the term's hold (elector.h) has passed.
 */
int	 elector_preferred_due(const struct elector *e, uint64_t now_ms);

/*
 * Before a write of ours is taken in (on_written): start the hold of the
 * term it begins, if it took a lease handed or assigned to us; a
 * takeover or a create begins a term with none.
 */
void	 elector_hold_term(struct elector *e);

/*
 * Hand the lease over to `to` now: stop leading, abandon the request in
 * flight, schedule the handover's write over the last version.
 */
void	 elector_hand_over(struct elector *e, uint64_t now_ms, const char *to,
	    struct elector_action *act);

/*
 * elector_handover.c: the handlers of what the daemon asks, called by
 * elector_step for their input kinds; req and release are the request
 * that was in flight when the input came.
 */
void	 elector_on_stop(struct elector *e, const struct elector_input *in,
	    enum elector_action_kind req, int release,
	    struct elector_action *act);
void	 elector_on_step_down(struct elector *e,
	    const struct elector_input *in, struct elector_action *act);
void	 elector_on_handover(struct elector *e,
	    const struct elector_input *in, struct elector_action *act);
void	 elector_on_candidacy(struct elector *e,
	    const struct elector_input *in, struct elector_action *act);
void	 elector_on_coordinated(struct elector *e,
	    const struct elector_input *in);

#endif /* ELECTOR_INT_H */
