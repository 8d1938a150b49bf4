/*
 * localapi_test.c -- the push side of the local API, without sockets:
 * change detection and the index (including leadership running out by
 * time alone), the event framing, the wait/index query parser, the
 * /leader, /leader/watch and blocking-read answers, and the route
 * table with what httpd answers from it (404, 405 with Allow, 403).
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "codec/http_parse.h"
#include "config/config.h"
#include "core/elector.h"
#include "server/localapi.h"
#include "server/peers.h"

struct fixture {
	struct config		 conf;
	struct elector		 el;
	struct localapi_state	 st;
};

static void
setup(struct fixture *f)
{
	struct elector_config	 ec;
	char			 err[256];

	memset(f, 0, sizeof(*f));
	f->conf.lease_duration_ms = 15000;
	snprintf(f->conf.identity, sizeof(f->conf.identity), "me");
	snprintf(f->conf.lock_namespace, sizeof(f->conf.lock_namespace), "ns");
	snprintf(f->conf.lock_name, sizeof(f->conf.lock_name), "app");
	memset(&ec, 0, sizeof(ec));
	snprintf(ec.identity, sizeof(ec.identity), "me");
	ec.lease_duration_ms = 15000;
	ec.renew_deadline_ms = 10000;
	ec.retry_period_ms = 2000;
	ec.request_timeout_ms = 5000;
	assert_int_equal(elector_init(&f->el, &ec, 1000, err, sizeof(err)), 0);
	f->st.conf = &f->conf;
	f->st.el = &f->el;
}

static void
observe(struct fixture *f, const char *holder)
{
	f->el.have_observed = 1;
	snprintf(f->el.observed.holder, sizeof(f->el.observed.holder), "%s",
	    holder);
}

static void
test_changed(void **state)
{
	struct fixture	 f;

	(void)state;
	setup(&f);
	assert_int_equal(f.st.index, 0);
	/* The first call sets index 1, the second sees no change. */
	assert_int_equal(localapi_changed(&f.st, 1000, 111), 1);
	assert_int_equal(f.st.index, 1);
	assert_int_equal(f.st.changed_us, 111);
	assert_int_equal(localapi_changed(&f.st, 1001, 222), 0);
	assert_int_equal(f.st.changed_us, 111);
	/* A holder appears, then changes; the same holder again is quiet. */
	observe(&f, "other");
	assert_int_equal(localapi_changed(&f.st, 1002, 333), 1);
	assert_int_equal(f.st.index, 2);
	assert_int_equal(localapi_changed(&f.st, 1003, 0), 0);
	observe(&f, "me");
	assert_int_equal(localapi_changed(&f.st, 1004, 0), 1);
	/* We lead until 5000: a change now, none while it lasts. */
	f.el.state = ELECTOR_LEADER;
	f.el.lead_until_ms = 5000;
	assert_int_equal(localapi_changed(&f.st, 1005, 0), 1);
	assert_int_equal(f.st.index, 4);
	assert_int_equal(f.st.seen_leader, 1);
	assert_int_equal(localapi_changed(&f.st, 4999, 0), 0);
	/* Time alone ends it, at lead_until_ms exactly. */
	assert_int_equal(localapi_changed(&f.st, 5000, 0), 1);
	assert_int_equal(f.st.index, 5);
	assert_int_equal(f.st.seen_leader, 0);
	/* A renew brings it back: another change. */
	f.el.lead_until_ms = 9000;
	assert_int_equal(localapi_changed(&f.st, 5001, 0), 1);
	/* Stopping is a change even when nothing else moves (a follower). */
	f.el.state = ELECTOR_FOLLOWER;
	observe(&f, "other");
	assert_int_equal(localapi_changed(&f.st, 5002, 0), 1);
	f.el.state = ELECTOR_STOPPED;
	assert_int_equal(localapi_changed(&f.st, 5003, 0), 1);
	assert_int_equal(f.st.index, 8);
	assert_int_equal(localapi_changed(&f.st, 5004, 0), 0);
}

