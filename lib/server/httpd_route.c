/*
 * httpd_route.c -- the route table's verdict on a request: which route
 * answers it, or the 404, 405 or 403 that httpd answers instead.  The
 * table is the caller's (the local API's is in localapi_routes.c); httpd
 * knows no path.  Pure: no I/O, never logs.
 */

#include <stdio.h>
#include <string.h>

#include "server/httpd.h"

/* Whether method is one of r's methods ("GET, HEAD"). */
static int
route_allows(const struct httpd_route *r, const char *method)
{
	const char	*p = r->methods;
	size_t		 n = strlen(method);

	if (strcmp(p, "*") == 0)
		return 1;
	while (*p != '\0') {
		if (strncmp(p, method, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
		p += strcspn(p, ",");
		p += strspn(p, ", ");
	}
	return 0;
}

/* Append to the string in buf (size len), truncating. */
static void
why_add(char *buf, size_t len, const char *s)
{
	size_t	 off = strlen(buf);

	snprintf(buf + off, len - off, "%s", s);
}

/* Whether a listener of some routes only (only) serves route r. */
static int
serves(const struct httpd_route *r, int only)
{
	return only == 0 || (r->probes & only) != 0;
}

/* Whether r's path, "/x/" and a star, takes path: "/x/" and below. */
static int
prefix_of(const struct httpd_route *r, const char *path)
{
	size_t	 n = strlen(r->path);

	return n >= 2 && strcmp(r->path + n - 2, "/*") == 0 &&
	    strncmp(path, r->path, n - 1) == 0;
}

int
httpd_route_match(const struct httpd_route *routes, const char *method,
    const char *path, int only, int local,
    const struct httpd_route **route, const char **allow, char *why,
    size_t whylen)
{
	const struct httpd_route	*r;
	int				 n = 0, k = 0;

	*route = NULL;
	*allow = NULL;
	for (r = routes; r->path != NULL; r++)
		if (strcmp(r->path, path) == 0 && serves(r, only))
			break;
	/* "/x/" and a star: "/x/" and below (a peer's sub-paths). */
	if (r->path == NULL)
		for (r = routes; r->path != NULL; r++)
			if (prefix_of(r, path) && serves(r, only))
				break;
	/* "*": every path the table does not name (a peer's catch-all). */
	if (r->path == NULL && !only)
		for (r = routes; r->path != NULL; r++)
			if (strcmp(r->path, "*") == 0)
				break;
	if (only && r->path == NULL) {
		/* "only /healthz, /readyz and /metrics are served here" */
		for (r = routes; r->path != NULL; r++)
			n += serves(r, only) && strchr(r->path, '*') == NULL;
		snprintf(why, whylen, "only");
		for (r = routes; r->path != NULL; r++) {
			if (!serves(r, only) || strchr(r->path, '*') != NULL)
				continue;
			why_add(why, whylen, k == 0 ? " " : k + 1 == n ?
			    " and " : ", ");
			why_add(why, whylen, r->path);
			k++;
		}
		why_add(why, whylen, n == 1 ? " is" : " are");
		why_add(why, whylen, " served here; the local API is on the "
		    "loopback and unix listeners");
		return 404;
	}
	if (r->path == NULL) {
		snprintf(why, whylen, "not found");
		return 404;
	}
	if (!route_allows(r, method)) {
		*allow = r->methods;
		/* A route with one method names it. */
		if (strchr(r->methods, ',') == NULL)
			snprintf(why, whylen, "method not allowed; use %s",
			    r->methods);
		else
			snprintf(why, whylen, "method not allowed");
		return 405;
	}
	if (r->local_only && !local) {
		snprintf(why, whylen, "%s is served on the unix socket and on "
		    "a loopback listener only", r->what != NULL ? r->what :
		    r->path);
		return 403;
	}
	*route = r;
	return 0;
}
