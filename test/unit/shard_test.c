/*
 * shard_test.c -- the shard planner (core/shard.c): the fixed hash,
 * quotas, balance from any start for many (N, M), the ceil bound, the
 * shards moved by a join or a leave against the minimum, determinism
 * over the members' order, and the inputs that hold a plan back.
 *
 * The rounds here are an ideal group: every member plans from the same
 * view, a planned take or handover lands before the next round.  The
 * simulation (test/unit/shard_sim.c) runs the planner over real
 * electors with delays, failures and races.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/shard.h"

#define GROUP	"workers"
#define MAXM	24

static char		 names[64][16];
static const char	*pool[64];

static void
init_names(void)
{
	int	 i;

	for (i = 0; i < 64; i++) {
		snprintf(names[i], sizeof(names[i]), "pod-%d", i);
		pool[i] = names[i];
	}
}

/* One member's view of owner[] (member index, -1 free). */
static void
view_of(const int *owner, unsigned n, const char *const *members, int self,
    struct shard_view *v)
{
	unsigned	 s;

	memset(v, 0, n * sizeof(*v));
	for (s = 0; s < n; s++) {
		v[s].holder = owner[s] >= 0 ? members[owner[s]] : NULL;
		v[s].mine = owner[s] == self;
	}
}

/*
 * Rounds of the ideal group until nothing changes; returns the rounds
 * taken.  Asserts on the way that no free shard is wanted by two
 * members, that a member never wants a shard another member holds, and
 * that the plan's releases go to members below their quota.
 */
static int
converge(unsigned n, const char *const *members, unsigned nm, int *owner)
{
	static struct shard_view v[SHARD_COUNT_MAX];
	static struct shard_plan p[MAXM];
	unsigned		 s, m, quota[MAXM];
	int			 rounds, changed, wanted;

	assert_int_equal(shard_quotas(GROUP, n, members, nm, quota), 0);
	for (rounds = 0; rounds < 4 * SHARD_COUNT_MAX + 8; rounds++) {
		for (m = 0; m < nm; m++) {
			view_of(owner, n, members, (int)m, v);
			assert_int_equal(shard_plan(GROUP, n, members[m],
			    members, nm, v, &p[m]), 0);
			assert_int_equal(p[m].self, (int)m);
			assert_int_equal(p[m].quota, quota[m]);
		}
		changed = 0;
		for (s = 0; s < n; s++) {
			wanted = -1;
			for (m = 0; m < nm; m++) {
				if (!p[m].want[s])
					continue;
				if (owner[s] >= 0)
					assert_int_equal(owner[s], (int)m);
				else {
					/* One taker per free shard. */
					assert_int_equal(wanted, -1);
					wanted = (int)m;
				}
			}
			if (owner[s] < 0 && wanted >= 0) {
				owner[s] = wanted;
				changed = 1;
			}
		}
		for (m = 0; m < nm; m++) {
			if (p[m].release < 0)
				continue;
			assert_int_equal(owner[p[m].release], (int)m);
			assert_true(p[m].held > p[m].quota);
			assert_true(p[m].release_to != (int)m);
			owner[p[m].release] = p[m].release_to;
			changed = 1;
		}
		if (!changed)
			return rounds;
	}
	fail_msg("n %u, m %u: no convergence", n, nm);
	return -1;
}

/* Every shard held, every member at its quota (floor or ceil(N/M)). */
static void
assert_balanced(unsigned n, const char *const *members, unsigned nm,
    const int *owner)
{
	unsigned	 s, m, load[MAXM], quota[MAXM], ceil_q;

	ceil_q = (n + nm - 1) / nm;
	memset(load, 0, sizeof(load));
	for (s = 0; s < n; s++) {
		assert_true(owner[s] >= 0 && owner[s] < (int)nm);
		load[owner[s]]++;
	}
	assert_int_equal(shard_quotas(GROUP, n, members, nm, quota), 0);
	for (m = 0; m < nm; m++) {
		if (load[m] != quota[m])
			fail_msg("n %u m %u: member %u holds %u, quota %u", n,
			    nm, m, load[m], quota[m]);
		assert_true(load[m] <= ceil_q);
		assert_true(load[m] >= n / nm);
	}
}

/*
 * The hash is pinned: every member of a group, whatever its build or
 * architecture, must compute the same values, so a change here is a
 * change of the protocol.  These values are FNV-1a 64 of the strings
 * then fmix64, computed independently (Python: see docs/shards.md).
 */
