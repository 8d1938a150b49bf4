/*
 * text_test.c -- text.c on its own: UTF-8 sequence lengths at the edges
 * of each rule, JSON string bodies that are valid UTF-8 whatever the
 * input and that resume where a full buffer stopped, and one-line
 * terminal-safe text; the integer formatter against printf; bounded
 * appends; buf's pieces.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/text.h"

static void
test_utf8_len(void **state)
{
	static const struct {
		const char	*s;
		size_t		 len;
	} cases[] = {
		{ "", 1 },
		{ "a", 1 },
		{ "\x7f", 1 },
		{ "\xc2\x80", 2 },		/* U+0080 */
		{ "\xdf\xbf", 2 },		/* U+07FF */
		{ "\xe0\xa0\x80", 3 },		/* U+0800 */
		{ "\xed\x9f\xbf", 3 },		/* U+D7FF */
		{ "\xee\x80\x80", 3 },		/* U+E000 */
		{ "\xef\xbf\xbf", 3 },		/* U+FFFF */
		{ "\xf0\x90\x80\x80", 4 },	/* U+10000 */
		{ "\xf4\x8f\xbf\xbf", 4 },	/* U+10FFFF */
		{ "\x80", 0 },			/* stray continuation */
		{ "\xbf", 0 },
		{ "\xc0\xaf", 0 },		/* overlong '/' */
		{ "\xc1\xbf", 0 },
		{ "\xe0\x9f\xbf", 0 },		/* overlong U+07FF */
		{ "\xf0\x8f\xbf\xbf", 0 },	/* overlong U+FFFF */
		{ "\xed\xa0\x80", 0 },		/* surrogate U+D800 */
		{ "\xed\xbf\xbf", 0 },		/* surrogate U+DFFF */
		{ "\xf4\x90\x80\x80", 0 },	/* U+110000 */
		{ "\xf5\x80\x80\x80", 0 },
		{ "\xff", 0 },
		{ "\xe2\x82", 0 },		/* cut short by the NUL */
		{ "\xe2\x82z", 0 },
		{ "\xf0\x9f\x98", 0 },
	};
	size_t	 i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = text_utf8_len((const unsigned char *)cases[i].s);
		if (n != cases[i].len)
			fail_msg("case %zu: %zu, want %zu", i, n, cases[i].len);
	}
}

struct esc_case {
	const char	*in;
	const char	*json;		/* text_json_escape */
	const char	*text;		/* text_escape */
};