static void
test_event(void **state)
{
	struct fixture	 f;
	char		*ev, *nl;
	size_t		 len;

	(void)state;
	setup(&f);
	observe(&f, "a\nb\"c");
	f.el.state = ELECTOR_LEADER;
	f.el.lead_until_ms = 3000;
	localapi_changed(&f.st, 1000, 1700000000000000LL);
	ev = localapi_event(&f.st, 1000, &len);
	assert_int_equal(len, strlen(ev));
	assert_true(strncmp(ev, "data: {", 7) == 0);
	/* One data line, ended by an empty line: no newline inside. */
	nl = strchr(ev, '\n');
	assert_non_null(nl);
	assert_string_equal(nl, "\n\n");
	assert_non_null(strstr(ev, "\"name\":\"a\\u000ab\\\"c\""));
	assert_non_null(strstr(ev, "\"is_leader\":true"));
	assert_non_null(strstr(ev, "\"valid_for_ms\":2000"));
	assert_non_null(strstr(ev, "\"index\":1,"));
	/*
	 * The election, the lock's name when it has no other; then what is
	 * wrong: no problem, never confirmed, so stale.
	 */
	assert_non_null(strstr(ev,
	    "\"changed_at\":\"2023-11-14T22:13:20.000000Z\","
	    "\"election\":\"app\",\"problem\":null,\"problems\":[],"
	    "\"confirmed_at\":null,\"stale\":true}"));
	free(ev);
	f.st.election = "reports";
	f.st.confirmed_us = 1700000000000000LL;
	f.st.confirmed_ms = 900;
	f.st.problems[1].code = "forbidden";
	f.st.problems[1].severity = "error";
	f.st.problems[1].since_us = 1700000000000000LL;
	snprintf(f.st.problems[1].message, sizeof(f.st.problems[1].message),
	    "update leases/app in namespace default is forbidden (403)");
	f.st.problems[9].code = "lock_namespace";
	f.st.problems[9].severity = "warning";
	ev = localapi_event(&f.st, 1000, &len);
	assert_non_null(strstr(ev, ",\"election\":\"reports\","
	    "\"problem\":{\"code\":\"forbidden\",\"severity\":\"error\","
	    "\"message\":\"update leases/app in namespace default is "
	    "forbidden (403)\",\"since\":\"2023-11-14T22:13:20.000000Z\"},"
	    "\"problems\":[{\"code\":\"forbidden\","));
	assert_non_null(strstr(ev, "},{\"code\":\"lock_namespace\","));
	assert_non_null(strstr(ev, "\"confirmed_at\":"
	    "\"2023-11-14T22:13:20.000000Z\",\"stale\":false}\n\n"));
	assert_ptr_equal(localapi_problem_top(&f.st), &f.st.problems[1]);
	free(ev);
}

struct wcase {
	const char	*query;
	int		 ok;
	int		 blocking;
	uint64_t	 wait_ms;
	uint64_t	 index;
};

static const struct wcase wcases[] = {
	{ "", 1, 0, LOCALAPI_WAIT_MAX_MS, 0 },
	{ "wait=30s", 1, 0, 30000, 0 },
	{ "index=7", 1, 1, LOCALAPI_WAIT_MAX_MS, 7 },
	{ "wait=30s&index=7", 1, 1, 30000, 7 },
	{ "index=0&wait=500ms", 1, 1, 500, 0 },
	{ "wait=0s&index=3", 1, 1, 0, 3 },
	{ "wait=0&index=3", 1, 1, 0, 3 },
	{ "wait=1h&index=3", 1, 1, LOCALAPI_WAIT_MAX_MS, 3 },
	{ "wait=5m&index=3", 1, 1, 300000, 3 },
	{ "wait=%33%30s&index=%31", 1, 1, 30000, 1 },
	{ "x=1&index=18446744073709551615&y", 1, 1, LOCALAPI_WAIT_MAX_MS,
	    UINT64_MAX },
	{ "&&wait=1s&&index=2&&", 1, 1, 1000, 2 },
	{ "waiting=abc&indexes=x", 1, 0, LOCALAPI_WAIT_MAX_MS, 0 },
	{ "wait=abc&index=1", 0, 0, 0, 0 },
	{ "wait=-1s&index=1", 0, 0, 0, 0 },
	{ "wait=10&index=1", 0, 0, 0, 0 },
	{ "wait=1.5ns&index=1", 0, 0, 0, 0 },
	{ "wait=&index=1", 0, 0, 0, 0 },
	{ "wait", 0, 0, 0, 0 },
	{ "index", 0, 0, 0, 0 },
	{ "index=", 0, 0, 0, 0 },
	{ "index=x", 0, 0, 0, 0 },
	{ "index=-3", 0, 0, 0, 0 },
	{ "index=1.0", 0, 0, 0, 0 },
	{ "index=18446744073709551616", 0, 0, 0, 0 },
	{ "index=1&index=1", 0, 0, 0, 0 },
	{ "wait=1s&wait=1s", 0, 0, 0, 0 },
	{ "wait=%zz&index=1", 0, 0, 0, 0 },
	{ "wait=%3", 0, 0, 0, 0 },
	{ "wait=1s%00&index=1", 0, 0, 0, 0 },
	{ "wait=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaa", 0, 0, 0, 0 },
};

