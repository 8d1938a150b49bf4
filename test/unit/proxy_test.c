/*
 * proxy_test.c -- proxy_for and proxy_exempt against the cases of Go's
 * golang.org/x/net/http/httpproxy tests (proxy_test.go: proxyForURLTests
 * and the NO_PROXY matching table), so leaderd routes as client-go does.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/proxy.h"

static const char *const vars[] = { "HTTP_PROXY", "http_proxy",
    "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY",
    "all_proxy", "REQUEST_METHOD", NULL };

static void
clear_env(void)
{
	int	 i;

	for (i = 0; vars[i] != NULL; i++)
		unsetenv(vars[i]);
}

struct for_case {
	const char	*env;		/* "NAME=value;NAME=value" */
	const char	*server;
	const char	*want;		/* "" = direct, NULL = error */
};

static void
set_env(const char *spec)
{
	char	 buf[512], *s, *eq, *semi;

	clear_env();
	snprintf(buf, sizeof(buf), "%s", spec);
	for (s = buf; s != NULL && *s != '\0'; s = semi) {
		if ((semi = strchr(s, ';')) != NULL)
			*semi++ = '\0';
		assert_non_null(eq = strchr(s, '='));
		*eq = '\0';
		setenv(s, eq + 1, 1);
	}
}

static void
test_proxy_for(void **state)
{
	static const struct for_case cases[] = {
		/* Nothing set: direct. */
		{ "", "https://api.example.com:6443", "" },
		/* https servers use HTTPS_PROXY, never HTTP_PROXY. */
		{ "HTTP_PROXY=http://p:3128", "https://api:6443", "" },
		{ "HTTPS_PROXY=http://p:3128", "https://api:6443",
		    "http://p:3128" },
		{ "https_proxy=http://q:3128", "https://api:6443",
		    "http://q:3128" },
		/* Upper case first, as Go's getEnvAny. */
		{ "HTTPS_PROXY=http://u:1;https_proxy=http://l:1",
		    "https://api", "http://u:1" },
		{ "HTTPS_PROXY=;https_proxy=http://l:1", "https://api",
		    "http://l:1" },
		/* http servers use HTTP_PROXY (upper case too). */
		{ "HTTP_PROXY=http://p:3128", "http://api:8080",
		    "http://p:3128" },
		{ "http_proxy=http://p:3128;HTTPS_PROXY=http://s:1",
		    "http://api:8080", "http://p:3128" },
		/* ...but not in a CGI environment (httpoxy). */
		{ "HTTP_PROXY=http://p:3128;REQUEST_METHOD=GET",
		    "http://api:8080", "" },
		/* ALL_PROXY is not Go's: ignored. */
		{ "ALL_PROXY=socks5://s:1080;all_proxy=socks5://s:1080",
		    "https://api:6443", "" },
		/* No scheme means http; socks5 and https are kept. */
		{ "HTTPS_PROXY=p:3128", "https://api", "http://p:3128" },
		{ "HTTPS_PROXY=socks5://s:1080", "https://api",
		    "socks5://s:1080" },
		{ "HTTPS_PROXY=https://p:443", "https://api",
		    "https://p:443" },
		{ "HTTPS_PROXY=ftp://p:21", "https://api", NULL },
		/* Loopback and localhost are never proxied. */
		{ "HTTPS_PROXY=http://p:1", "https://127.0.0.1:6443", "" },
		{ "HTTPS_PROXY=http://p:1", "https://127.1.2.3:6443", "" },
		{ "HTTPS_PROXY=http://p:1", "https://[::1]:6443", "" },
		{ "HTTPS_PROXY=http://p:1", "https://localhost:6443", "" },
		/* NO_PROXY, upper case first. */
		{ "HTTPS_PROXY=http://p:1;NO_PROXY=api", "https://api", "" },
		{ "HTTPS_PROXY=http://p:1;no_proxy=api", "https://api", "" },
		{ "HTTPS_PROXY=http://p:1;NO_PROXY=other;no_proxy=api",
		    "https://api", "http://p:1" },
		/* The default port takes part in port matches. */
		{ "HTTPS_PROXY=http://p:1;NO_PROXY=api:443", "https://api",
		    "" },
		{ "HTTPS_PROXY=http://p:1;NO_PROXY=api:6443", "https://api",
		    "http://p:1" },
		{ "HTTPS_PROXY=http://p:1;NO_PROXY=[fd00::1]:443",
		    "https://[fd00::1]", "" },
		/* An empty port is no port ("canonicalAddr"). */
		{ "HTTPS_PROXY=http://p:1;NO_PROXY=api:443", "https://api:",
		    "" },
		/* IPv4-mapped loopback is loopback. */
		{ "HTTPS_PROXY=http://p:1", "https://[::ffff:127.0.0.1]:6443",
		    "" },
		{ "", "ftp://api", NULL },
		{ "", "https://", NULL },
	};
	char	 out[256], err[256];
	size_t	 i;
	int	 rc;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		set_env(cases[i].env);
		rc = proxy_for(cases[i].server, out, sizeof(out), err,
		    sizeof(err));
		if (cases[i].want == NULL) {
			if (rc != -1)
				fail_msg("case %zu (%s %s): want an error, got "
				    "\"%s\"", i, cases[i].env, cases[i].server,
				    out);
			continue;
		}
		if (rc != 0)
			fail_msg("case %zu (%s %s): %s", i, cases[i].env,
			    cases[i].server, err);
		if (strcmp(out, cases[i].want) != 0)
			fail_msg("case %zu (%s %s): got \"%s\", want \"%s\"", i,
			    cases[i].env, cases[i].server, out,
			    cases[i].want);
	}
	clear_env();
}

