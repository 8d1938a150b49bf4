/*
 * actions.c -- the leader pod label and the leader's endpoints, and the
 * claim the daemon reports that drives them and the run mode's command:
 * its timer, its end, the shutdown, and compat await's exits
 * (actions.h).  The command's own life (its start, exit and restart, the
 * hold, LEADERD_SHARDS) is in actions_run.c; actions_int.h is what the
 * two files share.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "actions/actions.h"
#include "actions/actions_int.h"
#include "actions/child.h"
#include "actions/endpoints.h"
#include "actions/label.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "config/config.h"

void
actions_shutdown_check(struct actions *a)
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

/* Whether a has a keeper of the leader's endpoints. */
int
actions_has_endpoints(const struct actions *a)
{
	return a->ep[0] != NULL || a->ep[1] != NULL;
}

/*
 * End leaderd with code, from the loop (never from inside an elector
 * step or a keeper's callback): quit_cb stops the daemon as a signal
 * would, and the code is what it exits with.
 */
void
actions_quit_later(struct actions *a, int code)
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
	 * container restarts: once the command is gone
	 * (actions_command_exit_cb), or now if it is not running.
	 */
	if (a->await && !a->shutting) {
		log_info("%s: exiting with code 1 once the command is gone, as "
		    "k8s-await-election does", why);
		a->exit_code = 1;
		if (a->child == NULL || !child_active(a->child))
			actions_quit_later(a, 1);
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

void
actions_claim_check(struct actions *a)
{
	if (!a->leading || !ev_is_active(&a->claim))
		return;
	ev_timer_stop(a->loop, &a->claim);
	claim_cb(a->loop, &a->claim, 0);
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
		actions_start_command(a);
		return;
	}
	log_warnx("the Service's endpoints could not be written: exiting "
	    "with code 1 without starting the command, as "
	    "k8s-await-election does");
	actions_quit_later(a, 1);
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
	ev_init(&a->restart, actions_restart_cb);
	a->restart.data = a;
	ev_init(&a->hup, actions_hup_cb);
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
		    actions_command_exit_cb, a);
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
		actions_start_command(a);
}

static void
label_done_cb(void *arg)
{
	struct actions	*a = arg;

	a->label_done = 1;
	actions_shutdown_check(a);
}

static void
ep0_done_cb(void *arg)
{
	struct actions	*a = arg;

	a->ep_done[0] = 1;
	actions_shutdown_check(a);
}

static void
ep1_done_cb(void *arg)
{
	struct actions	*a = arg;

	a->ep_done[1] = 1;
	actions_shutdown_check(a);
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
	actions_shutdown_check(a);
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
