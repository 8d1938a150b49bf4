/*
 * lease_test.c -- the Lease codec: golden decode cases (lease/valid),
 * golden errors (lease/invalid), golden encodings (lease/encode), and
 * table tests of the time functions (apitime.c), lease_same_record, and
 * apiobj.c's Status bodies and watch events.
 *
 * Golden formats:
 *   valid/NAME.json    a Lease body; NAME.out is the decoded record as
 *                      printed by dump_lease() below.
 *   invalid/NAME.json  a body lease_decode must refuse; NAME.err holds
 *                      the exact error text.
 *   encode/NAME.rec    a record in the dump_lease() format plus
 *                      "namespace" and "name" lines; NAME.create.json is
 *                      the expected lease_encode_create output, and if
 *                      NAME.base.json exists, NAME.update.json is the
 *                      expected lease_encode_update(base) output.
 * UPDATE_GOLDEN=1 rewrites the expected files (testutil.h); review the
 * diff by hand.
 */

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "codec/apiobj.h"
#include "codec/lease.h"
#include "testutil.h"
#include "leasetest.h"
#include "base/xmalloc.h"

#define MIN_VALID	10	/* the suites fail if cases go missing */
#define MIN_INVALID	12
#define MIN_ENCODE	4

/* The normalised text form of a record, one field a line. */
static void
dump_lease(const struct lease *l, char *buf, size_t len)
{
	char acq[128], ren[128];

	dump_time(acq, sizeof(acq), "acquire_us", l->acquire_us);
	dump_time(ren, sizeof(ren), "renew_us", l->renew_us);
	snprintf(buf, len,
	    "holder \"%s\"\nduration_s %" PRId32 "\ntransitions %" PRId32 "\n"
	    "%s%sstrategy \"%s\"\npreferred \"%s\"\nrv \"%s\"\n",
	    l->holder, l->duration_s, l->transitions, acq, ren, l->strategy,
	    l->preferred, l->rv);
}

static void
copy_quoted(const char *v, char *dst, size_t len, const char *path)
{
	const char *end = strrchr(v, '"');

	if (*v != '"' || end == v) {
		fail_msg("%s: value %s is not quoted", path, v);
		return;
	}
	if ((size_t)(end - v - 1) >= len) {
		fail_msg("%s: value %s too long", path, v);
		return;
	}
	memcpy(dst, v + 1, (size_t)(end - v - 1));
	dst[end - v - 1] = '\0';
}

/* Parse a .rec file (the dump_lease format plus namespace and name). */
static void
parse_rec(const char *path, struct lease *l, char *ns, char *name)
{
	char *text, *line, *save = NULL, *v;

	memset(l, 0, sizeof(*l));
	text = slurp_must(path, NULL);
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((v = strchr(line, ' ')) == NULL)
			fail_msg("%s: bad line \"%s\"", path, line);
		*v++ = '\0';
		if (strcmp(line, "namespace") == 0)
			copy_quoted(v, ns, 256, path);
		else if (strcmp(line, "name") == 0)
			copy_quoted(v, name, 256, path);
		else if (strcmp(line, "holder") == 0)
			copy_quoted(v, l->holder, sizeof(l->holder), path);
		else if (strcmp(line, "strategy") == 0)
			copy_quoted(v, l->strategy, sizeof(l->strategy), path);
		else if (strcmp(line, "preferred") == 0)
			copy_quoted(v, l->preferred, sizeof(l->preferred),
			    path);
		else if (strcmp(line, "rv") == 0)
			copy_quoted(v, l->rv, sizeof(l->rv), path);
		else if (strcmp(line, "duration_s") == 0)
			l->duration_s = (int32_t)strtol(v, NULL, 10);
		else if (strcmp(line, "transitions") == 0)
			l->transitions = (int32_t)strtol(v, NULL, 10);
		else if (strcmp(line, "acquire_us") == 0)
			l->acquire_us = strtoll(v, NULL, 10);
		else if (strcmp(line, "renew_us") == 0)
			l->renew_us = strtoll(v, NULL, 10);
		else
			fail_msg("%s: unknown key \"%s\"", path, line);
	}
	free(text);
}

/* All fields equal, resourceVersion included, at µs precision. */
static void
assert_lease_equal(const struct lease *a, const struct lease *b,
    const char *what)
{
	char da[2048], db[2048];

	dump_lease(a, da, sizeof(da));
	dump_lease(b, db, sizeof(db));
	if (strcmp(da, db) != 0)
		fail_msg("%s: records differ:\n%s---\n%s", what, da, db);
}

static void
test_golden_valid(void **state)
{
	char **names, path[1024], err[256], got[2048], *body;
	struct lease l;
	int i, n, failed = 0;
	size_t len = 0;

	(void)state;
	n = cases("valid", ".json", &names);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/lease/valid/%s.json",
		    test_dir(), names[i]);
		body = slurp_must(path, &len);
		snprintf(path, sizeof(path), "%s/lease/valid/%s.out",
		    test_dir(), names[i]);
		if (lease_decode(body, len, &l, err, sizeof(err)) == -1) {
			print_error("valid/%s: decode failed: %s\n", names[i],
			    err);
			failed++;
		} else {
			dump_lease(&l, got, sizeof(got));
			if (expect_golden(got, path) == -1)
				failed++;
		}
		free(body);
	}
	free_names(names);
	assert_int_equal(failed, 0);
	assert_true(n >= MIN_VALID);
}

static void
test_golden_invalid(void **state)
{
	(void)state;
	golden_invalid("invalid", lease_decode, MIN_INVALID);
}

/* Compare JSON output, plus a newline, with a golden file. */
static int
expect_json(const char *json, const char *path)
{
	char *s;
	int rc;

	xasprintf(&s, "%s\n", json);
	rc = expect_golden(s, path);
	free(s);
	return rc;
}

