/*
 * shard_sim.c -- shard groups over the pure elector: M member processes,
 * each running one elector per shard Lease (N of them), one on its own
 * member Lease and a passive one observing every other member Lease,
 * driven by the planner (core/shard.c) exactly as the daemon is to drive
 * them: CANDIDACY on or off per shard (cooldown 0), HANDOVER to the named
 * receiver then CANDIDACY off for the one shard released.
 *
 * The API server is an in-memory store of Leases with compare-and-swap
 * on resourceVersion; requests and answers take random delays and, in
 * the disruption phase, are sometimes lost, late or answered 500.  Each
 * process has one watch stream (the daemon's label-selector watch):
 * every write reaches it in order after a random delay; an API outage
 * breaks every stream and fails every request until it ends.  Members
 * join, leave (SIGTERM: every elector stops and releases), crash
 * (kill -9: nothing more from them), and pause (SIGSTOP past the lease:
 * their clock runs on, their events wait).
 *
 * In one schedule in three the readers see the past until the last
 * disruption: a read (a GET, or the group's list at resourceVersion=0,
 * served from a cache) may answer a Lease as it was up to its process's
 * lag ago, the stream skips, duplicates and reorders events, and one
 * that comes back first replays older versions.  There balance is due
 * within BOUND_MS + WATCH_POLL_MS: a skipped event is seen at the next
 * event of its Lease or at the poll that backs the watch.
 *
 * Checked: after every event, per Lease (every shard and every member
 * Lease), no two processes' electors report a claim at that virtual
 * instant (elector_is_leader); a record older than one the elector was
 * given gives it no more than the newest would (no claim, no later end
 * of one, no later expiry of another's term); after the last disruption, the group
 * reaches balance (every shard claimed by a live member, every live
 * member holding floor(N/M) or ceil(N/M) of them) within BOUND_MS and
 * stays so to the end of the schedule.
 *
 *   shard_sim [schedules [first-seed [shards [members]]]]
 *   shard_sim -f		the figures: moves and time to balance
 *
 * A failing schedule prints its seed; `shard_sim 1 SEED` replays it
 * (SIM_TRACE=1 traces every input).
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/elector.h"
#include "core/shard.h"

#define MAXNODE		8	/* process slots; slot k is identity m<k> */
#define MAXSH		64
#define MAXL		(MAXSH + MAXNODE)
#define NEVER		UINT64_MAX
#define LD_MS		15000
#define WATCH_POLL_MS	60000
#define PLAN_MS		250	/* re-plan at least this often */
#define BOUND_MS	45000	/* to balance after the last disruption */
#define STABLE_MS	15000	/* balance must then hold this long */
#define GROUP		"g"
#define POOL		16384
#define HISTN		8	/* versions kept per Lease for stale reads */
#define READ_LAG_MS	20000	/* a process's reads may be this old */

enum ev_kind {
	EV_WAKE, EV_APPLY, EV_ANSWER, EV_TIMEOUT, EV_WATCH, EV_PLAN,
	EV_JOIN, EV_TERM, EV_KILL, EV_PAUSE, EV_OUTAGE_ON, EV_OUTAGE_OFF,
	EV_WATCH_BACK
};

struct event {
	uint64_t		 at;
	uint64_t		 seq;
	enum ev_kind		 kind;
	int			 node;
	unsigned		 inc;		/* the process it is for */
	int			 lease;
	uint64_t		 gen;		/* request, wake or stream gen */
	enum elector_input_kind	 ans;		/* ANSWER */
	enum elector_action_kind act;		/* APPLY */
	char			 base_rv[LEASE_RV_MAX];
	uint64_t		 answer_delay;
	int			 lose_answer;
	uint64_t		 dur;		/* PAUSE, OUTAGE */
	struct lease		 rec;
};

struct agent {
	struct elector		 e;
	uint64_t		 wake_at, wake_gen;	/* the wake queued */
	uint64_t		 want_wake;	/* the elector's wake_ms */
	uint64_t		 req_gen;
	int			 waiting;
	char			 rv[LEASE_RV_MAX];
	struct lease		 pending;
	int			 have_pending;
	int			 cand;
	int			 stopped;
	uint64_t		 seen_rv;	/* newest version fed to it */
	struct lease		 newest;	/* that version */
};

struct node {
	int			 alive;
	unsigned		 inc;
	int			 stopping;
	uint64_t		 paused_until;
	int			 watch_on;
	uint64_t		 stream_gen;
	uint64_t		 last_watch_at;
	uint64_t		 read_lag;	/* its reads may be this old */
	struct agent		 a[MAXL];
};

/* A version of a Lease, as a lagging cache may still serve it. */
struct version {
	struct lease		 rec;
	uint64_t		 at;		/* when it was written */
};

static struct {
	uint64_t	 rng;
	uint64_t	 seed;
	unsigned	 n;		/* shards */
	int		 watch;
	uint64_t	 now;
	uint64_t	 seq;
	int		 faults;	/* the disruption phase's network */
	int		 outage;
	struct node	 nodes[MAXNODE];
	struct lease	 store[MAXL];
	int		 exists[MAXL];
	unsigned	 version;
	struct event	 pool[POOL];
	int		 freelist[POOL], nfree;
	int		 heap[POOL], nheap;
	unsigned char	 dirty[MAXL];
	uint64_t	 handovers;
	int		 past;		/* readers see the past until... */
	uint64_t	 past_until;	/* ...the last disruption */
	struct version	 hist[MAXL][HISTN];	/* each Lease's versions */
	unsigned	 nhist[MAXL];
} w;

