/*
 * legacy_test.c -- the legacy locks' annotation codec (lib/codec/legacy.c):
 * golden decode cases (lease/annotation/valid), golden errors
 * (lease/annotation/invalid), byte-exact encodings as client-go v0.23
 * and the classic leader-elector write them, and the Endpoints and
 * ConfigMap bodies.
 *
 * Golden formats:
 *   valid/NAME.json    an annotation value; NAME.out is the decoded
 *                      record, one field a line, then the value encoded
 *                      back ("encoded ...").
 *   invalid/NAME.json  a value legacy_record_decode must refuse; NAME.err
 *                      holds the exact error text.
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

#include <cmocka.h>

#include "codec/lease.h"
#include "codec/legacy.h"
#include "testutil.h"
#include "leasetest.h"
#include "base/xmalloc.h"

#define MIN_VALID	12	/* the suites fail if cases go missing */
#define MIN_INVALID	15

static void
dump_record(const struct lease *l, char *buf, size_t len)
{
	char acq[128], ren[128], *enc;

	dump_time(acq, sizeof(acq), "acquire_us", l->acquire_us);
	dump_time(ren, sizeof(ren), "renew_us", l->renew_us);
	enc = legacy_record_encode(l);
	snprintf(buf, len, "holder \"%s\"\nduration_s %" PRId32
	    "\ntransitions %" PRId32 "\n%s%sencoded %s\n", l->holder,
	    l->duration_s, l->transitions, acq, ren, enc);
	free(enc);
}

static void
test_golden_valid(void **state)
{
	char **names, path[1024], err[256], got[4096], *body, *enc;
	struct lease l, back;
	int i, n, failed = 0;
	size_t len = 0;

	(void)state;
	n = cases("annotation/valid", ".json", &names);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/lease/annotation/valid/%s.json",
		    test_dir(), names[i]);
		if ((body = read_file(path, &len)) == NULL)
			fail_msg("cannot read %s", path);
		snprintf(path, sizeof(path), "%s/lease/annotation/valid/%s.out",
		    test_dir(), names[i]);
		memset(&l, 0, sizeof(l));
		snprintf(l.rv, sizeof(l.rv), "kept");
		if (legacy_record_decode(body, len, &l, err,
		    sizeof(err)) == -1) {
			print_error("valid/%s: decode failed: %s\n", names[i],
			    err);
			failed++;
			free(body);
			continue;
		}
		if (strcmp(l.rv, "kept") != 0) {
			print_error("valid/%s: rv not kept\n", names[i]);
			failed++;
		}
		dump_record(&l, got, sizeof(got));
		if (expect_golden(got, path) == -1)
			failed++;
		/* What we write reads back as the same record. */
		enc = legacy_record_encode(&l);
		memset(&back, 0, sizeof(back));
		snprintf(back.rv, sizeof(back.rv), "kept");
		if (legacy_record_decode(enc, strlen(enc), &back, err,
		    sizeof(err)) == -1 || !lease_same_record(&l, &back)) {
			print_error("valid/%s: %s does not read back\n",
			    names[i], enc);
			failed++;
		}
		free(enc);
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
	golden_invalid("annotation/invalid", legacy_record_decode,
	    MIN_INVALID);
}

