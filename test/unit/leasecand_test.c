/*
 * leasecand_test.c -- the LeaseCandidate codec: the exact bytes of a
 * create and a renew (as client-go's NewCandidate writes them), decoding
 * an object and a list as kube-apiserver v1.36 returns them, the version
 * order and the OldestEmulationVersion pick; and the mark a coordinated
 * elector leaves on the Lease.
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
	struct lease_cand	 c, l[4];
	size_t			 n;
	char			 err[128], list[2048];

	(void)state;
	assert_int_equal(lease_cand_decode(got, sizeof(got) - 1, &c, err,
	    sizeof(err)), 0);
	assert_string_equal(c.name, "pod-a");
	assert_string_equal(c.lease_name, "lead");
	assert_string_equal(c.rv, "42");
	assert_int_equal(c.renew_us, T0);
	assert_true(c.ping_us > c.renew_us);
	assert_int_equal(c.created_us, 1699999980LL * 1000000);
	assert_int_equal(lease_cand_decode("{\"spec\":{\"pingTime\":3}}", 23,
	    &c, err, sizeof(err)), -1);
	assert_string_equal(err, "spec.pingTime: not a string");
	snprintf(list, sizeof(list), "{\"kind\":\"LeaseCandidateList\","
	    "\"items\":[%s,{\"metadata\":{\"name\":\"x\"},\"spec\":"
	    "{\"leaseName\":\"other\"}},%s]}", got, got);
	assert_int_equal(lease_cand_decode_list(list, strlen(list), "lead", l,
	    4, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(lease_cand_decode_list(list, strlen(list), NULL, l,
	    1, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
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
	c[0].renew_us = c[1].renew_us = c[2].renew_us = c[3].renew_us = 100;
	/* Emulation first, then binary, then the oldest. */
	assert_int_equal(lease_cand_pick(c, 4, NULL, 0), 3);
	assert_int_equal(lease_cand_pick(c, 3, NULL, 0), 2);
	assert_int_equal(lease_cand_pick(c, 3, "c", 0), 1);
	/* Never ourselves, never a stale one. */
	c[1].renew_us = 50;
	assert_int_equal(lease_cand_pick(c, 3, "c", 60), 0);
	assert_int_equal(lease_cand_pick(c, 1, "a", 0), -1);
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
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_lease_mark),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
