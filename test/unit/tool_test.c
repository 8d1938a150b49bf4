/*
 * tool_test.c -- what the operator's tools print (tool.c, tool_fmt.c,
 * tool_lease.c): kubectl's ages (k8s.io/apimachinery's HumanDuration,
 * case by case), EXPIRES, path escaping, a table's padding, and the
 * JSON and YAML documents' exact bytes.
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
#include "tool/tool.h"
#include "tool/tool_fmt.h"
#include "tool/tool_lease.h"

#define S	1000000LL	/* a second in µs */

static void
test_age(void **state)
{
	/* duration_test.go's cases of HumanDuration, and the edges. */
	static const struct {
		int64_t		 us;
		const char	*want;
	} cases[] = {
		{ -2 * S, "<invalid>" }, { -S, "0s" }, { 0, "0s" },
		{ S - 1, "0s" }, { S, "1s" }, { 5 * S + S / 2, "5s" },
		{ 119 * S, "119s" }, { 120 * S, "2m" }, { 182 * S, "3m2s" },
		{ 599 * S, "9m59s" }, { 600 * S, "10m" },
		{ 179 * 60 * S, "179m" }, { 3 * 3600 * S, "3h" },
		{ (5 * 3600 + 3 * 60) * S, "5h3m" },
		{ (7 * 3600 + 59 * 60 + 59) * S, "7h59m" },
		{ 8 * 3600 * S, "8h" }, { 47 * 3600 * S, "47h" },
		{ 48 * 3600 * S, "2d" }, { (48 + 5) * 3600 * S, "2d5h" },
		{ (8 * 24 - 1) * 3600 * S, "7d23h" },
		{ 8 * 24 * 3600 * S, "8d" },
		{ 729LL * 24 * 3600 * S, "729d" },
		{ 730LL * 24 * 3600 * S, "2y" },
		{ (730LL + 10) * 24 * 3600 * S, "2y10d" },
		{ 8LL * 365 * 24 * 3600 * S, "8y" },
	};
	char	 buf[32];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tool_age(cases[i].us, buf, sizeof(buf));
		if (strcmp(buf, cases[i].want) != 0)
			fail_msg("%lld us: \"%s\", want \"%s\"",
			    (long long)cases[i].us, buf, cases[i].want);
	}
}

static void
test_expiry(void **state)
{
	struct lease	 r;
	char		 buf[32];

	(void)state;
	memset(&r, 0, sizeof(r));
	tool_expiry(&r, 100 * S, buf, sizeof(buf));
	assert_string_equal(buf, "");		/* for life: no renewTime */
	r.renew_us = 90 * S;
	tool_expiry(&r, 100 * S, buf, sizeof(buf));
	assert_string_equal(buf, "");		/* no duration */
	r.duration_s = 15;
	tool_expiry(&r, 100 * S, buf, sizeof(buf));
	assert_string_equal(buf, "5s");
	tool_expiry(&r, 105 * S, buf, sizeof(buf));
	assert_string_equal(buf, "expired");	/* the end itself */
	tool_expiry(&r, 104 * S + 1, buf, sizeof(buf));
	assert_string_equal(buf, "0s");
}

static void
test_escape(void **state)
{
	char	*s;

	(void)state;
	s = tool_escape("leaderd.io/shard-group=a b&c~_");
	assert_string_equal(s, "leaderd.io%2Fshard-group%3Da%20b%26c~_");
	free(s);
	s = tool_lease_path("team", "my.lease");
	assert_string_equal(s,
	    "/apis/coordination.k8s.io/v1/namespaces/team/leases/my.lease");
	free(s);
	s = tool_leases_path(NULL, "limit=500");
	assert_string_equal(s, "/apis/coordination.k8s.io/v1/leases?limit=500");
	free(s);
}

/* What f printed, read back. */
static char *
slurp(FILE *f)
{
	static char	 buf[4096];
	size_t		 n;

	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	return buf;
}

