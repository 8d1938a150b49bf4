/*
 * doctor_test.c -- the doctors' judgements (tool/doctor_judge.c) and
 * their report (tool/doctor.c): for each check, the case that is wrong
 * and the one that is not, with the weight, the words an operator greps
 * for, and the fix; the output's format and the exit status.
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
#include "tool/doctor.h"

#define T0	1700000000000000LL	/* 2023-11-14T22:13:20Z */
#define S	1000000LL

static struct doctor_report	 rep;

/* The one finding of check, asserting there is exactly one. */
static const struct doctor_finding *
one(const char *check)
{
	const struct doctor_finding	*got = NULL;
	size_t				 i;

	for (i = 0; i < rep.n; i++)
		if (strcmp(rep.f[i].check, check) == 0) {
			assert_null(got);
			got = &rep.f[i];
		}
	assert_non_null(got);
	return got;
}

static int
has(const char *check)
{
	size_t	 i;

	for (i = 0; i < rep.n; i++)
		if (strcmp(rep.f[i].check, check) == 0)
			return 1;
	return 0;
}

static void
test_access(void **state)
{
	struct doctor_access	 a = {
		.subject = "this pod's service account",
		.grant_to = "system:serviceaccount:drill1:leaderd",
		.verb = "update", .resource = "leases",
		.group = "coordination.k8s.io", .ns = "drill1", .name = "app",
		.need = "to renew the Lease", .answer = DOCTOR_DENIED,
		.reason = "",
	};
	const struct doctor_finding	*f;

	(void)state;
	doctor_init(&rep);
	doctor_judge_access(&rep, &a);
	f = one("access");
	assert_int_equal(f->sev, DOCTOR_FAIL);
	assert_non_null(strstr(f->what, "may not update "
	    "leases.coordination.k8s.io/app in namespace drill1"));
	assert_non_null(strstr(f->fix, "add verb \"update\" on resource "
	    "\"leases\""));
	assert_non_null(strstr(f->fix, "system:serviceaccount:drill1:leaderd"));
	assert_int_equal(doctor_exit(&rep), DOCTOR_EXIT_PROBLEM);

	doctor_init(&rep);
	a.answer = DOCTOR_ALLOWED;
	doctor_judge_access(&rep, &a);
	assert_int_equal(one("access")->sev, DOCTOR_OK);
	assert_string_equal(one("access")->fix, "");
	assert_int_equal(doctor_exit(&rep), DOCTOR_EXIT_OK);

	doctor_init(&rep);
	a.answer = DOCTOR_NOANSWER;
	a.reason = "404 Not Found";
	doctor_judge_access(&rep, &a);
	assert_int_equal(one("access")->sev, DOCTOR_SKIP);
	assert_non_null(strstr(one("access")->what, "404 Not Found"));
	assert_int_equal(doctor_exit(&rep), DOCTOR_EXIT_OK);
}

static void
test_token(void **state)
{
	struct doctor_token	 t = { .source = "/var/run/tok", .status = 401,
	    .error = "", .user = "", .exp_us = T0 + 3600 * S };
	const struct doctor_finding	*f;

	(void)state;
	doctor_init(&rep);
	doctor_judge_token(&rep, &t, T0);
	f = one("token");
	assert_int_equal(f->sev, DOCTOR_FAIL);
	assert_non_null(strstr(f->what, "rejects the token from /var/run/tok "
	    "(401 Unauthorized); it expires at 2023-11-14T23:13:20Z "
	    "(in 3600 s)"));
	assert_non_null(strstr(f->fix, "revoked"));

	/* Expired and rejected: the fix says expired. */
	doctor_init(&rep);
	t.exp_us = T0 - 5 * S;
	doctor_judge_token(&rep, &t, T0);
	assert_non_null(strstr(one("token")->what, "expired at "
	    "2023-11-14T22:13:15Z (5 s ago)"));
	assert_non_null(strstr(one("token")->fix, "expired"));

	/* Expired but still taken: a FAIL all the same. */
	doctor_init(&rep);
	t.status = 200;
	doctor_judge_token(&rep, &t, T0);
	assert_int_equal(one("token")->sev, DOCTOR_FAIL);

	doctor_init(&rep);
	t.exp_us = T0 + 60 * S;
	t.user = "system:serviceaccount:ns:sa";
	doctor_judge_token(&rep, &t, T0);
	assert_int_equal(one("token")->sev, DOCTOR_OK);
	assert_non_null(strstr(one("token")->what,
	    "as system:serviceaccount:ns:sa; it expires"));

	doctor_init(&rep);
	t.status = 0;
	t.error = "Couldn't connect to server";
	doctor_judge_token(&rep, &t, T0);
	assert_int_equal(one("api")->sev, DOCTOR_FAIL);
	assert_false(has("token"));
}

