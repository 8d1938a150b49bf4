/*
 * elector_explore_model.c -- the explorer's world (elector_explore.c):
 * the store with compare-and-swap on resourceVersion, the requests and
 * answers on the network, the watch streams, and the nodes around the
 * real electors, with their loop timers, pauses, suspends and deadline
 * clocks; what each event does to it, which events can happen next, and
 * the check of S1 and of the stop budget.  It mirrors elector_sim.c's
 * model, which mirrors daemon_api.c.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "core/elector.h"
#include "elector_explore.h"

struct xp_settings	 xp;

const char *const xp_ev_names[] = {
	"time +1 step", "wake", "timeout", "answer", "answer lost", "apply",
	"request lost", "500", "request stuck", "pause", "suspend", "stop",
	"watch event", "watch breaks", "watch back"
};

static const char *const in_names[] = {
	"TICK", "GOT", "NOTFOUND", "WRITTEN", "CONFLICT", "FAILED", "STOP",
	"WATCHED", "STEP_DOWN", "WATCH_UP", "WATCH_DOWN", "REREAD",
	"CANDIDACY", "HANDOVER", "COORDINATED"
};

const char *const xp_act_names[] = { "-", "GET", "CREATE", "UPDATE" };

const char *const xp_identities[] = { "pod-a", "pod-b", "pod-c" };

static uint64_t
node_now(const struct world *w, const struct node *nd)
{
	/* Suspended with a clock that does not count it: it stood still. */
	if (xp.monotonic && nd->suspend_ms > 0 && nd->paused_until > w->now_ms)
		return nd->paused_until - nd->suspend_ms - nd->lag_ms;
	return w->now_ms - nd->lag_ms;
}

static int
ident(const char *s)
{
	int	 i;

	for (i = 0; i < MAXN; i++)
		if (strcmp(s, xp_identities[i]) == 0)
			return i;
	return -1;
}

static void
to_lease(const struct rec *r, struct lease *l)
{
	memset(l, 0, sizeof(*l));
	if (r->holder >= 0)
		snprintf(l->holder, sizeof(l->holder), "%s",
		    xp_identities[r->holder]);
	if (r->handover >= 0)
		snprintf(l->handover, sizeof(l->handover), "%s",
		    xp_identities[r->handover]);
	l->duration_s = r->duration_s;
	l->transitions = r->transitions;
	l->acquire_us = r->acquire_us;
	l->renew_us = r->renew_us;
	l->mark_us = r->mark_us;
	snprintf(l->rv, sizeof(l->rv), "%" PRIu32, r->rv);
}

static void
from_lease(const struct lease *l, struct rec *r)
{
	memset(r, 0, sizeof(*r));
	r->holder = (int8_t)ident(l->holder);
	r->handover = (int8_t)ident(l->handover);
	r->duration_s = l->duration_s;
	r->transitions = l->transitions;
	r->acquire_us = l->acquire_us;
	r->renew_us = l->renew_us;
	r->mark_us = l->mark_us;
	r->rv = (uint32_t)strtoul(l->rv, NULL, 10);
}

static void
violate(const char *fmt, const char *a, const char *b, uint64_t t)
{
	if (xp.violation != NULL)
		return;
	snprintf(xp.why, sizeof(xp.why), fmt, a, b, t);
	xp.violation = xp.why;
}

static void	feed(struct world *, int, enum elector_input_kind,
		    const struct rec *);

/* Queue the store's new state to every node whose stream is up. */
static void
publish(struct world *w)
{
	struct node	*nd;
	int		 i;

	if (!xp.watch)
		return;
	for (i = 0; i < xp.n; i++) {
		nd = &w->nodes[i];
		if (!nd->alive || !nd->watch_on)
			continue;
		if (nd->wq_n == WQ) {
			nd->watch_back_at = w->now_ms;	/* it breaks */
			continue;
		}
		nd->wq[nd->wq_n] = w->store;
		nd->wq_due[nd->wq_n++] = w->now_ms + (uint64_t)(xp.latency + 1) *
		    Q_MS;
	}
}

