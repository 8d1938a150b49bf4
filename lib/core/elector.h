/*
 * elector.h -- leader election as a pure state machine.
 *
 * The elector performs no I/O, allocates no memory, reads no clock and
 * logs nothing.  The caller feeds it an input stamped with the current
 * monotonic time (and the wall clock, used only to fill record fields)
 * and carries out the single action it returns.  At most one request is
 * in flight at a time; the elector knows which.
 *
 * The algorithm is client-go's tryAcquireOrRenew (ref/clientgo-
 * leaderelection.md 2.2-2.6) with these safety refinements:
 *  - leadership holds until the *send* time of the last successful
 *    write plus renew_deadline, and is judged at the moment of asking
 *    (elector_is_leader), never from a cached flag;
 *  - a foreign lease expires at the local observation time plus the
 *    larger of our lease_duration and the record's leaseDurationSeconds;
 *  - a record naming our identity counts as ours only if this elector
 *    wrote it; one left by an earlier process with the same identity is
 *    treated as foreign and waited out, so two processes sharing an
 *    identity never both lead;
 *  - a 409 on our own renew is followed by a GET: if the record is one we
 *    sent (a write that timed out yet landed), we still lead;
 *  - a record older than the one observed (by resourceVersion: a read
 *    or a watch served from a lagging cache) changes nothing: a read
 *    decides on the newest record as it was observed, a watched one is
 *    dropped, so the past never makes us lead nor moves an expiry;
 *  - a release is written only over our own record (the PUT carries the
 *    resourceVersion we last wrote, so the API server refuses it if
 *    anyone else has written since);
 *  - a stop or a step-down never waits for the request in flight: it
 *    is abandoned (elector_action.cancel) and the release goes out at
 *    once over the last version known.  The abandoned renew carries that
 *    same version, so whichever of the two the server takes second is
 *    refused; a release refused so is followed by a GET and sent again
 *    while the record is still ours (client-go's ReleaseOnCancel, and
 *    its retry of a release that conflicts, kubernetes#137988).
 *
 * For life (conf.for_life, nais/elector's Lease, docs/migrating.md): the
 * lock is created once and never written again.  The create carries the
 * holder and acquireTime only; whoever the record names leads for as
 * long as the record exists, whatever its times say, so nobody takes it
 * over, renews it or releases it.  We lead while the record we read names
 * our identity (written by this process or not: the identity is the
 * pod's name, which no other live pod has), and follow any other holder,
 * an empty one included, until the record is gone: a read that finds
 * none (or the watch's deletion, REREAD) makes us create it again at
 * once, as nais/elector does.  A leader for life reads the record every
 * poll period to see it go; failed reads do not end its claim (the
 * record may still stand).  A stop ends the claim at once with no write;
 * a step-down is ignored.
 */

#ifndef ELECTOR_H
#define ELECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "codec/lease.h"

enum elector_state {
	ELECTOR_CANDIDATE,	/* no live lease seen yet, or trying to take it */
	ELECTOR_FOLLOWER,	/* someone else holds a live lease */
	ELECTOR_LEADER,		/* we hold the lease and keep renewing it */
	ELECTOR_STOPPING,	/* shutdown asked; releasing if we held it */
	ELECTOR_STOPPED		/* done; no further requests */
};

