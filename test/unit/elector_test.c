/*
 * elector_test.c -- table-driven tests of the election state machine with
 * fixed times.  Each case is a script of inputs and, for each, what the
 * elector must answer: the action, the state, whether it leads at that
 * instant, the events, and (where it matters) the wake time and record.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/elector.h"

#define US	1000000LL
#define WALL0	(1700000000LL * US)	/* wall clock at now_ms 0 */

/* Records the scripts refer to. */
enum rec {
	R_NONE,
	R_ECHO,		/* the record of the last action, as stored */
	R_FOREIGN,	/* "b" holds it, 15 s */
	R_FOREIGN2,	/* "b" renewed it */
	R_FOREIGN60,	/* "b" holds it with leaseDurationSeconds 60 */
	R_FREE,		/* released: holder "" */
	R_SELF_OLD,	/* names "a" but was written by an earlier process */
	R_SENT0,	/* the first write this case sent, as stored */
	R_SENT1,	/* the second write this case sent, as stored */
	R_ON,		/* CANDIDACY only: on */
	R_OFF		/* CANDIDACY only: off, 5 s cooldown after the release */
};

#define ANY	(-1)

struct step {
	enum elector_input_kind	 in;
	uint64_t		 now_ms;
	enum rec		 rec;
	int			 act;		/* elector_action_kind or ANY */
	int			 state;		/* elector_state or ANY */
	int			 leader;	/* is_leader(now_ms), or ANY */
	unsigned		 events;	/* these must be set */
	int64_t			 wake_ms;	/* exact, or ANY */
	int			 cancel;	/* act.cancel, exactly */
};

struct elcase {
	const char	*what;
	int		 release_on_cancel;
	struct step	 steps[20];
};

