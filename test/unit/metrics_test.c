/*
 * metrics_test.c -- the Prometheus text exposition of metrics.c: label
 * values escaped, histogram buckets cumulative up to +Inf with a count
 * equal to the +Inf bucket, HELP and TYPE for every metric, counters by
 * verb and code with "error" for a transport failure.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/version.h"
#include "server/metrics.h"

static char *
render(const struct metrics *m, int master)
{
	struct metrics_gauges	 g = { master, 12.5, 3, 0 };
	size_t			 len;
	char			*s = metrics_render(m, &g, &len);

	assert_int_equal(strlen(s), len);
	assert_int_equal(s[len - 1], '\n');
	return s;
}

/* The value of the sample line that starts with prefix, or -1. */
static double
sample(const char *text, const char *prefix)
{
	const char	*p = text;
	size_t		 n = strlen(prefix);

	while (p != NULL && *p != '\0') {
		if (strncmp(p, prefix, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		if ((p = strchr(p, '\n')) != NULL)
			p++;
	}
	return -1;
}

static void
test_escaping(void **state)
{
	struct metrics	 m;
	char		*s, want[128];

	(void)state;
	metrics_init(&m, "we\"ird\\lock\nname", "1.2\"3");
	s = render(&m, 1);
	assert_non_null(strstr(s, "leader_election_master_status{name="
	    "\"we\\\"ird\\\\lock\\nname\"} 1\n"));
	snprintf(want, sizeof(want), "leaderd_build_info{version=\"1.2\\\"3\","
	    "revision=\"%s\"} 1\n", version_revision());
	assert_non_null(strstr(s, want));
	/* No raw newline inside any label: every line is whole. */
	assert_null(strstr(s, "lock\nname"));
	free(s);
}

static void
test_help_and_type(void **state)
{
	static const char *const names[] = {
		"leader_election_master_status",
		"leader_election_slowpath_total",
		"leaderd_transitions_total",
		"leaderd_renew_failures_total",
		"leaderd_api_requests_total",
		"leaderd_api_request_duration_seconds",
		"leaderd_lease_expires_in_seconds",
		"leaderd_local_api_connections",
		"leaderd_events_dropped_total",
		"leaderd_build_info"
	};
	struct metrics	 m;
	char		*s, line[128];
	size_t		 i;

	(void)state;
	metrics_init(&m, "lock", "0.1.0");
	s = render(&m, 0);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(line, sizeof(line), "# HELP %s ", names[i]);
		assert_non_null(strstr(s, line));
		snprintf(line, sizeof(line), "# TYPE %s ", names[i]);
		assert_non_null(strstr(s, line));
	}
	assert_non_null(strstr(s, "# TYPE leaderd_api_request_duration_seconds"
	    " histogram\n"));
	assert_true(sample(s, "leader_election_master_status{name=\"lock\"}")
	    == 0);
	assert_true(sample(s, "leaderd_lease_expires_in_seconds") == 12.5);
	assert_true(sample(s, "leaderd_local_api_connections") == 3);
	free(s);
}

static void
test_counters(void **state)
{
	struct metrics	 m;
	char		*s;

	(void)state;
	metrics_init(&m, "lock", "0.1.0");
	metrics_api_request(&m, "get", 200, 0.001);
	metrics_api_request(&m, "get", 200, 0.002);
	metrics_api_request(&m, "update", 409, 0.01);
	metrics_api_request(&m, "update", 0, 5);
	metrics_api_request(&m, "bogus", 500, 0.1);
	metrics_api_request(&m, "list", 200, 0.003);
	metrics_api_request(&m, "delete", 200, 0.004);
	m.slowpath = 4;
	m.transitions = 2;
	m.renew_failures = 1;
	m.events_dropped = 7;
	s = render(&m, 1);
	assert_true(sample(s, "leaderd_events_dropped_total") == 7);
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"get\","
	    "code=\"200\"}") == 2);
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"update\","
	    "code=\"409\"}") == 1);
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"update\","
	    "code=\"error\"}") == 1);
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"other\","
	    "code=\"500\"}") == 1);
	/* A shard group's list and its member Lease's delete, by name. */
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"list\","
	    "code=\"200\"}") == 1);
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"delete\","
	    "code=\"200\"}") == 1);
	assert_null(strstr(s, "verb=\"other\",code=\"200\""));
	assert_true(sample(s, "leader_election_slowpath_total{name=\"lock\"}")
	    == 4);
	assert_true(sample(s, "leaderd_transitions_total") == 2);
	assert_true(sample(s, "leaderd_renew_failures_total") == 1);
	/* A verb never used has no histogram lines. */
	assert_null(strstr(s, "verb=\"watch\""));
	free(s);
}

