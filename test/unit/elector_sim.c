/*
 * elector_sim.c -- many electors, one in-memory Lease store with
 * compare-and-swap on resourceVersion, a virtual clock, and a seeded
 * random schedule of network delays, lost requests, lost answers, late
 * writes, server errors, process pauses, kills, graceful stops and
 * restarts (some reusing an identity), step-downs (a release followed
 * by a cooldown), and the lease deleted by hand.
 * In one schedule in ten the electors are coordinated (conf.coordinated)
 * and a controller, at random times, names a holder in a free or expired
 * lease (a live node, a dead or restarting one, or an identity nobody
 * has) or sets preferredHolder on a live one, as kube-apiserver's
 * coordinated election controller writes them.
 * In half the schedules the electors also watch the store: every write
 * is delivered to each watcher in order after a random delay, while a
 * request is in flight it waits as daemon_api.c keeps it (the newest, fed
 * after the answer if still newer), and streams break and come back
 * (ELECTOR_IN_WATCH_DOWN, ELECTOR_IN_WATCH_UP).  After every event it checks that no two electors
 * would answer "I lead" at that virtual instant.
 *
 * In one schedule in five the readers see the past for a while (the
 * lagging watch caches of several API servers): each node's reads may
 * be answered from a snapshot of the store up to its own lag old (a
 * version it has already seen superseded, or none yet), its watch
 * skips, duplicates and reorders events, and a stream that comes back
 * first replays older versions ("resumed on another API server").  A
 * record older than one the node has seen must never make it lead,
 * never extend its claim, and never push back its view of another
 * holder's term; a takeover over such a version is refused (409).  In
 * the clean ones among them the leader is killed as the lag ends, and
 * a follower must lead within 2 x lease_duration + 3 x retry_period
 * (a skipped event may hide the last renew until a takeover's 409).
 *
 * A stop or a step-down abandons the request in flight (act.cancel): it
 * stays on the network and may land before the release, after it (when
 * the store must refuse it), or never; stops are also fed on purpose
 * while a leader's renew is out.  Each stop has a random budget
 * (until_ms), and a node must not end its stop before that budget with
 * its own record still in the store.  The run fails if any of the three
 * orders was never exercised.
 *
 *   elector_sim [schedules [first-seed]]
 *
 * A failing schedule prints its seed; `elector_sim 1 SEED` replays it.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "core/elector.h"

#define MAXN		5
#define MAXGHOST	64
#define SIM_MS		120000	/* virtual length of one schedule */
#define NEVER		UINT64_MAX
#define WATCHQ		8	/* watch events in flight to one node */
#define WATCH_POLL_MS	60000	/* safety-net poll while watching */
#define HIST		32	/* store versions kept for stale reads */
#define READ_LAG_MS	20000	/* a reader's lag is up to this */

static unsigned long	 step_downs;	/* ELECTOR_IN_STEP_DOWN fed */
static unsigned long	 candidacy_offs; /* ELECTOR_IN_CANDIDACY off fed */
static unsigned long	 handovers;	/* ELECTOR_IN_HANDOVER fed to leaders */
static unsigned long	 assigned;	/* coordinated: holders named */
static unsigned long	 assigned_taken; /* nodes leading on one */
static unsigned long	 handed;	/* handovers written */
static unsigned long	 handed_taken;	/* successors leading on a handover */
static unsigned long	 passive_leaders; /* offs fed while leading */
static unsigned long	 suspends;	/* node suspends (a stopped clock) */
static unsigned long	 stale_reads;	/* reads answered from the past */
static unsigned long	 stale_fed;	/* older records fed to an elector */
static unsigned long	 stale_refused;	/* takeovers over them, refused */
static unsigned long	 replayed;	/* older versions a watch replayed */
static unsigned long	 stale_stops;	/* stops ended early on such a read */
static uint64_t		 past_led_ms;	/* led time after the lag ended */
static uint64_t		 past_tail_ms;	/* time after the lag ended */
static unsigned long	 abandoned[3];	/* abandoned writes that landed
					   before the release, were refused,
					   never landed */

struct rng {
	uint64_t	 s;
};

