/*
 * leasecand_test.c -- the LeaseCandidate codec: the exact bytes of a
 * create and a renew (as client-go's NewCandidate writes them), decoding
 * an object as kube-apiserver v1.36 returns it, the scan of a list with
 * co-tenants' candidates in it, the liveness handover: auto asks for,
 * the version order and the OldestEmulationVersion pick; and the mark a
 * coordinated elector leaves on the Lease.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec/lease.h"
#include "codec/leasecand.h"

#define T0	1700000000123456LL	/* 2023-11-14T22:13:20.123456Z */

static const char got[] =
    "{\"kind\":\"LeaseCandidate\",\"apiVersion\":\"coordination.k8s.io/"
    "v1beta1\",\"metadata\":{\"name\":\"pod-a\",\"namespace\":\"ns\","
    "\"uid\":\"u1\",\"resourceVersion\":\"42\",\"creationTimestamp\":"
    "\"2023-11-14T22:13:00Z\"},\"spec\":{\"leaseName\":\"lead\","
    "\"pingTime\":\"2023-11-14T22:13:25.000000Z\",\"renewTime\":"
    "\"2023-11-14T22:13:20.123456Z\",\"binaryVersion\":\"1.0.0\","
    "\"emulationVersion\":\"1.0.0\",\"strategy\":"
    "\"OldestEmulationVersion\"}}";

static void
test_encode(void **state)
{
	struct lease_cand	 c;
	char			*s, err[128];

	(void)state;
	memset(&c, 0, sizeof(c));
	strcpy(c.name, "pod-a");
	strcpy(c.lease_name, "lead");
	strcpy(c.binary_version, "1.0.0");
	strcpy(c.emulation_version, "1.0.0");
	strcpy(c.strategy, "OldestEmulationVersion");
	c.renew_us = T0;
	s = lease_cand_encode_create("ns", &c);
	assert_string_equal(s,
	    "{\"apiVersion\":\"coordination.k8s.io/v1beta1\",\"kind\":"
	    "\"LeaseCandidate\",\"metadata\":{\"name\":\"pod-a\","
	    "\"namespace\":\"ns\"},\"spec\":{\"leaseName\":\"lead\","
	    "\"binaryVersion\":\"1.0.0\",\"emulationVersion\":\"1.0.0\","
	    "\"strategy\":\"OldestEmulationVersion\",\"renewTime\":"
	    "\"2023-11-14T22:13:20.123456Z\"}}");
	free(s);
	/* Over a version: a PUT, the server's pingTime kept. */
	strcpy(c.rv, "42");
	c.ping_us = T0 + 5000000;
	s = lease_cand_encode_create("ns", &c);
	assert_string_equal(s,
	    "{\"apiVersion\":\"coordination.k8s.io/v1beta1\",\"kind\":"
	    "\"LeaseCandidate\",\"metadata\":{\"name\":\"pod-a\","
	    "\"namespace\":\"ns\",\"resourceVersion\":\"42\"},\"spec\":"
	    "{\"leaseName\":\"lead\",\"binaryVersion\":\"1.0.0\","
	    "\"emulationVersion\":\"1.0.0\",\"strategy\":"
	    "\"OldestEmulationVersion\",\"renewTime\":"
	    "\"2023-11-14T22:13:20.123456Z\",\"pingTime\":"
	    "\"2023-11-14T22:13:25.123456Z\"}}");
	free(s);
	c.rv[0] = '\0';
	/* No emulationVersion: left out, not "". */
	c.emulation_version[0] = '\0';
	s = lease_cand_encode_create("ns", &c);
	assert_null(strstr(s, "emulationVersion"));
	free(s);
	/* A renew: renewTime moves, the server's fields stay as they are. */
	strcpy(c.emulation_version, "1.0.0");
	s = lease_cand_encode_update(got, sizeof(got) - 1, &c, T0 + 10000000,
	    err, sizeof(err));
	assert_non_null(s);
	assert_non_null(strstr(s, "\"renewTime\":"
	    "\"2023-11-14T22:13:30.123456Z\""));
	assert_non_null(strstr(s, "\"pingTime\":"
	    "\"2023-11-14T22:13:25.000000Z\""));
	assert_non_null(strstr(s, "\"resourceVersion\":\"42\""));
	assert_non_null(strstr(s, "\"leaseName\":\"lead\""));
	free(s);
	assert_null(lease_cand_encode_update("{\"kind\":\"Lease\"}", 16, &c,
	    T0, err, sizeof(err)));
	assert_string_equal(err, "kind: not \"LeaseCandidate\"");
}