static struct lease
held(const char *holder, int32_t dur_s, int64_t renew_us)
{
	struct lease	 rec;

	memset(&rec, 0, sizeof(rec));
	snprintf(rec.holder, sizeof(rec.holder), "%s", holder);
	rec.duration_s = dur_s;
	rec.renew_us = renew_us;
	rec.acquire_us = renew_us;
	return rec;
}

static struct doctor_lease
about(const struct lease *rec)
{
	struct doctor_lease	 l = { .ns = "ns", .name = "app", .exists = 1,
	    .rec = rec, .now_us = T0, .lease_ms = 15000, .identity = "pod-b",
	    .holder_live = DOCTOR_LIVE_YES, .preferred_live = DOCTOR_LIVE_YES,
	    .manager = "leaderd" };

	return l;
}

static void
test_lease_stale(void **state)
{
	struct lease		 rec = held("pod-a", 15, T0 - 16 * S);
	struct doctor_lease	 l = about(&rec);
	const struct doctor_finding	*f;

	(void)state;
	doctor_init(&rep);
	doctor_judge_lease(&rep, &l);
	f = one("lease");
	assert_int_equal(f->sev, DOCTOR_FAIL);
	assert_non_null(strstr(f->what, "lease ns/app is stale: pod-a renewed "
	    "it 16 s ago, past its 15 s duration"));
	assert_non_null(strstr(f->fix, "pod-a is alive but cannot renew"));

	/* A holder gone: the fix frees the Lease. */
	doctor_init(&rep);
	l.holder_live = DOCTOR_LIVE_NO;
	doctor_judge_lease(&rep, &l);
	assert_non_null(strstr(one("lease")->fix, "holderIdentity"));

	/* Within its duration: fresh. */
	doctor_init(&rep);
	rec.renew_us = T0 - 14 * S;
	doctor_judge_lease(&rep, &l);
	assert_int_equal(one("lease")->sev, DOCTOR_OK);
	assert_non_null(strstr(one("lease")->what, "held by pod-a, renewed "
	    "14 s ago (duration 15 s)"));
	assert_int_equal(doctor_exit(&rep), DOCTOR_EXIT_OK);
}

static void
test_lease_ghost(void **state)
{
	struct lease		 rec = held("ghost-7f9c", 3600, T0 - 25 * S);
	struct doctor_lease	 l = about(&rec);
	const struct doctor_finding	*f;

	(void)state;
	l.holder_live = DOCTOR_LIVE_NO;
	doctor_init(&rep);
	doctor_judge_lease(&rep, &l);
	f = one("lease");
	assert_int_equal(f->sev, DOCTOR_FAIL);
	assert_non_null(strstr(f->what, "holder ghost-7f9c asks 3600 s (ours "
	    "15 s) and is no live pod or candidate: a hand edit or a ghost; "
	    "nobody takes over before 2023-11-14T23:12:55Z"));
	assert_non_null(strstr(f->fix, "holderIdentity\":\"\""));
	assert_non_null(strstr(f->fix, "kubectl delete lease -n ns app"));

	/* A live holder with a long lease: held "for life", a warning. */
	doctor_init(&rep);
	l.holder_live = DOCTOR_LIVE_YES;
	doctor_judge_lease(&rep, &l);
	assert_int_equal(one("lease")->sev, DOCTOR_WARN);
	assert_non_null(strstr(one("lease")->what, "held by ghost-7f9c with a "
	    "3600 s duration"));
	assert_int_equal(doctor_exit(&rep), DOCTOR_EXIT_OK);

	/* kubectl knows no duration of ours: over 600 s counts. */
	doctor_init(&rep);
	l.holder_live = DOCTOR_LIVE_UNKNOWN;
	l.lease_ms = 0;
	l.identity = NULL;
	rec.duration_s = 601;
	doctor_judge_lease(&rep, &l);
	assert_int_equal(one("lease")->sev, DOCTOR_FAIL);
	doctor_init(&rep);
	rec.duration_s = 600;
	doctor_judge_lease(&rep, &l);
	assert_int_equal(one("lease")->sev, DOCTOR_OK);

	/* Our own identity is never a ghost. */
	doctor_init(&rep);
	l.identity = "ghost-7f9c";
	l.lease_ms = 15000;
	rec.duration_s = 60;
	doctor_judge_lease(&rep, &l);
	assert_int_equal(one("lease")->sev, DOCTOR_OK);
	assert_non_null(strstr(one("lease")->what, "held by ghost-7f9c (us)"));
}

