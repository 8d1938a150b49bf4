/*
 * actions.c -- the run mode's command, the leader pod label and the
 * leader's endpoints, driven by the claim the daemon reports (actions.h).
 */

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "actions/actions.h"
#include "actions/child.h"
#include "actions/endpoints.h"
#include "actions/label.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "codec/lease.h"
#include "config/config.h"

#define RESTART_MIN_MS	1000	/* first restart delay (run.restart) */
#define RESTART_MAX_MS	30000	/* delays double up to this */
#define RESTART_RESET_MS 30000	/* a command that ran this long restarts
				   after RESTART_MIN_MS again */

struct actions {
	struct ev_loop		*loop;		/* the default loop */
	const struct config	*conf;		/* borrowed */
	struct child		*child;		/* NULL: not in run mode */
	struct label		*label;		/* NULL: label disabled */
	struct endpoints	*ep[2];		/* slice, Endpoints; or NULL */
	actions_quit_cb		 quit_cb;	/* the command ended leaderd */
	void			*quit_arg;	/* for quit_cb */
	int			 await;		/* k8s-await-election's life
						   cycle (compat await) */
	int			 ep_named;	/* await: this term's endpoints
						   write naming us succeeded */
	ev_timer		 quit;		/* calls quit_cb from the loop */
	int			 leading;	/* the claim holds */
	uint64_t		 lead_until_ms;	/* when it ends, monotonic */
	char			 token[LEASE_TOKEN_MAX]; /* of this term */
	ev_timer		 claim;		/* fires at lead_until_ms */
	ev_timer		 restart;	/* restarts the command */
	uint64_t		 restart_ms;	/* next restart delay */
	uint64_t		 started_ms;	/* when the command started */
	int			 exit_code;	/* leaderd's exit; -1 none */
	int			 shutting;	/* actions_shutdown ran */
	int			 held;		/* actions_hold: no command */
	void			(*hold_cb)(void *); /* the command is gone */
	void			*hold_arg;	/* for hold_cb */
	int			 label_done;	/* shutdown's standby done */
	int			 ep_done[2];	/* shutdown's clearing done */
	void			(*done_cb)(void *); /* of actions_shutdown */
	void			*done_arg;	/* for done_cb */
	char			 env[3][2 * CONFIG_STR_MAX + 32]; /* vars */
	char			*var;		/* actions_set_var's, or NULL */
	unsigned		 var_gen;	/* changes of var */
	unsigned		 cmd_gen;	/* the var_gen the running
						   command has */
	unsigned		 hup_gen;	/* the var_gen of the last SIGHUP */
	ev_timer		 hup;		/* run.grace after that SIGHUP */
	void			(*var_cb)(void *); /* var maybe taken */
	void			*var_arg;	/* for var_cb */
};

static void
shutdown_check(struct actions *a)
{
	void	(*cb)(void *) = a->done_cb;

	if (!a->shutting || cb == NULL)
		return;
	if (a->child != NULL && child_active(a->child))
		return;
	if (a->label != NULL && !a->label_done)
		return;
	if ((a->ep[0] != NULL && !a->ep_done[0]) ||
	    (a->ep[1] != NULL && !a->ep_done[1]))
		return;
	a->done_cb = NULL;
	cb(a->done_arg);
}

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

/* Whether a has a keeper of the leader's endpoints. */
static int
has_endpoints(const struct actions *a)
{
	return a->ep[0] != NULL || a->ep[1] != NULL;
}

/*
 * End leaderd with code, from the loop (never from inside an elector
 * step or a keeper's callback): quit_cb stops the daemon as a signal
 * would, and the code is what it exits with.
 */
static void
quit_later(struct actions *a, int code)
{
	a->exit_code = code;
	ev_timer_stop(a->loop, &a->quit);
	ev_timer_set(&a->quit, 0., 0.);
	ev_timer_start(a->loop, &a->quit);
}

static void
quit_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct actions	*a = w->data;

	(void)loop;
	(void)revents;
	if (!a->shutting)
		a->quit_cb(a->quit_arg);
}

