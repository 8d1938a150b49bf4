/*
 * leaseview_test.c -- Leases and LeaseCandidates as the tools read them
 * (leaseview.c): a list across namespaces with the shard-group labels
 * and owner beside each record, an item that cannot be read left out
 * and counted, a watch's events, a GET's object, a list of candidates.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec/leaseview.h"

static struct leaseview	 seen[4];
static int		 nseen;

static void
item_cb(const struct leaseview *v, void *arg)
{
	(void)arg;
	if (nseen < 4)
		seen[nseen] = *v;
	nseen++;
}

static const char list[] =
    "{\"kind\":\"LeaseList\",\"apiVersion\":\"coordination.k8s.io/v1\","
    "\"metadata\":{\"resourceVersion\":\"77\",\"continue\":\"abc\"},"
    "\"items\":["
    "{\"metadata\":{\"name\":\"w-0\",\"namespace\":\"team\","
    "\"resourceVersion\":\"70\",\"creationTimestamp\":\"2026-01-02T03:04:05Z\","
    "\"labels\":{\"leaderd.io/shard-group\":\"w\"}},"
    "\"spec\":{\"holderIdentity\":\"m-a\",\"leaseDurationSeconds\":15,"
    "\"renewTime\":\"2026-01-02T03:04:06.000001Z\",\"leaseTransitions\":2}},"
    "{\"metadata\":{\"name\":\"bad\",\"namespace\":\"team\"},"
    "\"spec\":{\"leaseDurationSeconds\":\"x\"}},"
    "{\"metadata\":{\"name\":\"nais\",\"namespace\":\"apps\","
    "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
    "\"name\":\"app-7d9\",\"uid\":\"u\"}]},"
    "\"spec\":{\"holderIdentity\":\"app-7d9\"}}]}";

static void
test_list(void **state)
{
	struct lease_list	 out;
	char			 err[256];

	(void)state;
	nseen = 0;
	assert_int_equal(leaseview_list(list, strlen(list), item_cb, NULL,
	    &out, err, sizeof(err)), 0);
	assert_int_equal(nseen, 2);
	assert_int_equal(out.items, 2);
	assert_int_equal(out.skipped, 1);
	assert_non_null(strstr(out.why, "bad: "));
	assert_string_equal(out.rv, "77");
	assert_string_equal(out.cont, "abc");
	assert_string_equal(seen[0].ns, "team");
	assert_string_equal(seen[0].name, "w-0");
	assert_string_equal(seen[0].group, "w");
	assert_int_equal(seen[0].member, 0);
	assert_string_equal(seen[0].rec.holder, "m-a");
	assert_int_equal(seen[0].rec.duration_s, 15);
	assert_int_equal(seen[0].rec.transitions, 2);
	assert_int_equal(seen[0].rec.renew_us % 1000000, 1);
	assert_true(seen[0].created_us > 0);
	assert_string_equal(seen[1].ns, "apps");
	assert_string_equal(seen[1].owner, "Pod/app-7d9");
	assert_int_equal(seen[1].rec.renew_us, 0);
	/* Not a list: an error, not a page. */
	assert_int_equal(leaseview_list("{\"items\":3}", 11, item_cb, NULL,
	    &out, err, sizeof(err)), -1);
	assert_int_equal(leaseview_list("[", 1, item_cb, NULL, &out, err,
	    sizeof(err)), -1);
}

static void
test_event_and_one(void **state)
{
	static const char mod[] = "{\"type\":\"MODIFIED\",\"object\":{"
	    "\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\","
	    "\"metadata\":{\"name\":\"m\",\"namespace\":\"x\","
	    "\"resourceVersion\":\"9\",\"labels\":{\"leaderd.io/shard-member\":"
	    "\"true\"}},\"spec\":{\"holderIdentity\":\"h\"}}}";
	static const char bm[] = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":"
	    "\"Lease\",\"metadata\":{\"resourceVersion\":\"12\"}}}";
	static const char gone[] = "{\"type\":\"ERROR\",\"object\":{\"kind\":"
	    "\"Status\",\"code\":410,\"message\":\"too old\"}}";
	struct leaseview_event	 ev;
	struct leaseview	 v;
	const char		*p;
	char			 err[256];

	(void)state;
	assert_int_equal(leaseview_event(mod, strlen(mod), &ev, err,
	    sizeof(err)), 0);
	assert_int_equal(ev.type, APIOBJ_WATCH_MODIFIED);
	assert_string_equal(ev.rv, "9");
	assert_string_equal(ev.v.ns, "x");
	assert_string_equal(ev.v.rec.holder, "h");
	assert_int_equal(ev.v.member, 1);
	assert_int_equal(leaseview_event(bm, strlen(bm), &ev, err,
	    sizeof(err)), 0);
	assert_int_equal(ev.type, APIOBJ_WATCH_BOOKMARK);
	assert_string_equal(ev.rv, "12");
	assert_int_equal(leaseview_event(gone, strlen(gone), &ev, err,
	    sizeof(err)), 0);
	assert_int_equal(ev.type, APIOBJ_WATCH_ERROR);
	assert_int_equal(ev.code, 410);
	assert_string_equal(ev.message, "too old");
	assert_int_equal(leaseview_event("{}", 2, &ev, err, sizeof(err)), -1);
	/* A GET's object. */
	p = strstr(mod, "\"object\":") + 9;
	assert_int_equal(leaseview_one(p, strlen(p) - 1, &v, err,
	    sizeof(err)), 0);
	assert_string_equal(v.name, "m");
}

static int	 ncands;

static void
cand_cb(const char *ns, const struct lease_cand *c, void *arg)
{
	(void)arg;
	assert_string_equal(ns, "team");
	assert_string_equal(c->lease_name, "lead");
	ncands++;
}

static void
test_cands(void **state)
{
	static const char cl[] = "{\"kind\":\"LeaseCandidateList\",\"items\":["
	    "{\"metadata\":{\"name\":\"a\",\"namespace\":\"team\"},\"spec\":{"
	    "\"leaseName\":\"lead\",\"binaryVersion\":\"1.0.0\",\"strategy\":"
	    "\"OldestEmulationVersion\"}},"
	    "{\"metadata\":{\"name\":\"b\"},\"spec\":{}},"
	    "{\"metadata\":{\"name\":\"c\",\"namespace\":\"team\"},\"spec\":{"
	    "\"leaseName\":\"lead\",\"binaryVersion\":\"1.1.0\",\"strategy\":"
	    "\"OldestEmulationVersion\"}}]}";
	unsigned	 skipped;
	char		 err[256];

	(void)state;
	ncands = 0;
	assert_int_equal(leaseview_cands(cl, strlen(cl), cand_cb, NULL,
	    &skipped, err, sizeof(err)), 0);
	assert_int_equal(ncands, 2);
	assert_int_equal(skipped, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_event_and_one),
		cmocka_unit_test(test_cands),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