static void
test_parse_wait(void **state)
{
	char		 err[256];
	uint64_t	 wait_ms, index;
	size_t		 i;
	int		 blocking, rv;

	(void)state;
	for (i = 0; i < sizeof(wcases) / sizeof(wcases[0]); i++) {
		const struct wcase *w = &wcases[i];

		err[0] = '\0';
		rv = localapi_parse_wait(w->query, &blocking, &wait_ms, &index,
		    err, sizeof(err));
		if (!w->ok) {
			if (rv != -1)
				fail_msg("\"%s\": accepted", w->query);
			if (err[0] == '\0')
				fail_msg("\"%s\": no reason", w->query);
			continue;
		}
		if (rv != 0)
			fail_msg("\"%s\": refused: %s", w->query, err);
		if (blocking != w->blocking || wait_ms != w->wait_ms ||
		    index != w->index)
			fail_msg("\"%s\": blocking %d wait %llu index %llu",
			    w->query, blocking, (unsigned long long)wait_ms,
			    (unsigned long long)index);
	}
}

/* GET path?query at 2000 ms over the unix socket, as httpd would. */
static void
ask(struct fixture *f, const char *path, const char *query, int wait_over,
    struct httpd_reply *r)
{
	const struct httpd_route	*routes, *route;
	struct http_request		 req;
	const char			*allow;
	char				 why[256];

	memset(&req, 0, sizeof(req));
	snprintf(req.method, sizeof(req.method), "GET");
	snprintf(req.path, sizeof(req.path), "%s", path);
	snprintf(req.query, sizeof(req.query), "%s", query);
	req.accept_json = 1;
	memset(r, 0, sizeof(*r));
	r->wait_over = wait_over;
	r->local = 1;
	r->now_ms = 2000;
	routes = localapi_routes(&f->st, NULL, NULL, NULL, NULL);
	r->status = httpd_route_match(routes, req.method, req.path, 0, 1,
	    &route, &allow, why, sizeof(why));
	if (r->status == 0)
		route->handler(&req, r, route->arg);
}

