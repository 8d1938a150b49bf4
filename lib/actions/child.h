/*
 * child.h -- one supervised command, in its own process group, on the
 * libev default loop: `leaderd run -- CMD ARGS...`.
 *
 * The command runs as the leader of a new process group.  Stopping it
 * sends SIGTERM to the whole group and SIGKILL to whatever is left of
 * the group grace_ms later.  leaderd makes itself a child subreaper, so
 * grandchildren orphaned by the command stay reapable here; the command
 * counts as ended only when its main process has been reaped and no
 * process is left in its group (a command whose main process exits on
 * its own while others of its group live on gets the same SIGTERM,
 * grace, SIGKILL).  A process that leaves the group (setsid, setpgid) is
 * out of reach.  The command's main process gets SIGKILL if leaderd
 * itself dies (PR_SET_PDEATHSIG); its own children are then left to the
 * container's end.
 */

#ifndef CHILD_H
#define CHILD_H

#include <stdint.h>
#include <sys/types.h>

#include <ev.h>

/*
 * Called from the loop once the command has ended (main process reaped,
 * group empty).  status is the main process's wait status; stopped says
 * whether child_stop was called before it ended.
 */
typedef void (*child_exit_cb)(int status, int stopped, void *arg);

struct child;

/*
 * A supervisor for argv (borrowed; argv[0] is looked up in $PATH) on
 * loop, which must be the default loop (libev reaps children only
 * there).  Never fails; OOM is fatal.
 */
struct child	*child_new(struct ev_loop *loop, char *const argv[],
		    uint64_t grace_ms, child_exit_cb cb, void *arg);

/*
 * Start the command with leaderd's environment plus env (a NULL-ended
 * list of "NAME=value", replacing variables of the same name); stdin,
 * stdout and stderr are leaderd's.  Only when no command is active.
 * Returns 0, or -1 with the reason in err (the fork failed; a command
 * that cannot be executed exits with status 127 instead).
 */
int		 child_start(struct child *c, char *const env[], char *err,
		    size_t errlen);

/*
 * Stop the command: SIGTERM to its group now, SIGKILL grace_ms later if
 * any of the group is left.  Nothing if no command is active; calling it
 * again does not restart the grace period.
 */
void		 child_stop(struct child *c);

/* Whether a command is active (started and not yet reported ended). */
int		 child_active(const struct child *c);

/* The active command's process (and group) id, or 0. */
pid_t		 child_pid(const struct child *c);

/*
 * SIGKILL what is left of an active command's group, and free c.  The
 * exit callback does not run.
 */
void		 child_free(struct child *c);

/*
 * The exit code leaderd should exit with for wait status: the command's
 * exit code, or 128 + the signal that killed it.
 */
int		 child_exit_code(int status);

#endif /* CHILD_H */