static void
test_decode(void **state)
{
	struct lease_cand	 c;
	char			 err[128];

	(void)state;
	assert_int_equal(lease_cand_decode(got, sizeof(got) - 1, &c, err,
	    sizeof(err)), 0);
	assert_string_equal(c.name, "pod-a");
	assert_string_equal(c.lease_name, "lead");
	assert_string_equal(c.rv, "42");
	assert_int_equal(c.renew_us, T0);
	assert_true(c.ping_us > c.renew_us);
	assert_int_equal(c.created_us, 1699999980LL * 1000000);
	assert_int_equal(c.cut, 0);
	assert_int_equal(lease_cand_decode("{\"spec\":{\"pingTime\":3}}", 23,
	    &c, err, sizeof(err)), -1);
	assert_string_equal(err, "spec.pingTime: not a string");
}

/* A candidate item of lease, named name, with the spec's rest. */
static void
item(char *list, size_t size, const char *name, const char *lease,
    const char *rest)
{
	size_t	 n = strlen(list);

	snprintf(list + n, size - n, "%s{\"metadata\":{\"name\":\"%s\","
	    "\"resourceVersion\":\"1\",\"creationTimestamp\":"
	    "\"2023-11-14T22:13:00Z\"},\"spec\":{\"leaseName\":\"%s\"%s}}",
	    list[n - 1] == '[' ? "" : ",", name, lease, rest);
}

static void
scan(const char *list, const char *skip, int by_version,
    struct lease_cand_scan *sc)
{
	char	 err[128];

	memset(sc, 0, sizeof(*sc));
	sc->lease_name = "lead";
	sc->skip = skip;
	sc->by_version = by_version;
	sc->now_us = T0;
	assert_int_equal(lease_cand_scan_list(list, strlen(list), sc, err,
	    sizeof(err)), 0);
}

/*
 * Security review M3: what the API server takes of another Lease's
 * candidates never fails the scan (before: 76 bytes of binaryVersion
 * failed the whole list, and with it every ping's answer); build
 * metadata is dropped, a strategy is kept to the API's own limit, and
 * an item of ours that does not decode is counted and passed over.
 */