#define END	{ .in = (enum elector_input_kind)-1 }
#define S(i, t, r, a, s, l, ev, w)	\
	{ ELECTOR_IN_##i, t, r, a, s, l, ev, w, 0 }
/* The same, where the request in flight must be abandoned (act.cancel). */
#define SC(i, t, r, a, s, l, ev, w)	\
	{ ELECTOR_IN_##i, t, r, a, s, l, ev, w, 1 }

#define GET	ELECTOR_DO_GET
#define CREATE	ELECTOR_DO_CREATE
#define UPDATE	ELECTOR_DO_UPDATE
#define NOTHING	ELECTOR_DO_NOTHING
#define CAND	ELECTOR_CANDIDATE
#define FOLL	ELECTOR_FOLLOWER
#define LEAD	ELECTOR_LEADER
#define STOPG	ELECTOR_STOPPING
#define STOPD	ELECTOR_STOPPED
#define EV_LEAD	ELECTOR_EV_LEADING
#define EV_LOST	ELECTOR_EV_LOST
#define EV_NEW	ELECTOR_EV_NEW_LEADER
#define EV_REL	ELECTOR_EV_RELEASED
#define EV_STOP	ELECTOR_EV_STOPPED

/* Candidacy on, or off (cancel: the request in flight is abandoned). */
#define ON(t, a, s, l, ev, w)	S(CANDIDACY, t, R_ON, a, s, l, ev, w)
#define OFF(t, a, s, l, ev, w)	S(CANDIDACY, t, R_OFF, a, s, l, ev, w)
#define OFFC(t, a, s, l, ev, w)	SC(CANDIDACY, t, R_OFF, a, s, l, ev, w)

/* Acquire a released lease: GET, UPDATE at 10, stored at 20. */
#define ACQUIRE							\
	S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),		\
	S(GOT, 10, R_FREE, UPDATE, CAND, 0, 0, ANY),		\
	S(WRITTEN, 20, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, 2020)

static const struct elcase cases[] = {
	{ "an absent lease is created at once", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(NOTFOUND, 10, R_NONE, CREATE, CAND, 0, 0, ANY),
	    S(WRITTEN, 20, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, 2020),
	    END } },
	{ "acquire a released lease, then renew every retry_period", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, 10010),
	    S(WRITTEN, 2030, R_ECHO, NOTHING, LEAD, 1, 0, 4030),
	    /* Valid until the renew's send time + renew_deadline. */
	    S(TICK, 12019, R_NONE, ANY, LEAD, 1, 0, ANY),
	    END } },
	{ "leadership counts from the send time, not the answer", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    S(WRITTEN, 6000, R_ECHO, NOTHING, LEAD, 1, 0, ANY),
	    S(FAILED, 12010, R_NONE, ANY, LEAD, 1, 0, ANY),
	    S(TICK, 12020, R_NONE, ANY, CAND, 0, EV_LOST, ANY),
	    END } },
	{ "a leader that cannot renew steps down at renew_deadline", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    S(FAILED, 3000, R_NONE, NOTHING, LEAD, 1, 0, 5000),
	    S(TICK, 5000, R_NONE, UPDATE, LEAD, 1, 0, 10010),
	    S(FAILED, 6000, R_NONE, NOTHING, LEAD, 1, 0, 8000),
	    S(TICK, 8000, R_NONE, UPDATE, LEAD, 1, 0, 10010),
	    S(TICK, 10009, R_NONE, NOTHING, LEAD, 1, 0, 10010),
	    /* The deadline is the create's send time (10) + 10 s. */
	    S(TICK, 10010, R_NONE, NOTHING, CAND, 0, EV_LOST, ANY),
	    S(FAILED, 10011, R_NONE, NOTHING, CAND, 0, 0, ANY),
	    END } },
	{ "a foreign live lease is followed and taken at expiry", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_FOREIGN, NOTHING, FOLL, 0, EV_NEW, ANY),
	    S(TICK, 5000, R_NONE, GET, FOLL, 0, 0, ANY),
	    /* Unchanged: expiry stays observed (10) + 15 s. */
	    S(GOT, 14000, R_FOREIGN, NOTHING, FOLL, 0, 0, 15010),
	    S(TICK, 15009, R_NONE, NOTHING, FOLL, 0, 0, 15010),
	    S(TICK, 15010, R_NONE, UPDATE, FOLL, 0, 0, ANY),
	    S(WRITTEN, 15020, R_ECHO, NOTHING, LEAD, 1, EV_LEAD | EV_NEW,
		17020),
	    END } },
	{ "a renewed foreign lease restarts the expiry clock", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_FOREIGN, NOTHING, FOLL, 0, 0, ANY),
	    S(TICK, 14000, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 14010, R_FOREIGN2, NOTHING, FOLL, 0, 0, ANY),
	    S(TICK, 27000, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 27010, R_FOREIGN2, NOTHING, FOLL, 0, 0, 29010),
	    END } },
	{ "a longer leaseDurationSeconds in the record wins", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_FOREIGN60, NOTHING, FOLL, 0, 0, ANY),
	    S(TICK, 58000, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 58010, R_FOREIGN60, NOTHING, FOLL, 0, 0, 60010),
	    END } },
	{ "an empty holder is free to take at once", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_FREE, UPDATE, CAND, 0, 0, ANY),
	    S(WRITTEN, 20, R_ECHO, NOTHING, LEAD, 1, EV_LEAD | EV_NEW, ANY),
	    END } },
	{ "a record naming us from an earlier process is waited out", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_SELF_OLD, NOTHING, FOLL, 0, 0, ANY),
	    S(TICK, 15000, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 15005, R_SELF_OLD, NOTHING, FOLL, 0, 0, 15010),
	    S(TICK, 15010, R_NONE, UPDATE, FOLL, 0, 0, ANY),
	    S(WRITTEN, 15020, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    END } },
	{ "409 on renew after a timed-out write that landed: still leader", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    /* Timed out, but the server stored it (R_SENT1 below). */
	    S(FAILED, 7020, R_NONE, NOTHING, LEAD, 1, 0, 9020),
	    S(TICK, 9020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    S(CONFLICT, 9030, R_NONE, GET, LEAD, 1, 0, ANY),
	    S(GOT, 9040, R_SENT1, UPDATE, LEAD, 1, 0, ANY),
	    /* That write was sent at 2020: valid until 12020, not 10010. */
	    S(FAILED, 12000, R_NONE, NOTHING, LEAD, 1, 0, 12020),
	    S(TICK, 12020, R_NONE, NOTHING, CAND, 0, EV_LOST, ANY),
	    END } },
	{ "409 on renew and a foreign holder: step down at once", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    S(CONFLICT, 2030, R_NONE, GET, LEAD, 1, 0, ANY),
	    S(GOT, 2040, R_FOREIGN, NOTHING, FOLL, 0, EV_LOST | EV_NEW, ANY),
	    END } },
	{ "create race lost (AlreadyExists): read, then follow", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(NOTFOUND, 10, R_NONE, CREATE, CAND, 0, 0, ANY),
	    S(CONFLICT, 20, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 30, R_FOREIGN, NOTHING, FOLL, 0, EV_NEW, ANY),
	    END } },
	{ "the lease deleted under the leader: step down, create again", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    S(CONFLICT, 2030, R_NONE, GET, LEAD, 1, 0, ANY),
	    S(NOTFOUND, 2040, R_NONE, CREATE, CAND, 0, EV_LOST, ANY),
	    S(WRITTEN, 2050, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    END } },
	{ "a lease deleted under a foreign holder: wait renew_deadline", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_FOREIGN, NOTHING, FOLL, 0, EV_NEW, ANY),
	    S(TICK, 4000, R_NONE, GET, FOLL, 0, 0, ANY),
	    /* Its holder may lead until 4010 + 10 s at the latest. */
	    S(NOTFOUND, 4010, R_NONE, NOTHING, CAND, 0, EV_NEW, 14010),
	    S(TICK, 14010, R_NONE, CREATE, CAND, 0, 0, ANY),
	    S(WRITTEN, 14020, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    END } },
	{ "SIGTERM while leading: false at once, then release", 1, {
	    ACQUIRE,
	    S(STOP, 500, R_NONE, UPDATE, STOPG, 0, EV_LOST, 5500),
	    S(WRITTEN, 510, R_ECHO, NOTHING, STOPD, 0, EV_REL | EV_STOP,
		0),
	    END } },
	{ "SIGTERM during a renew: abandon it, release at once", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    SC(STOP, 2025, R_NONE, UPDATE, STOPG, 0, EV_LOST, 7025),
	    /* The abandoned renew never landed: the release goes through. */
	    S(WRITTEN, 2030, R_ECHO, NOTHING, STOPD, 0, EV_REL | EV_STOP, 0),
	    END } },
	{ "SIGTERM during a renew that landed: 409, read, release again", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    SC(STOP, 2025, R_NONE, UPDATE, STOPG, 0, EV_LOST, ANY),
	    S(CONFLICT, 2030, R_NONE, GET, STOPG, 0, 0, ANY),
	    /* Our renew, as stored: still ours, so release it. */
	    S(GOT, 2040, R_SENT1, UPDATE, STOPG, 0, 0, ANY),
	    S(WRITTEN, 2050, R_ECHO, NOTHING, STOPD, 0, EV_REL | EV_STOP, 0),
	    END } },
	{ "SIGTERM during a renew, then another holder: stop, no write", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    SC(STOP, 2025, R_NONE, UPDATE, STOPG, 0, EV_LOST, ANY),
	    S(CONFLICT, 2030, R_NONE, GET, STOPG, 0, 0, ANY),
	    S(GOT, 2040, R_FOREIGN, NOTHING, STOPD, 0, EV_STOP, 0),
	    END } },
	{ "SIGTERM during a takeover that landed: read, then release", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_FREE, UPDATE, CAND, 0, 0, ANY),
	    SC(STOP, 15, R_NONE, GET, STOPG, 0, 0, ANY),
	    S(GOT, 30, R_SENT0, UPDATE, STOPG, 0, 0, ANY),
	    S(WRITTEN, 40, R_ECHO, NOTHING, STOPD, 0, EV_REL | EV_STOP, 0),
	    END } },
	{ "SIGTERM during a takeover that did not land: stop, no write", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_FREE, UPDATE, CAND, 0, 0, ANY),
	    SC(STOP, 15, R_NONE, GET, STOPG, 0, 0, ANY),
	    S(GOT, 30, R_FREE, NOTHING, STOPD, 0, EV_STOP, 0),
	    END } },
	{ "SIGTERM after a takeover timed out: read, then release", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_FREE, UPDATE, CAND, 0, 0, ANY),
	    S(FAILED, 5010, R_NONE, NOTHING, CAND, 0, 0, ANY),
	    S(STOP, 5020, R_NONE, GET, STOPG, 0, 0, ANY),
	    S(GOT, 5030, R_SENT0, UPDATE, STOPG, 0, 0, ANY),
	    S(WRITTEN, 5040, R_ECHO, NOTHING, STOPD, 0, EV_REL | EV_STOP, 0),
	    END } },
	{ "SIGTERM during a follower's read: stop at once", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    SC(STOP, 5, R_NONE, NOTHING, STOPD, 0, EV_STOP, 0),
	    S(GOT, 10, R_FOREIGN, NOTHING, STOPD, 0, 0, 0),
	    END } },
	{ "release refused (409) and someone else holds it: no write", 1, {
	    ACQUIRE,
	    S(STOP, 500, R_NONE, UPDATE, STOPG, 0, EV_LOST, ANY),
	    S(CONFLICT, 510, R_NONE, GET, STOPG, 0, 0, ANY),
	    S(GOT, 520, R_FOREIGN, NOTHING, STOPD, 0, EV_STOP, ANY),
	    END } },
	{ "release that never answers: stopped at request_timeout", 1, {
	    ACQUIRE,
	    S(STOP, 500, R_NONE, UPDATE, STOPG, 0, EV_LOST, 5500),
	    S(TICK, 5499, R_NONE, NOTHING, STOPG, 0, 0, 5500),
	    S(TICK, 5500, R_NONE, NOTHING, STOPD, 0, EV_STOP, ANY),
	    S(WRITTEN, 5600, R_ECHO, NOTHING, STOPD, 0, 0, ANY),
	    END } },
	{ "release_on_cancel false: stop without writing", 0, {
	    ACQUIRE,
	    S(STOP, 500, R_NONE, NOTHING, STOPD, 0, EV_LOST | EV_STOP, ANY),
	    END } },
	{ "SIGTERM as a follower: nothing to release", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_FOREIGN, NOTHING, FOLL, 0, 0, ANY),
	    S(STOP, 20, R_NONE, NOTHING, STOPD, 0, EV_STOP, ANY),
	    END } },
	{ "after stepping down it competes again and can lead again", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    S(FAILED, 10000, R_NONE, NOTHING, LEAD, 1, 0, 10010),
	    S(TICK, 10010, R_NONE, NOTHING, CAND, 0, EV_LOST, ANY),
	    S(TICK, 15000, R_NONE, GET, CAND, 0, 0, ANY),
	    /* Nobody took it: our record still stands; renew it. */
	    S(GOT, 15010, R_SENT0, UPDATE, CAND, 0, 0, ANY),
	    S(WRITTEN, 15020, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    END } },
	{ "answers nobody asked for are ignored", 1, {
	    S(GOT, 0, R_FOREIGN, NOTHING, CAND, 0, 0, ANY),
	    S(WRITTEN, 1, R_FOREIGN, NOTHING, CAND, 0, 0, ANY),
	    S(TICK, 2, R_NONE, GET, CAND, 0, 0, ANY),
	    S(WRITTEN, 3, R_FOREIGN, NOTHING, CAND, 0, 0, ANY),
	    S(GOT, 4, R_FOREIGN, NOTHING, FOLL, 0, 0, ANY),
	    END } },
	{ "a step-down releases at once, then follows through the cooldown",
	    1, {
	    ACQUIRE,
	    S(STEP_DOWN, 1000, R_NONE, UPDATE, FOLL, 0, EV_LOST, ANY),
	    /* Cooldown: one lease_duration from the release, to 16010. */
	    S(WRITTEN, 1010, R_ECHO, NOTHING, FOLL, 0, EV_REL, ANY),
	    S(TICK, 5000, R_NONE, GET, FOLL, 0, 0, ANY),
	    /* Free, yet no takeover while cooling down. */
	    S(GOT, 5010, R_FREE, NOTHING, FOLL, 0, 0, ANY),
	    S(TICK, 9500, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 9510, R_FREE, NOTHING, FOLL, 0, 0, ANY),
	    S(TICK, 16010, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 16020, R_FREE, UPDATE, CAND, 0, 0, ANY),
	    S(WRITTEN, 16030, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    END } },
	{ "a step-down during a renew abandons it and releases at once", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    SC(STEP_DOWN, 2025, R_NONE, UPDATE, FOLL, 0, EV_LOST, ANY),
	    S(WRITTEN, 2030, R_ECHO, NOTHING, FOLL, 0, EV_REL, ANY),
	    END } },
	{ "a step-down during a renew that landed: 409, read, release", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    SC(STEP_DOWN, 2025, R_NONE, UPDATE, FOLL, 0, EV_LOST, ANY),
	    S(CONFLICT, 2030, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 2040, R_SENT1, UPDATE, FOLL, 0, 0, ANY),
	    S(WRITTEN, 2050, R_ECHO, NOTHING, FOLL, 0, EV_REL, ANY),
	    END } },
	{ "a step-down's failed release is retried after a read", 1, {
	    ACQUIRE,
	    S(STEP_DOWN, 1000, R_NONE, UPDATE, FOLL, 0, EV_LOST, ANY),
	    S(FAILED, 1010, R_NONE, NOTHING, FOLL, 0, 0, ANY),
	    S(TICK, 5000, R_NONE, GET, FOLL, 0, 0, ANY),
	    /* Still our record: release it, never renew it. */
	    S(GOT, 5010, R_SENT0, UPDATE, FOLL, 0, 0, ANY),
	    S(WRITTEN, 5020, R_ECHO, NOTHING, FOLL, 0, EV_REL, ANY),
	    END } },
	{ "a step-down's release that meets a foreign write follows it", 1, {
	    ACQUIRE,
	    S(STEP_DOWN, 1000, R_NONE, UPDATE, FOLL, 0, EV_LOST, ANY),
	    S(CONFLICT, 1010, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 1020, R_FOREIGN, NOTHING, FOLL, 0, EV_NEW, ANY),
	    /* Then a live foreign lease like any other, to 16020. */
	    S(TICK, 15990, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 16000, R_FOREIGN, NOTHING, FOLL, 0, 0, 16020),
	    END } },
	{ "a follower's step-down changes nothing", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_FOREIGN, NOTHING, FOLL, 0, EV_NEW, ANY),
	    S(STEP_DOWN, 20, R_NONE, NOTHING, FOLL, 0, 0, ANY),
	    /* No cooldown: the expired lease is taken as ever. */
	    S(TICK, 15010, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 15020, R_FOREIGN, UPDATE, CAND, 0, 0, ANY),
	    END } },
	{ "a stop during a step-down's release sends it again at once", 1, {
	    ACQUIRE,
	    S(STEP_DOWN, 1000, R_NONE, UPDATE, FOLL, 0, EV_LOST, ANY),
	    SC(STOP, 1005, R_NONE, UPDATE, STOPG, 0, 0, ANY),
	    S(WRITTEN, 1010, R_ECHO, NOTHING, STOPD, 0, EV_REL | EV_STOP,
		ANY),
	    END } },
	{ "out of candidacy, a leader releases at once, then cools down", 1, {
	    ACQUIRE,
	    OFF(1000, UPDATE, FOLL, 0, EV_LOST, ANY),
	    S(WRITTEN, 1010, R_ECHO, NOTHING, FOLL, 0, EV_REL, ANY),
	    S(REREAD, 3000, R_NONE, GET, FOLL, 0, 0, ANY),
	    /* Free, but not a candidate: never taken. */
	    S(GOT, 3010, R_FREE, NOTHING, FOLL, 0, 0, ANY),
	    /* A candidate again: read at once, but the cooldown runs from
	     * the release (1010) to 6010. */
	    ON(4000, GET, FOLL, 0, 0, ANY),
	    S(GOT, 4010, R_FREE, NOTHING, FOLL, 0, 0, 6010),
	    S(TICK, 6010, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 6020, R_FREE, UPDATE, CAND, 0, 0, ANY),
	    S(WRITTEN, 6030, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    END } },
	{ "out of candidacy during a renew: abandoned, released at once", 1, {
	    ACQUIRE,
	    S(TICK, 2020, R_NONE, UPDATE, LEAD, 1, 0, ANY),
	    OFFC(2025, UPDATE, FOLL, 0, EV_LOST, ANY),
	    S(CONFLICT, 2030, R_NONE, GET, FOLL, 0, 0, ANY),
	    /* The abandoned renew landed: still ours, released again. */
	    S(GOT, 2040, R_SENT1, UPDATE, FOLL, 0, 0, ANY),
	    S(WRITTEN, 2050, R_ECHO, NOTHING, FOLL, 0, EV_REL, ANY),
	    END } },
	{ "out of candidacy, a follower never takes or creates the lease", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    OFF(5, NOTHING, CAND, 0, 0, 0),
	    S(GOT, 10, R_FREE, NOTHING, FOLL, 0, 0, ANY),
	    S(REREAD, 5000, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 5010, R_FOREIGN, NOTHING, FOLL, 0, EV_NEW, ANY),
	    /* Long expired: still not taken. */
	    S(REREAD, 30000, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 30010, R_FOREIGN, NOTHING, FOLL, 0, 0, ANY),
	    S(REREAD, 35000, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(NOTFOUND, 35010, R_NONE, NOTHING, FOLL, 0, 0, ANY),
	    /*
	     * Never the leader: no cooldown; the absent lease is created,
	     * once "b", seen before the deletion, can no longer lead: its
	     * renew_deadline from the first 404 (35010).
	     */
	    ON(36000, GET, FOLL, 0, 0, ANY),
	    S(NOTFOUND, 36010, R_NONE, NOTHING, CAND, 0, 0, 45010),
	    S(TICK, 45010, R_NONE, CREATE, CAND, 0, 0, ANY),
	    S(WRITTEN, 45020, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    END } },
	{ "a takeover in flight when candidacy ends is handed back", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(GOT, 10, R_FREE, UPDATE, CAND, 0, 0, ANY),
	    OFF(15, NOTHING, CAND, 0, 0, ANY),
	    /* It landed: released at once, never reported as leading. */
	    S(WRITTEN, 20, R_ECHO, UPDATE, FOLL, 0, 0, ANY),
	    S(WRITTEN, 30, R_ECHO, NOTHING, FOLL, 0, EV_REL, ANY),
	    S(REREAD, 3000, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 3010, R_FREE, NOTHING, FOLL, 0, 0, ANY),
	    END } },
	{ "candidacy changes nothing once stopping", 1, {
	    ACQUIRE,
	    S(STOP, 1000, R_NONE, UPDATE, STOPG, 0, EV_LOST, ANY),
	    OFF(1005, NOTHING, STOPG, 0, 0, ANY),
	    ON(1006, NOTHING, STOPG, 0, 0, ANY),
	    S(WRITTEN, 1010, R_ECHO, NOTHING, STOPD, 0, EV_REL | EV_STOP,
		ANY),
	    END } },
	{ "a reread reads at once, unless a request is out or we lead", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, ANY),
	    S(REREAD, 5, R_NONE, NOTHING, CAND, 0, 0, 0),
	    /* The next poll is due at 2010 at the soonest. */
	    S(GOT, 10, R_FOREIGN, NOTHING, FOLL, 0, EV_NEW, ANY),
	    S(REREAD, 1000, R_NONE, GET, FOLL, 0, 0, ANY),
	    S(GOT, 1010, R_FREE, UPDATE, CAND, 0, 0, ANY),
	    S(WRITTEN, 1020, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, 3020),
	    S(REREAD, 2000, R_NONE, NOTHING, LEAD, 1, 0, 3020),
	    END } },
};

