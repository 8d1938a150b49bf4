/*
 * compat_vapor_test.c -- compat_vapor.c: vapor-ware/k8s-elector 1.2.0's
 * command line read through compat_args, then config_finish and
 * config_validate, as main does.
 *
 * What each command line means was taken from Go itself: the flag block
 * of k8s-elector's cmd/elector.go with klog v1.0.0's InitFlags, built
 * as test/compat/vapor-flags/main.go, which prints what it parsed (the
 * values in the table) or Go's error and usage (the messages).  The
 * integration test test_compat_vapor.py runs the same grammar through
 * the binary.
 */

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config/compat.h"
#include "config/config.h"

#define MAXARGS	24

struct ok_case {
	const char	*args[MAXARGS];	/* after argv[0] "./elector" */
	const char	*name;		/* lock.name */
	const char	*ns;		/* lock.namespace */
	const char	*type;		/* lock.type */
	const char	*http;		/* listen.http */
	const char	*id;		/* identity; NULL: the hostname */
	uint64_t	 lease_ms, renew_ms, retry_ms;
	const char	*level;		/* log.level */
};

/* Command lines Go parses, and what k8s-elector then runs with. */
static const struct ok_case ok_cases[] = {
	/* example.yaml */
	{ { "-election=example-election", "-http=localhost:4040",
	    "-ttl=3s", "-namespace=default", "-lock-type=configmaps" },
	  "example-election", "default", "configmaps", "localhost:4040",
	  NULL, 3000, 1000, 500, "info" },
	/* README.md */
	{ { "-election=example" }, "example", "default", "leases", "", NULL,
	  10000, 3333, 1666, "info" },
	{ { "-election=example", "-lock-type=configmaps",
	    "-http=0.0.0.0:5002" }, "example", "default", "configmaps",
	  "0.0.0.0:5002", NULL, 10000, 3333, 1666, "info" },
	/* sando38/helm-ejabberd image/.../scripts/run.sh */
	{ { "-election", "ejabberd", "-namespace", "ns1", "-http",
	    "127.0.0.1:4040", "-ttl", "10s" }, "ejabberd", "ns1", "leases",
	  "127.0.0.1:4040", NULL, 10000, 3333, 1666, "info" },
	/* Go's flag: two dashes alike, the last value wins. */
	{ { "--election=x" }, "x", "default", "leases", "", NULL, 10000,
	  3333, 1666, "info" },
	{ { "--election", "x", "--namespace=n", "--id", "p-1" }, "x", "n",
	  "leases", "", "p-1", 10000, 3333, 1666, "info" },
	{ { "-election=a", "-election=b", "-ttl=20s", "-ttl=6s" }, "b",
	  "default", "leases", "", NULL, 6000, 2000, 1000, "info" },
	/* The first non-flag, "-" or "--" ends the flags. */
	{ { "-election=x", "foo", "-namespace=y", "-bogus" }, "x", "default",
	  "leases", "", NULL, 10000, 3333, 1666, "info" },
	{ { "-election=x", "--", "-namespace=y" }, "x", "default", "leases",
	  "", NULL, 10000, 3333, 1666, "info" },
	{ { "-election=x", "-", "-ttl=5s" }, "x", "default", "leases", "",
	  NULL, 10000, 3333, 1666, "info" },
	/* An empty -id is the hostname, an empty -http no server. */
	{ { "-election=x", "-id=", "-http=" }, "x", "default", "leases", "",
	  NULL, 10000, 3333, 1666, "info" },
	{ { "-election=x", "-ttl=1m", "-http=:4040" }, "x", "default",
	  "leases", ":4040", NULL, 60000, 20000, 10000, "info" },
	{ { "-election=x", "-ttl=+5s" }, "x", "default", "leases", "", NULL,
	  5000, 1666, 833, "info" },
	{ { "-election=x", "-ttl=1s" }, "x", "default", "leases", "", NULL,
	  1000, 333, 166, "info" },
	/* Legacy locks: 3s (example.yaml's) is the shortest ttl. */
	{ { "-election=x", "-ttl=3s", "-lock-type=endpoints" }, "x",
	  "default", "endpoints", "", NULL, 3000, 1000, 500, "info" },
	/* klog: -v 4 and up is debug; the others checked and ignored. */
	{ { "-v=4", "-election=x" }, "x", "default", "leases", "", NULL,
	  10000, 3333, 1666, "debug" },
	{ { "-v", "2", "-election=x" }, "x", "default", "leases", "", NULL,
	  10000, 3333, 1666, "info" },
	{ { "-election=x", "-alsologtostderr", "-add_dir_header=1",
	    "-skip_headers", "-skip_log_headers=F", "-logtostderr=false",
	    "-log_dir", "/tmp", "-log_file=f", "-stderrthreshold=INFO",
	    "-vmodule=x=2,,y=0", "-log_backtrace_at=a.go:3",
	    "-log_file_max_size=0x1_0" }, "x", "default", "leases", "", NULL,
	  10000, 3333, 1666, "info" },
	/* leaderd's --compat, in any spelling, is skipped. */
	{ { "--compat=vapor", "-election=x" }, "x", "default", "leases", "",
	  NULL, 10000, 3333, 1666, "info" },
	{ { "-election=x", "--compat", "vapor", "-namespace=n" }, "x", "n",
	  "leases", "", NULL, 10000, 3333, 1666, "info" },
	{ { "-compat=vapor", "-election=x" }, "x", "default", "leases", "",
	  NULL, 10000, 3333, 1666, "info" },
	{ { "-election=x", "-lock-type", "endpointsleases" }, "x", "default",
	  "endpointsleases", "", NULL, 10000, 3333, 1666, "info" },
};