enum elector_input_kind {
	ELECTOR_IN_TICK,	/* the wake-up time was reached */
	ELECTOR_IN_GOT,		/* GET returned a record */
	ELECTOR_IN_NOTFOUND,	/* GET returned 404 */
	ELECTOR_IN_WRITTEN,	/* CREATE/UPDATE returned the stored record */
	ELECTOR_IN_CONFLICT,	/* CREATE/UPDATE lost a race (409) */
	ELECTOR_IN_FAILED,	/* transport error, timeout, other status */
	ELECTOR_IN_STOP,	/* shutdown requested */
	ELECTOR_IN_WATCHED,	/* a watch event carried a newer record */
	ELECTOR_IN_STEP_DOWN,	/* release now if leading, then cool down */
	ELECTOR_IN_WATCH_UP,	/* a watch on the lock delivers changes */
	ELECTOR_IN_WATCH_DOWN,	/* that watch broke: poll again */
	ELECTOR_IN_REREAD,	/* read the lock at once (the watch saw it
				   deleted, or its version expired) */
	ELECTOR_IN_CANDIDACY,	/* become a candidate, or stop being one
				   (in.candidate) */
	ELECTOR_IN_HANDOVER,	/* hand the lease to in.to if leading */
	ELECTOR_IN_COORDINATED	/* coordinated election on or off
				   (in.candidate) */
};

enum elector_action_kind {
	ELECTOR_DO_NOTHING,
	ELECTOR_DO_GET,
	ELECTOR_DO_CREATE,	/* POST action.record */
	ELECTOR_DO_UPDATE	/* PUT action.record over the last body seen */
};

/* Events reported in elector_action.events, for logs and the local API. */
#define ELECTOR_EV_LEADING	0x01	/* we became leader */
#define ELECTOR_EV_LOST		0x02	/* we stopped leading */
#define ELECTOR_EV_NEW_LEADER	0x04	/* the observed holder changed */
#define ELECTOR_EV_OBSERVED	0x08	/* first successful read of the lock */
#define ELECTOR_EV_RELEASED	0x10	/* our release was written */
#define ELECTOR_EV_STOPPED	0x20	/* state is now STOPPED */
#define ELECTOR_EV_HANDED	0x40	/* with RELEASED: to a successor */

struct elector_config {
	char		 identity[LEASE_HOLDER_MAX];	/* holderIdentity we write */
	uint64_t	 lease_duration_ms;	/* whole seconds, > renew_deadline */
	uint64_t	 renew_deadline_ms;	/* > 1.2 x retry_period */
	uint64_t	 retry_period_ms;	/* > 0 */
	uint64_t	 request_timeout_ms;	/* cap on one request; > 0 */
	int		 release_on_cancel;	/* release the lease on STOP */
	uint64_t	 seed;			/* jitter PRNG seed; any value */
	uint64_t	 cooldown_ms;		/* no takeover this long after a
						   step-down; 0 = lease_duration */
	int		 for_life;		/* create only, hold for life
						   (above); release_on_cancel
						   is then ignored */
	int		 coordinated;		/* never self-acquire: take
						   only a lease assigned to us
						   (below) */
};

/* lead_until_ms of a claim held for life: it has no end in time. */
#define ELECTOR_FOR_LIFE_MS	UINT64_MAX

struct elector_input {
	enum elector_input_kind	 kind;
	uint64_t		 now_ms;	/* CLOCK_MONOTONIC, from caller */
	int64_t			 wall_us;	/* CLOCK_REALTIME, record fields only */
	const struct lease	*record;	/* borrowed; GOT and WRITTEN only */
	uint64_t		 until_ms;	/* STOP only: give up releasing at
						   this time; 0 = request_timeout
						   from now_ms */
	uint64_t		 poll_ms;	/* WATCH_UP only: a follower's poll
						   period while watching; > 0 */
	int			 candidate;	/* CANDIDACY, COORDINATED only:
						   1 on, 0 off */
	const char		*to;		/* HANDOVER only: the successor */
	uint64_t		 cooldown_ms;	/* CANDIDACY off only: after the
						   release, no takeover this long */
};

struct elector_action {
	enum elector_action_kind kind;
	struct lease		 record;	/* what to CREATE/UPDATE */
	uint64_t		 timeout_ms;	/* bound for this request */
	uint64_t		 wake_ms;	/* feed a TICK at this time */
	unsigned		 events;	/* ELECTOR_EV_* that happened */
	int			 cancel;	/* abort the request in flight
						   first: its answer is never to
						   be fed */
};