/* Byte-exact encodings, as Go's json.Marshal writes the record. */
static void
test_encode_exact(void **state)
{
	static const struct {
		const char	*holder;
		int32_t		 duration_s;
		int64_t		 acquire_us;
		int64_t		 renew_us;
		int32_t		 transitions;
		const char	*want;
	} t[] = {
		/* The classic sidecar's record (seconds; µs truncated). */
		{ "leader-elector-5d8f7", 10, INT64_C(1525429572000000),
		  INT64_C(1525429895999999), 0,
		  "{\"holderIdentity\":\"leader-elector-5d8f7\","
		  "\"leaseDurationSeconds\":10,"
		  "\"acquireTime\":\"2018-05-04T10:26:12Z\","
		  "\"renewTime\":\"2018-05-04T10:31:35Z\","
		  "\"leaderTransitions\":0}" },
		/* A release, as client-go writes it. */
		{ "", 1, INT64_C(1638380405000000), INT64_C(1638380405000000),
		  4,
		  "{\"holderIdentity\":\"\",\"leaseDurationSeconds\":1,"
		  "\"acquireTime\":\"2021-12-01T17:40:05Z\","
		  "\"renewTime\":\"2021-12-01T17:40:05Z\","
		  "\"leaderTransitions\":4}" },
		/* Zero times are null; before 1970 floors. */
		{ "a", 15, 0, INT64_C(-1), 2147483647,
		  "{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":15,"
		  "\"acquireTime\":null,"
		  "\"renewTime\":\"1969-12-31T23:59:59Z\","
		  "\"leaderTransitions\":2147483647}" },
		/* Go's HTML-safe escapes, control bytes, U+2028/9. */
		{ "a<b>c&d\"e\\f\n\r\t\x01\x7f\xe2\x80\xa8\xe2\x80\xa9\xc3\xa9",
		  15, 0, 0, 0,
		  "{\"holderIdentity\":\"a\\u003cb\\u003ec\\u0026d\\\"e\\\\f"
		  "\\n\\r\\t\\u0001\x7f\\u2028\\u2029\xc3\xa9\","
		  "\"leaseDurationSeconds\":15,\"acquireTime\":null,"
		  "\"renewTime\":null,\"leaderTransitions\":0}" },
		/* Invalid UTF-8 becomes \ufffd, byte by byte. */
		{ "x\xff\xc3y\xed\xa0\x80", 15, 0, 0, 0,
		  "{\"holderIdentity\":\"x\\ufffd\\ufffdy\\ufffd\\ufffd"
		  "\\ufffd\",\"leaseDurationSeconds\":15,"
		  "\"acquireTime\":null,\"renewTime\":null,"
		  "\"leaderTransitions\":0}" },
	};
	struct lease l;
	size_t i;
	char *got;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&l, 0, sizeof(l));
		snprintf(l.holder, sizeof(l.holder), "%s", t[i].holder);
		l.duration_s = t[i].duration_s;
		l.acquire_us = t[i].acquire_us;
		l.renew_us = t[i].renew_us;
		l.transitions = t[i].transitions;
		/* Not part of the legacy record: dropped. */
		snprintf(l.strategy, sizeof(l.strategy), "OldestEmulationVersion");
		snprintf(l.preferred, sizeof(l.preferred), "p");
		got = legacy_record_encode(&l);
		if (strcmp(got, t[i].want) != 0)
			fail_msg("case %zu:\n got  %s\n want %s", i, got,
			    t[i].want);
		free(got);
	}
}

static const char endpoints[] =
    "{\"kind\":\"Endpoints\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
    "\"my-app\",\"namespace\":\"team-a\",\"uid\":\"u-1\","
    "\"resourceVersion\":\"42\",\"annotations\":{\"team\":\"a\","
    "\"control-plane.alpha.kubernetes.io/leader\":\"{\\\"holderIdentity\\\""
    ":\\\"old\\\",\\\"leaseDurationSeconds\\\":10,\\\"acquireTime\\\":"
    "\\\"2018-05-04T10:26:12Z\\\",\\\"renewTime\\\":"
    "\\\"2018-05-04T10:31:35Z\\\",\\\"leaderTransitions\\\":2}\"}},"
    "\"subsets\":[{\"addresses\":[{\"ip\":\"10.0.0.7\"}]}]}";