static void
test_hash_pinned(void **state)
{
	(void)state;
	assert_true(shard_hash("workers", 0, "pod-0") ==
	    0x57c949b3c699a7bfULL);
	assert_true(shard_hash("workers", 255, "pod-a") ==
	    0x0246e437377c419fULL);
	assert_true(shard_hash("workers", -1, "pod-0") ==
	    0x5a510b1c2398a73cULL);
	/* The separators matter: "a/1/0" is not "a/10/". */
	assert_true(shard_hash("a", 1, "0") != shard_hash("a", 10, ""));
}

/* Quotas: floor or ceil, summing to N; members beyond N get 0 or 1. */
static void
test_quotas(void **state)
{
	unsigned	 n, m, i, sum, q[MAXM];

	(void)state;
	init_names();
	for (n = 1; n <= SHARD_COUNT_MAX; n += (n < 20 ? 1 : 17))
		for (m = 1; m <= MAXM; m++) {
			assert_int_equal(shard_quotas(GROUP, n, pool, m, q), 0);
			for (sum = 0, i = 0; i < m; i++) {
				assert_true(q[i] == n / m ||
				    q[i] == n / m + 1);
				sum += q[i];
			}
			assert_int_equal(sum, n);
		}
	assert_int_equal(shard_quotas(GROUP, 0, pool, 1, q), -1);
	assert_int_equal(shard_quotas(GROUP, SHARD_COUNT_MAX + 1, pool, 1,
	    q), -1);
}

/*
 * Balance from three starts for many (N, M): all free, all on one
 * member, and a seeded random spread; within the ceil bound at the end.
 */
static void
test_balance(void **state)
{
	static int	 owner[SHARD_COUNT_MAX];
	unsigned	 n, m, s, start;
	uint64_t	 rng = 88172645463325252ULL;
	int		 rounds, worst = 0;

	(void)state;
	init_names();
	for (n = 1; n <= SHARD_COUNT_MAX; n += (n < 24 ? 1 : 29))
		for (m = 1; m <= 12; m++)
			for (start = 0; start < 3; start++) {
				for (s = 0; s < n; s++) {
					rng ^= rng << 13;
					rng ^= rng >> 7;
					rng ^= rng << 17;
					owner[s] = start == 0 ? -1 :
					    start == 1 ? 0 :
					    (int)(rng % (m + 1)) - 1;
				}
				rounds = converge(n, pool, m, owner);
				assert_balanced(n, pool, m, owner);
				if (rounds > worst)
					worst = rounds;
			}
	/*
	 * From all on one member, that member hands one shard per round:
	 * N - ceil(N/M) rounds at most, plus the last quiet one.
	 */
	assert_true(worst <= SHARD_COUNT_MAX);
}

/* Count the shards whose owner's name changed. */
static unsigned
moved(unsigned n, const int *a, const char *const *ma, const int *b,
    const char *const *mb)
{
	unsigned	 s, k = 0;

	for (s = 0; s < n; s++)
		if (strcmp(ma[a[s]], mb[b[s]]) != 0)
			k++;
	return k;
}

/*
 * The members whose quota goes against the change (up on a join, down
 * on a leave).  Each such member moves one shard more than the minimum.
 * None exists when N >= M(M+1) for M the smaller membership: then
 * N/M - N/(M+1) >= 1, so floor(N/M) >= ceil(N/(M+1)).
 */
static unsigned
against(unsigned n, const char *const *before, unsigned nb,
    const char *const *after, unsigned na)
{
	unsigned	 qb[MAXM], qa[MAXM], i, j, k = 0;

	assert_int_equal(shard_quotas(GROUP, n, before, nb, qb), 0);
	assert_int_equal(shard_quotas(GROUP, n, after, na, qa), 0);
	for (i = 0; i < nb; i++)
		for (j = 0; j < na; j++)
			if (strcmp(before[i], after[j]) == 0 &&
			    (na > nb ? qa[j] > qb[i] : qa[j] < qb[i]))
				k++;
	return k;
}

/*
 * A join or a leave from a balanced group moves at least the minimum
 * (the joiner's quota; the leaver's shards) and at most ceil(N/M) for
 * the smaller M, plus one per member whose quota goes against the
 * change (against() above, none once N >= M(M+1)): the planner keeps
 * every shard a member may keep, so only surplus shards move.  The
 * figures for 16 and 64 shards over 3 and 8 members are printed.
 */
