/*
 * config_test.c -- config_load, config_set, config_finish,
 * config_validate and config_dump.
 *
 * Golden cases live in $TEST_DIR/config: valid/NAME.yaml must load and
 * validate, and config_dump must print valid/NAME.out; invalid/NAME.yaml
 * must fail to load or to validate with exactly invalid/NAME.err.  The
 * test runs from $TEST_DIR/config, so paths in messages read
 * "valid/NAME.yaml".  The environment is fixed by golden_env().
 */

#include <sys/stat.h>

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
#include "config/config_int.h"
#include "core/elector.h"
#include "testutil.h"

#define ERRLEN	CONFIG_ERR_MAX

static char	 test_dir[PATH_MAX];	/* $TEST_DIR */
static char	 tmp_dir[PATH_MAX];	/* scratch files */

/* The environment every golden case sees. */
static void
golden_env(void)
{
	setenv("POD_NAME", "pod-0", 1);
	setenv("POD_NAMESPACE", "team-a", 1);
	setenv("LEADERD_APP", "my-app", 1);
	setenv("LEADERD_EMPTY", "", 1);
	setenv("LEADERD_PERIOD", "1m30s", 1);
	unsetenv("LEADERD_UNSET");
}

/* Write text to the scratch file name; returns its path (static). */
static const char *
scratch(const char *name, const char *text)
{
	static char	 path[PATH_MAX + 64];
	FILE		*f;

	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Load text as a file; returns config_load's result. */
static int
load_text(struct config *c, const char *text, char *err)
{
	return config_load(c, scratch("t.yaml", text), err, ERRLEN);
}

static int
setup(void **state)
{
	const char	*d;

	(void)state;
	if ((d = getenv("TEST_DIR")) == NULL) {
		fprintf(stderr, "TEST_DIR is not set\n");
		return -1;
	}
	snprintf(test_dir, sizeof(test_dir), "%s", d);
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/config_test.XXXXXX");
	if (mkdtemp(tmp_dir) == NULL)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	char	 cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
test_key_table(void **state)
{
	size_t	 i;

	(void)state;
	for (i = 0; i < CONFIG_NKEYS; i++) {
		assert_int_equal(config_keys[i].key, i);
		assert_ptr_equal(config_keydef(config_keys[i].path),
		    &config_keys[i]);
	}
	assert_null(config_keydef("lock"));
	assert_null(config_keydef("nope"));
}

static void
test_defaults(void **state)
{
	struct config	 c;
	size_t		 i;

	(void)state;
	memset(&c, 0x5a, sizeof(c));
	config_defaults(&c);
	assert_string_equal(c.identity, "");
	assert_string_equal(c.lock_type, "leases");
	assert_string_equal(c.lock_namespace, "");
	assert_string_equal(c.lock_name, "");
	assert_int_equal(c.lease_duration_ms, 15000);
	assert_int_equal(c.renew_deadline_ms, 10000);
	assert_int_equal(c.retry_period_ms, 2000);
	assert_int_equal(c.release_on_cancel, 1);
	assert_string_equal(c.listen_http, "localhost:4040");
	assert_string_equal(c.listen_unix, "");
	assert_int_equal(c.listen_max_streams, 1024);
	assert_string_equal(c.kubeconfig, "");
	assert_int_equal(c.request_timeout_ms, 5000);
	assert_string_equal(c.log_level, "info");
	assert_string_equal(c.log_format, "text");
	assert_int_equal(c.readyz_leader_only, 0);
	assert_int_equal(c.insecure_http, 0);
	for (i = 0; i < CONFIG_NKEYS; i++) {
		assert_int_equal(c.set[i], 0);
		assert_string_equal(c.origin[i].src, "");
	}
}

/* Load, finish and validate path; returns what was printed, or errors. */
static char *
run_case(const char *path, int *ok)
{
	struct config	 c;
	char		*out;

	out = calloc(1, 2 * ERRLEN);
	assert_non_null(out);
	config_defaults(&c);
	*ok = 0;
	if (config_load(&c, path, out, ERRLEN) == -1)
		return out;
	config_finish(&c, "sa-none");
	if (config_validate(&c, out, ERRLEN) == -1)
		return out;
	*ok = 1;
	config_dump(&c, 0, out, 2 * ERRLEN);
	return out;
}

static void
golden_dir(const char *kind, int want_ok, int min_cases)
{
	char		**names, yaml[512], gold[512], *out, *text;
	int		 n, i, ok, failed = 0;

	assert_int_equal(chdir(test_dir), 0);
	assert_int_equal(chdir("config"), 0);
	golden_env();
	n = list_cases(kind, ".yaml", &names);
	if (n < min_cases)
		fail_msg("%s: %d cases, expected at least %d", kind, n,
		    min_cases);
	for (i = 0; i < n; i++) {
		snprintf(yaml, sizeof(yaml), "%s/%s.yaml", kind, names[i]);
		snprintf(gold, sizeof(gold), "%s/%s.%s", kind, names[i],
		    want_ok ? "out" : "err");
		out = run_case(yaml, &ok);
		if (ok != want_ok) {
			fprintf(stderr, "%s: %s, expected %s:\n%s\n", yaml,
			    ok ? "valid" : "invalid",
			    want_ok ? "valid" : "invalid", out);
			failed++;
			free(out);
			continue;
		}
		if (!want_ok) {
			/* A .err file ends its last line with a newline. */
			assert_non_null(text = malloc(strlen(out) + 2));
			snprintf(text, strlen(out) + 2, "%s\n", out);
			free(out);
			out = text;
		}
		if (expect_golden(out, gold) == -1)
			failed++;
		free(out);
	}
	free_names(names);
	if (failed > 0)
		fail_msg("%d of %d %s cases failed", failed, n, kind);
}

static void
test_golden_valid(void **state)
{
	(void)state;
	golden_dir("valid", 1, 8);
}

static void
test_golden_invalid(void **state)
{
	(void)state;
	golden_dir("invalid", 0, 15);
}

/* The example configs pass, as `leaderd -n` would check them. */
static void
test_examples(void **state)
{
	const char	*files[] = { "leaderd.yaml", "minimal.yaml" };
	char		 path[PATH_MAX + 64], err[ERRLEN];
	struct config	 c;
	size_t		 i;

	(void)state;
	golden_env();
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/../../config/%s", test_dir,
		    files[i]);
		config_defaults(&c);
		if (config_load(&c, path, err, sizeof(err)) == -1)
			fail_msg("%s: %s", path, err);
		config_finish(&c, "/nonexistent");
		if (config_validate(&c, err, sizeof(err)) == -1)
			fail_msg("%s: %s", path, err);
		assert_string_equal(c.identity, "pod-0");
		assert_string_equal(c.lock_namespace, "team-a");
		assert_string_equal(c.lock_name, "my-app");
	}
}

