/*
 * elector_explore.h -- what the explorer (elector_explore.c: the search,
 * the hash, the trace) and its model (elector_explore_model.c: the
 * store, the network, the nodes and their clocks around the real
 * electors) share.
 */

#ifndef ELECTOR_EXPLORE_H
#define ELECTOR_EXPLORE_H

#include <stdint.h>

#include "core/elector.h"

#define Q_MS		250	/* one step: a quarter of retry_period */
#define LD_MS		2000
#define RD_MS		1500
#define RP_MS		1000
#define TIMEOUT_MS	750
#define BUDGET_MS	1000	/* a stop's shutdown budget */
#define PAUSE_STEPS	12	/* a pause or suspend: LD + RP */
#define WATCH_BACK_STEPS 2	/* a broken stream comes back then */
#define WATCH_POLL_MS	60000
#define WALL0_US	1700000000000000LL
#define NEVER		UINT64_MAX
#define MAXN		3
#define MAXG		6	/* requests on the network */
#define WQ		3	/* watch events on their way to one node */
#define MAXDEPTH	1024

enum ev_kind {
	EV_TICK, EV_WAKE, EV_TIMEOUT, EV_ANSWER, EV_LOSE_ANSWER, EV_APPLY,
	EV_LOSE, EV_REJECT, EV_STUCK, EV_PAUSE, EV_SUSPEND, EV_STOP, EV_WATCH,
	EV_BREAK, EV_WATCH_BACK
};





/* A Lease record, small: what the electors write and read of it. */
struct rec {
	int64_t		 acquire_us;
	int64_t		 renew_us;
	int64_t		 mark_us;
	int32_t		 duration_s;
	int32_t		 transitions;
	uint32_t	 rv;		/* 0 = none */
	int8_t		 holder;	/* index into identities, -1 = "" */
	int8_t		 handover;	/* the same */
	int8_t		 pad[2];
};

/* A request on its way to the store. */
struct msg {
	uint64_t	 due;		/* applied by then, unless lost */
	struct rec	 rec;
	uint32_t	 base_rv;	/* the version an UPDATE goes over */
	int32_t		 node;
	int32_t		 gen;		/* its sender's request number */
	int32_t		 kind;		/* enum elector_action_kind */
	int32_t		 late;		/* stuck: due after the timeout */
	int32_t		 abandoned;	/* its sender gave it up */
};

/* Unused slots stay zero: the struct is hashed whole up to e. */
struct node {
	uint64_t	 wake_ms;	/* TICK due then (world time) */
	uint64_t	 timeout_at;	/* the request fails then */
	uint64_t	 paused_until;	/* it runs nothing before then */
	uint64_t	 suspend_ms;	/* that pause is a suspend this long */
	uint64_t	 lag_ms;	/* its deadline clock is behind */
	uint64_t	 stop_in_ms;	/* STOP fed then, or NEVER */
	uint64_t	 ans_due;	/* the answer is fed by then */
	uint64_t	 watch_back_at;	/* a broken stream returns then */
	uint64_t	 wq_due[WQ];	/* watch events' delivery bounds */
	struct rec	 ans_rec;
	struct rec	 pending;	/* watched during a request */
	struct rec	 wq[WQ];
	uint32_t	 rv;		/* the last body's version */
	int32_t		 alive, waiting, have_ans, ans_kind, watch_on;
	int32_t		 have_pending, wq_n, gen;
	struct elector	 e;		/* last: hashed apart */
};

struct world {
	uint64_t	 now_ms;
	uint64_t	 store_ms;	/* when the store was last written */
	struct rec	 store;
	uint32_t	 version;
	int32_t		 exists, nnet, faults_left, stops_left, pad;
	struct msg	 net[MAXG];
	struct node	 nodes[MAXN];	/* last: hashed node by node */
};

struct ev {
	int		 kind, a;
};

/* One exploration's settings and counters. */
struct xp_settings {
	int		 n, steps, faults, stops, watch;
	int		 latency;	/* steps a message may take */
	int		 monotonic;	/* planted: a suspend stops the clock */
	int		 nocas;		/* planted: UPDATE over any version */
	int		 lying;		/* planted: a read shows no holder */
	int		 norelease;	/* planted: a stop never releases */
	int		 verbose;	/* replaying a trace: print each feed */
	const char	*violation;	/* set by a check */
	char		 why[256];
	uint64_t	 states, transitions, leader_states;
	uint64_t	 landed_late, refused_late;
	int		 max_depth;
};

extern struct xp_settings xp;

extern const char *const xp_ev_names[];
extern const char *const xp_act_names[];
extern const char *const xp_identities[];

/* The world at time 0: every node started, its first step fed. */
void	xp_start(struct world *);

/* Carry out one event on the world (xp.violation set by a check). */
void	xp_run_event(struct world *, const struct ev *);

/* S1 at this instant, each node judged on its own deadline clock. */
void	xp_check(struct world *);

/* The events that can happen next in the world, into evs; their count. */
int	xp_events(const struct world *, struct ev *evs);

#endif /* ELECTOR_EXPLORE_H */