static void
test_movement(void **state)
{
	static int	 a[SHARD_COUNT_MAX], b[SHARD_COUNT_MAX];
	const char	*after[MAXM];
	unsigned	 n, m, s, k, i, bound, min, q[MAXM], extra;
	int		 leaver;

	(void)state;
	init_names();
	for (n = 1; n <= SHARD_COUNT_MAX; n += (n < 24 ? 1 : 8))
		for (m = 1; m < 12; m++) {
			for (s = 0; s < n; s++)
				a[s] = -1;
			converge(n, pool, m, a);
			/* Join: pod-m comes. */
			memcpy(b, a, sizeof(b));
			converge(n, pool, m + 1, b);
			assert_balanced(n, pool, m + 1, b);
			k = moved(n, a, pool, b, pool);
			assert_int_equal(shard_quotas(GROUP, n, pool, m + 1, q),
			    0);
			min = q[m];
			extra = against(n, pool, m, pool, m + 1);
			bound = (n + m) / (m + 1) + extra;
			assert_true(k >= min);
			assert_true(k <= bound);
			if (n >= m * (m + 1))
				assert_int_equal(k, min);
			if ((n == 16 || n == 64) && (m + 1 == 3 || m + 1 == 8))
				printf("shard_test: join %u -> %u members, "
				    "%u shards: %u moved, N/M %.1f\n", m,
				    m + 1, n, k, (double)n / (m + 1));
			if (m < 2)
				continue;
			/* Leave: one member of m goes; its shards move. */
			leaver = (int)(n % m);
			for (i = 0, s = 0; i < m; i++)
				if ((int)i != leaver)
					after[s++] = pool[i];
			for (s = 0; s < n; s++)
				b[s] = a[s] == leaver ? -1 : a[s] > leaver ?
				    a[s] - 1 : a[s];
			min = 0;
			for (s = 0; s < n; s++)
				min += a[s] == leaver;
			converge(n, after, m - 1, b);
			assert_balanced(n, after, m - 1, b);
			k = 0;
			for (s = 0; s < n; s++)
				k += strcmp(pool[a[s]], after[b[s]]) != 0;
			extra = against(n, pool, m, after, m - 1);
			bound = (n + m - 1) / m + extra;
			assert_true(k >= min);
			assert_true(k <= bound);
			if (n >= (m - 1) * m)
				assert_int_equal(k, min);
			if ((n == 16 || n == 64) && (m == 3 || m == 8))
				printf("shard_test: leave %u -> %u members, "
				    "%u shards: %u moved, N/M %.1f\n", m,
				    m - 1, n, k, (double)n / m);
		}
}

/* The members' order in the input changes nothing. */
static void
test_deterministic(void **state)
{
	static struct shard_view v1[SHARD_COUNT_MAX], v2[SHARD_COUNT_MAX];
	struct shard_plan	 p1, p2;
	const char		*m1[6], *m2[6];
	int			 owner[64], s, i;

	(void)state;
	init_names();
	for (i = 0; i < 6; i++) {
		m1[i] = pool[i];
		m2[i] = pool[5 - i];
	}
	/* pod-0 holds everything: it must release; some shards free. */
	for (s = 0; s < 64; s++)
		owner[s] = s % 5 == 0 ? -1 : 0;
	view_of(owner, 64, m1, 0, v1);
	view_of(owner, 64, m1, 0, v2);
	for (i = 0; i < 6; i++) {
		assert_int_equal(shard_plan(GROUP, 64, pool[i], m1, 6, v1,
		    &p1), 0);
		assert_int_equal(shard_plan(GROUP, 64, pool[i], m2, 6, v2,
		    &p2), 0);
		assert_memory_equal(p1.want, p2.want, 64);
		assert_int_equal(p1.release, p2.release);
		if (p1.release >= 0)
			assert_string_equal(m1[p1.release_to],
			    m2[p2.release_to]);
		assert_int_equal(p1.quota, p2.quota);
		assert_int_equal(p1.held, p2.held);
	}
	/* And the same call twice gives the same plan. */
	assert_int_equal(shard_plan(GROUP, 64, pool[0], m1, 6, v1, &p2), 0);
	assert_int_equal(shard_plan(GROUP, 64, pool[0], m1, 6, v1, &p1), 0);
	assert_memory_equal(&p1, &p2, sizeof(p1));
	assert_true(p1.release >= 0);
}

/*
 * What holds a plan back: a release in flight (one at a time), self not
 * a member (keep, take nothing), a holder that is not a member (neither
 * free nor counted), a handover to us (wanted), our own stale record
 * (not wanted).
 */