static void
test_golden_encode(void **state)
{
	char **names, path[1024], err[256], ns[256], name[256];
	char *got, *base;
	struct lease rec, back, baserec;
	int i, n, failed = 0;
	size_t baselen;

	(void)state;
	n = cases("encode", ".rec", &names);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/lease/encode/%s.rec",
		    test_dir(), names[i]);
		ns[0] = name[0] = '\0';
		parse_rec(path, &rec, ns, name);

		snprintf(path, sizeof(path), "%s/lease/encode/%s.create.json",
		    test_dir(), names[i]);
		got = lease_encode_create(ns, name, &rec);
		if (expect_json(got, path) == -1)
			failed++;
		/* Round trip: what we write reads back as the same record. */
		assert_int_equal(lease_decode(got, strlen(got), &back, err,
		    sizeof(err)), 0);
		assert_lease_equal(&back, &rec, names[i]);
		assert_true(lease_same_record(&back, &rec));
		free(got);

		snprintf(path, sizeof(path), "%s/lease/encode/%s.base.json",
		    test_dir(), names[i]);
		if ((base = read_file(path, &baselen)) == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/lease/encode/%s.update.json",
		    test_dir(), names[i]);
		got = lease_encode_update(base, baselen, &rec, err,
		    sizeof(err));
		if (got == NULL) {
			print_error("encode/%s update failed: %s\n", names[i],
			    err);
			failed++;
		} else {
			if (expect_json(got, path) == -1)
				failed++;
			/* The update keeps the base's resourceVersion. */
			assert_int_equal(lease_decode(base, baselen, &baserec,
			    err, sizeof(err)), 0);
			assert_int_equal(lease_decode(got, strlen(got), &back,
			    err, sizeof(err)), 0);
			assert_string_equal(back.rv, baserec.rv);
			strcpy(back.rv, rec.rv);
			assert_lease_equal(&back, &rec, names[i]);
		}
		free(got);
		free(base);
	}
	free_names(names);
	assert_int_equal(failed, 0);
	assert_true(n >= MIN_ENCODE);
}

static void
test_decode_limits(void **state)
{
	static const char prefix[] = "{\"spec\":{\"holderIdentity\":\"";
	static const char suffix[] = "\"}}";
	char err[256], small[8];
	struct lease l;
	char *body;
	size_t len;

	(void)state;
	/* Exactly LEASE_BODY_MAX decodes (the holder is too long, though). */
	len = LEASE_BODY_MAX;
	body = xmalloc(len + 2);
	memcpy(body, prefix, sizeof(prefix) - 1);
	memset(body + sizeof(prefix) - 1, 'a', len - sizeof(prefix) + 1);
	memcpy(body + len - (sizeof(suffix) - 1), suffix, sizeof(suffix) - 1);
	assert_int_equal(lease_decode(body, len, &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "spec.holderIdentity: "));
	/* One byte more is refused before parsing. */
	body[len] = ' ';
	assert_int_equal(lease_decode(body, len + 1, &l, err, sizeof(err)), -1);
	assert_string_equal(err,
	    "body of 1048577 bytes is larger than 1048576");
	free(body);

	/* A tiny error buffer is truncated, not overrun. */
	assert_int_equal(lease_decode("[]", 2, &l, small, sizeof(small)), -1);
	assert_string_equal(small, "not a J");
	assert_int_equal(lease_decode("[]", 2, &l, NULL, 0), -1);

	/* Only len bytes are read: what follows does not matter. */
	assert_int_equal(lease_decode("{}garbage", 2, &l, err, sizeof(err)), 0);
	assert_string_equal(l.holder, "");
	assert_string_equal(l.rv, "");
}

struct fmt_case {
	int64_t		 us;
	const char	*want;
};

static void
test_format_microtime(void **state)
{
	static const struct fmt_case cases[] = {
		{ 0, "1970-01-01T00:00:00.000000Z" },
		{ 1, "1970-01-01T00:00:00.000001Z" },
		{ 999999, "1970-01-01T00:00:00.999999Z" },
		{ 1000000, "1970-01-01T00:00:01.000000Z" },
		{ -1, "1969-12-31T23:59:59.999999Z" },
		{ -999999, "1969-12-31T23:59:59.000001Z" },
		{ -1000000, "1969-12-31T23:59:59.000000Z" },
		{ -1000001, "1969-12-31T23:59:58.999999Z" },
		{ INT64_C(-86400000000), "1969-12-31T00:00:00.000000Z" },
		{ INT64_C(951782400000000), "2000-02-29T00:00:00.000000Z" },
		{ INT64_C(1709251199999999), "2024-02-29T23:59:59.999999Z" },
		{ INT64_C(4107542400000000), "2100-03-01T00:00:00.000000Z" },
		{ INT64_C(-2208988800000000), "1900-01-01T00:00:00.000000Z" },
		{ INT64_C(1598011006907075), "2020-08-21T11:56:46.907075Z" },
		{ INT64_C(253402300799999999), "9999-12-31T23:59:59.999999Z" },
		{ INT64_C(253402300800000000), "9999-12-31T23:59:59.999999Z" },
		{ INT64_MAX, "9999-12-31T23:59:59.999999Z" },
		{ INT64_C(-62167219200000000), "0000-01-01T00:00:00.000000Z" },
		{ INT64_C(-62167219200000001), "0000-01-01T00:00:00.000000Z" },
		{ INT64_MIN, "0000-01-01T00:00:00.000000Z" },
		{ INT64_C(-62135596800000000), "0001-01-01T00:00:00.000000Z" },
	};
	char buf[APITIME_MICRO_LEN + 4];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(buf, 'X', sizeof(buf));
		apitime_format_micro(cases[i].us, buf);
		if (strcmp(buf, cases[i].want) != 0)
			fail_msg("%" PRId64 ": got %s, want %s", cases[i].us,
			    buf, cases[i].want);
		/* Exactly APITIME_MICRO_LEN bytes are written. */
		assert_int_equal(strlen(buf), APITIME_MICRO_LEN - 1);
		assert_int_equal(buf[APITIME_MICRO_LEN], 'X');
	}
}