static uint64_t
rnd(struct rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

/* Uniform in [lo, hi]. */
static uint64_t
between(struct rng *r, uint64_t lo, uint64_t hi)
{
	return lo + rnd(r) % (hi - lo + 1);
}

static int
chance(struct rng *r, unsigned permille)
{
	return rnd(r) % 1000 < permille;
}

/* A request on its way to the store; it may land after its sender gave up. */
struct ghost {
	int			 node;		/* sender, or -1 if nobody waits */
	unsigned		 gen;		/* sender's request number */
	enum elector_action_kind kind;
	struct lease		 rec;
	char			 base_rv[LEASE_RV_MAX];
	int			 stale_base;	/* base_rv came from the past */
	uint64_t		 apply_ms;
	uint64_t		 answer_delay_ms;
	int			 lose_answer;
	int			 abandoned;	/* its sender gave it up */
};

struct node {
	struct elector		 e;
	int			 alive;
	int			 identity;	/* index into identities */
	uint64_t		 wake_ms;
	unsigned		 gen;		/* request number */
	int			 waiting;	/* a request is out */
	uint64_t		 timeout_at;	/* FAILED at this time */
	uint64_t		 answer_at;	/* answer arrives, or NEVER */
	enum elector_input_kind	 answer;
	struct lease		 answer_rec;
	char			 rv[LEASE_RV_MAX];	/* last body's version */
	uint64_t		 paused_until;
	uint64_t		 suspend_ms;	/* the pause is a suspend this long */
	uint64_t		 lag_ms;	/* its deadline clock is behind */
	uint64_t		 cut_until;	/* its requests are lost till then */
	uint64_t		 stop_at;	/* graceful stop, or NEVER */
	uint64_t		 budget_ms;	/* the stop's shutdown budget */
	uint64_t		 stop_in_ms;	/* when STOP was fed, or NEVER */
	enum elector_action_kind req_kind; /* the request last sent */
	int			 req_lost;	/* it never reached the store */
	uint64_t		 kill_at;	/* kill -9, or NEVER */
	uint64_t		 restart_at;	/* start again, or NEVER */
	int			 watch_on;	/* its watch stream is up */
	uint64_t		 watch_back_at;	/* stream comes back, or NEVER */
	struct lease		 wq[WATCHQ];	/* events on their way, in order */
	uint64_t		 wq_at[WATCHQ];	/* their delivery times */
	int			 wq_n;
	struct lease		 pending;	/* delivered during a request */
	int			 have_pending;
	int			 candidate;	/* CANDIDACY to feed: on or off */
	const char		*to;		/* HANDOVER to feed: successor */
	uint64_t		 cooldown_ms;	/* and its cooldown */
	uint64_t		 read_lag_ms;	/* its reads may be this old */
	uint64_t		 seen_rv;	/* newest version fed to it */
	struct lease		 newest;	/* that version */
	int			 stale_body;	/* rv is older than seen_rv */
	int			 answer_stale;	/* answer_rec is from the past */
};

/* A version of the store, as a lagging cache may still serve it. */
struct version {
	struct lease	 rec;
	int		 exists;
	uint64_t	 at_ms;		/* when it was written */
};

struct world {
	struct rng	 rng;
	int		 n;
	int		 faults;	/* 0: a clean network, no kills */
	int		 deletes;	/* lease deletions, no restarts */
	int		 watch;		/* the nodes watch the store */
	struct node	 nodes[MAXN];
	struct lease	 store;
	int		 exists;
	unsigned	 version;
	struct ghost	 ghosts[MAXGHOST];
	int		 nghosts;
	uint64_t	 now_ms;
	uint64_t	 led_ms;	/* virtual time with a leader */
	unsigned	 transitions;
	int		 last_leader;
	uint64_t	 first_lead_ms;
	uint64_t	 seed;
	uint64_t	 store_ms;	/* when the store was last written */
	int		 assigned_store; /* its holder was named by the
					   controller, not written by one */
	int		 coordinated;	/* the nodes are; a controller runs */
	uint64_t	 ctl_at;	/* the controller's next look */
	int		 past;		/* readers see the past until... */
	uint64_t	 past_until;	/* ...this time */
	uint64_t	 kill_leader_at; /* clean: the leader dies, or NEVER */
	int		 read_stale;	/* apply()'s read came from the past */
	uint64_t	 killed_at;	/* when it died, or NEVER */
	struct version	 hist[HIST];	/* the store's recent versions */
	unsigned	 nhist;		/* versions written so far */
};

static const char *const identities[] = { "pod-a", "pod-b", "pod-c",
    "pod-d", "pod-e" };

/*
 * What node i's deadline clock reads now.  A suspend stops the machine
 * and, unless the daemon's deadline clock counts it (clock.h:
 * CLOCK_DEADLINE_COUNTS_SUSPEND, CLOCK_BOOTTIME), stops that clock too:
 * from its resume on, it is behind by as long as the suspend lasted.
 */
static uint64_t
node_now(const struct world *w, const struct node *nd)
{
	return w->now_ms - nd->lag_ms;
}

static struct elector_config
sim_config(struct world *w, int identity)
{
	struct elector_config	 c;

	memset(&c, 0, sizeof(c));
	snprintf(c.identity, sizeof(c.identity), "%s", identities[identity]);
	c.lease_duration_ms = 15000;
	c.renew_deadline_ms = 10000;
	c.retry_period_ms = 2000;
	c.request_timeout_ms = 5000;
	c.release_on_cancel = 1;
	c.seed = rnd(&w->rng);
	c.coordinated = w->coordinated;
	return c;
}

static void	feed(struct world *, int, enum elector_input_kind,
		    const struct lease *);

static void
start_node(struct world *w, int i, int identity)
{
	struct node		*nd = &w->nodes[i];
	struct elector_config	 c = sim_config(w, identity);
	char			 err[128];

	memset(nd, 0, sizeof(*nd));
	if (elector_init(&nd->e, &c, node_now(w, nd), err, sizeof(err)) ==
	    -1) {
		fprintf(stderr, "elector_init: %s\n", err);
		exit(2);
	}
	nd->alive = 1;
	nd->identity = identity;
	nd->answer_at = NEVER;
	nd->stop_at = nd->kill_at = nd->restart_at = NEVER;
	nd->budget_ms = between(&w->rng, 500, 8000);
	nd->stop_in_ms = NEVER;
	if (w->faults && !w->deletes) {
		if (chance(&w->rng, 300))
			nd->kill_at = w->now_ms + between(&w->rng, 5000, SIM_MS);
		else if (chance(&w->rng, 300))
			nd->stop_at = w->now_ms + between(&w->rng, 5000, SIM_MS);
	}
	nd->watch_back_at = NEVER;
	nd->watch_on = w->watch;
	if (w->past)
		nd->read_lag_ms = between(&w->rng, 0, READ_LAG_MS);
	feed(w, i, w->watch ? ELECTOR_IN_WATCH_UP : ELECTOR_IN_TICK, NULL);
}

static uint64_t
rv_num(const struct lease *l)
{
	return strtoull(l->rv, NULL, 10);
}

/* Keep the store's new state for the readers that lag. */
static void
remember(struct world *w)
{
	struct version	*v = &w->hist[w->nhist++ % HIST];

	v->rec = w->store;
	v->exists = w->exists;
	v->at_ms = w->now_ms;
}

static int
lagging(const struct world *w)
{
	return w->past && w->now_ms < w->past_until;
}

/*
 * The store as a cache lag_ms behind serves it: the newest version
 * written at or before now - lag_ms.  Returns 1, or -1 if the store's
 * own state is what it serves (nothing older is kept).  A cache from
 * before the Lease existed would answer 404, which no elector can tell
 * from a deletion (F13): left out here.
 */
static int
snapshot(const struct world *w, uint64_t lag_ms, struct lease *out)
{
	unsigned	 k, n = w->nhist < HIST ? w->nhist : HIST;
	const struct version *v;

	for (k = 0; k < n; k++) {
		v = &w->hist[(w->nhist - 1 - k) % HIST];
		if (v->at_ms + lag_ms <= w->now_ms) {
			if (k == 0)
				return -1;
			if (!v->exists)
				return -1;
			*out = v->rec;
			return 1;
		}
	}
	return -1;
}

/* The stream to node i breaks: what was on its way is gone. */
static void
watch_break(struct world *w, int i)
{
	struct node	*nd = &w->nodes[i];

	nd->watch_on = 0;
	nd->wq_n = 0;
	nd->watch_back_at = w->now_ms + between(&w->rng, 100, 30000);
	feed(w, i, ELECTOR_IN_WATCH_DOWN, NULL);
}

/* Queue the store's new state to every node whose stream is up. */
static void
watch_publish(struct world *w)
{
	struct node	*nd;
	uint64_t	 at;
	int		 i;

	if (!w->watch)
		return;
	for (i = 0; i < w->n; i++) {
		nd = &w->nodes[i];
		if (!nd->alive || !nd->watch_on)
			continue;
		if (nd->wq_n == WATCHQ) {
			nd->watch_back_at = w->now_ms;	/* broken below */
			continue;
		}
		at = w->now_ms + between(&w->rng, 0, w->faults ? 400 : 30);
		if (w->faults && chance(&w->rng, 20))
			at += between(&w->rng, 1000, 15000);	/* stalled */
		if (nd->wq_n > 0 && at < nd->wq_at[nd->wq_n - 1])
			at = nd->wq_at[nd->wq_n - 1];	/* in order */
		if (lagging(w) && chance(&w->rng, 100))
			continue;			/* skipped */
		nd->wq[nd->wq_n] = w->store;
		nd->wq_at[nd->wq_n++] = at;
		if (!lagging(w))
			continue;
		if (nd->wq_n > 1 && chance(&w->rng, 100)) {
			/* Reordered: the newer one overtakes the older. */
			struct lease	 t = nd->wq[nd->wq_n - 1];

			nd->wq[nd->wq_n - 1] = nd->wq[nd->wq_n - 2];
			nd->wq[nd->wq_n - 2] = t;
		}
		if (nd->wq_n < WATCHQ && chance(&w->rng, 100)) {
			/* Duplicated. */
			nd->wq[nd->wq_n] = nd->wq[nd->wq_n - 1];
			nd->wq_at[nd->wq_n] = nd->wq_at[nd->wq_n - 1];
			nd->wq_n++;
		}
	}
}

/* Feed a watched record now, or keep it until the answer (daemon_api.c). */
static void
watch_deliver(struct world *w, int i, const struct lease *rec)
{
	struct node	*nd = &w->nodes[i];

	if (nd->e.inflight != ELECTOR_DO_NOTHING) {
		nd->pending = *rec;
		nd->have_pending = 1;
		return;
	}
	if (nd->e.have_observed && rv_num(rec) <= rv_num(&nd->e.observed))
		return;		/* older than what a read already gave */
	feed(w, i, ELECTOR_IN_WATCHED, rec);
}

/*
 * A stream resumed on another API server, whose cache is behind: it
 * first replays some older versions, oldest first.
 */
static void
watch_replay(struct world *w, int i)
{
	unsigned	 k, n = w->nhist < HIST ? w->nhist : HIST;
	unsigned	 back = (unsigned)between(&w->rng, 0, 4);
	const struct version *v;

	if (back > n)
		back = n;
	for (k = back; k > 0 && w->nodes[i].alive; k--) {
		v = &w->hist[(w->nhist - k) % HIST];
		if (!v->exists)
			continue;
		replayed++;
		watch_deliver(w, i, &v->rec);
	}
}

/* Apply a request to the store; fill the answer the server would give. */
static void
apply(struct world *w, const struct ghost *g, enum elector_input_kind *ans,
    struct lease *out)
{
	memset(out, 0, sizeof(*out));
	w->read_stale = 0;
	switch (g->kind) {
	case ELECTOR_DO_GET:
		if (g->node >= 0 && lagging(w) && chance(&w->rng, 500)) {
			if (snapshot(w, w->nodes[g->node].read_lag_ms,
			    out) == 1) {
				*ans = ELECTOR_IN_GOT;
				stale_reads++;
				w->read_stale = 1;
				return;
			}
		}
		*ans = w->exists ? ELECTOR_IN_GOT : ELECTOR_IN_NOTFOUND;
		*out = w->store;
		return;
	case ELECTOR_DO_CREATE:
		if (w->exists) {
			*ans = ELECTOR_IN_CONFLICT;
			return;
		}
		break;
	case ELECTOR_DO_UPDATE:
		/* A PUT carrying a uid to a missing lease is a 409 (4.4). */
		if (!w->exists || strcmp(w->store.rv, g->base_rv) != 0) {
			if (g->abandoned)
				abandoned[1]++;
			if (g->stale_base)
				stale_refused++;
			*ans = ELECTOR_IN_CONFLICT;
			return;
		}
		break;
	default:
		*ans = ELECTOR_IN_FAILED;
		return;
	}
	if (g->abandoned)
		abandoned[0]++;
	w->store = g->rec;
	w->store_ms = w->now_ms;
	w->assigned_store = 0;
	snprintf(w->store.rv, sizeof(w->store.rv), "%u", ++w->version);
	w->exists = 1;
	*ans = ELECTOR_IN_WRITTEN;
	*out = w->store;
	if (g->stale_base) {
		fprintf(stderr, "seed %" PRIu64 ": a write over a version "
		    "older than its sender had seen was stored\n", w->seed);
		exit(1);
	}
	remember(w);
	watch_publish(w);
}

/* Put a request on the network with a random fate. */
static void
send_request(struct world *w, int i, const struct elector_action *act)
{
	struct node	*nd = &w->nodes[i];
	struct ghost	*g;
	uint64_t	 max_delay = w->faults ? 300 : 50;

	nd->gen++;
	nd->waiting = 1;
	nd->timeout_at = w->now_ms + act->timeout_ms;
	nd->answer_at = NEVER;
	nd->req_kind = act->kind;
	nd->req_lost = 1;
	if (w->faults && chance(&w->rng, 30)) {
		/* The server answers 500 at once: nothing stored. */
		nd->answer_at = w->now_ms + between(&w->rng, 1, 20);
		nd->answer = ELECTOR_IN_FAILED;
		return;
	}
	if (w->faults && (chance(&w->rng, 30) || nd->cut_until > w->now_ms))
		return;		/* lost on the way: only the timeout */
	if (w->nghosts == MAXGHOST)
		return;
	nd->req_lost = 0;
	g = &w->ghosts[w->nghosts++];
	g->node = i;
	g->gen = nd->gen;
	g->kind = act->kind;
	g->rec = act->record;
	memcpy(g->base_rv, nd->rv, sizeof(g->base_rv));
	g->stale_base = act->kind == ELECTOR_DO_UPDATE && nd->stale_body;
	g->apply_ms = w->now_ms + between(&w->rng, 0, max_delay);
	if (w->faults && chance(&w->rng, 30))
		/* Stuck in the network, lands after the sender gave up. */
		g->apply_ms = w->now_ms + between(&w->rng, act->timeout_ms,
		    2 * act->timeout_ms);
	g->answer_delay_ms = between(&w->rng, 0, max_delay);
	g->lose_answer = w->faults && chance(&w->rng, 30);
	g->abandoned = 0;
}

/*
 * The node gave its request up (act.cancel): the request may still land,
 * but its answer is never fed.
 */
static void
abandon_request(struct world *w, int i)
{
	struct node	*nd = &w->nodes[i];
	int		 j, found = 0;

	for (j = 0; j < w->nghosts; j++)
		if (w->ghosts[j].node == i && w->ghosts[j].gen == nd->gen &&
		    w->ghosts[j].kind != ELECTOR_DO_GET) {
			w->ghosts[j].abandoned = 1;
			found = 1;
		}
	if (!found && nd->req_lost && nd->req_kind != ELECTOR_DO_GET)
		abandoned[2]++;
	nd->gen++;
	nd->waiting = 0;
	nd->answer_at = NEVER;
}

/*
 * Whether the store holds a record this node wrote: its name, and our
 * term or one of its recent writes.
 */
static int
store_is_ours(const struct world *w, const struct node *nd)
{
	const struct elector	*e = &nd->e;
	unsigned		 k;

	/*
	 * A holder named by the controller keeps the old term's acquireTime
	 * and transitions: it is no write of ours, even where those match.
	 */
	if (!w->exists || w->assigned_store ||
	    strcmp(w->store.holder, e->conf.identity) != 0)
		return 0;
	if (e->have_term && w->store.acquire_us == e->term_acquire_us &&
	    w->store.transitions == e->term_transitions)
		return 1;
	for (k = 0; k < ELECTOR_SENDS && k < e->nsends; k++)
		if (e->sends[k].renew_us == w->store.renew_us)
			return 1;
	return 0;
}

static void
check_safety(struct world *w)
{
	int	 i, leader = -1;

	for (i = 0; i < w->n; i++) {
		if (!w->nodes[i].alive ||
		    !elector_is_leader(&w->nodes[i].e, node_now(w,
		    &w->nodes[i])))
			continue;
		if (w->nodes[i].e.passive) {
			fprintf(stderr, "seed %" PRIu64 ": node %d leads at %"
			    PRIu64 " ms though not a candidate\n", w->seed, i,
			    w->now_ms);
			exit(1);
		}
		if (leader != -1) {
			fprintf(stderr, "seed %" PRIu64 ": two leaders at %"
			    PRIu64 " ms: node %d (%s) and node %d (%s)\n",
			    w->seed, w->now_ms, leader,
			    identities[w->nodes[leader].identity], i,
			    identities[w->nodes[i].identity]);
			exit(1);
		}
		leader = i;
	}
	if (leader != -1 && leader != w->last_leader) {
		w->transitions++;
		if (w->first_lead_ms == NEVER)
			w->first_lead_ms = w->now_ms;
	}
	w->last_leader = leader;
}

static void
feed(struct world *w, int i, enum elector_input_kind kind,
    const struct lease *rec)
{
	struct node		*nd = &w->nodes[i];
	struct elector_input	 in, ref_in;
	struct elector_action	 act, ref_act;
	struct elector		 ref;
	int			 was_handed, older;

	memset(&in, 0, sizeof(in));
	in.kind = kind;
	in.now_ms = node_now(w, nd);
	in.wall_us = 1700000000000000LL + (int64_t)w->now_ms * 1000;
	in.record = rec;
	in.poll_ms = WATCH_POLL_MS;	/* read by WATCH_UP only */
	in.candidate = nd->candidate;	/* read by CANDIDACY only */
	in.cooldown_ms = nd->cooldown_ms;
	in.to = nd->to;		/* read by HANDOVER only */
	if (kind == ELECTOR_IN_STOP && nd->stop_in_ms == NEVER) {
		in.until_ms = node_now(w, nd) + nd->budget_ms;
		nd->stop_in_ms = w->now_ms;
	}
	if (rec != NULL && kind != ELECTOR_IN_WATCHED) {
		snprintf(nd->rv, sizeof(nd->rv), "%s", rec->rv);
		nd->stale_body = rv_num(rec) < nd->seen_rv;
	}
	was_handed = strcmp(nd->e.observed.handover,
	    identities[nd->identity]) == 0;
	/*
	 * A record older than one this node was already given: the same
	 * step is taken on a copy with the newest one, and the older may
	 * give no more than it (no claim, no later end of the claim, no
	 * later expiry of another holder's term).
	 */
	older = rec != NULL && rv_num(rec) < nd->seen_rv &&
	    nd->e.have_observed;
	if (older) {
		ref = nd->e;
		ref_in = in;
		ref_in.record = &nd->newest;
		elector_step(&ref, &ref_in, &ref_act);
	}
	elector_step(&nd->e, &in, &act);
	if (rec != NULL && rv_num(rec) > nd->seen_rv) {
		nd->seen_rv = rv_num(rec);
		nd->newest = *rec;
	}
	if (older) {
		stale_fed++;
		if ((elector_is_leader(&nd->e, in.now_ms) &&
		    !elector_is_leader(&ref, in.now_ms)) ||
		    nd->e.lead_until_ms > ref.lead_until_ms) {
			fprintf(stderr, "seed %" PRIu64 ": node %d (%s) claims "
			    "on version %s, older than %" PRIu64 " at %" PRIu64
			    " ms\n", w->seed, i, identities[nd->identity],
			    rec->rv, nd->seen_rv, w->now_ms);
			exit(1);
		}
		if (!nd->e.ours &&
		    elector_expires_ms(&nd->e) > elector_expires_ms(&ref)) {
			fprintf(stderr, "seed %" PRIu64 ": node %d (%s): version "
			    "%s, older than %" PRIu64 ", moved %s's expiry to %"
			    PRIu64 " ms, not %" PRIu64 " ms, at %" PRIu64
			    " ms\n", w->seed, i, identities[nd->identity],
			    rec->rv, nd->seen_rv, nd->e.observed.holder,
			    elector_expires_ms(&nd->e),
			    elector_expires_ms(&ref), w->now_ms);
			exit(1);
		}
	}
	if (act.events & ELECTOR_EV_HANDED)
		handed++;
	if ((act.events & ELECTOR_EV_LEADING) && was_handed)
		handed_taken++;
	else if ((act.events & ELECTOR_EV_LEADING) && w->coordinated)
		assigned_taken++;
	/*
	 * A watched record becomes the body of the next PUT only if the
	 * elector took it (daemon_api.c does the same): a write is decided on
	 * the record it goes over.
	 */
	if (rec != NULL && kind == ELECTOR_IN_WATCHED &&
	    strcmp(nd->e.observed.rv, rec->rv) == 0) {
		snprintf(nd->rv, sizeof(nd->rv), "%s", rec->rv);
		nd->stale_body = older;
	}
	if (getenv("SIM_TRACE") != NULL)
		fprintf(stderr, "%6" PRIu64 " node %d %s in %d rec %s/%s/%"
		    PRId64 "/%d -> %s act %d (%s/%" PRId64 "/%d) lead_until %"
		    PRIu64 " wake %" PRIu64 "\n", w->now_ms, i,
		    identities[nd->identity], kind,
		    rec ? rec->holder : "-", rec ? rec->rv : "-",
		    rec ? rec->acquire_us / 1000 % 1000000 : 0,
		    rec ? rec->transitions : 0,
		    elector_state_name(nd->e.state), act.kind,
		    act.record.holder, act.record.acquire_us / 1000 % 1000000,
		    act.record.transitions, nd->e.lead_until_ms, act.wake_ms);
	if (act.cancel)
		abandon_request(w, i);
	if (nd->e.state == ELECTOR_STOPPED) {
		/*
		 * A stop ends with our release written or its budget spent,
		 * unless a write of ours landed only after the stop began
		 * (then nobody can know it landed before it is answered).
		 */
		if (store_is_ours(w, nd) && w->store_ms < nd->stop_in_ms &&
		    node_now(w, nd) < nd->e.stop_until_ms && kind ==
		    ELECTOR_IN_GOT && nd->answer_stale) {
			/*
			 * A read from the past hid a write of ours that had
			 * landed: to the elector, as one that lands after the
			 * stop (below).  The stop ends without the release
			 * and the followers wait lease_duration, as after a
			 * kill.  Counted, not a violation.
			 */
			stale_stops++;
		} else if (store_is_ours(w, nd) && w->store_ms <
		    nd->stop_in_ms && node_now(w, nd) < nd->e.stop_until_ms) {
			fprintf(stderr, "seed %" PRIu64 ": node %d (%s) stopped "
			    "at %" PRIu64 " ms, before its budget (%" PRIu64
			    " ms), with its record in the store\n", w->seed, i,
			    identities[nd->identity], w->now_ms,
			    nd->e.stop_until_ms);
			exit(1);
		}
		nd->alive = 0;
		nd->waiting = 0;
		if (chance(&w->rng, 700))
			nd->restart_at = w->now_ms + between(&w->rng, 0, 3000);
		return;
	}
	if (act.kind != ELECTOR_DO_NOTHING)
		send_request(w, i, &act);
	/*
	 * The daemon arms a timer for the wake on the loop's clock, which
	 * a suspend stops (CLOCK_MONOTONIC): kept in world time, moved on
	 * by a suspend's length at its resume.
	 */
	nd->wake_ms = act.wake_ms == 0 ? NEVER : w->now_ms +
	    (act.wake_ms > node_now(w, nd) ? act.wake_ms - node_now(w, nd) :
	    0);
	if (nd->have_pending && nd->e.inflight == ELECTOR_DO_NOTHING &&
	    kind != ELECTOR_IN_WATCHED) {
		struct lease	 p = nd->pending;

		nd->have_pending = 0;
		watch_deliver(w, i, &p);
	}
}

/* The next event time, over all nodes and the network. */
static uint64_t
next_time(struct world *w)
{
	uint64_t	 t = NEVER, v;
	int		 i;

	/* Something overdue (say, after a pause) runs at once. */
#define MIN(x)	do {						\
	v = (x);						\
	if (v < w->now_ms)					\
		v = w->now_ms;					\
	if (v < t)						\
		t = v;						\
} while (0)
	for (i = 0; i < w->n; i++) {
		struct node *nd = &w->nodes[i];

		if (!nd->alive) {
			MIN(nd->restart_at);
			continue;
		}
		MIN(nd->kill_at);
		MIN(nd->stop_at);
		if (nd->paused_until > w->now_ms) {
			MIN(nd->paused_until);
			continue;
		}
		MIN(nd->wake_ms);
		if (nd->wq_n > 0)
			MIN(nd->wq_at[0]);
		MIN(nd->watch_back_at);
		if (nd->waiting) {
			MIN(nd->answer_at);
			MIN(nd->timeout_at);
		}
	}
	for (i = 0; i < w->nghosts; i++)
		MIN(w->ghosts[i].apply_ms);
	if (w->coordinated)
		MIN(w->ctl_at);
	MIN(w->kill_leader_at);
#undef MIN
	return t;
}

