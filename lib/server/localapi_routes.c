/*
 * localapi_routes.c -- the local API's one route table, which says where
 * and how each path is served: leaderd's answers (localapi.c), the
 * daemon's, and under compat the peer's own (peers.h) in their place;
 * and the table with every election's routes (/leader/NAME, /leaders).
 * No I/O: httpd_route.c reads the table.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "server/httpd.h"
#include "server/localapi.h"
#include "server/localapi_int.h"
#include "server/peers.h"

/*
 * The peers' answers that stand in for leaderd's (compat.h): "/", and
 * with catch_all every path leaderd does not serve, by any method, as
 * the peer answers all of them; with only, every path at all (leaderd's
 * own routes are not served: the peer's clients, probes included, may
 * use any path).
 */
static const struct {
	const char		*peer;
	httpd_handler_cb	 root;
	int			 catch_all;
	int			 only;
} peer_answers[] = {
	{ "classic", peer_classic_root, 1, 0 },
	{ "vapor", peer_vapor_root, 1, 0 },
	{ "await", peer_await_root, 1, 1 },
	{ "nais", peer_nais_root, 1, 0 },
};

/*
 * The peers with routes of their own beside "/" (peers.h): each row's
 * routes replace leaderd's of the same path, or are added (a NULL arg
 * becomes the state), and its event (localapi_peer_event) is what the
 * streams started on LOCALAPI_PEER_CHANNEL get when its view changes.
 */
static const struct {
	const char		*peer;
	const struct httpd_route *routes;
	char			*(*event)(struct localapi_state *, uint64_t,
				    int64_t, size_t *);
} peer_extras[] = {
	{ "nais", peer_nais_routes, peer_nais_event },
};

char *
localapi_peer_event(struct localapi_state *st, uint64_t now_ms,
    int64_t wall_us, size_t *len)
{
	size_t	 i;

	for (i = 0; i < sizeof(peer_extras) / sizeof(peer_extras[0]); i++)
		if (strcmp(st->conf->compat, peer_extras[i].peer) == 0 &&
		    peer_extras[i].event != NULL)
			return peer_extras[i].event(st, now_ms, wall_us,
			    len);
	return NULL;
}

/* Put the peer's own routes in st->routes[0..*n), replacing or adding. */
static void
peer_routes(struct localapi_state *st, size_t *n)
{
	const struct httpd_route	*r;
	size_t				 i, k;

	for (i = 0; i < sizeof(peer_extras) / sizeof(peer_extras[0]); i++) {
		if (strcmp(st->conf->compat, peer_extras[i].peer) != 0)
			continue;
		for (r = peer_extras[i].routes; r->path != NULL; r++) {
			for (k = 0; k < *n; k++)
				if (strcmp(st->routes[k].path, r->path) == 0)
					break;
			/* Room is kept for a catch-all and the end. */
			if (k == *n && *n + 2 >= LOCALAPI_ROUTES)
				break;
			if (k == *n)
				(*n)++;
			st->routes[k] = *r;
			if (st->routes[k].arg == NULL)
				st->routes[k].arg = st;
		}
	}
}

