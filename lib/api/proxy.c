/*
 * proxy.c -- the API server's proxy from the environment, with Go's
 * rules (see proxy.h; golang.org/x/net/http/httpproxy config.init and
 * useProxy).
 */

#include <arpa/inet.h>
#include <netinet/in.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/proxy.h"

#define HOST_MAX	256	/* a host name or address, with NUL */

/* One parsed IP address. */
struct ip {
	int		 family;	/* AF_INET or AF_INET6 */
	unsigned char	 a[16];		/* IPv4 in the first 4 bytes */
};

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

/* Parse an IPv4 or IPv6 literal; IPv4-mapped IPv6 becomes IPv4. */
static int
ip_parse(const char *s, struct ip *ip)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0, 0xff, 0xff };

	memset(ip, 0, sizeof(*ip));
	if (inet_pton(AF_INET, s, ip->a) == 1) {
		ip->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, ip->a) == 1) {
		ip->family = AF_INET6;
		if (memcmp(ip->a, mapped, 12) == 0) {
			memmove(ip->a, ip->a + 12, 4);
			memset(ip->a + 4, 0, 12);
			ip->family = AF_INET;
		}
		return 0;
	}
	return -1;
}

static int
ip_loopback(const struct ip *ip)
{
	static const unsigned char one[16] = { [15] = 1 };

	if (ip->family == AF_INET)
		return ip->a[0] == 127;
	return memcmp(ip->a, one, 16) == 0;
}

/* Whether ip lies in the prefix net/bits of the same family. */
static int
ip_in(const struct ip *ip, const struct ip *net, int bits)
{
	int	 i, full = bits / 8, rest = bits % 8;

	if (ip->family != net->family)
		return 0;
	for (i = 0; i < full; i++)
		if (ip->a[i] != net->a[i])
			return 0;
	if (rest != 0 && ((ip->a[full] ^ net->a[full]) &
	    (0xff << (8 - rest)) & 0xff) != 0)
		return 0;
	return 1;
}

/*
 * Go's net.SplitHostPort, loosely: "[v6]:port", "host:port" with one
 * colon, or (returning -1) anything else.
 */
static int
split_host_port(const char *s, char *host, size_t hostlen, char *port,
    size_t portlen)
{
	const char	*c, *e;

	if (s[0] == '[') {
		if ((e = strchr(s, ']')) == NULL || e[1] != ':')
			return -1;
		snprintf(host, hostlen, "%.*s", (int)(e - s - 1), s + 1);
		snprintf(port, portlen, "%s", e + 2);
		return 0;
	}
	if ((c = strchr(s, ':')) == NULL || strchr(c + 1, ':') != NULL)
		return -1;
	snprintf(host, hostlen, "%.*s", (int)(c - s), s);
	snprintf(port, portlen, "%s", c + 1);
	return 0;
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
entry_matches(const char *p, const char *host, const struct ip *hip,
    const char *port)
{
	struct ip	 net;
	char		 buf[HOST_MAX], phost[HOST_MAX], pport[16];
	char		 dom[HOST_MAX + 1];
	const char	*slash, *h;
	char		*end;
	long		 bits;

	/* IPv4/CIDR, IPv6/CIDR. */
	if ((slash = strchr(p, '/')) != NULL) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(slash - p), p);
		bits = strtol(slash + 1, &end, 10);
		if (ip_parse(buf, &net) == -1 || *end != '\0' ||
		    !isdigit((unsigned char)slash[1]) || bits < 0 ||
		    bits > (net.family == AF_INET ? 32 : 128))
			return 0;	/* Go ignores it; so do we */
		return hip != NULL && ip_in(hip, &net, (int)bits);
	}
	/* IPv4:port, [IPv6]:port, name:port. */
	pport[0] = '\0';
	if (split_host_port(p, phost, sizeof(phost), pport,
	    sizeof(pport)) == -1)
		snprintf(phost, sizeof(phost), "%s", p);
	else if (phost[0] == '\0')
		return 0;
	if (ip_parse(phost, &net) == 0)
		return hip != NULL && memcmp(hip, &net, sizeof(net)) == 0 &&
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
	struct ip	 ip, *hip = NULL;
	char		 lhost[HOST_MAX], p[HOST_MAX];
	const char	*s, *e, *b;
	size_t		 i, n;

	if (strcmp(host, "localhost") == 0)
		return 1;
	if (ip_parse(host, &ip) == 0) {
		if (ip_loopback(&ip))
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
	if (split_host_port(hostport, host, sizeof(host), port,
	    sizeof(port)) == -1) {
		/* No port: the scheme's ("canonicalAddr"). */
		if (hostport[0] == '[')
			snprintf(host, sizeof(host), "%.*s",
			    (int)strcspn(hostport + 1, "]"), hostport + 1);
		else
			snprintf(host, sizeof(host), "%s", hostport);
		snprintf(port, sizeof(port), "%s", https ? "443" : "80");
	}
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