/*
 * nais/elector's counters: no labels, no _total, and absent (HELP and
 * TYPE too) until first counted, as a CounterVec before its first Inc.
 */
static void
test_nais_counters(void **state)
{
	struct metrics	 m;
	char		*s;

	(void)state;
	metrics_init(&m, "lock", "0.1.0");
	s = render(&m, 0);
	assert_null(strstr(s, "elector_elections"));
	free(s);
	m.elections_won = 1;
	s = render(&m, 1);
	assert_true(sample(s, "elector_elections_won") == 1);
	assert_non_null(strstr(s, "# TYPE elector_elections_won counter\n"));
	assert_null(strstr(s, "elector_elections_lost"));
	free(s);
	m.elections_lost = 2;
	s = render(&m, 1);
	assert_true(sample(s, "elector_elections_lost") == 2);
	assert_non_null(strstr(s, "# HELP elector_elections_lost "));
	free(s);
}

static void
test_histogram(void **state)
{
	static const char *const les[] = {
		"0.005", "0.025", "0.1", "0.25", "0.5", "1", "2", "4", "8",
		"15", "30", "60", "+Inf"
	};
	static const double want[] = {
		2, 2, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 5
	};
	struct metrics	 m;
	char		*s, key[128];
	size_t		 i;
	double		 v, prev = 0;

	(void)state;
	metrics_init(&m, "lock", "0.1.0");
	metrics_api_request(&m, "update", 200, 0.001);
	metrics_api_request(&m, "update", 200, 0.005);	/* le is inclusive */
	metrics_api_request(&m, "update", 200, 0.05);
	metrics_api_request(&m, "update", 200, 1);
	metrics_api_request(&m, "update", 0, 300);	/* past 60: +Inf */
	s = render(&m, 1);
	for (i = 0; i < sizeof(les) / sizeof(les[0]); i++) {
		snprintf(key, sizeof(key), "leaderd_api_request_duration_"
		    "seconds_bucket{verb=\"update\",le=\"%s\"}", les[i]);
		v = sample(s, key);
		assert_true(v == want[i]);
		assert_true(v >= prev);
		prev = v;
	}
	assert_true(sample(s, "leaderd_api_request_duration_seconds_count"
	    "{verb=\"update\"}") == 5);
	v = sample(s, "leaderd_api_request_duration_seconds_sum"
	    "{verb=\"update\"}");
	assert_true(v > 301.055 && v < 301.057);
	free(s);
}

static void
test_many_codes(void **state)
{
	struct metrics	 m;
	long		 c;
	char		*s;

	(void)state;
	metrics_init(&m, "lock", "0.1.0");
	for (c = 100; c < 100 + METRICS_NCODES + 5; c++)
		metrics_api_request(&m, "get", c, 0.01);
	s = render(&m, 0);
	/* Past the table, requests are still counted, under "other". */
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"other\","
	    "code=\"other\"}") == 5);
	assert_true(sample(s, "leaderd_api_request_duration_seconds_count"
	    "{verb=\"get\"}") == METRICS_NCODES + 5);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_help_and_type),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_nais_counters),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_many_codes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