const struct httpd_route *
localapi_routes(struct localapi_state *st, httpd_handler_cb metrics,
    httpd_handler_cb release, httpd_handler_cb pause, void *arg)
{
	/*
	 * The one route table of the local API.  httpd answers from it
	 * alone 404 (other paths, and on the probes listener the paths
	 * not marked probes), 405 with Allow (other methods) and 403 (a
	 * local-only path over another listener).
	 */
	const struct httpd_route table[] = {
		/* path, methods, probes, local_only, what, handler, arg */
		{ "/", "GET, HEAD", 0, 0, NULL, localapi_reply_root, st },
		{ "/leader", "GET, HEAD", 0, 0, NULL, localapi_reply_leader,
		    st },
		{ "/leader/watch", "GET, HEAD", 0, 0, NULL,
		    localapi_reply_watch, st },
		{ "/sse", "GET, HEAD", 0, 0, NULL, localapi_reply_watch, st },
		{ "/healthz", "GET, HEAD", 1, 0, NULL, localapi_reply_healthz,
		    st },
		{ "/readyz", "GET, HEAD", 1, 0, NULL, localapi_reply_readyz,
		    st },
		{ "/metrics", "GET, HEAD", HTTPD_ONLY_PROBES |
		    HTTPD_ONLY_METRICS, 0, NULL, metrics, arg },
		{ "/leader/release", "POST", 0, 1, "step-down", release, arg },
		{ "/leader/pause", "POST", 0, 1, "pause", pause, arg },
		{ "/leader/resume", "POST", 0, 1, "resume", pause, arg },
		{ NULL, NULL, 0, 0, NULL, NULL, NULL }
	};
	struct httpd_route	*r;
	size_t			 i, n = sizeof(table) / sizeof(table[0]) - 1;

	memcpy(st->routes, table, sizeof(table));
	peer_routes(st, &n);
	for (i = 0; i < sizeof(peer_answers) / sizeof(peer_answers[0]); i++) {
		if (strcmp(st->conf->compat, peer_answers[i].peer) != 0)
			continue;
		st->routes[0].methods = "*";
		st->routes[0].handler = peer_answers[i].root;
		if (peer_answers[i].only)
			n = 1;
		if (peer_answers[i].catch_all) {
			r = &st->routes[n++];
			*r = st->routes[0];
			r->path = "*";
		}
	}
	memset(&st->routes[n], 0, sizeof(st->routes[n]));
	return st->routes;
}

struct httpd_route *
localapi_routes_elections(struct localapi_state **sts, size_t n,
    httpd_handler_cb release, void *const *args)
{
	struct localapi_state	*st = sts[0];
	struct httpd_route	*t, *r;
	size_t			 i, k = 0, base = 0;

	while (st->routes[base].path != NULL)
		base++;
	t = xcalloc(base + 3 * n + 3, sizeof(*t));
	/* A peer's catch-all ("*") stays last; its paths stay its own. */
	for (i = 0; i < base; i++)
		if (strcmp(st->routes[i].path, "*") != 0)
			t[k++] = st->routes[i];
	for (i = 0; i < n; i++) {
		sts[i]->all = sts;
		sts[i]->nall = n;
		if (sts[i]->election == NULL)
			sts[i]->election = sts[i]->conf->lock_name;
	}
	if (st->conf->compat[0] == '\0') {
		for (i = 0; i < n; i++) {
			snprintf(sts[i]->paths[0], sizeof(sts[i]->paths[0]),
			    "/leader/%s", sts[i]->election);
			snprintf(sts[i]->paths[1], sizeof(sts[i]->paths[1]),
			    "/leader/%s/watch", sts[i]->election);
			snprintf(sts[i]->paths[2], sizeof(sts[i]->paths[2]),
			    "/leader/%s/release", sts[i]->election);
			r = &t[k++];
			*r = (struct httpd_route){ sts[i]->paths[0],
			    "GET, HEAD", 0, 0, NULL, localapi_reply_leader,
			    sts[i] };
			r = &t[k++];
			*r = (struct httpd_route){ sts[i]->paths[1],
			    "GET, HEAD", 0, 0, NULL, localapi_reply_watch,
			    sts[i] };
			r = &t[k++];
			*r = (struct httpd_route){ sts[i]->paths[2], "POST",
			    0, 1, "step-down", release, args[i] };
		}
		t[k++] = (struct httpd_route){ "/leaders", "GET, HEAD", 0, 0,
		    NULL, localapi_reply_leaders, st };
		t[k++] = (struct httpd_route){ "/leaders/watch", "GET, HEAD",
		    0, 0, NULL, localapi_reply_watch_all, st };
	}
	for (i = 0; i < base; i++)
		if (strcmp(st->routes[i].path, "*") == 0)
			t[k++] = st->routes[i];
	memset(&t[k], 0, sizeof(t[k]));
	return t;
}