static void
test_set(void **state)
{
	struct config	 c;
	char		 err[ERRLEN];

	(void)state;
	config_defaults(&c);
	assert_int_equal(config_set(&c, "lease_duration", "1m", "--lease-"
	    "duration", err, sizeof(err)), 0);
	assert_int_equal(c.lease_duration_ms, 60000);
	assert_int_equal(c.set[CONFIG_LEASE_DURATION], 1);
	assert_string_equal(c.origin[CONFIG_LEASE_DURATION].src,
	    "--lease-duration");
	assert_int_equal(c.origin[CONFIG_LEASE_DURATION].line, 0);
	assert_int_equal(c.origin[CONFIG_LEASE_DURATION].col, 0);

	assert_int_equal(config_set(&c, "lock.name", "app", "--election", err,
	    sizeof(err)), 0);
	assert_string_equal(c.lock_name, "app");
	assert_int_equal(config_set(&c, "release_on_cancel", "false",
	    "--release-on-cancel", err, sizeof(err)), 0);
	assert_int_equal(c.release_on_cancel, 0);
	assert_int_equal(config_set(&c, "readyz.leader_only", "true",
	    "--readyz-leader-only", err, sizeof(err)), 0);
	assert_int_equal(c.readyz_leader_only, 1);
	/* Flag values are literal: the shell has expanded them already. */
	assert_int_equal(config_set(&c, "identity", "a$b${X}", "--id", err,
	    sizeof(err)), 0);
	assert_string_equal(c.identity, "a$b${X}");

	assert_int_equal(config_set(&c, "lease_duration", "10",
	    "--lease-duration", err, sizeof(err)), -1);
	assert_string_equal(err, "--lease-duration: lease_duration: invalid "
	    "duration \"10\": missing unit; add a unit such as s or ms");
	assert_int_equal(c.lease_duration_ms, 60000);	/* unchanged */
	assert_int_equal(config_set(&c, "release_on_cancel", "yes",
	    "--release-on-cancel", err, sizeof(err)), -1);
	assert_string_equal(err, "--release-on-cancel: release_on_cancel: "
	    "\"yes\" is not a boolean; write true or false");
	assert_int_equal(config_set(&c, "lock.nme", "x", "--x", err,
	    sizeof(err)), -1);
	assert_string_equal(err, "--x: unknown configuration key lock.nme");
	assert_int_equal(config_set(&c, "log.level", "a-very-long-log-level",
	    "--log-level", err, sizeof(err)), -1);
	assert_string_equal(err, "--log-level: value for log.level is too "
	    "long (at most 15 bytes)");
}

/* Flags override the file and take the blame for conflicts. */
static void
test_flag_over_file(void **state)
{
	struct config	 c;
	char		 err[ERRLEN];

	(void)state;
	golden_env();
	config_defaults(&c);
	assert_int_equal(load_text(&c, "lock:\n  name: app\n"
	    "lease_duration: 20s\nrenew_deadline: 10s\n", err), 0);
	assert_int_equal(config_set(&c, "renew_deadline", "30s",
	    "--renew-deadline", err, sizeof(err)), 0);
	config_finish(&c, NULL);
	assert_int_equal(config_validate(&c, err, sizeof(err)), -1);
	assert_string_equal(err, "--renew-deadline: renew_deadline (30s) must "
	    "be less than lease_duration (20s); lower renew_deadline or "
	    "raise lease_duration");

	/* A flag on the other side of the conflict is blamed instead. */
	config_defaults(&c);
	assert_int_equal(load_text(&c, "lock:\n  name: app\n"
	    "renew_deadline: 10s\n", err), 0);
	assert_int_equal(config_set(&c, "lease_duration", "5s",
	    "--lease-duration", err, sizeof(err)), 0);
	config_finish(&c, NULL);
	assert_int_equal(config_validate(&c, err, sizeof(err)), -1);
	assert_string_equal(err, "--lease-duration: renew_deadline (10s) must "
	    "be less than lease_duration (5s); lower renew_deadline or "
	    "raise lease_duration");

	/* A file value over a default is blamed. */
	config_defaults(&c);
	assert_int_equal(load_text(&c, "lock:\n  name: app\n"
	    "lease_duration: 10s\n", err), 0);
	config_finish(&c, NULL);
	assert_int_equal(config_validate(&c, err, sizeof(err)), -1);
	assert_true(strstr(err, "t.yaml:3:17: renew_deadline (10s) must be "
	    "less than lease_duration (10s)") != NULL);

	/* Both defaults: leaderd itself. */
	config_defaults(&c);
	assert_int_equal(config_set(&c, "lock.name", "app", "--election", err,
	    sizeof(err)), 0);
	c.renew_deadline_ms = 20000;
	config_finish(&c, NULL);
	assert_int_equal(config_validate(&c, err, sizeof(err)), -1);
	assert_string_equal(err, "leaderd: renew_deadline (20s) must be less "
	    "than lease_duration (15s); lower renew_deadline or raise "
	    "lease_duration");
}

