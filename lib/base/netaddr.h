/*
 * netaddr.h -- network address text: "host:port" and "[v6]:port",
 * IP literals, the loopback test and socket addresses as text.  Pure and
 * libc only: no I/O, no allocation, never logs; errors go into the
 * caller's buffer.
 *
 * One rule for loopback, everywhere: 127.0.0.0/8, ::1, and IPv4-mapped
 * loopback (::ffff:127.0.0.0/104), which is how a dual-stack listener
 * sees an IPv4 loopback client.  Nothing else is loopback.
 */

#ifndef NETADDR_H
#define NETADDR_H

#include <stddef.h>

struct sockaddr;

#define NETADDR_PORT_OPTIONAL	0x1	/* netaddr_split: "host", "[v6]" */

/* An IP address, parsed from text or taken from a socket address. */
struct netaddr_ip {
	int		 family;	/* as written: AF_INET or AF_INET6 */
	unsigned char	 a[16];		/* IPv6 form; IPv4 as ::ffff:a.b.c.d */
};

/*
 * Split s, "host:port" or "[v6]:port", into host (without brackets; may
 * be "") and port (the text after the colon, unchecked: see
 * netaddr_port).  A host outside brackets holds no colon.  With
 * NETADDR_PORT_OPTIONAL in flags, "host" and "[v6]" alone are accepted
 * too, and port is then "".  host and port are hostlen and portlen
 * bytes with the NUL.  Returns 1 when s names a port (even an empty
 * one, "host:"), 0 when it does not (only with NETADDR_PORT_OPTIONAL),
 * or -1 with what is wrong in err.
 */
int	netaddr_split(const char *s, int flags, char *host, size_t hostlen,
	    char *port, size_t portlen, char *err, size_t errlen);

/*
 * Split url, "SCHEME://HOST:PORT[/PATH]" with HOST a name, an IPv4
 * literal or "[v6]", into scheme (lowercase letters, digits, "+-."),
 * host (without brackets), the port number and the path ("/" when
 * absent; a pointer into url).  No user info, no query or fragment
 * check.  Returns 0, or -1 with what is wrong in err.
 */
int	netaddr_url_split(const char *url, char *scheme, size_t schemelen,
	    char *host, size_t hostlen, int *port, const char **path,
	    char *err, size_t errlen);

/* The port number in s, one to five digits up to 65535; -1 otherwise. */
int	netaddr_port(const char *s);

/*
 * Parse an IPv4 or IPv6 literal (inet_pton's forms; no brackets, no
 * zone) into ip.  Returns 0, or -1 (ip zeroed) if s is not one.
 */
int	netaddr_ip_parse(const char *s, struct netaddr_ip *ip);

/* Whether ip is an IPv4 address, written as such or IPv4-mapped. */
int	netaddr_ip_is_v4(const struct netaddr_ip *ip);

/* Whether a and b are the same address (1.2.3.4 is ::ffff:1.2.3.4). */
int	netaddr_ip_equal(const struct netaddr_ip *a,
	    const struct netaddr_ip *b);

/* Whether ip is loopback, by the rule at the top of this file. */
int	netaddr_ip_loopback(const struct netaddr_ip *ip);

/*
 * Whether the IP literal s (no brackets) is loopback; 0 for anything
 * that is not an IP literal.
 */
int	netaddr_is_loopback(const char *s);

/*
 * The address of sa (AF_INET or AF_INET6) into ip, and its port into
 * *port unless port is NULL.  Returns 0, or -1 for another family.
 */
int	netaddr_from_sockaddr(const struct sockaddr *sa,
	    struct netaddr_ip *ip, int *port);

/*
 * The address of sa as text, as inet_ntop writes it ("127.0.0.1",
 * "::1"; no brackets) into text (textlen bytes; 46 hold any), and its
 * port into *port unless port is NULL.  Returns 0, or -1 for a family
 * other than AF_INET and AF_INET6 (text then "").
 */
int	netaddr_sockaddr_text(const struct sockaddr *sa, char *text,
	    size_t textlen, int *port);

#endif /* NETADDR_H */
