/*
 * compat_await_test.c -- k8s-await-election's command line and
 * environment read by compat_args (lib/config/compat_await.c): the
 * argument rules, the exec without an election, each required variable
 * and its message, the optional ones, the durations as strconv.Atoi
 * reads them, the Service's variables, and the defaults config_finish
 * then gives (test/compat/peers.md section 4).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config/compat.h"
#include "config/config.h"

#define ENV	"K8S_AWAIT_ELECTION_"

static const char *const all_vars[] = {
	"ENABLED", "NAME", "LOCK_NAME", "LOCK_NAMESPACE", "IDENTITY",
	"STATUS_ENDPOINT", "SERVICE_NAME", "SERVICE_NAMESPACE",
	"SERVICE_PORTS_JSON", "POD_IP", "NODE_NAME", "LEASE_DURATION",
	"RENEW_DEADLINE", "RETRY_PERIOD",
};

/* The README's environment (Deployment my-singleton-with-replicas). */
static void
readme_env(void)
{
	char	 name[64];
	size_t	 i;

	for (i = 0; i < sizeof(all_vars) / sizeof(all_vars[0]); i++) {
		snprintf(name, sizeof(name), ENV "%s", all_vars[i]);
		unsetenv(name);
	}
	unsetenv("POD_NAME");
	unsetenv("POD_NAMESPACE");
	unsetenv("POD_IP");
	setenv(ENV "ENABLED", "1", 1);
	setenv(ENV "NAME", "linstor-controller", 1);
	setenv(ENV "LOCK_NAME", "piraeus-op-cs", 1);
	setenv(ENV "LOCK_NAMESPACE", "default", 1);
	setenv(ENV "IDENTITY", "my-singleton-0", 1);
	setenv(ENV "STATUS_ENDPOINT", ":9999", 1);
}

/* examples/httpbin-example.yaml's Service variables. */
static void
service_env(void)
{
	setenv(ENV "SERVICE_NAME", "my-service", 1);
	setenv(ENV "SERVICE_NAMESPACE", "default", 1);
	setenv(ENV "SERVICE_PORTS_JSON", "[{\"name\":\"http\",\"port\":80}]",
	    1);
	setenv(ENV "POD_IP", "10.0.0.7", 1);
	setenv(ENV "NODE_NAME", "node-1", 1);
}

/* compat_args on argv (NULL-ended); returns its result. */
static int
parse(struct config *c, char **argv, struct compat_cmdline *out, char *err,
    size_t errlen)
{
	int	 argc = 0;

	while (argv[argc] != NULL)
		argc++;
	config_defaults(c);
	err[0] = '\0';
	return compat_args(c, "await", argc, argv, out, err, errlen);
}

static void
test_arguments(void **state)
{
	char			*none[] = { "k8s-await-election", NULL };
	char			*flag[] = { "leaderd", "--compat=await",
				    NULL };
	char			*two[] = { "leaderd", "--compat", "await",
				    "srv", "-x", NULL };
	char			*dashes[] = { "leaderd", "-compat=await",
				    "--", "srv", NULL };
	char			*plain[] = { "k8s-await-election", "srv",
				    "--compat=x", NULL };
	struct config		 c;
	struct compat_cmdline	 out;
	char			 err[512];

	(void)state;
	readme_env();
	assert_int_equal(parse(&c, none, &out, err, sizeof(err)), -1);
	assert_string_equal(err, "Need at least one argument to run");
	assert_int_equal(out.exit_status, 1);
	assert_int_equal(parse(&c, flag, &out, err, sizeof(err)), -1);
	assert_string_equal(err, "Need at least one argument to run");
	assert_int_equal(out.exit_status, 1);
	assert_int_equal(parse(&c, two, &out, err, sizeof(err)), 0);
	assert_ptr_equal(out.cmd, two + 3);
	assert_int_equal(out.exit_status, -1);
	/* After the flag everything is the command, "--" included. */
	assert_int_equal(parse(&c, dashes, &out, err, sizeof(err)), 0);
	assert_ptr_equal(out.cmd, dashes + 2);
	/* Only argv[1] can be leaderd's flag; the compat key is set. */
	assert_int_equal(parse(&c, plain, &out, err, sizeof(err)), 0);
	assert_ptr_equal(out.cmd, plain + 1);
	assert_string_equal(c.compat, "await");
}