static void
test_finish(void **state)
{
	struct config	 c;
	char		 host[256], sa[PATH_MAX + 16];

	(void)state;
	/* From the environment. */
	setenv("POD_NAME", "pod-7", 1);
	setenv("POD_NAMESPACE", "ns-7", 1);
	config_defaults(&c);
	config_finish(&c, "/nonexistent");
	assert_string_equal(c.identity, "pod-7");
	assert_string_equal(c.origin[CONFIG_IDENTITY].src, "$POD_NAME");
	assert_string_equal(c.lock_namespace, "ns-7");
	assert_string_equal(c.origin[CONFIG_LOCK_NAMESPACE].src,
	    "$POD_NAMESPACE");
	assert_int_equal(c.set[CONFIG_IDENTITY], 0);

	/* Explicit values are kept. */
	config_defaults(&c);
	assert_int_equal(config_set(&c, "identity", "me", "--id", host,
	    sizeof(host)), 0);
	assert_int_equal(config_set(&c, "lock.namespace", "ns", "--ns", host,
	    sizeof(host)), 0);
	config_finish(&c, "/nonexistent");
	assert_string_equal(c.identity, "me");
	assert_string_equal(c.lock_namespace, "ns");

	/* Empty variables count as unset: the hostname, the SA file. */
	setenv("POD_NAME", "", 1);
	unsetenv("POD_NAMESPACE");
	snprintf(sa, sizeof(sa), "%s/sa", tmp_dir);
	mkdir(sa, 0700);
	scratch("sa/namespace", "  \tkube-system \n\n");
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	host[sizeof(host) - 1] = '\0';
	config_defaults(&c);
	config_finish(&c, sa);
	assert_string_equal(c.identity, host);
	assert_string_equal(c.origin[CONFIG_IDENTITY].src, "");
	assert_string_equal(c.lock_namespace, "kube-system");
	assert_true(strstr(c.origin[CONFIG_LOCK_NAMESPACE].src,
	    "/sa/namespace") != NULL);

	/* request_timeout follows renew_deadline unless given. */
	{
		static const uint64_t rt[][2] = { { 10000, 5000 },
		    { 4000, 2000 }, { 1500, 1000 }, { 1000, 500 },
		    { 60000, 30000 }, { 1, 5000 }, { 0, 5000 } };
		size_t i;

		for (i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
			config_defaults(&c);
			c.renew_deadline_ms = rt[i][0];
			config_finish(&c, "/nonexistent");
			if (c.request_timeout_ms != rt[i][1])
				fail_msg("renew_deadline %llu: request_timeout "
				    "%llu, want %llu",
				    (unsigned long long)rt[i][0],
				    (unsigned long long)c.request_timeout_ms,
				    (unsigned long long)rt[i][1]);
		}
		config_defaults(&c);
		assert_int_equal(config_set(&c, "kubernetes.request_timeout",
		    "7s", "--request-timeout", host, sizeof(host)), 0);
		c.renew_deadline_ms = 4000;
		config_finish(&c, "/nonexistent");
		assert_int_equal(c.request_timeout_ms, 7000);
	}

	/* An empty namespace file, then none: "default". */
	scratch("sa/namespace", " \n");
	config_defaults(&c);
	config_finish(&c, sa);
	assert_string_equal(c.lock_namespace, "default");
	assert_string_equal(c.origin[CONFIG_LOCK_NAMESPACE].src, "");
	config_defaults(&c);
	config_finish(&c, "/nonexistent");
	assert_string_equal(c.lock_namespace, "default");
	golden_env();
}

/* A failed load leaves the config as it was. */
static void
test_load_atomic(void **state)
{
	struct config	 c, before;
	char		 err[ERRLEN];

	(void)state;
	golden_env();
	config_defaults(&c);
	assert_int_equal(config_set(&c, "lock.name", "keep", "--election",
	    err, sizeof(err)), 0);
	before = c;
	assert_int_equal(load_text(&c, "lock:\n  name: other\n"
	    "lease_duration: 20s\nretry_period: bad\n", err), -1);
	assert_memory_equal(&c, &before, sizeof(c));

	/* A good load applies over what c holds. */
	assert_int_equal(load_text(&c, "lease_duration: 20s\n", err), 0);
	assert_string_equal(c.lock_name, "keep");
	assert_int_equal(c.lease_duration_ms, 20000);
	assert_string_equal(c.origin[CONFIG_LOCK_NAME].src, "--election");

	/* Empty files and comments only are no keys at all. */
	assert_int_equal(load_text(&c, "", err), 0);
	assert_int_equal(load_text(&c, "# nothing\n\n", err), 0);
	assert_int_equal(load_text(&c, "---\n...\n", err), 0);
	assert_string_equal(c.lock_name, "keep");
}

