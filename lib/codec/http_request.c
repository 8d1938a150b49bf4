/*
 * http_request.c -- questions about a request http_parse.c has parsed:
 * whether its Host header names this server (a guard against DNS
 * rebinding), and what its query string says for a key; and the other
 * way round, a value escaped for a query string.  Pure, like the
 * parser; declared in http_parse.h.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/netaddr.h"
#include "codec/http_parse.h"

/*
 * Whether the IP literal s is loopback (netaddr.h) or the same address
 * as local.
 */
static int
ip_ok(const char *s, const char *local)
{
	struct netaddr_ip	 a, b;

	if (netaddr_ip_parse(s, &a) == -1)
		return 0;
	return netaddr_ip_loopback(&a) || (local != NULL &&
	    netaddr_ip_parse(local, &b) == 0 && netaddr_ip_equal(&a, &b));
}

int
http_host_check(const struct http_request *req, const char *local_ip,
    int local_port, const char *listen_host)
{
	char		 name[256], port[16], why[64];
	const char	*h = req->host;
	int		 has_port;

	if (!req->has_host)
		return req->minor == 0 ? 0 : 400;
	if ((has_port = netaddr_split(h, NETADDR_PORT_OPTIONAL, name,
	    sizeof(name), port, sizeof(port), why, sizeof(why))) == -1)
		return 421;
	if (h[0] == '[') {
		if (strchr(name, ':') == NULL || !ip_ok(name, local_ip))
			return 421;
	} else {
		/* A configured name; a configured address is local_ip. */
		if (strcasecmp(name, "localhost") != 0 &&
		    !ip_ok(name, local_ip) && (listen_host == NULL ||
		    listen_host[0] == '\0' || strchr(listen_host, ':') != NULL ||
		    strspn(listen_host, "0123456789.") ==
		    strlen(listen_host) || strcasecmp(name, listen_host) != 0))
			return 421;
	}
	/* A port, if any (an empty one too), must be ours. */
	if (has_port && netaddr_port(port) != local_port)
		return 421;
	return 0;
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decode s[0..len) into out (outlen bytes); -1 if bad or long. */
static int
query_value(const char *s, size_t len, char *out, size_t outlen)
{
	size_t	 i, o = 0;
	int	 hi, lo;

	for (i = 0; i < len; i++) {
		if (o + 1 >= outlen)
			return -1;
		if (s[i] == '+')
			out[o++] = ' ';
		else if (s[i] != '%')
			out[o++] = s[i];
		else {
			if (i + 2 >= len)
				return -1;
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			if (hi == 0 && lo == 0)
				return -1;
			out[o++] = (char)(hi << 4 | lo);
			i += 2;
		}
	}
	out[o] = '\0';
	return 0;
}

int
http_query_get(const char *query, const char *key, char *out, size_t outlen)
{
	const char	*p = query, *amp, *eq, *first = NULL, *first_end = NULL;
	size_t		 klen = strlen(key);
	int		 n = 0;

	if (outlen > 0)
		out[0] = '\0';
	while (*p != '\0') {
		if ((amp = strchr(p, '&')) == NULL)
			amp = p + strlen(p);
		eq = memchr(p, '=', (size_t)(amp - p));
		if ((size_t)((eq != NULL ? eq : amp) - p) == klen &&
		    memcmp(p, key, klen) == 0 && n++ == 0) {
			first = eq;
			first_end = amp;
		}
		p = *amp == '&' ? amp + 1 : amp;
	}
	if (n > 0 && (first == NULL || query_value(first + 1,
	    (size_t)(first_end - first - 1), out, outlen) == -1)) {
		if (outlen > 0)
			out[0] = '\0';
		return -1;
	}
	return n;
}

int
http_query_escape(const char *s, char *out, size_t outlen)
{
	static const char	 hex[] = "0123456789ABCDEF";
	const unsigned char	*p;
	size_t			 n = 0;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p) != NULL) {
			if (n + 1 >= outlen)
				goto small;
			out[n++] = (char)*p;
			continue;
		}
		if (n + 3 >= outlen)
			goto small;
		out[n++] = '%';
		out[n++] = hex[*p >> 4];
		out[n++] = hex[*p & 0xf];
	}
	if (outlen == 0)
		return -1;
	out[n] = '\0';
	return (int)n;
small:
	if (outlen > 0)
		out[0] = '\0';
	return -1;
}