/* Feed a watched record now, or keep it until the answer (daemon_api.c). */
static void
watch_deliver(struct world *w, int i, const struct rec *r)
{
	struct node	*nd = &w->nodes[i];

	if (nd->e.inflight != ELECTOR_DO_NOTHING) {
		nd->pending = *r;
		nd->have_pending = 1;
		return;
	}
	if (nd->e.have_observed &&
	    r->rv <= (uint32_t)strtoul(nd->e.observed.rv, NULL, 10))
		return;		/* older than what a read already gave */
	feed(w, i, ELECTOR_IN_WATCHED, r);
}

static void
send_request(struct world *w, int i, const struct elector_action *act)
{
	struct node	*nd = &w->nodes[i];
	struct msg	*m;

	nd->gen++;
	nd->waiting = 1;
	nd->have_ans = 0;
	nd->timeout_at = w->now_ms + act->timeout_ms;
	if (w->nnet == MAXG) {
		fprintf(stderr, "elector_explore: more than %d requests on "
		    "the network\n", MAXG);
		exit(2);
	}
	m = &w->net[w->nnet++];
	m->due = w->now_ms + (uint64_t)xp.latency * Q_MS;
	if (act->kind != ELECTOR_DO_GET)
		from_lease(&act->record, &m->rec);
	m->base_rv = nd->rv;
	m->node = i;
	m->gen = nd->gen;
	m->kind = act->kind;
}

/* The request in flight is given up (act.cancel); it may still land. */
static void
abandon(struct world *w, int i)
{
	struct node	*nd = &w->nodes[i];
	int		 j;

	for (j = 0; j < w->nnet; j++)
		if (w->net[j].node == i && w->net[j].gen == nd->gen)
			w->net[j].abandoned = 1;
	nd->waiting = 0;
	nd->have_ans = 0;
	memset(&nd->ans_rec, 0, sizeof(nd->ans_rec));
}

/* Whether the store holds a record node i wrote (elector_sim's test). */
static int
store_is_ours(const struct world *w, const struct node *nd)
{
	const struct elector	*e = &nd->e;
	struct lease		 l;
	unsigned		 k;

	to_lease(&w->store, &l);
	if (!w->exists || strcmp(l.holder, e->conf.identity) != 0)
		return 0;
	if (e->have_term && l.acquire_us == e->term_acquire_us &&
	    l.transitions == e->term_transitions)
		return 1;
	for (k = 0; k < ELECTOR_SENDS && k < e->nsends; k++)
		if (e->sends[k].renew_us == l.renew_us)
			return 1;
	return 0;
}

static void
feed(struct world *w, int i, enum elector_input_kind kind,
    const struct rec *r)
{
	struct node		*nd = &w->nodes[i];
	struct elector_input	 in;
	struct elector_action	 act;
	struct lease		 l;
	uint64_t		 now = node_now(w, nd);

	memset(&in, 0, sizeof(in));
	in.kind = kind;
	in.now_ms = now;
	in.wall_us = WALL0_US + (int64_t)w->now_ms * 1000;
	if (r != NULL) {
		to_lease(r, &l);
		in.record = &l;
	}
	in.poll_ms = WATCH_POLL_MS;
	if (kind == ELECTOR_IN_STOP) {
		in.until_ms = now + BUDGET_MS;
		nd->stop_in_ms = w->now_ms;
	}
	if (r != NULL && kind != ELECTOR_IN_WATCHED)
		nd->rv = r->rv;
	elector_step(&nd->e, &in, &act);
	if (r != NULL && kind == ELECTOR_IN_WATCHED &&
	    strcmp(nd->e.observed.rv, l.rv) == 0)
		nd->rv = r->rv;
	if (xp.verbose)
		printf("\t\t%s %s%s%s at %" PRIu64 " -> %s, lead_until %"
		    PRIu64 ", %s %s%s\n", xp_identities[i], in_names[kind],
		    r != NULL ? " " : "", r != NULL ? l.holder : "", now,
		    elector_state_name(nd->e.state), nd->e.lead_until_ms,
		    xp_act_names[act.kind], act.kind != ELECTOR_DO_NOTHING &&
		    act.kind != ELECTOR_DO_GET ? act.record.holder : "",
		    act.cancel ? ", cancels its request" : "");
	if (act.cancel)
		abandon(w, i);
	if (nd->e.state == ELECTOR_STOPPED) {
		if (store_is_ours(w, nd) && w->store_ms < nd->stop_in_ms &&
		    now < nd->e.stop_until_ms)
			violate("%s stopped before its budget%s, with its "
			    "record in the store, at %" PRIu64 " ms",
			    xp_identities[i], "", w->now_ms);
		nd->alive = 0;
		nd->waiting = 0;
		nd->have_ans = 0;
		nd->wake_ms = NEVER;
		return;
	}
	if (act.kind != ELECTOR_DO_NOTHING)
		send_request(w, i, &act);
	/* The loop's timer (CLOCK_MONOTONIC), kept in world time. */
	nd->wake_ms = act.wake_ms == 0 ? NEVER : w->now_ms +
	    (act.wake_ms > now ? act.wake_ms - now : 0);
	if (nd->have_pending && nd->e.inflight == ELECTOR_DO_NOTHING &&
	    kind != ELECTOR_IN_WATCHED) {
		struct rec	 p = nd->pending;

		nd->have_pending = 0;
		memset(&nd->pending, 0, sizeof(nd->pending));
		watch_deliver(w, i, &p);
	}
}

