/*
 * peer_nais.c -- nais/elector's answers (pkg/election/official/
 * official.go, its bytes pinned by official_test.go) on --http, and the
 * probes its controller-runtime manager serves on --probe-address
 * (controller-runtime v0.23 pkg/healthz/healthz.go).  The facts are in
 * test/compat/peers.md section 2.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "codec/apitime.h"
#include "core/elector.h"
#include "server/localapi.h"
#include "server/peers.h"

#define RESULT_TIME_LEN	21	/* "2006-01-02T15:04:05Z" + NUL */

/*
 * The result: Go's json.Marshal of struct{Name string `json:"name,
 * omitempty"`; LastUpdate string `json:"last_update,omitempty"`}.  nais
 * has no result before its first campaign, so leaderd has none before
 * the first read of the lock; last_update is the wall time the result
 * last changed, as time.Now().Format(time.RFC3339) writes it in the
 * image's UTC: to the second, with Z.
 */
static void
result_json(const struct localapi_state *d, struct buf *b)
{
	char	 t[APITIME_MICRO_LEN];

	buf_add(b, "{", 1);
	if (d->peer_has_result && d->peer_result[0] != '\0') {
		buf_add(b, "\"name\":", 7);
		buf_json_str(b, d->peer_result);
	}
	if (d->peer_has_result) {
		apitime_format_micro(d->peer_result_us, t);
		memcpy(t + RESULT_TIME_LEN - 2, "Z", 2);
		buf_printf(b, "%s\"last_update\":\"%s\"",
		    d->peer_result[0] != '\0' ? "," : "", t);
	}
	buf_add(b, "}", 1);
}

/* "data: <result>\n\n". */
static char *
result_event(const struct localapi_state *d, size_t *len)
{
	struct buf	 b = { 0 };

	buf_add(&b, "data: ", 6);
	result_json(d, &b);
	buf_add(&b, "\n\n", 2);
	return buf_steal(&b, len);
}

void
peer_nais_root(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	const struct localapi_state	*d = arg;
	struct buf			 b = { 0 };

	(void)req;
	result_json(d, &b);
	reply->status = 200;
	reply->content_type = "application/json";
	reply->cache_control = "no-cache";
	reply->body = buf_steal(&b, &reply->len);
}

/*
 * A result is what nais's candidate reads or creates: a record, never
 * the lock's absence (the observed record of a NOTFOUND has no
 * resourceVersion), after which nais creates the Lease and reports that.
 */
char *
peer_nais_event(struct localapi_state *d, uint64_t now_ms, int64_t wall_us,
    size_t *len)
{
	const struct elector	*el = d->el;

	(void)now_ms;
	if (!el->have_observed || el->observed.rv[0] == '\0')
		return NULL;
	if (d->peer_has_result &&
	    strcmp(d->peer_result, el->observed.holder) == 0)
		return NULL;
	d->peer_has_result = 1;
	snprintf(d->peer_result, sizeof(d->peer_result), "%s",
	    el->observed.holder);
	d->peer_result_us = wall_us;
	return result_event(d, len);
}

/*
 * GET /sse: the result now, then one event per change, as long as the
 * client stays.  Go's handler sets Connection: keep-alive and flushes
 * without a length, so net/http sends the body chunked.
 */
static void
reply_sse(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	const struct localapi_state	*d = arg;

	(void)req;
	reply->status = 200;
	reply->content_type = "text/event-stream";
	reply->cache_control = "no-cache";
	reply->mode = HTTPD_REPLY_STREAM;
	reply->chunked = 1;
	reply->channel = LOCALAPI_PEER_CHANNEL;
	reply->body = result_event(d, &reply->len);
}

/* One check of a healthz.Handler: its name, and why it fails or NULL. */
struct check {
	const char	*name;
	const char	*(*fails)(const struct localapi_state *, uint64_t,
			    char *, size_t);
};

/* healthz.Ping, except that a stuck election loop fails it. */
static const char *
check_manager(const struct localapi_state *d, uint64_t now_ms, char *why,
    size_t len)
{
	return localapi_unhealthy(d, now_ms, why, len);
}

/* nais's candidate: its pod was read (the Lease's owner). */
static const char *
check_candidate(const struct localapi_state *d, uint64_t now_ms, char *why,
    size_t len)
{
	(void)now_ms;
	(void)why;
	(void)len;
	return d->owner_read ? NULL : "candidate has not performed setup";
}

/* nais's official: it has a result. */
static const char *
check_official(const struct localapi_state *d, uint64_t now_ms, char *why,
    size_t len)
{
	(void)now_ms;
	(void)why;
	(void)len;
	return d->ready ? NULL : "no election has run";
}

/* By name, as the aggregated answer sorts them. */
static const struct check healthz_checks[] = {
	{ "manager", check_manager },
	{ NULL, NULL }
};
static const struct check readyz_checks[] = {
	{ "candidate", check_candidate },
	{ "official", check_official },
	{ NULL, NULL }
};

static void
reply_text(struct httpd_reply *reply, int status, int nosniff,
    struct buf *b)
{
	reply->status = status;
	reply->content_type = "text/plain; charset=utf-8";
	reply->cache_control = "";
	if (nosniff)
		snprintf(reply->headers, sizeof(reply->headers),
		    "X-Content-Type-Options: nosniff\r\n");
	reply->body = buf_steal(b, &reply->len);
}