/*
 * struct elector is embedded in its owner, so it is declared here, in two
 * blocks.  A caller may read the fields of the first block but never
 * writes them (a test may fill them to fake a state).  The second block
 * is private to the elector, as are struct elector_send and
 * ELECTOR_SENDS, declared here only for the struct's size; the elector's
 * own tests read it as white-box checks.  Only elector_init and
 * elector_step change either block.
 */
#define ELECTOR_SENDS	4	/* recent writes remembered for 409 checks */

struct elector_send {
	int64_t		 renew_us;	/* renewTime the write carried */
	uint64_t	 sent_ms;	/* when it was sent */
	int		 release;	/* it was a release */
};

struct elector {
	/* Read-only for callers. */
	struct elector_config	 conf;		/* as given, cooldown_ms filled */
	enum elector_state	 state;
	struct lease		 observed;	/* last record seen or written */
	int			 have_observed;	/* observed is valid */
	int			 ours;		/* observed belongs to our term */
	uint64_t		 lead_until_ms;	/* leadership valid before this */
	const char		*why;		/* static reason of the last loss */
	int			 stepdown;	/* stepping down: release ours */
	int			 releasing;	/* the in-flight UPDATE releases */
	uint64_t		 stop_until_ms;	/* STOPPING gives up at this time */
	int			 passive;	/* not a candidate: never takes,
						   creates or renews the lease */
	int			 coordinated;	/* conf.coordinated, until the
						   COORDINATED input */

	/* Private to the elector. */
	uint64_t		 observed_ms;	/* when observed last changed */
	int			 have_term;	/* we took the lease this process */
	int64_t			 term_acquire_us; /* acquireTime of our term */
	int32_t			 term_transitions; /* leaseTransitions of it */
	struct elector_send	 sends[ELECTOR_SENDS]; /* ring of our writes */
	unsigned		 nsends;	/* writes sent so far */
	enum elector_action_kind inflight;	/* request awaiting its answer */
	uint64_t		 sent_ms;	/* when the in-flight request left */
	enum elector_action_kind next_kind;	/* request due at next_ms */
	int			 next_release;	/* that request is the release */
	uint64_t		 next_ms;	/* when it is due */
	unsigned		 conflicts;	/* 409s since the last success */
	unsigned		 hung;		/* failed requests in a row that
						   ran to their timeout */
	uint64_t		 req_timeout_ms; /* the in-flight request's */
	char			 reported[LEASE_HOLDER_MAX]; /* last holder reported */
	uint64_t		 rng;		/* xorshift64 state */
	int			 watching;	/* a watch delivers changes */
	uint64_t		 watch_poll_ms;	/* follower poll while watching */
	uint64_t		 rtt_ms;	/* round trip of the last renew */
	char			 write_rv[LEASE_RV_MAX]; /* version the last
						   takeover or renew went over */
	int			 unsure;	/* that write failed and may still
						   land: a stop reads first */
	uint64_t		 cooldown_until_ms; /* no takeover before this */
	uint64_t		 release_cooldown_ms; /* cooldown from the release
						   being written */
	char			 handover_to[LEASE_HOLDER_MAX]; /* the release
						   due hands the lease to this
						   identity; "" = plain */
	int			 handed;	/* the lease was handed to us: the
						   write due renews it as ours */
	uint64_t		 create_after_ms; /* a deleted lease's holder may
						   lead until then: no create */
	uint64_t		 hold_until_ms;	/* a term handed or assigned to
						   us: no handover on
						   preferredHolder before this */
};

/*
 * Check conf as client-go's NewLeaderElector does and initialise e as a
 * candidate whose first request is due at now_ms.  Returns 0, or -1 with
 * the reason in err.
 */
int	elector_init(struct elector *e, const struct elector_config *conf,
	    uint64_t now_ms, char *err, size_t errlen);