/* ENABLED empty or unset: the command runs with no election at all. */
static void
test_exec_direct(void **state)
{
	char			*argv[] = { "k8s-await-election", "srv",
				    NULL };
	struct config		 c;
	struct compat_cmdline	 out;
	char			 err[512];

	(void)state;
	readme_env();
	unsetenv(ENV "ENABLED");
	unsetenv(ENV "NAME");		/* not needed then */
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), 0);
	assert_int_equal(out.exec_direct, 1);
	assert_ptr_equal(out.cmd, argv + 1);
	setenv(ENV "ENABLED", "", 1);
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), 0);
	assert_int_equal(out.exec_direct, 1);
	setenv(ENV "ENABLED", "false", 1);	/* any value enables it */
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), -1);
	assert_int_equal(out.exec_direct, 0);
}

static void
test_required(void **state)
{
	static const char *const vars[] = { "NAME", "LOCK_NAME",
	    "LOCK_NAMESPACE", "IDENTITY" };
	char			*argv[] = { "k8s-await-election", "srv",
				    NULL };
	struct config		 c;
	struct compat_cmdline	 out;
	char			 err[512], var[64], want[256];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		snprintf(var, sizeof(var), ENV "%s", vars[i]);
		snprintf(want, sizeof(want), "failed to create runner: config: "
		    "missing required environment variable: '%s'", var);
		readme_env();
		unsetenv(var);
		assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), -1);
		assert_string_equal(err, want);
		assert_int_equal(out.exit_status, 1);
		/* Empty is missing too (os.Getenv == ""). */
		setenv(var, "", 1);
		assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), -1);
		assert_string_equal(err, want);
	}
}