static void
test_lease_for_life(void **state)
{
	struct lease		 rec = held("pod-a", 0, 0);
	struct doctor_lease	 l = about(&rec);

	(void)state;
	doctor_init(&rep);
	doctor_judge_lease(&rep, &l);
	assert_int_equal(one("lease")->sev, DOCTOR_WARN);
	assert_non_null(strstr(one("lease")->what, "held for life by pod-a"));
	assert_int_equal(doctor_exit(&rep), DOCTOR_EXIT_OK);

	doctor_init(&rep);
	l.holder_live = DOCTOR_LIVE_NO;
	doctor_judge_lease(&rep, &l);
	assert_int_equal(one("lease")->sev, DOCTOR_FAIL);
	assert_non_null(strstr(one("lease")->fix,
	    "kubectl delete lease -n ns app"));
}

static void
test_lease_preferred(void **state)
{
	struct lease		 rec = held("pod-a", 15, T0 - 1 * S);
	struct doctor_lease	 l = about(&rec);
	const struct doctor_finding	*f;

	(void)state;
	snprintf(rec.preferred, sizeof(rec.preferred), "pod-dead");
	snprintf(rec.strategy, sizeof(rec.strategy), "OldestEmulationVersion");
	l.preferred_live = DOCTOR_LIVE_NO;
	doctor_init(&rep);
	doctor_judge_lease(&rep, &l);
	f = one("preferred");
	assert_int_equal(f->sev, DOCTOR_FAIL);
	assert_non_null(strstr(f->what, "prefers holder pod-dead"));
	assert_non_null(strstr(f->fix, "\"preferredHolder\":null"));

	/* Also on a free Lease. */
	doctor_init(&rep);
	rec.holder[0] = '\0';
	doctor_judge_lease(&rep, &l);
	assert_int_equal(one("preferred")->sev, DOCTOR_FAIL);

	/* A live one, or one not known, is no finding. */
	doctor_init(&rep);
	l.preferred_live = DOCTOR_LIVE_UNKNOWN;
	doctor_judge_lease(&rep, &l);
	assert_false(has("preferred"));
	l.preferred_live = DOCTOR_LIVE_YES;
	doctor_judge_lease(&rep, &l);
	assert_false(has("preferred"));
}

static void
test_lease_other(void **state)
{
	struct lease		 rec = held("pod-a", 15, T0 + 30 * S);
	struct doctor_lease	 l = about(&rec);

	(void)state;
	/* A renewTime 30 s ahead: the holder's clock. */
	doctor_init(&rep);
	doctor_judge_lease(&rep, &l);
	assert_int_equal(one("clock")->sev, DOCTOR_WARN);
	assert_non_null(strstr(one("clock")->what, "30 s ahead"));
	doctor_init(&rep);
	rec.renew_us = T0 + 2 * S;
	doctor_judge_lease(&rep, &l);
	assert_false(has("clock"));

	/* Absent. */
	doctor_init(&rep);
	l.exists = 0;
	doctor_judge_lease(&rep, &l);
	assert_int_equal(one("lease")->sev, DOCTOR_OK);
	assert_non_null(strstr(one("lease")->what, "does not exist"));

	/* Written by a client-go elector, which renews. */
	doctor_init(&rep);
	l.exists = 1;
	l.manager = "elector";
	rec.acquire_us = rec.renew_us;
	doctor_judge_lease(&rep, &l);
	assert_false(has("holder"));	/* renewTime == acquireTime: an edit */
	doctor_init(&rep);
	rec.acquire_us = T0 - 60 * S;
	doctor_judge_lease(&rep, &l);
	assert_int_equal(one("holder")->sev, DOCTOR_WARN);
	assert_non_null(strstr(one("holder")->what, "client-go elector"));
	assert_true(doctor_manager_not_elector("kubectl-patch"));
	assert_true(doctor_manager_not_elector("leaderd"));
	assert_true(doctor_manager_not_elector(""));
	assert_false(doctor_manager_not_elector("kube-controller-manager"));
}

