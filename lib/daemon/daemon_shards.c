/*
 * daemon_shards.c -- a shard group in the daemon (docs/shards.md).  The
 * first election is the member Lease GROUP-member-IDENTITY, which we
 * alone compete for; elections 1..N are the shard Leases GROUP-0 ..
 * GROUP-(N-1), each a normal elector whose candidacy the planner
 * (core/shard.c) turns on or off, and one of which it may hand to a
 * named member (ELECTOR_IN_HANDOVER).  One list of the group's Leases
 * by label selector, then one watch of them from the list's version,
 * tells us the live members and feeds every shard elector the records
 * it would otherwise have to read or watch itself (as a watch's events:
 * ELECTOR_IN_WATCHED).  The list is repeated every retry_period while
 * the watch is down or quiet, every WATCH_POLL_MS while it delivers, and
 * at once after a 410 Gone.  Safety stays the electors': the list and
 * the watch only wake them, and a member seen late only moves the
 * balance, never a claim.
 *
 * The planner runs after every step of a group election (from the loop,
 * not inside the step) and at least every PLAN_MS, at the end of any of
 * our claims and at any member's expiry.  GET /shards and its stream
 * report the shards we own, each only while elector_is_leader says so.
 *
 * In run mode a shard we are to let go (handed over, or no longer
 * wanted) is first taken from the command: it leaves /shards and
 * LEADERD_SHARDS, the command is restarted or told (SIGHUP), and only
 * once the actions layer says no command may still work on it
 * (actions_var_taken) is the handover or release fed to its elector.
 * Until then we keep holding and renewing it.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kube.h"
#include "api/lock.h"
#include "api/watch.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "codec/lease.h"
#include "config/config.h"
#include "core/elector.h"
#include "core/gate.h"
#include "core/shard.h"
#include "daemon/daemon_int.h"
#include "server/httpd.h"
#include "server/localapi.h"

#define PLAN_MS		250	/* re-plan at least this often */
#define LABEL_GROUP	"leaderd.io/shard-group"
#define LABEL_MEMBER	"leaderd.io/shard-member"

/* A member Lease of the group as the list showed it. */
struct member {
	char		 name[LEASE_HOLDER_MAX + 16];	/* the Lease's */
	char		 holder[LEASE_HOLDER_MAX];	/* its holder */
	char		 rv[LEASE_RV_MAX];	/* the version seen */
	uint64_t	 seen_ms;	/* when that version was first seen */
	uint64_t	 dur_ms;	/* its leaseDurationSeconds */
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
	int			 list_ok;	/* the last list answered */
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
	unsigned char		*letgo;		/* run mode: held, being taken
						   from the command first */
};

static void	plan_soon(struct shards *);
static void	list_now(struct shards *);
static void	list_later(struct shards *);
static void	check_watch(struct shards *, uint64_t);

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

static struct election *
shard_el(const struct shards *sh, unsigned s)
{
	return &sh->d->el[1 + s];
}

/* Whether member slot k is live at now_ms by our clock. */
static int
member_live(const struct shards *sh, const struct member *k, uint64_t now_ms)
{
	uint64_t	 dur = sh->d->conf->lease_duration_ms;

	if (k->holder[0] == '\0')
		return 0;
	if (k->dur_ms > dur)
		dur = k->dur_ms;
	return now_ms < k->seen_ms + dur;
}