static void
test_scan_list(void **state)
{
	static char		 list[16384], big[1024], rest[4096];
	struct lease_cand_scan	 sc;
	const char		*renew = ",\"renewTime\":"
	    "\"2023-11-14T22:13:10.000000Z\"";

	(void)state;
	snprintf(list, sizeof(list), "{\"kind\":\"LeaseCandidateList\","
	    "\"items\":[");
	memset(big, 'b', 400);
	big[400] = '\0';
	/* Another Lease's: long build metadata, prerelease and strategy,
	 * and fields of the wrong type: never read. */
	snprintf(rest, sizeof(rest), ",\"binaryVersion\":\"1.2.3+%s\","
	    "\"emulationVersion\":\"1.2.3-%s\",\"strategy\":\"%.63s.%.60s"
	    ".example.com/x\"", big, big, big, big);
	item(list, sizeof(list), "aa-1", "other", rest);
	item(list, sizeof(list), "aa-2", "other", ",\"renewTime\":7,"
	    "\"binaryVersion\":{}");
	/* Ours: versions with build metadata, the oldest emulation. */
	snprintf(rest, sizeof(rest), ",\"binaryVersion\":\"1.0.0+%s\","
	    "\"emulationVersion\":\"0.9.0+%s\",\"strategy\":"
	    "\"OldestEmulationVersion\"%s", big, big, renew);
	item(list, sizeof(list), "bb-meta", "lead", rest);
	/* Ours: a custom strategy of 138 bytes. */
	snprintf(rest, sizeof(rest), ",\"binaryVersion\":\"1.0.0\","
	    "\"strategy\":\"%.63s.%.60s.example.com/x\"%s", big, big, renew);
	item(list, sizeof(list), "bb-strategy", "lead", rest);
	/* Ours: a prerelease too long to keep: cut, never picked. */
	snprintf(rest, sizeof(rest), ",\"binaryVersion\":\"0.0.1-%s\"%s",
	    big, renew);
	item(list, sizeof(list), "bb-pre", "lead", rest);
	/* Ours, of the wrong type: counted, passed over. */
	item(list, sizeof(list), "bb-bad", "lead", ",\"renewTime\":7");
	snprintf(list + strlen(list), sizeof(list) - strlen(list), "]}");

	scan(list, NULL, 1, &sc);
	assert_int_equal(sc.n, 4);
	assert_int_equal(sc.skipped, 1);
	assert_string_equal(sc.why, "spec.renewTime: not a string");
	assert_true(sc.found);
	assert_string_equal(sc.best.name, "bb-meta");
	assert_string_equal(sc.best.binary_version, "1.0.0");
	assert_string_equal(sc.best.emulation_version, "0.9.0");
	assert_int_equal(strlen(sc.best.strategy), 22);
	scan(list, "bb-meta", 1, &sc);
	assert_string_equal(sc.best.name, "bb-strategy");
	assert_int_equal(strlen(sc.best.strategy), 138);
	scan(list, "bb-strategy", 0, &sc);
	assert_string_equal(sc.best.name, "bb-meta");
}

/*
 * Security review L3: the rule handover: auto judges a candidate live
 * by (lease_cand_live), as the controller elects only candidates that
 * answered its ping.
 */
static void
test_live(void **state)
{
	static const struct {
		int64_t	 renew_s;	/* renewTime - now */
		int64_t	 ping_s;	/* pingTime - now; 99: none */
		int	 cut;
		int	 live;
	} rows[] = {
		{ -10, 99, 0, 1 },	/* renewed lately, never pinged */
		{ -329, 99, 0, 1 },	/* within client-go's 5 min + 30 s */
		{ -331, 99, 0, 0 },	/* past it */
		{ 4, 99, 0, 1 },	/* a clock a little ahead */
		{ 6, 99, 0, 0 },	/* "renewed" in the future */
		{ 2366841600LL, 99, 0, 0 },	/* in the year 2100 */
		{ -10, -20, 0, 1 },	/* answered its ping */
		{ -10, -10, 0, 1 },	/* answered at once */
		{ -20, -10, 0, 0 },	/* a ping not answered */
		{ -20, 2366841600LL, 0, 0 },	/* a ping from the future */
		{ -10, 99, 1, 0 },	/* a version too long to keep */
	};
	struct lease_cand	 c;
	size_t			 i;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_false(lease_cand_live(&c, T0));	/* never renewed */
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		c.renew_us = T0 + rows[i].renew_s * 1000000;
		c.ping_us = rows[i].ping_s == 99 ? 0 :
		    T0 + rows[i].ping_s * 1000000;
		c.cut = rows[i].cut;
		if (lease_cand_live(&c, T0) != rows[i].live)
			fail_msg("row %zu: live %d, expected %d", i,
			    lease_cand_live(&c, T0), rows[i].live);
	}
}

