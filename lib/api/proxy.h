/*
 * proxy.h -- which proxy, if any, leaderd uses to reach the API server,
 * decided as Go's net/http ProxyFromEnvironment decides it for
 * client-go (golang.org/x/net/http/httpproxy), so that leaderd and a Go
 * elector in the same pod take the same route:
 *
 *   https:// servers use HTTPS_PROXY, else https_proxy;
 *   http:// servers use HTTP_PROXY, else http_proxy;
 *   ALL_PROXY and all_proxy are ignored (libcurl would honour them);
 *   NO_PROXY, else no_proxy, lists exceptions: comma-separated entries,
 *   "*" for all, IP addresses and CIDR ranges, domain names matching
 *   themselves and their subdomains ("example.com"), subdomains only
 *   (".example.com" or "*.example.com"), each optionally with ":port";
 *   localhost and loopback addresses are never proxied.
 *
 * A proxy value without a scheme means http://.  Pure: reads only the
 * environment; never logs.
 */

#ifndef PROXY_H
#define PROXY_H

#include <stddef.h>

/*
 * The proxy URL for requests to server ("https://host:port"), written
 * into out ("" for a direct connection).  Returns 0, or -1 with err when
 * the server URL cannot be read or the proxy variable has a scheme
 * libcurl should not be given (Go accepts http, https, socks5 and
 * socks5h).
 */
int	proxy_for(const char *server, char *out, size_t outlen, char *err,
	    size_t errlen);

/*
 * Whether no_proxy (the NO_PROXY syntax above) exempts host (a name or
 * an IP literal, without brackets) on port.  Returns 1 or 0.
 */
int	proxy_exempt(const char *no_proxy, const char *host, const char *port);

#endif /* PROXY_H */