/* Whether we hold our own member Lease now. */
static int
self_member(const struct shards *sh, uint64_t now_ms)
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
static unsigned
live_members(const struct shards *sh, uint64_t now_ms, const char **out)
{
	const char	*self = sh->d->conf->identity;
	unsigned	 i, n = 0;

	for (i = 0; i < sh->nm && n < SHARD_MEMBERS_MAX - 1; i++)
		if (strcmp(sh->m[i].holder, self) != 0 &&
		    member_live(sh, &sh->m[i], now_ms))
			out[n++] = sh->m[i].holder;
	if (self_member(sh, now_ms))
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

/* Whether we hold shard s now (owned, or being let go). */
static int
held(const struct shards *sh, unsigned s, uint64_t now_ms)
{
	struct election	*e = shard_el(sh, s);

	return !sh->d->stopping && elector_is_leader(&e->el, now_ms);
}

/* Whether shard s is ours now, as /shards reports it. */
static int
owned(const struct shards *sh, unsigned s, uint64_t now_ms)
{
	return held(sh, s, now_ms) && !sh->letgo[s];
}

/* The /shards body at now_ms (index included). */
static void
shards_json(const struct shards *sh, uint64_t now_ms, struct buf *b)
{
	const char	*members[SHARD_MEMBERS_MAX];
	char		 token[LEASE_TOKEN_MAX];
	unsigned	 s, i, nm;
	int		 first = 1;

	nm = live_members(sh, now_ms, members);
	buf_add(b, "{\"group\":", 9);
	buf_json_str(b, sh->group);
	buf_printf(b, ",\"count\":%u,\"identity\":", sh->n);
	buf_json_str(b, sh->d->conf->identity);
	buf_printf(b, ",\"is_member\":%s,\"members\":[",
	    self_member(sh, now_ms) ? "true" : "false");
	for (i = 0; i < nm; i++) {
		if (i > 0)
			buf_add(b, ",", 1);
		buf_json_str(b, members[i]);
	}
	buf_add(b, "],\"owned\":[", 11);
	for (s = 0; s < sh->n; s++)
		if (owned(sh, s, now_ms)) {
			buf_printf(b, "%s%u", first ? "" : ",", s);
			first = 0;
		}
	buf_printf(b, "],\"releasing\":[");
	for (first = 1, s = 0; s < sh->n; s++)
		if (held(sh, s, now_ms) && sh->letgo[s]) {
			buf_printf(b, "%s%u", first ? "" : ",", s);
			first = 0;
		}
	buf_add(b, "],\"fencing_tokens\":{", 20);
	first = 1;
	for (s = 0; s < sh->n; s++) {
		if (!owned(sh, s, now_ms))
			continue;
		lease_fencing_token(&shard_el(sh, s)->el.observed, token,
		    sizeof(token));
		buf_printf(b, "%s\"%u\":", first ? "" : ",", s);
		buf_json_str(b, token);
		first = 0;
	}
	buf_printf(b, "},\"stopping\":%s,\"index\":%llu}",
	    sh->d->stopping ? "true" : "false",
	    (unsigned long long)sh->index);
}

/*
 * Run mode: the command's LEADERD_SHARDS, the shards owned now; a change
 * restarts it or sends it SIGHUP (shards.on_change).
 */
static void
run_var(struct shards *sh, uint64_t now_ms)
{
	struct daemon	*d = sh->d;
	struct buf	 b = { 0 };
	char		*var;
	size_t		 len;
	unsigned	 s;
	int		 first = 1;

	/* Stopping: the command is stopped anyway, not restarted. */
	if (d->cmd == NULL || d->el[0].act == NULL || d->stopping)
		return;
	buf_printf(&b, "LEADERD_SHARDS=");
	for (s = 0; s < sh->n; s++)
		if (owned(sh, s, now_ms)) {
			buf_printf(&b, "%s%u", first ? "" : ",", s);
			first = 0;
		}
	var = buf_steal(&b, &len);
	actions_set_var(d->el[0].act, var,
	    strcmp(d->conf->shards_on_change, "sighup") == 0);
	free(var);
}

/*
 * Whether what /shards says changed since it was last noted: then bump
 * the index, send the event to the streams and wake the blocking reads.
 */
static void
report(struct shards *sh, uint64_t now_ms)
{
	struct daemon	*d = sh->d;
	struct buf	 b = { 0 };
	char		*sig, *ev, *p;
	size_t		 len;

	/* The body but for its index: the state's signature. */
	shards_json(sh, now_ms, &b);
	sig = buf_steal(&b, &len);
	if ((p = strstr(sig, ",\"index\":")) != NULL)
		*p = '\0';
	if (sh->seen != NULL && strcmp(sig, sh->seen) == 0) {
		free(sig);
		return;
	}
	free(sh->seen);
	sh->seen = sig;
	sh->index++;
	run_var(sh, now_ms);
	if (d->httpd == NULL)
		return;
	buf_add(&b, "data: ", 6);
	shards_json(sh, now_ms, &b);
	buf_add(&b, "\n\n", 2);
	ev = buf_steal(&b, &len);
	httpd_stream_send_on(d->httpd, DAEMON_SHARDS_CHANNEL, ev, len);
	free(ev);
	httpd_wake(d->httpd);
}

/* Feed election e its candidacy, as the gate does (daemon_gate.c). */
static void
set_candidacy(struct election *e, int on)
{
	e->cand = on;
	e->cand_in = on;
	/* A shard let go may be taken at once by the one it is for. */
	e->cand_cooldown_ms = 0;
	daemon_step(e, ELECTOR_IN_CANDIDACY, NULL);
}

/*
 * Run mode: mark the shards we hold and are to let go (v and p: this
 * plan), out of /shards and LEADERD_SHARDS, and push the command's new
 * value.  Returns whether no command may still work on any of them
 * (always, outside run mode): only then may they be handed over or
 * released.
 */
static int
let_go(struct shards *sh, const struct shard_view *v,
    const struct shard_plan *p, uint64_t now_ms)
{
	struct daemon	*d = sh->d;
	unsigned	 s;
	int		 go, changed = 0;

	if (d->cmd == NULL || d->el[0].act == NULL)
		return 1;
	for (s = 0; s < sh->n; s++) {
		go = v[s].mine && ((int)s == p->release || !p->want[s]);
		if (go != sh->letgo[s]) {
			if (go)
				log_info("shard group %s: shard %u out of the "
				    "command's shards before it is %s",
				    sh->group, s, (int)s == p->release ?
				    "handed over" : "released");
			sh->letgo[s] = (unsigned char)go;
			changed = 1;
		}
	}
	if (changed)
		run_var(sh, now_ms);
	return actions_var_taken(d->el[0].act);
}

/* Run the planner and feed each shard elector what it says. */
static void
plan(struct shards *sh)
{
	static struct shard_view v[SHARD_COUNT_MAX];
	struct daemon		*d = sh->d;
	const char		*members[SHARD_MEMBERS_MAX];
	const char		*self = d->conf->identity;
	struct shard_plan	 p;
	struct election		*e;
	const struct elector	*el;
	uint64_t		 now_ms = clock_mono_ms();
	unsigned		 nm, s;
	int			 live, want, taken;

	if (d->stopping)
		return;
	/*
	 * The watch goes on from a list's version and delivers in order:
	 * once it has delivered the version of our member Lease we hold, we
	 * have seen every member Lease written before ours, as a list
	 * answered now would show them.  A member that joined just after
	 * its first list need not wait a retry_period for the next one to
	 * take a free shard (one a leaver released).
	 */
	if (!sh->listed && sh->own_rv[0] != '\0' &&
	    self_member(sh, now_ms) && d->el[0].el.observed.rv[0] != '\0' &&
	    !watch_rv_newer(d->el[0].el.observed.rv, sh->own_rv))
		sh->listed = 1;
	nm = live_members(sh, now_ms, members);
	for (s = 0; s < sh->n; s++) {
		el = &shard_el(sh, s)->el;
		memset(&v[s], 0, sizeof(v[s]));
		live = el->have_observed && el->observed.holder[0] != '\0' &&
		    now_ms < elector_expires_ms(el);
		v[s].mine = elector_is_leader(el, now_ms);
		v[s].releasing = el->stepdown && el->ours;
		v[s].ours = live && el->ours && !v[s].mine && !v[s].releasing;
		v[s].holder = live ? el->observed.holder : NULL;
		v[s].handed = live && !v[s].mine &&
		    strcmp(el->observed.holder, self) == 0 &&
		    strcmp(el->observed.handover, self) == 0 && !el->ours;
	}
	if (shard_plan(sh->group, sh->n, self, members, nm, v, &p) == -1) {
		log_warnx("shard group %s: cannot plan (%u members)",
		    sh->group, nm);
		return;
	}
	/*
	 * Until a list has shown us the others, we would think ourselves
	 * alone and take every free shard: hold back (keep what we hold).
	 */
	if (!sh->listed)
		p.release = -1;
	for (s = 0; s < sh->n; s++) {
		/* Paused, unhealthy, without a client: no shard at all. */
		if (d->reason != GATE_OK)
			p.want[s] = 0;
		if (!sh->listed && !v[s].mine && !v[s].handed && !v[s].ours)
			p.want[s] = 0;
	}
	/* Run mode: the command lets go of a shard before we do. */
	taken = let_go(sh, v, &p, now_ms);
	if (p.release >= 0 && taken) {
		e = shard_el(sh, (unsigned)p.release);
		log_info("shard group %s: handing shard %d over to %s (%u "
		    "members, quota %u, holding %u)", sh->group, p.release,
		    members[p.release_to], nm, p.quota, p.held);
		snprintf(e->handover_to, sizeof(e->handover_to), "%s",
		    members[p.release_to]);
		sh->moves++;
		daemon_step(e, ELECTOR_IN_HANDOVER, NULL);
		set_candidacy(e, 0);
	}
	for (s = 0; s < sh->n; s++) {
		e = shard_el(sh, s);
		want = p.want[s];
		/* Held until the command has let go (let_go). */
		if (sh->letgo[s] && !taken)
			want = 1;
		if (want != e->cand && !d->stopping)
			set_candidacy(e, want);
	}
}

/* The next plan: soon, at a claim's end, or a member's expiry. */
static void
arm_plan(struct shards *sh, uint64_t now_ms)
{
	struct daemon	*d = sh->d;
	uint64_t	 at = now_ms + PLAN_MS, t, dur;
	unsigned	 s, i;

	for (s = 0; s < sh->n; s++) {
		const struct elector *el = &shard_el(sh, s)->el;

		if (elector_is_leader(el, now_ms) &&
		    el->lead_until_ms < at)
			at = el->lead_until_ms;
	}
	for (i = 0; i < sh->nm; i++) {
		dur = d->conf->lease_duration_ms;
		if (sh->m[i].dur_ms > dur)
			dur = sh->m[i].dur_ms;
		t = sh->m[i].seen_ms + dur;
		if (t > now_ms && t < at)
			at = t;
	}
	ev_timer_stop(d->loop, &sh->plan_timer);
	ev_now_update(d->loop);
	ev_timer_set(&sh->plan_timer, clock_timer_seconds(at > now_ms ?
	    at - now_ms : 0), 0.);
	ev_timer_start(d->loop, &sh->plan_timer);
}

static void
plan_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct shards	*sh = w->data;
	uint64_t	 now_ms;

	(void)loop;
	(void)revents;
	check_watch(sh, clock_mono_ms());
	plan(sh);
	now_ms = clock_mono_ms();
	report(sh, now_ms);
	if (!sh->d->stopping)
		arm_plan(sh, now_ms);
}