/*
 * Cross-check the calendar arithmetic against the C library's gmtime_r
 * (which does not depend on TZ) over a spread of times, and check that
 * every formatted time parses back to itself.
 */
static void
test_format_vs_gmtime(void **state)
{
	char buf[APITIME_MICRO_LEN], want[64];
	int64_t us, back, secs;
	uint64_t x = 88172645463325252ULL;
	struct tm tm;
	time_t t;
	int i;

	(void)state;
	for (i = 0; i < 200000; i++) {
		/* xorshift64 over 0000..9999, plus days around the epoch. */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i % 2 == 0)
			secs = INT64_C(-62167219200) + (int64_t)(x %
			    UINT64_C(315537897600));
		else
			secs = (int64_t)(x % 2000000) - 1000000;
		us = secs * 1000000 + (int64_t)(x % 1000000);
		t = (time_t)secs;
		assert_non_null(gmtime_r(&t, &tm));
		snprintf(want, sizeof(want),
		    "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900,
		    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		    tm.tm_sec, (int)(x % 1000000));
		apitime_format_micro(us, buf);
		if (strcmp(buf, want) != 0)
			fail_msg("%" PRId64 ": got %s, gmtime says %s", us,
			    buf, want);
		assert_int_equal(apitime_parse(buf, &back), 0);
		if (back != us)
			fail_msg("%s parsed as %" PRId64 ", want %" PRId64,
			    buf, back, us);
	}
}

struct parse_case {
	const char	*s;
	int		 rc;
	int64_t		 us;
};

static void
test_parse_time(void **state)
{
	static const struct parse_case cases[] = {
		{ "1970-01-01T00:00:00Z", 0, 0 },
		{ "1970-01-01T00:00:00.000001Z", 0, 1 },
		{ "1970-01-01T00:00:00.1Z", 0, 100000 },
		{ "1970-01-01T00:00:00.123456789Z", 0, 123456 },
		{ "1970-01-01T00:00:00.000000999Z", 0, 0 },
		{ "1970-01-01T01:00:00+01:00", 0, 0 },
		{ "1969-12-31T19:00:00-05:00", 0, 0 },
		{ "1970-01-01T05:30:00.5+05:30", 0, 500000 },
		{ "1970-01-01T00:00:00-00:00", 0, 0 },
		{ "1969-12-31T23:59:59.999999Z", 0, -1 },
		{ "2000-02-29T00:00:00Z", 0, INT64_C(951782400000000) },
		{ "2020-08-21T11:56:46.907075Z", 0, INT64_C(1598011006907075) },
		{ "9999-12-31T23:59:59.999999+00:00", 0,
		    INT64_C(253402300799999999) },
		{ "0000-01-01T00:00:00Z", 0, INT64_C(-62167219200000000) },
		{ "0000-02-29T00:00:00Z", 0, INT64_C(-62162121600000000) },
		{ "2024-01-01T00:00:00.Z", -1, 0 },
		{ "2024-01-01T00:00:00.1234567890Z", -1, 0 },
		{ "2024-01-01T00:00:00", -1, 0 },
		{ "2024-01-01T00:00:00z", -1, 0 },
		{ "2024-01-01t00:00:00Z", -1, 0 },
		{ "2024-01-01 00:00:00Z", -1, 0 },
		{ "2024-01-01T00:00:00ZZ", -1, 0 },
		{ "2024-01-01T00:00:00Z ", -1, 0 },
		{ " 2024-01-01T00:00:00Z", -1, 0 },
		{ "2024-1-01T00:00:00Z", -1, 0 },
		{ "24-01-01T00:00:00Z", -1, 0 },
		{ "+2024-01-01T00:00:00Z", -1, 0 },
		{ "2024-00-01T00:00:00Z", -1, 0 },
		{ "2024-13-01T00:00:00Z", -1, 0 },
		{ "2024-01-00T00:00:00Z", -1, 0 },
		{ "2024-01-32T00:00:00Z", -1, 0 },
		{ "2024-04-31T00:00:00Z", -1, 0 },
		{ "2023-02-29T00:00:00Z", -1, 0 },
		{ "1900-02-29T00:00:00Z", -1, 0 },
		{ "2024-01-01T24:00:00Z", -1, 0 },
		{ "2024-01-01T23:60:00Z", -1, 0 },
		{ "2024-01-01T23:59:60Z", -1, 0 },
		{ "2024-01-01T00:00:00+24:00", -1, 0 },
		{ "2024-01-01T00:00:00+01:60", -1, 0 },
		{ "2024-01-01T00:00:00+0100", -1, 0 },
		{ "2024-01-01T00:00:00+01", -1, 0 },
		{ "2024-01-01T00:00:00+01:00:00", -1, 0 },
		{ "2024-01-01T00:00:00.-1Z", -1, 0 },
		{ "2024-01-01", -1, 0 },
		{ "", -1, 0 },
	};
	size_t i;
	int64_t us;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		us = 42;
		rc = apitime_parse(cases[i].s, &us);
		if (rc != cases[i].rc)
			fail_msg("\"%s\": rc %d, want %d", cases[i].s, rc,
			    cases[i].rc);
		if (rc == 0 && us != cases[i].us)
			fail_msg("\"%s\": %" PRId64 ", want %" PRId64,
			    cases[i].s, us, cases[i].us);
	}
}

/*
 * apitime.c's edges that the tables above leave out: an offset that
 * carries a time out of 0000..9999 UTC, and whole seconds rounded down
 * before the epoch.
 */
static void
test_apitime_edges(void **state)
{
	int64_t us;

	(void)state;
	us = 42;
	assert_int_equal(apitime_parse("0000-01-01T00:00:00+00:01", &us), -1);
	assert_int_equal(apitime_parse("9999-12-31T23:59:59-00:01", &us), -1);
	assert_int_equal(us, 42);
	assert_int_equal(apitime_parse("0000-01-01T00:01:00+00:01", &us), 0);
	assert_int_equal(us, INT64_C(-62167219200000000));
	assert_int_equal(apitime_seconds(0), 0);
	assert_int_equal(apitime_seconds(999999), 0);
	assert_int_equal(apitime_seconds(1000000), 1);
	assert_int_equal(apitime_seconds(-1), -1);
	assert_int_equal(apitime_seconds(-1000000), -1);
	assert_int_equal(apitime_seconds(-1000001), -2);
}

