/*
 * actions_run.c -- the run mode's command as the claim drives it: its
 * start with the LEADERD_* variables, its exit and restart (run.restart),
 * the hold (actions_hold), and whether it has taken its latest
 * LEADERD_SHARDS (restarted, or run.grace after SIGHUP).  The claim
 * itself, the label, the endpoints and the shutdown are in actions.c
 * (actions_int.h).
 */

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "actions/actions.h"
#include "actions/actions_int.h"
#include "actions/child.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "config/config.h"

/* The command held back is gone: say so, once. */
static void
hold_check(struct actions *a)
{
	void	(*cb)(void *) = a->hold_cb;

	if (!a->held || cb == NULL ||
	    (a->child != NULL && child_active(a->child)))
		return;
	a->hold_cb = NULL;
	cb(a->hold_arg);
}

void
actions_start_command(struct actions *a)
{
	char	*env[5], err[256];

	if (a->child == NULL || a->shutting || a->held || !a->leading ||
	    child_active(a->child) || ev_is_active(&a->restart))
		return;
	/* k8s-await-election starts it once the endpoints name us. */
	if (a->await && actions_has_endpoints(a) && !a->ep_named)
		return;
	snprintf(a->env[0], sizeof(a->env[0]), "LEADERD_IDENTITY=%s",
	    a->conf->identity);
	snprintf(a->env[1], sizeof(a->env[1]), "LEADERD_FENCING_TOKEN=%s",
	    a->token);
	snprintf(a->env[2], sizeof(a->env[2]), "LEADERD_LEASE=%s/%s",
	    a->conf->lock_namespace, a->conf->lock_name);
	env[0] = a->env[0];
	env[1] = a->env[1];
	env[2] = a->env[2];
	env[3] = a->var;
	env[4] = NULL;
	if (child_start(a->child, env, err, sizeof(err)) == -1) {
		log_warnx("cannot start the command: %s", err);
		ev_now_update(a->loop);
		ev_timer_set(&a->restart, clock_timer_seconds(a->restart_ms),
		    0.);
		ev_timer_start(a->loop, &a->restart);
		return;
	}
	a->started_ms = clock_mono_ms();
	a->cmd_gen = a->var_gen;
	ev_timer_stop(a->loop, &a->hup);
	log_info("started the command (pid %ld, fencing token %s)",
	    (long)child_pid(a->child), a->token);
}

void
actions_restart_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct actions	*a = w->data;

	(void)loop;
	(void)revents;
	actions_start_command(a);
}

/* Tell the daemon that the var may have been taken (from the loop). */
static void
var_notify(struct actions *a)
{
	if (a->var_cb != NULL)
		a->var_cb(a->var_arg);
}

/* run.grace since the SIGHUP: the command has the var it was told of. */
void
actions_hup_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct actions	*a = w->data;

	(void)loop;
	(void)revents;
	a->cmd_gen = a->hup_gen;
	var_notify(a);
}

void
actions_command_exit_cb(int status, int stopped, void *arg)
{
	struct actions	*a = arg;
	int		 code = child_exit_code(status);
	uint64_t	 ran_ms = clock_mono_ms() - a->started_ms;

	if (stopped)
		log_info("the command stopped (exit code %d)", code);
	else
		log_warnx("the command exited by itself with code %d after "
		    "%llums", code, (unsigned long long)ran_ms);
	/* No command has an old var now; the daemon may move a shard. */
	ev_timer_stop(a->loop, &a->hup);
	var_notify(a);
	if (a->shutting) {
		actions_shutdown_check(a);
		return;
	}
	if (a->held) {
		hold_check(a);
		return;
	}
	if (a->await && a->exit_code >= 0) {
		/* Leadership was lost. */
		actions_quit_later(a, a->exit_code);
		return;
	}
	if (!a->leading)
		return;
	if (stopped) {
		/* Stopped for a lost claim, and leading again already. */
		actions_start_command(a);
		return;
	}
	/* k8s-await-election exits 0 or 1, not with the command's code. */
	if (a->await)
		code = code != 0;
	if (strcmp(a->conf->run_restart, "never") == 0) {
		log_info("run.restart is never: releasing the lease and "
		    "exiting with code %d", code);
		a->exit_code = code;
		a->quit_cb(a->quit_arg);
		return;
	}
	if (ran_ms >= RESTART_RESET_MS)
		a->restart_ms = RESTART_MIN_MS;
	log_info("restarting the command in %llums",
	    (unsigned long long)a->restart_ms);
	ev_now_update(a->loop);
	ev_timer_set(&a->restart, clock_timer_seconds(a->restart_ms), 0.);
	ev_timer_start(a->loop, &a->restart);
	a->restart_ms = a->restart_ms * 2 > RESTART_MAX_MS ? RESTART_MAX_MS :
	    a->restart_ms * 2;
}

void
actions_set_var(struct actions *a, const char *var, int sighup)
{
	if (a->var != NULL && strcmp(a->var, var) == 0)
		return;
	free(a->var);
	a->var = xstrdup(var);
	a->var_gen++;
	/* Held or shutting: it is being stopped, and taken at its exit. */
	if (a->child == NULL || !child_active(a->child) || a->shutting ||
	    a->held)
		return;
	if (sighup) {
		log_info("%s: sending SIGHUP to the command (pid %ld)", var,
		    (long)child_pid(a->child));
		kill(child_pid(a->child), SIGHUP);
		/*
		 * No answer comes from a signal: the command has run.grace
		 * to take the value (from the latest SIGHUP).
		 */
		a->hup_gen = a->var_gen;
		ev_timer_stop(a->loop, &a->hup);
		ev_now_update(a->loop);
		ev_timer_set(&a->hup, clock_timer_seconds(a->conf->run_grace_ms),
		    0.);
		ev_timer_start(a->loop, &a->hup);
		return;
	}
	/* Its exit, stopped while leading, starts it again (exit_cb). */
	log_info("%s: restarting the command (pid %ld)", var,
	    (long)child_pid(a->child));
	child_stop(a->child);
}

int
actions_var_taken(const struct actions *a)
{
	return a->child == NULL || !child_active(a->child) ||
	    a->cmd_gen == a->var_gen;
}

void
actions_set_var_cb(struct actions *a, void (*cb)(void *), void *arg)
{
	a->var_cb = cb;
	a->var_arg = arg;
}

void
actions_hold(struct actions *a, int hold, void (*done_cb)(void *), void *arg)
{
	if (!hold) {
		a->held = 0;
		a->hold_cb = NULL;
		actions_start_command(a);
		return;
	}
	a->held = 1;
	a->hold_cb = done_cb;
	a->hold_arg = arg;
	ev_timer_stop(a->loop, &a->restart);
	if (a->child != NULL && child_active(a->child)) {
		log_info("no longer a candidate: stopping the command (pid "
		    "%ld) before releasing the lease",
		    (long)child_pid(a->child));
		child_stop(a->child);
	}
	hold_check(a);
}
