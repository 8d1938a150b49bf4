/*
 * log_test.c -- what log lines look like when the message carries text
 * from outside (a Lease holderIdentity, an API Status message): one line
 * per event whatever the bytes, no terminal escapes in text lines, and
 * valid JSON with valid UTF-8 in JSON lines (I6, L1).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/log.h"
#include "testutil.h"

static char	 out_path[] = "/tmp/log_test.XXXXXX";

/* Log msg once at info level in format fmt; the line, without stamp. */
static char *
log_line(enum log_format fmt, const char *msg)
{
	char	*text, *p;
	int	 fd, saved;

	assert_int_not_equal(fd = mkstemp(out_path), -1);
	fflush(stderr);
	saved = dup(2);
	assert_int_equal(dup2(fd, 2), 2);
	close(fd);
	log_init(LOG_LEVEL_INFO, fmt);
	log_info("%s", msg);
	fflush(stderr);
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	assert_non_null(text = read_file(out_path, NULL));
	unlink(out_path);
	memcpy(out_path + strlen(out_path) - 6, "XXXXXX", 6);
	/* Exactly one line. */
	p = strchr(text, '\n');
	assert_non_null(p);
	assert_int_equal(p[1], '\0');
	*p = '\0';
	if (fmt == LOG_FORMAT_TEXT) {
		assert_non_null(p = strstr(text, " info "));
		memmove(text, p + 6, strlen(p + 6) + 1);
	} else {
		assert_non_null(p = strstr(text, "\"msg\":\""));
		memmove(text, p + 7, strlen(p + 7) + 1);
		assert_int_equal(strcmp(text + strlen(text) - 2, "\"}"), 0);
		text[strlen(text) - 2] = '\0';
	}
	return text;
}

struct esc_case {
	const char	*in;
	const char	*text;		/* the text line's message */
	const char	*json;		/* the JSON line's msg value */
};

static void
test_escapes(void **state)
{
	static const struct esc_case cases[] = {
		{ "new leader of lease default/x: pod-a",
		    "new leader of lease default/x: pod-a",
		    "new leader of lease default/x: pod-a" },
		/* A holderIdentity forging a second line, with colours. */
		{ "pod-a\n2030-01-01T00:00:00.000Z info became leader \x1b[31m",
		    "pod-a\\x0a2030-01-01T00:00:00.000Z info became leader "
		    "\\x1b[31m",
		    "pod-a\\u000a2030-01-01T00:00:00.000Z info became leader "
		    "\\u001b[31m" },
		/* CR, BEL (an OSC title), DEL, tab. */
		{ "a\rb\x1b]0;t\x07" "c\x7f" "d\te", "a\\x0db\\x1b]0;t\\x07c"
		    "\\x7fd\\x09e", "a\\u000db\\u001b]0;t\\u0007c\\u007fd\\u0009e" },
		/* Backslash and quote. */
		{ "a\\b\"c", "a\\\\b\"c", "a\\\\b\\\"c" },
		/* Well-formed UTF-8 is kept; C1 CSI escaped in text. */
		{ "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		    "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		    "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
		{ "x\xc2\x9by", "x\\xc2\\x9by", "x\xc2\x9by" },
		/* Invalid UTF-8: stray, overlong, surrogate, cut short. */
		{ "a\x80z", "a\\x80z", "a\xef\xbf\xbdz" },
		{ "a\xc0\xafz", "a\\xc0\\xafz", "a\xef\xbf\xbd\xef\xbf\xbdz" },
		{ "a\xed\xa0\x80z", "a\\xed\\xa0\\x80z",
		    "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz" },
		{ "a\xe2\x82", "a\\xe2\\x82", "a\xef\xbf\xbd\xef\xbf\xbd" },
		{ "\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80",
		    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
	};
	char	*got;
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = log_line(LOG_FORMAT_TEXT, cases[i].in);
		if (strcmp(got, cases[i].text) != 0)
			fail_msg("case %zu text: got \"%s\"", i, got);
		free(got);
		got = log_line(LOG_FORMAT_JSON, cases[i].in);
		if (strcmp(got, cases[i].json) != 0)
			fail_msg("case %zu json: got \"%s\"", i, got);
		free(got);
	}
}

/* A long hostile message is cut, never overrun, and stays one line. */
static void
test_long(void **state)
{
	char	 msg[2000], *got;

	(void)state;
	memset(msg, '\n', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	got = log_line(LOG_FORMAT_TEXT, msg);
	assert_int_equal(strlen(got), 4 * (sizeof(msg) - 1));
	free(got);
	memset(msg, '\x80', sizeof(msg) - 1);
	got = log_line(LOG_FORMAT_JSON, msg);
	assert_int_equal(strlen(got), 3 * (sizeof(msg) - 1));
	free(got);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
