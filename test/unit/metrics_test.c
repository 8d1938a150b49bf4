/*
 * metrics_test.c -- the Prometheus text exposition of metrics.c: label
 * values escaped, histogram buckets cumulative up to +Inf with a count
 * equal to the +Inf bucket, HELP and TYPE for every metric, counters by
 * verb and code with "error" for a transport failure, the name label on
 * every leaderd_* series with one election and with several, and
 * leaderd_election_info.
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
	    "revision=\"%s\",name=\"we\\\"ird\\\\lock\\nname\"} 1\n",
	    version_revision());
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
		"leaderd_candidate",
		"leaderd_election_info",
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
	assert_true(sample(s, "leaderd_lease_expires_in_seconds{name="
	    "\"lock\"}") == 12.5);
	assert_true(sample(s, "leaderd_local_api_connections{name=\"lock\"}")
	    == 3);
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
	assert_true(sample(s, "leaderd_events_dropped_total{name=\"lock\"}")
	    == 7);
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"get\","
	    "code=\"200\",name=\"lock\"}") == 2);
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"update\","
	    "code=\"409\",name=\"lock\"}") == 1);
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"update\","
	    "code=\"error\",name=\"lock\"}") == 1);
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"other\","
	    "code=\"500\",name=\"lock\"}") == 1);
	/* A shard group's list and its member Lease's delete, by name. */
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"list\","
	    "code=\"200\",name=\"lock\"}") == 1);
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"delete\","
	    "code=\"200\",name=\"lock\"}") == 1);
	assert_null(strstr(s, "verb=\"other\",code=\"200\""));
	assert_true(sample(s, "leader_election_slowpath_total{name=\"lock\"}")
	    == 4);
	assert_true(sample(s, "leaderd_transitions_total{name=\"lock\"}") ==
	    2);
	assert_true(sample(s, "leaderd_renew_failures_total{name=\"lock\"}")
	    == 1);
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
		    "seconds_bucket{verb=\"update\",le=\"%s\",name=\"lock\"}",
		    les[i]);
		v = sample(s, key);
		assert_true(v == want[i]);
		assert_true(v >= prev);
		prev = v;
	}
	assert_true(sample(s, "leaderd_api_request_duration_seconds_count"
	    "{verb=\"update\",name=\"lock\"}") == 5);
	v = sample(s, "leaderd_api_request_duration_seconds_sum"
	    "{verb=\"update\",name=\"lock\"}");
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
	    "code=\"other\",name=\"lock\"}") == 5);
	assert_true(sample(s, "leaderd_api_request_duration_seconds_count"
	    "{verb=\"get\",name=\"lock\"}") == METRICS_NCODES + 5);
	free(s);
}

/*
 * Every sample of leaderd's own families (leaderd_*, leader_election_*)
 * in text carries name="NAME" for one of names[0..n): the count of
 * samples that do; fails on the first one that does not.
 */
static int
all_named(const char *text, const char *const *names, size_t n)
{
	const char	*p = text, *end;
	char		 line[512], want[128];
	size_t		 len, k;
	int		 found, count = 0;

	for (; *p != '\0'; p = *end == '\n' ? end + 1 : end) {
		if ((end = strchr(p, '\n')) == NULL)
			end = p + strlen(p);
		len = (size_t)(end - p);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		if (strncmp(line, "leaderd_", 8) != 0 &&
		    strncmp(line, "leader_election_", 16) != 0)
			continue;
		found = 0;
		for (k = 0; k < n && !found; k++) {
			snprintf(want, sizeof(want), "name=\"%s\"}", names[k]);
			found = strstr(line, want) != NULL;
		}
		if (!found)
			fail_msg("no name label: %s", line);
		count++;
	}
	return count;
}

/* With one election, every series carries its name, probe ones too. */
static void
test_name_on_every_series(void **state)
{
	static const char *const one[] = { "lock" };
	struct metrics	 m;
	char		*s;

	(void)state;
	metrics_init(&m, "lock", "0.1.0");
	m.app_probe = 1;
	metrics_app_probe(&m, 1, 0.01);
	metrics_api_request(&m, "get", 200, 0.001);
	metrics_api_request(&m, "update", 0, 0.5);
	s = render(&m, 1);
	/* 6 per-election, 2 requests, 2 x 15 histogram, connections,
	   dropped, info, 2 probe results, 15 probe histogram, build. */
	assert_int_equal(all_named(s, one, 1), 6 + 2 + 30 + 2 + 1 + 2 + 15 +
	    1);
	assert_true(sample(s, "leaderd_candidate{name=\"lock\"}") == 0);
	assert_true(sample(s, "leaderd_app_probe_total{result=\"success\","
	    "name=\"lock\"}") == 1);
	assert_true(sample(s, "leaderd_app_probe_duration_seconds_count"
	    "{name=\"lock\"}") == 1);
	free(s);
}

