/*
 * child.c -- the supervised command of the run mode: fork and exec in a
 * new process group, reap through libev, SIGTERM then SIGKILL the group.
 */

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ev.h>

#include "actions/child.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"

#define POLL_S		0.05	/* how often a draining group is checked */

extern char **environ;

enum child_state {
	CHILD_IDLE,		/* no command */
	CHILD_RUNNING,		/* the main process runs */
	CHILD_STOPPING		/* SIGTERM sent; waiting for the group to go */
};

struct child {
	struct ev_loop	*loop;		/* the default loop */
	char *const	*argv;		/* borrowed command line */
	uint64_t	 grace_ms;	/* SIGTERM to SIGKILL */
	child_exit_cb	 cb;		/* told when the command ended */
	void		*arg;		/* for cb */
	enum child_state state;		/* see above */
	pid_t		 pid;		/* main process and group; 0 none */
	int		 main_done;	/* the main process was reaped */
	int		 status;	/* its wait status */
	int		 stop_asked;	/* child_stop was called */
	int		 killed;	/* SIGKILL was sent */
	ev_child	 reap;		/* every child of leaderd (pid 0) */
	ev_timer	 kill_timer;	/* SIGKILL at the end of grace */
	ev_timer	 poll;		/* checks whether the group is gone */
};

int
child_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* Whether any process is left in group pgid. */
static int
group_alive(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno == EPERM;
}

static void
signal_group(struct child *c, int sig)
{
	if (kill(-c->pid, sig) == -1 && errno != ESRCH)
		log_warn("command (pid %ld): kill(%d)", (long)c->pid, sig);
}

/* Start the SIGTERM, grace, SIGKILL sequence, once. */
static void
begin_stop(struct child *c)
{
	if (c->state == CHILD_STOPPING)
		return;
	c->state = CHILD_STOPPING;
	signal_group(c, SIGTERM);
	/* Timers count from the loop's cached time: refresh it first. */
	ev_now_update(c->loop);
	ev_timer_set(&c->kill_timer, clock_timer_seconds(c->grace_ms), 0.);
	ev_timer_start(c->loop, &c->kill_timer);
	ev_timer_set(&c->poll, POLL_S, POLL_S);
	ev_timer_start(c->loop, &c->poll);
}

/* See whether the command has ended; report it if so. */
static void
check(struct child *c)
{
	int	 status, stopped;

	if (c->state == CHILD_IDLE || !c->main_done)
		return;
	if (group_alive(c->pid)) {
		if (c->state == CHILD_RUNNING) {
			log_info("command (pid %ld) exited; stopping what is "
			    "left of its process group", (long)c->pid);
			begin_stop(c);
		}
		return;
	}
	ev_timer_stop(c->loop, &c->kill_timer);
	ev_timer_stop(c->loop, &c->poll);
	status = c->status;
	stopped = c->stop_asked;
	c->state = CHILD_IDLE;
	c->pid = 0;
	c->main_done = 0;
	c->cb(status, stopped, c->arg);
}

static void
reap_cb(struct ev_loop *loop, ev_child *w, int revents)
{
	struct child	*c = w->data;

	(void)loop;
	(void)revents;
	if (c->state != CHILD_IDLE && w->rpid == c->pid) {
		c->main_done = 1;
		c->status = w->rstatus;
	}
	check(c);
}

static void
kill_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct child	*c = w->data;

	(void)loop;
	(void)revents;
	if (c->state == CHILD_IDLE || !group_alive(c->pid))
		return;
	log_warnx("command (pid %ld) still running %llums after SIGTERM; "
	    "sending SIGKILL to its process group", (long)c->pid,
	    (unsigned long long)c->grace_ms);
	c->killed = 1;
	signal_group(c, SIGKILL);
}

static void
poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct child	*c = w->data;

	(void)loop;
	(void)revents;
	check(c);
}

