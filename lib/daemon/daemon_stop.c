/*
 * daemon_stop.c -- the stop: SIGTERM and SIGINT (a second one exits at
 * once; SIGHUP is ignored), or the command's exit with run.restart never.
 * The actions stop first, then every election releases, or hands over
 * (handover: auto), side by side within one shutdown budget; the hard
 * stop ends the loop when the budget is spent.
 */

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ev.h>

#include "actions/actions.h"
#include "base/clock.h"
#include "base/log.h"
#include "config/config.h"
#include "core/elector.h"
#include "daemon/daemon_int.h"

static void	stop_daemon(struct daemon *, const char *);

/*
 * The stop's budget ran out with our release unwritten: said once.
 * Whether anyone takes over then is not ours to promise (their Role may
 * refuse them as it refused us): the lease stays ours until it expires.
 */
void
daemon_say_unreleased(struct election *e)
{
	if (e->unreleased_said)
		return;
	e->unreleased_said = 1;
	log_warnx("lease %s: shutdown_timeout spent; the release was not "
	    "written: the lease stays ours until it expires, lease_duration "
	    "after our last renew", e->lock);
}

/* The shutdown budget is spent: say what did not finish, and exit. */
void
daemon_hard_stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon	*d = w->data;
	struct election	*e;
	const char	*what;
	int		 i;

	(void)revents;
	for (i = 0; i < d->nel; i++) {
		e = &d->el[i];
		if (e->act != NULL &&
		    (what = actions_unfinished(e->act)) != NULL)
			log_warnx("lease %s: shutdown_timeout spent: %s",
			    e->lock, what);
		if (!e->released && e->el.state != ELECTOR_STOPPED)
			daemon_say_unreleased(e);
	}
	log_warnx("lease %s: exiting without waiting for the API server",
	    d->el[0].lock);
	ev_break(loop, EVBREAK_ALL);
}

void
daemon_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct daemon	*d = w->data;

	(void)revents;
	if (w->signum == SIGHUP) {
		log_info("SIGHUP ignored; restart leaderd to change its "
		    "configuration");
		return;
	}
	if (d->stopping) {
		log_warnx("second signal; exiting now");
		ev_break(loop, EVBREAK_ALL);
		return;
	}
	stop_daemon(d, w->signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

/*
 * handover: auto, for the first election: hand the lease to the live
 * candidate the controller would pick (coordinated), and the STOP that
 * follows sends it; else the STOP releases as usual.
 */
static void
stop_handover(struct election *e)
{
	struct daemon	*d = e->d;
	const char	*to;

	if (e->idx != 0 || strcmp(d->conf->handover, "auto") != 0 ||
	    !elector_is_leader(&e->el, clock_mono_ms()))
		return;
	if ((to = d->auto_to[0] != '\0' ? d->auto_to : NULL) == NULL) {
		log_info("lease %s: handover auto: no live candidate known; "
		    "releasing", e->lock);
		return;
	}
	log_info("lease %s: handover auto: handing the lease to %s", e->lock,
	    to);
	snprintf(e->handover_to, sizeof(e->handover_to), "%s", to);
	daemon_step(e, ELECTOR_IN_HANDOVER, NULL);
}

/* The actions are stopped (command gone, label standby): release. */
static void
actions_stopped_cb(void *arg)
{
	struct election	*e = arg;
	struct daemon	*d = e->d;
	int		 i;

	stop_handover(e);
	daemon_step(e, ELECTOR_IN_STOP, NULL);
	/* Run mode in a shard group: the shards once the command is gone. */
	if (d->sh != NULL && e->idx == 0)
		for (i = 1; i < d->nel; i++)
			daemon_step(&d->el[i], ELECTOR_IN_STOP, NULL);
}

/* The command ended leaderd (run.restart never): stop as on SIGTERM. */
void
daemon_command_quit_cb(void *arg)
{
	struct daemon	*d = arg;

	if (!d->stopping)
		stop_daemon(d, "the command exited");
}

/*
 * Stop: the actions first (the command must be gone before the lease is
 * released), then the elector's release, which abandons a request in
 * flight and retries until the budget is spent; all bounded by the hard
 * stop, shutdown_timeout from now (config_stop_budget_ms, the budget
 * `leaderd -n -v` prints).
 */
static void
stop_daemon(struct daemon *d, const char *why)
{
	double		 t;
	uint64_t	 budget;
	int		 i;

	d->stopping = 1;
	/* is_leader is false from now on, even while the actions stop. */
	for (i = 0; i < d->nel; i++) {
		d->el[i].st.stopping = 1;
		daemon_notify_local(&d->el[i]);
	}
	daemon_shards_stopping(d);
	log_info("%s: stopping", why);
	/* One budget for all: the elections stop side by side. */
	budget = config_stop_budget_ms(d->conf, d->cmd != NULL);
	d->stop_until_ms = clock_mono_ms() + budget;
	ev_now_update(d->loop);
	t = clock_timer_seconds(budget);
	ev_timer_init(&d->hard_stop, daemon_hard_stop_cb, t, 0.);
	d->hard_stop.data = d;
	ev_timer_start(d->loop, &d->hard_stop);
	/* The successor is chosen before our candidate goes. */
	d->auto_to[0] = '\0';
	if (daemon_cand_pick(d) != NULL)
		snprintf(d->auto_to, sizeof(d->auto_to), "%s",
		    daemon_cand_pick(d));
	daemon_cand_stop(d, d->stop_until_ms);
	for (i = 0; i < d->nel; i++) {
		if (d->el[i].act != NULL)
			actions_shutdown(d->el[i].act, actions_stopped_cb,
			    &d->el[i]);
		else if (d->sh != NULL && i > 0 && d->el[0].act != NULL)
			continue;	/* after the command (actions_stopped_cb) */
		else {
			stop_handover(&d->el[i]);
			daemon_step(&d->el[i], ELECTOR_IN_STOP, NULL);
		}
	}
}
