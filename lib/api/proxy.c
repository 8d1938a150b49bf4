/*
 * proxy.c -- the API server's proxy from the environment, with Go's
 * rules (see proxy.h; golang.org/x/net/http/httpproxy config.init and
 * useProxy).
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/proxy.h"
#include "base/netaddr.h"

#define HOST_MAX	256	/* a host name or address, with NUL */

/* The first non-empty variable of the two, as Go's getEnvAny. */
static const char *
env_any(const char *a, const char *b)
{
	const char	*v;

	if ((v = getenv(a)) != NULL && *v != '\0')
		return v;
	if ((v = getenv(b)) != NULL && *v != '\0')
		return v;
	return NULL;
}

/*
 * Whether ip lies in the prefix net/bits, both IPv4 (IPv4-mapped counts
 * as IPv4) or both IPv6, as Go's IPNet.Contains.
 */
static int
ip_in(const struct netaddr_ip *ip, const struct netaddr_ip *net, int bits)
{
	int	 i, full, rest, v4 = netaddr_ip_is_v4(net);

	if (netaddr_ip_is_v4(ip) != v4)
		return 0;
	if (v4)
		bits += 96;
	full = bits / 8;
	rest = bits % 8;
	for (i = 0; i < full; i++)
		if (ip->a[i] != net->a[i])
			return 0;
	if (rest != 0 && ((ip->a[full] ^ net->a[full]) &
	    (0xff << (8 - rest)) & 0xff) != 0)
		return 0;
	return 1;
}

/* Whether s ends with suffix. */
static int
ends_with(const char *s, const char *suffix)
{
	size_t	 n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* One NO_PROXY entry p (trimmed, lower case) against host and port. */
static int
entry_matches(const char *p, const char *host, const struct netaddr_ip *hip,
    const char *port)
{
	struct netaddr_ip net;
	char		 buf[HOST_MAX], phost[HOST_MAX], pport[16], why[64];
	char		 dom[HOST_MAX + 1];
	const char	*slash, *h;
	char		*end;
	long		 bits;

	/* IPv4/CIDR, IPv6/CIDR. */
	if ((slash = strchr(p, '/')) != NULL) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(slash - p), p);
		bits = strtol(slash + 1, &end, 10);
		if (netaddr_ip_parse(buf, &net) == -1 || *end != '\0' ||
		    !isdigit((unsigned char)slash[1]) || bits < 0 ||
		    bits > (netaddr_ip_is_v4(&net) ? 32 : 128))
			return 0;	/* Go ignores it; so do we */
		return hip != NULL && ip_in(hip, &net, (int)bits);
	}
	/* IPv4:port, [IPv6]:port, name:port. */
	pport[0] = '\0';
	if (netaddr_split(p, 0, phost, sizeof(phost), pport, sizeof(pport),
	    why, sizeof(why)) == -1)
		snprintf(phost, sizeof(phost), "%s", p);
	else if (phost[0] == '\0')
		return 0;
	if (netaddr_ip_parse(phost, &net) == 0)
		return hip != NULL && netaddr_ip_equal(hip, &net) &&
		    (pport[0] == '\0' || strcmp(pport, port) == 0);
	if (phost[0] == '\0')
		return 0;
	/* Domains: "*.d" and ".d" match subdomains; "d" also matches d. */
	h = phost;
	if (h[0] == '*' && h[1] == '.')
		h++;
	if (h[0] == '.')
		snprintf(dom, sizeof(dom), "%s", h);
	else
		snprintf(dom, sizeof(dom), ".%s", h);
	if (!ends_with(host, dom) && !(h[0] != '.' && strcmp(host, h) == 0))
		return 0;
	return pport[0] == '\0' || strcmp(pport, port) == 0;
}

int
proxy_exempt(const char *no_proxy, const char *host, const char *port)
{
	struct netaddr_ip ip, *hip = NULL;
	char		 lhost[HOST_MAX], p[HOST_MAX];
	const char	*s, *e, *b;
	size_t		 i, n;

	if (strcmp(host, "localhost") == 0)
		return 1;
	if (netaddr_ip_parse(host, &ip) == 0) {
		if (netaddr_ip_loopback(&ip))
			return 1;
		hip = &ip;
	}
	for (i = 0; host[i] != '\0' && i + 1 < sizeof(lhost); i++)
		lhost[i] = (char)tolower((unsigned char)host[i]);
	lhost[i] = '\0';
	if (no_proxy == NULL)
		return 0;
	for (s = no_proxy; *s != '\0'; s = *e != '\0' ? e + 1 : e) {
		if ((e = strchr(s, ',')) == NULL)
			e = s + strlen(s);
		for (b = s; b < e && isspace((unsigned char)*b); b++)
			;
		n = (size_t)(e - b);
		while (n > 0 && isspace((unsigned char)b[n - 1]))
			n--;
		if (n == 0 || n >= sizeof(p))
			continue;
		for (i = 0; i < n; i++)
			p[i] = (char)tolower((unsigned char)b[i]);
		p[n] = '\0';
		if (strcmp(p, "*") == 0)
			return 1;
		if (entry_matches(p, lhost, hip, port))
			return 1;
	}
	return 0;
}

int
proxy_for(const char *server, char *out, size_t outlen, char *err,
    size_t errlen)
{
	static const char *const schemes[] = { "http://", "https://",
	    "socks5://", "socks5h://", NULL };
	char		 hostport[HOST_MAX + 16], host[HOST_MAX + 16], port[16];
	char		 why[64];
	const char	*rest, *e, *px;
	int		 https, i;

	out[0] = '\0';
	if (strncmp(server, "https://", 8) == 0) {
		https = 1;
		rest = server + 8;
	} else if (strncmp(server, "http://", 7) == 0) {
		https = 0;
		rest = server + 7;
	} else {
		snprintf(err, errlen, "server %s is not an http(s) URL",
		    server);
		return -1;
	}
	e = rest + strcspn(rest, "/?#");
	if (e == rest || (size_t)(e - rest) >= sizeof(hostport)) {
		snprintf(err, errlen, "server %s has no host", server);
		return -1;
	}
	snprintf(hostport, sizeof(hostport), "%.*s", (int)(e - rest), rest);
	if (netaddr_split(hostport, NETADDR_PORT_OPTIONAL, host,
	    sizeof(host), port, sizeof(port), why, sizeof(why)) == -1) {
		snprintf(host, sizeof(host), "%s", hostport);
		port[0] = '\0';
	}
	/* No port, or an empty one: the scheme's ("canonicalAddr"). */
	if (port[0] == '\0')
		snprintf(port, sizeof(port), "%s", https ? "443" : "80");
	px = https ? env_any("HTTPS_PROXY", "https_proxy") :
	    env_any("HTTP_PROXY", "http_proxy");
	/* Go ignores HTTP_PROXY in a CGI environment (httpoxy). */
	if (!https && getenv("REQUEST_METHOD") != NULL)
		px = NULL;
	if (px == NULL || proxy_exempt(env_any("NO_PROXY", "no_proxy"), host,
	    port))
		return 0;
	if (strstr(px, "://") == NULL) {
		snprintf(out, outlen, "http://%s", px);
		return 0;
	}
	for (i = 0; schemes[i] != NULL; i++)
		if (strncasecmp(px, schemes[i], strlen(schemes[i])) == 0) {
			snprintf(out, outlen, "%s", px);
			return 0;
		}
	snprintf(err, errlen, "%s: proxy scheme not supported (use http, "
	    "https, socks5 or socks5h)", https ? "HTTPS_PROXY" : "HTTP_PROXY");
	return -1;
}