static void
test_table(void **state)
{
	static const char *const head[] = { "NAME", "HOLDER", "AGE" };
	const char		*row1[] = { "alpha", "pod-a", "5s" };
	const char		*row2[] = { "b", NULL, "\033[31mred" };
	struct tool_table	 tb;
	FILE			*f;

	(void)state;
	assert_non_null(f = tmpfile());
	tool_table_init(&tb, 3, head);
	tool_table_add(&tb, row1);
	tool_table_add(&tb, row2);
	tool_table_flush(&tb, f, 1);
	/* Three spaces between columns; empty is <none>; escapes shown. */
	assert_string_equal(slurp(f),
	    "NAME    HOLDER   AGE\n"
	    "alpha   pod-a    5s\n"
	    "b       <none>   \\x1b[31mred\n");
	fclose(f);
	/* -w: a later row keeps the widths, without the header. */
	assert_non_null(f = tmpfile());
	tool_table_add(&tb, row1);
	tool_table_flush(&tb, f, 0);
	assert_string_equal(slurp(f), "alpha   pod-a    5s\n");
	fclose(f);
	tool_table_free(&tb);
}

static void
write_doc(FILE *f, int yaml, const char *kind, int items)
{
	struct tool_doc	 d;
	int		 i;

	tool_doc_begin(&d, yaml, kind);
	for (i = 0; i < items; i++) {
		tool_doc_item(&d);
		tool_doc_str(&d, "name", "a\"b");
		tool_doc_str(&d, "holder", NULL);
		tool_doc_int(&d, "n", -3, 1);
		tool_doc_int(&d, "m", 0, 0);
		tool_doc_bool(&d, "ok", 1, 1);
		tool_doc_time(&d, "t", 1700000000123456LL);
		tool_doc_item_end(&d);
	}
	tool_doc_end(&d, f);
}

static void
test_doc(void **state)
{
	FILE	*f;

	(void)state;
	assert_non_null(f = tmpfile());
	write_doc(f, 0, "K", 2);
	assert_string_equal(slurp(f),
	    "{\n  \"apiVersion\": \"leaderd.io/v1\",\n  \"kind\": \"K\",\n"
	    "  \"items\": [\n    {\n      \"name\": \"a\\\"b\",\n"
	    "      \"holder\": null,\n      \"n\": -3,\n      \"m\": null,\n"
	    "      \"ok\": true,\n"
	    "      \"t\": \"2023-11-14T22:13:20.123456Z\"\n    },\n    {\n"
	    "      \"name\": \"a\\\"b\",\n      \"holder\": null,\n"
	    "      \"n\": -3,\n      \"m\": null,\n      \"ok\": true,\n"
	    "      \"t\": \"2023-11-14T22:13:20.123456Z\"\n    }\n  ]\n}\n");
	fclose(f);
	assert_non_null(f = tmpfile());
	write_doc(f, 1, "K", 1);
	assert_string_equal(slurp(f),
	    "apiVersion: leaderd.io/v1\nkind: K\nitems:\n"
	    "- name: \"a\\\"b\"\n  holder: null\n  n: -3\n  m: null\n"
	    "  ok: true\n  t: \"2023-11-14T22:13:20.123456Z\"\n");
	fclose(f);
	assert_non_null(f = tmpfile());
	write_doc(f, 1, "K", 0);
	assert_string_equal(slurp(f),
	    "apiVersion: leaderd.io/v1\nkind: K\nitems: []\n");
	fclose(f);
	assert_non_null(f = tmpfile());
	write_doc(f, 0, "K", 0);
	assert_string_equal(slurp(f), "{\n  \"apiVersion\": \"leaderd.io/v1\","
	    "\n  \"kind\": \"K\",\n  \"items\": []\n}\n");
	fclose(f);
	/* -w -o json: one object a line. */
	assert_non_null(f = tmpfile());
	write_doc(f, 0, NULL, 1);
	assert_string_equal(slurp(f), "{\"name\":\"a\\\"b\",\"holder\":null,"
	    "\"n\":-3,\"m\":null,\"ok\":true,"
	    "\"t\":\"2023-11-14T22:13:20.123456Z\"}\n");
	fclose(f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_age),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_doc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