static void
test_replies(void **state)
{
	struct fixture		 f;
	struct httpd_reply	 r;
	char			 q[64];

	(void)state;
	setup(&f);
	observe(&f, "other");
	localapi_changed(&f.st, 1000, 0);
	localapi_changed(&f.st, 1000, 0);
	assert_int_equal(f.st.index, 1);

	ask(&f, "/leader", "", 0, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.mode, HTTPD_REPLY_NOW);
	/* The index first; the fencing token follows when there is one. */
	assert_int_equal(strncmp(r.headers, "X-Leaderd-Index: 1\r\n", 20), 0);
	assert_non_null(strstr(r.body, "\"index\":1,"));
	free(r.body);

	/* The current index waits; another index, or the end, answers. */
	ask(&f, "/leader", "wait=30s&index=1", 0, &r);
	assert_int_equal(r.mode, HTTPD_REPLY_WAIT);
	assert_int_equal(r.wait_ms, 30000);
	assert_null(r.body);
	ask(&f, "/leader", "wait=30s&index=1", 1, &r);
	assert_int_equal(r.mode, HTTPD_REPLY_NOW);
	assert_int_equal(r.status, 200);
	free(r.body);
	ask(&f, "/leader", "wait=30s&index=0", 0, &r);
	assert_int_equal(r.mode, HTTPD_REPLY_NOW);
	free(r.body);
	observe(&f, "third");
	localapi_changed(&f.st, 1000, 0);
	snprintf(q, sizeof(q), "wait=30s&index=%d", 1);
	ask(&f, "/leader", q, 0, &r);
	assert_int_equal(r.mode, HTTPD_REPLY_NOW);
	assert_int_equal(strncmp(r.headers, "X-Leaderd-Index: 2\r\n", 20), 0);
	free(r.body);

	/* A bad wait is a 400 with a JSON error. */
	ask(&f, "/leader", "wait=soon&index=1", 0, &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.content_type, "application/json");
	assert_non_null(strstr(r.body, "\"status\":400"));
	assert_non_null(strstr(r.body, "\"error\":\"wait: "));
	free(r.body);

	/* The streams: a first event, the keep-alive comment. */
	ask(&f, "/leader/watch", "", 0, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.mode, HTTPD_REPLY_STREAM);
	assert_string_equal(r.content_type, "text/event-stream");
	assert_string_equal(r.ping, ": keep-alive\n\n");
	assert_true(strncmp(r.body, "data: {\"name\":\"third\"", 21) == 0);
	assert_int_equal(r.len, strlen(r.body));
	free(r.body);
	ask(&f, "/sse", "", 0, &r);
	assert_int_equal(r.mode, HTTPD_REPLY_STREAM);
	free(r.body);
	ask(&f, "/leader/watch/x", "", 0, &r);
	assert_int_equal(r.status, 404);
	assert_int_equal(r.mode, HTTPD_REPLY_NOW);
	free(r.body);
}

static void
stub_cb(const struct http_request *req, struct httpd_reply *reply, void *arg)
{
	(void)req;
	(void)reply;
	(void)arg;
}

static void
stub2_cb(const struct http_request *req, struct httpd_reply *reply, void *arg)
{
	(void)req;
	(void)reply;
	(void)arg;
}

/* Every route of the table: methods, listeners, whose handler. */
static void
test_route_table(void **state)
{
	static const struct {
		const char	*path;
		const char	*methods;
		int		 probes;
		int		 local_only;
		int		 daemon;	/* 1: metrics, 2: release */
	} want[] = {
		{ "/", "GET, HEAD", 0, 0, 0 },
		{ "/leader", "GET, HEAD", 0, 0, 0 },
		{ "/leader/watch", "GET, HEAD", 0, 0, 0 },
		{ "/sse", "GET, HEAD", 0, 0, 0 },
		{ "/healthz", "GET, HEAD", 1, 0, 0 },
		{ "/readyz", "GET, HEAD", 1, 0, 0 },
		{ "/metrics", "GET, HEAD", 3, 0, 1 },
		{ "/leader/release", "POST", 0, 1, 2 },
		{ "/leader/pause", "POST", 0, 1, 2 },
		{ "/leader/resume", "POST", 0, 1, 2 },
	};
	struct fixture			 f;
	const struct httpd_route	*rt;
	int				 dmn = 0;
	size_t				 i;

	(void)state;
	setup(&f);
	rt = localapi_routes(&f.st, stub_cb, stub2_cb, stub2_cb, &dmn);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_non_null(rt[i].path);
		assert_string_equal(rt[i].path, want[i].path);
		assert_string_equal(rt[i].methods, want[i].methods);
		assert_int_equal(rt[i].probes, want[i].probes);
		assert_int_equal(rt[i].local_only, want[i].local_only);
		assert_non_null(rt[i].handler);
		if (want[i].daemon == 0)
			assert_ptr_equal(rt[i].arg, &f.st);
		else {
			assert_ptr_equal(rt[i].arg, &dmn);
			assert_ptr_equal(rt[i].handler, want[i].daemon == 1 ?
			    stub_cb : stub2_cb);
		}
	}
	assert_null(rt[i].path);
	assert_true(i < LOCALAPI_ROUTES);
}

/*
 * A peer that answers every path alike (compat classic): its answer on
 * "/" by any method, and on every path leaderd does not serve; leaderd's
 * own paths and the probes listener stay as they are.
 */