static void
test_load_file_errors(void **state)
{
	struct config	 c;
	char		 err[ERRLEN], *big, path[PATH_MAX + 64];
	size_t		 n = 1024 * 1024 + 10;

	(void)state;
	config_defaults(&c);
	assert_int_equal(config_load(&c, "/nonexistent/leaderd.yaml", err,
	    sizeof(err)), -1);
	assert_string_equal(err, "/nonexistent/leaderd.yaml: cannot open: No "
	    "such file or directory");
	assert_int_equal(config_load(&c, tmp_dir, err, sizeof(err)), -1);
	assert_true(strstr(err, ": not a regular file") != NULL);
	assert_non_null(big = malloc(n + 1));
	memset(big, '#', n);
	big[n] = '\0';
	assert_int_equal(load_text(&c, big, err), -1);
	assert_true(strstr(err, "file too large") != NULL);
	free(big);

	/* A FIFO is refused at once, not waited on (I1). */
	alarm(20);
	snprintf(path, sizeof(path), "%s/fifo.yaml", tmp_dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(config_load(&c, path, err, sizeof(err)), -1);
	assert_true(strstr(err, ": not a regular file") != NULL);
	unlink(path);
	alarm(0);
}

/* Every error is reported, and a small buffer only truncates them. */
static void
test_all_errors(void **state)
{
	static const char text[] =
	    "lease_duration: 10\n"
	    "lock:\n"
	    "  nmae: x\n"
	    "release_on_cancel: yes\n"
	    "identity: ${LEADERD_UNSET}\n";
	struct config	 c;
	char		 err[ERRLEN], small[40];
	const char	*p;
	int		 lines = 1;

	(void)state;
	golden_env();
	config_defaults(&c);
	assert_int_equal(load_text(&c, text, err), -1);
	for (p = err; *p != '\0'; p++)
		if (*p == '\n')
			lines++;
	assert_int_equal(lines, 4);
	assert_int_equal(err[strlen(err) - 1] != '\n', 1);

	memset(small, 'x', sizeof(small));
	assert_int_equal(config_load(&c, scratch("t.yaml", text), small,
	    sizeof(small)), -1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	/* Even with no room at all the load fails. */
	assert_int_equal(config_load(&c, scratch("t.yaml", text), small, 0),
	    -1);
	assert_int_equal(config_load(&c, scratch("t.yaml", text), small, 1),
	    -1);
	assert_int_equal(small[0], '\0');
}

struct check {
	const char	*key;	/* set through config_set as --flag */
	const char	*value;
	const char	*err;	/* exact error, or NULL for none */
};

/* The rule every bad identity is told (config_check.c). */
#define RULE		"an identity is 1 to 253 letters, digits, '-', '.' and '_', " \
			"starting and ending with a letter or digit, such as a pod " \
			"name (fix identity, --id or $POD_NAME)"

static const struct check checks[] = {
	{ "listen.http", "127.0.0.1:4040", NULL },
	{ "listen.http", "[::1]:4040", NULL },
	{ "listen.http", ":4040", NULL },
	{ "listen.http", "0.0.0.0:0", NULL },
	{ "listen.http", "localhost:65535", NULL },
	{ "listen.http", "", "--f: no listener: listen.http and listen.unix "
	    "are both empty; set at least one" },
	{ "listen.http", "4040", "--f: listen.http \"4040\": it must be "
	    "host:port, such as 127.0.0.1:4040 (\"\" turns TCP off)" },
	{ "listen.http", "127.0.0.1:65536", "--f: listen.http "
	    "\"127.0.0.1:65536\": the port must be a number from 0 to 65535 "
	    "(\"\" turns TCP off)" },
	{ "listen.http", "127.0.0.1:", "--f: listen.http \"127.0.0.1:\": the "
	    "port must be a number from 0 to 65535 (\"\" turns TCP off)" },
	{ "listen.http", "127.0.0.1:http", "--f: listen.http "
	    "\"127.0.0.1:http\": the port must be a number from 0 to 65535 "
	    "(\"\" turns TCP off)" },
	{ "listen.http", "::1:4040", "--f: listen.http \"::1:4040\": an IPv6 "
	    "address needs brackets, such as [::1]:4040 (\"\" turns TCP "
	    "off)" },
	{ "listen.http", "[::1:4040", "--f: listen.http \"[::1:4040\": an "
	    "IPv6 address is written [addr]:port (\"\" turns TCP off)" },
	{ "listen.http", "[1.2.3.4]:1", "--f: listen.http \"[1.2.3.4]:1\": "
	    "not a valid IPv6 address inside [ ] (\"\" turns TCP off)" },
	{ "listen.http", "300.0.0.1:80", "--f: listen.http \"300.0.0.1:80\": "
	    "not a valid IPv4 address (\"\" turns TCP off)" },
	{ "listen.http", "a b:80", "--f: listen.http \"a b:80\": the host "
	    "must be an IP address or a host name (\"\" turns TCP off)" },
	{ "listen.unix", "/run/l.sock", NULL },
	{ "listen.unix", "run/l.sock", "--f: listen.unix \"run/l.sock\" must "
	    "be an absolute path" },
	{ "lock.name", "a.b-c.0", NULL },
	{ "lock.name", "My_App", "--f: lock.name \"My_App\" is not a valid "
	    "Lease name: use at most 253 lowercase letters, digits, '-' and "
	    "'.', starting and ending with a letter or digit" },
	{ "lock.name", "a..b", "--f: lock.name \"a..b\" is not a valid Lease "
	    "name: use at most 253 lowercase letters, digits, '-' and '.', "
	    "starting and ending with a letter or digit" },
	{ "lock.name", "-a", "--f: lock.name \"-a\" is not a valid Lease "
	    "name: use at most 253 lowercase letters, digits, '-' and '.', "
	    "starting and ending with a letter or digit" },
	{ "lock.name", "", "--f: lock.name is required (the name of the "
	    "Lease to compete for); set lock.name in the file or "
	    "--election" },
	{ "lock.namespace", "kube-system", NULL },
	{ "lock.namespace", "a.b", "--f: lock.namespace \"a.b\" is not a "
	    "valid namespace: use at most 63 lowercase letters, digits and "
	    "'-', starting and ending with a letter or digit" },
	{ "lock.namespace", "", "--f: lock.namespace is empty; set it, or "
	    "remove it to use $POD_NAMESPACE or the service account's "
	    "namespace" },
	{ "lock.type", "endpoint", "--f: lock.type \"endpoint\" is not "
	    "supported; use leases (or endpoints, configmaps, "
	    "endpointsleases, configmapsleases to share a lock with older "
	    "clients)" },
	{ "lock.type", "leases", NULL },
	{ "identity", "pod-0_x.y-Z9", NULL },
	{ "identity", "a", NULL },
	{ "lock.type", "endpoints", NULL },
	{ "lock.type", "configmaps", NULL },
	{ "lock.type", "endpointsleases", NULL },
	{ "lock.type", "configmapsleases", NULL },
	{ "identity", "", "--f: identity is empty; set identity in the file, "
	    "--id, or $POD_NAME" },
	{ "identity", "a\tb", "--f: identity has byte 0x09 at byte 2; " RULE },
	{ "identity", "a\nb", "--f: identity has byte 0x0a at byte 2; " RULE },
	{ "identity", "a b", "--f: identity has byte 0x20 at byte 2; " RULE },
	{ "identity", "a\x7f", "--f: identity has byte 0x7f at byte 2; " RULE },
	{ "identity", "a\xc3", "--f: identity has byte 0xc3 at byte 2; " RULE },
	{ "identity", "caf\xc3\xa9", "--f: identity has byte 0xc3 at byte 4; "
	    RULE },
	{ "identity", "a/b", "--f: identity has \"/\" at byte 2; " RULE },
	{ "identity", "pod:0", "--f: identity has \":\" at byte 4; " RULE },
	{ "identity", ".a", "--f: identity has \".\" at byte 1; " RULE },
	{ "identity", "a_", "--f: identity has \"_\" at byte 2; " RULE },
	{ "identity", "-", "--f: identity has \"-\" at byte 1; " RULE },
	{ "log.level", "debug", NULL },
	{ "log.level", "DEBUG", "--f: log.level \"DEBUG\" is not one of "
	    "error, warn, info, debug" },
	{ "log.format", "json", NULL },
	{ "log.format", "xml", "--f: log.format \"xml\" is not text or "
	    "json" },
	{ "renew_deadline", "2400ms", "--f: renew_deadline (2.4s) must be "
	    "more than 1.2 x retry_period (2s), that is more than 2.4s; "
	    "raise renew_deadline or lower retry_period\n--f: "
	    "kubernetes.request_timeout (5s) must be less than renew_deadline "
	    "(2.4s), so that a renew can fail and be retried in time; lower "
	    "request_timeout or raise renew_deadline" },
	{ "retry_period", "8333ms", NULL },
	{ "retry_period", "8334ms", "--f: renew_deadline (10s) must be more "
	    "than 1.2 x retry_period (8.334s); raise renew_deadline or lower "
	    "retry_period" },
	{ "lease_duration", "15500ms", "--f: lease_duration (15.5s) must be "
	    "a whole number of seconds, as the Lease stores "
	    "leaseDurationSeconds; use 15s or 16s" },
	{ "lease_duration", "0", "--f: lease_duration must be greater than "
	    "zero" },
	{ "retry_period", "0s", "--f: retry_period must be greater than "
	    "zero" },
	{ "kubernetes.request_timeout", "10s", "--f: "
	    "kubernetes.request_timeout (10s) must be less than "
	    "renew_deadline (10s), so that a renew can fail and be retried "
	    "in time; lower request_timeout or raise renew_deadline" },
	{ "kubernetes.request_timeout", "0s", "--f: "
	    "kubernetes.request_timeout must be greater than zero" },
};

/* One flag over a valid configuration, one expected outcome. */
static void
test_validate_table(void **state)
{
	struct config	 c;
	char		 err[ERRLEN];
	size_t		 i;
	int		 rc;

	(void)state;
	golden_env();
	for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		config_defaults(&c);
		assert_int_equal(config_set(&c, "lock.name", "app",
		    "--election", err, sizeof(err)), 0);
		config_finish(&c, NULL);
		if (config_set(&c, checks[i].key, checks[i].value, "--f", err,
		    sizeof(err)) != 0)
			fail_msg("config_set %s=\"%s\": %s", checks[i].key,
			    checks[i].value, err);
		rc = config_validate(&c, err, sizeof(err));
		if (checks[i].err == NULL && rc != 0)
			fail_msg("%s=\"%s\": unexpected error: %s",
			    checks[i].key, checks[i].value, err);
		if (checks[i].err != NULL && (rc != -1 ||
		    strcmp(err, checks[i].err) != 0))
			fail_msg("%s=\"%s\":\n  got  \"%s\"\n  want \"%s\"",
			    checks[i].key, checks[i].value, rc ? err : "(ok)",
			    checks[i].err);
	}
	/* Too long for sun_path. */
	config_defaults(&c);
	config_finish(&c, NULL);
	memset(c.listen_unix, 'a', 108);
	c.listen_unix[0] = '/';
	c.listen_unix[108] = '\0';
	c.set[CONFIG_LISTEN_UNIX] = 1;
	assert_int_equal(config_validate(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "leaderd: listen.unix is too long (108 "
	    "bytes; a unix socket path holds at most 107)"));
	c.listen_unix[107] = '\0';
	assert_null(strstr((config_validate(&c, err, sizeof(err)), err),
	    "listen.unix"));
}

/* The validator agrees with the elector's own timing check. */
static void
test_timing_agrees(void **state)
{
	static const uint64_t v[] = { 0, 1, 999, 1000, 1200, 2000, 2400,
	    2401, 3000, 5000, 10000, 14999, 15000, 16000, 60000 };
	struct config	 c;
	char		 err[ERRLEN], eerr[256];
	size_t		 a, b, d, n = sizeof(v) / sizeof(v[0]);
	int		 mine, theirs;

	(void)state;
	golden_env();
	for (a = 0; a < n; a++)
		for (b = 0; b < n; b++)
			for (d = 0; d < n; d++) {
				config_defaults(&c);
				config_finish(&c, NULL);
				snprintf(c.lock_name, sizeof(c.lock_name), "x");
				c.lease_duration_ms = v[a];
				c.renew_deadline_ms = v[b];
				c.retry_period_ms = v[d];
				c.request_timeout_ms = 1;
				mine = config_validate(&c, err, sizeof(err));
				theirs = elector_check_timing(v[a], v[b], v[d],
				    eerr, sizeof(eerr));
				if (mine != theirs)
					fail_msg("%llu/%llu/%llu: config %d "
					    "(%s), elector %d (%s)",
					    (unsigned long long)v[a],
					    (unsigned long long)v[b],
					    (unsigned long long)v[d], mine,
					    err, theirs, eerr);
			}
}

/* What config_dump prints reads back as the same configuration. */
static void
test_dump_round_trip(void **state)
{
	static const char *const idents[] = { "pod-0", "a$b", "$${X}",
	    "true", "no", "123", "1.5e3", "~", "null", "[x]", "- a", "a: b",
	    "a #b", " lead", "trail ", "q\"uote", "back\\slash", "tab\there",
	    "caf\xc3\xa9", "#x", "*alias", "&anchor", "!tag", "%pct", "@at",
	    "`tick", "{x}", "|x", ">x", "'x", "?x", ",x", "x:" };
	struct config	 c, back;
	char		 dump[8192], again[8192], err[ERRLEN];
	size_t		 i;

	(void)state;
	golden_env();
	for (i = 0; i < sizeof(idents) / sizeof(idents[0]); i++) {
		config_defaults(&c);
		config_finish(&c, NULL);
		snprintf(c.identity, sizeof(c.identity), "%s", idents[i]);
		snprintf(c.listen_http, sizeof(c.listen_http), "[::1]:0");
		snprintf(c.listen_unix, sizeof(c.listen_unix), "/x y/s");
		c.lease_duration_ms = 90000;
		c.retry_period_ms = 1500;
		config_dump(&c, 0, dump, sizeof(dump));
		config_defaults(&back);
		if (config_load(&back, scratch("d.yaml", dump), err,
		    sizeof(err)) == -1)
			fail_msg("identity \"%s\": dump does not load: %s\n%s",
			    idents[i], err, dump);
		assert_string_equal(back.identity, c.identity);
		assert_string_equal(back.lock_namespace, c.lock_namespace);
		assert_string_equal(back.listen_http, c.listen_http);
		assert_string_equal(back.listen_unix, c.listen_unix);
		assert_int_equal(back.lease_duration_ms, 90000);
		assert_int_equal(back.retry_period_ms, 1500);
		/* Origins differ (the file), values do not. */
		memcpy(back.origin, c.origin, sizeof(c.origin));
		config_dump(&back, 0, again, sizeof(again));
		assert_string_equal(again, dump);
	}
	/* Truncation: the length written, and a NUL. */
	assert_int_equal(config_dump(&c, 0, dump, 10), 9);
	assert_int_equal(strlen(dump), 9);
	assert_int_equal(config_dump(&c, 0, dump, 1), 0);
	assert_int_equal(dump[0], '\0');
}

/*
 * config_check_grace: run.grace must fit in lease_duration -
 * renew_deadline for the run mode's guarantee; the defaults (10s in
 * 15s - 10s) do not, and the message says what to change.
 */
static void
test_check_grace(void **state)
{
	struct {
		uint64_t	 ld, rd, grace;
		int		 ok;
	} cases[] = {
		{ 15000, 10000, 10000, 0 },	/* the defaults */
		{ 15000, 10000, 5000, 1 },	/* exactly the gap */
		{ 15000, 10000, 5001, 0 },
		{ 3000, 2000, 800, 1 },
		{ 3000, 2000, 0, 1 },
	};
	char		 err[ERRLEN];
	struct config	 c;
	size_t		 i;

	(void)state;
	config_defaults(&c);
	assert_int_equal(c.run_grace_ms, 10000);
	assert_string_equal(c.run_restart, "never");
	assert_string_equal(c.label_key, "leaderd.io/role");
	assert_int_equal(c.label_enabled, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c.lease_duration_ms = cases[i].ld;
		c.renew_deadline_ms = cases[i].rd;
		c.run_grace_ms = cases[i].grace;
		err[0] = '\0';
		assert_int_equal(config_check_grace(&c, err, sizeof(err)),
		    cases[i].ok ? 0 : -1);
		if (!cases[i].ok)
			assert_non_null(strstr(err, "lease_duration - "
			    "renew_deadline"));
	}
}

/*
 * shutdown_timeout: unset, 5s plus the actions' time; given, the whole
 * budget, which in run mode must exceed run.grace.
 */
static void
test_shutdown_budget(void **state)
{
	char		 err[ERRLEN];
	struct config	 c;

	(void)state;
	config_defaults(&c);
	assert_int_equal(c.shutdown_timeout_ms, 5000);
	assert_int_equal(config_shutdown_ms(&c, 0), 5000);
	assert_int_equal(config_shutdown_ms(&c, 11000), 16000);
	assert_int_equal(config_check_shutdown(&c, err, sizeof(err)), 0);
	assert_int_equal(config_set(&c, "shutdown_timeout", "10s",
	    "--shutdown-timeout", err, sizeof(err)), 0);
	assert_int_equal(config_shutdown_ms(&c, 11000), 10000);
	/* Equal to run.grace (10s): no room left for the release. */
	assert_int_equal(config_check_shutdown(&c, err, sizeof(err)), -1);
	assert_string_equal(err, "--shutdown-timeout: shutdown_timeout (10s) "
	    "must be longer than run.grace (10s): the budget counts from the "
	    "signal and covers the command's stop, then the release; raise "
	    "shutdown_timeout (e.g. to run.grace + 5s) or lower run.grace");
	c.run_grace_ms = 5000;
	assert_int_equal(config_check_shutdown(&c, err, sizeof(err)), 0);
	assert_int_equal(config_set(&c, "shutdown_timeout", "0s",
	    "--shutdown-timeout", err, sizeof(err)), 0);
	assert_int_equal(config_validate(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--shutdown-timeout: shutdown_timeout "
	    "must be greater than zero"));
}

/*
 * What -n -v prints as shutdown_timeout is the budget a stop gets
 * (config_stop_budget_ms): in run mode 5s + run.grace + 1s, plus
 * 2 x request_timeout for the label; given, the value itself.
 */
static void
test_dump_stop_budget(void **state)
{
	static struct config	 c;
	char			 err[ERRLEN], dump[8192];

	(void)state;
	golden_env();
	config_defaults(&c);
	config_finish(&c, NULL);
	assert_int_equal(config_stop_budget_ms(&c, 0), 5000);
	assert_int_equal(config_stop_budget_ms(&c, 1), 16000);
	config_dump(&c, 0, dump, sizeof(dump));
	assert_non_null(strstr(dump, "\nshutdown_timeout: 5s\n"));
	config_dump(&c, 1, dump, sizeof(dump));
	assert_non_null(strstr(dump, "\nshutdown_timeout: 16s  # 5s + "
	    "run.grace + 1s (the command)\n"));
	assert_int_equal(config_set(&c, "run.grace", "2s", "--grace", err,
	    sizeof(err)), 0);
	c.label_enabled = 1;
	assert_int_equal(config_stop_budget_ms(&c, 1), 18000);
	config_dump(&c, 1, dump, sizeof(dump));
	assert_non_null(strstr(dump, "\nshutdown_timeout: 18s  # 5s + "
	    "run.grace + 1s (the command) + 2 x request_timeout (the pod "
	    "label)\n"));
	/* Given, it is the whole budget. */
	assert_int_equal(config_set(&c, "shutdown_timeout", "20s",
	    "--shutdown-timeout", err, sizeof(err)), 0);
	assert_int_equal(config_stop_budget_ms(&c, 1), 20000);
	config_dump(&c, 1, dump, sizeof(dump));
	assert_non_null(strstr(dump, "\nshutdown_timeout: 20s  # "
	    "--shutdown-timeout\n"));
}

/*
 * nais/elector's command line (compat_nais.c): pflag's spellings and
 * exits, viper's order (flag, non-empty variable, default), the
 * defaults, and the --compat flag skipped.
 */
static void
test_compat_nais(void **state)
{
	static const struct {
		const char	*argv[10];	/* NULL-terminated */
		const char	*env_http;	/* ELECTOR_HTTP, or NULL */
		int		 rc, status;	/* compat_args, exit_status */
		const char	*http, *probes, *metrics, *level, *err;
	} cases[] = {
		{ { "leaderd", "--election=a", "--election-namespace=n" },
		    NULL, 0, -1, "0.0.0.0:27070", "0.0.0.0:28080",
		    "0.0.0.0:29090", "info", NULL },
		/* Space form, positionals and the last value kept. */
		{ { "leaderd", "--election", "a", "x", "--election-namespace",
		    "n", "--http=h:1", "--http=h:2" }, NULL, 0, -1, "h:2",
		    "0.0.0.0:28080", "0.0.0.0:29090", "info", NULL },
		/* The flag over the variable; the variable over the default. */
		{ { "leaderd", "--election=a", "--election-namespace=n",
		    "--http=h:3" }, "e:1", 0, -1, "h:3", NULL, NULL, NULL,
		    NULL },
		{ { "leaderd", "--election=a", "--election-namespace=n" },
		    "e:1", 0, -1, "e:1", NULL, NULL, NULL, NULL },
		/* An empty variable is unset. */
		{ { "leaderd", "--election=a", "--election-namespace=n" }, "",
		    0, -1, "0.0.0.0:27070", NULL, NULL, NULL, NULL },
		/* "0" turns controller-runtime's listeners off. */
		{ { "leaderd", "--election=a", "--election-namespace=n",
		    "--probe-address=0", "--metrics-address", "0" }, NULL, 0,
		    -1, NULL, "", "", NULL, NULL },
		/* logrus levels, any case, to ours. */
		{ { "leaderd", "--election=a", "--election-namespace=n",
		    "--log-level=WARNING" }, NULL, 0, -1, NULL, NULL, NULL,
		    "warn", NULL },
		{ { "leaderd", "--election=a", "--election-namespace=n",
		    "--log-level=trace" }, NULL, 0, -1, NULL, NULL, NULL,
		    "debug", NULL },
		/* --compat in any of its spellings is not nais's. */
		{ { "leaderd", "--compat", "nais", "-compat=nais",
		    "--election=a", "--election-namespace=n" }, NULL, 0, -1,
		    NULL, NULL, NULL, NULL, NULL },
		/* After "--", nothing is a flag. */
		{ { "leaderd", "--election=a", "--election-namespace=n", "--",
		    "--nope" }, NULL, 0, -1, NULL, NULL, NULL, NULL, NULL },
		{ { "leaderd", "-election=a" }, NULL, -1, 2, NULL, NULL, NULL,
		    NULL, "unknown shorthand flag: 'e' in -election=a\n" },
		{ { "leaderd", "-\x01" }, NULL, -1, 2, NULL, NULL, NULL, NULL,
		    "unknown shorthand flag: '\\x01' in -\x01\n" },
		{ { "leaderd", "--nope" }, NULL, -1, 2, NULL, NULL, NULL, NULL,
		    "unknown flag: --nope\n" },
		{ { "leaderd", "--=x" }, NULL, -1, 2, NULL, NULL, NULL, NULL,
		    "bad flag syntax: --=x\n" },
		{ { "leaderd", "--election-namespace=n", "--election" }, NULL,
		    -1, 2, NULL, NULL, NULL, NULL,
		    "flag needs an argument: --election\n" },
		{ { "leaderd", "--election=a", "-h" }, NULL, -1, 0, NULL, NULL,
		    NULL, NULL, "Usage of elector" },
		{ { "leaderd", "--help", "--nope" }, NULL, -1, 0, NULL, NULL,
		    NULL, NULL, "Usage of elector" },
		{ { "leaderd", "--election=a" }, NULL, -1, 1, NULL, NULL, NULL,
		    NULL, "both --election and --election-namespace are "
		    "required options" },
		{ { "leaderd", "--election=a", "--election-namespace=n",
		    "--log-format=JSON" }, NULL, -1, 1, NULL, NULL, NULL, NULL,
		    "log format \"JSON\" is not supported: use text or json" },
		{ { "leaderd", "--election=a", "--election-namespace=n",
		    "--log-level=loud" }, NULL, -1, 1, NULL, NULL, NULL, NULL,
		    "not a valid logrus Level: \"loud\"" },
	};
	struct config		 c;
	struct compat_cmdline	 out;
	char			 err[ERRLEN];
	size_t			 i;
	int			 argc, rc;

	(void)state;
	unsetenv("KUBECONFIG");
	unsetenv("ELECTOR_ELECTION");
	unsetenv("ELECTOR_ELECTION_NAMESPACE");
	unsetenv("ELECTOR_PROBE_ADDRESS");
	unsetenv("ELECTOR_METRICS_ADDRESS");
	unsetenv("ELECTOR_LOG_FORMAT");
	unsetenv("ELECTOR_LOG_LEVEL");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (argc = 0; cases[i].argv[argc] != NULL; argc++)
			;
		if (cases[i].env_http != NULL)
			setenv("ELECTOR_HTTP", cases[i].env_http, 1);
		else
			unsetenv("ELECTOR_HTTP");
		config_defaults(&c);
		err[0] = '\0';
		rc = compat_args(&c, "nais", argc,
		    (char **)(uintptr_t)cases[i].argv, &out, err, sizeof(err));
		print_message("case %zu: rc %d, exit %d, %s\n", i, rc,
		    out.exit_status, err);
		assert_int_equal(rc, cases[i].rc);
		assert_int_equal(out.exit_status, cases[i].status);
		if (cases[i].err != NULL)
			assert_true(strncmp(err, cases[i].err,
			    strlen(cases[i].err)) == 0);
		if (rc == -1)
			continue;
		assert_string_equal(c.compat, "nais");
		assert_string_equal(c.lock_name, "a");
		assert_string_equal(c.lock_namespace, "n");
		if (cases[i].http != NULL)
			assert_string_equal(c.listen_http, cases[i].http);
		if (cases[i].probes != NULL)
			assert_string_equal(c.listen_probes, cases[i].probes);
		if (cases[i].metrics != NULL)
			assert_string_equal(c.listen_metrics,
			    cases[i].metrics);
		if (cases[i].level != NULL)
			assert_string_equal(c.log_level, cases[i].level);
	}
	unsetenv("ELECTOR_HTTP");

	/* The defaults that are not flags, and the for-life lock. */
	config_defaults(&c);
	assert_int_equal(compat_args(&c, "nais", 3, (char *[]){ "leaderd",
	    "--election=a", "--election-namespace=n", NULL }, &out, err,
	    sizeof(err)), 0);
	config_finish(&c, "sa-none");
	assert_string_equal(c.lock_type, "leases");
	assert_int_equal(c.release_on_cancel, 0);
	assert_true(c.identity[0] != '\0');
	assert_string_equal(c.origin[CONFIG_IDENTITY].src, "compat: nais");
	assert_int_equal(config_validate(&c, err, sizeof(err)), 0);
	assert_true(compat_for_life(c.compat));
	assert_false(compat_for_life("classic"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_table),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_golden_valid),
		cmocka_unit_test(test_golden_invalid),
		cmocka_unit_test(test_examples),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_flag_over_file),
		cmocka_unit_test(test_finish),
		cmocka_unit_test(test_load_atomic),
		cmocka_unit_test(test_load_file_errors),
		cmocka_unit_test(test_all_errors),
		cmocka_unit_test(test_validate_table),
		cmocka_unit_test(test_timing_agrees),
		cmocka_unit_test(test_dump_round_trip),
		cmocka_unit_test(test_check_grace),
		cmocka_unit_test(test_shutdown_budget),
		cmocka_unit_test(test_dump_stop_budget),
		cmocka_unit_test(test_compat_nais),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
