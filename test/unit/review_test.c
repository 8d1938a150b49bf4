/*
 * review_test.c -- the doctor's API objects (codec/review.c): the exact
 * bytes of both access reviews, their answers as kube-apiserver gives
 * them, a SelfSubjectReview, a pod's service account, and the last
 * writer of a Lease's spec among its managedFields.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec/review.h"

static const struct review_ask ask = { "update", "coordination.k8s.io",
    "leases", "drill1", "app" };

static void
test_encode(void **state)
{
	struct review_ask	 any = { "list", "coordination.k8s.io",
	    "leases", "", "" };
	char			*s;

	(void)state;
	s = review_encode_self(&ask);
	assert_string_equal(s, "{\"kind\":\"SelfSubjectAccessReview\","
	    "\"apiVersion\":\"authorization.k8s.io/v1\",\"spec\":{"
	    "\"resourceAttributes\":{\"verb\":\"update\",\"group\":"
	    "\"coordination.k8s.io\",\"resource\":\"leases\",\"namespace\":"
	    "\"drill1\",\"name\":\"app\"}}}");
	free(s);
	s = review_encode_self(&any);
	assert_string_equal(s, "{\"kind\":\"SelfSubjectAccessReview\","
	    "\"apiVersion\":\"authorization.k8s.io/v1\",\"spec\":{"
	    "\"resourceAttributes\":{\"verb\":\"list\",\"group\":"
	    "\"coordination.k8s.io\",\"resource\":\"leases\"}}}");
	free(s);
	s = review_encode_sa("drill1", "leaderd", &ask);
	assert_string_equal(s, "{\"kind\":\"SubjectAccessReview\","
	    "\"apiVersion\":\"authorization.k8s.io/v1\",\"spec\":{"
	    "\"resourceAttributes\":{\"verb\":\"update\",\"group\":"
	    "\"coordination.k8s.io\",\"resource\":\"leases\",\"namespace\":"
	    "\"drill1\",\"name\":\"app\"},\"user\":"
	    "\"system:serviceaccount:drill1:leaderd\",\"groups\":["
	    "\"system:serviceaccounts\",\"system:serviceaccounts:drill1\","
	    "\"system:authenticated\"]}}");
	free(s);
}

static void
test_decode(void **state)
{
	static const char	 yes[] = "{\"kind\":"
	    "\"SelfSubjectAccessReview\",\"status\":{\"allowed\":true,"
	    "\"reason\":\"RBAC: allowed by RoleBinding "
	    "\\\"leaderd/drill1\\\"\"}}";
	static const char	 no[] = "{\"kind\":\"SubjectAccessReview\","
	    "\"status\":{\"allowed\":false,\"evaluationError\":\"oops\"}}";
	static const char	 bare[] = "{\"status\":{\"allowed\":false}}";
	char			 reason[128], err[128];
	int			 allowed = -1;

	(void)state;
	assert_int_equal(review_decode(yes, strlen(yes), &allowed, reason,
	    sizeof(reason), err, sizeof(err)), 0);
	assert_int_equal(allowed, 1);
	assert_string_equal(reason, "RBAC: allowed by RoleBinding "
	    "\"leaderd/drill1\"");
	assert_int_equal(review_decode(no, strlen(no), &allowed, reason,
	    sizeof(reason), err, sizeof(err)), 0);
	assert_int_equal(allowed, 0);
	assert_string_equal(reason, "oops");
	assert_int_equal(review_decode(bare, strlen(bare), &allowed, reason,
	    sizeof(reason), err, sizeof(err)), 0);
	assert_int_equal(allowed, 0);
	assert_string_equal(reason, "");
	assert_int_equal(review_decode("{\"status\":{}}", 13, &allowed,
	    reason, sizeof(reason), err, sizeof(err)), -1);
	assert_int_equal(review_decode("nope", 4, &allowed, reason,
	    sizeof(reason), err, sizeof(err)), -1);
}

static void
test_whoami_pod(void **state)
{
	static const char	 ssr[] = "{\"kind\":\"SelfSubjectReview\","
	    "\"status\":{\"userInfo\":{\"username\":"
	    "\"system:serviceaccount:ns:sa\",\"groups\":[]}}}";
	static const char	 pod[] = "{\"kind\":\"Pod\",\"spec\":{"
	    "\"serviceAccountName\":\"leaderd\"}}";
	static const char	 pod0[] = "{\"kind\":\"Pod\",\"spec\":{}}";
	char			 s[128], err[128];

	(void)state;
	assert_int_equal(review_whoami(ssr, strlen(ssr), s, sizeof(s), err,
	    sizeof(err)), 0);
	assert_string_equal(s, "system:serviceaccount:ns:sa");
	assert_int_equal(review_whoami("{}", 2, s, sizeof(s), err,
	    sizeof(err)), -1);
	assert_int_equal(review_pod_sa(pod, strlen(pod), s, sizeof(s), err,
	    sizeof(err)), 0);
	assert_string_equal(s, "leaderd");
	assert_int_equal(review_pod_sa(pod0, strlen(pod0), s, sizeof(s), err,
	    sizeof(err)), 0);
	assert_string_equal(s, "default");
}

static void
test_manager(void **state)
{
	/* kube-apiserver's managedFields of a Lease written by three. */
	static const char	 lease[] = "{\"kind\":\"Lease\",\"metadata\":{"
	    "\"name\":\"app\",\"managedFields\":["
	    "{\"manager\":\"leaderd\",\"operation\":\"Update\",\"time\":"
	    "\"2026-12-05T06:00:00Z\",\"fieldsType\":\"FieldsV1\","
	    "\"fieldsV1\":{\"f:spec\":{\"f:holderIdentity\":{}}}},"
	    "{\"manager\":\"elector\",\"operation\":\"Update\",\"time\":"
	    "\"2026-12-05T06:00:09Z\",\"fieldsType\":\"FieldsV1\","
	    "\"fieldsV1\":{\"f:spec\":{\"f:renewTime\":{}}}},"
	    "{\"manager\":\"kubectl-label\",\"operation\":\"Update\",\"time\":"
	    "\"2026-12-05T06:00:30Z\",\"fieldsType\":\"FieldsV1\","
	    "\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{}}}},"
	    "{\"manager\":\"apply\",\"operation\":\"Apply\",\"time\":"
	    "\"2026-12-05T06:00:40Z\",\"fieldsType\":\"FieldsV1\","
	    "\"fieldsV1\":{\"f:spec\":{}}}]},\"spec\":{}}";
	char			 m[64], err[128];

	(void)state;
	assert_int_equal(review_spec_manager(lease, strlen(lease), m,
	    sizeof(m), err, sizeof(err)), 0);
	assert_string_equal(m, "elector");
	assert_int_equal(review_spec_manager("{\"kind\":\"Lease\"}", 16, m,
	    sizeof(m), err, sizeof(err)), 0);
	assert_string_equal(m, "");
	assert_int_equal(review_spec_manager("[]", 2, m, sizeof(m), err,
	    sizeof(err)), -1);
}