struct bad_case {
	const char	*args[MAXARGS];
	int		 status;	/* exit status */
	const char	*first;		/* the message's first line, exactly */
	int		 usage;		/* the usage follows */
};

static const struct bad_case bad_cases[] = {
	{ { "-h" }, 0, "Usage of ./elector:", 1 },
	{ { "--help" }, 0, "Usage of ./elector:", 1 },
	{ { "-help=x", "-bogus" }, 0, "Usage of ./elector:", 1 },
	{ { "-election=x", "-x" }, 2,
	  "flag provided but not defined: -x", 1 },
	{ { "--x=1" }, 2, "flag provided but not defined: -x", 1 },
	{ { "-election=x", "-ttl=3" }, 2,
	  "invalid value \"3\" for flag -ttl: parse error", 1 },
	{ { "-election=x", "-ttl" }, 2, "flag needs an argument: -ttl", 1 },
	{ { "-v=x" }, 2, "invalid value \"x\" for flag -v: "
	  "strconv.ParseInt: parsing \"x\": invalid syntax", 1 },
	{ { "-v=99999999999" }, 2, "invalid value \"99999999999\" for flag "
	  "-v: strconv.ParseInt: parsing \"99999999999\": value out of range",
	  1 },
	{ { "-logtostderr=x" }, 2,
	  "invalid boolean value \"x\" for -logtostderr: parse error", 1 },
	{ { "-log_file_max_size=1__0" }, 2, "invalid value \"1__0\" for flag "
	  "-log_file_max_size: parse error", 1 },
	{ { "-log_file_max_size=18446744073709551616" }, 2, "invalid value "
	  "\"18446744073709551616\" for flag -log_file_max_size: value out "
	  "of range", 1 },
	{ { "-vmodule=a=-1" }, 2, "invalid value \"a=-1\" for flag -vmodule: "
	  "negative value for vmodule level", 1 },
	{ { "-vmodule=a==1" }, 2, "invalid value \"a==1\" for flag -vmodule: "
	  "syntax error: expect comma-separated list of filename=N", 1 },
	{ { "-log_backtrace_at=a.go:0" }, 2, "invalid value \"a.go:0\" for "
	  "flag -log_backtrace_at: negative or zero value for level", 1 },
	{ { "-log_backtrace_at=" }, 2, "invalid value \"\" for flag "
	  "-log_backtrace_at: syntax error: expect file.go:234", 1 },
	{ { "-stderrthreshold=bogus" }, 2, "invalid value \"bogus\" for flag "
	  "-stderrthreshold: strconv.ParseInt: parsing \"bogus\": invalid "
	  "syntax", 1 },
	{ { "---x" }, 2, "bad flag syntax: ---x", 1 },
	{ { "-=x" }, 2, "bad flag syntax: -=x", 1 },
	{ { "-v=a\"b\\\t\x01\xff" }, 2, "invalid value \"a\\\"b\\\\\\t\\x01"
	  "\\xff\" for flag -v: strconv.ParseInt: parsing \"a\\\"b\\\\\\t"
	  "\\x01\\xff\": invalid syntax", 1 },
	/* Parsed by Go; what k8s-elector or leaderd then refuses. */
	{ { "-namespace=n" }, 2, "-election: missing required value: "
	  "election name was not specified (see '--help' for usage)", 0 },
	{ { "-logtostderr", "false", "-election=x" }, 2, "-election: missing "
	  "required value: election name was not specified (see '--help' "
	  "for usage)", 0 },
	{ { "-election=x", "-ttl=1500ms" }, 2, "-ttl: \"1500ms\" is not a "
	  "whole number of seconds: k8s-elector writes leaseDurationSeconds "
	  "1 but waits the whole ttl itself, and leaderd keeps the record "
	  "and the wait equal; use -ttl=1s or -ttl=2s", 0 },
	{ { "-election=x", "-ttl=500ms" }, 2, "-ttl: \"500ms\" is under one "
	  "second: k8s-elector would write leaseDurationSeconds 0, which the "
	  "API refuses on a Lease; use -ttl=1s or more", 0 },
	{ { "-election=x", "-lock-type=configmaps", "-ttl=2s" }, 2,
	  "-ttl: \"2s\" with -lock-type=configmaps is too short beside "
	  "k8s-elector pods: that record's times are whole seconds, so they "
	  "may see it unchanged for 1s + 3.2 x ttl/6, longer than the ttl, "
	  "and take the lock from a live leader; use -ttl=3s or more, or "
	  "-lock-type=leases", 0 },
	{ { "-election=x", "-ttl=0" }, 2, "-ttl: \"0\" is not above zero: "
	  "k8s-elector panics on it (leaseDuration must be greater than "
	  "renewDeadline) and exits 2; give a ttl such as -ttl=10s (its "
	  "default)", 0 },
	{ { "-election=x", "-ttl=-3s" }, 2, "-ttl: \"-3s\" is not above "
	  "zero: k8s-elector panics on it (leaseDuration must be greater "
	  "than renewDeadline) and exits 2; give a ttl such as -ttl=10s (its "
	  "default)", 0 },
};

