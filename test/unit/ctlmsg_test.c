/*
 * ctlmsg_test.c -- ctlmsg.c: the local API's answers as the control
 * client decodes them.  The documents are the daemon's own, copied from
 * docs/api.md and the daemon's replies (localapi.c, daemon_http.c),
 * with the fields a daemon with candidacy adds; a missing field is
 * absent, not zero, and a field of the wrong type is an error.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "codec/ctlmsg.h"

static void
test_leader(void **state)
{
	static const char	 doc[] = "{\"name\":\"pod-a\","
	    "\"is_leader\":true,"
	    "\"identity\":\"pod-a\",\"lock\":\"leases/default/my-app\","
	    "\"state\":\"leader\",\"transitions\":0,\"fencing_token\":"
	    "\"0000000000-6f1c0d0e-9c2e-4b1a-8d7e-2a3b4c5d6e7f\","
	    "\"acquire_time\":\"2026-12-02T14:12:50.227246Z\","
	    "\"renew_time\":null,\"lease_duration_seconds\":15,"
	    "\"valid_for_ms\":8064,\"index\":3,"
	    "\"changed_at\":\"2026-12-02T14:12:50.229811Z\"}\n";
	struct ctlmsg	 m;
	char		 err[128];

	(void)state;
	assert_int_equal(ctlmsg_decode(doc, strlen(doc), &m, err,
	    sizeof(err)), 0);
	assert_int_equal(m.has, CTLMSG_NAME | CTLMSG_IS_LEADER |
	    CTLMSG_IDENTITY | CTLMSG_LOCK | CTLMSG_STATE | CTLMSG_TOKEN |
	    CTLMSG_VALID_FOR | CTLMSG_INDEX);
	assert_string_equal(m.name, "pod-a");
	assert_true(m.is_leader);
	assert_string_equal(m.identity, "pod-a");
	assert_string_equal(m.lock, "leases/default/my-app");
	assert_string_equal(m.state, "leader");
	assert_string_equal(m.token,
	    "0000000000-6f1c0d0e-9c2e-4b1a-8d7e-2a3b4c5d6e7f");
	assert_int_equal(m.valid_for_ms, 8064);
	assert_int_equal(m.index, 3);
}

static void
test_other_answers(void **state)
{
	static const struct {
		const char	*doc;
		unsigned	 has;
	} cases[] = {
		/* A follower with candidacy: not a candidate, and why. */
		{ "{\"name\":\"\",\"is_leader\":false,\"candidate\":false,"
		    "\"candidate_reason\":\"paused\"}",
		    CTLMSG_NAME | CTLMSG_IS_LEADER | CTLMSG_CANDIDATE |
		    CTLMSG_CAND_REASON },
		{ "{\"released\":true,\"is_leader\":false,"
		    "\"cooldown_ms\":15000}",
		    CTLMSG_RELEASED | CTLMSG_IS_LEADER | CTLMSG_COOLDOWN },
		{ "{\"released\":false,\"is_leader\":false,\"cooldown_ms\":0,"
		    "\"reason\":\"the release is not written yet\"}",
		    CTLMSG_RELEASED | CTLMSG_IS_LEADER | CTLMSG_COOLDOWN |
		    CTLMSG_REASON },
		{ "{\"paused\":true,\"candidate\":false,"
		    "\"candidate_reason\":\"paused\",\"is_leader\":false}",
		    CTLMSG_PAUSED | CTLMSG_CANDIDATE | CTLMSG_CAND_REASON |
		    CTLMSG_IS_LEADER },
		{ "{\"error\":\"not the leader\",\"status\":409}",
		    CTLMSG_ERROR },
		/* null is absent; unknown fields are ignored. */
		{ "{\"name\":null,\"future\":[1,{}],\"index\":null}", 0 },
		{ "{}", 0 },
	};
	struct ctlmsg	 m;
	char		 err[128];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (ctlmsg_decode(cases[i].doc, strlen(cases[i].doc), &m, err,
		    sizeof(err)) != 0)
			fail_msg("case %zu: %s", i, err);
		if (m.has != cases[i].has)
			fail_msg("case %zu: has %#x, want %#x", i, m.has,
			    cases[i].has);
	}
	ctlmsg_decode(cases[0].doc, strlen(cases[0].doc), &m, err,
	    sizeof(err));
	assert_false(m.candidate);
	assert_string_equal(m.cand_reason, "paused");
	assert_string_equal(m.name, "");
	ctlmsg_decode(cases[2].doc, strlen(cases[2].doc), &m, err,
	    sizeof(err));
	assert_false(m.released);
	assert_string_equal(m.reason, "the release is not written yet");
	ctlmsg_decode(cases[4].doc, strlen(cases[4].doc), &m, err,
	    sizeof(err));
	assert_string_equal(m.error, "not the leader");
}

