/*
 * daemon_shards_members.c -- a shard group's membership (docs/shards.md).
 * One list of the group's Leases by label selector, then one watch of
 * them from the list's version, tells us the live members and feeds
 * every shard elector the records it would otherwise have to read or
 * watch itself (as a watch's events: ELECTOR_IN_WATCHED).  The list is
 * repeated every retry_period while the watch is down or quiet, every
 * WATCH_POLL_MS while it delivers, and at once after a 410 Gone.  Safety
 * stays the electors': the list and the watch only wake them, and a
 * member seen late only moves the balance, never a claim.
 *
 * Anyone who may create Leases in the namespace can create a member
 * Lease, so one counts as a member only once it shows a process behind
 * it: held by the identity its name carries, and seen renewing (a newer
 * version within our lease_duration of the one before); it stays live
 * for our lease_duration from its last version, whatever the record
 * says.  Every member runs with the group's durations and renews each
 * retry_period, so a real member is counted about one retry_period after
 * its Lease first appears.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kube.h"
#include "api/watch.h"
#include "base/clock.h"
#include "base/log.h"
#include "codec/lease.h"
#include "config/config.h"
#include "core/elector.h"
#include "core/shard.h"
#include "daemon/daemon_int.h"
#include "daemon/daemon_shards_int.h"

#define LIST_PAGE	100	/* a list's page, at most */

static void	list_later(struct shards *);

/* Whether name is the group's shard GROUP-s; s in *s. */
static int
shard_of(const struct shards *sh, const char *name, unsigned *s)
{
	size_t		 len = strlen(sh->prefix);
	const char	*p = name + len;
	unsigned long	 v = 0;

	if (strncmp(name, sh->prefix, len) != 0 || *p == '\0' ||
	    (p[0] == '0' && p[1] != '\0'))
		return 0;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || v > SHARD_COUNT_MAX)
			return 0;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v >= sh->n)
		return 0;
	*s = (unsigned)v;
	return 1;
}

/* Whether member slot k is live at now_ms by our clock. */
static int
member_live(const struct shards *sh, const struct member *k, uint64_t now_ms)
{
	return k->holder[0] != '\0' && k->renewing && k->named &&
	    now_ms < k->seen_ms + sh->d->conf->lease_duration_ms;
}

/*
 * Whether member slot k may yet show itself renewing: named, not seen
 * renewing, its version first seen less than renew_deadline ago (a live
 * member renews within it), and its record renewed within our
 * lease_duration by our wall clock (one that says otherwise is no live
 * member's; one that lies is waited for no longer than renew_deadline).
 */
static int
member_pending(const struct shards *sh, const struct member *k,
    uint64_t now_ms, int64_t wall_us)
{
	const struct config	*c = sh->d->conf;

	return k->holder[0] != '\0' && k->named && !k->renewing &&
	    now_ms < k->seen_ms + c->renew_deadline_ms &&
	    k->renew_us + (int64_t)c->lease_duration_ms * 1000 > wall_us;
}

int
daemon_shards_looked(const struct shards *sh, uint64_t now_ms)
{
	int64_t		 wall_us = clock_wall_us();
	unsigned	 i;

	if (sh->look_ms == 0)
		return 0;
	if (now_ms >= sh->look_ms + sh->d->conf->renew_deadline_ms)
		return 1;
	for (i = 0; i < sh->nm; i++)
		if (strcmp(sh->m[i].holder, sh->d->conf->identity) != 0 &&
		    member_pending(sh, &sh->m[i], now_ms, wall_us))
			return 0;
	return 1;
}

unsigned
daemon_shards_unconfirmed(const struct shards *sh)
{
	unsigned	 i, n = 0;

	for (i = 0; i < sh->nm; i++)
		if (sh->m[i].holder[0] != '\0' &&
		    (!sh->m[i].renewing || !sh->m[i].named) &&
		    strcmp(sh->m[i].name, sh->d->conf->lock_name) != 0)
			n++;
	return n;
}