/*
 * What Go prints for k8s-elector's flag set under "Usage of ARGV0:"
 * (test/compat/vapor-flags -h), without the last newline.
 */
static const char go_usage[] =
    "  -add_dir_header\n"
    "    \tIf true, adds the file directory to the header\n"
    "  -alsologtostderr\n"
    "    \tlog to standard error as well as files\n"
    "  -election string\n"
    "    \tThe name of the election. This is required.\n"
    "  -http string\n"
    "    \tThe HTTP address (host:port) which leader state will "
    "be reported on.\n"
    "  -id string\n"
    "    \tThe ID of the election participant. If not set, the "
    "hostname, as reported by the kernel, is used.\n"
    "  -kubeconfig string\n"
    "    \tThe kubeconfig file to use. If not set, in-cluster "
    "config will be used.\n"
    "  -lock-type string\n"
    "    \tThe type of Kubernetes object to use for the lock "
    "(leases, endpoints, configmaps) (default \"leases\")\n"
    "  -log_backtrace_at value\n"
    "    \twhen logging hits line file:N, emit a stack trace\n"
    "  -log_dir string\n"
    "    \tIf non-empty, write log files in this directory\n"
    "  -log_file string\n"
    "    \tIf non-empty, use this log file\n"
    "  -log_file_max_size uint\n"
    "    \tDefines the maximum size a log file can grow to. "
    "Unit is megabytes. If the value is 0, the maximum file "
    "size is unlimited. (default 1800)\n"
    "  -logtostderr\n"
    "    \tlog to standard error instead of files (default "
    "true)\n"
    "  -namespace string\n"
    "    \tThe Kubernetes namespace to run the election in. If "
    "not set, elections will run in the default namespace. "
    "(default \"default\")\n"
    "  -skip_headers\n"
    "    \tIf true, avoid header prefixes in the log messages\n"
    "  -skip_log_headers\n"
    "    \tIf true, avoid headers when opening log files\n"
    "  -stderrthreshold value\n"
    "    \tlogs at or above this threshold go to stderr "
    "(default 2)\n"
    "  -ttl duration\n"
    "    \tThe TTL for the election. (default 10s)\n"
    "  -v value\n"
    "    \tnumber for the log level verbosity\n"
    "  -vmodule value\n"
    "    \tcomma-separated list of pattern=N settings for "
    "file-filtered logging";