/* The pick of c[0..n) as lease_cand_scan_list makes it. */
static int
pick(const struct lease_cand *c, size_t n, const char *skip)
{
	size_t	 i;
	int	 best = -1;

	for (i = 0; i < n; i++)
		if ((skip == NULL || strcmp(c[i].name, skip) != 0) &&
		    (best == -1 || lease_cand_better(&c[i], &c[best])))
			best = (int)i;
	return best;
}

static void
test_versions(void **state)
{
	struct lease_cand	 c[4];

	(void)state;
	assert_true(lease_cand_version_cmp("1.0", "1.0.0") == 0);
	assert_true(lease_cand_version_cmp("1.9", "1.10") < 0);
	assert_true(lease_cand_version_cmp("v1.2.3", "1.2.3") == 0);
	assert_true(lease_cand_version_cmp("2.0", "1.99.99") > 0);
	assert_true(lease_cand_version_ok("1.36.3"));
	assert_true(lease_cand_version_ok("1.36.3-rc.1"));
	assert_false(lease_cand_version_ok("1.0"));	/* not semver */
	assert_false(lease_cand_version_ok("1"));
	assert_false(lease_cand_version_ok("v1.0"));
	assert_false(lease_cand_version_ok("1.0x"));

	memset(c, 0, sizeof(c));
	strcpy(c[0].name, "a");
	strcpy(c[0].binary_version, "1.1");
	strcpy(c[1].name, "b");
	strcpy(c[1].binary_version, "1.0");
	c[1].created_us = 20;
	strcpy(c[2].name, "c");
	strcpy(c[2].binary_version, "1.0");
	c[2].created_us = 10;
	strcpy(c[3].name, "d");
	strcpy(c[3].binary_version, "1.1");
	strcpy(c[3].emulation_version, "0.9");
	/* Emulation first, then binary, then the oldest. */
	assert_int_equal(pick(c, 4, NULL), 3);
	assert_int_equal(pick(c, 3, NULL), 2);
	assert_int_equal(pick(c, 3, "c"), 1);
	assert_int_equal(pick(c, 1, "a"), -1);
}

/*
 * The coordinated write's mark on the Lease (lease.h, LEASE_RENEWED):
 * written as a MicroTime annotation, read back, removed when unset, and
 * a foreign annotation's value that does not parse reads as none.
 */
static void
test_lease_mark(void **state)
{
	static const char base[] = "{\"kind\":\"Lease\",\"apiVersion\":"
	    "\"coordination.k8s.io/v1\",\"metadata\":{\"name\":\"l\","
	    "\"resourceVersion\":\"5\",\"annotations\":{\"x\":\"y\"}},"
	    "\"spec\":{}}";
	struct lease	 rec, back;
	char		*s, *t, err[128];

	(void)state;
	memset(&rec, 0, sizeof(rec));
	strcpy(rec.holder, "pod-a");
	rec.duration_s = 15;
	rec.acquire_us = rec.renew_us = rec.mark_us = T0;
	s = lease_encode_update(base, sizeof(base) - 1, &rec, err,
	    sizeof(err));
	assert_non_null(s);
	assert_non_null(strstr(s, "\"annotations\":{\"x\":\"y\","
	    "\"leaderd.io/renewed\":\"2023-11-14T22:13:20.123456Z\"}"));
	assert_int_equal(lease_decode(s, strlen(s), &back, err, sizeof(err)),
	    0);
	assert_int_equal(back.mark_us, T0);
	assert_int_equal(back.renew_us, T0);
	rec.mark_us = 0;
	t = lease_encode_update(s, strlen(s), &rec, err, sizeof(err));
	assert_null(strstr(t, "leaderd.io/renewed"));
	assert_non_null(strstr(t, "\"annotations\":{\"x\":\"y\"}"));
	free(s);
	free(t);
	s = "{\"metadata\":{\"annotations\":{\"leaderd.io/renewed\":"
	    "\"soon\"}}}";
	assert_int_equal(lease_decode(s, strlen(s), &back, err, sizeof(err)),
	    0);
	assert_int_equal(back.mark_us, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_scan_list),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_lease_mark),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
