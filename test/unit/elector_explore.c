/*
 * elector_explore.c -- every interleaving, not a sample: 2-3 of the real
 * electors (lib/core), one in-memory Lease store with compare-and-swap on
 * resourceVersion, and time in steps of a quarter retry_period (250 ms;
 * lease_duration 8 steps, renew_deadline 6, retry_period 4, a request's
 * timeout 3), explored depth first up to a time horizon.  From each state
 * every event that can happen next is tried (the world and its events
 * are elector_explore_model.c's):
 *
 *  - a request reaches the store, or is lost, or is refused with a 500,
 *    or is stuck until after its sender's timeout (a late apply: it
 *    lands after its sender gave up, or after the release that replaced
 *    it);
 *  - an answer reaches its node, or is lost (the node times out);
 *  - a node's timer fires (its wake, its request's timeout);
 *  - a node is paused (SIGSTOP: it runs nothing, its clocks run on), or
 *    its machine suspended (its loop's timers stand still and, since the
 *    deadline clock counts a suspend, base/clock.h's
 *    CLOCK_DEADLINE_COUNTS_SUSPEND, its claims do not), for 12 steps;
 *  - a node is stopped gracefully, with a budget of 4 steps;
 *  - with the watch on: a watched record is delivered (at once or a step
 *    later), or the stream breaks (WATCH_DOWN) and comes back;
 *  - time moves on a step, once nothing is overdue.
 *
 * Messages take no time unless -l gives them steps; every order of the
 * events of one instant is tried.  Losses, 500s, stuck requests, pauses,
 * suspends and breaks are faults, and a path has a budget of them (-f);
 * stops have one of their own (-s).  A state already explored is not
 * explored again: it is hashed whole (the electors' structs with their
 * clocks, the store, what is on the network and on each watch, every
 * node's timers, pause and clock lag, and the budgets left), and time is
 * part of it, so the horizon left is too.  After every event two things
 * are checked, as elector_sim checks them: S1, no two electors answer "I
 * lead" (elector_is_leader at each node's own deadline clock; a machine
 * asleep answers nothing) at one instant; and no stop ends before its
 * budget with its own record in the store.  A violation prints the
 * trace, the events from the start and what each elector did, and exits
 * 1.
 *
 *   elector_explore			the make check suite (below)
 *   elector_explore -d STEPS [-n NODES] [-f FAULTS] [-s STOPS] [-l STEPS]
 *	 [-w] [-b monotonic|nocas|free|norelease]
 *					one exploration to STEPS steps
 *
 * With no flag it runs the configurations of `suite` (about 20 s here)
 * and then plants four bugs it must find, each with its trace:
 * "monotonic" (a suspend stops the deadline clock too, as
 * CLOCK_MONOTONIC would), "nocas" (the store takes an UPDATE over any
 * version), "free" (a read shows the lease free while it is held, so a
 * node claims a record it never saw expire) and "norelease" (a stop
 * ends at once with its record in the store: the stop budget's check).
 * $EXPLORE_DEPTH=N adds N steps to each of the suite's horizons, for
 * longer runs; under AddressSanitizer the horizons are two thirds.
 */

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/elector.h"
#include "elector_explore.h"

static struct world	 stk[MAXDEPTH + 1];
static struct ev	 path[MAXDEPTH];
static uint64_t		*seen;
static uint64_t		 seen_cap, seen_n;