static void
start_command(struct actions *a)
{
	char	*env[5], err[256];

	if (a->child == NULL || a->shutting || a->held || !a->leading ||
	    child_active(a->child) || ev_is_active(&a->restart))
		return;
	/* k8s-await-election starts it once the endpoints name us. */
	if (a->await && has_endpoints(a) && !a->ep_named)
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

/* The claim ended, by the daemon's word or by our timer. */
static void
lost(struct actions *a, const char *why)
{
	int	 i;

	if (!a->leading)
		return;
	a->leading = 0;
	a->ep_named = 0;
	ev_timer_stop(a->loop, &a->claim);
	ev_timer_stop(a->loop, &a->restart);
	if (a->label != NULL)
		label_set(a->label, 0);
	for (i = 0; i < 2; i++)
		if (a->ep[i] != NULL)
			endpoints_set(a->ep[i], 0);
	if (a->child != NULL && child_active(a->child)) {
		log_info("%s: stopping the command (pid %ld)", why,
		    (long)child_pid(a->child));
		child_stop(a->child);
	}
	/*
	 * k8s-await-election exits 1 when leadership is lost, so that the
	 * container restarts: once the command is gone (command_exit_cb),
	 * or now if it is not running.
	 */
	if (a->await && !a->shutting) {
		log_info("%s: exiting with code 1 once the command is gone, as "
		    "k8s-await-election does", why);
		a->exit_code = 1;
		if (a->child == NULL || !child_active(a->child))
			quit_later(a, 1);
	}
}

static void
claim_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct actions	*a = w->data;
	uint64_t	 now_ms = clock_mono_ms();

	(void)revents;
	if (now_ms < a->lead_until_ms) {
		ev_timer_set(w, clock_timer_seconds(a->lead_until_ms - now_ms),
		    0.);
		ev_timer_start(loop, w);
		return;
	}
	lost(a, "the claim on the lease ended (renew_deadline passed)");
}

static void
restart_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct actions	*a = w->data;

	(void)loop;
	(void)revents;
	start_command(a);
}

/* Tell the daemon that the var may have been taken (from the loop). */
static void
var_notify(struct actions *a)
{
	if (a->var_cb != NULL)
		a->var_cb(a->var_arg);
}

/* run.grace since the SIGHUP: the command has the var it was told of. */
static void
hup_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct actions	*a = w->data;

	(void)loop;
	(void)revents;
	a->cmd_gen = a->hup_gen;
	var_notify(a);
}

