/*
 * epslice_test.c -- the leader's EndpointSlice and Endpoints bodies
 * (lib/codec/epslice.c): byte-exact JSON for an IPv4 and an IPv6 leader,
 * with and without a port and a pod, the empty bodies a leader writes
 * when it steps down, and the refusal of an address that is neither.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codec/epslice.h"

#define META4 "\"metadata\":{\"name\":\"db-leader\",\"namespace\":\"prod\"," \
	"\"labels\":{\"kubernetes.io/service-name\":\"db\"," \
	"\"endpointslice.kubernetes.io/managed-by\":\"leaderd.io\"}}"

static void
check(const struct epslice *e, int legacy, int leader, const char *want)
{
	char	*got = epslice_body(e, legacy, leader);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void
test_slice_v4(void **state)
{
	struct epslice	 e = { "db", "prod", "10.0.0.7", 5432, "pg",
	    "db-0", "prod" };

	(void)state;
	check(&e, 0, 1, "{\"apiVersion\":\"discovery.k8s.io/v1\","
	    "\"kind\":\"EndpointSlice\"," META4 ",\"addressType\":\"IPv4\","
	    "\"endpoints\":[{\"addresses\":[\"10.0.0.7\"],\"conditions\":"
	    "{\"ready\":true},\"targetRef\":{\"kind\":\"Pod\",\"namespace\":"
	    "\"prod\",\"name\":\"db-0\"}}],\"ports\":[{\"port\":5432,"
	    "\"protocol\":\"TCP\",\"name\":\"pg\"}]}");
	/* Stepping down: no endpoint, the same object otherwise. */
	check(&e, 0, 0, "{\"apiVersion\":\"discovery.k8s.io/v1\","
	    "\"kind\":\"EndpointSlice\"," META4 ",\"addressType\":\"IPv4\","
	    "\"endpoints\":[],\"ports\":[{\"port\":5432,\"protocol\":\"TCP\","
	    "\"name\":\"pg\"}]}");
}

static void
test_slice_v6(void **state)
{
	struct epslice	 e = { "db", "prod", "fd00::7", 0, "", "", "prod" };

	(void)state;
	check(&e, 0, 1, "{\"apiVersion\":\"discovery.k8s.io/v1\","
	    "\"kind\":\"EndpointSlice\"," META4 ",\"addressType\":\"IPv6\","
	    "\"endpoints\":[{\"addresses\":[\"fd00::7\"],\"conditions\":"
	    "{\"ready\":true}}],\"ports\":[]}");
}

static void
test_endpoints(void **state)
{
	struct epslice	 e = { "db", "prod", "10.0.0.7", 5432, "",
	    "db-0", "prod" };
	const char	*meta = "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\","
	    "\"metadata\":{\"name\":\"db\",\"namespace\":\"prod\",\"labels\":"
	    "{\"endpointslice.kubernetes.io/skip-mirror\":\"true\"}},";
	char		 want[1024];

	(void)state;
	snprintf(want, sizeof(want), "%s\"subsets\":[{\"addresses\":"
	    "[{\"ip\":\"10.0.0.7\",\"targetRef\":{\"kind\":\"Pod\","
	    "\"namespace\":\"prod\",\"name\":\"db-0\"}}],\"ports\":"
	    "[{\"port\":5432,\"protocol\":\"TCP\"}]}]}", meta);
	check(&e, 1, 1, want);
	snprintf(want, sizeof(want), "%s\"subsets\":[]}", meta);
	check(&e, 1, 0, want);
}

static void
test_bad_ip(void **state)
{
	struct epslice	 e = { "db", "prod", "10.0.0", 0, "", "", "prod" };
	char		 name[64];

	(void)state;
	assert_null(epslice_body(&e, 0, 1));
	e.ip = "";
	assert_null(epslice_body(&e, 1, 1));
	epslice_name("db", name, sizeof(name));
	assert_string_equal(name, "db-leader");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slice_v4),
		cmocka_unit_test(test_slice_v6),
		cmocka_unit_test(test_endpoints),
		cmocka_unit_test(test_bad_ip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
