/*
 * leasetest.h -- what the two record codecs' tests share (lease_test.c
 * for Lease objects, legacy_test.c for the legacy locks' annotation):
 * the test data directory, a read that fails the test, the case list,
 * the time line of a record's text form, and the golden error cases,
 * which both codecs must refuse the same way.  Include after cmocka.h,
 * lease.h and testutil.h.
 */

#ifndef LEASETEST_H
#define LEASETEST_H

#include <inttypes.h>

#include "codec/apitime.h"

/* A string literal and its length. */
#define LIT(s)		s, sizeof(s) - 1

/* TEST_DIR, or test/unit when it is not set. */
static inline const char *
test_dir(void)
{
	const char *d;

	if ((d = getenv("TEST_DIR")) == NULL || *d == '\0')
		d = "test/unit";
	return d;
}

/* read_file, failing the test when path cannot be read. */
static inline char *
slurp_must(const char *path, size_t *lenp)
{
	char *s;

	if (lenp != NULL)
		*lenp = 0;
	if ((s = read_file(path, lenp)) == NULL)
		fail_msg("cannot read %s", path);
	return s;
}

/* The case names in TEST_DIR/lease/sub ending in suffix; at least one. */
static inline int
cases(const char *sub, const char *suffix, char ***names)
{
	char path[1024];
	int n;

	snprintf(path, sizeof(path), "%s/lease/%s", test_dir(), sub);
	if ((n = list_cases(path, suffix, names)) <= 0)
		fail_msg("no %s cases in %s", suffix, path);
	return n;
}

/* One line of a record's text form: "key µs RFC3339" or "key 0 null". */
static inline void
dump_time(char *buf, size_t len, const char *key, int64_t us)
{
	char t[APITIME_MICRO_LEN];

	if (us == 0)
		snprintf(t, sizeof(t), "null");
	else
		apitime_format_micro(us, t);
	snprintf(buf, len, "%s %" PRId64 " %s\n", key, us, t);
}

typedef int	 (*record_decoder)(const char *, size_t, struct lease *,
		    char *, size_t);

/*
 * Every TEST_DIR/lease/sub/NAME.json must be refused by decode, leave
 * the record untouched, and say exactly what NAME.err says; and there
 * must be at least min cases, so that the suite fails if they go
 * missing.
 */
static inline void
golden_invalid(const char *sub, record_decoder decode, int min)
{
	char **names, path[1024], err[512], *body;
	struct lease l, before;
	int i, n, failed = 0;
	size_t len = 0;

	n = cases(sub, ".json", &names);
	for (i = 0; i < n; i++) {
		if (snprintf(path, sizeof(path), "%s/lease/%s/%s.json",
		    test_dir(), sub, names[i]) >= (int)sizeof(path))
			fail_msg("%s/%s: path too long", sub, names[i]);
		body = slurp_must(path, &len);
		if (snprintf(path, sizeof(path), "%s/lease/%s/%s.err",
		    test_dir(), sub, names[i]) >= (int)sizeof(path))
			fail_msg("%s/%s: path too long", sub, names[i]);
		memset(&l, 0x5a, sizeof(l));
		before = l;
		if (decode(body, len, &l, err, sizeof(err)) != -1) {
			print_error("%s/%s: decode succeeded\n", sub, names[i]);
			failed++;
		} else if (memcmp(&l, &before, sizeof(l)) != 0) {
			print_error("%s/%s: output changed on error\n", sub,
			    names[i]);
			failed++;
		} else {
			strcat(err, "\n");
			if (expect_golden(err, path) == -1)
				failed++;
		}
		free(body);
	}
	free_names(names);
	assert_int_equal(failed, 0);
	assert_true(n >= min);
}

#endif /* LEASETEST_H */