static void
test_identity_pod(void **state)
{
	char	 pod[LEASE_HOLDER_MAX];

	(void)state;
	doctor_identity_pod("app-0", pod, sizeof(pod));
	assert_string_equal(pod, "app-0");
	doctor_identity_pod("app-0_8c2a6f3e-0b1d-4d55-9f3b-2f0e5f9b7a11", pod,
	    sizeof(pod));
	assert_string_equal(pod, "app-0");
	doctor_identity_pod("app_0", pod, sizeof(pod));
	assert_string_equal(pod, "app_0");
	doctor_identity_pod("app-0_8c2a6f3e-0b1d-4d55-9f3b-2f0e5f9b7aXX", pod,
	    sizeof(pod));
	assert_string_equal(pod, "app-0_8c2a6f3e-0b1d-4d55-9f3b-2f0e5f9b7aXX");
}

static void
test_pod(void **state)
{
	(void)state;
	doctor_init(&rep);
	doctor_judge_pod(&rep, "ns", "holder", "pod-a", "pod-a",
	    DOCTOR_LIVE_NO, 0);
	assert_int_equal(one("pods")->sev, DOCTOR_WARN);
	assert_non_null(strstr(one("pods")->what, "holder pod-a: no pod "
	    "ns/pod-a"));
	doctor_init(&rep);
	doctor_judge_pod(&rep, "ns", "holder", "pod-a", "pod-a",
	    DOCTOR_LIVE_NO, 1);
	assert_int_equal(one("pods")->sev, DOCTOR_OK);
	doctor_init(&rep);
	doctor_judge_pod(&rep, "ns", "holder", "pod-a", "pod-a",
	    DOCTOR_LIVE_YES, 0);
	assert_int_equal(one("pods")->sev, DOCTOR_OK);
}

static void
test_split(void **state)
{
	struct lease		 ours = held("new-c", 15, T0 - 1 * S);
	struct lease		 old = held("old-a", 15, T0 - 1 * S);
	struct doctor_other	 o = { "Endpoints", "ns", "app", &old };

	(void)state;
	doctor_init(&rep);
	doctor_judge_other(&rep, &o, "leases", &ours, T0);
	assert_int_equal(one("split")->sev, DOCTOR_FAIL);
	assert_non_null(strstr(one("split")->what, "endpoints ns/app holds a "
	    "leader record renewed 1 s ago by old-a"));
	assert_non_null(strstr(one("split")->fix, "endpointsleases"));

	doctor_init(&rep);
	doctor_judge_other(&rep, &o, "endpointsleases", &ours, T0);
	assert_int_equal(one("split")->sev, DOCTOR_OK);

	/* kubectl: a FAIL when the two name different holders. */
	doctor_init(&rep);
	doctor_judge_other(&rep, &o, NULL, &ours, T0);
	assert_int_equal(one("split")->sev, DOCTOR_FAIL);
	doctor_init(&rep);
	snprintf(ours.holder, sizeof(ours.holder), "old-a");
	doctor_judge_other(&rep, &o, NULL, &ours, T0);
	assert_int_equal(one("split")->sev, DOCTOR_WARN);

	/* A record past its duration is history. */
	doctor_init(&rep);
	old.renew_us = T0 - 16 * S;
	doctor_judge_other(&rep, &o, "leases", &ours, T0);
	assert_int_equal(one("split")->sev, DOCTOR_OK);

	/* A Lease of the same name in another namespace. */
	doctor_init(&rep);
	old.renew_us = T0 - 1 * S;
	o.kind = "Lease";
	o.ns = "canary";
	doctor_judge_other(&rep, &o, "leases", &ours, T0);
	assert_int_equal(one("split")->sev, DOCTOR_WARN);
	assert_non_null(strstr(one("split")->what, "lease canary/app of the "
	    "same name is held too, by old-a"));

	/* A live Lease beside our old-style lock. */
	doctor_init(&rep);
	o.ns = "ns";
	doctor_judge_other(&rep, &o, "endpoints", NULL, T0);
	assert_int_equal(one("split")->sev, DOCTOR_FAIL);
	assert_non_null(strstr(one("split")->what, "lease ns/app holds a live "
	    "record, renewed 1 s ago by old-a: electors on the Lease elect "
	    "apart from those on lock type endpoints"));
	assert_non_null(strstr(one("split")->fix, "endpointsleases"));
}