static int
argv_of(const char *const args[MAXARGS], char *argv[MAXARGS + 1])
{
	int	 n = 0;

	argv[n++] = (char *)(uintptr_t)"./elector";
	while (n <= MAXARGS && args[n - 1] != NULL) {
		argv[n] = (char *)(uintptr_t)args[n - 1];
		n++;
	}
	argv[n] = NULL;
	return n;
}

static void
env_clear(void)
{
	unsetenv("POD_NAME");
	unsetenv("POD_NAMESPACE");
	unsetenv("POD_IP");
	unsetenv("ELECTOR_POD_NAME");
}

static void
test_ok(void **state)
{
	const struct ok_case	*k;
	struct compat_cmdline	 out;
	static struct config	 c;
	char			 err[CONFIG_ERR_MAX], host[CONFIG_STR_MAX];
	char			*argv[MAXARGS + 1];
	size_t			 i;
	int			 argc;

	(void)state;
	env_clear();
	setenv("POD_NAME", "not-the-identity", 1);
	setenv("POD_NAMESPACE", "not-the-namespace", 1);
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	for (i = 0; i < sizeof(ok_cases) / sizeof(ok_cases[0]); i++) {
		k = &ok_cases[i];
		argc = argv_of(k->args, argv);
		config_defaults(&c);
		err[0] = '\0';
		if (compat_args(&c, "vapor", argc, argv, &out, err,
		    sizeof(err)) == -1)
			fail_msg("case %zu (%s): %s", i, k->args[0], err);
		assert_int_equal(out.exit_status, -1);
		assert_null(out.cmd);
		config_finish(&c, "/nonexistent");
		if (config_validate(&c, err, sizeof(err)) == -1)
			fail_msg("case %zu (%s): %s", i, k->args[0], err);
		assert_string_equal(c.compat, "vapor");
		assert_string_equal(c.lock_name, k->name);
		assert_string_equal(c.lock_namespace, k->ns);
		assert_string_equal(c.lock_type, k->type);
		assert_string_equal(c.listen_http, k->http);
		assert_string_equal(c.identity, k->id ? k->id : host);
		assert_int_equal(c.lease_duration_ms, k->lease_ms);
		assert_int_equal(c.renew_deadline_ms, k->renew_ms);
		assert_int_equal(c.retry_period_ms, k->retry_ms);
		assert_string_equal(c.log_level, k->level);
		assert_string_equal(c.kubeconfig, "");
		/* The pod label: k8s-elector/status on the hostname's pod. */
		assert_true(c.label_enabled);
		assert_string_equal(c.label_key, "k8s-elector/status");
		assert_string_equal(c.label_pod, host);
		assert_string_equal(c.label_namespace, k->ns);
		assert_true(c.release_on_cancel);
	}
	env_clear();
}

