/*
 * netaddr.c -- host:port text, IP literals, loopback (see netaddr.h).
 * The split follows Go's net.SplitHostPort, which the API server's URL
 * and NO_PROXY rules are written against: brackets around an IPv6
 * host, no colon in any other host.
 */

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>

#include "base/netaddr.h"

static const unsigned char v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0xff, 0xff };

/* Copy s[0..n) into out (outlen bytes); -1 if it does not fit. */
static int
copy_part(const char *s, size_t n, char *out, size_t outlen)
{
	if (n >= outlen)
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

int
netaddr_split(const char *s, int flags, char *host, size_t hostlen,
    char *port, size_t portlen, char *err, size_t errlen)
{
	const char	*h = s, *end, *colon;
	int		 opt = (flags & NETADDR_PORT_OPTIONAL) != 0;

	if (s[0] == '[') {
		h = s + 1;
		if ((end = strchr(s, ']')) == NULL ||
		    (end[1] != ':' && !(opt && end[1] == '\0'))) {
			snprintf(err, errlen, "an IPv6 address is written "
			    "%s", opt ? "[addr] or [addr]:port" :
			    "[addr]:port");
			return -1;
		}
		colon = end[1] == ':' ? end + 1 : NULL;
	} else {
		colon = strchr(s, ':');
		if (colon != NULL && strchr(colon + 1, ':') != NULL) {
			snprintf(err, errlen, "an IPv6 address needs "
			    "brackets, such as [::1]:4040");
			return -1;
		}
		if (colon == NULL && !opt) {
			snprintf(err, errlen, "it must be host:port, such "
			    "as 127.0.0.1:4040");
			return -1;
		}
		end = colon != NULL ? colon : s + strlen(s);
	}
	if (copy_part(h, (size_t)(end - h), host, hostlen) == -1) {
		snprintf(err, errlen, "the host is too long");
		return -1;
	}
	if (copy_part(colon != NULL ? colon + 1 : "", colon != NULL ?
	    strlen(colon + 1) : 0, port, portlen) == -1) {
		snprintf(err, errlen, "the port is too long");
		return -1;
	}
	return colon != NULL;
}

int
netaddr_url_split(const char *url, char *scheme, size_t schemelen,
    char *host, size_t hostlen, int *port, const char **path, char *err,
    size_t errlen)
{
	const char	*sep, *auth, *end;
	char		 hp[320], portstr[16];
	size_t		 n;

	if ((sep = strstr(url, "://")) == NULL || sep == url) {
		snprintf(err, errlen, "it must be a URL, such as "
		    "http://127.0.0.1:8080/healthz");
		return -1;
	}
	n = (size_t)(sep - url);
	if (strspn(url, "abcdefghijklmnopqrstuvwxyz0123456789+-.") < n ||
	    copy_part(url, n, scheme, schemelen) == -1) {
		snprintf(err, errlen, "the scheme \"%.*s\" is not one",
		    (int)(n > 16 ? 16 : n), url);
		return -1;
	}
	auth = sep + 3;
	end = auth + strcspn(auth, "/?#");
	if (memchr(auth, '@', (size_t)(end - auth)) != NULL) {
		snprintf(err, errlen, "user information in the URL is not "
		    "supported");
		return -1;
	}
	if (copy_part(auth, (size_t)(end - auth), hp, sizeof(hp)) == -1) {
		snprintf(err, errlen, "the host is too long");
		return -1;
	}
	if (netaddr_split(hp, 0, host, hostlen, portstr, sizeof(portstr),
	    err, errlen) == -1)
		return -1;
	if (host[0] == '\0') {
		snprintf(err, errlen, "the URL names no host");
		return -1;
	}
	if ((*port = netaddr_port(portstr)) <= 0) {
		snprintf(err, errlen, "the port \"%s\" is not a port number",
		    portstr);
		return -1;
	}
	*path = *end == '/' ? end : "/";
	if (*end != '\0' && *end != '/') {
		snprintf(err, errlen, "a query or fragment after the host "
		    "needs a path: host:port/path?query");
		return -1;
	}
	return 0;
}

int
netaddr_port(const char *s)
{
	size_t	 n = strspn(s, "0123456789");
	int	 port = 0;

	if (n == 0 || n > 5 || s[n] != '\0')
		return -1;
	for (; *s != '\0'; s++)
		port = port * 10 + (*s - '0');
	return port <= 65535 ? port : -1;
}

int
netaddr_ip_parse(const char *s, struct netaddr_ip *ip)
{
	memset(ip, 0, sizeof(*ip));
	if (inet_pton(AF_INET, s, ip->a + 12) == 1) {
		memcpy(ip->a, v4mapped, sizeof(v4mapped));
		ip->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, ip->a) == 1) {
		ip->family = AF_INET6;
		return 0;
	}
	memset(ip, 0, sizeof(*ip));
	return -1;
}

int
netaddr_ip_is_v4(const struct netaddr_ip *ip)
{
	return memcmp(ip->a, v4mapped, sizeof(v4mapped)) == 0;
}

int
netaddr_ip_equal(const struct netaddr_ip *a, const struct netaddr_ip *b)
{
	return memcmp(a->a, b->a, sizeof(a->a)) == 0;
}

int
netaddr_ip_loopback(const struct netaddr_ip *ip)
{
	static const unsigned char one[16] = { [15] = 1 };

	if (netaddr_ip_is_v4(ip))
		return ip->a[12] == 127;
	return memcmp(ip->a, one, sizeof(one)) == 0;
}

int
netaddr_is_loopback(const char *s)
{
	struct netaddr_ip	 ip;

	return netaddr_ip_parse(s, &ip) == 0 && netaddr_ip_loopback(&ip);
}

int
netaddr_from_sockaddr(const struct sockaddr *sa, struct netaddr_ip *ip,
    int *port)
{
	const struct sockaddr_in	*s4 = (const struct sockaddr_in *)sa;
	const struct sockaddr_in6	*s6 = (const struct sockaddr_in6 *)sa;

	memset(ip, 0, sizeof(*ip));
	if (sa->sa_family == AF_INET) {
		memcpy(ip->a, v4mapped, sizeof(v4mapped));
		memcpy(ip->a + 12, &s4->sin_addr, 4);
		ip->family = AF_INET;
		if (port != NULL)
			*port = ntohs(s4->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		memcpy(ip->a, &s6->sin6_addr, 16);
		ip->family = AF_INET6;
		if (port != NULL)
			*port = ntohs(s6->sin6_port);
		return 0;
	}
	return -1;
}

int
netaddr_sockaddr_text(const struct sockaddr *sa, char *text, size_t textlen,
    int *port)
{
	struct netaddr_ip	 ip;

	if (textlen > 0)
		text[0] = '\0';
	if (netaddr_from_sockaddr(sa, &ip, port) == -1)
		return -1;
	if (ip.family == AF_INET)
		inet_ntop(AF_INET, ip.a + 12, text, (socklen_t)textlen);
	else
		inet_ntop(AF_INET6, ip.a, text, (socklen_t)textlen);
	return 0;
}