/* Request j reaches the store (or is refused with a 500). */
static void
apply(struct world *w, int j, int reject)
{
	struct msg	 m = w->net[j];
	struct node	*nd = &w->nodes[m.node];
	struct rec	 out;
	int		 ans = ELECTOR_IN_FAILED, write = 0;

	memmove(&w->net[j], &w->net[j + 1], (size_t)(w->nnet - j - 1) *
	    sizeof(w->net[0]));
	memset(&w->net[--w->nnet], 0, sizeof(w->net[0]));
	memset(&out, 0, sizeof(out));
	if (reject)
		;
	else if (m.kind == ELECTOR_DO_GET) {
		ans = w->exists ? ELECTOR_IN_GOT : ELECTOR_IN_NOTFOUND;
		out = w->store;
	} else if (m.kind == ELECTOR_DO_CREATE && w->exists)
		ans = ELECTOR_IN_CONFLICT;
	else if (m.kind == ELECTOR_DO_UPDATE && (!w->exists ||
	    (w->store.rv != m.base_rv && !xp.nocas))) {
		ans = ELECTOR_IN_CONFLICT;
		xp.refused_late += m.abandoned || m.late;
	} else
		write = 1;
	if (write) {
		xp.landed_late += m.abandoned || m.late;
		w->store = m.rec;
		w->store.rv = ++w->version;
		w->exists = 1;
		w->store_ms = w->now_ms;
		ans = ELECTOR_IN_WRITTEN;
		out = w->store;
		publish(w);
	}
	if (nd->alive && nd->waiting && nd->gen == m.gen) {
		nd->have_ans = 1;
		nd->ans_kind = ans;
		nd->ans_rec = out;
		nd->ans_due = w->now_ms + (uint64_t)xp.latency * Q_MS;
	}
}

static void
tick(struct world *w)
{
	struct node	*nd;
	int		 i;

	w->now_ms += Q_MS;
	for (i = 0; i < xp.n; i++) {
		nd = &w->nodes[i];
		if (nd->paused_until == 0 || nd->paused_until > w->now_ms)
			continue;
		if (nd->suspend_ms > 0) {
			/*
			 * Resumed: the loop's timers and the requests'
			 * timeouts stood still; the deadline clock did too
			 * only if it does not count a suspend.
			 */
			if (nd->wake_ms != NEVER)
				nd->wake_ms += nd->suspend_ms;
			if (nd->waiting)
				nd->timeout_at += nd->suspend_ms;
			if (xp.monotonic || !CLOCK_DEADLINE_COUNTS_SUSPEND)
				nd->lag_ms += nd->suspend_ms;
		}
		nd->paused_until = 0;
		nd->suspend_ms = 0;
	}
}

