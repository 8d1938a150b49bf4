/*
 * duration_test.c -- duration_parse and duration_format against Go's
 * time.ParseDuration and Duration.String().
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "base/duration.h"

struct ok_case {
	const char	*in;
	uint64_t	 ms;
};

/* Values as Go parses them, in milliseconds. */
static const struct ok_case ok_cases[] = {
	{ "0", 0 },
	{ "0s", 0 },
	{ "0ms", 0 },
	{ "0.0h", 0 },
	{ "15s", 15000 },
	{ "10s", 10000 },
	{ "2s", 2000 },
	{ "500ms", 500 },
	{ "1m30s", 90000 },
	{ "1h", 3600000 },
	{ "1.5h", 5400000 },
	{ "1.5s", 1500 },
	{ ".5s", 500 },
	{ "5.s", 5000 },
	{ "1h2m3s4ms", 3723004 },
	{ "15000us", 15 },
	{ "2000us", 2 },
	{ "1000\xc2\xb5s", 1 },		/* U+00B5 */
	{ "1000\xce\xbcs", 1 },		/* U+03BC */
	{ "3000000ns", 3 },
	{ "1s1s", 2000 },		/* Go allows repeated units */
	{ "0.001s", 1 },
	{ "0.1m", 6000 },
	{ "0.01h", 36000 },
	{ "1.0000000000000000001s", 1000 },	/* dropped digits, as Go */
	{ "010s", 10000 },
	{ "2562047h", UINT64_C(2562047) * 3600000 },
	{ "9223372036854ms", UINT64_C(9223372036854) },
	{ "1.5ms500us", 2 },
	{ "1h0m0s", 3600000 },
};

struct bad_case {
	const char	*in;
	const char	*why;	/* a substring of the error */
};

static const struct bad_case bad_cases[] = {
	{ "", "empty duration" },
	{ "10", "missing unit; add a unit such as s or ms" },
	{ "1m30", "missing unit" },
	{ "1.5.s", "missing unit" },
	{ "-5s", "a sign is not allowed" },
	{ "+5s", "a sign is not allowed" },
	{ "1us", "not a whole number of milliseconds" },
	{ "1500us", "not a whole number of milliseconds" },	/* 1.5 ms */
	{ "1500ns", "not a whole number of milliseconds" },
	{ "1.0001s", "not a whole number of milliseconds" },
	{ "1500us1ns", "not a whole number of milliseconds" },
	{ "5x", "unknown unit \"x\"" },
	{ "5 s", "unknown unit \" s\"" },
	{ "5sec", "unknown unit \"sec\"" },
	{ "5S", "unknown unit \"S\"" },
	{ "s", "expected a number" },
	{ ".s", "expected a number" },
	{ " 5s", "expected a number" },
	{ "5s ", "unknown unit \"s \"" },
	{ "2562048h", "out of range" },
	{ "9223372036855s", "out of range" },
	{ "99999999999999999999ms", "out of range" },
	{ "2562047h48m", "out of range" },
	{ "5000000000000000000h", "out of range" },
};

struct fmt_case {
	uint64_t	 ms;
	const char	*out;
};

/* As Go's Duration.String() prints them. */
static const struct fmt_case fmt_cases[] = {
	{ 0, "0s" },
	{ 1, "1ms" },
	{ 500, "500ms" },
	{ 999, "999ms" },
	{ 1000, "1s" },
	{ 1500, "1.5s" },
	{ 1001, "1.001s" },
	{ 1010, "1.01s" },
	{ 15000, "15s" },
	{ 59999, "59.999s" },
	{ 60000, "1m0s" },
	{ 90000, "1m30s" },
	{ 3600000, "1h0m0s" },
	{ 3723004, "1h2m3.004s" },
	{ 5400000, "1h30m0s" },
	{ UINT64_C(2562047) * 3600000, "2562047h0m0s" },
};

static void
test_parse_ok(void **state)
{
	char		 err[256];
	uint64_t	 ms;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(ok_cases) / sizeof(ok_cases[0]); i++) {
		const char *in = ok_cases[i].in;
		uint64_t want = ok_cases[i].ms;

		ms = 12345;
		err[0] = '\0';
		if (duration_parse(in, &ms, err, sizeof(err)) != 0)
			fail_msg("duration_parse(\"%s\") failed: %s", in, err);
		if (ms != want)
			fail_msg("duration_parse(\"%s\") = %llu, want %llu",
			    in, (unsigned long long)ms,
			    (unsigned long long)want);
	}
}