/*
 * For life (nais/elector's Lease): create only, never renew, release or
 * take over; lead while the record names us, whoever wrote it.  Polls
 * are a jittered retry_period: 2000 x [1, 2.2).
 */
static const struct elcase life_cases[] = {
	{ "for life: an absent lease is created, then only read", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, 0),
	    S(NOTFOUND, 10, R_NONE, CREATE, CAND, 0, 0, 0),
	    S(WRITTEN, 20, R_ECHO, NOTHING, LEAD, 1, EV_LEAD | EV_NEW, ANY),
	    S(TICK, 4420, R_NONE, GET, LEAD, 1, 0, 0),
	    S(GOT, 4430, R_ECHO, NOTHING, LEAD, 1, 0, ANY),
	    /* No renew, ever: leading a day later all the same. */
	    S(TICK, 86400000, R_NONE, GET, LEAD, 1, 0, 0),
	    S(FAILED, 86400010, R_NONE, NOTHING, LEAD, 1, 0, ANY),
	    S(TICK, 172800000, R_NONE, GET, LEAD, 1, 0, 0),
	    S(GOT, 172800010, R_ECHO, NOTHING, LEAD, 1, 0, ANY),
	    END } },
	{ "for life: a foreign holder is followed forever", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, 0),
	    S(GOT, 10, R_FOREIGN, NOTHING, FOLL, 0, EV_NEW, ANY),
	    /* Long past its leaseDurationSeconds and renewTime. */
	    S(TICK, 3600000, R_NONE, GET, FOLL, 0, 0, 0),
	    S(GOT, 3600010, R_FOREIGN, NOTHING, FOLL, 0, 0, ANY),
	    S(TICK, 7200000, R_NONE, GET, FOLL, 0, 0, 0),
	    S(GOT, 7200010, R_FOREIGN, NOTHING, FOLL, 0, 0, ANY),
	    END } },
	{ "for life: an empty holder is followed, not taken", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, 0),
	    S(GOT, 10, R_FREE, NOTHING, FOLL, 0, 0, ANY),
	    S(TICK, 3600000, R_NONE, GET, FOLL, 0, 0, 0),
	    S(GOT, 3600010, R_FREE, NOTHING, FOLL, 0, 0, ANY),
	    END } },
	{ "for life: a record naming us from an earlier process is ours", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, 0),
	    S(GOT, 10, R_SELF_OLD, NOTHING, LEAD, 1, EV_LEAD | EV_NEW, ANY),
	    END } },
	{ "for life: a deleted lease is created at once, a race lost", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, 0),
	    S(GOT, 10, R_FOREIGN, NOTHING, FOLL, 0, EV_NEW, ANY),
	    S(REREAD, 1000, R_NONE, GET, FOLL, 0, 0, 0),
	    S(NOTFOUND, 1010, R_NONE, CREATE, CAND, 0, EV_NEW, 0),
	    S(CONFLICT, 1020, R_NONE, GET, CAND, 0, 0, 0),
	    S(GOT, 1030, R_FOREIGN2, NOTHING, FOLL, 0, EV_NEW, ANY),
	    END } },
	{ "for life: the leader sees its lease deleted and creates it", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, 0),
	    S(NOTFOUND, 10, R_NONE, CREATE, CAND, 0, 0, 0),
	    S(WRITTEN, 20, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    S(REREAD, 100, R_NONE, GET, LEAD, 1, 0, 0),
	    S(NOTFOUND, 110, R_NONE, CREATE, CAND, 0, EV_LOST, 0),
	    S(WRITTEN, 120, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    END } },
	{ "for life: another holder seen by the leader ends its claim", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, 0),
	    S(NOTFOUND, 10, R_NONE, CREATE, CAND, 0, 0, 0),
	    S(WRITTEN, 20, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    S(WATCHED, 30, R_FOREIGN, NOTHING, FOLL, 0, EV_LOST | EV_NEW, ANY),
	    END } },
	{ "for life: a create that failed is read before it is sent again", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, 0),
	    S(NOTFOUND, 10, R_NONE, CREATE, CAND, 0, 0, 0),
	    S(FAILED, 20, R_NONE, NOTHING, CAND, 0, 0, ANY),
	    S(TICK, 4420, R_NONE, GET, CAND, 0, 0, 0),
	    S(GOT, 4430, R_SENT0, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    END } },
	{ "for life: a stop writes nothing and ends at once", 1, {
	    S(TICK, 0, R_NONE, GET, CAND, 0, 0, 0),
	    S(NOTFOUND, 10, R_NONE, CREATE, CAND, 0, 0, 0),
	    S(WRITTEN, 20, R_ECHO, NOTHING, LEAD, 1, EV_LEAD, ANY),
	    S(STEP_DOWN, 30, R_NONE, NOTHING, LEAD, 1, 0, ANY),
	    S(STOP, 40, R_NONE, NOTHING, STOPD, 0, EV_LOST | EV_STOP, 0),
	    END } },
};

static struct elector_config
test_config(int release)
{
	struct elector_config	 c;

	memset(&c, 0, sizeof(c));
	strcpy(c.identity, "a");
	c.lease_duration_ms = 15000;
	c.renew_deadline_ms = 10000;
	c.retry_period_ms = 2000;
	c.request_timeout_ms = 5000;
	c.release_on_cancel = release;
	c.seed = 42;
	return c;
}

static void
fixed_record(enum rec r, struct lease *l)
{
	memset(l, 0, sizeof(*l));
	l->duration_s = 15;
	l->transitions = 3;
	l->acquire_us = WALL0 - 100 * US;
	l->renew_us = WALL0 - 2 * US;
	switch (r) {
	case R_FOREIGN:
		strcpy(l->holder, "b");
		strcpy(l->rv, "100");
		break;
	case R_FOREIGN2:
		strcpy(l->holder, "b");
		l->renew_us += 2 * US;
		strcpy(l->rv, "101");
		break;
	case R_FOREIGN60:
		strcpy(l->holder, "b");
		l->duration_s = 60;
		strcpy(l->rv, "102");
		break;
	case R_FREE:
		l->duration_s = 1;
		strcpy(l->rv, "103");
		break;
	case R_SELF_OLD:
		strcpy(l->holder, "a");
		strcpy(l->rv, "104");
		break;
	default:
		break;
	}
}