/* Plan from the loop, at once: never inside an elector's step. */
static void
plan_soon(struct shards *sh)
{
	struct daemon	*d = sh->d;

	if (d->stopping && sh->index != 0) {
		/* Only the report: what we own is nothing now. */
		report(sh, clock_mono_ms());
		return;
	}
	ev_timer_stop(d->loop, &sh->plan_timer);
	ev_timer_set(&sh->plan_timer, 0., 0.);
	ev_timer_start(d->loop, &sh->plan_timer);
}

/* Run mode: the command may have let go of a shard; plan again. */
static void
var_taken_cb(void *arg)
{
	plan_soon(arg);
}

void
daemon_shards_changed(struct daemon *d)
{
	if (d->sh != NULL)
		plan_soon(d->sh);
}

/* One item of the list: a member Lease noted, a shard's record fed. */
static void
list_item(const char *name, const struct lease *rec, char *obj, void *arg)
{
	struct shards	*sh = arg;
	struct election	*e;
	struct member	*k = NULL;
	unsigned	 s, i;

	if (strncmp(name, sh->mprefix, strlen(sh->mprefix)) == 0) {
		free(obj);
		for (i = 0; i < sh->nm; i++)
			if (strcmp(sh->m[i].name, name) == 0) {
				k = &sh->m[i];
				break;
			}
		if (k == NULL) {
			if (sh->nm == SHARD_MEMBERS_MAX)
				return;
			k = &sh->m[sh->nm++];
			memset(k, 0, sizeof(*k));
			snprintf(k->name, sizeof(k->name), "%s", name);
		}
		k->gen = sh->gen;
		/* A list from the cache may be older than one seen. */
		if (k->rv[0] != '\0' && !watch_rv_newer(rec->rv, k->rv))
			return;
		/* A new version: live for its duration from now. */
		snprintf(k->rv, sizeof(k->rv), "%s", rec->rv);
		snprintf(k->holder, sizeof(k->holder), "%s", rec->holder);
		k->seen_ms = clock_mono_ms();
		k->dur_ms = rec->duration_s > 0 ?
		    (uint64_t)rec->duration_s * 1000 : 0;
		return;
	}
	if (!shard_of(sh, name, &s)) {
		free(obj);
		return;
	}
	e = shard_el(sh, s);
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
static void
check_watch(struct shards *sh, uint64_t now_ms)
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
			list_now(sh);
		}
	}
	fed = sh->list_ok || fresh;
	if (fed != sh->fed) {
		sh->fed = fed;
		for (i = 0; i < sh->n; i++)
			daemon_watch_health_cb(fed, shard_el(sh, i));
	}
}