static int
all_seen(const struct world *w)
{
	int	 i;

	for (i = 0; i < w->n; i++)
		if (w->nodes[i].alive && (!w->nodes[i].e.have_observed ||
		    w->nodes[i].e.observed.holder[0] == '\0'))
			return 0;
	return 1;
}

/* Run everything due at w->now_ms. */
/*
 * The coordinated election controller: a free, expired or missing lease
 * gets a holder (5 s, renewTime now, acquireTime as it was, the strategy,
 * no preferredHolder); a live one now and then a preferredHolder.
 */
static void
controller(struct world *w)
{
	int	 k = (int)between(&w->rng, 0, MAXN);
	const char *who = k == MAXN ? "pod-nobody" : identities[k];
	int	 expired;

	w->ctl_at = w->now_ms + between(&w->rng, 200, 3000);
	expired = !w->exists || w->store.holder[0] == '\0' ||
	    w->now_ms >= w->store_ms + (uint64_t)w->store.duration_s * 1000;
	if (expired) {
		if (!w->exists)
			memset(&w->store, 0, sizeof(w->store));
		snprintf(w->store.holder, sizeof(w->store.holder), "%s", who);
		w->store.duration_s = 5;
		w->store.renew_us = 1700000000000000LL +
		    (int64_t)w->now_ms * 1000;
		w->store.preferred[0] = '\0';
		w->assigned_store = 1;
		assigned++;
	} else if (chance(&w->rng, 300))
		snprintf(w->store.preferred, sizeof(w->store.preferred), "%s",
		    who);
	else
		return;
	snprintf(w->store.strategy, sizeof(w->store.strategy),
	    "OldestEmulationVersion");
	snprintf(w->store.rv, sizeof(w->store.rv), "%u", ++w->version);
	w->exists = 1;
	w->store_ms = w->now_ms;
	remember(w);
	watch_publish(w);
}