/* resourceVersions compared as etcd revisions; others only as unequal. */
static void
test_rv_newer(void **state)
{
	(void)state;
	assert_true(apiobj_rv_newer("10", "9"));
	assert_false(apiobj_rv_newer("9", "10"));
	assert_false(apiobj_rv_newer("10", "10"));
	assert_false(apiobj_rv_newer("010", "10"));
	assert_true(apiobj_rv_newer("100000000000000000000", "99"));
	assert_true(apiobj_rv_newer("5", ""));
	assert_false(apiobj_rv_newer("", "5"));
	assert_true(apiobj_rv_newer("abc", "abd"));
	assert_true(apiobj_rv_newer("abd", "abc"));
	assert_false(apiobj_rv_newer("abc", "abc"));
}

static void
test_same_record(void **state)
{
	struct lease a, b;

	(void)state;
	memset(&a, 0, sizeof(a));
	strcpy(a.holder, "pod-a");
	a.duration_s = 15;
	a.transitions = 2;
	a.acquire_us = INT64_C(1598011006000000);
	a.renew_us = INT64_C(1598011016907075);
	strcpy(a.rv, "10");

	b = a;
	assert_true(lease_same_record(&a, &b));
	/* resourceVersion does not count. */
	strcpy(b.rv, "11");
	assert_true(lease_same_record(&a, &b));
	/* Sub-second differences within the same second do not count. */
	b.renew_us = INT64_C(1598011016000000);
	assert_true(lease_same_record(&a, &b));
	b.renew_us = INT64_C(1598011016999999);
	assert_true(lease_same_record(&a, &b));
	b.renew_us = INT64_C(1598011017000000);
	assert_false(lease_same_record(&a, &b));
	b = a;
	b.acquire_us += 1000000;
	assert_false(lease_same_record(&a, &b));

	/* Before 1970 seconds are floored, not truncated towards zero. */
	a.renew_us = -1;
	b = a;
	b.renew_us = -1000000;
	assert_true(lease_same_record(&a, &b));
	b.renew_us = -1000001;
	assert_false(lease_same_record(&a, &b));
	b.renew_us = 1;
	assert_false(lease_same_record(&a, &b));
	/* Null differs from a time in the first second of 1970. */
	a.renew_us = 0;
	b.renew_us = 1;
	assert_false(lease_same_record(&a, &b));
	assert_false(lease_same_record(&b, &a));
	b.renew_us = 0;
	assert_true(lease_same_record(&a, &b));

	b = a;
	strcpy(b.holder, "pod-b");
	assert_false(lease_same_record(&a, &b));
	b = a;
	b.holder[0] = '\0';
	assert_false(lease_same_record(&a, &b));
	b = a;
	b.duration_s = 16;
	assert_false(lease_same_record(&a, &b));
	b = a;
	b.transitions = 3;
	assert_false(lease_same_record(&a, &b));
	b = a;
	strcpy(b.strategy, "OldestEmulationVersion");
	assert_false(lease_same_record(&a, &b));
	b = a;
	strcpy(b.preferred, "pod-c");
	assert_false(lease_same_record(&a, &b));
}

static void
test_encode_edge(void **state)
{
	struct lease rec, back;
	char err[256], *s;

	(void)state;
	memset(&rec, 0, sizeof(rec));
	/* Invalid UTF-8 becomes U+FFFD, as Go's encoder does. */
	strcpy(rec.holder, "a\xff" "b\xc3");
	s = lease_encode_create("ns\xe0\x80", "n", &rec);
	assert_string_equal(s, "{\"apiVersion\":\"coordination.k8s.io/v1\","
	    "\"kind\":\"Lease\",\"metadata\":{\"name\":\"n\",\"namespace\":"
	    "\"ns\xef\xbf\xbd\xef\xbf\xbd\"},\"spec\":{\"holderIdentity\":"
	    "\"a\xef\xbf\xbd" "b\xef\xbf\xbd\",\"leaseDurationSeconds\":0,"
	    "\"acquireTime\":null,\"renewTime\":null,\"leaseTransitions\":0}}");
	free(s);

	/* Quotes, backslashes and control characters are escaped. */
	strcpy(rec.holder, "q\"b\\c\n\x01");
	s = lease_encode_create("ns", "n", &rec);
	assert_non_null(strstr(s,
	    "\"holderIdentity\":\"q\\\"b\\\\c\\n\\u0001\""));
	assert_int_equal(lease_decode(s, strlen(s), &back, err, sizeof(err)),
	    0);
	assert_string_equal(back.holder, rec.holder);
	free(s);
}

/*
 * A Lease created for life (nais/elector's candidate.go): an owner
 * reference to the pod and a spec of holderIdentity and acquireTime.
 */
static void
test_encode_create_owned(void **state)
{
	struct lease		 rec, back;
	struct lease_owner	 own = { "v1", "Pod", "app-5d9c-abcde",
				    "0b6e4f43-9d3c-4c21-8f0a-6d1f2e3a4b5c" };
	char			 err[256], *s;

	(void)state;
	memset(&rec, 0, sizeof(rec));
	strcpy(rec.holder, "app-5d9c-abcde");
	rec.acquire_us = 1700000000123456LL;
	rec.renew_us = 1700000001000000LL;	/* never written */
	rec.duration_s = 15;
	rec.transitions = 2;
	s = lease_encode_create_owned("team-a", "app", &rec, &own);
	assert_string_equal(s, "{\"apiVersion\":\"coordination.k8s.io/v1\","
	    "\"kind\":\"Lease\",\"metadata\":{\"name\":\"app\",\"namespace\":"
	    "\"team-a\",\"ownerReferences\":[{\"apiVersion\":\"v1\","
	    "\"kind\":\"Pod\",\"name\":\"app-5d9c-abcde\",\"uid\":"
	    "\"0b6e4f43-9d3c-4c21-8f0a-6d1f2e3a4b5c\"}]},\"spec\":{"
	    "\"holderIdentity\":\"app-5d9c-abcde\",\"acquireTime\":"
	    "\"2023-11-14T22:13:20.123456Z\"}}");
	assert_int_equal(lease_decode(s, strlen(s), &back, err, sizeof(err)),
	    0);
	assert_string_equal(back.holder, "app-5d9c-abcde");
	assert_int_equal(back.acquire_us, rec.acquire_us);
	assert_int_equal(back.duration_s, 0);
	assert_int_equal(back.renew_us, 0);
	free(s);
}