static void
run_case(const struct elcase *c, int for_life)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(c->release_on_cancel);
	struct elector_action	 act, last;
	struct elector_input	 in;
	struct lease		 rec, sent[2];
	const struct step	*s;
	char			 err[128];
	int			 i, nsent = 0, rv = 1000, fixed_rv = 0;
	enum rec		 fixed = R_NONE;

	conf.for_life = for_life;
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	memset(&last, 0, sizeof(last));
	memset(sent, 0, sizeof(sent));
	for (i = 0; c->steps[i].in != (enum elector_input_kind)-1; i++) {
		s = &c->steps[i];
		memset(&in, 0, sizeof(in));
		in.kind = s->in;
		in.now_ms = s->now_ms;
		in.wall_us = WALL0 + (int64_t)s->now_ms * 1000;
		switch (s->rec) {
		case R_NONE:
			break;
		case R_ECHO:
			rec = last.record;
			snprintf(rec.rv, sizeof(rec.rv), "%d", rv++);
			in.record = &rec;
			break;
		case R_ON:
		case R_OFF:
			in.candidate = s->rec == R_ON;
			in.cooldown_ms = 5000;
			break;
		case R_SENT0:
		case R_SENT1:
			rec = sent[s->rec == R_SENT0 ? 0 : 1];
			snprintf(rec.rv, sizeof(rec.rv), "%d", rv++);
			in.record = &rec;
			break;
		default:
			/*
			 * A version newer than any fed before it, as the
			 * server's, kept while the same record is read again.
			 */
			fixed_record(s->rec, &rec);
			if (s->rec != fixed)
				fixed_rv = rv++;
			fixed = s->rec;
			snprintf(rec.rv, sizeof(rec.rv), "%d", fixed_rv);
			in.record = &rec;
			break;
		}
		if (s->rec != R_NONE && s->rec != R_ON && s->rec != R_OFF &&
		    (s->rec < R_FOREIGN || s->rec > R_SELF_OLD))
			fixed = R_NONE;
		elector_step(&e, &in, &act);
		print_message("  step %d at %llu: action %d state %s events "
		    "%#x wake %llu\n", i, (unsigned long long)s->now_ms,
		    act.kind, elector_state_name(e.state), act.events,
		    (unsigned long long)act.wake_ms);
		if (s->act != ANY)
			assert_int_equal(act.kind, s->act);
		if (s->state != ANY)
			assert_string_equal(elector_state_name(e.state),
			    elector_state_name((enum elector_state)s->state));
		if (s->leader != ANY)
			assert_int_equal(elector_is_leader(&e, s->now_ms),
			    s->leader);
		assert_int_equal(act.events & s->events, s->events);
		if (s->wake_ms != ANY)
			assert_int_equal(act.wake_ms, s->wake_ms);
		assert_int_equal(act.cancel, s->cancel);
		/* For life, nothing but a read or a create, ever. */
		if (for_life)
			assert_true(act.kind != UPDATE);
		if (act.kind == CREATE || act.kind == UPDATE) {
			if (nsent < 2)
				sent[nsent++] = act.record;
			last = act;
		}
	}
}

static void
test_cases(void **state)
{
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("case: %s\n", cases[i].what);
		run_case(&cases[i], 0);
	}
}

static void
test_life_cases(void **state)
{
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(life_cases) / sizeof(life_cases[0]); i++) {
		print_message("case: %s\n", life_cases[i].what);
		run_case(&life_cases[i], 1);
	}
}

static void	feed(struct elector *, enum elector_input_kind, uint64_t,
		    const struct lease *, struct elector_action *);
static const char *handover_to;		/* feed's in.to */

/*
 * For life, the create carries holderIdentity and acquireTime only (no
 * leaseDurationSeconds, renewTime or leaseTransitions), and the leader's
 * claim has no end in time.
 */
static void
test_life_record(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_action	 act;
	struct lease		 stored;
	char			 err[128];

	(void)state;
	conf.for_life = 1;
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	assert_int_equal(e.conf.release_on_cancel, 0);
	feed(&e, ELECTOR_IN_TICK, 0, NULL, &act);
	feed(&e, ELECTOR_IN_NOTFOUND, 10, NULL, &act);
	assert_int_equal(act.kind, CREATE);
	assert_string_equal(act.record.holder, "a");
	assert_int_equal(act.record.acquire_us, WALL0 + 10000);
	assert_int_equal(act.record.renew_us, 0);
	assert_int_equal(act.record.duration_s, 0);
	assert_int_equal(act.record.transitions, 0);
	stored = act.record;
	strcpy(stored.rv, "50");
	feed(&e, ELECTOR_IN_WRITTEN, 20, &stored, &act);
	assert_true(elector_is_leader(&e, 20));
	assert_true(e.lead_until_ms == ELECTOR_FOR_LIFE_MS);
	assert_true(elector_is_leader(&e, UINT64_MAX - 1));
	/* The poll comes within 2.2 retry periods: no renew. */
	assert_in_range(act.wake_ms, 2020, 4420);
	assert_int_equal(e.next_kind, ELECTOR_DO_GET);
	/* While watching, the poll is the slow safety net. */
	feed(&e, ELECTOR_IN_WATCH_UP, 30, NULL, &act);
	feed(&e, ELECTOR_IN_TICK, act.wake_ms, NULL, &act);
	assert_int_equal(act.kind, ELECTOR_DO_GET);
	feed(&e, ELECTOR_IN_GOT, 5000, &stored, &act);
	assert_int_equal(act.wake_ms, 5000 + 60000);
	/* The watch breaks: the leader polls within 2.2 retry periods. */
	feed(&e, ELECTOR_IN_WATCH_DOWN, 6000, NULL, &act);
	assert_in_range(act.wake_ms, 8000, 10400);
}

/* Lead "a" from a free lease; returns the stored record. */
static struct lease
lead_a(struct elector *e, struct elector_action *act)
{
	struct lease		 rec;
	struct elector_config	 conf = test_config(1);
	char			 err[128];

	assert_int_equal(elector_init(e, &conf, 0, err, sizeof(err)), 0);
	memset(&rec, 0, sizeof(rec));
	strcpy(rec.rv, "10");
	rec.duration_s = 1;
	rec.transitions = 4;
	strcpy(rec.strategy, "OldestEmulationVersion");
	feed(e, ELECTOR_IN_TICK, 0, NULL, act);
	feed(e, ELECTOR_IN_GOT, 10, &rec, act);
	assert_int_equal(act->kind, UPDATE);
	rec = act->record;
	strcpy(rec.rv, "11");
	feed(e, ELECTOR_IN_WRITTEN, 20, &rec, act);
	assert_true(elector_is_leader(e, 20));
	return rec;
}

/*
 * A directed handover: the leader stops leading at once and writes the
 * successor's term over its own version (holder, a new acquireTime =
 * renewTime, leaseTransitions + 1, the duration, the handover mark, the
 * strategy kept); a 409 reads and hands over again; the successor takes
 * a lease handed to it at once, as a renew (the term kept), and leads
 * from that renew's send time; a record naming it without the mark, or
 * with acquireTime != renewTime, is waited out.
 */
static void
test_handover(void **state)
{
	struct elector		 e, s;
	struct elector_action	 act;
	struct lease		 mine, handed, other;
	struct elector_config	 conf = test_config(1);
	char			 err[128];

	(void)state;
	mine = lead_a(&e, &act);
	/* To ourselves, or "": nothing. */
	handover_to = "a";
	feed(&e, ELECTOR_IN_HANDOVER, 100, NULL, &act);
	assert_true(elector_is_leader(&e, 100));
	handover_to = "";
	feed(&e, ELECTOR_IN_HANDOVER, 100, NULL, &act);
	assert_true(elector_is_leader(&e, 100));
	handover_to = "b";
	feed(&e, ELECTOR_IN_HANDOVER, 1000, NULL, &act);
	assert_false(elector_is_leader(&e, 1000));
	assert_true(act.events & ELECTOR_EV_LOST);
	assert_int_equal(act.kind, UPDATE);
	assert_string_equal(act.record.holder, "b");
	assert_string_equal(act.record.handover, "b");
	assert_int_equal(act.record.transitions, mine.transitions + 1);
	assert_int_equal(act.record.acquire_us, WALL0 + 1000000);
	assert_int_equal(act.record.renew_us, WALL0 + 1000000);
	assert_int_equal(act.record.duration_s, 15);
	assert_string_equal(act.record.strategy, "OldestEmulationVersion");
	/* 409 (a renew of ours landed first): read, hand over again. */
	feed(&e, ELECTOR_IN_CONFLICT, 1010, NULL, &act);
	assert_int_equal(act.kind, GET);
	feed(&e, ELECTOR_IN_GOT, 1020, &mine, &act);
	assert_int_equal(act.kind, UPDATE);
	assert_string_equal(act.record.holder, "b");
	handed = act.record;
	strcpy(handed.rv, "12");
	feed(&e, ELECTOR_IN_WRITTEN, 1030, &handed, &act);
	assert_true(act.events & ELECTOR_EV_RELEASED);
	assert_true(act.events & ELECTOR_EV_HANDED);
	assert_int_equal(e.state, ELECTOR_FOLLOWER);
	assert_false(elector_is_leader(&e, 1030));

	/* The successor, "b", sees it (by a read or the watch). */
	strcpy(conf.identity, "b");
	assert_int_equal(elector_init(&s, &conf, 0, err, sizeof(err)), 0);
	feed(&s, ELECTOR_IN_TICK, 0, NULL, &act);
	feed(&s, ELECTOR_IN_GOT, 1040, &handed, &act);
	assert_int_equal(act.kind, UPDATE);
	assert_false(elector_is_leader(&s, 1040));
	assert_string_equal(act.record.holder, "b");
	assert_string_equal(act.record.handover, "");	/* the mark goes */
	assert_int_equal(act.record.acquire_us, handed.acquire_us);
	assert_int_equal(act.record.transitions, handed.transitions);
	assert_int_equal(act.record.renew_us, WALL0 + 1040000);
	other = act.record;
	strcpy(other.rv, "13");
	feed(&s, ELECTOR_IN_WRITTEN, 1050, &other, &act);
	assert_true(act.events & ELECTOR_EV_LEADING);
	/* From the renew's send time (1040), not the handover's. */
	assert_true(elector_is_leader(&s, 1040 + 10000 - 1));
	assert_false(elector_is_leader(&s, 1040 + 10000));

	/* Without the mark, or once renewed: waited out, never taken. */
	assert_int_equal(elector_init(&s, &conf, 0, err, sizeof(err)), 0);
	feed(&s, ELECTOR_IN_TICK, 0, NULL, &act);
	handed.handover[0] = '\0';
	feed(&s, ELECTOR_IN_GOT, 1040, &handed, &act);
	assert_int_equal(act.kind, NOTHING);
	assert_int_equal(s.state, ELECTOR_FOLLOWER);
	strcpy(handed.handover, "b");
	handed.renew_us += 2000000;
	strcpy(handed.rv, "14");
	feed(&s, ELECTOR_IN_WATCHED, 2040, &handed, &act);
	assert_int_equal(act.kind, NOTHING);
	assert_int_equal(s.state, ELECTOR_FOLLOWER);
	handover_to = NULL;
}

/*
 * spec.preferredHolder on our own record (a coordinated controller, or
 * kubectl patch) naming another identity: the leader hands over to it
 * at once, from the watch or from a read.
 */
