/*
 * shard.h -- the shard group's planner: which of a group's N shard
 * Leases this instance should compete for, and which one it should hand
 * to whom.  Pure: no I/O, no clock, no malloc, no log; the caller owns
 * every array.  The safety of each shard (one holder at a time) is the
 * elector's, one elector per shard Lease; the planner only decides the
 * elector's inputs (docs/shards.md):
 *
 *  - want[s]: ELECTOR_IN_CANDIDACY on (1) or off (0, cooldown 0) for
 *    shard s's elector;
 *  - release, release_to: feed ELECTOR_IN_HANDOVER with in.to =
 *    members[release_to] to shard release's elector now (it leads it),
 *    then its CANDIDACY off; at most one shard at a time.
 *
 * The rules (issue "shard groups"): with M live members each member has
 * a quota, floor(N/M) or ceil(N/M), summing to N: the first N mod M
 * members in the rank order (below) get ceil.  A member keeps what it
 * holds up to its quota (so that a change of membership moves only what
 * must move); a free or expired shard is planned to one member below its
 * quota, the one among them whose rendezvous hash with the shard is the
 * highest, so that members do not race for the same shard; a member
 * above its quota hands one shard at a time to a named member still
 * below its quota after the free shards are planned.  Every member runs
 * the same computation on the same view, so plans agree once views do.
 *
 * The hash is fixed and portable, the same on every architecture and in
 * every release: 64-bit FNV-1a over the bytes of "GROUP/SHARD/MEMBER"
 * (SHARD in decimal), then MurmurHash3's 64-bit finalizer (fmix64) so
 * that names differing in their last byte spread over all 64 bits.  A
 * member's rank for the quota order uses the same hash of "GROUP//MEMBER"
 * (an empty shard field), highest first, ties by strcmp.
 */

#ifndef SHARD_H
#define SHARD_H

#include <stdint.h>

#define SHARD_COUNT_MAX		256	/* shards in a group */
#define SHARD_MEMBERS_MAX	256	/* live members a plan considers */

/* What the caller knows of one shard, by its monotonic clock. */
struct shard_view {
	const char	*holder;	/* the live record's holder; NULL or ""
					   when free, released or expired */
	int		 mine;		/* our elector leads it now
					   (elector_is_leader) */
	int		 ours;		/* the live record is one this process
					   wrote, though our claim lapsed (a
					   renew failed): keep renewing it */
	int		 handed;	/* the live record is a handover to us
					   not yet taken (LEASE_HANDOVER names
					   self, we do not lead it) */
	int		 releasing;	/* our handover or release of it is
					   written but not yet answered */
};

/* The plan for self.  Filled whole by shard_plan. */
struct shard_plan {
	unsigned char	 want[SHARD_COUNT_MAX];	/* candidate for shard s */
	int		 release;	/* shard to hand over now, or -1 */
	int		 release_to;	/* its receiver's index in members */
	int		 self;		/* self's index in members, -1 if
					   self is not a live member */
	unsigned	 quota;		/* self's share: floor or ceil(N/M) */
	unsigned	 held;		/* shards counted as self's */
	unsigned	 free;		/* shards free or expired */
};

/*
 * The rendezvous hash of (group, shard, member): FNV-1a 64 over
 * "GROUP/SHARD/MEMBER", then fmix64.  shard -1 hashes "GROUP//MEMBER",
 * the member's rank for the quota order.
 */
uint64_t	shard_hash(const char *group, int shard, const char *member);

/*
 * Plan self's candidacies.  n: the group's count (1..SHARD_COUNT_MAX);
 * members: the live members' identities (distinct; self among them when
 * its own member Lease is held), nmembers <= SHARD_MEMBERS_MAX, in any
 * order; view: n entries.  A holder that is not a live member (its
 * member Lease expired, its shard Lease not yet) occupies the shard
 * for nobody: it is neither free nor counted.  Self not a member keeps
 * what it holds or is handed and takes nothing new.  Returns 0, or -1
 * for arguments out of range (then *out is not filled).
 */
int	shard_plan(const char *group, unsigned n, const char *self,
	    const char *const *members, unsigned nmembers,
	    const struct shard_view *view, struct shard_plan *out);

/*
 * The quota of each member (quota[i] for members[i]): floor(N/M) or
 * ceil(N/M) by rank, summing to n.  Returns 0 or -1 as shard_plan.
 */
int	shard_quotas(const char *group, unsigned n, const char *const *members,
	    unsigned nmembers, unsigned *quota);

#endif /* SHARD_H */