static void
test_bad(void **state)
{
	const struct bad_case	*k;
	struct compat_cmdline	 out;
	static struct config	 c;
	char			 err[CONFIG_ERR_MAX], first[1024];
	char			*argv[MAXARGS + 1];
	const char		*nl;
	size_t			 i;
	int			 argc, r;

	(void)state;
	env_clear();
	assert_string_equal(compat_usage("vapor"), go_usage);
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		k = &bad_cases[i];
		argc = argv_of(k->args, argv);
		config_defaults(&c);
		err[0] = '\0';
		r = compat_args(&c, "vapor", argc, argv, &out, err,
		    sizeof(err));
		if (r != -1)
			fail_msg("case %zu (%s) was accepted", i,
			    k->args[0]);
		assert_int_equal(out.exit_status, k->status);
		nl = strchr(err, '\n');
		snprintf(first, sizeof(first), "%.*s",
		    nl ? (int)(nl - err) : (int)strlen(err), err);
		assert_string_equal(first, k->first);
		if (!k->usage) {
			assert_null(nl);
			continue;
		}
		/* Go's flag.PrintDefaults, with no newline at the end. */
		assert_string_equal(strchr(k->status == 0 ? err : nl + 1,
		    '\n') + 1, go_usage);
	}
}

/* $ELECTOR_POD_NAME names the pod to label; nothing else moves. */
static void
test_pod_name(void **state)
{
	struct compat_cmdline	 out;
	static struct config	 c;
	char			 err[CONFIG_ERR_MAX], host[CONFIG_STR_MAX];
	char			*argv[] = { (char *)(uintptr_t)"elector",
				    (char *)(uintptr_t)"-election=e",
				    (char *)(uintptr_t)"-namespace=team-b",
				    NULL };

	(void)state;
	env_clear();
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	setenv("ELECTOR_POD_NAME", "web-7d9f-x2", 1);
	config_defaults(&c);
	assert_int_equal(compat_args(&c, "vapor", 3, argv, &out, err,
	    sizeof(err)), 0);
	config_finish(&c, "/nonexistent");
	assert_int_equal(config_validate(&c, err, sizeof(err)), 0);
	assert_string_equal(c.label_pod, "web-7d9f-x2");
	assert_string_equal(c.label_namespace, "team-b");
	assert_string_equal(c.identity, host);
	env_clear();
}

/* Selection without --compat: a single-dash flag only vapor has. */
static void
test_detect(void **state)
{
	static const struct {
		const char	*args[8];
		const char	*peer;	/* NULL: none */
	} cases[] = {
		{ { "elector", "-election=x" }, "vapor" },
		{ { "elector", "-v=2", "-namespace", "n" }, "vapor" },
		{ { "./elector", "-election", "x", "-http", "h:1" }, "vapor" },
		{ { "leaderd", "-v", "2", "-ttl=3s" }, "vapor" },
		{ { "leaderd", "-logtostderr", "-lock-type=leases" }, "vapor" },
		{ { "leaderd", "-http", "127.0.0.1:1", "-election", "x" },
		  "vapor" },
		/* leaderd's own spellings, and the classic's, do not. */
		{ { "leaderd", "--election=x", "--ttl=3s" }, NULL },
		{ { "leaderd", "-v", "--election-namespace=x" }, NULL },
		{ { "leaderd", "-election-namespace=x" }, NULL },
		/* Only where Go's flag would read it. */
		{ { "leaderd", "run", "-election=x" }, NULL },
		{ { "k8s-await-election", "cmd", "-ttl=3" }, "await" },
		{ { "leaderd", "--", "-election=x" }, NULL },
		{ { "leaderd", "-", "-election=x" }, NULL },
		/* The classic's /server comes first (it refuses -election). */
		{ { "/server", "-election=x" }, "classic" },
		{ { "elector", "--compat=", "-election=x" }, "" },
	};
	const char	*got;
	size_t		 i;
	int		 n;

	(void)state;
	env_clear();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (n = 0; n < 8 && cases[i].args[n] != NULL; n++)
			;
		got = compat_detect(n, (char *const *)(uintptr_t)
		    cases[i].args);
		if ((got == NULL) != (cases[i].peer == NULL) ||
		    (got != NULL && strcmp(got, cases[i].peer) != 0))
			fail_msg("case %zu (%s %s): got %s, want %s", i,
			    cases[i].args[0], cases[i].args[1],
			    got ? got : "none",
			    cases[i].peer ? cases[i].peer : "none");
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ok),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_pod_name),
		cmocka_unit_test(test_detect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
