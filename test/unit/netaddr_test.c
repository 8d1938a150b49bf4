/*
 * netaddr_test.c -- netaddr.c on its own: the host:port split in both
 * modes, port numbers, IP literals, and the one loopback rule
 * (127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104; nothing else).
 */

#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/netaddr.h"

static void
test_loopback(void **state)
{
	static const struct {
		const char	*s;
		int		 loopback;
	} cases[] = {
		{ "127.0.0.1", 1 },
		{ "127.255.255.254", 1 },
		{ "127.0.0.0", 1 },
		{ "::1", 1 },
		{ "0:0:0:0:0:0:0:1", 1 },
		{ "::ffff:127.0.0.1", 1 },
		{ "::FFFF:127.1.2.3", 1 },
		{ "::ffff:7f00:1", 1 },
		{ "::ffff:10.0.0.1", 0 },
		{ "::ffff:128.0.0.1", 0 },
		{ "::127.0.0.1", 0 },		/* IPv4-compatible, not mapped */
		{ "128.0.0.1", 0 },
		{ "126.255.255.255", 0 },
		{ "10.0.0.1", 0 },
		{ "0.0.0.0", 0 },
		{ "::", 0 },
		{ "::2", 0 },
		{ "fe80::1", 0 },
		{ "[::1]", 0 },			/* a host field, not a literal */
		{ "127.0.0.1:80", 0 },
		{ "127.1", 0 },			/* inet_pton's strict form */
		{ "localhost", 0 },
		{ "", 0 },
		{ "garbage", 0 },
		{ "::1%lo", 0 },
		{ "1::1::1", 0 },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (netaddr_is_loopback(cases[i].s) != cases[i].loopback)
			fail_msg("\"%s\": want %d", cases[i].s,
			    cases[i].loopback);
}

/* The same rule on socket addresses, as accept(2) hands them over. */
static void
test_sockaddr(void **state)
{
	struct sockaddr_in	 s4;
	struct sockaddr_in6	 s6;
	struct sockaddr_un	 sun;
	struct netaddr_ip	 ip;
	char			 text[64];
	int			 port;

	(void)state;
	memset(&s4, 0, sizeof(s4));
	s4.sin_family = AF_INET;
	s4.sin_port = htons(4040);
	inet_pton(AF_INET, "127.3.2.1", &s4.sin_addr);
	assert_int_equal(netaddr_from_sockaddr((struct sockaddr *)&s4, &ip,
	    &port), 0);
	assert_int_equal(port, 4040);
	assert_int_equal(ip.family, AF_INET);
	assert_true(netaddr_ip_loopback(&ip));
	assert_int_equal(netaddr_sockaddr_text((struct sockaddr *)&s4, text,
	    sizeof(text), NULL), 0);
	assert_string_equal(text, "127.3.2.1");

	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	s6.sin6_port = htons(443);
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &s6.sin6_addr);
	assert_int_equal(netaddr_from_sockaddr((struct sockaddr *)&s6, &ip,
	    NULL), 0);
	assert_int_equal(ip.family, AF_INET6);
	assert_true(netaddr_ip_is_v4(&ip));
	assert_true(netaddr_ip_loopback(&ip));
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &s6.sin6_addr);
	netaddr_from_sockaddr((struct sockaddr *)&s6, &ip, NULL);
	assert_false(netaddr_ip_loopback(&ip));
	inet_pton(AF_INET6, "::1", &s6.sin6_addr);
	netaddr_from_sockaddr((struct sockaddr *)&s6, &ip, NULL);
	assert_true(netaddr_ip_loopback(&ip));
	assert_int_equal(netaddr_sockaddr_text((struct sockaddr *)&s6, text,
	    sizeof(text), &port), 0);
	assert_string_equal(text, "::1");
	assert_int_equal(port, 443);

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	assert_int_equal(netaddr_from_sockaddr((struct sockaddr *)&sun, &ip,
	    NULL), -1);
	assert_int_equal(netaddr_sockaddr_text((struct sockaddr *)&sun, text,
	    sizeof(text), NULL), -1);
	assert_string_equal(text, "");
}

static void
test_ip(void **state)
{
	struct netaddr_ip	 a, b;

	(void)state;
	assert_int_equal(netaddr_ip_parse("1.2.3.4", &a), 0);
	assert_int_equal(a.family, AF_INET);
	assert_int_equal(netaddr_ip_parse("::ffff:1.2.3.4", &b), 0);
	assert_int_equal(b.family, AF_INET6);
	assert_true(netaddr_ip_is_v4(&a));
	assert_true(netaddr_ip_is_v4(&b));
	assert_true(netaddr_ip_equal(&a, &b));
	assert_int_equal(netaddr_ip_parse("::1:2:3:4", &b), 0);
	assert_false(netaddr_ip_is_v4(&b));
	assert_false(netaddr_ip_equal(&a, &b));
	assert_int_equal(netaddr_ip_parse("1.2.3.4.5", &a), -1);
	assert_int_equal(a.family, 0);
	assert_int_equal(netaddr_ip_parse("[::1]", &a), -1);
}