/* A Pod's metadata.uid, the owner of a Lease held for life. */
static void
test_uid(void **state)
{
	static const struct {
		const char	*body;
		int		 rc;
		const char	*want;	/* uid, or the error */
	} cases[] = {
		{ "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":"
		    "{\"name\":\"p\",\"uid\":\"u-1\"},\"spec\":{}}", 0, "u-1" },
		{ "{\"metadata\":{\"uid\":\"u-2\"}}", 0, "u-2" },
		{ "{\"kind\":\"Status\",\"metadata\":{}}", -1,
		    "the answer is not a Pod" },
		{ "{\"kind\":\"Pod\"}", -1, "the Pod has no metadata" },
		{ "{\"kind\":\"Pod\",\"metadata\":{\"uid\":\"\"}}", -1,
		    "the Pod has no metadata.uid" },
		{ "{\"kind\":\"Pod\",\"metadata\":{\"uid\":7}}", -1, NULL },
		{ "[1]", -1, "the answer is not a Pod" },
		{ "<html>", -1, NULL },
	};
	char	 uid[64], err[256];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strcpy(uid, "junk");
		err[0] = '\0';
		assert_int_equal(apiobj_uid(cases[i].body,
		    strlen(cases[i].body), "Pod", uid, sizeof(uid), err,
		    sizeof(err)), cases[i].rc);
		if (cases[i].rc == 0)
			assert_string_equal(uid, cases[i].want);
		else {
			assert_string_equal(uid, "");
			assert_true(err[0] != '\0');
			if (cases[i].want != NULL)
				assert_string_equal(err, cases[i].want);
		}
	}
}

/*
 * The handover mark: written as the annotation LEASE_HANDOVER beside the
 * record by a handover, read back by lease_decode, and removed by any
 * other update; the other annotations and metadata stay.
 */
static void
test_handover_mark(void **state)
{
	const char	*base = "{\"apiVersion\":\"coordination.k8s.io/v1\","
	    "\"kind\":\"Lease\",\"metadata\":{\"name\":\"l\","
	    "\"resourceVersion\":\"7\",\"annotations\":{\"x\":\"y\"}},"
	    "\"spec\":{\"holderIdentity\":\"a\"}}";
	struct lease	 rec, back;
	char		 err[256], *out, *out2;

	(void)state;
	memset(&rec, 0, sizeof(rec));
	strcpy(rec.holder, "b");
	strcpy(rec.handover, "b");
	rec.duration_s = 15;
	assert_non_null(out = lease_encode_update(base, strlen(base), &rec,
	    err, sizeof(err)));
	assert_non_null(strstr(out, "\"leaderd.io/handover-to\":\"b\""));
	assert_non_null(strstr(out, "\"x\":\"y\""));
	assert_int_equal(lease_decode(out, strlen(out), &back, err,
	    sizeof(err)), 0);
	assert_string_equal(back.handover, "b");
	assert_string_equal(back.holder, "b");
	/* The successor's renew removes the mark, and only the mark. */
	rec.handover[0] = '\0';
	assert_non_null(out2 = lease_encode_update(out, strlen(out), &rec,
	    err, sizeof(err)));
	assert_null(strstr(out2, "handover-to"));
	assert_non_null(strstr(out2, "\"x\":\"y\""));
	assert_int_equal(lease_decode(out2, strlen(out2), &back, err,
	    sizeof(err)), 0);
	assert_string_equal(back.handover, "");
	free(out);
	free(out2);
	/* A mark that is not a string is a bad answer. */
	out = "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":"
	    "\"Lease\",\"metadata\":{\"annotations\":"
	    "{\"leaderd.io/handover-to\":7}}}";
	assert_int_equal(lease_decode(out, strlen(out), &back, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "not a string"));
}

static void
test_encode_update_errors(void **state)
{
	static const struct {
		const char	*base;
		const char	*err;
	} cases[] = {
		{ "", "base is not JSON: '[' or '{' expected near end of file "
		    "at line 1 column 0" },
		{ "{\"kind\":\"Lease\"", "base is not JSON: '}' expected"
		    " near end of file at line 1 column 15" },
		{ "{\"kind\":\"Lease\",", "base is not JSON: string or '}' "
		    "expected near end of file at line 1 column 16" },
		{ "[]", "not a JSON object" },
		{ "{\"kind\":\"Status\"}",
		    "kind: \"Status\" is not \"Lease\"" },
		{ "{\"apiVersion\":\"v1\"}",
		    "apiVersion: \"v1\" is not \"coordination.k8s.io/v1\"" },
		{ "{\"metadata\":[]}", "metadata: not an object" },
		{ "{\"spec\":3}", "spec: not an object" },
	};
	struct lease rec;
	char err[256], *s;
	size_t i;

	(void)state;
	memset(&rec, 0, sizeof(rec));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = lease_encode_update(cases[i].base, strlen(cases[i].base),
		    &rec, err, sizeof(err));
		if (s != NULL)
			fail_msg("base %s: encoded %s", cases[i].base, s);
		assert_string_equal(err, cases[i].err);
	}
	assert_null(lease_encode_update(LIT("{\"a\":\"\0\"}"), &rec, err,
	    sizeof(err)));
	assert_string_equal(err, "base contains a NUL byte");

	/* A spec of the wrong shape in the base is replaced, not read. */
	s = lease_encode_update(LIT("{\"spec\":{\"holderIdentity\":7}}"),
	    &rec, err, sizeof(err));
	assert_non_null(s);
	assert_string_equal(err, "");
	assert_string_equal(s, "{\"spec\":{\"holderIdentity\":\"\","
	    "\"leaseDurationSeconds\":0,\"acquireTime\":null,"
	    "\"renewTime\":null,\"leaseTransitions\":0}}");
	free(s);
}