struct child *
child_new(struct ev_loop *loop, char *const argv[], uint64_t grace_ms,
    child_exit_cb cb, void *arg)
{
	struct child	*c;

	c = xcalloc(1, sizeof(*c));
	c->loop = loop;
	c->argv = argv;
	c->grace_ms = grace_ms;
	c->cb = cb;
	c->arg = arg;
	/* Orphaned grandchildren come back to us, so they can be reaped. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		log_warn("prctl(PR_SET_CHILD_SUBREAPER)");
	ev_child_init(&c->reap, reap_cb, 0, 0);
	c->reap.data = c;
	ev_child_start(loop, &c->reap);
	ev_init(&c->kill_timer, kill_cb);
	c->kill_timer.data = c;
	ev_init(&c->poll, poll_cb);
	c->poll.data = c;
	return c;
}

/* Whether "NAME=..." entry e names one of the variables in env. */
static int
overridden(const char *e, char *const env[])
{
	size_t	 n, i;

	n = strcspn(e, "=");
	for (i = 0; env[i] != NULL; i++)
		if (strncmp(e, env[i], n) == 0 && env[i][n] == '=')
			return 1;
	return 0;
}

int
child_start(struct child *c, char *const env[], char *err, size_t errlen)
{
	char		**envp;
	size_t		 n = 0, m = 0, i;
	sigset_t	 all, saved;
	struct sigaction sa;
	pid_t		 pid, parent;
	int		 sig, fd, maxfd;

	if (c->state != CHILD_IDLE) {
		snprintf(err, errlen, "a command is already running");
		return -1;
	}
	/* Built before the fork: the child may only call exec and _exit. */
	while (environ[n] != NULL)
		n++;
	while (env[m] != NULL)
		m++;
	envp = xcalloc(n + m + 1, sizeof(*envp));
	for (i = 0, n = 0; environ[i] != NULL; i++)
		if (!overridden(environ[i], env))
			envp[n++] = environ[i];
	for (i = 0; i < m; i++)
		envp[n++] = env[i];
	envp[n] = NULL;

	parent = getpid();
	maxfd = (int)sysconf(_SC_OPEN_MAX);
	if (maxfd < 0 || maxfd > 65536)
		maxfd = 65536;
	/*
	 * A signal sent to the new group before the child has reset its
	 * handlers would run leaderd's (libev's) handler there and be lost:
	 * a SIGTERM right after a start then waits run.grace for SIGKILL.
	 * Blocked across the fork, it stays pending until the child's
	 * handlers are the defaults.
	 */
	sigfillset(&all);
	(void)sigprocmask(SIG_SETMASK, &all, &saved);
	if ((pid = fork()) == -1) {
		(void)sigprocmask(SIG_SETMASK, &saved, NULL);
		snprintf(err, errlen, "fork: %s", strerror(errno));
		free(envp);
		return -1;
	}
	if (pid == 0) {
		static const char msg[] =
		    "leaderd: cannot execute the command\n";

		/* leaderd killed with SIGKILL takes the command with it. */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		(void)setpgid(0, 0);
		/*
		 * Nothing of leaderd's (listeners, API connections) leaks.
		 * The system call itself: musl 1.2.3 has no wrapper.
		 */
		if (syscall(SYS_close_range, 3, ~0U, 0) == -1)
			for (fd = 3; fd < maxfd; fd++)
				(void)close(fd);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		for (sig = 1; sig < NSIG; sig++)
			(void)sigaction(sig, &sa, NULL);
		/* Now a pending SIGTERM ends the child, as it should. */
		sigemptyset(&all);
		(void)sigprocmask(SIG_SETMASK, &all, NULL);
		execvpe(c->argv[0], c->argv, envp);
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(127);
		_exit(127);
	}
	/* Both sides set the group, so it exists before any kill(-pid). */
	(void)setpgid(pid, pid);
	(void)sigprocmask(SIG_SETMASK, &saved, NULL);
	free(envp);
	c->pid = pid;
	c->state = CHILD_RUNNING;
	c->main_done = 0;
	c->stop_asked = 0;
	c->killed = 0;
	return 0;
}

void
child_stop(struct child *c)
{
	if (c->state == CHILD_IDLE)
		return;
	c->stop_asked = 1;
	begin_stop(c);
}

int
child_active(const struct child *c)
{
	return c->state != CHILD_IDLE;
}

pid_t
child_pid(const struct child *c)
{
	return c->state != CHILD_IDLE ? c->pid : 0;
}

void
child_free(struct child *c)
{
	if (c == NULL)
		return;
	if (c->state != CHILD_IDLE && group_alive(c->pid))
		(void)kill(-c->pid, SIGKILL);
	ev_child_stop(c->loop, &c->reap);
	ev_timer_stop(c->loop, &c->kill_timer);
	ev_timer_stop(c->loop, &c->poll);
	free(c);
}