static void
test_port(void **state)
{
	static const struct {
		const char	*s;
		int		 port;
	} cases[] = {
		{ "0", 0 }, { "80", 80 }, { "4040", 4040 }, { "65535", 65535 },
		{ "00080", 80 }, { "65536", -1 }, { "99999", -1 },
		{ "000080", -1 }, { "", -1 }, { "+80", -1 }, { "-1", -1 },
		{ "80a", -1 }, { " 80", -1 }, { "http", -1 },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (netaddr_port(cases[i].s) != cases[i].port)
			fail_msg("\"%s\": %d", cases[i].s,
			    netaddr_port(cases[i].s));
}

static void
test_split(void **state)
{
	static const struct {
		const char	*s;
		int		 flags;
		int		 rv;
		const char	*host;
		const char	*port;
	} cases[] = {
		{ "127.0.0.1:4040", 0, 1, "127.0.0.1", "4040" },
		{ "localhost:80", 0, 1, "localhost", "80" },
		{ ":4040", 0, 1, "", "4040" },
		{ "[::1]:4040", 0, 1, "::1", "4040" },
		{ "[]:1", 0, 1, "", "1" },
		{ "host:", 0, 1, "host", "" },
		{ "host:http", 0, 1, "host", "http" },
		{ "host", 0, -1, NULL, NULL },
		{ "[::1]", 0, -1, NULL, NULL },
		{ "::1:4040", 0, -1, NULL, NULL },
		{ "[::1", 0, -1, NULL, NULL },
		{ "[::1]x:80", 0, -1, NULL, NULL },
		{ "host", NETADDR_PORT_OPTIONAL, 0, "host", "" },
		{ "[::1]", NETADDR_PORT_OPTIONAL, 0, "::1", "" },
		{ "[::1]:8443", NETADDR_PORT_OPTIONAL, 1, "::1", "8443" },
		{ "h:1", NETADDR_PORT_OPTIONAL, 1, "h", "1" },
		{ "", NETADDR_PORT_OPTIONAL, 0, "", "" },
		{ "::1", NETADDR_PORT_OPTIONAL, -1, NULL, NULL },
		{ "[::1]x", NETADDR_PORT_OPTIONAL, -1, NULL, NULL },
		{ "a:b:c", NETADDR_PORT_OPTIONAL, -1, NULL, NULL },
		{ "h:12345678", 0, -1, NULL, NULL },	/* port too long */
		{ "0123456789abcdef:1", 0, -1, NULL, NULL }, /* host too long */
	};
	char	 host[16], port[8], err[128];
	size_t	 i;
	int	 rv;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		rv = netaddr_split(cases[i].s, cases[i].flags, host,
		    sizeof(host), port, sizeof(port), err, sizeof(err));
		if (rv != cases[i].rv)
			fail_msg("\"%s\": %d (%s)", cases[i].s, rv, err);
		if (rv == -1) {
			if (err[0] == '\0')
				fail_msg("\"%s\": no reason", cases[i].s);
			continue;
		}
		if (strcmp(host, cases[i].host) != 0 ||
		    strcmp(port, cases[i].port) != 0)
			fail_msg("\"%s\": \"%s\" \"%s\"", cases[i].s, host,
			    port);
	}
}

/* URLs as an application probe gives them. */
static void
test_url_split(void **state)
{
	static const struct {
		const char	*url;
		int		 ok;
		const char	*scheme, *host;
		int		 port;
		const char	*path;	/* or the error's words */
	} cases[] = {
		{ "http://127.0.0.1:8080/healthz", 1, "http", "127.0.0.1",
		    8080, "/healthz" },
		{ "http://[::1]:80/ready?full=1", 1, "http", "::1", 80,
		    "/ready?full=1" },
		{ "tcp://localhost:5432", 1, "tcp", "localhost", 5432, "/" },
		{ "http://app:9/", 1, "http", "app", 9, "/" },
		{ "127.0.0.1:8080", 0, "", "", 0, "must be a URL" },
		{ "://x:1", 0, "", "", 0, "must be a URL" },
		{ "HTTP://x:1/", 0, "", "", 0, "is not one" },
		{ "http://x/", 0, "", "", 0, "host:port" },
		{ "http://x:0/", 0, "", "", 0, "not a port number" },
		{ "http://x:99999/", 0, "", "", 0, "not a port number" },
		{ "http://:80/", 0, "", "", 0, "names no host" },
		{ "http://u:p@x:80/", 0, "", "", 0, "user information" },
		{ "http://::1:80/", 0, "", "", 0, "needs brackets" },
		{ "http://x:80?a=1", 0, "", "", 0, "needs a path" },
	};
	char		 scheme[16], host[64], err[128];
	const char	*path;
	int		 port, rc;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		rc = netaddr_url_split(cases[i].url, scheme, sizeof(scheme),
		    host, sizeof(host), &port, &path, err, sizeof(err));
		print_message("%s -> %d %s\n", cases[i].url, rc, err);
		if (!cases[i].ok) {
			assert_int_equal(rc, -1);
			assert_non_null(strstr(err, cases[i].path));
			continue;
		}
		assert_int_equal(rc, 0);
		assert_string_equal(scheme, cases[i].scheme);
		assert_string_equal(host, cases[i].host);
		assert_int_equal(port, cases[i].port);
		assert_string_equal(path, cases[i].path);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_sockaddr),
		cmocka_unit_test(test_ip),
		cmocka_unit_test(test_port),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_url_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