/*
 * The fencing token: equal records give equal tokens, more transitions
 * compare greater as strings (also across digit counts), a new uid gives
 * a new token, and a free lease has none.
 */
static void
test_fencing_token(void **state)
{
	struct lease	 a, b;
	char		 ta[LEASE_TOKEN_MAX], tb[LEASE_TOKEN_MAX];
	int32_t		 steps[] = { 0, 1, 9, 10, 99, 100, 123456, 2147483647 };
	size_t		 i;

	(void)state;
	memset(&a, 0, sizeof(a));
	snprintf(a.holder, sizeof(a.holder), "pod-a");
	snprintf(a.uid, sizeof(a.uid), "6f1c0d0e-1111-2222-3333-444455556666");
	a.transitions = 7;
	lease_fencing_token(&a, ta, sizeof(ta));
	assert_string_equal(ta,
	    "0000000007-6f1c0d0e-1111-2222-3333-444455556666");
	b = a;
	snprintf(b.holder, sizeof(b.holder), "pod-b");	/* other observer */
	b.renew_us = 12345;
	lease_fencing_token(&b, tb, sizeof(tb));
	assert_string_equal(ta, tb);
	for (i = 0; i + 1 < sizeof(steps) / sizeof(steps[0]); i++) {
		a.transitions = steps[i];
		b.transitions = steps[i + 1];
		lease_fencing_token(&a, ta, sizeof(ta));
		lease_fencing_token(&b, tb, sizeof(tb));
		assert_true(strcmp(ta, tb) < 0);
	}
	b = a;
	snprintf(b.uid, sizeof(b.uid), "0a1c0d0e-1111-2222-3333-444455556666");
	lease_fencing_token(&a, ta, sizeof(ta));
	lease_fencing_token(&b, tb, sizeof(tb));
	assert_string_not_equal(ta, tb);
	b.holder[0] = '\0';
	lease_fencing_token(&b, tb, sizeof(tb));
	assert_string_equal(tb, "");
}

static void
test_status(void **state)
{
	static const char notfound[] = "{\"kind\":\"Status\",\"apiVersion\":"
	    "\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":"
	    "\"leases.coordination.k8s.io \\\"x\\\" not found\",\"reason\":"
	    "\"NotFound\",\"details\":{\"name\":\"x\",\"group\":"
	    "\"coordination.k8s.io\",\"kind\":\"leases\"},\"code\":404}";
	char reason[64], message[512], tiny[5];

	(void)state;
	assert_int_equal(apiobj_status(notfound, sizeof(notfound) - 1, reason,
	    sizeof(reason), message, sizeof(message)), 0);
	assert_string_equal(reason, "NotFound");
	assert_string_equal(message,
	    "leases.coordination.k8s.io \"x\" not found");

	/* Either buffer may be NULL; long values are truncated. */
	assert_int_equal(apiobj_status(notfound, sizeof(notfound) - 1, NULL, 0,
	    tiny, sizeof(tiny)), 0);
	assert_string_equal(tiny, "leas");
	assert_int_equal(apiobj_status(notfound, sizeof(notfound) - 1, reason,
	    sizeof(reason), NULL, 0), 0);
	assert_string_equal(reason, "NotFound");

	/* A Status without reason or message reads as "". */
	strcpy(reason, "junk");
	strcpy(message, "junk");
	assert_int_equal(apiobj_status(LIT("{\"kind\":\"Status\","
	    "\"reason\":5}"), reason, sizeof(reason), message,
	    sizeof(message)), 0);
	assert_string_equal(reason, "");
	assert_string_equal(message, "");

	/* Not a Status: -1 and empty buffers. */
	strcpy(reason, "junk");
	strcpy(message, "junk");
	assert_int_equal(apiobj_status(LIT("{\"kind\":\"Lease\","
	    "\"reason\":\"x\"}"), reason, sizeof(reason), message,
	    sizeof(message)), -1);
	assert_string_equal(reason, "");
	assert_string_equal(message, "");
	assert_int_equal(apiobj_status(LIT("<html>502</html>"), reason,
	    sizeof(reason), message, sizeof(message)), -1);
	assert_string_equal(reason, "");
	assert_int_equal(apiobj_status(LIT("[{\"kind\":\"Status\"}]"), reason,
	    sizeof(reason), message, sizeof(message)), -1);
	assert_int_equal(apiobj_status("", 0, reason, sizeof(reason), message,
	    sizeof(message)), -1);
	assert_int_equal(apiobj_status(LIT("{\"message\":\"x\"}"), reason,
	    sizeof(reason), message, sizeof(message)), -1);
	assert_string_equal(message, "");
}