/* The README's environment: what leaderd then runs with. */
static void
test_readme(void **state)
{
	char			*argv[] = { "k8s-await-election",
				    "my-singleton-server", NULL };
	struct config		 c;
	struct compat_cmdline	 out;
	char			 err[4096];

	(void)state;
	readme_env();
	setenv("POD_NAME", "not-this", 1);
	setenv("POD_NAMESPACE", "nor-this", 1);
	setenv("POD_IP", "10.9.9.9", 1);
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), 0);
	assert_int_equal(out.exit_status, -1);
	assert_int_equal(out.exec_direct, 0);
	assert_int_equal(out.config_status, 1);
	assert_ptr_equal(out.cmd, argv + 1);
	config_finish(&c, "/nonexistent");
	if (config_validate(&c, err, sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_string_equal(c.identity, "my-singleton-0");
	assert_string_equal(c.lock_type, "leases");
	assert_string_equal(c.lock_namespace, "default");
	assert_string_equal(c.lock_name, "piraeus-op-cs");
	assert_string_equal(c.listen_http, ":9999");
	assert_int_equal(c.lease_duration_ms, 15000);
	assert_int_equal(c.renew_deadline_ms, 10000);
	assert_int_equal(c.retry_period_ms, 2000);
	assert_int_equal(c.release_on_cancel, 1);
	assert_string_equal(c.run_restart, "never");
	/* Gone before another may take the Lease: lease - renew. */
	assert_int_equal(c.run_grace_ms, 5000);
	assert_int_equal(config_check_grace(&c, err, sizeof(err)), 0);
	/* No Service: no endpoints; no $POD_NAME targetRef either. */
	assert_string_equal(c.ep_service, "");
	assert_string_equal(c.label_pod, "");
	assert_int_equal(c.label_enabled, 0);
	/* No STATUS_ENDPOINT: no listener, and that is valid. */
	unsetenv(ENV "STATUS_ENDPOINT");
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), 0);
	config_finish(&c, "/nonexistent");
	if (config_validate(&c, err, sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_string_equal(c.listen_http, "");
	unsetenv("POD_NAME");
	unsetenv("POD_NAMESPACE");
	unsetenv("POD_IP");
}

/* Whole seconds by strconv.Atoi; anything else keeps the default. */
static void
test_durations(void **state)
{
	static const struct {
		const char	*lease, *renew, *retry;
		int		 ok;
		uint64_t	 lease_ms, renew_ms, retry_ms, grace_ms;
	} cases[] = {
		{ "30", "20", "4", 1, 30000, 20000, 4000, 10000 },
		{ "+20", "012", "x", 1, 20000, 12000, 2000, 8000 },
		{ " 30", "10s", "2.5", 1, 15000, 10000, 2000, 5000 },
		{ "", "1_0", "0x2", 1, 15000, 10000, 2000, 5000 },
		{ "99999999999999999999", NULL, NULL, 1, 15000, 10000, 2000,
		    5000 },
		{ "0", NULL, NULL, 0, 0, 0, 0, 0 },
		{ NULL, "-1", NULL, 0, 0, 0, 0, 0 },
		/* client-go's NewLeaderElector refuses these, leaderd too. */
		{ "10", NULL, NULL, -1, 0, 0, 0, 0 },
		{ NULL, "2", NULL, -1, 0, 0, 0, 0 },
	};
	char			*argv[] = { "k8s-await-election", "srv",
				    NULL };
	struct config		 c;
	struct compat_cmdline	 out;
	char			 err[4096];
	size_t			 i;
	int			 rv;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		readme_env();
		if (cases[i].lease != NULL)
			setenv(ENV "LEASE_DURATION", cases[i].lease, 1);
		if (cases[i].renew != NULL)
			setenv(ENV "RENEW_DEADLINE", cases[i].renew, 1);
		if (cases[i].retry != NULL)
			setenv(ENV "RETRY_PERIOD", cases[i].retry, 1);
		rv = parse(&c, argv, &out, err, sizeof(err));
		if (cases[i].ok == 0) {
			if (rv != -1 || out.exit_status != 1 ||
			    strstr(err, "failed to create leader elector") ==
			    NULL)
				fail_msg("case %zu: %d %d %s", i, rv,
				    out.exit_status, err);
			continue;
		}
		assert_int_equal(rv, 0);
		config_finish(&c, "/nonexistent");
		rv = config_validate(&c, err, sizeof(err));
		if (cases[i].ok == -1) {
			/* main exits with out.config_status, 1. */
			assert_int_equal(rv, -1);
			assert_int_equal(out.config_status, 1);
			continue;
		}
		if (rv == -1)
			fail_msg("case %zu: %s", i, err);
		assert_int_equal(c.lease_duration_ms, cases[i].lease_ms);
		assert_int_equal(c.renew_deadline_ms, cases[i].renew_ms);
		assert_int_equal(c.retry_period_ms, cases[i].retry_ms);
		assert_int_equal(c.run_grace_ms, cases[i].grace_ms);
	}
}