static void
command_exit_cb(int status, int stopped, void *arg)
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
		shutdown_check(a);
		return;
	}
	if (a->held) {
		hold_check(a);
		return;
	}
	if (a->await && a->exit_code >= 0) {
		quit_later(a, a->exit_code);	/* leadership was lost */
		return;
	}
	if (!a->leading)
		return;
	if (stopped) {
		/* Stopped for a lost claim, and leading again already. */
		start_command(a);
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

/*
 * How a write of the endpoints naming this pod ended.  Under compat
 * await the command waits for the first one of the term, and a failed
 * one ends leaderd with 1 before the command starts, as
 * k8s-await-election's setServiceEndpoint does.
 */
static void
ep_result_cb(int ok, void *arg)
{
	struct actions	*a = arg;

	if (!a->await || !a->leading || a->shutting || a->ep_named ||
	    a->exit_code >= 0)
		return;
	if (ok) {
		a->ep_named = 1;
		start_command(a);
		return;
	}
	log_warnx("the Service's endpoints could not be written: exiting "
	    "with code 1 without starting the command, as "
	    "k8s-await-election does");
	quit_later(a, 1);
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

struct actions *
actions_new(struct ev_loop *loop, struct curlev *cv,
    const struct kube_creds *creds, struct token *token,
    const char *user_agent, const struct config *c, char *const *cmd,
    actions_quit_cb quit_cb, void *arg, char *err, size_t errlen)
{
	struct actions	*a;
	int		 i;

	a = xcalloc(1, sizeof(*a));
	a->loop = loop;
	a->conf = c;
	a->quit_cb = quit_cb;
	a->quit_arg = arg;
	a->await = strcmp(c->compat, "await") == 0;
	a->exit_code = -1;
	ev_init(&a->quit, quit_timer_cb);
	a->quit.data = a;
	a->restart_ms = RESTART_MIN_MS;
	ev_init(&a->claim, claim_cb);
	a->claim.data = a;
	ev_init(&a->restart, restart_cb);
	a->restart.data = a;
	ev_init(&a->hup, hup_cb);
	a->hup.data = a;
	if (c->label_enabled) {
		if ((a->label = label_new(loop, cv, creds, token, user_agent,
		    c, err, errlen)) == NULL) {
			free(a);
			return NULL;
		}
		/* A restarted leaderd does not lead yet: say so first. */
		label_set(a->label, 0);
	}
	/*
	 * Unlike the label, the endpoints are not written before we lead:
	 * the object is shared, and another instance may lead now.
	 */
	for (i = 0; c->ep_service[0] != '\0' && i < 2; i++) {
		if ((i == 0 && !c->ep_slice) || (i == 1 && !c->ep_legacy))
			continue;
		if ((a->ep[i] = endpoints_new(loop, cv, creds, token,
		    user_agent, c, i, err, errlen)) == NULL) {
			endpoints_free(a->ep[0]);
			label_free(a->label);
			free(a);
			return NULL;
		}
		endpoints_set_notify(a->ep[i], ep_result_cb, a);
	}
	if (cmd != NULL)
		a->child = child_new(loop, cmd, c->run_grace_ms,
		    command_exit_cb, a);
	return a;
}

void
actions_sync(struct actions *a, uint64_t lead_until_ms, const char *token,
    uint64_t now_ms)
{
	int	 i, began = 0;

	if (lead_until_ms == 0 || now_ms >= lead_until_ms) {
		lost(a, "stopped leading");
		return;
	}
	if (a->leading && strcmp(token, a->token) != 0)
		lost(a, "a new term began");	/* not expected; be safe */
	if (a->leading && lead_until_ms <= a->lead_until_ms)
		return;		/* no renew since the last call */
	a->lead_until_ms = lead_until_ms;
	ev_timer_stop(a->loop, &a->claim);
	ev_now_update(a->loop);
	ev_timer_set(&a->claim, clock_timer_seconds(lead_until_ms - now_ms),
	    0.);
	ev_timer_start(a->loop, &a->claim);
	if (a->shutting)
		return;
	if (!a->leading) {
		a->leading = 1;
		snprintf(a->token, sizeof(a->token), "%s", token);
		began = 1;
	}
	if (a->label != NULL)
		label_set(a->label, 1);	/* set, or re-assert on a renew */
	for (i = 0; i < 2; i++)
		if (a->ep[i] != NULL)
			endpoints_set(a->ep[i], 1);
	if (began)
		start_command(a);
}

static void
label_done_cb(void *arg)
{
	struct actions	*a = arg;

	a->label_done = 1;
	shutdown_check(a);
}

static void
ep0_done_cb(void *arg)
{
	struct actions	*a = arg;

	a->ep_done[0] = 1;
	shutdown_check(a);
}

static void
ep1_done_cb(void *arg)
{
	struct actions	*a = arg;

	a->ep_done[1] = 1;
	shutdown_check(a);
}

void
actions_hold(struct actions *a, int hold, void (*done_cb)(void *), void *arg)
{
	if (!hold) {
		a->held = 0;
		a->hold_cb = NULL;
		start_command(a);
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

void
actions_shutdown(struct actions *a, void (*done_cb)(void *), void *arg)
{
	a->shutting = 1;
	a->done_cb = done_cb;
	a->done_arg = arg;
	ev_timer_stop(a->loop, &a->restart);
	if (a->child != NULL && child_active(a->child)) {
		log_info("stopping the command (pid %ld) before releasing the "
		    "lease", (long)child_pid(a->child));
		child_stop(a->child);
	}
	if (a->label != NULL)
		label_finish(a->label, label_done_cb, a);
	if (a->ep[0] != NULL)
		endpoints_finish(a->ep[0], ep0_done_cb, a);
	if (a->ep[1] != NULL)
		endpoints_finish(a->ep[1], ep1_done_cb, a);
	shutdown_check(a);
}

const char *
actions_unfinished(const struct actions *a)
{
	int	 cmd, label;

	if (!a->shutting)
		return NULL;
	cmd = a->child != NULL && child_active(a->child);
	label = a->label != NULL && !a->label_done;
	if (!cmd && !label && ((a->ep[0] != NULL && !a->ep_done[0]) ||
	    (a->ep[1] != NULL && !a->ep_done[1])))
		return "the leader's endpoints are not cleared";
	if (cmd && label)
		return "the command is still running and the label is not "
		    "back to standby";
	if (cmd)
		return "the command is still running";
	if (label)
		return "the label is not back to standby";
	return NULL;
}

uint64_t
actions_shutdown_ms(const struct actions *a)
{
	uint64_t	 ms = 0;

	if (a->child != NULL)
		ms += a->conf->run_grace_ms + 1000;
	if (a->label != NULL)
		ms += 2 * a->conf->request_timeout_ms;
	if (has_endpoints(a))
		ms += 2 * a->conf->request_timeout_ms;
	return ms;
}

int
actions_exit_code(const struct actions *a)
{
	return a->exit_code;
}

void
actions_set_observer(struct actions *a, kube_observe_cb cb, void *arg)
{
	int	 i;

	if (a->label != NULL)
		label_set_observer(a->label, cb, arg);
	for (i = 0; i < 2; i++)
		if (a->ep[i] != NULL)
			endpoints_set_observer(a->ep[i], cb, arg);
}

void
actions_free(struct actions *a)
{
	if (a == NULL)
		return;
	ev_timer_stop(a->loop, &a->claim);
	ev_timer_stop(a->loop, &a->restart);
	ev_timer_stop(a->loop, &a->quit);
	ev_timer_stop(a->loop, &a->hup);
	child_free(a->child);
	label_free(a->label);
	endpoints_free(a->ep[0]);
	endpoints_free(a->ep[1]);
	free(a->var);
	free(a);
}