static void
test_watch_event(void **state)
{
	static const char added[] = "{\"type\":\"MODIFIED\",\"object\":"
	    "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\","
	    "\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\","
	    "\"uid\":\"u-1\",\"resourceVersion\":\"42\"},\"spec\":"
	    "{\"holderIdentity\":\"pod-b\",\"leaseDurationSeconds\":15,"
	    "\"renewTime\":\"2026-12-03T08:00:00.000000Z\"}}}";
	static const char bookmark[] = "{\"type\":\"BOOKMARK\",\"object\":"
	    "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\","
	    "\"metadata\":{\"resourceVersion\":\"77\"}}}";
	static const char gone[] = "{\"type\":\"ERROR\",\"object\":{"
	    "\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
	    "\"status\":\"Failure\",\"message\":\"too old resource "
	    "version: 5 (90)\",\"reason\":\"Expired\",\"code\":410}}";
	static const char *const bad[] = {
		"", "{", "[]", "{\"type\":\"ADDED\"}",
		"{\"type\":\"SOMETHING\",\"object\":{}}",
		"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}",
		"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\"}}",
		"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Lease\","
		    "\"spec\":{\"leaseDurationSeconds\":\"x\"}}}",
	};
	struct apiobj_watch_event	 ev;
	struct lease		 back;
	char			 err[256], *obj;
	size_t			 i;

	(void)state;
	assert_int_equal(apiobj_decode_watch_event(added, strlen(added), &ev,
	    &obj, err, sizeof(err)), 0);
	assert_int_equal(ev.type, APIOBJ_WATCH_MODIFIED);
	assert_string_equal(ev.rec.holder, "pod-b");
	assert_string_equal(ev.rv, "42");
	assert_string_equal(ev.name, "x");
	assert_non_null(obj);
	/* The object is the body a PUT goes over: it decodes the same. */
	assert_int_equal(lease_decode(obj, strlen(obj), &back, err,
	    sizeof(err)), 0);
	assert_string_equal(back.uid, "u-1");
	assert_true(lease_same_record(&ev.rec, &back));
	free(obj);

	assert_int_equal(apiobj_decode_watch_event(bookmark, strlen(bookmark),
	    &ev, &obj, err, sizeof(err)), 0);
	assert_int_equal(ev.type, APIOBJ_WATCH_BOOKMARK);
	assert_string_equal(ev.rv, "77");
	assert_null(obj);

	assert_int_equal(apiobj_decode_watch_event(gone, strlen(gone), &ev,
	    &obj, err, sizeof(err)), 0);
	assert_int_equal(ev.type, APIOBJ_WATCH_ERROR);
	assert_int_equal(ev.code, 410);
	assert_string_equal(ev.reason, "Expired");
	assert_null(obj);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(apiobj_decode_watch_event(bad[i],
		    strlen(bad[i]), &ev, &obj, err, sizeof(err)), -1);
		assert_null(obj);
		assert_true(err[0] != '\0');
	}
}

/* A create with labels carries them in metadata.labels. */
static void
test_encode_create_labeled(void **state)
{
	const char	*labels[] = { "leaderd.io/shard-group", "work",
			    "leaderd.io/shard-member", "true", NULL };
	struct lease	 rec, back;
	char		*body, err[256];

	(void)state;
	memset(&rec, 0, sizeof(rec));
	snprintf(rec.holder, sizeof(rec.holder), "pod-a");
	rec.duration_s = 15;
	body = lease_encode_create_labeled("ns", "work-member-pod-a", &rec,
	    labels);
	assert_non_null(strstr(body, "\"labels\":{\"leaderd.io/shard-group\":"
	    "\"work\",\"leaderd.io/shard-member\":\"true\"}"));
	assert_non_null(strstr(body, "\"name\":\"work-member-pod-a\""));
	assert_int_equal(lease_decode(body, strlen(body), &back, err,
	    sizeof(err)), 0);
	assert_string_equal(back.holder, "pod-a");
	free(body);
	/* No labels: the plain create's bytes. */
	body = lease_encode_create_labeled("ns", "x", &rec, NULL);
	assert_null(strstr(body, "labels"));
	free(body);
}

struct list_seen {
	char	 names[4][LEASE_HOLDER_MAX];
	char	 holders[4][LEASE_HOLDER_MAX];
	int	 n;
};

static void
list_cb(const char *name, const struct lease *rec, char *obj, void *arg)
{
	struct list_seen	*ls = arg;
	struct lease		 again;
	char			 err[256];

	assert_true(ls->n < 4);
	snprintf(ls->names[ls->n], sizeof(ls->names[0]), "%s", name);
	snprintf(ls->holders[ls->n], sizeof(ls->holders[0]), "%s",
	    rec->holder);
	ls->n++;
	/* The object is a Lease a PUT can go over: kind restored. */
	assert_non_null(strstr(obj, "\"kind\":\"Lease\""));
	assert_int_equal(lease_decode(obj, strlen(obj), &again, err,
	    sizeof(err)), 0);
	assert_string_equal(again.rv, rec->rv);
	free(obj);
}

/* The names a caller follows: work-*. */
static int
work_only(const char *name, void *arg)
{
	(void)arg;
	return strncmp(name, "work-", 5) == 0;
}

/*
 * A LeaseList's page: each item by name, its record and object; the
 * page's rv and continue token; an item that is no object, has no name,
 * is not wanted or is not a valid Lease skipped and counted, not the
 * page failed; a page that cannot be read is an error.
 */
