/*
 * shard.c -- the shard group's planner (shard.h, docs/shards.md).
 *
 * Why it converges: once the members' views agree (the same live
 * members, the same holders), every member computes the same quotas and
 * the same plan.  Each free shard is planned to exactly one member below
 * its quota, and each release to a receiver whose remaining deficit is
 * reserved for it, so no two members race for a shard and no receiver
 * is overfilled.  Every step then lowers the distance to balance, the
 * free shards plus the sum over members of |held - quota|, by at least
 * one; the quotas sum to N, so at zero every member holds its quota and
 * every shard is held.  Views that disagree (a watch event late) can
 * make two members want one free shard; the elector's compare-and-swap
 * lets one of them have it, and a member that ends up above its quota
 * hands the extra back.  Safety never depends on the plan.
 */

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/shard.h"

#define FNV_OFFSET	0xcbf29ce484222325ULL
#define FNV_PRIME	0x100000001b3ULL

#define OWNER_FREE	(-1)	/* no live holder */
#define OWNER_OTHER	(-2)	/* a live holder that is not a member */

static uint64_t
fnv_bytes(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= FNV_PRIME;
	}
	return h;
}

/* MurmurHash3's fmix64: every input bit reaches every output bit. */
static uint64_t
fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

uint64_t
shard_hash(const char *group, int shard, const char *member)
{
	char		 num[16];
	unsigned	 v;
	int		 i = (int)sizeof(num) - 1;
	uint64_t	 h;

	num[i] = '\0';
	if (shard >= 0) {
		v = (unsigned)shard;
		do {
			num[--i] = (char)('0' + v % 10);
			v /= 10;
		} while (v != 0 && i > 0);
	}
	h = fnv_bytes(FNV_OFFSET, group);
	h = fnv_bytes(h, "/");
	h = fnv_bytes(h, num + i);
	h = fnv_bytes(h, "/");
	h = fnv_bytes(h, member);
	return fmix64(h);
}

/* Whether a outranks b: the higher hash, then the smaller name. */
static int
outranks(uint64_t ha, const char *a, uint64_t hb, const char *b)
{
	if (ha != hb)
		return ha > hb;
	return strcmp(a, b) < 0;
}

int
shard_quotas(const char *group, unsigned n, const char *const *members,
    unsigned nmembers, unsigned *quota)
{
	uint64_t	 h[SHARD_MEMBERS_MAX];
	unsigned	 i, j, above, extra;

	if (n == 0 || n > SHARD_COUNT_MAX || nmembers > SHARD_MEMBERS_MAX)
		return -1;
	if (nmembers == 0)
		return 0;
	for (i = 0; i < nmembers; i++)
		h[i] = shard_hash(group, -1, members[i]);
	extra = n % nmembers;
	for (i = 0; i < nmembers; i++) {
		/* Its rank: how many members outrank it. */
		for (above = 0, j = 0; j < nmembers; j++)
			if (j != i && outranks(h[j], members[j], h[i],
			    members[i]))
				above++;
		quota[i] = n / nmembers + (above < extra ? 1 : 0);
	}
	return 0;
}

/* The index of name among members, or -1. */
static int
member_index(const char *const *members, unsigned nmembers, const char *name)
{
	unsigned	 i;

	for (i = 0; i < nmembers; i++)
		if (strcmp(members[i], name) == 0)
			return (int)i;
	return -1;
}

/*
 * The best (shard, receiver) pair for a release by member u: of u's
 * shards that it may hand over and the members with a deficit left, the
 * pair with the highest hash.  Returns the shard, or -1.
 */
static int
best_release(const char *group, unsigned n, const char *const *members,
    unsigned nmembers, const int *owner, const unsigned char *handable,
    int u, const unsigned *left, int *to)
{
	uint64_t	 h, best = 0;
	unsigned	 s, m;
	int		 bs = -1;

	for (s = 0; s < n; s++) {
		if (owner[s] != u || !handable[s])
			continue;
		for (m = 0; m < nmembers; m++) {
			if (left[m] == 0 || (int)m == u)
				continue;
			h = shard_hash(group, (int)s, members[m]);
			if (bs == -1 || outranks(h, members[m], best,
			    members[*to])) {
				bs = (int)s;
				*to = (int)m;
				best = h;
			}
		}
	}
	return bs;
}

