/*
 * actions.h -- what leaderd does because it leads: run a command while
 * leading (`leaderd run -- CMD`, child.c), keep the leader pod label
 * (actions.label, label.c) and the leader's endpoints (actions.endpoints,
 * endpoints.c).
 *
 * daemon.c reports, after every elector step, until when this instance
 * leads (the elector's lead_until_ms, 0 when it does not lead).  The
 * claim can end without any API answer, so actions.c keeps its own timer
 * at lead_until_ms: the command gets SIGTERM the moment the claim ends,
 * SIGKILL at most run.grace later, and with grace <= lease_duration -
 * renew_deadline it is gone before another instance may take the Lease
 * (DESIGN.md "Time").  Leading starts the command and sets the label to
 * leader, in that order, only once the Lease is ours; losing sets the
 * label to standby and stops the command.
 *
 * Under compat await, k8s-await-election's life cycle: the command
 * starts only once the endpoints name this pod (a failed write ends
 * leaderd with 1 instead), its exit ends leaderd with 0 or 1 (not its
 * code), and a lost claim ends leaderd with 1 once the command is gone.
 */

#ifndef ACTIONS_H
#define ACTIONS_H

#include <stdint.h>

#include <ev.h>

#include "api/curlev.h"
#include "api/kube.h"
#include "config/config.h"
#include "config/creds.h"

/* The command ended in a way that ends leaderd (run.restart never). */
typedef void (*actions_quit_cb)(void *arg);

struct actions;

/*
 * Actions for c (borrowed): cmd (borrowed, NULL-ended; NULL when not in
 * run mode), the endpoints when c->ep_service is set, and the label when
 * c->label_enabled, whose API clients send
 * token (borrowed; it must outlive the actions).  loop must be the
 * default loop.  quit_cb(arg) runs from the loop when the command exits
 * by itself while leading under run.restart never.  Returns NULL with err
 * on failure.
 */
struct actions	*actions_new(struct ev_loop *loop, struct curlev *cv,
		    const struct kube_creds *creds, struct token *token,
		    const char *user_agent, const struct config *c,
		    char *const *cmd, actions_quit_cb quit_cb, void *arg,
		    char *err, size_t errlen);

/*
 * Leadership as of now_ms: lead_until_ms is when the claim ends (0: not
 * leading); token is the term's fencing token.  Call after every elector
 * step; a later lead_until_ms is a renew, which re-asserts the label.
 */
void		 actions_sync(struct actions *a, uint64_t lead_until_ms,
		    const char *token, uint64_t now_ms);

/*
 * Hold the command back (hold 1): stop it if it runs (SIGTERM, grace,
 * SIGKILL), start none while held, and call done_cb(arg) once it is gone
 * (at once if none runs), so that the lease is released only after it.
 * hold 0 lets it start again while leading; a done_cb not yet called
 * is then never called.  The label and endpoints follow leadership as
 * ever.
 */
void		 actions_hold(struct actions *a, int hold,
		    void (*done_cb)(void *), void *arg);

/*
 * Shutdown, before the Lease is released: stop the command (SIGTERM,
 * grace, SIGKILL) and set the label to standby, then call done_cb(arg)
 * (at once if there is nothing to wait for).  No command starts after
 * this.
 */
void		 actions_shutdown(struct actions *a, void (*done_cb)(void *),
		    void *arg);

/*
 * What actions_shutdown has not finished yet, for the log of a hard
 * stop: "the command is still running", "the label is not back to
 * standby", both, "the leader's endpoints are not cleared" (when
 * nothing else is left), or NULL when all is done (or it was never
 * called).
 */
const char	*actions_unfinished(const struct actions *a);

/*
 * Judge the claim now, as its timer would at its end: after a resume
 * from a suspend, which that timer's clock does not count.
 */
void		 actions_claim_check(struct actions *a);

/* The exit code the command asked leaderd to exit with, or -1. */
int		 actions_exit_code(const struct actions *a);

/* Report the label's API requests to cb(arg) (kube_set_observer). */
void		 actions_set_observer(struct actions *a, kube_observe_cb cb,
		    void *arg);

/*
 * Run mode in a shard group: var ("LEADERD_SHARDS=0,5,9", copied) goes
 * into the command's environment from its next start.  When it differs
 * from the last one, a running command is sent SIGHUP (sighup 1) or
 * stopped (SIGTERM, grace, SIGKILL) and started again with it.
 */
void		 actions_set_var(struct actions *a, const char *var,
		    int sighup);

/*
 * Whether no command may still work with an earlier var than the last
 * actions_set_var's: none runs, or the one running started with it, or
 * (sighup) run.grace has passed since the SIGHUP that told it, the time
 * a command has to take a new value (docs/shards.md "Run mode").
 */
int		 actions_var_taken(const struct actions *a);

/*
 * Call cb(arg) from the loop each time actions_var_taken may have become
 * true: a command exited, or a SIGHUP's run.grace ran out.
 */
void		 actions_set_var_cb(struct actions *a, void (*cb)(void *),
		    void *arg);

/* Stop everything at once (SIGKILL to a command still running), free a. */
void		 actions_free(struct actions *a);

#endif /* ACTIONS_H */