static void
test_route_table_peer(void **state)
{
	static const struct {
		const char	*method;
		const char	*path;
		int		 probes_only;
		int		 status;
		const char	*route;
	} cases[] = {
		{ "GET", "/", 0, 0, "/" },
		{ "POST", "/", 0, 0, "/" },
		{ "GET", "/anything/else", 0, 0, "*" },
		{ "DELETE", "/x", 0, 0, "*" },
		{ "GET", "/leader", 0, 0, "/leader" },
		{ "POST", "/leader", 0, 405, NULL },
		{ "GET", "/healthz", 1, 0, "/healthz" },
		{ "GET", "/x", 1, 404, NULL },
	};
	struct fixture			 f;
	const struct httpd_route	*rt, *route;
	const char			*allow;
	char				 why[256];
	int				 dmn = 0, st;
	size_t				 i;

	(void)state;
	setup(&f);
	snprintf(f.conf.compat, sizeof(f.conf.compat), "classic");
	rt = localapi_routes(&f.st, stub_cb, stub2_cb, stub2_cb, &dmn);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		st = httpd_route_match(rt, cases[i].method, cases[i].path,
		    cases[i].probes_only, 1, &route, &allow, why,
		    sizeof(why));
		assert_int_equal(st, cases[i].status);
		if (cases[i].route == NULL)
			assert_null(route);
		else {
			assert_non_null(route);
			assert_string_equal(route->path, cases[i].route);
		}
	}
	/* Both of the peer's routes give its answer, not leaderd's. */
	assert_ptr_equal(rt[0].handler, peer_classic_root);
	for (i = 0; rt[i].path != NULL; i++)
		if (strcmp(rt[i].path, "*") == 0)
			assert_ptr_equal(rt[i].handler, peer_classic_root);
}

/*
 * compat await: k8s-await-election's mux has "/" alone, so every path
 * and method gets its status, leaderd's own paths included; the answer
 * is client-go's Check(2s): 500 only while the record names us and has
 * not changed for lease_duration + 2s.
 */
static void
test_peer_await(void **state)
{
	static const char *const paths[] = { "/", "/healthz", "/leader",
	    "/metrics", "/leader/release", "/x/y" };
	static const char *const methods[] = { "GET", "HEAD", "POST",
	    "DELETE" };
	struct fixture			 f;
	struct httpd_reply		 reply;
	struct http_request		 req;
	const struct httpd_route	*rt, *route;
	const char			*allow;
	char				 why[256];
	int				 dmn = 0;
	size_t				 i, j;

	(void)state;
	setup(&f);
	snprintf(f.conf.compat, sizeof(f.conf.compat), "await");
	rt = localapi_routes(&f.st, stub_cb, stub2_cb, stub2_cb, &dmn);
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		for (j = 0; j < sizeof(methods) / sizeof(methods[0]); j++) {
			assert_int_equal(httpd_route_match(rt, methods[j],
			    paths[i], 0, 1, &route, &allow, why,
			    sizeof(why)), 0);
			assert_ptr_equal(route->handler, peer_await_root);
		}
	for (i = 0; rt[i].path != NULL; i++)
		assert_ptr_equal(rt[i].handler, peer_await_root);
	assert_int_equal(i, 2);

	memset(&req, 0, sizeof(req));
	/* A follower, however old its observation: ok. */
	observe(&f, "other");
	f.el.observed_ms = 1000;
	memset(&reply, 0, sizeof(reply));
	reply.now_ms = 1000000;
	peer_await_root(&req, &reply, &f.st);
	assert_int_equal(reply.status, 200);
	assert_string_equal(reply.content_type, "text/plain; charset=utf-8");
	assert_int_equal(reply.len, 16);
	assert_memory_equal(reply.body, "{\"status\": \"ok\"}", 16);
	free(reply.body);
	/* Our record, changed 17s ago (15s + 2s): still ok. */
	observe(&f, "me");
	f.el.observed.duration_s = 15;
	memset(&reply, 0, sizeof(reply));
	reply.now_ms = 1000 + 17000;
	peer_await_root(&req, &reply, &f.st);
	assert_int_equal(reply.status, 200);
	free(reply.body);
	/* A millisecond later: expired. */
	memset(&reply, 0, sizeof(reply));
	reply.now_ms = 1000 + 17001;
	peer_await_root(&req, &reply, &f.st);
	assert_int_equal(reply.status, 500);
	assert_string_equal(reply.content_type, "text/plain; charset=utf-8");
	assert_int_equal(reply.len, 21);
	assert_memory_equal(reply.body, "{\"status\": \"expired\"}", 21);
	free(reply.body);
	/* Released (no holder): ok again. */
	observe(&f, "");
	memset(&reply, 0, sizeof(reply));
	reply.now_ms = 1000000;
	peer_await_root(&req, &reply, &f.st);
	assert_int_equal(reply.status, 200);
	free(reply.body);
}

