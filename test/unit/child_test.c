/*
 * child_test.c -- the run mode's supervisor (child.c) on a real libev
 * default loop with real processes (/bin/sh): exit codes, the added
 * environment, SIGTERM then SIGKILL after grace for a group that ignores
 * SIGTERM, a grandchild left behind by an exiting command, and a command
 * that cannot be executed.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <cmocka.h>

#include <ev.h>

#include "actions/child.h"

#define GRACE_MS	200	/* short, so the tests stay quick */

struct result {
	int	 done;		/* the exit callback ran */
	int	 status;	/* its wait status */
	int	 stopped;	/* and its stopped flag */
};

static void
exit_cb(int status, int stopped, void *arg)
{
	struct result	*r = arg;

	r->done++;
	r->status = status;
	r->stopped = stopped;
	ev_break(EV_DEFAULT, EVBREAK_ALL);
}

static void
limit_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run the loop until the command ended or 10 s passed. */
static void
run_until_done(struct result *r)
{
	ev_timer	 limit;

	ev_timer_init(&limit, limit_cb, 10., 0.);
	ev_timer_start(EV_DEFAULT, &limit);
	while (!r->done && ev_is_active(&limit))
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	ev_timer_stop(EV_DEFAULT, &limit);
	assert_int_equal(r->done, 1);
}

/* Start sh -c script with env and return the supervisor. */
static struct child *
start_sh(const char *script, char **env, struct result *r)
{
	static char	*argv[4], buf[512];
	struct child	*c;
	char		*noenv[] = { NULL };
	char		 err[256];

	argv[0] = (char *)"sh";
	argv[1] = (char *)"-c";
	snprintf(buf, sizeof(buf), "%s", script);
	argv[2] = buf;
	argv[3] = NULL;
	memset(r, 0, sizeof(*r));
	c = child_new(EV_DEFAULT, argv, GRACE_MS, exit_cb, r);
	assert_int_equal(child_start(c, env != NULL ? env : noenv, err,
	    sizeof(err)), 0);
	assert_true(child_active(c));
	assert_true(child_pid(c) > 0);
	return c;
}

static void
test_exit_code(void **state)
{
	struct result	 r;
	struct child	*c;

	(void)state;
	c = start_sh("exit 3", NULL, &r);
	run_until_done(&r);
	assert_int_equal(child_exit_code(r.status), 3);
	assert_int_equal(r.stopped, 0);
	assert_false(child_active(c));
	assert_int_equal(child_pid(c), 0);
	child_free(c);
}

static void
test_environment(void **state)
{
	struct result	 r;
	struct child	*c;
	char		*env[] = { (char *)"LEADERD_T_NEW=yes",
			    (char *)"LEADERD_T_OVR=new", NULL };

	(void)state;
	setenv("LEADERD_T_OVR", "old", 1);
	setenv("LEADERD_T_KEEP", "kept", 1);
	c = start_sh("test \"$LEADERD_T_NEW\" = yes || exit 10; "
	    "test \"$LEADERD_T_OVR\" = new || exit 11; "
	    "test \"$LEADERD_T_KEEP\" = kept || exit 12; "
	    "test \"$(env | grep -c '^LEADERD_T_OVR=')\" = 1 || exit 13; "
	    "exit 0", env, &r);
	run_until_done(&r);
	assert_int_equal(child_exit_code(r.status), 0);
	child_free(c);
	unsetenv("LEADERD_T_OVR");
	unsetenv("LEADERD_T_KEEP");
}

static void
test_stop_kills_after_grace(void **state)
{
	struct result	 r;
	struct child	*c;
	double		 t0, dt;

	(void)state;
	/* The shell and its sleep both ignore SIGTERM. */
	c = start_sh("trap '' TERM; sleep 30 & wait; sleep 30", NULL, &r);
	usleep(100 * 1000);
	t0 = now_s();
	child_stop(c);
	child_stop(c);		/* again: no new grace period */
	run_until_done(&r);
	dt = now_s() - t0;
	assert_int_equal(r.stopped, 1);
	assert_true(WIFSIGNALED(r.status));
	assert_int_equal(WTERMSIG(r.status), SIGKILL);
	assert_int_equal(child_exit_code(r.status), 128 + SIGKILL);
	assert_true(dt >= GRACE_MS / 1000.0 - 0.02);
	assert_true(dt < 3.0);
	child_free(c);
}

static void
test_stop_on_sigterm_is_quick(void **state)
{
	struct result	 r;
	struct child	*c;
	double		 t0;

	(void)state;
	c = start_sh("sleep 30", NULL, &r);
	t0 = now_s();
	child_stop(c);
	run_until_done(&r);
	assert_true(now_s() - t0 < GRACE_MS / 1000.0);
	assert_int_equal(r.stopped, 1);
	assert_int_equal(WTERMSIG(r.status), SIGTERM);
	child_free(c);
}

static void
test_grandchild_left_behind_is_stopped(void **state)
{
	struct result	 r;
	struct child	*c;
	double		 t0, dt;

	(void)state;
	/*
	 * The command exits at once, leaving a grandchild in its group that
	 * ignores SIGTERM: it ends only once the grandchild has been killed.
	 */
	t0 = now_s();
	c = start_sh("f=${TMPDIR:-/tmp}/child_test.$$; rm -f $f; "
	    "(trap '' TERM; : > $f; exec sleep 30) & "
	    "while [ ! -e $f ]; do sleep 0.01; done; rm -f $f; exit 4", NULL,
	    &r);
	run_until_done(&r);
	dt = now_s() - t0;
	assert_int_equal(child_exit_code(r.status), 4);
	assert_int_equal(r.stopped, 0);
	assert_true(dt >= GRACE_MS / 1000.0 - 0.02);
	assert_true(dt < 3.0);
	child_free(c);
}

static void
test_cannot_execute(void **state)
{
	struct result	 r;
	struct child	*c;
	char		*argv[] = { (char *)"/nonexistent/leaderd-test", NULL };
	char		*env[] = { NULL };
	char		 err[256];

	(void)state;
	memset(&r, 0, sizeof(r));
	c = child_new(EV_DEFAULT, argv, GRACE_MS, exit_cb, &r);
	assert_int_equal(child_start(c, env, err, sizeof(err)), 0);
	assert_int_equal(child_start(c, env, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "already running"));
	run_until_done(&r);
	assert_int_equal(child_exit_code(r.status), 127);
	child_free(c);
}

static void
test_exit_code_mapping(void **state)
{
	(void)state;
	assert_int_equal(child_exit_code(0), 0);
	assert_int_equal(child_exit_code(7 << 8), 7);
	assert_int_equal(child_exit_code(SIGKILL), 128 + SIGKILL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_code),
		cmocka_unit_test(test_environment),
		cmocka_unit_test(test_stop_kills_after_grace),
		cmocka_unit_test(test_stop_on_sigterm_is_quick),
		cmocka_unit_test(test_grandchild_left_behind_is_stopped),
		cmocka_unit_test(test_cannot_execute),
		cmocka_unit_test(test_exit_code_mapping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