static const struct esc_case esc_cases[] = {
	{ "plain", "plain", "plain" },
	{ "a\"b\\c", "a\\\"b\\\\c", "a\"b\\\\c" },
	{ "a\nb\r\x1b[31m\x7f\t", "a\\u000ab\\u000d\\u001b[31m\\u007f\\u0009",
	    "a\\x0ab\\x0d\\x1b[31m\\x7f\\x09" },
	{ "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	    "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	    "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
	/* A C1 control is UTF-8, valid in JSON, escaped in text. */
	{ "x\xc2\x9by", "x\xc2\x9by", "x\\xc2\\x9by" },
	{ "a\x80z", "a\xef\xbf\xbdz", "a\\x80z" },
	{ "a\xed\xa0\x80z", "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz",
	    "a\\xed\\xa0\\x80z" },
	{ "a\xe2\x82", "a\xef\xbf\xbd\xef\xbf\xbd", "a\\xe2\\x82" },
	/*
	 * Characters that reorder or hide text (bidi controls, zero-width
	 * and other invisible format characters) are kept in JSON and
	 * shown as \uXXXX in text, so a holder name cannot pass for
	 * another on a terminal or in a log.
	 */
	{ "ab\xe2\x80\xae" "dc", "ab\xe2\x80\xae" "dc", "ab\\u202e" "dc" },
	{ "a\xe2\x80\x8b" "b\xe2\x80\x8f", "a\xe2\x80\x8b" "b\xe2\x80\x8f",
	    "a\\u200b" "b\\u200f" },
	{ "\xef\xbb\xbfx\xe2\x81\xa7y\xe2\x81\xa0", "\xef\xbb\xbfx\xe2\x81\xa7y\xe2\x81\xa0",
	    "\\ufeffx\\u2067y\\u2060" },
	{ "\xd8\x9c\xc2\xad-\xf3\xa0\x80\x81", "\xd8\x9c\xc2\xad-\xf3\xa0\x80\x81",
	    "\\u061c\\u00ad-\\U000e0001" },
	/* Their neighbours are ordinary text. */
	{ "\xe2\x80\x90\xe2\x80\xaf", "\xe2\x80\x90\xe2\x80\xaf",
	    "\xe2\x80\x90\xe2\x80\xaf" },
};

static void
test_json_escape(void **state)
{
	char		 out[128];
	const char	*p;
	size_t		 i, n;

	(void)state;
	for (i = 0; i < sizeof(esc_cases) / sizeof(esc_cases[0]); i++) {
		p = esc_cases[i].in;
		n = text_json_escape(out, sizeof(out), &p);
		if (strcmp(out, esc_cases[i].json) != 0 || *p != '\0' ||
		    n != strlen(out))
			fail_msg("case %zu: got \"%s\"", i, out);
	}
}

/* A small buffer stops before a piece that might not fit, and resumes. */
static void
test_json_escape_resume(void **state)
{
	const char	*in = "ab\n\x80" "cd\"\xf0\x9f\x98\x80", *p = in;
	char		 out[9], all[128] = "";
	size_t		 n, rounds = 0;

	(void)state;
	while (*p != '\0') {
		n = text_json_escape(out, sizeof(out), &p);
		assert_true(n > 0);
		assert_true(n < sizeof(out));
		assert_int_equal(strlen(out), n);
		strcat(all, out);
		rounds++;
	}
	assert_string_equal(all, "ab\\u000a\xef\xbf\xbd" "cd\\\""
	    "\xf0\x9f\x98\x80");
	assert_true(rounds > 1);
	/* No room at all: nothing written, nothing consumed. */
	p = in;
	assert_int_equal(text_json_escape(out, 0, &p), 0);
	assert_ptr_equal(p, in);
}

static void
test_text_escape(void **state)
{
	char	 out[128], small[8];
	size_t	 i, n;

	(void)state;
	for (i = 0; i < sizeof(esc_cases) / sizeof(esc_cases[0]); i++) {
		n = text_escape(out, sizeof(out), esc_cases[i].in);
		if (strcmp(out, esc_cases[i].text) != 0 || n != strlen(out))
			fail_msg("case %zu: got \"%s\"", i, out);
	}
	/* Cut before a character that would not fit, never inside it. */
	n = text_escape(small, sizeof(small), "ab\n\n\n");
	assert_string_equal(small, "ab\\x0a");
	assert_int_equal(n, 6);
	n = text_escape(small, sizeof(small), "a\xe2\x80\xae");
	assert_string_equal(small, "a\\u202e");
	n = text_escape(small, sizeof(small), "ab\xe2\x80\xae");
	assert_string_equal(small, "ab");
	assert_int_equal(n, 2);
	assert_int_equal(text_escape(small, 0, "x"), 0);
}

/* buf_json_str: the same escaping, quoted, across its chunks. */
static void
test_buf_json_str(void **state)
{
	struct buf	 b = { 0 };
	char		 in[1001], want[3 * 1000 + 3];
	size_t		 i;

	(void)state;
	buf_json_str(&b, "a\x80\"\n");
	assert_string_equal(b.data, "\"a\xef\xbf\xbd\\\"\\u000a\"");
	buf_free(&b);
	/* Longer than buf.c's chunk, with no piece split between two. */
	for (i = 0; i < 1000; i++)
		in[i] = i % 2 ? 'x' : '\xff';
	in[1000] = '\0';
	strcpy(want, "\"");
	for (i = 0; i < 1000; i++)
		strcat(want, i % 2 ? "x" : "\xef\xbf\xbd");
	strcat(want, "\"");
	buf_json_str(&b, in);
	assert_string_equal(b.data, want);
	buf_free(&b);
}

/* Appending stops at the end of the buffer and keeps it terminated. */
static void
test_appendf(void **state)
{
	char	 buf[8];
	size_t	 used = 0;

	(void)state;
	text_appendf(buf, sizeof(buf), &used, "%s", "ab");
	assert_string_equal(buf, "ab");
	assert_int_equal(used, 2);
	text_appendf(buf, sizeof(buf), &used, "%d-%s", 12, "xyz");
	assert_string_equal(buf, "ab12-xy");
	assert_int_equal(used, sizeof(buf) - 1);
	text_appendf(buf, sizeof(buf), &used, "more");
	assert_string_equal(buf, "ab12-xy");
	assert_int_equal(used, sizeof(buf) - 1);
	used = 99;		/* past the end: clamped, never written past */
	text_appendf(buf, sizeof(buf), &used, "z");
	assert_int_equal(used, sizeof(buf) - 1);
	assert_int_equal(buf[sizeof(buf) - 1], '\0');
	used = 0;
	text_appendf(buf, 0, &used, "x");	/* no room at all: nothing */
	assert_int_equal(used, 0);
}

/* text_append: as text_appendf with "%s". */
static void
test_append(void **state)
{
	char	 buf[8];
	size_t	 used = 0;

	(void)state;
	text_append(buf, sizeof(buf), &used, "ab");
	assert_string_equal(buf, "ab");
	assert_int_equal(used, 2);
	text_append(buf, sizeof(buf), &used, "12-xyz");
	assert_string_equal(buf, "ab12-xy");
	assert_int_equal(used, sizeof(buf) - 1);
	text_append(buf, sizeof(buf), &used, "more");
	assert_string_equal(buf, "ab12-xy");
	used = 99;
	text_append(buf, sizeof(buf), &used, "z");
	assert_int_equal(used, sizeof(buf) - 1);
	assert_int_equal(buf[sizeof(buf) - 1], '\0');
	used = 0;
	text_append(buf, 0, &used, "x");
	assert_int_equal(used, 0);
}

/* text_u64 and text_i64 against printf, at the bounds and in between. */
static void
test_integers(void **state)
{
	static const uint64_t	 edges[] = { 0, 1, 9, 10, 99, 100,
		4294967295ULL, 4294967296ULL, 9223372036854775807ULL,
		9223372036854775808ULL, 18446744073709551615ULL };
	char			 num[TEXT_INT_LEN], ref[64];
	uint64_t		 u, x = 88172645463325252ULL;
	size_t			 k, n;
	int			 width;

	(void)state;
	for (k = 0; k < 20000; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		u = k < sizeof(edges) / sizeof(edges[0]) ? edges[k] :
		    x >> (x % 64);
		width = (int)(k % 22);
		n = text_u64(num, u, width);
		snprintf(ref, sizeof(ref), "%0*llu", width > 20 ? 20 : width,
		    (unsigned long long)u);
		assert_string_equal(num, ref);
		assert_int_equal(n, strlen(ref));
		n = text_i64(num, (int64_t)u);
		snprintf(ref, sizeof(ref), "%lld", (long long)u);
		assert_string_equal(num, ref);
		assert_int_equal(n, strlen(ref));
	}
	assert_int_equal(text_i64(num, INT64_MIN), 20);
	assert_string_equal(num, "-9223372036854775808");
	assert_int_equal(text_u64(num, 7, 10), 10);
	assert_string_equal(num, "0000000007");
}

/* buf's numbers, strings, and a formatted append larger than its room. */
static void
test_buf_pieces(void **state)
{
	struct buf	 b = { 0 };
	char		 big[600];

	(void)state;
	buf_add_str(&b, "n=");
	buf_add_u64(&b, 18446744073709551615ULL);
	buf_add(&b, ",", 1);
	buf_add_i64(&b, -12);
	assert_string_equal(b.data, "n=18446744073709551615,-12");
	assert_int_equal(b.len, strlen(b.data));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	buf_printf(&b, "[%s]", big);
	assert_int_equal(b.len, 26 + 2 + sizeof(big) - 1);
	assert_int_equal(strlen(b.data), b.len);
	assert_int_equal(b.data[b.len - 1], ']');
	buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_len),
		cmocka_unit_test(test_json_escape),
		cmocka_unit_test(test_json_escape_resume),
		cmocka_unit_test(test_text_escape),
		cmocka_unit_test(test_buf_json_str),
		cmocka_unit_test(test_appendf),
		cmocka_unit_test(test_append),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_buf_pieces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