static void
test_preferred_holder(void **state)
{
	struct elector		 e;
	struct elector_action	 act;
	struct lease		 mine;

	(void)state;
	mine = lead_a(&e, &act);
	/* Preferring us changes nothing. */
	strcpy(mine.preferred, "a");
	strcpy(mine.rv, "20");
	feed(&e, ELECTOR_IN_WATCHED, 500, &mine, &act);
	assert_true(elector_is_leader(&e, 500));
	assert_int_equal(act.kind, NOTHING);
	/* And our renew keeps both fields. */
	feed(&e, ELECTOR_IN_TICK, 2020, NULL, &act);
	assert_int_equal(act.kind, UPDATE);
	assert_string_equal(act.record.preferred, "a");
	assert_string_equal(act.record.strategy, "OldestEmulationVersion");
	mine = act.record;
	strcpy(mine.rv, "21");
	feed(&e, ELECTOR_IN_WRITTEN, 2030, &mine, &act);
	strcpy(mine.preferred, "c");
	strcpy(mine.rv, "22");
	feed(&e, ELECTOR_IN_WATCHED, 2500, &mine, &act);
	assert_false(elector_is_leader(&e, 2500));
	assert_int_equal(act.kind, UPDATE);
	assert_string_equal(act.record.holder, "c");
	assert_string_equal(act.record.handover, "c");
	/* Served: cleared, as the controller clears it (client-go). */
	assert_string_equal(act.record.preferred, "");
	assert_string_equal(act.record.strategy, "OldestEmulationVersion");
	/* Without a strategy, preferredHolder is only a hint: ignored. */
	mine = lead_a(&e, &act);
	strcpy(mine.preferred, "c");
	mine.strategy[0] = '\0';
	strcpy(mine.rv, "30");
	feed(&e, ELECTOR_IN_WATCHED, 500, &mine, &act);
	assert_true(elector_is_leader(&e, 500));
}

/*
 * Renew e (leading, its record preferring pref) at each wake from t
 * until end, each renew answered and echoed by the watch: it keeps
 * leading and never hands over.  Returns the first wake at or past end.
 */
static uint64_t
held_renews(struct elector *e, uint64_t t, uint64_t end, const char *pref,
    struct lease *rec)
{
	struct elector_action	 act;

	while (t < end) {
		feed(e, ELECTOR_IN_TICK, t, NULL, &act);
		assert_int_equal(act.kind, UPDATE);
		assert_string_equal(act.record.holder, e->conf.identity);
		assert_string_equal(act.record.preferred, pref);
		*rec = act.record;
		snprintf(rec->rv, sizeof(rec->rv), "%llu",
		    (unsigned long long)t);
		feed(e, ELECTOR_IN_WRITTEN, t + 10, rec, &act);
		assert_true(elector_is_leader(e, t + 10));
		assert_int_equal(act.kind, NOTHING);
		feed(e, ELECTOR_IN_WATCHED, t + 20, rec, &act);
		assert_true(elector_is_leader(e, t + 20));
		assert_int_equal(act.kind, NOTHING);
		t = act.wake_ms;
	}
	return t;
}

/*
 * Two writers disagreeing on preferredHolder (two election controllers,
 * one of them stale after a pause): a holder that took the lease by a
 * handover, or by the controller's assignment, keeps it for one
 * lease_duration from that take before it obeys preferredHolder again,
 * so the lease moves at most once per lease_duration instead of
 * ping-ponging; the first handover of a term taken otherwise stays
 * immediate.  Once the hold has passed, the next renew answer or watch
 * event hands over.
 */
static void
test_handover_hold(void **state)
{
	struct elector		 e, s;
	struct elector_action	 act;
	struct lease		 mine, handed, theirs;
	struct elector_config	 conf = test_config(1);
	char			 err[128];
	uint64_t		 t;

	(void)state;
	mine = lead_a(&e, &act);
	/* The first preferredHolder ("b") of a term taken by a takeover. */
	strcpy(mine.preferred, "b");
	strcpy(mine.rv, "20");
	feed(&e, ELECTOR_IN_WATCHED, 500, &mine, &act);
	assert_int_equal(act.kind, UPDATE);
	assert_string_equal(act.record.holder, "b");
	handed = act.record;
	strcpy(handed.rv, "21");
	feed(&e, ELECTOR_IN_WRITTEN, 510, &handed, &act);

	/* "b" takes it, a renew sent at 1000. */
	strcpy(conf.identity, "b");
	assert_int_equal(elector_init(&s, &conf, 0, err, sizeof(err)), 0);
	feed(&s, ELECTOR_IN_TICK, 0, NULL, &act);
	feed(&s, ELECTOR_IN_GOT, 1000, &handed, &act);
	assert_int_equal(act.kind, UPDATE);
	theirs = act.record;
	strcpy(theirs.rv, "22");
	feed(&s, ELECTOR_IN_WRITTEN, 1010, &theirs, &act);
	assert_true(elector_is_leader(&s, 1010));
	/* The other writer prefers "a" at once: held, "b" keeps leading. */
	strcpy(theirs.preferred, "a");
	strcpy(theirs.strategy, "OldestEmulationVersion");
	strcpy(theirs.rv, "23");
	feed(&s, ELECTOR_IN_WATCHED, 1100, &theirs, &act);
	assert_true(elector_is_leader(&s, 1100));
	assert_int_equal(act.kind, NOTHING);
	/* Its renews keep leading and keep preferredHolder. */
	t = held_renews(&s, act.wake_ms, 1000 + 15000, "a", &theirs);
	/* One lease_duration after the take (1000 + 15000): handed over. */
	feed(&s, ELECTOR_IN_TICK, t, NULL, &act);
	assert_int_equal(act.kind, UPDATE);
	theirs = act.record;
	strcpy(theirs.rv, "25");
	feed(&s, ELECTOR_IN_WRITTEN, t + 10, &theirs, &act);
	assert_false(elector_is_leader(&s, t + 10));
	assert_int_equal(act.kind, UPDATE);
	assert_string_equal(act.record.holder, "a");
	assert_string_equal(act.record.handover, "a");

	/* The explicit HANDOVER (local API) is never held. */
	assert_int_equal(elector_init(&s, &conf, 0, err, sizeof(err)), 0);
	feed(&s, ELECTOR_IN_TICK, 0, NULL, &act);
	feed(&s, ELECTOR_IN_GOT, 1000, &handed, &act);
	theirs = act.record;
	strcpy(theirs.rv, "22");
	feed(&s, ELECTOR_IN_WRITTEN, 1010, &theirs, &act);
	handover_to = "c";
	feed(&s, ELECTOR_IN_HANDOVER, 1100, NULL, &act);
	handover_to = NULL;
	assert_false(elector_is_leader(&s, 1100));
	assert_string_equal(act.record.holder, "c");
}

/*
 * Coordinated: a term the controller assigned is held the same way, from
 * the take's send time.
 */
static void
test_assigned_hold(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_action	 act;
	struct lease		 rec, mine;
	char			 err[128];
	uint64_t		 t;

	(void)state;
	conf.coordinated = 1;
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	feed(&e, ELECTOR_IN_TICK, 0, NULL, &act);
	memset(&rec, 0, sizeof(rec));
	strcpy(rec.holder, "a");
	strcpy(rec.strategy, "OldestEmulationVersion");
	rec.duration_s = 5;
	rec.transitions = 3;
	rec.renew_us = WALL0 + 5 * US;
	strcpy(rec.rv, "200");
	feed(&e, ELECTOR_IN_GOT, 100, &rec, &act);
	assert_int_equal(act.kind, UPDATE);
	mine = act.record;
	strcpy(mine.rv, "201");
	feed(&e, ELECTOR_IN_WRITTEN, 150, &mine, &act);
	assert_true(elector_is_leader(&e, 150));
	/* A stale controller prefers "c" straight away: held. */
	strcpy(mine.preferred, "c");
	strcpy(mine.rv, "202");
	feed(&e, ELECTOR_IN_WATCHED, 900, &mine, &act);
	assert_true(elector_is_leader(&e, 900));
	assert_int_equal(act.kind, NOTHING);
	/* Its renews until the hold ends (100 + 15000), then handed over. */
	t = held_renews(&e, act.wake_ms, 100 + 15000, "c", &mine);
	feed(&e, ELECTOR_IN_TICK, t, NULL, &act);
	mine = act.record;
	strcpy(mine.rv, "299");
	feed(&e, ELECTOR_IN_WRITTEN, t + 10, &mine, &act);
	assert_int_equal(act.kind, UPDATE);
	assert_string_equal(act.record.holder, "c");
}

/*
 * Coordinated and watching: the controller assigns the lease once it
 * expires, and a watch on a frozen API server delivers nothing without
 * breaking, so a follower reads at the expiry and every jittered retry
 * period after it, not only at the watch's slow safety-net poll.
 */
static void
test_coordinated_watch_reads_from_expiry(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_action	 act;
	struct lease		 rec;
	char			 err[128];

	(void)state;
	conf.coordinated = 1;
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	feed(&e, ELECTOR_IN_WATCH_UP, 0, NULL, &act);
	assert_int_equal(act.kind, GET);
	fixed_record(R_FOREIGN, &rec);
	feed(&e, ELECTOR_IN_GOT, 10, &rec, &act);
	assert_int_equal(act.kind, NOTHING);
	/* Live until 10 + 15000: read then, not at 10 + 60000. */
	assert_int_equal(act.wake_ms, 15010);
	feed(&e, ELECTOR_IN_TICK, 15010, NULL, &act);
	assert_int_equal(act.kind, GET);
	feed(&e, ELECTOR_IN_GOT, 15020, &rec, &act);
	assert_int_equal(act.kind, NOTHING);
	assert_in_range(act.wake_ms, 15020 + 2000, 15020 + 4400);
}

/*
 * Coordinated (elector.h): never a create, a takeover of a free or an
 * expired lease; a record the controller assigns to us (its renewTime not
 * our mark's) is taken by a renew over its version, a new term counted
 * from that renew's send time, marked; one a leaderd of our identity
 * renewed (marked) is not; COORDINATED off competes again at once.
 */