/*
 * Advance e with one input and fill *act with what to do next.  The
 * caller sends the request named by act->kind (if any) bounded by
 * act->timeout_ms, feeds its outcome back as the next input, and feeds a
 * TICK at act->wake_ms whatever else happens.  When act->cancel is set
 * (a STOP or a STEP_DOWN came while a request was in flight), the caller
 * first aborts that request and never feeds its answer; the abandoned
 * write may still land, which the elector allows for.  The inputs that
 * are not answers (TICK, STOP, WATCHED, STEP_DOWN, WATCH_UP, WATCH_DOWN,
 * REREAD) may be fed at any time, a request in flight or not; an answer
 * that nothing asked for is ignored.  Every input that is taken is also
 * a TICK: the request it makes due is sent in the same step.
 *
 * STOP: stop leading at once; with release_on_cancel, release the lease
 * if the last record seen is ours (over its version), or read it first
 * if an abandoned takeover or create may have made it ours; retry until
 * in->until_ms (the shutdown budget; request_timeout from now if 0),
 * then report ELECTOR_EV_STOPPED whether or not the release was written.
 *
 * STEP_DOWN: if e leads at the input's time, it stops leading at once
 * (ELECTOR_EV_LOST), releases the lease with the same CAS release as a
 * stop (at once, abandoning a renew in flight, and only while the record
 * is still ours), reports ELECTOR_EV_RELEASED when the release is
 * written, and then follows: for conf.cooldown_ms after the step-down
 * and again after the release is written, it reads the lease but never
 * writes a takeover or a create.  Ignored when e does not lead, and
 * for life.
 *
 * WATCH_UP, WATCH_DOWN: whether a watch on the lock is healthy.  While it
 * is, a follower polls only every in->poll_ms as a safety net (a watch
 * event, fed as WATCHED, wakes it sooner) and a free or expired lease is
 * tried after a random 0-20 ms spread, so that candidates woken by the
 * same event do not all write in the same instant.  WATCH_DOWN brings a
 * follower's next poll back within a jittered retry_period.  Expiry is
 * decided by the local clock either way: the watch only wakes the
 * elector sooner.
 *
 * REREAD: read the lock at once if nothing is in flight and e is a
 * follower or a candidate, or for life a leader too (the watch saw the
 * Lease deleted, or its version expired).
 *
 * HANDOVER: if e leads, it stops leading at once (ELECTOR_EV_LOST) and,
 * instead of a release, writes the lease over to in->to with the same
 * CAS (the last version written): holderIdentity in->to, acquireTime =
 * renewTime = now, leaseDurationSeconds, leaseTransitions + 1, and the
 * annotation LEASE_HANDOVER naming in->to; ELECTOR_EV_RELEASED |
 * ELECTOR_EV_HANDED when written; then it follows through the step-down
 * cooldown.  A 409 reads and writes the handover again while the record
 * is still ours.  Ignored when e does not lead, for in->to "" or our own
 * identity, and for life.  A STOP during it sends the handover.
 *
 * A lease handed to e (a record naming e, with LEASE_HANDOVER naming e
 * and acquireTime equal to renewTime, not written by this process) is
 * taken at once, when e is a candidate, by renewing it over its version:
 * leaseTransitions and acquireTime kept, leadership counted from the
 * renew's send time, never from the handover.  Only one of several
 * processes sharing e's identity can win that CAS; the others see the
 * winner's renew, which is no longer a handover, and wait it out.
 *
 * spec.preferredHolder naming another identity (with a spec.strategy),
 * read by the leader on its own record, makes it hand over to that
 * identity at once, as HANDOVER does, unless its term is held: a term
 * taken from a handover or from the controller's assignment (below) is
 * not handed on by preferredHolder before one lease_duration from the
 * send time of the write that took it, so that two writers disagreeing
 * on preferredHolder (two election controllers, one stale) move the
 * lease at most once per lease_duration, no more often than a holder's
 * crash would.  Once the hold has passed, the next read, watch event or
 * renew answer hands over.  HANDOVER itself is never held.  Every write
 * keeps the record's strategy and preferredHolder.
 *
 * Coordinated (conf.coordinated, KEP-4355): e never creates the lease,
 * never takes over a free or expired one: the API server's coordinated
 * election controller writes the holder.  A record naming e that this
 * process did not write is taken, by a renew over its version (a new
 * term: acquireTime = renewTime = now, leaseTransitions + 1, leadership
 * counted from the renew's send time), when it is an assignment: its
 * renewTime is not the one its LEASE_RENEWED mark names (every write of
 * a coordinated elector carries the mark; the controller rewrites
 * renewTime and keeps annotations).  A record naming e with a matching
 * mark (a second process under e's identity renewing) is waited out as
 * any foreign record.  Not taken while passive or cooling down.  While
 * a watch is up, a coordinated follower still reads at the expiry of the
 * record observed and every jittered retry_period after it (a watch on a
 * frozen API server hides the assignment without breaking).  A lease
 * handed to e (above) is taken as ever.  The
 * leader renews and hands over on preferredHolder as without.
 * COORDINATED: in->candidate 0 ends coordinated mode (the LeaseCandidate
 * API is not served): e reads the lease at once and competes as usual;
 * 1 starts it again.
 *
 * A handover to the record's preferredHolder clears preferredHolder, as
 * the controller does when it assigns the lease: client-go's coordinated
 * elector never renews a lease that names one.
 *
 * CANDIDACY: in->candidate 0 makes e passive, a follower that reads the
 * lease but never takes it over, creates it or renews it; if e leads it
 * stops leading at once and releases as STEP_DOWN does, and after the
 * release is written follows for in->cooldown_ms more even once it is a
 * candidate again.  A takeover or create in flight that lands is handed
 * back the same way.  in->candidate 1 makes e a candidate again: it
 * reads the lease at once (or when the request in flight is answered)
 * and decides.  An elector starts as a candidate.  Ignored once
 * stopping.
 */