static char		 ident[MAXNODE][8];
static uint64_t		 total_handovers, total_events;
static unsigned long	 done[EV_WATCH_BACK + 1];	/* node events run */
static unsigned long	 stale_reads, stale_fed, replayed;

static uint64_t
rnd(void)
{
	w.rng ^= w.rng << 13;
	w.rng ^= w.rng >> 7;
	w.rng ^= w.rng << 17;
	return w.rng;
}

static uint64_t
between(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

static int
chance(unsigned permille)
{
	return rnd() % 1000 < permille;
}

static int
ev_less(int a, int b)
{
	const struct event *x = &w.pool[a], *y = &w.pool[b];

	return x->at < y->at || (x->at == y->at && x->seq < y->seq);
}

static struct event *
ev_new(enum ev_kind kind, uint64_t at, int node)
{
	struct event	*ev;

	if (w.nfree == 0) {
		fprintf(stderr, "seed %" PRIu64 ": event pool full\n", w.seed);
		exit(2);
	}
	ev = &w.pool[w.freelist[--w.nfree]];
	memset(ev, 0, offsetof(struct event, rec));
	ev->kind = kind;
	ev->at = at < w.now ? w.now : at;
	ev->node = node;
	if (node >= 0)
		ev->inc = w.nodes[node].inc;
	return ev;
}

static void
ev_push(struct event *ev)
{
	int	 i = w.nheap++, p, t;

	ev->seq = w.seq++;
	w.heap[i] = (int)(ev - w.pool);
	while (i > 0 && ev_less(w.heap[i], w.heap[p = (i - 1) / 2])) {
		t = w.heap[i];
		w.heap[i] = w.heap[p];
		w.heap[p] = t;
		i = p;
	}
}

static int
ev_pop(void)
{
	int	 top = w.heap[0], i = 0, c, t;

	w.heap[0] = w.heap[--w.nheap];
	for (;;) {
		c = 2 * i + 1;
		if (c >= w.nheap)
			break;
		if (c + 1 < w.nheap && ev_less(w.heap[c + 1], w.heap[c]))
			c++;
		if (!ev_less(w.heap[c], w.heap[i]))
			break;
		t = w.heap[i];
		w.heap[i] = w.heap[c];
		w.heap[c] = t;
		i = c;
	}
	return top;
}

static void
ev_free(struct event *ev)
{
	w.freelist[w.nfree++] = (int)(ev - w.pool);
}

static void	feed(int, int, enum elector_input_kind, const struct lease *,
		    int, const char *);

static int
lagging(void)
{
	return w.past && w.now < w.past_until;
}

static void	watch_deliver(int, int, const struct lease *);

static void
send_request(int i, int l, const struct elector_action *act)
{
	struct agent	*ag = &w.nodes[i].a[l];
	struct event	*ev;
	uint64_t	 maxd = w.faults ? 200 : 40;

	ag->req_gen++;
	ag->waiting = 1;
	ev = ev_new(EV_TIMEOUT, w.now + act->timeout_ms, i);
	ev->lease = l;
	ev->gen = ag->req_gen;
	ev_push(ev);
	if (w.outage || (w.faults && chance(10))) {
		/* 500 at once, or the server unreachable. */
		ev = ev_new(EV_ANSWER, w.now + between(1, 20), i);
		ev->lease = l;
		ev->gen = ag->req_gen;
		ev->ans = ELECTOR_IN_FAILED;
		ev_push(ev);
		return;
	}
	if (w.faults && chance(10))
		return;		/* lost: only the timeout */
	ev = ev_new(EV_APPLY, w.now + between(0, maxd), i);
	ev->lease = l;
	ev->gen = ag->req_gen;
	ev->act = act->kind;
	ev->rec = act->record;
	memcpy(ev->base_rv, ag->rv, sizeof(ev->base_rv));
	if (w.faults && chance(10))
		ev->at = w.now + between(act->timeout_ms, 2 * act->timeout_ms);
	ev->answer_delay = between(0, maxd);
	ev->lose_answer = w.faults && chance(10);
	ev_push(ev);
}

/* Queue the new state of Lease l to every stream that is up. */
static void
publish(int l)
{
	struct node	*nd;
	struct event	*ev;
	uint64_t	 at;
	int		 i;

	if (!w.watch)
		return;
	for (i = 0; i < MAXNODE; i++) {
		nd = &w.nodes[i];
		if (!nd->alive || !nd->watch_on)
			continue;
		at = w.now + between(0, w.faults ? 300 : 30);
		if (lagging() && chance(100))
			continue;			/* skipped */
		if (lagging() && chance(100))
			at = w.now;	/* overtakes the events before it */
		else if (at < nd->last_watch_at)
			at = nd->last_watch_at;		/* in order */
		if (at > nd->last_watch_at)
			nd->last_watch_at = at;
		ev = ev_new(EV_WATCH, at, i);
		ev->lease = l;
		ev->gen = nd->stream_gen;
		ev->rec = w.store[l];
		ev_push(ev);
		if (lagging() && chance(100)) {
			/* Duplicated. */
			ev = ev_new(EV_WATCH, nd->last_watch_at, i);
			ev->lease = l;
			ev->gen = nd->stream_gen;
			ev->rec = w.store[l];
			ev_push(ev);
		}
	}
}

/*
 * The last version of Lease l written at least lag ago, or NULL if the
 * store's own is what a cache that far behind serves.
 */
static const struct lease *
snapshot(int l, uint64_t lag)
{
	unsigned	 k, n = w.nhist[l] < HISTN ? w.nhist[l] : HISTN;
	const struct version *v;

	for (k = 0; k < n; k++) {
		v = &w.hist[l][(w.nhist[l] - 1 - k) % HISTN];
		if (v->at + lag <= w.now)
			return k == 0 ? NULL : &v->rec;
	}
	return NULL;
}

/*
 * A stream resumed on another API server: older versions of Lease l
 * first, oldest first.
 */
static void
replay(int i, int l)
{
	unsigned	 k, n = w.nhist[l] < HISTN ? w.nhist[l] : HISTN;
	unsigned	 back = (unsigned)between(0, 3);
	struct lease	 rec;

	if (back > n)
		back = n;
	for (k = back; k > 0 && w.nodes[i].alive; k--) {
		rec = w.hist[l][(w.nhist[l] - k) % HISTN].rec;
		replayed++;
		watch_deliver(i, l, &rec);
	}
}

static void
apply(struct event *ev)
{
	struct event		*ans;
	enum elector_input_kind	 a;
	const struct lease	*old;
	int			 l = ev->lease, wrote = 0;

	switch (ev->act) {
	case ELECTOR_DO_GET:
		a = w.exists[l] ? ELECTOR_IN_GOT : ELECTOR_IN_NOTFOUND;
		break;
	case ELECTOR_DO_CREATE:
		a = w.exists[l] ? ELECTOR_IN_CONFLICT : ELECTOR_IN_WRITTEN;
		wrote = !w.exists[l];
		break;
	case ELECTOR_DO_UPDATE:
		wrote = w.exists[l] && strcmp(w.store[l].rv, ev->base_rv) == 0;
		a = wrote ? ELECTOR_IN_WRITTEN : ELECTOR_IN_CONFLICT;
		break;
	default:
		a = ELECTOR_IN_FAILED;
	}
	if (wrote) {
		w.store[l] = ev->rec;
		snprintf(w.store[l].rv, sizeof(w.store[l].rv), "%u",
		    ++w.version);
		w.exists[l] = 1;
		w.hist[l][w.nhist[l] % HISTN].rec = w.store[l];
		w.hist[l][w.nhist[l]++ % HISTN].at = w.now;
		publish(l);
	}
	if (ev->lose_answer)
		return;
	ans = ev_new(EV_ANSWER, w.now + ev->answer_delay, ev->node);
	ans->inc = ev->inc;
	ans->lease = l;
	ans->gen = ev->gen;
	ans->ans = a;
	if (a == ELECTOR_IN_GOT || a == ELECTOR_IN_WRITTEN)
		ans->rec = w.store[l];
	if (a == ELECTOR_IN_GOT && lagging() && chance(500) &&
	    (old = snapshot(l, w.nodes[ev->node].read_lag)) != NULL) {
		/* Read from a cache (the list at resourceVersion=0). */
		ans->rec = *old;
		stale_reads++;
	}
	ev_push(ans);
}

static void
watch_deliver(int i, int l, const struct lease *rec)
{
	struct agent	*ag = &w.nodes[i].a[l];

	if (ag->stopped)
		return;
	if (ag->e.inflight != ELECTOR_DO_NOTHING) {
		ag->pending = *rec;
		ag->have_pending = 1;
		return;
	}
	if (ag->e.have_observed && strtoull(rec->rv, NULL, 10) <=
	    strtoull(ag->e.observed.rv, NULL, 10))
		return;
	feed(i, l, ELECTOR_IN_WATCHED, rec, 0, NULL);
}

static void
feed(int i, int l, enum elector_input_kind kind, const struct lease *rec,
    int candidate, const char *to)
{
	struct node		*nd = &w.nodes[i];
	struct agent		*ag = &nd->a[l];
	struct elector_input	 in, ref_in;
	struct elector_action	 act, ref_act;
	struct elector		 ref;
	struct event		*ev;
	int			 k, older;

	if (ag->stopped)
		return;
	memset(&in, 0, sizeof(in));
	in.kind = kind;
	in.now_ms = w.now;
	in.wall_us = 1700000000000000LL + (int64_t)w.now * 1000;
	in.record = rec;
	in.poll_ms = WATCH_POLL_MS;
	in.candidate = candidate;
	in.to = to;
	in.until_ms = w.now + 5000;
	if (rec != NULL && kind != ELECTOR_IN_WATCHED)
		snprintf(ag->rv, sizeof(ag->rv), "%s", rec->rv);
	/*
	 * A record older than one this elector was given: the same step on
	 * a copy with the newest one bounds what the older may give.
	 */
	older = rec != NULL && ag->e.have_observed &&
	    strtoull(rec->rv, NULL, 10) < ag->seen_rv;
	if (older) {
		ref = ag->e;
		ref_in = in;
		ref_in.record = &ag->newest;
		elector_step(&ref, &ref_in, &ref_act);
	}
	elector_step(&ag->e, &in, &act);
	if (rec != NULL && strtoull(rec->rv, NULL, 10) > ag->seen_rv) {
		ag->seen_rv = strtoull(rec->rv, NULL, 10);
		ag->newest = *rec;
	}
	if (older && ((elector_is_leader(&ag->e, w.now) &&
	    !elector_is_leader(&ref, w.now)) ||
	    ag->e.lead_until_ms > ref.lead_until_ms ||
	    (!ag->e.ours &&
	    elector_expires_ms(&ag->e) > elector_expires_ms(&ref)))) {
		fprintf(stderr, "seed %" PRIu64 ": %s on L%d: version %s, "
		    "older than %" PRIu64 ", gave more than the newest at %"
		    PRIu64 " ms\n", w.seed, ident[i], l, rec->rv, ag->seen_rv,
		    w.now);
		exit(1);
	}
	stale_fed += older;
	w.dirty[l] = 1;
	total_events++;
	if (rec != NULL && kind == ELECTOR_IN_WATCHED &&
	    strcmp(ag->e.observed.rv, rec->rv) == 0)
		snprintf(ag->rv, sizeof(ag->rv), "%s", rec->rv);
	if (act.events & ELECTOR_EV_HANDED)
		w.handovers++;
	if (getenv("SIM_TRACE") != NULL)
		fprintf(stderr, "%6" PRIu64 " %s L%d in %d rec %s/%s -> %s "
		    "act %d (%s) lead_until %" PRIu64 "\n", w.now, ident[i],
		    l, kind, rec ? rec->holder : "-", rec ? rec->rv : "-",
		    elector_state_name(ag->e.state), act.kind,
		    act.record.holder, ag->e.lead_until_ms);
	if (act.cancel) {
		ag->req_gen++;
		ag->waiting = 0;
	}
	if (ag->e.state == ELECTOR_STOPPED) {
		ag->stopped = 1;
		ag->waiting = 0;
		for (k = 0; k < MAXL; k++)
			if (!nd->a[k].stopped)
				return;
		nd->alive = 0;
		return;
	}
	if (act.kind != ELECTOR_DO_NOTHING)
		send_request(i, l, &act);
	/*
	 * One wake queued per elector, the earliest: a later one is
	 * re-queued when that one fires (an early TICK is harmless).
	 */
	ag->want_wake = act.wake_ms == 0 ? NEVER : act.wake_ms;
	if (act.wake_ms != 0 && act.wake_ms < ag->wake_at) {
		ag->wake_at = act.wake_ms;
		ev = ev_new(EV_WAKE, act.wake_ms, i);
		ev->lease = l;
		ev->gen = ++ag->wake_gen;
		ev_push(ev);
	}
	if (ag->have_pending && ag->e.inflight == ELECTOR_DO_NOTHING &&
	    kind != ELECTOR_IN_WATCHED) {
		struct lease	 p = ag->pending;

		ag->have_pending = 0;
		watch_deliver(i, l, &p);
	}
}

static int
nleases(void)
{
	return (int)w.n + MAXNODE;
}

/* Whether node i sees member k live now. */
static int
member_live(int i, int k)
{
	const struct elector	*e = &w.nodes[i].a[w.n + k].e;

	if (k == i)
		return elector_is_leader(e, w.now);
	return e->have_observed && strcmp(e->observed.holder, ident[k]) == 0 &&
	    w.now < elector_expires_ms(e);
}

/* Run the planner for node i and feed what it says. */
static void
plan(int i)
{
	static struct shard_view v[MAXSH];
	struct node		*nd = &w.nodes[i];
	struct shard_plan	 p;
	const char		*members[MAXNODE];
	const struct elector	*e;
	unsigned		 nm = 0, s;
	int			 k, live;

	if (!nd->alive || nd->stopping || nd->paused_until > w.now)
		return;
	for (k = 0; k < MAXNODE; k++)
		if (member_live(i, k))
			members[nm++] = ident[k];
	for (s = 0; s < w.n; s++) {
		e = &nd->a[s].e;
		memset(&v[s], 0, sizeof(v[s]));
		live = e->have_observed && e->observed.holder[0] != '\0' &&
		    w.now < elector_expires_ms(e);
		v[s].mine = elector_is_leader(e, w.now);
		v[s].releasing = e->stepdown && e->ours;
		v[s].ours = live && e->ours && !v[s].mine && !v[s].releasing;
		v[s].holder = live ? e->observed.holder : NULL;
		v[s].handed = live && !v[s].mine &&
		    strcmp(e->observed.holder, ident[i]) == 0 &&
		    strcmp(e->observed.handover, ident[i]) == 0 && !e->ours;
	}
	if (shard_plan(GROUP, w.n, ident[i], members, nm, v, &p) == -1) {
		fprintf(stderr, "shard_plan failed\n");
		exit(2);
	}
	if (p.release >= 0) {
		feed(i, p.release, ELECTOR_IN_HANDOVER, NULL, 0,
		    members[p.release_to]);
		nd->a[p.release].cand = 0;
		feed(i, p.release, ELECTOR_IN_CANDIDACY, NULL, 0, NULL);
	}
	for (s = 0; s < w.n; s++)
		if (p.want[s] != nd->a[s].cand) {
			nd->a[s].cand = p.want[s];
			feed(i, (int)s, ELECTOR_IN_CANDIDACY, NULL, p.want[s],
			    NULL);
		}
}

static void
start_node(int i)
{
	struct node		*nd = &w.nodes[i];
	struct elector_config	 c;
	struct event		*ev;
	char			 err[128];
	unsigned		 inc = nd->inc + 1;
	int			 l;

	memset(nd, 0, sizeof(*nd));
	nd->inc = inc;
	nd->alive = 1;
	nd->watch_on = w.watch && !w.outage;
	nd->read_lag = w.past ? between(0, READ_LAG_MS) : 0;
	for (l = 0; l < nleases(); l++) {
		memset(&c, 0, sizeof(c));
		snprintf(c.identity, sizeof(c.identity), "%s", ident[i]);
		c.lease_duration_ms = LD_MS;
		c.renew_deadline_ms = 10000;
		c.retry_period_ms = 2000;
		c.request_timeout_ms = 5000;
		c.release_on_cancel = 1;
		c.seed = rnd();
		if (elector_init(&nd->a[l].e, &c, w.now, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "elector_init: %s\n", err);
			exit(2);
		}
		nd->a[l].wake_at = NEVER;
		nd->a[l].cand = 1;
		if (l != (int)w.n + i) {
			/* Shards wait for the plan; other members observed. */
			nd->a[l].cand = 0;
			feed(i, l, ELECTOR_IN_CANDIDACY, NULL, 0, NULL);
		}
		feed(i, l, nd->watch_on ? ELECTOR_IN_WATCH_UP :
		    ELECTOR_IN_TICK, NULL, 0, NULL);
	}
	ev = ev_new(EV_PLAN, w.now + PLAN_MS, i);
	ev_push(ev);
}

/* Every Lease touched by this event: no two claims at this instant. */
static void
check_safety(void)
{
	int	 l, i, who;

	for (l = 0; l < nleases(); l++) {
		if (!w.dirty[l])
			continue;
		w.dirty[l] = 0;
		who = -1;
		for (i = 0; i < MAXNODE; i++) {
			if (!w.nodes[i].alive || w.nodes[i].a[l].stopped ||
			    !elector_is_leader(&w.nodes[i].a[l].e, w.now))
				continue;
			if (who != -1) {
				fprintf(stderr, "seed %" PRIu64 ": two claims "
				    "on lease %d at %" PRIu64 " ms: %s and "
				    "%s\n", w.seed, l, w.now, ident[who],
				    ident[i]);
				exit(1);
			}
			who = i;
		}
	}
}

/* Who holds what, for a failure's message. */
static void
dump_state(void)
{
	unsigned	 s;
	int		 i;

	for (i = 0; i < MAXNODE; i++) {
		if (!w.nodes[i].alive)
			continue;
		fprintf(stderr, "  %s%s%s member %d:", ident[i],
		    w.nodes[i].stopping ? " stopping" : "",
		    w.nodes[i].paused_until > w.now ? " paused" : "",
		    elector_is_leader(&w.nodes[i].a[w.n + i].e, w.now));
		for (s = 0; s < w.n; s++)
			if (elector_is_leader(&w.nodes[i].a[s].e, w.now))
				fprintf(stderr, " %u", s);
		fprintf(stderr, "\n");
	}
}

/* Whether the group is balanced now (ground truth, not a view). */
static int
balanced(int *nmembers, unsigned *mask)
{
	unsigned	 count[MAXNODE], s, m = 0;
	int		 i, who, member[MAXNODE];

	*mask = 0;
	for (i = 0; i < MAXNODE; i++) {
		member[i] = w.nodes[i].alive && !w.nodes[i].stopping &&
		    elector_is_leader(&w.nodes[i].a[w.n + i].e, w.now);
		m += member[i];
		*mask |= (unsigned)member[i] << i;
		count[i] = 0;
	}
	*nmembers = (int)m;
	if (m == 0)
		return 0;
	for (s = 0; s < w.n; s++) {
		who = -1;
		for (i = 0; i < MAXNODE; i++)
			if (w.nodes[i].alive &&
			    elector_is_leader(&w.nodes[i].a[s].e, w.now))
				who = i;
		if (who < 0 || !member[who])
			return 0;
		count[who]++;
	}
	for (i = 0; i < MAXNODE; i++)
		if (member[i] && (count[i] < w.n / m ||
		    count[i] > (w.n + m - 1) / m))
			return 0;
	return 1;
}

/* The holder of each shard now (node index, -1), for the figures. */
static void
owners(int *own)
{
	unsigned	 s;
	int		 i;

	for (s = 0; s < w.n; s++) {
		own[s] = -1;
		for (i = 0; i < MAXNODE; i++)
			if (w.nodes[i].alive &&
			    elector_is_leader(&w.nodes[i].a[s].e, w.now))
				own[s] = i;
	}
}

static void
run_event(struct event *ev)
{
	struct node	*nd = ev->node >= 0 ? &w.nodes[ev->node] : NULL;
	struct agent	*ag;
	struct event	*again;
	int		 i, l;

	if (ev->kind == EV_APPLY) {
		apply(ev);
		return;
	}
	if (ev->kind >= EV_JOIN)
		done[ev->kind]++;
	if (ev->kind == EV_OUTAGE_ON || ev->kind == EV_OUTAGE_OFF) {
		w.outage = ev->kind == EV_OUTAGE_ON;
		for (i = 0; i < MAXNODE; i++) {
			nd = &w.nodes[i];
			if (!nd->alive || !w.watch)
				continue;
			if (w.outage && nd->watch_on) {
				nd->watch_on = 0;
				nd->stream_gen++;
				for (l = 0; l < nleases(); l++)
					feed(i, l, ELECTOR_IN_WATCH_DOWN,
					    NULL, 0, NULL);
			} else if (!w.outage) {
				again = ev_new(EV_WATCH_BACK, w.now +
				    between(0, 2000), i);
				ev_push(again);
			}
		}
		return;
	}
	if (ev->kind == EV_JOIN) {
		if (!nd->alive)
			start_node(ev->node);
		return;
	}
	if (!nd->alive || nd->inc != ev->inc) {
		if (ev->kind >= EV_JOIN)
			done[ev->kind]--;
		return;		/* for a process that is gone */
	}
	if (ev->kind == EV_KILL) {
		nd->alive = 0;
		return;
	}
	if (nd->paused_until > w.now) {
		/* SIGSTOP: everything for it waits, in order. */
		again = ev_new(ev->kind, nd->paused_until, ev->node);
		memcpy(again, ev, sizeof(*again));
		again->at = nd->paused_until;
		ev_push(again);
		return;
	}
	ag = ev->lease >= 0 ? &nd->a[ev->lease] : NULL;
	switch (ev->kind) {
	case EV_WAKE:
		if (ev->gen != ag->wake_gen)
			break;
		ag->wake_at = NEVER;
		if (ag->want_wake <= w.now)
			feed(ev->node, ev->lease, ELECTOR_IN_TICK, NULL, 0,
			    NULL);
		else if (ag->want_wake != NEVER) {
			again = ev_new(EV_WAKE, ag->want_wake, ev->node);
			again->lease = ev->lease;
			again->gen = ++ag->wake_gen;
			ag->wake_at = ag->want_wake;
			ev_push(again);
		}
		break;
	case EV_ANSWER:
		if (ag->waiting && ag->req_gen == ev->gen) {
			ag->waiting = 0;
			feed(ev->node, ev->lease, ev->ans,
			    ev->ans == ELECTOR_IN_GOT ||
			    ev->ans == ELECTOR_IN_WRITTEN ? &ev->rec : NULL, 0,
			    NULL);
		}
		break;
	case EV_TIMEOUT:
		if (ag->waiting && ag->req_gen == ev->gen) {
			ag->waiting = 0;
			feed(ev->node, ev->lease, ELECTOR_IN_FAILED, NULL, 0,
			    NULL);
		}
		break;
	case EV_WATCH:
		if (ev->gen == nd->stream_gen && nd->watch_on)
			watch_deliver(ev->node, ev->lease, &ev->rec);
		break;
	case EV_WATCH_BACK:
		if (w.outage || nd->watch_on)
			break;
		nd->watch_on = 1;
		nd->stream_gen++;
		for (l = 0; l < nleases(); l++) {
			feed(ev->node, l, ELECTOR_IN_WATCH_UP, NULL, 0, NULL);
			if (lagging())
				replay(ev->node, l);
			if (w.exists[l] && nd->alive)
				watch_deliver(ev->node, l, &w.store[l]);
		}
		break;
	case EV_PLAN:
		again = ev_new(EV_PLAN, w.now + PLAN_MS, ev->node);
		ev_push(again);
		break;
	case EV_TERM:
		nd->stopping = 1;
		for (l = 0; l < nleases() && nd->alive; l++)
			feed(ev->node, l, ELECTOR_IN_STOP, NULL, 0, NULL);
		break;
	case EV_PAUSE:
		nd->paused_until = w.now + ev->dur;
		break;
	default:
		break;
	}
	if (nd->alive)
		plan(ev->node);
}

/* Schedule a node event; inc 0: for whatever process is there then. */
static struct event *
at_node(enum ev_kind kind, uint64_t at, int node, uint64_t dur)
{
	struct event	*ev = ev_new(kind, at, node);

	ev->lease = -1;
	ev->dur = dur;
	ev->inc = 0;	/* filled when it runs: see run_schedule */
	ev_push(ev);
	return ev;
}

struct result {
	uint64_t	 balance_ms;	/* after the last disruption */
	unsigned	 members;
};

/*
 * One schedule.  ops: the disruptions (0: random from the seed).  The
 * node events are matched to a process when they run (inc 0 = any).
 */
static void
run_schedule(uint64_t seed, unsigned n, int m0, int disrupt,
    struct result *res)
{
	struct event	*ev;
	uint64_t	 quiet = 0, end, first_bal = NEVER, t, d, bound;
	int		 i, k, ops, live, nm, idx, bal;
	unsigned	 mask;

	memset(&w, 0, sizeof(w));
	w.seed = seed;
	w.rng = seed * 0x2545f4914f6cdd1dULL + 1;
	w.n = n;
	w.watch = seed % 4 != 0;
	for (i = 0; i < POOL; i++)
		w.freelist[i] = POOL - 1 - i;
	w.nfree = POOL;
	for (i = 0; i < m0; i++)
		at_node(EV_JOIN, between(0, 2000), i, 0);
	ops = disrupt ? (int)between(2, 7) : 0;
	for (k = 0; k < ops; k++) {
		t = between(10000, 70000);
		i = (int)between(0, MAXNODE - 1);
		switch (between(0, 5)) {
		case 0:
		case 1:
			at_node(EV_JOIN, t, i, 0);
			if (t > quiet)
				quiet = t;
			break;
		case 2:
			at_node(EV_TERM, t, i, 0);
			if (t > quiet)
				quiet = t;
			break;
		case 3:
			at_node(EV_KILL, t, i, 0);
			if (t > quiet)
				quiet = t;
			break;
		case 4:
			d = between(LD_MS + 1000, 2 * LD_MS);
			at_node(EV_PAUSE, t, i, d);
			if (t + d > quiet)
				quiet = t + d;
			break;
		default:
			d = between(5000, 30000);
			ev = ev_new(EV_OUTAGE_ON, t, -1);
			ev_push(ev);
			ev = ev_new(EV_OUTAGE_OFF, t + d, -1);
			ev_push(ev);
			if (t + d > quiet)
				quiet = t + d;
			break;
		}
	}
	w.faults = disrupt;
	w.past = disrupt && seed % 3 == 1;
	w.past_until = quiet;
	/*
	 * An event the stream skipped is seen at the next event of its
	 * Lease, or at the poll that backs the watch (WATCH_POLL_MS).
	 */
	bound = w.past ? BOUND_MS + WATCH_POLL_MS : BOUND_MS;
	end = quiet + bound + STABLE_MS;
	while (w.nheap > 0) {
		idx = ev_pop();
		ev = &w.pool[idx];
		if (ev->at > end) {
			ev_push(ev);	/* kept for figures() to go on */
			break;
		}
		w.now = ev->at;
		if (w.now >= quiet)
			w.faults = 0;
		if (ev->node >= 0 && ev->inc == 0 && ev->kind != EV_JOIN) {
			/*
			 * A disruption for whatever process is in the slot;
			 * the last live member is spared.
			 */
			for (live = 0, i = 0; i < MAXNODE; i++)
				live += w.nodes[i].alive &&
				    !w.nodes[i].stopping;
			ev->inc = w.nodes[ev->node].inc;
			if (live <= 1 && ev->kind != EV_PAUSE)
				ev->inc = 0;
		}
		run_event(ev);
		ev_free(ev);
		check_safety();
		if (w.now < quiet)
			continue;
		/*
		 * Balance is judged by the claims, which views follow with a
		 * delay: a member restarted under its identity waits out its
		 * former process's member Lease while the others still count
		 * it and may hand it a shard, so balance can be reached and
		 * broken again before the membership settles.  What must hold
		 * is the last stretch: balanced from some time within
		 * BOUND_MS of the last disruption to the end, STABLE_MS on.
		 */
		bal = balanced(&nm, &mask);
		if (!bal)
			first_bal = NEVER;
		else if (first_bal == NEVER) {
			if (getenv("SIM_DEBUG") != NULL) {
				fprintf(stderr, "balanced at %" PRIu64 "\n",
				    w.now);
				dump_state();
			}
			first_bal = w.now;
			res->members = (unsigned)nm;
		}
	}
	w.now = end;
	if (first_bal == NEVER || first_bal > quiet + bound) {
		fprintf(stderr, "seed %" PRIu64 ": %u shards not balanced "
		    "within %" PRIu64 " ms of the last disruption (%" PRIu64
		    " ms)\n", seed, n, bound, quiet);
		dump_state();
		exit(1);
	}
	res->balance_ms = first_bal - quiet;
	total_handovers += w.handovers;
}

/*
 * The figures: for 16 and 64 shards over 3 and 8 members, a balanced
 * group, then one member joins, one leaves by SIGTERM, one is killed;
 * the shards that changed hands against N/M and the time to balance.
 */
static void
figures(void)
{
	static const unsigned	 ns[] = { 16, 64 };
	static const int	 ms[] = { 3, 8 };
	static const char *const what[] = { "join", "SIGTERM", "kill -9" };
	static int		 before[MAXSH], after[MAXSH];
	unsigned		 a, b, s, moved;
	int			 c, m, nm, i;
	unsigned		 mask;
	uint64_t		 t0, tb, step;

	printf("shard_sim: shards  members  change    moved  N/M   "
	    "balance_ms\n");
	for (a = 0; a < 2; a++)
		for (b = 0; b < 2; b++)
			for (c = 0; c < 3; c++) {
				struct result	 r;

				m = ms[b];
				/* join: from m-1 to m; others: from m to m-1 */
				run_schedule(1001 + a * 10 + b * 2, ns[a],
				    c == 0 ? m - 1 : m, 0, &r);
				owners(before);
				t0 = w.now + 1000;
				i = c == 0 ? m - 1 : 0;
				at_node(c == 0 ? EV_JOIN : c == 1 ? EV_TERM :
				    EV_KILL, t0, i, 0)->inc = c == 0 ? 0 :
				    w.nodes[i].inc;
				tb = NEVER;
				step = 0;
				while (w.nheap > 0 && w.now < t0 + 120000) {
					int idx = ev_pop();
					struct event *ev = &w.pool[idx];

					w.now = ev->at;
					if (ev->node >= 0 && ev->inc == 0 &&
					    ev->kind != EV_JOIN)
						ev->inc = w.nodes[ev->node].inc;
					run_event(ev);
					ev_free(ev);
					check_safety();
					step++;
					if (w.now > t0 && tb == NEVER &&
					    balanced(&nm, &mask) && nm == (c == 0 ?
					    m : m - 1))
						tb = w.now;
					if (tb != NEVER && w.now > tb + 5000)
						break;
				}
				if (tb == NEVER) {
					fprintf(stderr, "shard_sim: figures: "
					    "%u shards, %s: no balance\n",
					    ns[a], what[c]);
					exit(1);
				}
				owners(after);
				for (moved = 0, s = 0; s < ns[a]; s++)
					moved += before[s] != after[s];
				printf("shard_sim: %6u  %d -> %d  %-8s %5u  "
				    "%5.1f %8" PRIu64 "\n", ns[a],
				    c == 0 ? m - 1 : m, c == 0 ? m : m - 1,
				    what[c], moved, (double)ns[a] / m, tb - t0);
			}
}

int
main(int argc, char *argv[])
{
	uint64_t	 nsched = 500, first = 1, i, worst = 0, sum = 0;
	unsigned	 n = 0;
	int		 m = 0, k;
	struct result	 r;

	for (k = 0; k < MAXNODE; k++)
		snprintf(ident[k], sizeof(ident[k]), "m%d", k);
	if (argc > 1 && strcmp(argv[1], "-f") == 0) {
		figures();
		return 0;
	}
	if (argc > 1)
		nsched = strtoull(argv[1], NULL, 10);
	if (argc > 2)
		first = strtoull(argv[2], NULL, 10);
	if (argc > 3)
		n = (unsigned)strtoul(argv[3], NULL, 10);
	if (argc > 4)
		m = atoi(argv[4]);
	if (n > MAXSH || m > MAXNODE) {
		fprintf(stderr, "shard_sim: at most %d shards, %d members\n",
		    MAXSH, MAXNODE);
		return 2;
	}
	for (i = 0; i < nsched; i++) {
		uint64_t	 seed = first + i;

		w.rng = seed * 0x9e3779b97f4a7c15ULL + 7;
		memset(&r, 0, sizeof(r));
		run_schedule(seed, n ? n : (unsigned)(4 << between(0, 2)),
		    m ? m : (int)between(2, 5), 1, &r);
		sum += r.balance_ms;
		if (r.balance_ms > worst)
			worst = r.balance_ms;
	}
	printf("shard_sim: %" PRIu64 " schedules, %" PRIu64 " elector "
	    "inputs, %" PRIu64 " handovers; balance after the last "
	    "disruption in %" PRIu64 " ms on average, %" PRIu64 " ms at "
	    "worst (bound %d ms; %d ms where readers saw the past)\n",
	    nsched, total_events, total_handovers, sum / (nsched ? nsched :
	    1), worst, BOUND_MS, BOUND_MS + WATCH_POLL_MS);
	printf("shard_sim: %lu joins, %lu SIGTERMs, %lu kill -9, %lu pauses "
	    "past the lease, %lu API outages\n", done[EV_JOIN], done[EV_TERM],
	    done[EV_KILL], done[EV_PAUSE], done[EV_OUTAGE_ON]);
	printf("shard_sim: readers in the past: %lu stale reads, %lu older "
	    "records fed, %lu versions replayed\n", stale_reads, stale_fed,
	    replayed);
	if (nsched >= 100 && (stale_fed == 0 || replayed == 0)) {
		fprintf(stderr, "shard_sim: readers never saw the past\n");
		printf("0 passed, 1 failed\n");
		return 1;
	}
	/* Every kind of disruption must have run, and handovers too. */
	if (nsched >= 100 && (done[EV_TERM] == 0 || done[EV_KILL] == 0 ||
	    done[EV_PAUSE] == 0 || done[EV_OUTAGE_ON] == 0 ||
	    total_handovers == 0)) {
		fprintf(stderr, "shard_sim: a kind of disruption never ran\n");
		printf("0 passed, 1 failed\n");
		return 1;
	}
	printf("%" PRIu64 " passed, 0 failed\n", nsched);
	return 0;
}