static void
test_coordinated(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_input	 in = { 0 };
	struct elector_action	 act;
	struct lease		 rec, mine;
	char			 err[128];

	(void)state;
	conf.coordinated = 1;
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	feed(&e, ELECTOR_IN_TICK, 0, NULL, &act);
	assert_int_equal(act.kind, GET);
	/* No lease: no create, read again. */
	feed(&e, ELECTOR_IN_NOTFOUND, 10, NULL, &act);
	assert_int_equal(act.kind, NOTHING);
	assert_int_equal(e.state, ELECTOR_FOLLOWER);
	assert_in_range(act.wake_ms, 2010, 4410);
	/* A free lease: not taken. */
	fixed_record(R_FREE, &rec);
	feed(&e, ELECTOR_IN_TICK, act.wake_ms, NULL, &act);
	feed(&e, ELECTOR_IN_GOT, 4500, &rec, &act);
	assert_int_equal(act.kind, NOTHING);
	/* Another's lease, expired long ago: not taken either. */
	fixed_record(R_FOREIGN, &rec);
	feed(&e, ELECTOR_IN_WATCHED, 4600, &rec, &act);
	feed(&e, ELECTOR_IN_TICK, 40000, NULL, &act);
	assert_int_equal(act.kind, GET);
	feed(&e, ELECTOR_IN_GOT, 40010, &rec, &act);
	assert_int_equal(act.kind, NOTHING);
	assert_int_equal(e.state, ELECTOR_FOLLOWER);
	/* The controller names us (duration 5, no acquireTime): taken. */
	memset(&rec, 0, sizeof(rec));
	strcpy(rec.holder, "a");
	strcpy(rec.strategy, "OldestEmulationVersion");
	rec.duration_s = 5;
	rec.transitions = 3;
	rec.renew_us = WALL0 + 40000 * 1000LL;
	strcpy(rec.rv, "200");
	feed(&e, ELECTOR_IN_WATCHED, 40100, &rec, &act);
	assert_int_equal(act.kind, UPDATE);
	assert_false(elector_is_leader(&e, 40100));
	assert_string_equal(act.record.holder, "a");
	assert_string_equal(act.record.strategy, "OldestEmulationVersion");
	assert_int_equal(act.record.transitions, 4);
	assert_int_equal(act.record.duration_s, 15);
	assert_int_equal(act.record.acquire_us, WALL0 + 40100 * 1000LL);
	assert_int_equal(act.record.renew_us, act.record.acquire_us);
	/* Marked as a write of ours (LEASE_RENEWED). */
	assert_int_equal(act.record.mark_us, act.record.renew_us);
	mine = act.record;
	strcpy(mine.rv, "201");
	feed(&e, ELECTOR_IN_WRITTEN, 40150, &mine, &act);
	assert_true(act.events & ELECTOR_EV_LEADING);
	assert_true(elector_is_leader(&e, 40100 + 10000 - 1));
	/* It renews as any leader. */
	feed(&e, ELECTOR_IN_TICK, 42150, NULL, &act);
	assert_int_equal(act.kind, UPDATE);
	assert_int_equal(act.record.acquire_us, mine.acquire_us);
	assert_int_equal(act.record.transitions, 4);

	/*
	 * A second process under our identity: our renews carry their mark;
	 * never taken.
	 */
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	feed(&e, ELECTOR_IN_TICK, 0, NULL, &act);
	feed(&e, ELECTOR_IN_GOT, 10, &mine, &act);
	assert_int_equal(act.kind, NOTHING);
	mine.renew_us += 2 * US;
	mine.mark_us = mine.renew_us;
	strcpy(mine.rv, "202");
	feed(&e, ELECTOR_IN_WATCHED, 2000, &mine, &act);
	assert_int_equal(act.kind, NOTHING);
	assert_int_equal(e.state, ELECTOR_FOLLOWER);
	/*
	 * The controller rewrites renewTime (the mark kept): an assignment,
	 * taken.
	 */
	feed(&e, ELECTOR_IN_TICK, 30000, NULL, &act);
	assert_int_equal(act.kind, GET);
	rec = mine;
	rec.duration_s = 5;
	rec.renew_us = WALL0 + 30000 * 1000LL;
	strcpy(rec.rv, "300");
	feed(&e, ELECTOR_IN_GOT, 30010, &rec, &act);
	assert_int_equal(act.kind, UPDATE);
	/* A 409 (the other process won): its renew is waited out. */
	feed(&e, ELECTOR_IN_CONFLICT, 30020, NULL, &act);
	assert_int_equal(act.kind, GET);
	mine.renew_us = WALL0 + 30015 * 1000LL;
	mine.mark_us = mine.renew_us;
	strcpy(mine.rv, "301");
	feed(&e, ELECTOR_IN_GOT, 30030, &mine, &act);
	assert_int_equal(act.kind, NOTHING);
	assert_false(elector_is_leader(&e, 30030));

	/* COORDINATED off: compete as usual, at once. */
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	feed(&e, ELECTOR_IN_TICK, 0, NULL, &act);
	fixed_record(R_FREE, &rec);
	feed(&e, ELECTOR_IN_GOT, 10, &rec, &act);
	assert_int_equal(act.kind, NOTHING);
	in.kind = ELECTOR_IN_COORDINATED;
	in.now_ms = 20;
	in.wall_us = WALL0 + 20000;
	in.candidate = 0;
	elector_step(&e, &in, &act);
	assert_int_equal(act.kind, GET);
	feed(&e, ELECTOR_IN_GOT, 30, &rec, &act);
	assert_int_equal(act.kind, UPDATE);
	assert_string_equal(act.record.holder, "a");
}

/* The records the elector writes, field by field (2.4, 2.6). */
static void
test_records(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_input	 in = { 0 };
	struct elector_action	 act;
	struct lease		 foreign, stored;
	char			 err[128];

	(void)state;
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	in.kind = ELECTOR_IN_TICK;
	in.wall_us = WALL0;
	elector_step(&e, &in, &act);
	fixed_record(R_FREE, &foreign);
	in.kind = ELECTOR_IN_GOT;
	in.now_ms = 10;
	in.wall_us = WALL0 + 10000;
	in.record = &foreign;
	elector_step(&e, &in, &act);
	/* Takeover: new term, transitions + 1. */
	assert_int_equal(act.kind, UPDATE);
	assert_string_equal(act.record.holder, "a");
	assert_int_equal(act.record.duration_s, 15);
	assert_int_equal(act.record.transitions, 4);
	assert_int_equal(act.record.acquire_us, WALL0 + 10000);
	assert_int_equal(act.record.renew_us, WALL0 + 10000);
	assert_int_equal(act.timeout_ms, 5000);

	stored = act.record;
	strcpy(stored.rv, "7");
	in.kind = ELECTOR_IN_WRITTEN;
	in.now_ms = 20;
	in.record = &stored;
	elector_step(&e, &in, &act);
	assert_int_equal(elector_is_leader(&e, 20), 1);

	/*
	 * A renew in the same second as the write before it: renewTime is
	 * the wall clock; leadership counts from its send time but never
	 * past lease_duration from the first write of that second, which is
	 * all a client-go follower sees (2.4).
	 */
	in.kind = ELECTOR_IN_TICK;
	in.now_ms = 2020;
	in.wall_us = WALL0 + 20000;
	in.record = NULL;
	elector_step(&e, &in, &act);
	assert_int_equal(act.kind, UPDATE);
	assert_int_equal(act.record.acquire_us, WALL0 + 10000);
	assert_int_equal(act.record.transitions, 4);
	assert_int_equal(act.record.renew_us, WALL0 + 20000);
	assert_int_equal(act.timeout_ms, 5000);
	stored = act.record;
	strcpy(stored.rv, "8");
	in.kind = ELECTOR_IN_WRITTEN;
	in.now_ms = 2030;
	in.record = &stored;
	elector_step(&e, &in, &act);
	assert_int_equal(e.lead_until_ms, 2020 + 10000);

	/* The next second. */
	in.kind = ELECTOR_IN_TICK;
	in.now_ms = 4030;
	in.wall_us = WALL0 + 1200000;
	in.record = NULL;
	elector_step(&e, &in, &act);
	assert_int_equal(act.record.renew_us, WALL0 + 1200000);
	stored = act.record;
	strcpy(stored.rv, "9");
	in.kind = ELECTOR_IN_WRITTEN;
	in.now_ms = 4040;
	in.record = &stored;
	elector_step(&e, &in, &act);
	assert_int_equal(e.lead_until_ms, 4030 + 10000);

	/* Same second again, answered late: from its send time. */
	in.kind = ELECTOR_IN_TICK;
	in.now_ms = 6040;
	in.wall_us = WALL0 + 1700000;
	in.record = NULL;
	elector_step(&e, &in, &act);
	stored = act.record;
	strcpy(stored.rv, "10");
	in.kind = ELECTOR_IN_WRITTEN;
	in.now_ms = 9000;
	in.record = &stored;
	elector_step(&e, &in, &act);
	assert_int_equal(e.lead_until_ms, 6040 + 10000);

	/* A leader's request never outlives its leadership. */
	in.kind = ELECTOR_IN_TICK;
	in.now_ms = 11000;
	in.wall_us = WALL0 + 5 * US;
	in.record = NULL;
	elector_step(&e, &in, &act);
	assert_int_equal(act.kind, UPDATE);
	assert_int_equal(act.record.renew_us, WALL0 + 5 * US);
	assert_int_equal(act.timeout_ms, 5000);
	stored = act.record;
	strcpy(stored.rv, "11");

	/*
	 * Release: holder "", 1 s, times now, transitions kept; sent at once
	 * with the renew in flight abandoned, bounded by the budget.
	 */
	in.kind = ELECTOR_IN_STOP;
	in.now_ms = 11001;
	in.wall_us = WALL0 + 6 * US;
	in.until_ms = 11001 + 3000;
	elector_step(&e, &in, &act);
	assert_int_equal(act.cancel, 1);
	assert_int_equal(act.kind, UPDATE);
	assert_string_equal(act.record.holder, "");
	assert_int_equal(act.record.duration_s, 1);
	assert_int_equal(act.record.transitions, 4);
	assert_int_equal(act.record.acquire_us, WALL0 + 6 * US);
	assert_int_equal(act.record.renew_us, WALL0 + 6 * US);
	assert_int_equal(act.timeout_ms, 3000);
	assert_int_equal(act.wake_ms, 14001);
	/* A failed release is retried within the budget, then given up. */
	in.kind = ELECTOR_IN_FAILED;
	in.now_ms = 11500;
	in.until_ms = 0;
	elector_step(&e, &in, &act);
	assert_int_equal(act.wake_ms, 11750);
	in.kind = ELECTOR_IN_TICK;
	in.now_ms = 11750;
	elector_step(&e, &in, &act);
	assert_int_equal(act.kind, UPDATE);
	assert_string_equal(act.record.holder, "");
	assert_int_equal(act.timeout_ms, 14001 - 11750);
	in.now_ms = 14001;
	elector_step(&e, &in, &act);
	assert_int_equal(e.state, ELECTOR_STOPPED);
	assert_true(act.events & ELECTOR_EV_STOPPED);
	assert_false(act.events & ELECTOR_EV_RELEASED);
}

/*
 * With lease_duration < renew_deadline + 1 s, renews within one second
 * cannot carry leadership past lease_duration from the first of them.
 */