/* examples/httpbin-example.yaml: the Endpoints object it keeps. */
static void
test_service(void **state)
{
	char			*argv[] = { "k8s-await-election",
				    "gunicorn", NULL };
	struct config		 c;
	struct compat_cmdline	 out;
	char			 err[4096];

	(void)state;
	readme_env();
	service_env();
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), 0);
	config_finish(&c, "/nonexistent");
	if (config_validate(&c, err, sizeof(err)) == -1)
		fail_msg("%s", err);
	assert_string_equal(c.ep_service, "my-service");
	assert_string_equal(c.ep_namespace, "default");
	assert_string_equal(c.ep_ip, "10.0.0.7");
	assert_string_equal(c.ep_ports_json,
	    "[{\"name\":\"http\",\"port\":80}]");
	assert_string_equal(c.ep_node_name, "node-1");
	assert_int_equal(c.ep_legacy, 1);
	assert_int_equal(c.ep_slice, 0);
	assert_int_equal(c.ep_port, 0);

	/* Ports that do not parse, with a Service named: fatal. */
	unsetenv(ENV "SERVICE_PORTS_JSON");
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), -1);
	assert_int_equal(out.exit_status, 1);
	assert_non_null(strstr(err, "failed to create runner: failed to "
	    "parse ports from env: unexpected end of JSON input"));
	setenv(ENV "SERVICE_PORTS_JSON", "{\"port\":80}", 1);
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "json: cannot unmarshal object"));
	/* ... and without one they are never read. */
	unsetenv(ENV "SERVICE_NAME");
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), 0);
	assert_string_equal(c.ep_service, "");
	assert_string_equal(c.ep_ports_json, "");

	/* Ports Go reads but the API server refuses: refused at start. */
	service_env();
	setenv(ENV "SERVICE_PORTS_JSON", "[{\"name\":\"http\"}]", 1);
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), 0);
	config_finish(&c, "/nonexistent");
	assert_int_equal(config_validate(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ENV "SERVICE_PORTS_JSON: "
	    "actions.endpoints.ports_json: ports[0].port 0"));
	assert_int_equal(out.config_status, 1);

	/* What would fail only when leading is refused now. */
	service_env();
	setenv(ENV "SERVICE_NAMESPACE", "", 1);
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ENV "SERVICE_NAMESPACE is empty"));
	service_env();
	unsetenv(ENV "POD_IP");
	setenv("POD_IP", "10.9.9.9", 1);	/* not await's */
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ENV "POD_IP is empty"));
	unsetenv("POD_IP");
	service_env();
	setenv(ENV "NODE_NAME", "", 1);
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ENV "NODE_NAME is set but empty"));
	/* Unset: no nodeName (LookupEnv). */
	unsetenv(ENV "NODE_NAME");
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), 0);
	assert_string_equal(c.ep_node_name, "");
	service_env();
	setenv(ENV "POD_IP", "10.0.0", 1);
	assert_int_equal(parse(&c, argv, &out, err, sizeof(err)), 0);
	config_finish(&c, "/nonexistent");
	assert_int_equal(config_validate(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ENV "POD_IP: actions.endpoints.ip "
	    "\"10.0.0\""));
}

/* What selects await without --compat. */
static void
test_detect(void **state)
{
	char	*argv0[] = { "/usr/local/bin/k8s-await-election", "srv",
		    NULL };
	char	*plain[] = { "leaderd", "srv", "-f", "x", NULL };
	char	*own[] = { "leaderd", "run", "--", "srv", NULL };
	char	*file[] = { "leaderd", "-f", "c.yaml", NULL };
	char	*flag[] = { "k8s-await-election", "--compat=classic",
		    NULL };
	char	 why[128];

	(void)state;
	readme_env();
	unsetenv(ENV "ENABLED");
	assert_string_equal(compat_select(2, argv0, 0, why, sizeof(why), NULL),
	    "await");
	assert_string_equal(why, "argv[0] k8s-await-election");
	/* argv[0] hands a control word to the command. */
	assert_string_equal(compat_select(2, argv0, 1, why, sizeof(why), NULL),
	    "await");
	assert_null(compat_detect(4, plain));
	setenv(ENV "ENABLED", "", 1);
	/* The command's own -f is the command's. */
	assert_string_equal(compat_select(4, plain, 0, why, sizeof(why), NULL),
	    "await");
	assert_string_equal(why, ENV "ENABLED in the environment");
	/* leaderd's own words, or a control word, keep leaderd's grammar. */
	assert_null(compat_select(4, own, 0, why, sizeof(why), NULL));
	assert_non_null(strstr(why, ENV "ENABLED in the environment is "
	    "ignored"));
	assert_null(compat_select(3, file, 0, why, sizeof(why), NULL));
	assert_null(compat_select(4, plain, 1, why, sizeof(why), NULL));
	assert_string_equal(compat_detect(2, flag), "classic");
	unsetenv(ENV "ENABLED");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_exec_direct),
		cmocka_unit_test(test_required),
		cmocka_unit_test(test_readme),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_service),
		cmocka_unit_test(test_detect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