/* Whether the query excludes the check name (?exclude=name). */
static int
excluded(const char *query, const char *name)
{
	const char	*p = query, *amp;
	size_t		 n = strlen(name);

	while (*p != '\0') {
		amp = p + strcspn(p, "&");
		if (strncmp(p, "exclude=", 8) == 0 &&
		    (size_t)(amp - p - 8) == n && strncmp(p + 8, name, n) == 0)
			return 1;
		p = *amp == '&' ? amp + 1 : amp;
	}
	return 0;
}

/*
 * The excludes that match no check, quoted and joined as Go's %q and
 * strings.Join do, into b; whether there was one.
 */
static int
unknown_excludes(const char *query, const struct check *checks,
    struct buf *b)
{
	const struct check	*c;
	const char		*p = query, *amp;
	size_t			 n;
	int			 k = 0;

	while (*p != '\0') {
		amp = p + strcspn(p, "&");
		if (strncmp(p, "exclude=", 8) == 0) {
			n = (size_t)(amp - p - 8);
			for (c = checks; c->name != NULL; c++)
				if (strlen(c->name) == n &&
				    strncmp(p + 8, c->name, n) == 0)
					break;
			if (c->name == NULL)
				buf_printf(b, "%s\"%.*s\"", k++ ? "," : "",
				    (int)n, p + 8);
		}
		p = *amp == '&' ? amp + 1 : amp;
	}
	return k > 0;
}

/*
 * The aggregated answer (healthz.Handler.serveAggregated): "ok", or with
 * ?verbose or on a failure one line per check and the verdict.
 */
static void
aggregated(const struct http_request *req, struct httpd_reply *reply,
    const struct localapi_state *d, const struct check *checks)
{
	const struct check	*c;
	struct buf		 b = { 0 }, warn = { 0 };
	char			 why[512], v[8];
	int			 failed = 0, verbose;
	size_t			 wlen;
	char			*w;

	for (c = checks; c->name != NULL; c++)
		if (!excluded(req->query, c->name) &&
		    c->fails(d, reply->now_ms, why, sizeof(why)) != NULL)
			failed = 1;
	verbose = http_query_get(req->query, "verbose", v, sizeof(v)) != 0;
	if (!failed && !verbose) {
		buf_add(&b, "ok", 2);
		reply_text(reply, 200, 1, &b);
		return;
	}
	for (c = checks; c->name != NULL; c++) {
		if (excluded(req->query, c->name))
			buf_printf(&b, "[+]%s excluded: ok\n", c->name);
		else if (c->fails(d, reply->now_ms, why, sizeof(why)) == NULL)
			buf_printf(&b, "[+]%s ok\n", c->name);
		else
			/* The reason stays private, as in Kubernetes. */
			buf_printf(&b, "[-]%s failed: reason withheld\n",
			    c->name);
	}
	if (unknown_excludes(req->query, checks, &warn)) {
		w = buf_steal(&warn, &wlen);
		buf_printf(&b, "warn: some health checks cannot be excluded: "
		    "no matches for %s\n", w);
		free(w);
	}
	buf_printf(&b, "healthz check %s\n", failed ? "failed" : "passed");
	reply_text(reply, failed ? 500 : 200, 1, &b);
}

/*
 * /healthz or /readyz (base), and the checks below it: the path below
 * base cleaned as path.Clean would ("/manager/" is "/manager"); "" or
 * "/" is the aggregated answer; an unknown check is Go's 404.
 */
static void
serve_checks(const struct http_request *req, struct httpd_reply *reply,
    void *arg, const char *base, const struct check *checks)
{
	const struct localapi_state	*d = arg;
	const struct check		*c;
	const char			*p = req->path + strlen(base), *f;
	struct buf			 b = { 0 };
	char				 why[512];
	size_t				 n;

	while (*p == '/')
		p++;
	n = strlen(p);
	while (n > 0 && p[n - 1] == '/')
		n--;
	if (n == 0) {
		aggregated(req, reply, d, checks);
		return;
	}
	for (c = checks; c->name != NULL; c++)
		if (strlen(c->name) == n && strncmp(p, c->name, n) == 0)
			break;
	if (c->name == NULL) {
		buf_add(&b, "404 page not found\n", 19);
		reply_text(reply, 404, 1, &b);
		return;
	}
	/* healthz.CheckHandler: "ok" (sniffed), or http.Error's text. */
	if ((f = c->fails(d, reply->now_ms, why, sizeof(why))) == NULL) {
		buf_add(&b, "ok", 2);
		reply_text(reply, 200, 0, &b);
	} else {
		buf_printf(&b, "internal server error: %s\n", f);
		reply_text(reply, 500, 1, &b);
	}
}

static void
reply_healthz(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	serve_checks(req, reply, arg, "/healthz", healthz_checks);
}

static void
reply_readyz(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	serve_checks(req, reply, arg, "/readyz", readyz_checks);
}

const struct httpd_route peer_nais_routes[] = {
	/* path, methods, probes, local_only, what, handler, arg */
	{ "/sse", "*", 0, 0, NULL, reply_sse, NULL },
	{ "/healthz", "*", HTTPD_ONLY_PROBES, 0, NULL, reply_healthz, NULL },
	{ "/healthz/*", "*", HTTPD_ONLY_PROBES, 0, NULL, reply_healthz, NULL },
	{ "/readyz", "*", HTTPD_ONLY_PROBES, 0, NULL, reply_readyz, NULL },
	{ "/readyz/*", "*", HTTPD_ONLY_PROBES, 0, NULL, reply_readyz, NULL },
	{ NULL, NULL, 0, 0, NULL, NULL, NULL }
};