static void
test_same_second_cap(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_input	 in = { 0 };
	struct elector_action	 act;
	struct lease		 rec;
	char			 err[128];
	static const struct {
		uint64_t	 now_ms;
		int64_t		 wall_us;
		uint64_t	 until_ms;
	} renews[] = {
		{ 520, WALL0 + 600000, 3010 },	/* capped: 10 + 3 s */
		{ 1030, WALL0 + 950000, 3010 },	/* still capped */
		{ 1540, WALL0 + 1450000, 4040 },	/* a new second */
	};
	size_t			 i;

	(void)state;
	conf.lease_duration_ms = 3000;
	conf.renew_deadline_ms = 2500;
	conf.retry_period_ms = 500;
	conf.request_timeout_ms = 1000;
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	in.kind = ELECTOR_IN_TICK;
	elector_step(&e, &in, &act);
	fixed_record(R_FREE, &rec);
	in.kind = ELECTOR_IN_GOT;
	in.now_ms = 10;
	in.wall_us = WALL0 + 100000;
	in.record = &rec;
	elector_step(&e, &in, &act);
	assert_int_equal(act.kind, UPDATE);
	for (i = 0; i <= sizeof(renews) / sizeof(renews[0]); i++) {
		rec = act.record;
		snprintf(rec.rv, sizeof(rec.rv), "%zu", 20 + i);
		in.kind = ELECTOR_IN_WRITTEN;
		in.record = &rec;
		in.now_ms += 5;
		elector_step(&e, &in, &act);
		if (i > 0)
			assert_int_equal(e.lead_until_ms,
			    renews[i - 1].until_ms);
		if (i == sizeof(renews) / sizeof(renews[0]))
			break;
		in.kind = ELECTOR_IN_TICK;
		in.record = NULL;
		in.now_ms = renews[i].now_ms;
		in.wall_us = renews[i].wall_us;
		elector_step(&e, &in, &act);
		assert_int_equal(act.kind, UPDATE);
	}
}

/* Jittered retries stay within retry_period x [1, 2.2). */
static void
test_jitter(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_input	 in = { 0 };
	struct elector_action	 act;
	struct lease		 foreign;
	char			 err[128];
	uint64_t		 now_ms = 0, d, lo = UINT64_MAX, hi = 0;
	int			 i;

	(void)state;
	fixed_record(R_FOREIGN60, &foreign);
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	for (i = 0; i < 200; i++) {
		in.kind = ELECTOR_IN_TICK;
		in.now_ms = now_ms;
		in.record = NULL;
		elector_step(&e, &in, &act);
		assert_int_equal(act.kind, GET);
		in.kind = ELECTOR_IN_GOT;
		in.record = &foreign;
		foreign.renew_us += US;		/* keep it live */
		elector_step(&e, &in, &act);
		d = act.wake_ms - now_ms;
		assert_true(d >= 2000 && d < 4400);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		now_ms = act.wake_ms;
	}
	/* Not a constant: the spread covers most of the interval. */
	assert_true(lo < 2500 && hi > 3900);

	/*
	 * After a failed request, the retry comes within retry_period x
	 * [0.5, 1): a lone candidate is back within one retry_period of the
	 * API server's recovery, and a herd still spreads.
	 */
	lo = UINT64_MAX;
	hi = 0;
	for (i = 0; i < 200; i++) {
		in.kind = ELECTOR_IN_TICK;
		in.now_ms = now_ms;
		elector_step(&e, &in, &act);
		assert_int_equal(act.kind, GET);
		in.kind = ELECTOR_IN_FAILED;
		elector_step(&e, &in, &act);
		d = act.wake_ms - now_ms;
		assert_true(d >= 1000 && d < 2000);
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		now_ms = act.wake_ms;
	}
	assert_true(lo < 1100 && hi > 1900);
}

/*
 * Requests that ran to their timeout (an API server stopped, overloaded,
 * or a black hole on the way) back off: each one in a row doubles the
 * window, retry_period x 2^hung up to lease_duration, and the retry is
 * drawn from its upper half.  A fast failure, or any answer, starts
 * again at retry_period x [0.5, 1).  A leader keeps renewing every
 * retry_period until its deadline, hung or not.
 */
static void
test_hung_backoff(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_input	 in = { 0 };
	struct elector_action	 act;
	struct lease		 foreign;
	char			 err[128];
	uint64_t		 now_ms = 0, d, w, lo, hi;
	int			 i, round;

	(void)state;
	fixed_record(R_FOREIGN, &foreign);
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	for (round = 0; round < 3; round++) {
		lo = UINT64_MAX;
		hi = 0;
		for (i = 1; i <= 12; i++) {
			in.kind = ELECTOR_IN_TICK;
			in.now_ms = now_ms;
			in.record = NULL;
			elector_step(&e, &in, &act);
			assert_int_equal(act.kind, GET);
			assert_int_equal(act.timeout_ms, 5000);
			/* It ran to its timeout. */
			now_ms += act.timeout_ms;
			in.kind = ELECTOR_IN_FAILED;
			in.now_ms = now_ms;
			elector_step(&e, &in, &act);
			assert_int_equal(e.hung, (unsigned)i);
			d = act.wake_ms - now_ms;
			w = 2000ULL << (i < 4 ? i : 4);
			if (w > 15000)
				w = 15000;
			assert_true(d >= w / 2 && d < w);
			if (w == 15000) {
				lo = d < lo ? d : lo;
				hi = d > hi ? d : hi;
			}
			now_ms = act.wake_ms;
		}
		/* Spread over the capped window's upper half. */
		assert_true(lo < 9500 && hi > 13000);
		in.kind = ELECTOR_IN_TICK;
		in.now_ms = now_ms;
		elector_step(&e, &in, &act);
		assert_int_equal(act.kind, GET);
		if (round == 0) {
			/* A fast failure: back to within a retry period. */
			in.kind = ELECTOR_IN_FAILED;
			in.now_ms = now_ms + 30;
		} else {
			/* An answer. */
			in.kind = ELECTOR_IN_GOT;
			in.now_ms = now_ms + 30;
			foreign.renew_us += 100 * US;
			in.record = &foreign;
		}
		elector_step(&e, &in, &act);
		assert_int_equal(e.hung, 0);
		d = act.wake_ms - (now_ms + 30);
		if (round == 0)
			assert_true(d >= 1000 && d < 2000);
		now_ms = act.wake_ms;
	}

	/* A leader whose renews hang retries every retry_period. */
	lead_a(&e, &act);
	for (i = 0; i < 2; i++) {
		in.kind = ELECTOR_IN_TICK;
		in.now_ms = e.next_ms;
		in.record = NULL;
		elector_step(&e, &in, &act);
		assert_int_equal(act.kind, ELECTOR_DO_UPDATE);
		now_ms = e.sent_ms + act.timeout_ms;
		if (now_ms >= e.lead_until_ms)
			break;
		in.kind = ELECTOR_IN_FAILED;
		in.now_ms = now_ms;
		elector_step(&e, &in, &act);
		assert_int_equal(e.state, ELECTOR_LEADER);
		assert_int_equal(e.next_ms, now_ms + 2000);
	}
}

/* An elector on test_config(1) that watches, as a follower of R_FOREIGN. */
static void
watching_follower(struct elector *e)
{
	struct elector_config	 conf = test_config(1);
	struct elector_input	 in;
	struct elector_action	 act;
	struct lease		 rec;
	char			 err[128];

	assert_int_equal(elector_init(e, &conf, 0, err, sizeof(err)), 0);
	memset(&in, 0, sizeof(in));
	in.kind = ELECTOR_IN_WATCH_UP;
	in.poll_ms = 60000;
	elector_step(e, &in, &act);
	assert_int_equal(act.kind, ELECTOR_DO_GET);
	fixed_record(R_FOREIGN, &rec);
	in.kind = ELECTOR_IN_GOT;
	in.now_ms = 10;
	in.record = &rec;
	elector_step(e, &in, &act);
	assert_int_equal(e->state, ELECTOR_FOLLOWER);
	/* No poll before expiry: the takeover is due at 15010 + 0-20 ms. */
	assert_int_equal(e->next_kind, ELECTOR_DO_UPDATE);
	assert_in_range(act.wake_ms, 15010, 15030);
}

static void
feed(struct elector *e, enum elector_input_kind kind, uint64_t now_ms,
    const struct lease *rec, struct elector_action *act)
{
	struct elector_input	 in;

	memset(&in, 0, sizeof(in));
	in.kind = kind;
	in.now_ms = now_ms;
	in.wall_us = WALL0 + (int64_t)now_ms * 1000;
	in.record = rec;
	in.poll_ms = 60000;	/* read by WATCH_UP only */
	in.to = handover_to;	/* read by HANDOVER only */
	elector_step(e, &in, act);
}

/*
 * Reads answered from the past (a lagging cache): a version older than
 * the one observed changes nothing.  Our own renew read back after our
 * release is no claim; another holder's older version does not push
 * back the expiry the newest one set; nor does the watch's replay.
 */