/*
 * With several elections, the per-election series have one sample per
 * election, each with its own name; the process's carry the first's.
 * One election through metrics_render_elections: metrics_render's bytes.
 */
static void
test_several_elections(void **state)
{
	static const char *const two[] = { "first", "second" };
	struct metrics		 m[2];
	struct metrics_gauges	 g = { 1, 4.5, 2, 1 };
	struct metrics_election	 els[2];
	char			*s, *t;
	size_t			 len, tlen;

	(void)state;
	metrics_init(&m[0], "first", "0.1.0");
	metrics_init(&m[1], "second", "0.1.0");
	metrics_api_request(&m[0], "get", 200, 0.001);
	memset(els, 0, sizeof(els));
	els[0].m = &m[0];
	els[0].master = 1;
	els[0].expires_in_s = 4.5;
	els[0].candidate = 1;
	els[1].m = &m[1];
	els[1].transitions = 3;
	els[1].expires_in_s = 7.25;
	s = metrics_render_elections(&m[0], &g, els, 2, &len);
	assert_int_equal(strlen(s), len);
	assert_int_equal(all_named(s, two, 2), 2 * 7 + 1 + 15 + 2 + 1);
	assert_true(sample(s, "leader_election_master_status{name="
	    "\"first\"}") == 1);
	assert_true(sample(s, "leader_election_master_status{name="
	    "\"second\"}") == 0);
	assert_true(sample(s, "leaderd_transitions_total{name=\"second\"}")
	    == 3);
	assert_true(sample(s, "leaderd_lease_expires_in_seconds{name="
	    "\"second\"}") == 7.25);
	assert_true(sample(s, "leaderd_api_requests_total{verb=\"get\","
	    "code=\"200\",name=\"first\"}") == 1);
	assert_true(sample(s, "leaderd_local_api_connections{name="
	    "\"first\"}") == 2);
	assert_null(strstr(s, "leaderd_local_api_connections{name="
	    "\"second\"}"));
	free(s);

	s = metrics_render_elections(&m[0], &g, els, 1, &len);
	t = metrics_render(&m[0], &g, &tlen);
	assert_int_equal(len, tlen);
	assert_memory_equal(s, t, len);
	free(s);
	free(t);
}

/* leaderd_election_info names the lock and identity, one per election. */
static void
test_election_info(void **state)
{
	struct metrics		 m[2];
	struct metrics_gauges	 g = { 0, 0, 0, 0 };
	struct metrics_election	 els[2];
	char			*s;
	size_t			 len;

	(void)state;
	metrics_init(&m[0], "app", "0.1.0");
	s = render(&m[0], 0);
	/* Before metrics_lock, empty labels, and still the name. */
	assert_non_null(strstr(s, "leaderd_election_info{lock=\"\","
	    "lock_namespace=\"\",lock_name=\"\",identity=\"\","
	    "name=\"app\"} 1\n"));
	free(s);
	metrics_lock(&m[0], "endpointsleases", "team-a", "app-lock",
	    "pod-\"0\"");
	metrics_init(&m[1], "other", "0.1.0");
	metrics_lock(&m[1], "leases", "team-b", "other", "pod-0");
	memset(els, 0, sizeof(els));
	els[0].m = &m[0];
	els[1].m = &m[1];
	s = metrics_render_elections(&m[0], &g, els, 2, &len);
	assert_non_null(strstr(s, "# TYPE leaderd_election_info gauge\n"));
	assert_non_null(strstr(s, "leaderd_election_info{lock="
	    "\"endpointsleases\",lock_namespace=\"team-a\",lock_name="
	    "\"app-lock\",identity=\"pod-\\\"0\\\"\",name=\"app\"} 1\n"));
	assert_non_null(strstr(s, "leaderd_election_info{lock=\"leases\","
	    "lock_namespace=\"team-b\",lock_name=\"other\",identity="
	    "\"pod-0\",name=\"other\"} 1\n"));
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
		cmocka_unit_test(test_name_on_every_series),
		cmocka_unit_test(test_several_elections),
		cmocka_unit_test(test_election_info),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