static void
run_due(struct world *w)
{
	struct lease		 out;
	enum elector_input_kind	 ans;
	int			 i;

	for (i = 0; i < w->nghosts; i++) {
		struct ghost *g = &w->ghosts[i];
		struct node *nd;

		if (g->apply_ms != w->now_ms)
			continue;
		apply(w, g, &ans, &out);
		nd = g->node >= 0 ? &w->nodes[g->node] : NULL;
		if (nd != NULL && nd->alive && nd->waiting &&
		    nd->gen == g->gen && !g->lose_answer) {
			nd->answer_at = w->now_ms + g->answer_delay_ms;
			nd->answer = ans;
			nd->answer_rec = out;
			nd->answer_stale = w->read_stale;
		}
		w->ghosts[i--] = w->ghosts[--w->nghosts];
	}
	/*
	 * An admin deletes the lease (F13), in schedules without restarts,
	 * once every node has seen a holder in it: a process whose last read
	 * found no lease cannot tell a deletion from a lease that never
	 * existed (elector.c on_notfound), so deletions are safe only then.
	 */
	if (w->deletes && w->exists && chance(&w->rng, 1) && all_seen(w)) {
		w->exists = 0;
		remember(w);
	}
	if (w->kill_leader_at == w->now_ms) {
		/* Clean and lagging: the lag ends, and the leader dies. */
		w->kill_leader_at = NEVER;
		for (i = 0; i < w->n; i++)
			if (w->nodes[i].alive && elector_is_leader(
			    &w->nodes[i].e, node_now(w, &w->nodes[i]))) {
				w->nodes[i].alive = 0;
				w->killed_at = w->now_ms;
			}
	}
	if (w->coordinated && w->ctl_at <= w->now_ms)
		controller(w);
	for (i = 0; i < w->n; i++) {
		struct node *nd = &w->nodes[i];

		if (!nd->alive) {
			if (nd->restart_at == w->now_ms) {
				/* Same pod name half the time (F21). */
				start_node(w, i, chance(&w->rng, 500) ?
				    nd->identity : (int)between(&w->rng, 0,
				    MAXN - 1));
			}
			continue;
		}
		if (nd->kill_at == w->now_ms) {
			nd->alive = 0;
			nd->restart_at = w->now_ms + between(&w->rng, 0, 5000);
			continue;
		}
		if (nd->stop_at == w->now_ms) {
			nd->stop_at = NEVER;
			feed(w, i, ELECTOR_IN_STOP, NULL);
			continue;
		}
		if (w->faults && !w->deletes && nd->waiting &&
		    nd->e.state == ELECTOR_LEADER &&
		    nd->e.inflight == ELECTOR_DO_UPDATE &&
		    chance(&w->rng, 4)) {
			/* SIGTERM while a renew is out: it races the release. */
			feed(w, i, ELECTOR_IN_STOP, NULL);
			continue;
		}
		if (nd->paused_until > w->now_ms)
			continue;
		if (nd->suspend_ms > 0) {
			/*
			 * Resumed: the loop's timers and the requests' timeouts
			 * ran on a clock that stood still; the deadline clock
			 * did too, unless it counts a suspend.
			 */
			if (nd->wake_ms != NEVER)
				nd->wake_ms += nd->suspend_ms;
			if (nd->waiting)
				nd->timeout_at += nd->suspend_ms;
			if (!CLOCK_DEADLINE_COUNTS_SUSPEND)
				nd->lag_ms += nd->suspend_ms;
			nd->suspend_ms = 0;
		}
		if (nd->watch_back_at <= w->now_ms) {
			if (nd->watch_on) {
				watch_break(w, i);	/* queue overflowed */
				continue;
			}
			/*
			 * Reconnected: the stream says it is up (watch.c does
			 * so before its first event), then starts with the
			 * state.
			 */
			nd->watch_back_at = NEVER;
			nd->watch_on = 1;
			feed(w, i, ELECTOR_IN_WATCH_UP, NULL);
			if (lagging(w))
				watch_replay(w, i);
			if (nd->alive && w->exists)
				watch_deliver(w, i, &w->store);
			continue;
		}
		if (nd->wq_n > 0 && nd->wq_at[0] <= w->now_ms) {
			struct lease	 rec = nd->wq[0];

			memmove(&nd->wq[0], &nd->wq[1],
			    (size_t)(nd->wq_n - 1) * sizeof(nd->wq[0]));
			memmove(&nd->wq_at[0], &nd->wq_at[1],
			    (size_t)(nd->wq_n - 1) * sizeof(nd->wq_at[0]));
			nd->wq_n--;
			watch_deliver(w, i, &rec);
			continue;
		}
		if (nd->alive && nd->watch_on && w->faults &&
		    chance(&w->rng, 2)) {
			watch_break(w, i);	/* stream cut, 410, silence */
			continue;
		}
		if (nd->waiting && nd->answer_at <= w->now_ms &&
		    nd->answer_at <= nd->timeout_at) {
			nd->waiting = 0;
			nd->answer_at = NEVER;
			feed(w, i, nd->answer, nd->answer ==
			    ELECTOR_IN_GOT || nd->answer == ELECTOR_IN_WRITTEN ?
			    &nd->answer_rec : NULL);
		} else if (nd->waiting && nd->timeout_at <= w->now_ms) {
			nd->waiting = 0;
			nd->answer_at = NEVER;
			feed(w, i, ELECTOR_IN_FAILED, NULL);
		} else if (nd->wake_ms <= w->now_ms)
			feed(w, i, ELECTOR_IN_TICK, NULL);
		else if (nd->alive && w->faults &&
		    elector_is_leader(&nd->e, node_now(w, nd)) &&
		    chance(&w->rng, 1)) {
			/* POST /leader/release: step down, cool down. */
			step_downs++;
			feed(w, i, ELECTOR_IN_STEP_DOWN, NULL);
		}
		if (nd->alive && w->faults &&
		    elector_is_leader(&nd->e, node_now(w, nd)) &&
		    chance(&w->rng, 1)) {
			/*
			 * POST /leader/release?to=: to another live node, to
			 * a node that is down or restarting, or to an
			 * identity nobody has.
			 */
			int	 k = (int)between(&w->rng, 0, MAXN);

			nd->to = k == MAXN ? "pod-nobody" : identities[k];
			handovers++;
			feed(w, i, ELECTOR_IN_HANDOVER, NULL);
		}
		if (nd->alive && w->faults &&
		    chance(&w->rng, nd->e.passive ? 20 : 1)) {
			/*
			 * The application's health, its client, a pause: out
			 * of candidacy now and then, back soon after.
			 */
			nd->candidate = nd->e.passive;
			nd->cooldown_ms = between(&w->rng, 0, 15000);
			if (!nd->candidate) {
				candidacy_offs++;
				passive_leaders += elector_is_leader(&nd->e,
				    node_now(w, nd));
			}
			feed(w, i, ELECTOR_IN_CANDIDACY, NULL);
		}
		if (nd->alive && w->faults && chance(&w->rng, 3))
			/* SIGSTOP for up to 1.5 x lease_duration (F3, F4). */
			nd->paused_until = w->now_ms + between(&w->rng, 100,
			    22500);
		else if (nd->alive && w->faults && chance(&w->rng, 2)) {
			/*
			 * Its machine suspended for up to 1.5 x lease_duration
			 * (F40): stopped like a pause, and the clocks that a
			 * suspend stops stand still meanwhile.
			 */
			nd->suspend_ms = between(&w->rng, 100, 22500);
			nd->paused_until = w->now_ms + nd->suspend_ms;
			suspends++;
		}
		if (nd->alive && w->faults && chance(&w->rng, 5))
			/* Its network alone goes dark (F5). */
			nd->cut_until = w->now_ms + between(&w->rng, 1000,
			    20000);
	}
}