/* Carry out one event on w. */
void
xp_run_event(struct world *w, const struct ev *ev)
{
	struct node	*nd = &w->nodes[ev->a];
	struct msg	*m = &w->net[ev->a];
	struct rec	 r;

	switch (ev->kind) {
	case EV_TICK:
		tick(w);
		break;
	case EV_WAKE:
		feed(w, ev->a, ELECTOR_IN_TICK, NULL);
		break;
	case EV_TIMEOUT:
		nd->waiting = 0;
		nd->have_ans = 0;
		memset(&nd->ans_rec, 0, sizeof(nd->ans_rec));
		feed(w, ev->a, ELECTOR_IN_FAILED, NULL);
		break;
	case EV_ANSWER:
		r = nd->ans_rec;
		if (xp.lying && nd->ans_kind == ELECTOR_IN_GOT)
			r.holder = -1;	/* planted: the read lies */
		nd->waiting = 0;
		nd->have_ans = 0;
		memset(&nd->ans_rec, 0, sizeof(nd->ans_rec));
		feed(w, ev->a, (enum elector_input_kind)nd->ans_kind,
		    nd->ans_kind == ELECTOR_IN_GOT ||
		    nd->ans_kind == ELECTOR_IN_WRITTEN ? &r : NULL);
		break;
	case EV_LOSE_ANSWER:
		nd->have_ans = 0;
		memset(&nd->ans_rec, 0, sizeof(nd->ans_rec));
		w->faults_left--;
		break;
	case EV_APPLY:
	case EV_REJECT:
		apply(w, ev->a, ev->kind == EV_REJECT);
		w->faults_left -= ev->kind == EV_REJECT;
		break;
	case EV_LOSE:
		memmove(m, m + 1, (size_t)(w->nnet - ev->a - 1) * sizeof(*m));
		memset(&w->net[--w->nnet], 0, sizeof(*m));
		w->faults_left--;
		break;
	case EV_STUCK:
		m->late = 1;
		m->due = w->nodes[m->node].timeout_at + Q_MS;
		if (m->due < w->now_ms + 2 * Q_MS)
			m->due = w->now_ms + 2 * Q_MS;
		w->faults_left--;
		break;
	case EV_PAUSE:
	case EV_SUSPEND:
		nd->paused_until = w->now_ms + PAUSE_STEPS * Q_MS;
		if (ev->kind == EV_SUSPEND)
			nd->suspend_ms = PAUSE_STEPS * Q_MS;
		w->faults_left--;
		break;
	case EV_STOP:
		w->stops_left--;
		feed(w, ev->a, ELECTOR_IN_STOP, NULL);
		break;
	case EV_WATCH:
		r = nd->wq[0];
		memmove(&nd->wq[0], &nd->wq[1], (WQ - 1) * sizeof(nd->wq[0]));
		memmove(&nd->wq_due[0], &nd->wq_due[1],
		    (WQ - 1) * sizeof(nd->wq_due[0]));
		nd->wq_n--;
		memset(&nd->wq[WQ - 1], 0, sizeof(nd->wq[0]));
		nd->wq_due[WQ - 1] = 0;
		watch_deliver(w, ev->a, &r);
		break;
	case EV_BREAK:
		w->faults_left--;
		/* FALLTHROUGH */
	case EV_WATCH_BACK:
		if (ev->kind == EV_BREAK || nd->watch_on) {
			nd->watch_on = 0;
			nd->wq_n = 0;
			memset(nd->wq, 0, sizeof(nd->wq));
			memset(nd->wq_due, 0, sizeof(nd->wq_due));
			nd->watch_back_at = w->now_ms + WATCH_BACK_STEPS * Q_MS;
			feed(w, ev->a, ELECTOR_IN_WATCH_DOWN, NULL);
			break;
		}
		/* Back: the stream says so, then starts with the state. */
		nd->watch_on = 1;
		nd->watch_back_at = NEVER;
		feed(w, ev->a, ELECTOR_IN_WATCH_UP, NULL);
		if (nd->alive && w->exists)
			watch_deliver(w, ev->a, &w->store);
		break;
	}
}