static void
test_inputs(void **state)
{
	static struct shard_view v[8];
	struct shard_plan	 p;
	const char		*members[2] = { "a", "b" };
	int			 s;

	(void)state;
	memset(v, 0, sizeof(v));
	/* "a" leads all 8 of 8 with 2 members: it releases one. */
	for (s = 0; s < 8; s++) {
		v[s].holder = "a";
		v[s].mine = 1;
	}
	assert_int_equal(shard_plan(GROUP, 8, "a", members, 2, v, &p), 0);
	assert_int_equal(p.quota, 4);
	assert_int_equal(p.held, 8);
	assert_true(p.release >= 0 && p.release < 8);
	assert_int_equal(p.release_to, 1);
	for (s = 0; s < 8; s++)
		assert_int_equal(p.want[s], s != p.release);
	/* A release in flight: no second one. */
	v[3].mine = 0;
	v[3].releasing = 1;
	assert_int_equal(shard_plan(GROUP, 8, "a", members, 2, v, &p), 0);
	assert_int_equal(p.release, -1);
	assert_int_equal(p.want[3], 0);
	assert_int_equal(p.held, 8);
	/* "b" is handed shard 3: it wants it, and no free one. */
	v[3].releasing = 0;
	v[3].holder = "b";
	v[3].handed = 1;
	for (s = 0; s < 8; s++)
		v[s].mine = 0;
	assert_int_equal(shard_plan(GROUP, 8, "b", members, 2, v, &p), 0);
	for (s = 0; s < 8; s++)
		assert_int_equal(p.want[s], s == 3);
	/* "b" not a member yet: keeps only the handed shard. */
	assert_int_equal(shard_plan(GROUP, 8, "b", members, 1, v, &p), 0);
	assert_int_equal(p.self, -1);
	for (s = 0; s < 8; s++)
		assert_int_equal(p.want[s], s == 3);
	/* Our own record, not led (a release in flight, a stale one). */
	memset(v, 0, sizeof(v));
	v[0].holder = "a";
	assert_int_equal(shard_plan(GROUP, 8, "a", members, 2, v, &p), 0);
	assert_int_equal(p.want[0], 0);
	assert_int_equal(p.held, 1);
	assert_int_equal(p.free, 7);
	/* Ours, with the claim lapsed (a renew failed): keep renewing. */
	v[0].ours = 1;
	assert_int_equal(shard_plan(GROUP, 8, "a", members, 2, v, &p), 0);
	assert_int_equal(p.want[0], 1);
	assert_int_equal(p.held, 1);
	assert_int_equal(shard_plan(GROUP, 8, "a", members, 1, v, &p), 0);
	assert_int_equal(p.want[0], 1);
	v[0].ours = 0;
	/* A holder that is not a member: neither free nor anyone's. */
	v[0].holder = "gone";
	assert_int_equal(shard_plan(GROUP, 8, "a", members, 2, v, &p), 0);
	assert_int_equal(p.want[0], 0);
	assert_int_equal(p.free, 7);
	assert_int_equal(p.held, 0);
	/* Out of range. */
	assert_int_equal(shard_plan(GROUP, 0, "a", members, 2, v, &p), -1);
	assert_int_equal(shard_plan(GROUP, SHARD_COUNT_MAX + 1, "a", members,
	    2, v, &p), -1);
	assert_int_equal(shard_plan(GROUP, 8, "a", members,
	    SHARD_MEMBERS_MAX + 1, v, &p), -1);
}

/*
 * Free shards are spread: with all 64 free over 8 members, each member's
 * planned takes are exactly its quota, and no shard is wanted twice
 * (converge() asserts the latter on every round).
 */
static void
test_free_spread(void **state)
{
	static struct shard_view v[64];
	struct shard_plan	 p;
	unsigned		 m, s, k, total = 0;

	(void)state;
	init_names();
	memset(v, 0, sizeof(v));
	for (m = 0; m < 8; m++) {
		assert_int_equal(shard_plan(GROUP, 64, pool[m], pool, 8, v,
		    &p), 0);
		for (k = 0, s = 0; s < 64; s++)
			k += p.want[s];
		assert_int_equal(k, 8);
		assert_int_equal(p.release, -1);
		total += k;
	}
	assert_int_equal(total, 64);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_pinned),
		cmocka_unit_test(test_quotas),
		cmocka_unit_test(test_balance),
		cmocka_unit_test(test_movement),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_inputs),
		cmocka_unit_test(test_free_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