struct exempt_case {
	const char	*no_proxy;
	const char	*host;
	const char	*port;
	int		 want;
};

static void
test_exempt(void **state)
{
	/* From httpproxy's TestUseProxy and proxyForURLTests. */
	static const struct exempt_case cases[] = {
		{ "foobar.com, .barbaz.net", "barbaz.net", "443", 0 },
		{ "foobar.com, .barbaz.net", "foobar.com", "443", 1 },
		{ "foobar.com, .barbaz.net", "www.foobar.com", "443", 1 },
		{ "foobar.com, .barbaz.net", "www.barbaz.net", "443", 1 },
		{ "foobar.com, .barbaz.net", "foofoobar.com", "443", 0 },
		{ "foobar.com, .barbaz.net", "foobar.com.au", "443", 0 },
		{ "*.barbaz.net", "www.barbaz.net", "443", 1 },
		{ "*.barbaz.net", "barbaz.net", "443", 0 },
		{ "FooBar.Com", "www.FOOBAR.com", "443", 1 },
		{ "*", "anything.example", "443", 1 },
		{ "", "example.com", "443", 0 },
		{ " , ,", "example.com", "443", 0 },
		{ "example.com:80", "example.com", "80", 1 },
		{ "example.com:80", "example.com", "443", 0 },
		{ "10.0.0.1", "10.0.0.1", "443", 1 },
		{ "10.0.0.1", "10.0.0.2", "443", 0 },
		{ "10.0.0.1:443", "10.0.0.1", "443", 1 },
		{ "10.0.0.1:80", "10.0.0.1", "443", 0 },
		{ "10.0.0.0/8", "10.96.0.1", "443", 1 },
		{ "10.0.0.0/8", "11.96.0.1", "443", 0 },
		{ "192.168.0.0/23", "192.168.1.200", "443", 1 },
		{ "192.168.0.0/23", "192.168.2.1", "443", 0 },
		{ "fd00::/8", "fd00::1", "443", 1 },
		{ "fd00::/8", "fe80::1", "443", 0 },
		{ "[fd00::1]:443", "fd00::1", "443", 1 },
		{ "fd00::1", "fd00::1", "6443", 1 },
		/* A CIDR matches IPs only, never names. */
		{ "10.0.0.0/8", "ten.example", "443", 0 },
		/* Malformed entries are skipped, not fatal. */
		{ "10.0.0.0/99, :80, example.com", "example.com", "443", 1 },
		/* Loopback and localhost, whatever NO_PROXY says. */
		{ NULL, "localhost", "443", 1 },
		{ NULL, "127.0.0.1", "443", 1 },
		{ NULL, "::1", "443", 1 },
		{ NULL, "::ffff:127.0.0.1", "443", 1 },
		{ NULL, "10.0.0.1", "443", 0 },
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (proxy_exempt(cases[i].no_proxy, cases[i].host,
		    cases[i].port) != cases[i].want)
			fail_msg("case %zu: NO_PROXY=\"%s\" host %s port %s: "
			    "want %d", i, cases[i].no_proxy ? cases[i].no_proxy :
			    "(unset)", cases[i].host, cases[i].port,
			    cases[i].want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proxy_for),
		cmocka_unit_test(test_exempt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