/* One schedule; exits non-zero on a violation. */
static void
run_schedule(uint64_t seed, uint64_t *led_ms, unsigned *transitions)
{
	static struct world	 w;
	uint64_t		 t;
	int			 i, leader;

	memset(&w, 0, sizeof(w));
	w.seed = seed;
	w.rng.s = seed * 0x2545f4914f6cdd1dULL + 1;
	w.n = (int)between(&w.rng, 2, MAXN);
	w.faults = seed % 10 != 0;
	w.deletes = seed % 10 == 1;
	w.watch = seed % 2 == 0;
	w.coordinated = seed % 10 == 3;
	w.past = seed % 5 == 2 || seed % 20 == 0;
	w.past_until = w.past ? between(&w.rng, 20000, 70000) : 0;
	w.kill_leader_at = w.past && !w.faults ? w.past_until : NEVER;
	w.killed_at = NEVER;
	w.ctl_at = between(&w.rng, 200, 3000);
	w.last_leader = -1;
	w.first_lead_ms = NEVER;
	for (i = 0; i < w.n; i++)
		start_node(&w, i, i);
	while ((t = next_time(&w)) != NEVER && t <= SIM_MS) {
		/* Count led time over the gap, judged at its start. */
		if (t < w.now_ms) {
			fprintf(stderr, "seed %" PRIu64 ": time went back\n", seed);
			exit(2);
		}
		leader = w.last_leader;
		if (leader != -1)
			w.led_ms += t - w.now_ms;
		if (w.past && w.now_ms >= w.past_until) {
			past_tail_ms += t - w.now_ms;
			if (leader != -1)
				past_led_ms += t - w.now_ms;
		}
		w.now_ms = t;
		run_due(&w);
		check_safety(&w);
		if (w.killed_at != NEVER && w.last_leader == -1 &&
		    w.now_ms > w.killed_at + 2 * 15000 + 3 * 2000) {
			/*
			 * Followers are live again once the lag has ended:
			 * within lease_duration of the last version they
			 * see, and a skipped event may hide the dead
			 * leader's last renew until a takeover's 409.
			 */
			fprintf(stderr, "seed %" PRIu64 ": no leader %" PRIu64
			    " ms after the lag ended and the leader died\n",
			    seed, w.now_ms - w.killed_at);
			exit(1);
		}
	}
	if (!w.faults) {
		/*
		 * On a clean network the first leader is in place within one
		 * round trip or so, and keeps the lease to the end.
		 */
		if (w.first_lead_ms > 1000 || w.transitions !=
		    (w.killed_at != NEVER ? 2u : 1u)) {
			fprintf(stderr, "seed %" PRIu64 ": clean network: first "
			    "leader at %" PRIu64 " ms, %u transitions\n", seed,
			    w.first_lead_ms, w.transitions);
			exit(1);
		}
	}
	*led_ms += w.led_ms;
	*transitions += w.transitions;
}