static uint64_t
mix(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t	 v;

	for (; len >= 8; len -= 8, b += 8) {
		memcpy(&v, b, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	for (; len > 0; len--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

/* Zero what follows a string's NUL, so that equal states hash equal. */
static void
clean(char *s, size_t n)
{
	size_t	 k = strnlen(s, n);

	memset(s + k, 0, n - k);
}

/*
 * The state's hash: everything that decides its future.  An elector's
 * config is the same in every state and its `why` and `reported` only
 * name what happened; the rest of it is hashed.
 */
static uint64_t
hash_world(const struct world *w)
{
	struct elector	 e;
	uint64_t	 h = 0x9e3779b97f4a7c15ULL;
	int		 i;

	h = mix(h, w, offsetof(struct world, nodes));
	for (i = 0; i < xp.n; i++) {
		h = mix(h, &w->nodes[i], offsetof(struct node, e));
		e = w->nodes[i].e;
		e.why = NULL;
		memset(e.reported, 0, sizeof(e.reported));
		clean(e.observed.holder, sizeof(e.observed.holder));
		clean(e.observed.strategy, sizeof(e.observed.strategy));
		clean(e.observed.preferred, sizeof(e.observed.preferred));
		clean(e.observed.rv, sizeof(e.observed.rv));
		clean(e.observed.uid, sizeof(e.observed.uid));
		clean(e.observed.handover, sizeof(e.observed.handover));
		clean(e.write_rv, sizeof(e.write_rv));
		clean(e.handover_to, sizeof(e.handover_to));
		if (e.nsends >= ELECTOR_SENDS)
			e.nsends = ELECTOR_SENDS + e.nsends % ELECTOR_SENDS;
		if (e.conflicts > 2)
			e.conflicts = 2;	/* only "more than one" counts */
		h = mix(h, &e.state, sizeof(e) - offsetof(struct elector,
		    state));
	}
	h ^= h >> 29;
	return h == 0 ? 1 : h;
}

/* Insert h; 0 if it was there already. */
static int
seen_add(uint64_t h)
{
	uint64_t	*old, cap, k, i;

	if (2 * (seen_n + 1) > seen_cap) {
		old = seen;
		cap = seen_cap;
		seen_cap = cap == 0 ? 1 << 20 : 2 * cap;
		if ((seen = calloc(seen_cap, sizeof(*seen))) == NULL) {
			fprintf(stderr, "elector_explore: out of memory\n");
			exit(2);
		}
		seen_n = 0;
		for (k = 0; k < cap; k++)
			if (old[k] != 0)
				seen_add(old[k]);
		free(old);
	}
	for (i = h & (seen_cap - 1); seen[i] != 0; i = (i + 1) &
	    (seen_cap - 1))
		if (seen[i] == h)
			return 0;
	seen[i] = h;
	seen_n++;
	return 1;
}

/* Replay path[0..depth) from the start, printing each event. */
static void
print_trace(int depth)
{
	static struct world	 w;
	int			 k;

	xp.verbose = 1;
	xp.violation = NULL;
	printf("trace (%d events; times in ms, each node's own clock "
	    "after \"at\"):\n", depth);
	xp_start(&w);
	for (k = 0; k < depth; k++) {
		printf("%6" PRIu64 "  %s", w.now_ms, xp_ev_names[path[k].kind]);
		if (path[k].kind >= EV_APPLY && path[k].kind <= EV_STUCK)
			printf(" %s's %s", xp_identities[w.net[path[k].a].node],
			    xp_act_names[w.net[path[k].a].kind]);
		else if (path[k].kind != EV_TICK)
			printf(" %s", xp_identities[path[k].a]);
		printf("\n");
		xp_run_event(&w, &path[k]);
		xp_check(&w);
	}
	printf("violation: %s\n", xp.violation != NULL ? xp.violation : "?");
	xp.verbose = 0;
}

/* Depth-first from stk[depth]; 1 once a violation was found. */
static int
dfs(int depth)
{
	struct ev	 evs[64];
	int		 n, k;

	if (depth > xp.max_depth)
		xp.max_depth = depth;
	if (depth == MAXDEPTH) {
		fprintf(stderr, "elector_explore: deeper than %d events\n",
		    MAXDEPTH);
		exit(2);
	}
	n = xp_events(&stk[depth], evs);
	for (k = 0; k < n; k++) {
		stk[depth + 1] = stk[depth];
		path[depth] = evs[k];
		xp.transitions++;
		xp_run_event(&stk[depth + 1], &evs[k]);
		xp_check(&stk[depth + 1]);
		if (xp.violation != NULL) {
			print_trace(depth + 1);
			return 1;
		}
		if (!seen_add(hash_world(&stk[depth + 1])))
			continue;
		xp.states++;
		if (dfs(depth + 1))
			return 1;
	}
	return 0;
}

/* One exploration; 1 if it found a violation. */
static int
explore(void)
{
	struct timespec	 t0, t1;
	int		 found;

	free(seen);
	seen = NULL;
	seen_cap = seen_n = 0;
	xp.states = xp.transitions = xp.leader_states = 0;
	xp.landed_late = xp.refused_late = 0;
	xp.max_depth = 0;
	xp.violation = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	xp_start(&stk[0]);
	xp_check(&stk[0]);
	seen_add(hash_world(&stk[0]));
	found = dfs(0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("elector_explore: %d nodes, %s, %d steps of %d ms, %d faults, "
	    "%d stops%s%s%s%s: %" PRIu64 " states, %" PRIu64 " transitions, "
	    "depth %d events, %.1f s\n", xp.n, xp.watch ? "watch" : "polling",
	    xp.steps, Q_MS, xp.faults, xp.stops, xp.monotonic ?
	    ", planted: monotonic" : "", xp.nocas ? ", planted: nocas" : "",
	    xp.lying ? ", planted: free" : "", xp.norelease ?
	    ", planted: norelease" : "",
	    xp.states, xp.transitions, xp.max_depth,
	    (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (!found)
		printf("elector_explore: %" PRIu64 " states with a leader; late "
		    "or abandoned writes: %" PRIu64 " landed, %" PRIu64
		    " refused\n", xp.leader_states, xp.landed_late,
		    xp.refused_late);
	return found;
}

static void
usage(void)
{
	fprintf(stderr, "usage: elector_explore [-d steps] [-n nodes] "
	    "[-f faults] [-s stops] [-l steps] [-w] "
	    "[-b monotonic|nocas|free|norelease]\n");
	exit(2);
}

/* The make check suite: each horizon, in steps, and what runs. */
static const struct {
	int	 n, steps, faults, stops, watch;
} suite[] = {
	{ 2, 32, 1, 1, 0 },	/* every single fault, 8 s of time */
	{ 2, 12, 2, 1, 0 },	/* every pair of faults */
	{ 2, 16, 1, 1, 1 },	/* the watch, its delays and breaks */
	{ 3, 16, 0, 2, 0 },	/* three nodes, two of them stopped */
	{ 3, 8, 1, 1, 0 },	/* three nodes, every single fault */
};

static const char *const planted[][2] = {
	{ "monotonic", "a suspend stops the deadline clock too" },
	{ "nocas", "the store takes an UPDATE over any version" },
	{ "free", "a read shows the lease free while it is held" },
	{ "norelease", "a stop ends at once, its record left in the store" },
};

static int
run_suite(int more)
{
	int	 k, failed = 0;

	for (k = 0; k < (int)(sizeof(suite) / sizeof(suite[0])); k++) {
		memset(&xp, 0, sizeof(xp));
		xp.n = suite[k].n;
		xp.steps = suite[k].steps + more;
#ifdef __SANITIZE_ADDRESS__
		xp.steps = xp.steps * 2 / 3;	/* some 3 times slower */
#endif
		xp.faults = suite[k].faults;
		xp.stops = suite[k].stops;
		xp.watch = suite[k].watch;
		failed |= explore();
		/* An elector that never leads would be trivially safe. */
		if (xp.leader_states == 0) {
			fprintf(stderr, "elector_explore: no state with a "
			    "leader\n");
			failed = 1;
		}
	}
	/* Planted bugs: each must be found, with its trace. */
	for (k = 0; k < 4; k++) {
		memset(&xp, 0, sizeof(xp));
		xp.n = 2;
		xp.steps = 16;
		xp.faults = 1;
		xp.stops = 1;
		xp.norelease = k == 3;
		xp.monotonic = k == 0;
		xp.nocas = k == 1;
		xp.lying = k == 2;
		printf("elector_explore: planted bug \"%s\" (%s); its trace:\n",
		    planted[k][0], planted[k][1]);
		if (!explore()) {
			fprintf(stderr, "elector_explore: the planted bug was "
			    "not found\n");
			failed = 1;
		}
	}
	printf("%d passed, %d failed\n", failed ? 0 : 1, failed ? 1 : 0);
	return failed;
}

int
main(int argc, char *argv[])
{
	const char	*extra = getenv("EXPLORE_DEPTH");
	int		 c;

	if (argc == 1)
		return run_suite(extra != NULL ? atoi(extra) : 0);
	xp.n = 2;
	xp.faults = 2;
	xp.stops = 1;
	while ((c = getopt(argc, argv, "b:d:f:l:n:s:w")) != -1) {
		switch (c) {
		case 'b':
			if (strcmp(optarg, "monotonic") == 0)
				xp.monotonic = 1;
			else if (strcmp(optarg, "nocas") == 0)
				xp.nocas = 1;
			else if (strcmp(optarg, "free") == 0)
				xp.lying = 1;
			else if (strcmp(optarg, "norelease") == 0)
				xp.norelease = 1;
			else
				usage();
			break;
		case 'd': xp.steps = atoi(optarg); break;
		case 'f': xp.faults = atoi(optarg); break;
		case 'l': xp.latency = atoi(optarg); break;
		case 'n': xp.n = atoi(optarg); break;
		case 's': xp.stops = atoi(optarg); break;
		case 'w': xp.watch = 1; break;
		default: usage();
		}
	}
	if (xp.steps < 1 || xp.n < 2 || xp.n > MAXN || optind != argc)
		usage();
	return explore();
}

