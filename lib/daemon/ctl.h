/*
 * ctl.h -- leaderd's control client: `leaderd status`, `release`,
 * `pause`, `resume` and `wait-leader` ask the local API of the leaderd
 * beside them, over its unix socket or TCP, so that a shell-less image
 * can be driven with `kubectl exec POD -c leaderd -- leaderd status`.
 *
 * Plain blocking-style I/O with poll(2) against a deadline: this is a
 * short-lived command, not the daemon, and it never waits without a
 * bound.  Human text goes to stdout and errors to stderr; with json,
 * each answer's body goes to stdout as the daemon sent it.  Every
 * function returns the command's exit status (CTL_EXIT_*; leaderd(8)
 * EXIT STATUS).
 */

#ifndef CTL_H
#define CTL_H

#include <stdint.h>

#define CTL_EXIT_OK		0	/* done (status: the daemon answered) */
#define CTL_EXIT_REFUSED	1	/* the daemon answered no */
#define CTL_EXIT_USAGE		2	/* bad usage or configuration */
#define CTL_EXIT_UNREACHABLE	3	/* no answer, or not leaderd's */
#define CTL_EXIT_TIMEOUT	4	/* wait-leader: not leading in time */
#define CTL_EXIT_PROBLEM	5	/* status: the daemon reports a problem
					   (severity error) */
#define CTL_EXIT_WARNING	6	/* status: it reports a warning only */

#define CTL_IO_MS		5000	/* a plain request's time limit */

/* Which local API to ask, and how to print. */
struct ctl_target {
	const char	*unix_path;	/* the unix socket; NULL for TCP */
	const char	*http;		/* "host:port" when unix_path is NULL */
	int		 json;		/* answers' bodies as they are */
	uint64_t	 release_ms;	/* a step-down's time limit: more than
					   renew_deadline + request_timeout */
};

/*
 * GET /leader, shown, its problem first.  CTL_EXIT_OK whether or not
 * this instance leads, but CTL_EXIT_PROBLEM while the daemon reports a
 * problem, CTL_EXIT_WARNING while it reports one of severity warning.
 */
int	ctl_status(const struct ctl_target *t);

/*
 * POST /leader/release, or /leader/release?to=TO when to is not NULL.
 * CTL_EXIT_OK once this instance no longer leads (200, 202).
 */
int	ctl_release(const struct ctl_target *t, const char *to);

/* POST /leader/pause (pause) or /leader/resume. */
int	ctl_pause(const struct ctl_target *t, int pause);

/*
 * Wait until this instance leads: CTL_EXIT_OK at once if it does, else
 * blocking reads of /leader until it does, or CTL_EXIT_TIMEOUT after
 * timeout_ms (-1: no limit; 0: do not wait).
 */
int	ctl_wait_leader(const struct ctl_target *t, int64_t timeout_ms);

#endif /* CTL_H */
