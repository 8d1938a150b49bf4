/*
 * actions_int.h -- what actions.c (the claim, the label, the endpoints,
 * the shutdown) and actions_run.c (the run mode's command) share;
 * private to actions/.
 */

#ifndef ACTIONS_INT_H
#define ACTIONS_INT_H

#include <stdint.h>

#include <ev.h>

#include "actions/actions.h"
#include "codec/lease.h"
#include "config/config.h"

struct child;
struct endpoints;
struct label;

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

/* actions.c */

/* Call actions_shutdown's done_cb once nothing is left to wait for. */
void	 actions_shutdown_check(struct actions *a);

/* Whether a has a keeper of the leader's endpoints. */
int	 actions_has_endpoints(const struct actions *a);

/*
 * End leaderd with code, from the loop (never from inside an elector
 * step or a keeper's callback).
 */
void	 actions_quit_later(struct actions *a, int code);

/* actions_run.c */

/*
 * Start the command if it may run now: in run mode, leading, not held,
 * not shutting down, not running or waiting to restart (under compat
 * await, once the endpoints name us).
 */
void	 actions_start_command(struct actions *a);

/* The watchers' and the child's callbacks, set up by actions_new. */
void	 actions_restart_cb(struct ev_loop *loop, ev_timer *w, int revents);
void	 actions_hup_cb(struct ev_loop *loop, ev_timer *w, int revents);
void	 actions_command_exit_cb(int status, int stopped, void *arg);

#endif /* ACTIONS_INT_H */