static void
test_list_decode(void **state)
{
	const char	*ok = "{\"kind\":\"LeaseList\",\"apiVersion\":"
	    "\"coordination.k8s.io/v1\",\"metadata\":{\"resourceVersion\":"
	    "\"42\"},\"items\":[{\"metadata\":{\"name\":\"work-0\","
	    "\"resourceVersion\":\"40\",\"uid\":\"u0\"},\"spec\":{"
	    "\"holderIdentity\":\"pod-a\",\"leaseDurationSeconds\":15}},"
	    "{\"metadata\":{\"name\":\"work-member-pod-b\","
	    "\"resourceVersion\":\"41\"},\"spec\":{}}]}";
	const char	*empty = "{\"kind\":\"LeaseList\",\"metadata\":{"
	    "\"resourceVersion\":\"7\"},\"items\":null}";
	/* Items skipped and counted, not the page failed. */
	const char	*mixed = "{\"metadata\":{\"resourceVersion\":\"9\","
	    "\"continue\":\"eyJydiI6OX0\"},\"items\":[1,{\"spec\":{}},"
	    "{\"metadata\":{\"name\":\"other\"}},"
	    "{\"metadata\":{\"name\":\"work-1\"},\"spec\":{"
	    "\"leaseDurationSeconds\":\"x\"}},"
	    "{\"metadata\":{\"name\":\"work-2\"},\"spec\":{"
	    "\"holderIdentity\":\"pod-c\"}}]}";
	const char	*bad[] = {
		"not json",
		"{\"items\":{}}",
		"{\"metadata\":{\"continue\":7},\"items\":[]}",
	};
	struct lease_list	 page;
	struct list_seen	 ls;
	char			 err[256], *big;
	size_t			 i;

	(void)state;
	memset(&ls, 0, sizeof(ls));
	assert_int_equal(lease_list_decode(ok, strlen(ok), NULL, list_cb, &ls,
	    &page, err, sizeof(err)), 0);
	assert_string_equal(page.rv, "42");
	assert_string_equal(page.cont, "");
	assert_int_equal(page.items, 2);
	assert_int_equal(page.skipped, 0);
	assert_int_equal(ls.n, 2);
	assert_string_equal(ls.names[0], "work-0");
	assert_string_equal(ls.holders[0], "pod-a");
	assert_string_equal(ls.names[1], "work-member-pod-b");
	assert_string_equal(ls.holders[1], "");
	memset(&ls, 0, sizeof(ls));
	assert_int_equal(lease_list_decode(empty, strlen(empty), NULL, list_cb,
	    &ls, &page, err, sizeof(err)), 0);
	assert_int_equal(ls.n, 0);
	assert_string_equal(page.rv, "7");
	memset(&ls, 0, sizeof(ls));
	assert_int_equal(lease_list_decode(mixed, strlen(mixed), work_only,
	    list_cb, &ls, &page, err, sizeof(err)), 0);
	assert_string_equal(page.cont, "eyJydiI6OX0");
	assert_int_equal(ls.n, 1);
	assert_string_equal(ls.names[0], "work-2");
	assert_int_equal(page.items, 1);
	assert_int_equal(page.skipped, 4);
	assert_non_null(strstr(page.why, "(no name)"));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&ls, 0, sizeof(ls));
		assert_int_equal(lease_list_decode(bad[i], strlen(bad[i]),
		    NULL, list_cb, &ls, &page, err, sizeof(err)), -1);
		assert_true(err[0] != '\0');
		assert_int_equal(ls.n, 0);
	}
	/* A continue token longer than any the API server writes. */
	big = malloc(LEASE_CONTINUE_MAX + 64);
	assert_non_null(big);
	i = (size_t)snprintf(big, 64, "{\"metadata\":{\"continue\":\"");
	memset(big + i, 'a', LEASE_CONTINUE_MAX);
	snprintf(big + i + LEASE_CONTINUE_MAX, 32, "\"},\"items\":[]}");
	assert_int_equal(lease_list_decode(big, strlen(big), NULL, list_cb,
	    &ls, &page, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "metadata.continue"));
	free(big);
}

/*
 * A LeaseList page cut short: its version and continue token, and the
 * first item's name when the cut came after it; no head, an error.
 */
static void
test_list_head(void **state)
{
	const char	*page = "{\"kind\":\"LeaseList\",\"apiVersion\":"
	    "\"coordination.k8s.io/v1\",\"metadata\":{\"resourceVersion\":"
	    "\"77\",\"continue\":\"eyJydiI6Nzd9\",\"remainingItemCount\":3},"
	    "\"items\":[{\"metadata\":{\"name\":\"big-1\",\"namespace\":"
	    "\"ns\",\"annotations\":{\"pad\":\"\\u0026\\u0026";
	const char	*last = "{\"metadata\":{\"resourceVersion\":\"78\"},"
	    "\"items\":[{\"metadata\":{\"na";
	const char	*bad[] = {
		"{\"metadata\":{\"resourceVersion\":\"78\"",
		"{\"metadata\":{\"continue\":7},\"items\":[",
		"{\"metadata\":7,\"items\":[",
		"not json \"items\":[",
	};
	struct lease_list	 out;
	char			 name[LEASE_HOLDER_MAX], err[256];
	size_t			 i;

	(void)state;
	assert_int_equal(lease_list_head(page, strlen(page), &out, name,
	    sizeof(name), err, sizeof(err)), 0);
	assert_string_equal(out.rv, "77");
	assert_string_equal(out.cont, "eyJydiI6Nzd9");
	assert_string_equal(name, "big-1");
	assert_int_equal(out.items, 0);
	/* The last page: no token; the cut within the first name. */
	assert_int_equal(lease_list_head(last, strlen(last), &out, name,
	    sizeof(name), err, sizeof(err)), 0);
	assert_string_equal(out.rv, "78");
	assert_string_equal(out.cont, "");
	assert_string_equal(name, "");
	/* A name cut short is no name. */
	assert_int_equal(lease_list_head(page, strstr(page, "big-1") + 3 -
	    page, &out, name, sizeof(name), err, sizeof(err)), 0);
	assert_string_equal(name, "");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(lease_list_head(bad[i], strlen(bad[i]), &out,
		    name, sizeof(name), err, sizeof(err)), -1);
		assert_true(err[0] != '\0');
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_valid),
		cmocka_unit_test(test_golden_invalid),
		cmocka_unit_test(test_golden_encode),
		cmocka_unit_test(test_decode_limits),
		cmocka_unit_test(test_format_microtime),
		cmocka_unit_test(test_format_vs_gmtime),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_apitime_edges),
		cmocka_unit_test(test_same_record),
		cmocka_unit_test(test_rv_newer),
		cmocka_unit_test(test_encode_edge),
		cmocka_unit_test(test_encode_create_owned),
		cmocka_unit_test(test_uid),
		cmocka_unit_test(test_encode_update_errors),
		cmocka_unit_test(test_handover_mark),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_watch_event),
		cmocka_unit_test(test_fencing_token),
		cmocka_unit_test(test_encode_create_labeled),
		cmocka_unit_test(test_list_decode),
		cmocka_unit_test(test_list_head),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