int
shard_plan(const char *group, unsigned n, const char *self,
    const char *const *members, unsigned nmembers,
    const struct shard_view *view, struct shard_plan *out)
{
	unsigned	 quota[SHARD_MEMBERS_MAX], load[SHARD_MEMBERS_MAX];
	unsigned	 left[SHARD_MEMBERS_MAX];
	uint64_t	 rank[SHARD_MEMBERS_MAX];
	int		 owner[SHARD_COUNT_MAX], plan[SHARD_COUNT_MAX];
	unsigned char	 handable[SHARD_COUNT_MAX];
	unsigned	 s, m, i, j, order[SHARD_MEMBERS_MAX];
	int		 me, busy = 0, bm, to, r;
	uint64_t	 h, bh = 0;
	const char	*holder;

	if (shard_quotas(group, n, members, nmembers, quota) == -1)
		return -1;
	memset(out, 0, sizeof(*out));
	out->release = out->release_to = -1;
	me = member_index(members, nmembers, self);
	out->self = me;
	memset(load, 0, sizeof(load));
	for (s = 0; s < n; s++) {
		holder = view[s].mine || view[s].ours ||
		    view[s].releasing ? self : view[s].holder;
		plan[s] = -1;
		handable[s] = 0;
		if (view[s].releasing)
			busy = 1;
		if (holder == NULL || holder[0] == '\0') {
			owner[s] = OWNER_FREE;
			out->free++;
			continue;
		}
		r = member_index(members, nmembers, holder);
		owner[s] = r >= 0 ? r : OWNER_OTHER;
		if (r >= 0) {
			load[r]++;
			/*
			 * Another member's shards are all its own to hand
			 * over as far as we can tell; ours only while we lead
			 * them.
			 */
			handable[s] = r != me || view[s].mine;
		}
	}
	if (me >= 0) {
		out->quota = quota[me];
		out->held = load[me];
	}
	if (me < 0) {
		/* Not a member: keep what we lead or are handed. */
		for (s = 0; s < n; s++)
			out->want[s] = view[s].mine || view[s].ours ||
			    view[s].handed;
		return 0;
	}

	/* Each free shard to the best-ranked member below its quota. */
	for (m = 0; m < nmembers; m++)
		left[m] = quota[m] > load[m] ? quota[m] - load[m] : 0;
	for (s = 0; s < n; s++) {
		if (owner[s] != OWNER_FREE)
			continue;
		bm = -1;
		for (m = 0; m < nmembers; m++) {
			if (left[m] == 0)
				continue;
			h = shard_hash(group, (int)s, members[m]);
			if (bm == -1 || outranks(h, members[m], bh,
			    members[bm])) {
				bm = (int)m;
				bh = h;
			}
		}
		if (bm >= 0) {
			plan[s] = bm;
			left[bm]--;
		}
	}

	/*
	 * Members above their quota, in rank order, each hand one shard to
	 * a receiver with a deficit left; every member reserves the same
	 * receivers, so two releases never aim at one free slot.
	 */
	for (m = 0; m < nmembers; m++) {
		rank[m] = shard_hash(group, -1, members[m]);
		order[m] = m;
	}
	for (i = 1; i < nmembers; i++)
		for (j = i; j > 0 && outranks(rank[order[j]],
		    members[order[j]], rank[order[j - 1]],
		    members[order[j - 1]]); j--) {
			m = order[j];
			order[j] = order[j - 1];
			order[j - 1] = m;
		}
	for (i = 0; i < nmembers; i++) {
		m = order[i];
		if (load[m] <= quota[m])
			continue;
		to = -1;
		r = best_release(group, n, members, nmembers, owner, handable,
		    (int)m, left, &to);
		if (r < 0)
			continue;
		left[to]--;
		if ((int)m == me && !busy) {
			out->release = r;
			out->release_to = to;
		}
	}

	for (s = 0; s < n; s++)
		out->want[s] = ((view[s].mine || view[s].ours) &&
		    (int)s != out->release) || view[s].handed || plan[s] == me;
	return 0;
}