static void
test_parse_bad(void **state)
{
	char		 err[256];
	uint64_t	 ms;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		ms = 777;
		err[0] = '\0';
		if (duration_parse(bad_cases[i].in, &ms, err,
		    sizeof(err)) != -1)
			fail_msg("duration_parse(\"%s\") succeeded (%llu ms)",
			    bad_cases[i].in, (unsigned long long)ms);
		if (strstr(err, bad_cases[i].why) == NULL)
			fail_msg("duration_parse(\"%s\"): error \"%s\" lacks "
			    "\"%s\"", bad_cases[i].in, err, bad_cases[i].why);
		assert_int_equal(ms, 777);	/* untouched on error */
	}
}

static void
test_parse_messages(void **state)
{
	char		 err[256];
	uint64_t	 ms;

	(void)state;
	assert_int_equal(duration_parse("10", &ms, err, sizeof(err)), -1);
	assert_string_equal(err, "invalid duration \"10\": missing unit; "
	    "add a unit such as s or ms");
	assert_int_equal(duration_parse("1us", &ms, err, sizeof(err)), -1);
	assert_string_equal(err, "invalid duration \"1us\": not a whole "
	    "number of milliseconds");
	assert_int_equal(duration_parse("3d", &ms, err, sizeof(err)), -1);
	assert_string_equal(err, "invalid duration \"3d\": unknown unit "
	    "\"d\"; use h, m, s, ms, us or ns");
	/* A small buffer truncates the message but stays a string. */
	assert_int_equal(duration_parse("10", &ms, err, 8), -1);
	assert_string_equal(err, "invalid");
	/* A NULL string is an error, not a crash. */
	assert_int_equal(duration_parse(NULL, &ms, err, sizeof(err)), -1);
}

/* Nanoseconds: what Go reads, including less than a millisecond. */
static void
test_parse_ns(void **state)
{
	char		 err[256];
	uint64_t	 ns;

	(void)state;
	assert_int_equal(duration_parse_ns("1500us", &ns, err, sizeof(err)),
	    0);
	assert_int_equal(ns, 1500000);
	assert_int_equal(duration_parse_ns("1ns", &ns, err, sizeof(err)), 0);
	assert_int_equal(ns, 1);
	assert_int_equal(duration_parse_ns("1.0000000001s", &ns, err,
	    sizeof(err)), 0);
	assert_int_equal(ns, 1000000000);	/* Go drops the 0.1 ns */
	assert_int_equal(duration_parse_ns("2562047h47m16.854775807s", &ns,
	    err, sizeof(err)), 0);
	assert_true(ns == UINT64_C(9223372036854775807));
	assert_int_equal(duration_parse_ns("2562047h47m16.854775808s", &ns,
	    err, sizeof(err)), -1);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(duration_parse_ns("3", &ns, err, sizeof(err)), -1);
	assert_int_equal(duration_parse_ns("-3s", &ns, err, sizeof(err)), -1);
}

static void
test_format(void **state)
{
	char	 buf[32];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(fmt_cases) / sizeof(fmt_cases[0]); i++) {
		memset(buf, 'x', sizeof(buf));
		duration_format(fmt_cases[i].ms, buf, sizeof(buf));
		if (strcmp(buf, fmt_cases[i].out) != 0)
			fail_msg("duration_format(%llu) = \"%s\", want \"%s\"",
			    (unsigned long long)fmt_cases[i].ms, buf,
			    fmt_cases[i].out);
	}
	/* Truncation keeps a NUL. */
	memset(buf, 'x', sizeof(buf));
	duration_format(3723004, buf, 4);
	assert_string_equal(buf, "1h2");
	duration_format(3723004, buf, 1);
	assert_string_equal(buf, "");
	/* The largest value does not overflow the buffer. */
	duration_format(UINT64_MAX, buf, sizeof(buf));
	assert_string_equal(buf, "5124095576030h25m51.615s");
}

/* format(parse(x)) and parse(format(ms)) are inverses. */
static void
test_round_trip(void **state)
{
	char		 buf[32], err[256];
	uint64_t	 ms, back, x = 88172645463325252ULL;
	int		 i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		/* xorshift64: fixed seed, so failures reproduce. */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		switch (i % 4) {
		case 0:
			ms = x % 1000;
			break;
		case 1:
			ms = x % 3600000;
			break;
		case 2:
			ms = x % (UINT64_C(1000) * 3600000);
			break;
		default:
			ms = x % UINT64_C(9223372036854);
			break;
		}
		duration_format(ms, buf, sizeof(buf));
		if (duration_parse(buf, &back, err, sizeof(err)) != 0)
			fail_msg("parse(format(%llu) = \"%s\"): %s",
			    (unsigned long long)ms, buf, err);
		if (back != ms)
			fail_msg("parse(format(%llu) = \"%s\") = %llu",
			    (unsigned long long)ms, buf,
			    (unsigned long long)back);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_parse_messages),
		cmocka_unit_test(test_parse_ns),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