static void	list_item(const char *, const struct lease *, char *, void *);

/* The group's watch: a Lease changed (obj) or was deleted (obj NULL). */
static void
watch_item_cb(const char *name, const struct lease *rec, char *obj,
    void *arg)
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
	    shard_el(sh, s)->el.state != ELECTOR_STOPPED)
		/* A shard deleted: its elector reads it, as on one watch. */
		daemon_watch_reread_cb(shard_el(sh, s));
	check_watch(sh, sh->item_ms);
	plan_soon(sh);
}

/* 410 Gone: list again; the watch resumes from the list's version. */
static void
watch_reread_cb(void *arg)
{
	list_now(arg);
}

static void
watch_health_cb(int healthy, void *arg)
{
	struct shards	*sh = arg;

	/* Counted as delivering from the moment it opens. */
	if (healthy)
		sh->item_ms = clock_mono_ms();
	check_watch(sh, clock_mono_ms());
}

static void
list_done_cb(const struct kube_result *res, void *arg)
{
	struct shards	*sh = arg;
	struct daemon	*d = sh->d;
	char		 rv[LEASE_RV_MAX], err[256];
	unsigned	 i, k;
	int		 ok, was_member;

	if (d->stopping)
		return;
	was_member = self_member(sh, clock_mono_ms());
	ok = res->outcome == KUBE_OK;
	if (ok) {
		/*
		 * Not a flag cleared first: feeding a shard's record answers
		 * blocking reads, which must see the members as they were.
		 */
		sh->gen++;
		if (lease_list_decode(res->body, res->len, list_item, sh, rv,
		    sizeof(rv), err, sizeof(err)) == -1) {
			log_warnx("shard group %s: the list of its Leases: %s",
			    sh->group, err);
			ok = 0;
		}
		/*
		 * Leases deleted, or gone from a whole list, are forgotten,
		 * but for one the watch showed newer than the list (the list
		 * comes from the API server's cache).
		 */
		for (i = k = 0; ok && i < sh->nm; i++)
			if (sh->m[i].gen == sh->gen ||
			    watch_rv_newer(sh->m[i].rv, rv))
				sh->m[k++] = sh->m[i];
		if (ok)
			sh->nm = k;
	} else {
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
	if (ok && was_member)
		sh->listed = 1;
	/* The watch goes on from the list's version. */
	if (ok && sh->watch != NULL && rv[0] != '\0') {
		if (!sh->watch_started) {
			sh->watch_started = 1;
			watch_start(sh->watch, rv);
		} else
			watch_seen(sh->watch, rv);
	}
	/* The list and the watch stand in for the shard electors' own. */
	sh->list_ok = ok;
	check_watch(sh, clock_mono_ms());
	list_later(sh);
	plan_soon(sh);
}

static void
list_now(struct shards *sh)
{
	struct daemon	*d = sh->d;

	if (d->stopping || kube_busy(sh->list))
		return;
	if (kube_lease_list(sh->list, d->conf->lock_namespace, sh->selector,
	    d->conf->request_timeout_ms, list_done_cb, sh) == -1) {
		log_warnx("shard group %s: cannot start the list", sh->group);
		list_later(sh);
	}
}

static void
list_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	list_now(w->data);
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

int
daemon_shards_init(struct daemon *d)
{
	const struct config	*c = d->conf;
	struct shards		*sh;

	if (!config_shards_on(c))
		return 0;
	sh = xcalloc(1, sizeof(*sh));
	sh->d = d;
	sh->group = c->shards_group;
	sh->n = (unsigned)c->shards_count;
	snprintf(sh->prefix, sizeof(sh->prefix), "%s-", sh->group);
	snprintf(sh->mprefix, sizeof(sh->mprefix), "%s-member-", sh->group);
	snprintf(sh->selector, sizeof(sh->selector), LABEL_GROUP "=%s",
	    sh->group);
	sh->labels[0] = LABEL_GROUP;
	sh->labels[1] = sh->group;
	sh->mlabels[0] = LABEL_GROUP;
	sh->mlabels[1] = sh->group;
	sh->mlabels[2] = LABEL_MEMBER;
	sh->mlabels[3] = "true";
	sh->m = xcalloc(SHARD_MEMBERS_MAX, sizeof(*sh->m));
	sh->letgo = xcalloc(sh->n, 1);
	ev_init(&sh->list_timer, list_timer_cb);
	sh->list_timer.data = sh;
	ev_init(&sh->plan_timer, plan_timer_cb);
	sh->plan_timer.data = sh;
	d->sh = sh;
	d->nel = 1 + (int)sh->n;
	return 0;
}

void
daemon_shards_conf(struct daemon *d, int i, struct config *out)
{
	/* Every shard is the group's Lease GROUP-s, with the durations. */
	memcpy(out, d->conf, offsetof(struct config, nelections));
	out->nelections = 0;
	snprintf(out->lock_name, sizeof(out->lock_name), "%s-%d",
	    d->sh->group, i - 1);
	out->watch = 0;
}

void
daemon_shards_labels(struct election *e)
{
	struct shards	*sh = e->d->sh;

	lock_set_labels(e->lk, e->idx == 0 ? sh->mlabels : sh->labels);
}

int
daemon_shards_setup(struct daemon *d, const struct kube_creds *creds,
    const char *ua)
{
	struct shards	*sh = d->sh;
	char		 err[512];

	if ((sh->list = kube_new(d->cv, creds, d->token, ua, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	kube_set_observer(sh->list, daemon_api_observe_cb, d);
	if (d->conf->watch) {
		struct watch_cbs	 cbs = { NULL, watch_reread_cb,
					    watch_health_cb, watch_item_cb };
		struct kube		*wk;

		if ((wk = kube_new(d->cv, creds, d->token, ua, err,
		    sizeof(err))) == NULL) {
			log_warnx("%s", err);
			return -1;
		}
		kube_set_observer(wk, daemon_api_observe_cb, d);
		sh->watch = watch_new_labels(d->loop, wk,
		    d->conf->lock_namespace, sh->selector,
		    d->conf->watch_timeout_ms, d->conf->request_timeout_ms,
		    &cbs, sh);
	}
	/* Run mode: the command starts owning nothing. */
	if (d->cmd != NULL && d->el[0].act != NULL) {
		actions_set_var(d->el[0].act, "LEADERD_SHARDS=", 0);
		actions_set_var_cb(d->el[0].act, var_taken_cb, sh);
	}
	return 0;
}

void
daemon_shards_start(struct daemon *d)
{
	struct shards	*sh = d->sh;
	unsigned	 s;

	log_info("shard group %s: %u shards %s-0 .. %s-%u, member Lease %s "
	    "in namespace %s", sh->group, sh->n, sh->group, sh->group,
	    sh->n - 1, d->conf->lock_name, d->conf->lock_namespace);
	/* The shards wait for the plan; the member Lease is ours alone. */
	for (s = 0; s < sh->n && !d->stopping; s++)
		set_candidacy(shard_el(sh, s), 0);
	list_now(sh);
}

/* The member Lease's delete is answered (or failed): the loop ends. */
static void
delete_done_cb(const struct kube_result *res, void *arg)
{
	struct shards	*sh = arg;

	if (res->outcome == KUBE_OK || res->outcome == KUBE_NOTFOUND)
		log_info("shard group %s: member Lease %s deleted", sh->group,
		    sh->d->conf->lock_name);
	else
		log_warnx("shard group %s: member Lease %s not deleted "
		    "(%ld %s: %s); it stays released", sh->group,
		    sh->d->conf->lock_name, res->status, res->reason,
		    res->message);
	ev_break(sh->d->loop, EVBREAK_ALL);
}

int
daemon_shards_stopped(struct daemon *d)
{
	struct shards	*sh = d->sh;
	struct election	*e = &d->el[0];
	uint64_t	 now_ms = clock_mono_ms(), t;

	if (sh == NULL)
		return 0;
	if (sh->deleting)
		return 1;
	ev_timer_stop(d->loop, &sh->list_timer);
	ev_timer_stop(d->loop, &sh->plan_timer);
	report(sh, now_ms);
	/* Only the member Lease we released: over its version. */
	if (!e->released || e->el.observed.rv[0] == '\0' ||
	    now_ms >= d->stop_until_ms)
		return 0;
	kube_cancel(sh->list);
	t = d->stop_until_ms - now_ms;
	if (t > d->conf->request_timeout_ms)
		t = d->conf->request_timeout_ms;
	if (kube_lease_delete(sh->list, d->conf->lock_namespace,
	    d->conf->lock_name, e->el.observed.rv, t, delete_done_cb,
	    sh) == -1)
		return 0;
	sh->deleting = 1;
	return 1;
}

void
daemon_shards_stopping(struct daemon *d)
{
	struct shards	*sh = d->sh;

	if (sh == NULL)
		return;
	ev_timer_stop(d->loop, &sh->list_timer);
	ev_timer_stop(d->loop, &sh->plan_timer);
	if (!sh->deleting)
		kube_cancel(sh->list);
	report(sh, clock_mono_ms());
}

void
daemon_shards_free(struct daemon *d)
{
	struct shards	*sh = d->sh;

	if (sh == NULL)
		return;
	ev_timer_stop(d->loop, &sh->list_timer);
	ev_timer_stop(d->loop, &sh->plan_timer);
	if (sh->list != NULL)
		kube_free(sh->list);
	watch_free(sh->watch);
	free(sh->m);
	free(sh->letgo);
	free(sh->seen);
	free(sh);
	d->sh = NULL;
}

/* GET /shards, blocking with wait and index as /leader. */
static void
reply_shards(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	struct shards	*sh = arg;
	struct buf	 b = { 0 };
	uint64_t	 wait_ms, index;
	char		 err[256];
	int		 blocking;

	if (localapi_parse_wait(req->query, &blocking, &wait_ms, &index, err,
	    sizeof(err)) == -1) {
		buf_add(&b, "{\"error\":", 9);
		buf_printf(&b, "\"%s; write e.g. /shards?wait=30s&index=7\"",
		    err);
		buf_printf(&b, ",\"status\":400}\n");
		reply->status = 400;
		reply->content_type = "application/json";
		reply->body = buf_steal(&b, &reply->len);
		return;
	}
	/*
	 * No report() here (httpd is in the middle of its work): a change
	 * by time alone is noted by the plan timer, armed at each claim's
	 * end, which bumps the index and wakes this read.
	 */
	if (blocking && index == sh->index && !reply->wait_over &&
	    wait_ms > 0) {
		reply->mode = HTTPD_REPLY_WAIT;
		reply->wait_ms = wait_ms;
		return;
	}
	snprintf(reply->headers, sizeof(reply->headers),
	    "X-Leaderd-Index: %llu\r\n", (unsigned long long)sh->index);
	shards_json(sh, reply->now_ms, &b);
	buf_add(&b, "\n", 1);
	reply->status = 200;
	reply->content_type = "application/json";
	reply->body = buf_steal(&b, &reply->len);
}

/* GET /shards/watch: an event now and on every change. */
static void
reply_shards_watch(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	struct shards	*sh = arg;
	struct buf	 b = { 0 };

	(void)req;
	reply->status = 200;
	reply->content_type = "text/event-stream";
	reply->mode = HTTPD_REPLY_STREAM;
	reply->ping = LOCALAPI_PING;
	reply->channel = DAEMON_SHARDS_CHANNEL;
	snprintf(reply->headers, sizeof(reply->headers),
	    "X-Leaderd-Index: %llu\r\n", (unsigned long long)sh->index);
	buf_add(&b, "data: ", 6);
	shards_json(sh, reply->now_ms, &b);
	buf_add(&b, "\n\n", 2);
	reply->body = buf_steal(&b, &reply->len);
}

struct httpd_route *
daemon_shards_routes(struct daemon *d, struct httpd_route *t)
{
	size_t	 n = 0;

	if (d->sh == NULL)
		return t;
	while (t[n].path != NULL)
		n++;
	t = xrealloc(t, (n + 3) * sizeof(*t));
	t[n++] = (struct httpd_route){ "/shards", "GET, HEAD", 0, 0, NULL,
	    reply_shards, d->sh };
	t[n++] = (struct httpd_route){ "/shards/watch", "GET, HEAD", 0, 0,
	    NULL, reply_shards_watch, d->sh };
	memset(&t[n], 0, sizeof(t[n]));
	return t;
}

void
daemon_shards_metrics(const struct daemon *d, uint64_t now_ms,
    struct buf *b)
{
	const struct shards	*sh = d->sh;
	const char		*members[SHARD_MEMBERS_MAX];
	unsigned		 s, n = 0;

	if (sh == NULL)
		return;
	for (s = 0; s < sh->n; s++)
		n += owned(sh, s, now_ms) ? 1 : 0;
	buf_printf(b, "# HELP leaderd_shards_owned Shards of the group this "
	    "instance owns now.\n# TYPE leaderd_shards_owned gauge\n"
	    "leaderd_shards_owned{group=\"%s\"} %u\n", sh->group, n);
	buf_printf(b, "# HELP leaderd_shard_members Live members of the "
	    "group as this instance sees them.\n# TYPE "
	    "leaderd_shard_members gauge\nleaderd_shard_members{group=\"%s\"} "
	    "%u\n", sh->group, live_members(sh, now_ms, members));
	buf_printf(b, "# HELP leaderd_shard_handovers_total Shards this "
	    "instance handed to another member to balance the group.\n"
	    "# TYPE leaderd_shard_handovers_total counter\n"
	    "leaderd_shard_handovers_total{group=\"%s\"} %u\n", sh->group,
	    sh->moves);
}
