/*
 * epslice_test.c -- the leader's EndpointSlice and Endpoints bodies
 * (lib/codec/epslice.c): byte-exact JSON for an IPv4 and an IPv6 leader,
 * with and without a port and a pod, the empty bodies a leader writes
 * when it steps down, and the refusal of an address that is neither;
 * k8s-await-election's Endpoints shape (ports from JSON, nodeName, no
 * skip-mirror label) and what its ports JSON may hold.
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
	    "db-0", "prod", NULL, NULL, 0 };

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
	struct epslice	 e = { "db", "prod", "fd00::7", 0, "", "", "prod",
	    NULL, NULL, 0 };

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
	    "db-0", "prod", NULL, NULL, 0 };
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
	struct epslice	 e = { "db", "prod", "10.0.0", 0, "", "", "prod",
	    NULL, NULL, 0 };
	char		 name[64];

	(void)state;
	assert_null(epslice_body(&e, 0, 1));
	e.ip = "";
	assert_null(epslice_body(&e, 1, 1));
	epslice_name("db", name, sizeof(name));
	assert_string_equal(name, "db-leader");
}

/*
 * k8s-await-election's object (examples/httpbin-example.yaml): the
 * Endpoints alone, mirrored by the control plane, with nodeName and
 * the ports of SERVICE_PORTS_JSON as Go writes them back.
 */
static void
test_await_shape(void **state)
{
	struct epslice	 e = { "my-service", "default", "10.0.0.7", 0, "",
	    "", "default", "[{\"name\":\"http\",\"port\":80}]", "node-1", 1 };
	const char	*meta = "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\","
	    "\"metadata\":{\"name\":\"my-service\",\"namespace\":"
	    "\"default\"},";
	char		 want[1024];

	(void)state;
	snprintf(want, sizeof(want), "%s\"subsets\":[{\"addresses\":"
	    "[{\"ip\":\"10.0.0.7\",\"nodeName\":\"node-1\"}],\"ports\":"
	    "[{\"name\":\"http\",\"port\":80}]}]}", meta);
	check(&e, 1, 1, want);
	snprintf(want, sizeof(want), "%s\"subsets\":[]}", meta);
	check(&e, 1, 0, want);
	/* Keys in any case, the last one winning; null and others dropped. */
	e.ports_json = "[{\"NAME\":\"x\",\"Name\":\"http\",\"Port\":80,"
	    "\"protocol\":\"TCP\",\"appProtocol\":\"kubernetes.io/h2c\","
	    "\"other\":[1]},{\"name\":\"dns\",\"port\":53,\"protocol\":"
	    "\"UDP\",\"appProtocol\":null,\"name\":\"dns\"}]";
	e.node_name = NULL;
	snprintf(want, sizeof(want), "%s\"subsets\":[{\"addresses\":"
	    "[{\"ip\":\"10.0.0.7\"}],\"ports\":[{\"name\":\"http\",\"port\":"
	    "80,\"protocol\":\"TCP\",\"appProtocol\":\"kubernetes.io/h2c\"},"
	    "{\"name\":\"dns\",\"port\":53,\"protocol\":\"UDP\"}]}]}", meta);
	check(&e, 1, 1, want);
	/* No ports: Go leaves "ports" out of the subset. */
	e.ports_json = "[]";
	snprintf(want, sizeof(want), "%s\"subsets\":[{\"addresses\":"
	    "[{\"ip\":\"10.0.0.7\"}]}]}", meta);
	check(&e, 1, 1, want);
	e.ports_json = " null ";
	check(&e, 1, 1, want);
	/* The slice carries the same ports and the nodeName. */
	e.ports_json = "[{\"name\":\"http\",\"port\":80}]";
	e.node_name = "node-1";
	check(&e, 0, 1, "{\"apiVersion\":\"discovery.k8s.io/v1\","
	    "\"kind\":\"EndpointSlice\",\"metadata\":{\"name\":"
	    "\"my-service-leader\",\"namespace\":\"default\",\"labels\":"
	    "{\"kubernetes.io/service-name\":\"my-service\","
	    "\"endpointslice.kubernetes.io/managed-by\":\"leaderd.io\"}},"
	    "\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":"
	    "[\"10.0.0.7\"],\"conditions\":{\"ready\":true},\"nodeName\":"
	    "\"node-1\"}],\"ports\":[{\"name\":\"http\",\"port\":80}]}");
	/* Ports Go would not read: no body at all. */
	e.ports_json = "{\"name\":\"http\"}";
	assert_null(epslice_body(&e, 1, 1));
}