static void
test_read_from_past(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_action	 act;
	struct lease		 mine, renewed, released, b, r;
	char			 err[128];

	(void)state;
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	feed(&e, ELECTOR_IN_TICK, 0, NULL, &act);
	assert_int_equal(act.kind, GET);
	feed(&e, ELECTOR_IN_NOTFOUND, 10, NULL, &act);
	assert_int_equal(act.kind, CREATE);
	mine = act.record;
	strcpy(mine.rv, "10");
	feed(&e, ELECTOR_IN_WRITTEN, 20, &mine, &act);
	assert_true(elector_is_leader(&e, 20));
	feed(&e, ELECTOR_IN_TICK, act.wake_ms, NULL, &act);
	assert_int_equal(act.kind, UPDATE);
	renewed = act.record;
	strcpy(renewed.rv, "11");
	feed(&e, ELECTOR_IN_WRITTEN, 2030, &renewed, &act);
	assert_true(elector_is_leader(&e, 2030));
	/* Step down: the release is written. */
	feed(&e, ELECTOR_IN_STEP_DOWN, 3000, NULL, &act);
	assert_int_equal(act.kind, UPDATE);
	released = act.record;
	strcpy(released.rv, "12");
	feed(&e, ELECTOR_IN_WRITTEN, 3010, &released, &act);
	assert_true(act.events & ELECTOR_EV_RELEASED);
	assert_false(elector_is_leader(&e, 3010));
	/* "b" takes it over. */
	memset(&b, 0, sizeof(b));
	strcpy(b.holder, "b");
	b.duration_s = 15;
	b.acquire_us = b.renew_us = WALL0 + 3100 * 1000LL;
	b.transitions = released.transitions + 1;
	strcpy(b.rv, "13");
	feed(&e, ELECTOR_IN_WATCHED, 3100, &b, &act);
	assert_string_equal(elector_holder(&e), "b");
	assert_int_equal(elector_expires_ms(&e), 3100 + 15000);
	/* A read of our renew from before the release: no claim. */
	assert_in_range(act.wake_ms, 5100, 7500);
	feed(&e, ELECTOR_IN_TICK, act.wake_ms, NULL, &act);
	assert_int_equal(act.kind, GET);
	r = renewed;
	feed(&e, ELECTOR_IN_GOT, 7600, &r, &act);
	assert_false(elector_is_leader(&e, 7600));
	assert_int_equal(act.kind, NOTHING);
	assert_string_equal(elector_holder(&e), "b");
	assert_int_equal(elector_expires_ms(&e), 3100 + 15000);
	/* The release, read back or replayed by the watch: nothing new. */
	assert_in_range(act.wake_ms, 9600, 12000);
	feed(&e, ELECTOR_IN_TICK, act.wake_ms, NULL, &act);
	assert_int_equal(act.kind, GET);
	r = released;
	feed(&e, ELECTOR_IN_GOT, 12100, &r, &act);
	assert_string_equal(elector_holder(&e), "b");
	assert_int_equal(elector_expires_ms(&e), 3100 + 15000);
	feed(&e, ELECTOR_IN_WATCHED, 12200, &r, &act);
	assert_string_equal(elector_holder(&e), "b");
	assert_int_equal(elector_expires_ms(&e), 3100 + 15000);
	assert_int_equal(act.kind, NOTHING);
}

static void
test_watch_release(void **state)
{
	struct elector		 e;
	struct elector_action	 act;
	struct lease		 rec;
	unsigned		 seen[21];
	int			 i, n;

	(void)state;
	memset(seen, 0, sizeof(seen));
	for (n = 0; n < 200; n++) {
		watching_follower(&e);
		e.rng ^= (uint64_t)n * 0x9e3779b97f4a7c15ULL;
		/* A renew seen through the watch moves the expiry later. */
		fixed_record(R_FOREIGN2, &rec);
		feed(&e, ELECTOR_IN_WATCHED, 5000, &rec, &act);
		assert_int_equal(act.kind, ELECTOR_DO_NOTHING);
		assert_in_range(act.wake_ms, 20000, 20020);
		/* The release: a write within 0-20 ms, never a GET first. */
		fixed_record(R_FREE, &rec);
		feed(&e, ELECTOR_IN_WATCHED, 6000, &rec, &act);
		if (act.kind == ELECTOR_DO_NOTHING) {
			assert_in_range(act.wake_ms, 6001, 6020);
			feed(&e, ELECTOR_IN_TICK, act.wake_ms, NULL, &act);
		}
		assert_int_equal(act.kind, ELECTOR_DO_UPDATE);
		assert_string_equal(act.record.holder, "a");
		assert_int_equal(act.record.transitions, 4);
		seen[e.sent_ms - 6000]++;
	}
	/* The spread is spread: at least 10 of the 21 slots were used. */
	for (i = 0, n = 0; i < 21; i++)
		n += seen[i] > 0;
	assert_true(n >= 10);
}

static void
test_watch_inflight_and_off(void **state)
{
	struct elector		 e;
	struct elector_action	 act;
	struct lease		 rec;

	(void)state;
	watching_follower(&e);
	/* Taken only while no request is in flight. */
	feed(&e, ELECTOR_IN_TICK, 15030, NULL, &act);
	assert_int_equal(act.kind, ELECTOR_DO_UPDATE);
	fixed_record(R_FREE, &rec);
	feed(&e, ELECTOR_IN_WATCHED, 15031, &rec, &act);
	assert_string_equal(elector_holder(&e), "b");
	assert_int_equal(e.inflight, ELECTOR_DO_UPDATE);

	/* The watch breaks: the follower polls within 2.2 x retry_period. */
	watching_follower(&e);
	feed(&e, ELECTOR_IN_WATCH_DOWN, 1000, NULL, &act);
	assert_int_equal(e.next_kind, ELECTOR_DO_GET);
	assert_in_range(act.wake_ms, 3000, 5400);
}

static void
test_watch_leader(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_action	 act;
	struct lease		 rec, mine;
	char			 err[128];

	(void)state;
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	feed(&e, ELECTOR_IN_WATCH_UP, 0, NULL, &act);
	fixed_record(R_FREE, &rec);
	feed(&e, ELECTOR_IN_GOT, 10, &rec, &act);
	if (act.kind == ELECTOR_DO_NOTHING)
		feed(&e, ELECTOR_IN_TICK, act.wake_ms, NULL, &act);
	assert_int_equal(act.kind, ELECTOR_DO_UPDATE);
	mine = act.record;
	strcpy(mine.rv, "200");
	feed(&e, ELECTOR_IN_WRITTEN, 40, &mine, &act);
	assert_true(elector_is_leader(&e, 40));
	/* Our own write echoed by the watch: nothing changes. */
	strcpy(mine.rv, "201");
	feed(&e, ELECTOR_IN_WATCHED, 50, &mine, &act);
	assert_int_equal(act.kind, ELECTOR_DO_NOTHING);
	assert_true(elector_is_leader(&e, 50));
	assert_int_equal(act.events & ELECTOR_EV_LOST, 0);
	/* Another holder's write seen through the watch ends the claim. */
	fixed_record(R_FOREIGN, &rec);
	strcpy(rec.rv, "202");
	feed(&e, ELECTOR_IN_WATCHED, 60, &rec, &act);
	assert_false(elector_is_leader(&e, 60));
	assert_int_equal(e.state, ELECTOR_FOLLOWER);
	assert_true(act.events & ELECTOR_EV_LOST);
}

/*
 * elector_expires_ms: a foreign record lives from its observation for
 * the longer of our lease_duration (15 s) and its own duration.
 */
static void
test_expires_ms(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_action	 act;
	struct lease		 rec;
	char			 err[128];

	(void)state;
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	feed(&e, ELECTOR_IN_TICK, 0, NULL, &act);
	fixed_record(R_FOREIGN60, &rec);
	feed(&e, ELECTOR_IN_GOT, 100, &rec, &act);
	assert_int_equal(elector_expires_ms(&e), 100 + 60000);
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	feed(&e, ELECTOR_IN_TICK, 0, NULL, &act);
	fixed_record(R_FOREIGN, &rec);
	rec.duration_s = 5;
	feed(&e, ELECTOR_IN_GOT, 100, &rec, &act);
	assert_int_equal(elector_expires_ms(&e), 100 + 15000);
}

/*
 * F6: a renew is given request_timeout (up to renew_deadline) whatever
 * the claim has left, and after a slow answer the next renew goes at
 * once rather than retry_period later.
 */
static void
test_slow_renew(void **state)
{
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	struct elector_action	 act;
	struct lease		 rec, mine;
	char			 err[128];

	(void)state;
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), 0);
	feed(&e, ELECTOR_IN_TICK, 0, NULL, &act);
	fixed_record(R_FREE, &rec);
	feed(&e, ELECTOR_IN_GOT, 10, &rec, &act);
	mine = act.record;
	strcpy(mine.rv, "300");
	feed(&e, ELECTOR_IN_WRITTEN, 20, &mine, &act);	/* until 10010 */
	feed(&e, ELECTOR_IN_TICK, 2020, NULL, &act);
	assert_int_equal(act.kind, ELECTOR_DO_UPDATE);
	mine = act.record;
	strcpy(mine.rv, "301");
	/* 4.98 s round trip: until 12020, next renew at once. */
	feed(&e, ELECTOR_IN_WRITTEN, 7000, &mine, &act);
	assert_true(elector_is_leader(&e, 7000));
	assert_int_equal(act.kind, ELECTOR_DO_UPDATE);
	/* 5020 ms of claim left: the full request_timeout all the same. */
	assert_int_equal(act.timeout_ms, 5000);
	mine = act.record;
	strcpy(mine.rv, "302");
	/* The claim ends at 12020 while the renew is out... */
	feed(&e, ELECTOR_IN_TICK, 12020, NULL, &act);
	assert_false(elector_is_leader(&e, 12020));
	/* ...and its answer, sent at 7000, gives it back until 17000. */
	feed(&e, ELECTOR_IN_WRITTEN, 11990 + 40, &mine, &act);
	assert_true(elector_is_leader(&e, 12030));
	assert_int_equal(e.lead_until_ms, 17000);
}

static void
test_timing_rules(void **state)
{
	static const struct {
		uint64_t	 ld, rd, rp;
		const char	*err;
	} bad[] = {
		{ 10000, 10000, 2000, "lease_duration must be greater than "
		    "renew_deadline" },
		{ 15000, 2400, 2000, "renew_deadline must be greater than "
		    "retry_period x 1.2" },
		{ 15000, 10000, 0, "retry_period must be greater than zero" },
		{ 15500, 10000, 2000, "lease_duration must be a whole number "
		    "of seconds" },
	};
	struct elector		 e;
	struct elector_config	 conf = test_config(1);
	char			 err[128];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(elector_check_timing(bad[i].ld, bad[i].rd,
		    bad[i].rp, err, sizeof(err)), -1);
		assert_string_equal(err, bad[i].err);
	}
	assert_int_equal(elector_check_timing(15000, 2401, 2000, err,
	    sizeof(err)), 0);
	conf.identity[0] = '\0';
	assert_int_equal(elector_init(&e, &conf, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "identity must not be empty");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_life_cases),
		cmocka_unit_test(test_life_record),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_handover),
		cmocka_unit_test(test_preferred_holder),
		cmocka_unit_test(test_handover_hold),
		cmocka_unit_test(test_assigned_hold),
		cmocka_unit_test(test_coordinated_watch_reads_from_expiry),
		cmocka_unit_test(test_coordinated),
		cmocka_unit_test(test_same_second_cap),
		cmocka_unit_test(test_jitter),
		cmocka_unit_test(test_hung_backoff),
		cmocka_unit_test(test_timing_rules),
		cmocka_unit_test(test_read_from_past),
		cmocka_unit_test(test_watch_release),
		cmocka_unit_test(test_watch_inflight_and_off),
		cmocka_unit_test(test_watch_leader),
		cmocka_unit_test(test_expires_ms),
		cmocka_unit_test(test_slow_renew),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