static void
test_objects(void **state)
{
	struct lease l, rec;
	char err[512], *body;

	(void)state;
	assert_int_equal(legacy_decode("Endpoints", endpoints,
	    strlen(endpoints), &l, err, sizeof(err)), 0);
	assert_string_equal(l.holder, "old");
	assert_int_equal(l.duration_s, 10);
	assert_int_equal(l.transitions, 2);
	assert_true(l.renew_us == INT64_C(1525429895000000));
	assert_string_equal(l.rv, "42");
	assert_string_equal(l.uid, "u-1");
	/* The wrong kind is refused, with the kind named. */
	assert_int_equal(legacy_decode("ConfigMap", endpoints,
	    strlen(endpoints), &l, err, sizeof(err)), -1);
	assert_string_equal(err, "kind: \"Endpoints\" is not \"ConfigMap\"");

	/* An update replaces the annotation only. */
	memset(&rec, 0, sizeof(rec));
	snprintf(rec.holder, sizeof(rec.holder), "new");
	rec.duration_s = 15;
	rec.acquire_us = rec.renew_us = INT64_C(1638380405123456);
	rec.transitions = 3;
	body = legacy_encode_update("Endpoints", endpoints, strlen(endpoints),
	    &rec, err, sizeof(err));
	assert_non_null(body);
	assert_string_equal(body,
	    "{\"kind\":\"Endpoints\",\"apiVersion\":\"v1\",\"metadata\":"
	    "{\"name\":\"my-app\",\"namespace\":\"team-a\",\"uid\":\"u-1\","
	    "\"resourceVersion\":\"42\",\"annotations\":{\"team\":\"a\","
	    "\"control-plane.alpha.kubernetes.io/leader\":"
	    "\"{\\\"holderIdentity\\\":\\\"new\\\","
	    "\\\"leaseDurationSeconds\\\":15,"
	    "\\\"acquireTime\\\":\\\"2021-12-01T17:40:05Z\\\","
	    "\\\"renewTime\\\":\\\"2021-12-01T17:40:05Z\\\","
	    "\\\"leaderTransitions\\\":3}\"}},"
	    "\"subsets\":[{\"addresses\":[{\"ip\":\"10.0.0.7\"}]}]}");
	assert_int_equal(legacy_decode("Endpoints", body, strlen(body), &l,
	    err, sizeof(err)), 0);
	assert_string_equal(l.holder, "new");
	assert_true(lease_same_record(&l, &rec));
	free(body);

	/* A create. */
	body = legacy_encode_create("ConfigMap", "team-a", "my-app", &rec);
	assert_string_equal(body,
	    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
	    "{\"name\":\"my-app\",\"namespace\":\"team-a\",\"annotations\":"
	    "{\"control-plane.alpha.kubernetes.io/leader\":"
	    "\"{\\\"holderIdentity\\\":\\\"new\\\","
	    "\\\"leaseDurationSeconds\\\":15,"
	    "\\\"acquireTime\\\":\\\"2021-12-01T17:40:05Z\\\","
	    "\\\"renewTime\\\":\\\"2021-12-01T17:40:05Z\\\","
	    "\\\"leaderTransitions\\\":3}\"}}}");
	free(body);

	/* No annotation at all: an unknown holder, waited out. */
	assert_int_equal(legacy_decode("ConfigMap",
	    LIT("{\"metadata\":{\"resourceVersion\":\"7\"},\"data\":{}}"), &l,
	    err, sizeof(err)), 0);
	assert_string_equal(l.holder, LEGACY_UNKNOWN_LEADER);
	assert_string_equal(l.rv, "7");
	assert_int_equal(l.duration_s, 0);
	/* Without annotations, an update adds the map. */
	body = legacy_encode_update("ConfigMap", LIT("{\"metadata\":{\"name\":"
	    "\"x\"}}"), &rec, err, sizeof(err));
	assert_non_null(body);
	assert_non_null(strstr(body, "\"annotations\":{\"control-plane."));
	free(body);
	/* A bad annotation names itself. */
	assert_int_equal(legacy_decode("ConfigMap", LIT("{\"metadata\":"
	    "{\"annotations\":{\"control-plane.alpha.kubernetes.io/leader\":"
	    "\"x\"}}}"), &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is not a leader election record"));
	assert_int_equal(legacy_decode("ConfigMap", LIT("{\"metadata\":"
	    "{\"annotations\":[]}}"), &l, err, sizeof(err)), -1);
	assert_string_equal(err, "metadata.annotations: not an object");
	assert_null(legacy_encode_update("ConfigMap", LIT("[]"), &rec, err,
	    sizeof(err)));
	assert_string_equal(err, "not a JSON object");
}

/* legacy_record_live: the holder, the duration, the grace, the edge. */
static void
test_live(void **state)
{
	struct lease	 rec;
	int64_t		 renew = 1764918000LL * 1000000;

	(void)state;
	memset(&rec, 0, sizeof(rec));
	snprintf(rec.holder, sizeof(rec.holder), "pod-a");
	rec.duration_s = 15;
	rec.renew_us = renew;
	assert_true(legacy_record_live(&rec, renew, 0));
	/* Live through the last instant of its duration, not after. */
	assert_true(legacy_record_live(&rec, renew + 15000000, 0));
	assert_false(legacy_record_live(&rec, renew + 15000001, 0));
	/* The grace extends it. */
	assert_true(legacy_record_live(&rec, renew + 25000000, 10000000));
	assert_false(legacy_record_live(&rec, renew + 25000001, 10000000));
	/* No holder, or client-go's unknown leader: never live. */
	snprintf(rec.holder, sizeof(rec.holder), "%s", LEGACY_UNKNOWN_LEADER);
	assert_false(legacy_record_live(&rec, renew, 0));
	rec.holder[0] = '\0';
	assert_false(legacy_record_live(&rec, renew, 0));
	/* Held for life (no duration, no renewTime) is not live here. */
	snprintf(rec.holder, sizeof(rec.holder), "pod-a");
	rec.duration_s = 0;
	rec.renew_us = 0;
	assert_false(legacy_record_live(&rec, renew, 15000000));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_valid),
		cmocka_unit_test(test_golden_invalid),
		cmocka_unit_test(test_encode_exact),
		cmocka_unit_test(test_objects),
		cmocka_unit_test(test_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