/* S1 at this instant, each node judged on its own deadline clock. */
void
xp_check(struct world *w)
{
	int	 i, leader = -1;

	for (i = 0; i < xp.n; i++) {
		/* A suspended machine answers nothing; a paused one's
		   application runs on and believes the claim. */
		if (!w->nodes[i].alive || (w->nodes[i].suspend_ms > 0 &&
		    w->nodes[i].paused_until > w->now_ms) ||
		    !elector_is_leader(&w->nodes[i].e,
		    node_now(w, &w->nodes[i])))
			continue;
		if (leader != -1)
			violate("two leaders: %s and %s, at %" PRIu64 " ms",
			    xp_identities[leader], xp_identities[i], w->now_ms);
		leader = i;
	}
	xp.leader_states += leader != -1;
}

/* The events that can happen in w; *urgent if time may not move on. */
int
xp_events(const struct world *w, struct ev *evs)
{
	const struct node *nd;
	int		 i, n = 0, urgent = 0, f = w->faults_left > 0;
	uint64_t	 now = w->now_ms;

#define ADD(k, x)	do { evs[n].kind = (k); evs[n++].a = (x); } while (0)
	for (i = 0; i < w->nnet; i++) {
		ADD(EV_APPLY, i);
		urgent |= now >= w->net[i].due;
		if (f) {
			ADD(EV_LOSE, i);
			if (!w->net[i].late)
				ADD(EV_STUCK, i);
			if (w->nodes[w->net[i].node].waiting &&
			    w->nodes[w->net[i].node].gen == w->net[i].gen)
				ADD(EV_REJECT, i);
		}
	}
	for (i = 0; i < xp.n; i++) {
		nd = &w->nodes[i];
		if (!nd->alive)
			continue;
		if (nd->paused_until > now)
			continue;
		if (w->stops_left > 0 && nd->e.state != ELECTOR_STOPPING)
			ADD(EV_STOP, i);
		if (nd->have_ans) {
			ADD(EV_ANSWER, i);
			urgent |= now >= nd->ans_due;
			if (f)
				ADD(EV_LOSE_ANSWER, i);
		}
		if (nd->waiting && now >= nd->timeout_at) {
			ADD(EV_TIMEOUT, i);
			urgent = 1;
		}
		if (nd->wake_ms <= now) {
			ADD(EV_WAKE, i);
			urgent = 1;
		}
		if (nd->wq_n > 0) {
			ADD(EV_WATCH, i);
			urgent |= now >= nd->wq_due[0];
		}
		if (nd->watch_back_at <= now) {
			ADD(EV_WATCH_BACK, i);
			urgent = 1;
		}
		if (f) {
			ADD(EV_PAUSE, i);
			ADD(EV_SUSPEND, i);
			if (xp.watch && nd->watch_on)
				ADD(EV_BREAK, i);
		}
	}
	if (!urgent && now + Q_MS <= (uint64_t)xp.steps * Q_MS)
		ADD(EV_TICK, 0);
#undef ADD
	return n;
}

void
xp_start(struct world *w)
{
	struct elector_config	 c;
	char			 err[128];
	int			 i;

	memset(w, 0, sizeof(*w));
	w->faults_left = xp.faults;
	w->stops_left = xp.stops;
	for (i = 0; i < xp.n; i++) {
		memset(&c, 0, sizeof(c));
		snprintf(c.identity, sizeof(c.identity), "%s", xp_identities[i]);
		c.lease_duration_ms = LD_MS;
		c.renew_deadline_ms = RD_MS;
		c.retry_period_ms = RP_MS;
		c.request_timeout_ms = TIMEOUT_MS;
		c.release_on_cancel = !xp.norelease;
		c.seed = (uint64_t)i + 1;
		if (elector_init(&w->nodes[i].e, &c, 0, err, sizeof(err)) ==
		    -1) {
			fprintf(stderr, "elector_init: %s\n", err);
			exit(2);
		}
		w->nodes[i].alive = 1;
		w->nodes[i].stop_in_ms = NEVER;
		w->nodes[i].wake_ms = NEVER;
		w->nodes[i].watch_back_at = NEVER;
		w->nodes[i].watch_on = xp.watch;
	}
	for (i = 0; i < xp.n; i++)
		feed(w, i, xp.watch ? ELECTOR_IN_WATCH_UP : ELECTOR_IN_TICK,
		    NULL);
}
