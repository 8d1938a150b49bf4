/*
 * daemon_shards_int.h -- what the shard group's three files share;
 * private to them (docs/shards.md).
 *
 * daemon_shards.c holds the group's life (set-up, start, stop, the
 * member Lease's delete) and the planner's driver: one elector per
 * shard, its candidacy and one directed handover at a time.
 * daemon_shards_members.c holds the membership: the list and the watch
 * of the group's Leases, the members they show and their liveness, and
 * the shard records fed to the shard electors.  daemon_shards_http.c
 * holds what the group shows: GET /shards, /shards/watch, run mode's
 * LEADERD_SHARDS and the group's gauges.
 */

#ifndef DAEMON_SHARDS_INT_H
#define DAEMON_SHARDS_INT_H

#include <stdint.h>
#include <ev.h>

#include "codec/lease.h"
#include "config/config.h"

struct daemon;
struct election;
struct kube;
struct watch;

/*
 * A member Lease of the group as the list or the watch showed it.  It
 * counts as a member only once seen renewing (a version newer than one
 * seen within our lease_duration before it), while held by the name's
 * own identity, and for our lease_duration from its last version: a
 * Lease created once and never written again counts for nothing.
 */
struct member {
	char		 name[LEASE_HOLDER_MAX + 16];	/* the Lease's */
	char		 holder[LEASE_HOLDER_MAX];	/* its holder */
	char		 rv[LEASE_RV_MAX];	/* the version seen */
	uint64_t	 seen_ms;	/* when that version was first seen */
	int		 renewing;	/* that version followed another one
					   within our lease_duration */
	int		 named;		/* held by GROUP-member-HOLDER's
					   HOLDER */
	int64_t		 renew_us;	/* its renewTime, wall clock */
	unsigned	 gen;		/* the list it was last in */
};

struct shards {
	struct daemon		*d;
	const char		*group;
	unsigned		 n;
	char			 prefix[CONFIG_STR_MAX + 16]; /* "GROUP-" */
	char			 mprefix[CONFIG_STR_MAX + 16]; /* "GROUP-member-" */
	char			 selector[CONFIG_STR_MAX + 32];
	const char		*labels[3];	/* a shard Lease's */
	const char		*mlabels[5];	/* the member Lease's */
	struct kube		*list;		/* the group's list, then the
						   member Lease's delete */
	int			 listed;	/* the others seen as of our
						   membership: a list answered
						   since we became a member, or
						   the watch from a list up to
						   our member Lease's version */
	char			 own_rv[LEASE_RV_MAX];	/* our member Lease's
						   last version the watch
						   delivered */
	uint64_t		 look_ms;	/* the first list answered: the
						   others are counted once seen
						   renewing, renew_deadline on */
	int			 list_ok;	/* the last list answered */
	/* The list's walk over its pages (limit, continue). */
	char			 cont[LEASE_CONTINUE_MAX]; /* the next page's
						   token; "" for a first */
	char			 walk_rv[LEASE_RV_MAX];	/* its first page's
						   version */
	int			 walk_member;	/* a member at its first page */
	unsigned		 walk_skipped;	/* skipped in its pages */
	char			 walk_why[200];	/* the first unreadable one */
	unsigned		 limit;		/* the page size now */
	int			 from_store;	/* the cache answered whole and
						   too large: pages from
						   storage */
	unsigned		 skipped;	/* Leases the last whole list
						   skipped */
	char			 said_why[200];	/* the unreadable one logged */
	unsigned		 said_unconfirmed; /* member Leases not counted,
						   as last logged */
	uint64_t		 said_ms;	/* when that was logged */
	struct watch		*watch;		/* the group's, or NULL */
	int			 watch_started;	/* after the first list */
	int			 fresh;		/* the watch delivers */
	int			 fed;		/* the shard electors count as
						   watching (list or watch) */
	uint64_t		 item_ms;	/* the watch's last event */
	int			 deleting;	/* the delete is under way */
	ev_timer		 list_timer;	/* the next list */
	ev_timer		 plan_timer;	/* the next plan */
	struct member		*m;		/* SHARD_MEMBERS_MAX of them */
	unsigned		 nm;
	unsigned		 gen;		/* lists answered */
	/* What GET /shards last reported, for its index. */
	uint64_t		 index;
	char			*seen;		/* the state's signature */
	unsigned		 moves;		/* handovers sent */
	uint64_t		 claim_ms;	/* the next free shard's claim
						   may start then (claim_due) */
	unsigned char		*letgo;		/* run mode: held, being taken
						   from the command first */
};

/* daemon_shards.c */

/* Shard s's election (election 1 + s). */
struct election *daemon_shards_el(const struct shards *sh, unsigned s);

/* Plan from the loop, at once: never inside an elector's step. */
void	daemon_shards_plan_soon(struct shards *sh);

/* daemon_shards_members.c */

/* Whether we hold our own member Lease now. */
int	daemon_shards_self_member(const struct shards *sh, uint64_t now_ms);

/*
 * Whether the others had time to show themselves renewing since we first
 * looked: every member Lease that may be a live member's has been seen
 * renewing, or renew_deadline has passed since the first list answered.
 * Until then a member takes nothing new, lest it think itself alone.
 */
int	daemon_shards_looked(const struct shards *sh, uint64_t now_ms);

/*
 * Member Leases naming a holder that do not count as members, our own
 * aside: never seen renewing since we looked, or held by another name
 * than their own.
 */
unsigned daemon_shards_unconfirmed(const struct shards *sh);

/*
 * Log the member Leases that do not count as they change, at most once
 * per lease_duration.
 */
void	daemon_shards_note_unconfirmed(struct shards *sh, uint64_t now_ms);

/*
 * The live members at now_ms into out (SHARD_MEMBERS_MAX of them),
 * sorted, self among them if a member; returns how many.
 */
unsigned daemon_shards_live_members(const struct shards *sh,
	    uint64_t now_ms, const char **out);

/*
 * Note whether the watch delivers and whether the shard electors count
 * as watching; a watch that stops delivering brings the list back.
 */
void	daemon_shards_check_watch(struct shards *sh, uint64_t now_ms);

/* List the group's Leases now, unless stopping or a list is under way. */
void	daemon_shards_list_now(struct shards *sh);

/* The list timer's callback (sh->list_timer); data is the group. */
void	daemon_shards_list_timer_cb(struct ev_loop *loop, ev_timer *w,
	    int revents);

/* The group's watch's callbacks (struct watch_cbs); arg is the group. */
void	daemon_shards_watch_item_cb(const char *name, const struct lease *rec,
	    char *obj, void *arg);
void	daemon_shards_watch_reread_cb(void *arg);
void	daemon_shards_watch_health_cb(int healthy, void *arg);

/* daemon_shards_http.c */

/*
 * Run mode: the command's LEADERD_SHARDS, the shards owned now; a change
 * restarts it or sends it SIGHUP (shards.on_change).
 */
void	daemon_shards_run_var(struct shards *sh, uint64_t now_ms);

/*
 * Whether what /shards says changed since it was last noted: then bump
 * the index, send the event to the streams and wake the blocking reads.
 */
void	daemon_shards_report(struct shards *sh, uint64_t now_ms);

#endif /* DAEMON_SHARDS_INT_H */