/* What httpd answers from the table, on each kind of listener. */
static void
test_route_match(void **state)
{
	static const struct {
		const char	*method;
		const char	*path;
		int		 probes_only;
		int		 local;
		int		 status;
		const char	*allow;
		const char	*why;
	} cases[] = {
		/* Allowed: the route is found. */
		{ "GET", "/leader", 0, 1, 0, NULL, "" },
		{ "HEAD", "/leader", 0, 0, 0, NULL, "" },
		{ "GET", "/", 0, 0, 0, NULL, "" },
		{ "GET", "/sse", 0, 1, 0, NULL, "" },
		{ "GET", "/healthz", 1, 0, 0, NULL, "" },
		{ "HEAD", "/readyz", 1, 0, 0, NULL, "" },
		{ "GET", "/metrics", 1, 0, 0, NULL, "" },
		{ "POST", "/leader/release", 0, 1, 0, NULL, "" },
		/* A path no route names: 404, whatever the method. */
		{ "GET", "/leaderz", 0, 1, 404, NULL, "not found" },
		{ "POST", "/nope", 0, 1, 404, NULL, "not found" },
		{ "GET", "/leader/watch/x", 0, 1, 404, NULL, "not found" },
		{ "GET", "/healthz/", 0, 1, 404, NULL, "not found" },
		/* Another method: 405 with the route's Allow. */
		{ "POST", "/leader", 0, 1, 405, "GET, HEAD",
		    "method not allowed" },
		{ "DELETE", "/metrics", 1, 0, 405, "GET, HEAD",
		    "method not allowed" },
		{ "GE", "/", 0, 1, 405, "GET, HEAD", "method not allowed" },
		{ "GET", "/leader/release", 0, 1, 405, "POST",
		    "method not allowed; use POST" },
		{ "HEAD", "/leader/release", 0, 0, 405, "POST",
		    "method not allowed; use POST" },
		/* Local only: 403 off the loopback. */
		{ "POST", "/leader/release", 0, 0, 403, NULL,
		    "step-down is served on the unix socket and on a "
		    "loopback listener only" },
		/* The probes listener: its routes only, others 404. */
		{ "GET", "/leader", 1, 0, 404, NULL,
		    "only /healthz, /readyz and /metrics are served here; the "
		    "local API is on the loopback and unix listeners" },
		{ "POST", "/leader/release", 1, 0, 404, NULL,
		    "only /healthz, /readyz and /metrics are served here; the "
		    "local API is on the loopback and unix listeners" },
		{ "GET", "/nope", 1, 0, 404, NULL,
		    "only /healthz, /readyz and /metrics are served here; the "
		    "local API is on the loopback and unix listeners" },
	};
	struct fixture			 f;
	const struct httpd_route	*rt, *route;
	const char			*allow;
	char				 why[256];
	size_t				 i;
	int				 st;

	(void)state;
	setup(&f);
	rt = localapi_routes(&f.st, stub_cb, stub2_cb, NULL, NULL);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why[0] = '\0';
		st = httpd_route_match(rt, cases[i].method, cases[i].path,
		    cases[i].probes_only, cases[i].local, &route, &allow, why,
		    sizeof(why));
		if (st != cases[i].status)
			fail_msg("%s %s (probes %d, local %d): %d, want %d",
			    cases[i].method, cases[i].path,
			    cases[i].probes_only, cases[i].local, st,
			    cases[i].status);
		if (st == 0) {
			assert_non_null(route);
			assert_string_equal(route->path, cases[i].path);
			assert_null(allow);
			continue;
		}
		assert_null(route);
		assert_string_equal(why, cases[i].why);
		if (cases[i].allow == NULL)
			assert_null(allow);
		else
			assert_string_equal(allow, cases[i].allow);
	}
	/* A short buffer truncates the reason, never overruns it. */
	st = httpd_route_match(rt, "GET", "/", 1, 0, &route, &allow, why, 12);
	assert_int_equal(st, 404);
	assert_string_equal(why, "only /healt");
}