static void
name_cb(const char *name, void *arg)
{
	char	*out = arg;

	strcat(out, name);
	strcat(out, ";");
}

static void
test_pod_list(void **state)
{
	static const char	 list[] = "{\"kind\":\"PodList\",\"items\":["
	    "{\"metadata\":{\"name\":\"app-0\"}},{\"metadata\":{}},"
	    "{\"metadata\":{\"name\":\"app-1\"}}]}";
	char			 out[64] = "", err[128];

	(void)state;
	assert_int_equal(review_pod_list(list, strlen(list), name_cb, out,
	    err, sizeof(err)), 0);
	assert_string_equal(out, "app-0;app-1;");
	assert_int_equal(review_pod_list("{}", 2, name_cb, out, err,
	    sizeof(err)), -1);
}

static void
test_event_leaders(void **state)
{
	static const char	 list[] = "{\"kind\":\"EventList\",\"items\":["
	    "{\"reason\":\"LeaderElection\",\"message\":\"pod-a became "
	    "leader\"},"
	    "{\"reason\":\"LeaderElection\",\"message\":\"pod-a stopped "
	    "leading\"},"
	    "{\"reason\":\"Forbidden\",\"message\":\"x became leader\"},"
	    "{\"reason\":\"LeaderElection\",\"message\":\" became "
	    "leader\"},"
	    "{\"reason\":\"LeaderElection\",\"message\":\"app-1_8c2a6f3e-"
	    "0b1d-4d55-9f3b-2f0e5f9b7a11 became leader\"}]}";
	char			 out[128] = "", err[128];

	(void)state;
	assert_int_equal(review_event_leaders(list, strlen(list), name_cb, out,
	    err, sizeof(err)), 0);
	assert_string_equal(out,
	    "pod-a;app-1_8c2a6f3e-0b1d-4d55-9f3b-2f0e5f9b7a11;");
	assert_int_equal(review_event_leaders("[]", 2, name_cb, out, err,
	    sizeof(err)), -1);
}

static void
test_jwt(void **state)
{
	int64_t	 exp = 0;

	(void)state;
	/* {"aud":["k"],"exp":1764918000,"sub":...}, unpadded base64url. */
	assert_int_equal(review_jwt_exp("eyJhbGciOiJSUzI1NiJ9."
	    "eyJhdWQiOlsiayJdLCJleHAiOjE3NjQ5MTgwMDAsInN1YiI6InN5c3RlbTpzZXJ2"
	    "aWNlYWNjb3VudDpuczpzYSJ9.sig", &exp), 0);
	assert_int_equal(exp, 1764918000);
	/* No exp. */
	assert_int_equal(review_jwt_exp("eyJhbGciOiJSUzI1NiJ9."
	    "eyJzdWIiOiJ4In0.sig", &exp), -1);
	/* A fractional exp, as some issuers write it, is cut to seconds. */
	assert_int_equal(review_jwt_exp("e30.eyJleHAiOjE3NjQ5MTgwMDAuNX0.s",
	    &exp), 0);
	assert_int_equal(exp, 1764918000);
	/* Malformed: not a JWT, bad base64, a payload that is not JSON. */
	exp = 7;
	assert_int_equal(review_jwt_exp("opaque-token", &exp), -1);
	assert_int_equal(review_jwt_exp("a.!!!.c", &exp), -1);
	assert_int_equal(review_jwt_exp("e30.bm90IGpzb24.s", &exp), -1);
	/* An exp that is a string, zero, or only in a nested object. */
	assert_int_equal(review_jwt_exp("e30.eyJleHAiOiIxNzY0OTE4MDAwIn0.s",
	    &exp), -1);
	assert_int_equal(review_jwt_exp("e30.eyJleHAiOjB9.s", &exp), -1);
	assert_int_equal(review_jwt_exp("e30.eyJ4Ijp7ImV4cCI6NX19.s", &exp),
	    -1);
	/* A failure leaves *exp_s as it was. */
	assert_int_equal(exp, 7);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_whoami_pod),
		cmocka_unit_test(test_manager),
		cmocka_unit_test(test_jwt),
		cmocka_unit_test(test_pod_list),
		cmocka_unit_test(test_event_leaders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