void	elector_step(struct elector *e, const struct elector_input *in,
	    struct elector_action *act);

/*
 * Whether an ELECTOR_IN_WATCHED fed now would be taken: no request in
 * flight, and not stopping.  The caller adopts the watched object as the
 * body of the next write only then.
 */
int	elector_takes_watched(const struct elector *e);

/*
 * Whether e holds back at now_ms for a cooldown (after a step-down, or a
 * release when candidacy ended), though it may otherwise compete.
 */
int	elector_cooling_down(const struct elector *e, uint64_t now_ms);

/*
 * Whether e leads at monotonic time now_ms (strictly before lead_until;
 * for life, lead_until is ELECTOR_FOR_LIFE_MS while it leads).
 */
int	elector_is_leader(const struct elector *e, uint64_t now_ms);

/*
 * The monotonic ms at which the last observed record stops being live:
 * its local observation time plus the larger of our lease_duration and
 * its leaseDurationSeconds (2.4).  Meaningful only with have_observed,
 * and not for life, where records never expire.
 */
uint64_t	elector_expires_ms(const struct elector *e);

/* The holder of the last record observed, "" if none. */
const char *elector_holder(const struct elector *e);

/* Static name of a state, for logs and the local API. */
const char *elector_state_name(enum elector_state);

/*
 * Check the timing inequalities alone (lease_duration > renew_deadline >
 * 1.2 x retry_period, all > 0, lease_duration in whole seconds).  Used by
 * the config validator and elector_init.  Returns 0 or -1 with err.
 */
int	elector_check_timing(uint64_t lease_duration_ms,
	    uint64_t renew_deadline_ms, uint64_t retry_period_ms,
	    char *err, size_t errlen);

#endif /* ELECTOR_H */