/*
 * A request for path?query on a listener (only), as httpd would: the
 * route table's verdict (0: answered, in *r).
 */
static int
ask_on(struct fixture *f, const char *method, const char *path,
    const char *query, int only, struct httpd_reply *r)
{
	const struct httpd_route	*routes, *route;
	struct http_request		 req;
	const char			*allow;
	char				 why[256];
	int				 st;

	memset(&req, 0, sizeof(req));
	snprintf(req.method, sizeof(req.method), "%s", method);
	snprintf(req.path, sizeof(req.path), "%s", path);
	snprintf(req.query, sizeof(req.query), "%s", query);
	memset(r, 0, sizeof(*r));
	r->now_ms = 20000;
	routes = localapi_routes(&f->st, stub_cb, stub2_cb, NULL, NULL);
	st = httpd_route_match(routes, req.method, req.path, only, only == 0,
	    &route, &allow, why, sizeof(why));
	r->status = st;
	if (st == 0)
		route->handler(&req, r, route->arg);
	return st;
}

/* Check an answer's status, type and bytes, then free it. */
static void
expect(struct httpd_reply *r, int status, const char *ctype,
    const char *body)
{
	assert_int_equal(r->status, status);
	assert_string_equal(r->content_type, ctype);
	assert_int_equal(r->len, strlen(body));
	assert_memory_equal(r->body, body, r->len);
	free(r->body);
}

/*
 * compat nais: GET / and every path but /sse answer nais's result, {}
 * before the first one; /sse streams it on the peer's channel; the
 * probes are controller-runtime's, sub-paths included; the metrics
 * listener serves /metrics only.
 */
