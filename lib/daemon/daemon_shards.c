/*
 * daemon_shards.c -- a shard group in the daemon (docs/shards.md): its
 * life and the planner's driver.  The first election is the member Lease
 * GROUP-member-IDENTITY, which we alone compete for; elections 1..N are
 * the shard Leases GROUP-0 .. GROUP-(N-1), each a normal elector whose
 * candidacy the planner (core/shard.c) turns on or off, and one of which
 * it may hand to a named member (ELECTOR_IN_HANDOVER).  Who the members
 * are, from the list and the watch of the group's Leases, is
 * daemon_shards_members.c's; what the group shows (GET /shards, its
 * stream, LEADERD_SHARDS, the gauges) is daemon_shards_http.c's.
 *
 * The planner runs after every step of a group election (from the loop,
 * not inside the step) and at least every PLAN_MS, at the end of any of
 * our claims and at any member's expiry.
 *
 * In run mode a shard we are to let go (handed over, or no longer
 * wanted) is first taken from the command: it leaves /shards and
 * LEADERD_SHARDS, the command is restarted or told (SIGHUP), and only
 * once the actions layer says no command may still work on it
 * (actions_var_taken) is the handover or release fed to its elector.
 * Until then we keep holding and renewing it.  On exit the member Lease
 * we released is deleted.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kube.h"
#include "api/lock.h"
#include "api/watch.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "codec/lease.h"
#include "config/config.h"
#include "core/elector.h"
#include "core/gate.h"
#include "core/shard.h"
#include "daemon/daemon_int.h"
#include "daemon/daemon_shards_int.h"

#define PLAN_MS		250	/* re-plan at least this often */
#define LABEL_GROUP	"leaderd.io/shard-group"
#define LABEL_MEMBER	"leaderd.io/shard-member"

struct election *
daemon_shards_el(const struct shards *sh, unsigned s)
{
	return &sh->d->el[1 + s];
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
		daemon_shards_run_var(sh, now_ms);
	return actions_var_taken(d->el[0].act);
}

/*
 * Whether a free shard (no live holder) may be claimed now.  Claims are
 * paced to our quota per retry_period, one at a time with one saved:
 * when every shard's Lease expired together (the API server was down
 * longer than the lease), the group claims them back at the rate it
 * renews them, not all in the same second.  A shard we hold, or one
 * handed to us, is never held back, nor is letting go of one.
 */
static int
claim_due(struct shards *sh, unsigned quota, uint64_t now_ms)
{
	uint64_t	 gap;

	gap = sh->d->conf->retry_period_ms / (quota > 0 ? quota : 1);
	if (sh->claim_ms + gap < now_ms)
		sh->claim_ms = now_ms - gap;
	if (sh->claim_ms > now_ms)
		return 0;
	sh->claim_ms += gap;
	return 1;
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
	int			 live, want, taken, ready;

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
	    daemon_shards_self_member(sh, now_ms) &&
	    d->el[0].el.observed.rv[0] != '\0' &&
	    !watch_rv_newer(d->el[0].el.observed.rv, sh->own_rv))
		sh->listed = 1;
	nm = daemon_shards_live_members(sh, now_ms, members);
	for (s = 0; s < sh->n; s++) {
		el = &daemon_shards_el(sh, s)->el;
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
	 * Until a list has shown us the others, and they had the time to
	 * show themselves renewing (they count only then), we would think
	 * ourselves alone and take every free shard: hold back (keep what we
	 * hold, take what is handed to us).
	 */
	ready = sh->listed && daemon_shards_looked(sh, now_ms);
	if (!ready)
		p.release = -1;
	for (s = 0; s < sh->n; s++) {
		/* Paused, unhealthy, without a client: no shard at all. */
		if (d->reason != GATE_OK)
			p.want[s] = 0;
		if (!ready && !v[s].mine && !v[s].handed && !v[s].ours)
			p.want[s] = 0;
	}
	/* Run mode: the command lets go of a shard before we do. */
	taken = let_go(sh, v, &p, now_ms);
	if (p.release >= 0 && taken) {
		e = daemon_shards_el(sh, (unsigned)p.release);
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
		e = daemon_shards_el(sh, s);
		want = p.want[s];
		/* Held until the command has let go (let_go). */
		if (sh->letgo[s] && !taken)
			want = 1;
		if (want == e->cand || d->stopping)
			continue;
		/* A free shard waits its turn (the next plan: PLAN_MS). */
		if (want && v[s].holder == NULL && !v[s].mine &&
		    !claim_due(sh, p.quota, now_ms))
			continue;
		set_candidacy(e, want);
	}
}

/* The next plan: soon, at a claim's end, or a member's expiry. */
static void
arm_plan(struct shards *sh, uint64_t now_ms)
{
	struct daemon	*d = sh->d;
	uint64_t	 at = now_ms + PLAN_MS, t;
	unsigned	 s, i;

	for (s = 0; s < sh->n; s++) {
		const struct elector *el = &daemon_shards_el(sh, s)->el;

		if (elector_is_leader(el, now_ms) &&
		    el->lead_until_ms < at)
			at = el->lead_until_ms;
	}
	for (i = 0; i < sh->nm; i++) {
		t = sh->m[i].seen_ms + d->conf->lease_duration_ms;
		if (t > now_ms && t < at)
			at = t;
	}
	t = sh->look_ms + d->conf->renew_deadline_ms;
	if (sh->look_ms != 0 && t > now_ms && t < at)
		at = t;
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
	daemon_shards_check_watch(sh, clock_mono_ms());
	plan(sh);
	now_ms = clock_mono_ms();
	daemon_shards_report(sh, now_ms);
	daemon_shards_note_unconfirmed(sh, now_ms);
	if (!sh->d->stopping)
		arm_plan(sh, now_ms);
}

/* Plan from the loop, at once: never inside an elector's step. */
void
daemon_shards_plan_soon(struct shards *sh)
{
	struct daemon	*d = sh->d;

	if (d->stopping && sh->index != 0) {
		/* Only the report: what we own is nothing now. */
		daemon_shards_report(sh, clock_mono_ms());
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
	daemon_shards_plan_soon(arg);
}

void
daemon_shards_changed(struct daemon *d)
{
	if (d->sh != NULL)
		daemon_shards_plan_soon(d->sh);
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
	ev_init(&sh->list_timer, daemon_shards_list_timer_cb);
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
		struct watch_cbs	 cbs = { NULL,
					    daemon_shards_watch_reread_cb,
					    daemon_shards_watch_health_cb,
					    daemon_shards_watch_item_cb };
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
		set_candidacy(daemon_shards_el(sh, s), 0);
	daemon_shards_list_now(sh);
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
	daemon_shards_report(sh, now_ms);
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
	daemon_shards_report(sh, clock_mono_ms());
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