/*
 * A slot for a member Lease not in the table: a free one, or else the
 * one of a Lease never seen renewing that has waited longest (a table
 * full of Leases nobody renews keeps no real member out); NULL when
 * every slot holds a member seen renewing.
 */
static struct member *
member_slot(struct shards *sh)
{
	struct member	*k = NULL;
	unsigned	 i;

	if (sh->nm < SHARD_MEMBERS_MAX)
		return &sh->m[sh->nm++];
	for (i = 0; i < sh->nm; i++)
		if ((!sh->m[i].renewing || !sh->m[i].named) &&
		    (k == NULL || sh->m[i].seen_ms < k->seen_ms))
			k = &sh->m[i];
	return k;
}

/* Whether we hold our own member Lease now. */
int
daemon_shards_self_member(const struct shards *sh, uint64_t now_ms)
{
	const struct daemon	*d = sh->d;

	return !d->stopping && elector_is_leader(&d->el[0].el, now_ms);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The live members at now_ms, sorted, self among them if a member. */
unsigned
daemon_shards_live_members(const struct shards *sh, uint64_t now_ms,
    const char **out)
{
	const char	*self = sh->d->conf->identity;
	unsigned	 i, n = 0;

	for (i = 0; i < sh->nm && n < SHARD_MEMBERS_MAX - 1; i++)
		if (strcmp(sh->m[i].holder, self) != 0 &&
		    member_live(sh, &sh->m[i], now_ms))
			out[n++] = sh->m[i].holder;
	if (daemon_shards_self_member(sh, now_ms))
		out[n++] = self;
	qsort(out, n, sizeof(out[0]), cmp_str);
	/* Two member Leases naming one holder count once. */
	for (i = 1; i < n; )
		if (strcmp(out[i], out[i - 1]) == 0) {
			memmove(&out[i], &out[i + 1],
			    (n - i - 1) * sizeof(out[0]));
			n--;
		} else
			i++;
	return n;
}

/* One item of the list: a member Lease noted, a shard's record fed. */
static void
list_item(const char *name, const struct lease *rec, char *obj, void *arg)
{
	struct shards	*sh = arg;
	struct election	*e;
	struct member	*k = NULL;
	uint64_t	 now_ms;
	unsigned	 s, i;

	if (strncmp(name, sh->mprefix, strlen(sh->mprefix)) == 0) {
		free(obj);
		for (i = 0; i < sh->nm; i++)
			if (strcmp(sh->m[i].name, name) == 0) {
				k = &sh->m[i];
				break;
			}
		if (k == NULL) {
			if ((k = member_slot(sh)) == NULL)
				return;
			memset(k, 0, sizeof(*k));
			snprintf(k->name, sizeof(k->name), "%s", name);
		}
		k->gen = sh->gen;
		/* A list from the cache may be older than one seen. */
		if (k->rv[0] != '\0' && !watch_rv_newer(rec->rv, k->rv))
			return;
		/*
		 * A new version: live for our lease_duration from now, once
		 * one has followed another within it (seen renewing).
		 */
		now_ms = clock_mono_ms();
		k->renewing = k->rv[0] != '\0' &&
		    now_ms < k->seen_ms + sh->d->conf->lease_duration_ms;
		snprintf(k->rv, sizeof(k->rv), "%s", rec->rv);
		snprintf(k->holder, sizeof(k->holder), "%s", rec->holder);
		k->named = strcmp(name + strlen(sh->mprefix), rec->holder) == 0;
		k->renew_us = rec->renew_us;
		k->seen_ms = now_ms;
		return;
	}
	if (!shard_of(sh, name, &s)) {
		free(obj);
		return;
	}
	e = daemon_shards_el(sh, s);
	if (sh->d->stopping || e->el.state == ELECTOR_STOPPED) {
		free(obj);
		return;
	}
	daemon_watch_record_cb(rec, obj, e);
}

/*
 * Whether the watch delivers: its stream is up and an event came within
 * renew_deadline (every member renews its Lease each retry_period, so a
 * group that is there sends events; a stream that stalls without
 * breaking is caught here, long before its own timeout).
 */
static int
watch_fresh(const struct shards *sh, uint64_t now_ms)
{
	return sh->watch != NULL && watch_healthy(sh->watch) &&
	    now_ms < sh->item_ms + sh->d->conf->renew_deadline_ms;
}

/*
 * Note whether the watch delivers and whether the shard electors count
 * as watching (the last list answered, or the watch delivers); a watch
 * that stops delivering brings the list back to every retry_period.
 */
void
daemon_shards_check_watch(struct shards *sh, uint64_t now_ms)
{
	struct daemon	*d = sh->d;
	unsigned	 i;
	int		 fresh, fed;

	if (d->stopping)
		return;
	fresh = watch_fresh(sh, now_ms);
	if (fresh != sh->fresh) {
		sh->fresh = fresh;
		if (!fresh) {
			log_debug("shard group %s: the watch is quiet or "
			    "down; listing every retry_period", sh->group);
			daemon_shards_list_now(sh);
		}
	}
	fed = sh->list_ok || fresh;
	if (fed != sh->fed) {
		sh->fed = fed;
		for (i = 0; i < sh->n; i++)
			daemon_watch_health_cb(fed, daemon_shards_el(sh, i));
	}
}

static void	list_item(const char *, const struct lease *, char *, void *);

/* The group's watch: a Lease changed (obj) or was deleted (obj NULL). */
void
daemon_shards_watch_item_cb(const char *name, const struct lease *rec,
    char *obj, void *arg)
{
	struct shards	*sh = arg;
	unsigned	 s, i;

	if (sh->d->stopping) {
		free(obj);
		return;
	}
	sh->item_ms = clock_mono_ms();
	/* Our member Lease as the watch delivered it (plan, listed). */
	if (obj != NULL && strcmp(name, sh->d->conf->lock_name) == 0 &&
	    strcmp(rec->holder, sh->d->conf->identity) == 0)
		snprintf(sh->own_rv, sizeof(sh->own_rv), "%s", rec->rv);
	if (obj != NULL)
		list_item(name, rec, obj, sh);
	else if (strncmp(name, sh->mprefix, strlen(sh->mprefix)) == 0) {
		/* A member Lease deleted: that member has gone. */
		for (i = 0; i < sh->nm; i++)
			if (strcmp(sh->m[i].name, name) == 0) {
				sh->m[i] = sh->m[--sh->nm];
				break;
			}
	} else if (shard_of(sh, name, &s) &&
	    daemon_shards_el(sh, s)->el.state != ELECTOR_STOPPED)
		/* A shard deleted: its elector reads it, as on one watch. */
		daemon_watch_reread_cb(daemon_shards_el(sh, s));
	daemon_shards_check_watch(sh, sh->item_ms);
	daemon_shards_plan_soon(sh);
}

/* 410 Gone: list again; the watch resumes from the list's version. */
void
daemon_shards_watch_reread_cb(void *arg)
{
	daemon_shards_list_now(arg);
}

void
daemon_shards_watch_health_cb(int healthy, void *arg)
{
	struct shards	*sh = arg;

	/* Counted as delivering from the moment it opens. */
	if (healthy)
		sh->item_ms = clock_mono_ms();
	daemon_shards_check_watch(sh, clock_mono_ms());
}

/* Whether the list's item name is one of the group's Leases. */
static int
list_want(const char *name, void *arg)
{
	const struct shards	*sh = arg;
	unsigned		 s;

	return (strncmp(name, sh->mprefix, strlen(sh->mprefix)) == 0 &&
	    name[strlen(sh->mprefix)] != '\0') || shard_of(sh, name, &s);
}

/* Whether the list failed on a page larger than one answer may be. */
static int
too_large(const struct kube_result *res)
{
	return res->outcome != KUBE_OK &&
	    strcmp(res->reason, "BodyTooLarge") == 0;
}

/* A whole list answered: forget who is gone, note what was skipped. */
static void
list_whole(struct shards *sh)
{
	unsigned	 i, k;

	/*
	 * Leases deleted, or gone from a whole list, are forgotten, but for
	 * one the watch showed newer than the list (the list comes from
	 * the API server's cache).
	 */
	for (i = k = 0; i < sh->nm; i++)
		if (sh->m[i].gen == sh->gen ||
		    watch_rv_newer(sh->m[i].rv, sh->walk_rv))
			sh->m[k++] = sh->m[i];
	sh->nm = k;
	/* Logged as it changes: each list does not repeat it. */
	if (sh->walk_skipped != sh->skipped ||
	    strcmp(sh->walk_why, sh->said_why) != 0) {
		if (sh->walk_skipped > 0)
			log_warnx("shard group %s: %u Leases with its label "
			    "skipped, not the group's or not readable%s%s",
			    sh->group, sh->walk_skipped,
			    sh->walk_why[0] != '\0' ? "; first: " : "",
			    sh->walk_why);
		snprintf(sh->said_why, sizeof(sh->said_why), "%s",
		    sh->walk_why);
	}
	sh->skipped = sh->walk_skipped;
}

/*
 * Log the member Leases that do not count as they change, once the
 * others had time to show themselves renewing, at most once per
 * lease_duration.
 */
void
daemon_shards_note_unconfirmed(struct shards *sh, uint64_t now_ms)
{
	unsigned	 n;

	if (!daemon_shards_looked(sh, now_ms) || (sh->said_ms != 0 &&
	    now_ms < sh->said_ms + sh->d->conf->lease_duration_ms) ||
	    (n = daemon_shards_unconfirmed(sh)) == sh->said_unconfirmed)
		return;
	log_info("shard group %s: %u member Leases not counted as members: "
	    "never seen renewing (a Lease nobody runs, or a member gone "
	    "before we started), or held by another name", sh->group, n);
	sh->said_unconfirmed = n;
	sh->said_ms = now_ms;
}

/*
 * Read one page of the list into page: an answer decoded item by item,
 * or a page of one Lease too large to read, skipped by the page's own
 * continue token (lease_list_head).  Returns -1 with err otherwise.
 */
static int
read_page(struct shards *sh, const struct kube_result *res,
    struct lease_list *page, char *err, size_t errlen)
{
	char	 name[LEASE_HOLDER_MAX];

	if (res->outcome == KUBE_OK)
		return lease_list_decode(res->body, res->len, list_want,
		    list_item, sh, page, err, errlen);
	if (!too_large(res) || sh->limit != 1 ||
	    lease_list_head(res->body, res->len, page, name, sizeof(name),
	    err, errlen) == -1)
		return -1;
	page->skipped = 1;
	snprintf(page->why, sizeof(page->why), "%.80s: larger than one "
	    "answer (%d bytes)", name[0] != '\0' ? name : "(no name)",
	    LEASE_BODY_MAX);
	return 0;
}

static void
list_done_cb(const struct kube_result *res, void *arg)
{
	struct shards		*sh = arg;
	struct daemon		*d = sh->d;
	static struct lease_list page;
	char			 err[256];
	int			 ok, cache, first = sh->cont[0] == '\0';

	if (d->stopping)
		return;
	/*
	 * A page over one answer's bound: a cache that answered every item
	 * at once is left for pages from storage, a page from storage is
	 * asked again half as large, and a page of one is skipped.
	 */
	cache = first && !sh->from_store;
	if (too_large(res) && (cache || sh->limit > 1)) {
		if (cache) {
			sh->from_store = 1;
			log_info("shard group %s: its list is larger than one "
			    "answer; listing in pages from storage",
			    sh->group);
		} else
			sh->limit /= 2;
		daemon_shards_list_now(sh);
		return;
	}
	if (first) {
		/*
		 * Not a flag cleared first: feeding a shard's record answers
		 * blocking reads, which must see the members as they were.
		 */
		sh->gen++;
		sh->walk_member = daemon_shards_self_member(sh,
		    clock_mono_ms());
		sh->walk_skipped = 0;
		sh->walk_why[0] = '\0';
	}
	ok = read_page(sh, res, &page, err, sizeof(err)) == 0;
	if (ok) {
		if (first)
			snprintf(sh->walk_rv, sizeof(sh->walk_rv), "%s",
			    page.rv);
		sh->walk_skipped += page.skipped;
		if (sh->walk_why[0] == '\0')
			snprintf(sh->walk_why, sizeof(sh->walk_why), "%s",
			    page.why);
		/* A page answered: the next may be larger. */
		if (sh->limit < LIST_PAGE)
			sh->limit *= 2;
		if (page.cont[0] != '\0') {
			snprintf(sh->cont, sizeof(sh->cont), "%s", page.cont);
			daemon_shards_list_now(sh);
			return;
		}
	} else if (res->outcome == KUBE_OK)
		log_warnx("shard group %s: the list of its Leases: %s",
		    sh->group, err);
	else {
		if (res->status == 401)
			kube_token_stale(sh->list);
		log_debug("shard group %s: list failed: %ld %s: %s",
		    sh->group, res->status, res->reason, res->message);
		if (sh->list_ok || !sh->listed)
			log_warnx("shard group %s: cannot list its Leases "
			    "(%ld %s: %s)%s", sh->group, res->status,
			    res->reason, res->message, res->status == 403 ?
			    "; leaderd needs leases list in the namespace" :
			    "");
	}
	/* A failed page ends the walk: the next list starts over. */
	sh->cont[0] = '\0';
	if (ok)
		list_whole(sh);
	if (ok && sh->walk_member)
		sh->listed = 1;
	if (ok && sh->look_ms == 0)
		sh->look_ms = clock_mono_ms();
	/* The watch goes on from the list's version. */
	if (ok && sh->watch != NULL && sh->walk_rv[0] != '\0') {
		if (!sh->watch_started) {
			sh->watch_started = 1;
			watch_start(sh->watch, sh->walk_rv);
		} else
			watch_seen(sh->watch, sh->walk_rv);
	}
	/*
	 * The list and the watch stand in for the shard electors' reads.
	 * A list the API server could not answer (a timeout, a transport
	 * error, a 5xx or a 429) leaves that so: each shard's own GET would
	 * fail alike, and a group's every shard polling a server that is
	 * down would queue there, all served the moment it recovers.  A
	 * list refused (a 403, a 401) hands the reads to the electors.
	 */
	if (ok || !kube_unanswered(res))
		sh->list_ok = ok;
	daemon_shards_check_watch(sh, clock_mono_ms());
	list_later(sh);
	daemon_shards_plan_soon(sh);
}

void
daemon_shards_list_now(struct shards *sh)
{
	struct daemon	*d = sh->d;
	const char	*cont = sh->cont;

	if (d->stopping || kube_busy(sh->list))
		return;
	if (sh->limit == 0)
		sh->limit = LIST_PAGE;
	/* A first page from the cache, unless it answered too large. */
	if (cont[0] == '\0' && !sh->from_store)
		cont = NULL;
	if (kube_lease_list(sh->list, d->conf->lock_namespace, sh->selector,
	    sh->limit, cont, d->conf->request_timeout_ms, list_done_cb,
	    sh) == -1) {
		log_warnx("shard group %s: cannot start the list", sh->group);
		sh->cont[0] = '\0';
		list_later(sh);
	}
}

void
daemon_shards_list_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	daemon_shards_list_now(w->data);
}

static void
list_later(struct shards *sh)
{
	struct daemon	*d = sh->d;

	ev_timer_stop(d->loop, &sh->list_timer);
	ev_now_update(d->loop);
	/* A watch that delivers leaves the list a safety net. */
	ev_timer_set(&sh->list_timer, clock_timer_seconds(sh->fresh ?
	    WATCH_POLL_MS : d->conf->retry_period_ms), 0.);
	ev_timer_start(d->loop, &sh->list_timer);
}