static void
test_nais(void **state)
{
	struct fixture		 f;
	struct httpd_reply	 r;
	char			*ev;
	size_t			 len;

	(void)state;
	setup(&f);
	snprintf(f.conf.compat, sizeof(f.conf.compat), "nais");
	f.el.conf.for_life = 1;

	ask_on(&f, "GET", "/", "", 0, &r);
	assert_string_equal(r.cache_control, "no-cache");
	expect(&r, 200, "application/json", "{}");
	/* No result while the lock is only found missing (no version). */
	observe(&f, "");
	assert_null(localapi_peer_event(&f.st, 1000, 1, &len));
	ask_on(&f, "POST", "/anything/at/all", "", 0, &r);
	expect(&r, 200, "application/json", "{}");
	/* A record read: the result, and an event for the streams. */
	observe(&f, "pod-a");
	snprintf(f.el.observed.rv, sizeof(f.el.observed.rv), "7");
	ev = localapi_peer_event(&f.st, 1000, 1700000000999999LL, &len);
	assert_non_null(ev);
	assert_string_equal(ev, "data: {\"name\":\"pod-a\",\"last_update\":"
	    "\"2023-11-14T22:13:20Z\"}\n\n");
	assert_int_equal(len, strlen(ev));
	free(ev);
	assert_null(localapi_peer_event(&f.st, 1001, 1800000000000000LL,
	    &len));
	ask_on(&f, "DELETE", "/", "", 0, &r);
	expect(&r, 200, "application/json",
	    "{\"name\":\"pod-a\",\"last_update\":\"2023-11-14T22:13:20Z\"}");
	/* leaderd's own paths stay. */
	assert_int_equal(ask_on(&f, "GET", "/leader", "", 0, &r), 0);
	assert_int_equal(r.mode, HTTPD_REPLY_NOW);
	free(r.body);
	/* The Lease deleted: nais keeps its last result. */
	observe(&f, "");
	f.el.observed.rv[0] = '\0';
	assert_null(localapi_peer_event(&f.st, 1002, 2, &len));
	ask_on(&f, "GET", "/", "", 0, &r);
	expect(&r, 200, "application/json",
	    "{\"name\":\"pod-a\",\"last_update\":\"2023-11-14T22:13:20Z\"}");

	ask_on(&f, "GET", "/sse", "", 0, &r);
	assert_int_equal(r.mode, HTTPD_REPLY_STREAM);
	assert_int_equal(r.chunked, 1);
	assert_int_equal(r.channel, LOCALAPI_PEER_CHANNEL);
	assert_null(r.ping);
	expect(&r, 200, "text/event-stream", "data: {\"name\":\"pod-a\","
	    "\"last_update\":\"2023-11-14T22:13:20Z\"}\n\n");

	/* Probes: readyz waits for the pod (candidate) and a result. */
	f.st.ready = 0;
	ask_on(&f, "GET", "/readyz", "", HTTPD_ONLY_PROBES, &r);
	assert_string_equal(r.headers, "X-Content-Type-Options: nosniff\r\n");
	assert_string_equal(r.cache_control, "");
	expect(&r, 500, "text/plain; charset=utf-8",
	    "[-]candidate failed: reason withheld\n"
	    "[-]official failed: reason withheld\nhealthz check failed\n");
	ask_on(&f, "GET", "/readyz/candidate", "", HTTPD_ONLY_PROBES, &r);
	expect(&r, 500, "text/plain; charset=utf-8",
	    "internal server error: candidate has not performed setup\n");
	ask_on(&f, "GET", "/readyz", "exclude=official&exclude=x",
	    HTTPD_ONLY_PROBES, &r);
	expect(&r, 500, "text/plain; charset=utf-8",
	    "[-]candidate failed: reason withheld\n"
	    "[+]official excluded: ok\n"
	    "warn: some health checks cannot be excluded: no matches for "
	    "\"x\"\nhealthz check failed\n");
	f.st.owner_read = 1;
	f.st.ready = 1;
	ask_on(&f, "HEAD", "/readyz/", "", HTTPD_ONLY_PROBES, &r);
	expect(&r, 200, "text/plain; charset=utf-8", "ok");
	ask_on(&f, "GET", "/readyz", "verbose", HTTPD_ONLY_PROBES, &r);
	expect(&r, 200, "text/plain; charset=utf-8",
	    "[+]candidate ok\n[+]official ok\nhealthz check passed\n");
	ask_on(&f, "GET", "/readyz/official", "", HTTPD_ONLY_PROBES, &r);
	assert_string_equal(r.headers, "");
	expect(&r, 200, "text/plain; charset=utf-8", "ok");
	ask_on(&f, "GET", "/healthz/manager/", "", HTTPD_ONLY_PROBES, &r);
	expect(&r, 200, "text/plain; charset=utf-8", "ok");
	ask_on(&f, "GET", "/healthz/x/y", "", HTTPD_ONLY_PROBES, &r);
	expect(&r, 404, "text/plain; charset=utf-8", "404 page not found\n");
	/* A stuck loop fails healthz's one check: a wake 19 s late. */
	f.st.wake_ms = 1000;
	ask_on(&f, "GET", "/healthz", "", HTTPD_ONLY_PROBES, &r);
	expect(&r, 500, "text/plain; charset=utf-8",
	    "[-]manager failed: reason withheld\nhealthz check failed\n");
	f.st.wake_ms = 0;
	assert_int_equal(ask_on(&f, "GET", "/leader", "", HTTPD_ONLY_PROBES,
	    &r), 404);

	/* The metrics listener: /metrics only. */
	assert_int_equal(ask_on(&f, "GET", "/metrics", "", HTTPD_ONLY_METRICS,
	    &r), 0);
	assert_int_equal(ask_on(&f, "GET", "/healthz", "", HTTPD_ONLY_METRICS,
	    &r), 404);
	assert_int_equal(ask_on(&f, "GET", "/", "", HTTPD_ONLY_METRICS, &r),
	    404);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_changed),
		cmocka_unit_test(test_event),
		cmocka_unit_test(test_parse_wait),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_route_table),
		cmocka_unit_test(test_route_table_peer),
		cmocka_unit_test(test_peer_await),
		cmocka_unit_test(test_route_match),
		cmocka_unit_test(test_nais),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
