/*
 * config_check_listen.c -- the listen.* rules: each address a host:port,
 * each listener a port of its own, the unix socket's path, at least one
 * listener, the bound on streams.
 */

#include <sys/socket.h>
#include <sys/un.h>

#include <string.h>
#include <strings.h>

#include "base/netaddr.h"
#include "config/config.h"
#include "config/config_check_int.h"
#include "config/config_int.h"

#define SUN_PATH_MAX	(sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

/* Check "host:port"; returns NULL or what is wrong (in why). */
static const char *
check_hostport(const char *s, char *why, size_t whylen)
{
	const char		*p;
	char			 host[CONFIG_STR_MAX], port[CONFIG_STR_MAX];
	struct netaddr_ip	 ip;
	int			 digits_dots = 1;

	if (netaddr_split(s, 0, host, sizeof(host), port, sizeof(port), why,
	    whylen) == -1)
		return why;
	if (s[0] == '[') {
		if (netaddr_ip_parse(host, &ip) == -1 ||
		    ip.family != AF_INET6)
			return "not a valid IPv6 address inside [ ]";
	} else {
		for (p = host; *p != '\0'; p++) {
			if (!((*p >= '0' && *p <= '9') || *p == '.'))
				digits_dots = 0;
			if (!((*p >= 'a' && *p <= 'z') ||
			    (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || *p == '.' || *p == '-'))
				return "the host must be an IP address or a "
				    "host name";
		}
		if (host[0] != '\0' && digits_dots &&
		    (netaddr_ip_parse(host, &ip) == -1 ||
		    ip.family != AF_INET))
			return "not a valid IPv4 address";
	}
	if (netaddr_port(port) == -1)
		return "the port must be a number from 0 to 65535";
	return NULL;
}

/* Whether a host of listen.http or listen.probes is a wildcard address. */
static int
wildcard(const char *host)
{
	return host[0] == '\0' || strcmp(host, "0.0.0.0") == 0 ||
	    strcmp(host, "::") == 0;
}

/*
 * Whether two valid host:port values would bind a common address and
 * port: the same host, "localhost" (127.0.0.1 and ::1) beside a loopback
 * literal, or a wildcard beside anything, on the same port.
 */
static int
same_listener(const char *a, const char *b)
{
	char			 ha[CONFIG_STR_MAX], hb[CONFIG_STR_MAX];
	char			 pa[16], pb[16], why[64];
	struct netaddr_ip	 ip;

	if (netaddr_split(a, 0, ha, sizeof(ha), pa, sizeof(pa), why,
	    sizeof(why)) == -1 || netaddr_split(b, 0, hb, sizeof(hb), pb,
	    sizeof(pb), why, sizeof(why)) == -1)
		return 0;
	if (netaddr_port(pa) != netaddr_port(pb) || netaddr_port(pa) == 0)
		return 0;
	if (strcasecmp(ha, hb) == 0 || wildcard(ha) || wildcard(hb))
		return 1;
	if (strcasecmp(ha, "localhost") == 0)
		return netaddr_ip_parse(hb, &ip) == 0 && netaddr_ip_loopback(&ip);
	if (strcasecmp(hb, "localhost") == 0)
		return netaddr_ip_parse(ha, &ip) == 0 && netaddr_ip_loopback(&ip);
	return 0;
}

void
config_check_listen(const struct config *c, struct config_errs *e)
{
	const char	*why;
	char		 buf[128];

	if (c->listen_http[0] != '\0' &&
	    (why = check_hostport(c->listen_http, buf, sizeof(buf))) != NULL)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_HTTP), "listen.http "
		    "\"%s\": %s (\"\" turns TCP off)", c->listen_http, why);
	if (c->listen_probes[0] != '\0' &&
	    (why = check_hostport(c->listen_probes, buf,
	    sizeof(buf))) != NULL)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_PROBES),
		    "listen.probes \"%s\": %s (\"\" turns it off)",
		    c->listen_probes, why);
	else if (c->listen_probes[0] != '\0' &&
	    same_listener(c->listen_probes, c->listen_http))
		config_errs_add(e, ORIGIN(c, config_later(c, CONFIG_LISTEN_HTTP,
		    CONFIG_LISTEN_PROBES)), "listen.probes \"%s\" and "
		    "listen.http \"%s\" share an address and port; the "
		    "probes need a port of their own", c->listen_probes,
		    c->listen_http);
	if (c->listen_metrics[0] != '\0' &&
	    (why = check_hostport(c->listen_metrics, buf,
	    sizeof(buf))) != NULL)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_METRICS),
		    "listen.metrics \"%s\": %s (\"\" turns it off)",
		    c->listen_metrics, why);
	else if (c->listen_metrics[0] != '\0' &&
	    (same_listener(c->listen_metrics, c->listen_http) ||
	    same_listener(c->listen_metrics, c->listen_probes)))
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_METRICS),
		    "listen.metrics \"%s\" shares an address and port with "
		    "listen.%s \"%s\"; the metrics need a port of their own",
		    c->listen_metrics, same_listener(c->listen_metrics,
		    c->listen_http) ? "http" : "probes",
		    same_listener(c->listen_metrics, c->listen_http) ?
		    c->listen_http : c->listen_probes);
	if (c->listen_unix[0] != '\0' && c->listen_unix[0] != '/')
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_UNIX), "listen.unix "
		    "\"%s\" must be an absolute path", c->listen_unix);
	else if (strlen(c->listen_unix) > SUN_PATH_MAX)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_UNIX), "listen.unix "
		    "is too long (%zu bytes; a unix socket path holds at most "
		    "%zu)", strlen(c->listen_unix), SUN_PATH_MAX);
	/* The peers run without a listener unless asked for one. */
	if (c->listen_http[0] == '\0' && c->listen_unix[0] == '\0' &&
	    c->compat[0] == '\0')
		config_errs_add(e, ORIGIN(c, config_later(c, CONFIG_LISTEN_HTTP,
		    CONFIG_LISTEN_UNIX)), "no listener: listen.http and "
		    "listen.unix are both empty; set at least one");
	if (c->listen_max_streams < 0 ||
	    c->listen_max_streams > CONFIG_STREAMS_MAX)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_MAX_STREAMS),
		    "listen.max_streams %d is out of range: give 0 (no push "
		    "clients) to %d", c->listen_max_streams,
		    CONFIG_STREAMS_MAX);
}