static void
test_clock_namespace(void **state)
{
	(void)state;
	/* renew_deadline 10 s: a quarter is 2.5 s, plus 1 s of rounding. */
	doctor_init(&rep);
	doctor_judge_clock(&rep, 30000, 10000);
	assert_int_equal(one("clock")->sev, DOCTOR_FAIL);
	assert_non_null(strstr(one("clock")->what, "30.000 s ahead of"));
	doctor_init(&rep);
	doctor_judge_clock(&rep, -3501, 10000);
	assert_int_equal(one("clock")->sev, DOCTOR_FAIL);
	assert_non_null(strstr(one("clock")->what, "behind"));
	doctor_init(&rep);
	doctor_judge_clock(&rep, 3500, 10000);
	assert_int_equal(one("clock")->sev, DOCTOR_OK);

	doctor_init(&rep);
	doctor_judge_namespace(&rep, "drill4-canary", "drill4");
	assert_int_equal(one("namespace")->sev, DOCTOR_WARN);
	doctor_init(&rep);
	doctor_judge_namespace(&rep, "drill4", "drill4");
	doctor_judge_namespace(&rep, "drill4", "");
	assert_int_equal(rep.n, 0);
}

static void
test_print(void **state)
{
	struct doctor_finding	*f;
	char			*out = NULL;
	size_t			 len = 0;
	FILE			*fp;
	int			 i;

	(void)state;
	doctor_init(&rep);
	doctor_add(&rep, DOCTOR_OK, "token", "fine");
	f = doctor_add(&rep, DOCTOR_FAIL, "access", "no \x1b[31mred");
	doctor_fix(f, "grant it");
	doctor_add(&rep, DOCTOR_WARN, "namespace", "differs");
	doctor_add(&rep, DOCTOR_SKIP, "split", "not allowed");
	assert_non_null(fp = open_memstream(&out, &len));
	doctor_print(&rep, "lease ns/app", fp);
	fclose(fp);
	assert_string_equal(out,
	    "FAIL  access: no \\x1b[31mred\n"
	    "      fix: grant it\n"
	    "warn  namespace: differs\n"
	    "ok    token: fine\n"
	    "skip  split: not allowed\n"
	    "doctor: 1 problem, 1 warning (lease ns/app)\n");
	free(out);
	assert_int_equal(doctor_exit(&rep), DOCTOR_EXIT_PROBLEM);

	/* Past the cap: counted, and said. */
	doctor_init(&rep);
	for (i = 0; i < DOCTOR_FINDINGS_MAX + 2; i++)
		doctor_add(&rep, DOCTOR_FAIL, "x", "%d", i);
	assert_int_equal(rep.n, DOCTOR_FINDINGS_MAX);
	assert_int_equal(rep.dropped, 2);
	assert_int_equal(rep.count[DOCTOR_FAIL], DOCTOR_FINDINGS_MAX + 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_access),
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_lease_stale),
		cmocka_unit_test(test_lease_ghost),
		cmocka_unit_test(test_lease_for_life),
		cmocka_unit_test(test_lease_preferred),
		cmocka_unit_test(test_lease_other),
		cmocka_unit_test(test_identity_pod),
		cmocka_unit_test(test_pod),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_clock_namespace),
		cmocka_unit_test(test_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