int
main(int argc, char *argv[])
{
	uint64_t	 n = 20000, first = 1, led_ms = 0, i;
	unsigned	 transitions = 0;
	double		 share;

	if (argc > 1)
		n = strtoull(argv[1], NULL, 10);
	if (argc > 2)
		first = strtoull(argv[2], NULL, 10);
	for (i = 0; i < n; i++)
		run_schedule(first + i, &led_ms, &transitions);
	share = (double)led_ms / ((double)n * SIM_MS);
	printf("elector_sim: %" PRIu64 " schedules of %d s, %u leader "
	    "transitions, %lu step-downs, a leader %.1f%% of the time\n", n,
	    SIM_MS / 1000, transitions, step_downs, share * 100);
	printf("elector_sim: candidacy ended %lu times, %lu of them while "
	    "leading\n", candidacy_offs, passive_leaders);
	printf("elector_sim: %lu directed handovers asked of leaders, %lu "
	    "written, %lu successors led on one\n", handovers, handed,
	    handed_taken);
	printf("elector_sim: coordinated: %lu holders named by the "
	    "controller, %lu leaderships taken on one\n", assigned,
	    assigned_taken);
	printf("elector_sim: %lu suspends (a stopped clock)\n", suspends);
	printf("elector_sim: readers in the past: %lu stale reads, %lu "
	    "older records fed, %lu versions replayed, %lu writes over a "
	    "stale version refused, %lu stops ended before their budget by "
	    "one; a leader %.1f%% of the time after the lag\n", stale_reads,
	    stale_fed, replayed, stale_refused, stale_stops,
	    past_tail_ms ? 100.0 * (double)past_led_ms / (double)past_tail_ms :
	    0.0);
	printf("elector_sim: abandoned writes: %lu landed before the "
	    "release, %lu refused after it, %lu never landed\n", abandoned[0],
	    abandoned[1], abandoned[2]);
	/* The step-downs and every order of the races must have run. */
	if (n >= 1000 && (abandoned[0] == 0 || abandoned[1] == 0 ||
	    abandoned[2] == 0)) {
		fprintf(stderr, "elector_sim: an order of abandoned writes and "
		    "releases was never exercised\n");
		return 1;
	}
	if (n >= 1000 && (candidacy_offs == 0 || passive_leaders == 0)) {
		fprintf(stderr, "elector_sim: candidacy never ended while "
		    "leading in %" PRIu64 " schedules\n", n);
		return 1;
	}
	if (n >= 1000 && (handed == 0 || handed_taken == 0)) {
		fprintf(stderr, "elector_sim: no handover written in %" PRIu64
		    " schedules\n", n);
		return 1;
	}
	if (n >= 1000 && (assigned == 0 || assigned_taken == 0)) {
		fprintf(stderr, "elector_sim: no coordinated assignment taken "
		    "in %" PRIu64 " schedules\n", n);
		return 1;
	}
	if (n >= 1000 && suspends == 0) {
		fprintf(stderr, "elector_sim: no suspend in %" PRIu64
		    " schedules\n", n);
		return 1;
	}
	if (n >= 1000 && (stale_fed == 0 || stale_refused == 0 ||
	    replayed == 0)) {
		fprintf(stderr, "elector_sim: readers never saw the past in %"
		    PRIu64 " schedules\n", n);
		return 1;
	}
	if (n >= 1000 && past_led_ms < past_tail_ms / 2) {
		fprintf(stderr, "elector_sim: after the lag, a leader only "
		    "%.1f%% of the time\n", 100.0 * (double)past_led_ms /
		    (double)past_tail_ms);
		return 1;
	}
	if (n >= 1000 && step_downs == 0) {
		fprintf(stderr, "elector_sim: no step-down in %" PRIu64
		    " schedules\n", n);
		return 1;
	}
	/* An elector that never leads would be trivially "safe". */
	if (share < 0.5) {
		fprintf(stderr, "elector_sim: a leader only %.1f%% of the "
		    "time\n", share * 100);
		printf("0 passed, 1 failed\n");
		return 1;
	}
	printf("%" PRIu64 " passed, 0 failed\n", n);
	return 0;
}