/* What epslice_ports_parse and epslice_ports_check accept. */
static void
test_ports_json(void **state)
{
	static const struct {
		const char	*json;
		int		 parse;		/* Go reads it */
		const char	*err;		/* check's error, or NULL */
	} cases[] = {
		{ "[{\"name\":\"http\",\"port\":80}]", 1, NULL },
		{ "[{\"port\":1024}]", 1, NULL },
		{ "null", 1, NULL },
		{ "[]", 1, NULL },
		{ "[{\"name\":\"a\",\"port\":1,\"protocol\":\"SCTP\"},"
		    "{\"name\":\"b\",\"port\":65535,\"appProtocol\":\"http\"}]",
		    1, NULL },
		{ "", 0, "unexpected end of JSON input" },
		{ "  ", 0, "unexpected end of JSON input" },
		{ "[{\"port\":80}", 0, "" },
		{ "[{\"port\":80}] x", 0, "" },
		{ "{\"port\":80}", 0, "json: cannot unmarshal object into Go "
		    "value of type []v1.EndpointPort" },
		{ "[\"http\"]", 0, "json: cannot unmarshal string into Go "
		    "value of type v1.EndpointPort" },
		{ "[{\"port\":\"80\"}]", 0, "json: cannot unmarshal string "
		    "into Go struct field EndpointPort.port of type int32" },
		{ "[{\"port\":80.5}]", 0, "json: cannot unmarshal number 80.5 "
		    "into Go struct field EndpointPort.port of type int32" },
		{ "[{\"port\":2147483648}]", 0, "json: cannot unmarshal "
		    "number 2147483648 into Go struct field EndpointPort.port "
		    "of type int32" },
		{ "[{\"port\":80,\"name\":1}]", 0, "json: cannot unmarshal "
		    "number 1 into Go struct field EndpointPort.name of type "
		    "string" },
		{ "[{\"port\":80,\"protocol\":true}]", 0, "json: cannot "
		    "unmarshal bool into Go struct field EndpointPort.protocol "
		    "of type v1.Protocol" },
		/* Go reads these; the API server refuses them. */
		{ "[null]", 1, "ports[0].port 0 must be between 1 and 65535" },
		{ "[{\"name\":\"http\"}]", 1,
		    "ports[0].port 0 must be between 1 and 65535" },
		{ "[{\"port\":65536}]", 1,
		    "ports[0].port 65536 must be between 1 and 65535" },
		{ "[{\"port\":80},{\"name\":\"b\",\"port\":81}]", 1,
		    "ports[0].name is required when there are several ports" },
		{ "[{\"name\":\"Http\",\"port\":80}]", 1,
		    "ports[0].name \"Http\" must be a DNS label (lower-case "
		    "letters, digits and '-', at most 63)" },
		{ "[{\"port\":80,\"protocol\":\"tcp\"}]", 1,
		    "ports[0].protocol \"tcp\" must be TCP, UDP or SCTP" },
		{ "[{\"port\":80,\"appProtocol\":\"\"}]", 1,
		    "ports[0].appProtocol \"\" must be a qualified name "
		    "(\"http\", \"kubernetes.io/h2c\")" },
		{ "[{\"port\":80,\"appProtocol\":\"Bad_/x\"}]", 1,
		    "ports[0].appProtocol \"Bad_/x\" must be a qualified name "
		    "(\"http\", \"kubernetes.io/h2c\")" },
	};
	char	 err[256];
	size_t	 i;
	int	 rv;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		rv = epslice_ports_parse(cases[i].json, err, sizeof(err));
		if (rv != (cases[i].parse ? 0 : -1))
			fail_msg("%s: parse %d (%s)", cases[i].json, rv, err);
		if (!cases[i].parse && cases[i].err[0] != '\0')
			assert_string_equal(err, cases[i].err);
		rv = epslice_ports_check(cases[i].json, err, sizeof(err));
		if (cases[i].parse && cases[i].err == NULL) {
			if (rv != 0)
				fail_msg("%s: check: %s", cases[i].json, err);
		} else {
			if (rv != -1)
				fail_msg("%s: check passed", cases[i].json);
			if (cases[i].err[0] != '\0')
				assert_string_equal(err, cases[i].err);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slice_v4),
		cmocka_unit_test(test_slice_v6),
		cmocka_unit_test(test_endpoints),
		cmocka_unit_test(test_bad_ip),
		cmocka_unit_test(test_await_shape),
		cmocka_unit_test(test_ports_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