static void
test_problem(void **state)
{
	static const char	 doc[] = "{\"name\":\"\",\"is_leader\":false,"
	    "\"problem\":{\"code\":\"forbidden\",\"severity\":\"error\","
	    "\"message\":\"update leases/app in namespace default is "
	    "forbidden (403)\",\"since\":\"2026-12-05T02:58:45.000000Z\"},"
	    "\"problems\":[],\"confirmed_at\":null,\"stale\":true}";
	static const char	 none[] = "{\"problem\":null,\"stale\":false,"
	    "\"confirmed_at\":\"2026-12-05T02:58:45.000000Z\"}";
	struct ctlmsg	 m;
	char		 err[128];

	(void)state;
	assert_int_equal(ctlmsg_decode(doc, strlen(doc), &m, err,
	    sizeof(err)), 0);
	assert_true(m.has & CTLMSG_PROBLEM);
	assert_string_equal(m.problem_code, "forbidden");
	assert_string_equal(m.problem_severity, "error");
	assert_string_equal(m.problem,
	    "update leases/app in namespace default is forbidden (403)");
	assert_string_equal(m.problem_since, "2026-12-05T02:58:45.000000Z");
	assert_true((m.has & CTLMSG_STALE) && m.stale);
	assert_string_equal(m.confirmed_at, "");
	assert_int_equal(ctlmsg_decode(none, strlen(none), &m, err,
	    sizeof(err)), 0);
	assert_false(m.has & CTLMSG_PROBLEM);
	assert_true((m.has & CTLMSG_STALE) && !m.stale);
	assert_string_equal(m.confirmed_at, "2026-12-05T02:58:45.000000Z");
	assert_int_equal(ctlmsg_decode("{\"problem\":\"x\"}", 15, &m, err,
	    sizeof(err)), -1);
	assert_string_equal(err, "problem: not an object or null");
}

static void
test_bad(void **state)
{
	static const struct {
		const char	*doc;
		const char	*err;
	} cases[] = {
		{ "", "not JSON" },
		{ "not found", "not JSON" },
		{ "[1]", "not a JSON object" },
		{ "\"x\"", "not JSON" },
		{ "{\"is_leader\":\"yes\"}", "is_leader: not true or false" },
		{ "{\"is_leader\":1}", "is_leader: not true or false" },
		{ "{\"index\":-1}", "index: not a whole number" },
		{ "{\"valid_for_ms\":1.5}",
		    "valid_for_ms: not a whole number" },
		{ "{\"name\":7}", "name: not a string" },
		{ "{\"state\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
		    "state: 70 bytes long" },
	};
	struct ctlmsg	 m;
	char		 err[128];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (ctlmsg_decode(cases[i].doc, strlen(cases[i].doc), &m, err,
		    sizeof(err)) != -1 ||
		    strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
			fail_msg("case %zu: \"%s\", want \"%s...\"", i, err,
			    cases[i].err);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leader),
		cmocka_unit_test(test_other_answers),
		cmocka_unit_test(test_problem),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
