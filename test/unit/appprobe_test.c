/*
 * appprobe_test.c -- the application probe (actions/appprobe.c, and the
 * GET of api/httpget.c under it) on a real libev default loop and curl
 * multi handle, against servers on 127.0.0.1 ports this test binds and
 * runs on the same loop: statuses 200, 302 and 500, a server that never
 * answers, one that answers late, one that trickles, floods of body and
 * of headers, a port with nothing listening, TCP connects that succeed,
 * are refused or hang on a full accept queue, the period's timing, and
 * freeing a probe while it runs or from its callback.
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <ev.h>

#include "actions/appprobe.h"
#include "api/curlev.h"
#include "api/httpget.h"

#define MAX_RESULTS	32
#define MAX_CONNS	8
#define SLACK_MS	150	/* a loaded machine's lateness, at most */

/* What a test server does with a request. */
enum srv_mode {
	SRV_STATUS,		/* answer status at once */
	SRV_SILENT,		/* read, never answer */
	SRV_SLOW,		/* answer 200 after delay_ms */
	SRV_TRICKLE,		/* 200, then a body byte every 20 ms */
	SRV_FLOOD_BODY,		/* 200, then an endless body */
	SRV_FLOOD_HEAD		/* a status line, then endless headers */
};

struct conn {
	struct srv	*s;
	int		 fd;		/* -1 once closed */
	ev_io		 rio;		/* the request, then EOF */
	ev_io		 wio;		/* floods: writable */
	ev_timer	 later;		/* slow answer, trickle */
	char		 req[2048];	/* the request as read */
	size_t		 len;
	int		 answered;	/* the request was complete */
	int		 eof;		/* the client closed */
};

struct srv {
	int		 fd;		/* listening; -1 if none */
	int		 port;
	ev_io		 aio;		/* accept */
	enum srv_mode	 mode;
	int		 status;	/* SRV_STATUS */
	int		 delay_ms;	/* SRV_SLOW */
	int		 accepts;	/* connections accepted */
	int		 requests;	/* complete requests read */
	size_t		 flooded;	/* bytes of a flood sent */
	struct conn	 conns[MAX_CONNS];
	int		 nconns;
};

/* What the probe reported. */
struct results {
	int		 n;
	int		 ok[MAX_RESULTS];
	uint64_t	 took_ms[MAX_RESULTS];
	uint64_t	 at_ms[MAX_RESULTS];	/* when the callback ran */
	char		 why[MAX_RESULTS][128];
	int		 free_in_cb;		/* free the probe at once */
};

/* One test's objects, freed by teardown even after a failure. */
static struct {
	struct curlev	*cv;
	struct appprobe	*p;
	struct srv	 srv;
	struct results	 r;
	uint64_t	 start_ms;	/* when the probe was made */
	int		 fill[8];	/* sockets filling an accept queue */
	int		 nfill;
} fx;

static uint64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* --- the test servers ------------------------------------------------ */

static void
conn_close(struct conn *c)
{
	ev_io_stop(EV_DEFAULT, &c->rio);
	ev_io_stop(EV_DEFAULT, &c->wio);
	ev_timer_stop(EV_DEFAULT, &c->later);
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
}

static void
conn_send(struct conn *c, const char *s)
{
	/* Small answers fit in an empty socket buffer. */
	if (send(c->fd, s, strlen(s), MSG_NOSIGNAL) == -1)
		conn_close(c);
}

static void
flood_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct conn	*c = w->data;
	static char	 chunk[16384];
	static char	 head[16384];
	ssize_t		 n;

	(void)loop;
	(void)revents;
	if (chunk[0] == '\0') {
		memset(chunk, 'x', sizeof(chunk));
		/* Header lines of 64 bytes. */
		for (n = 0; n < (ssize_t)sizeof(head); n++)
			head[n] = n % 64 == 62 ? '\r' : n % 64 == 63 ? '\n' :
			    n % 64 < 7 ? "X-Flood"[n % 64] : n % 64 == 7 ?
			    ':' : 'a';
	}
	for (;;) {
		/* From where the last send stopped, so lines stay whole. */
		n = send(c->fd, (c->s->mode == SRV_FLOOD_HEAD ? head : chunk) +
		    c->s->flooded % 64, sizeof(chunk) - 64, MSG_NOSIGNAL);
		if (n > 0) {
			c->s->flooded += (size_t)n;
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		conn_close(c);
		return;
	}
}

static void
later_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct conn	*c = w->data;

	(void)loop;
	(void)revents;
	if (c->s->mode == SRV_SLOW) {
		conn_send(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
		    "Connection: close\r\n\r\nok");
		ev_timer_stop(EV_DEFAULT, &c->later);
		return;
	}
	/* SRV_TRICKLE: one more byte of a body that never ends. */
	if (send(c->fd, "x", 1, MSG_NOSIGNAL) == -1)
		conn_close(c);
}

static void
answer(struct conn *c)
{
	struct srv	*s = c->s;
	char		 buf[256];

	switch (s->mode) {
	case SRV_STATUS:
		snprintf(buf, sizeof(buf), "HTTP/1.1 %d Some Reason\r\n"
		    "Content-Length: 2\r\nConnection: close\r\n%s\r\nok",
		    s->status, s->status / 100 == 3 ?
		    "Location: /moved\r\n" : "");
		conn_send(c, buf);
		break;
	case SRV_SILENT:
		break;
	case SRV_SLOW:
		ev_timer_set(&c->later, s->delay_ms / 1000.0, 0.);
		ev_timer_start(EV_DEFAULT, &c->later);
		break;
	case SRV_TRICKLE:
		conn_send(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
		ev_timer_set(&c->later, 0.02, 0.02);
		ev_timer_start(EV_DEFAULT, &c->later);
		break;
	case SRV_FLOOD_BODY:
		conn_send(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
		ev_io_start(EV_DEFAULT, &c->wio);
		break;
	case SRV_FLOOD_HEAD:
		conn_send(c, "HTTP/1.1 200 OK\r\n");
		ev_io_start(EV_DEFAULT, &c->wio);
		break;
	}
}

static void
read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct conn	*c = w->data;
	char		 buf[1024];
	ssize_t		 n;

	(void)loop;
	(void)revents;
	if ((n = recv(c->fd, buf, sizeof(buf), 0)) <= 0) {
		if (n == -1 && errno == EAGAIN)
			return;
		c->eof = 1;
		conn_close(c);
		return;
	}
	if (c->answered)
		return;
	if ((size_t)n > sizeof(c->req) - 1 - c->len)
		n = (ssize_t)(sizeof(c->req) - 1 - c->len);
	memcpy(c->req + c->len, buf, (size_t)n);
	c->len += (size_t)n;
	c->req[c->len] = '\0';
	if (strstr(c->req, "\r\n\r\n") == NULL)
		return;
	c->answered = 1;
	c->s->requests++;
	answer(c);
}

static void
accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct srv	*s = w->data;
	struct conn	*c;
	int		 fd;

	(void)loop;
	(void)revents;
	if ((fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC))
	    == -1)
		return;
	s->accepts++;
	if (s->nconns == MAX_CONNS) {
		close(fd);
		return;
	}
	c = &s->conns[s->nconns++];
	memset(c, 0, sizeof(*c));
	c->s = s;
	c->fd = fd;
	ev_io_init(&c->rio, read_cb, fd, EV_READ);
	c->rio.data = c;
	ev_io_init(&c->wio, flood_cb, fd, EV_WRITE);
	c->wio.data = c;
	ev_init(&c->later, later_cb);
	c->later.data = c;
	ev_io_start(EV_DEFAULT, &c->rio);
}

/* A socket bound to 127.0.0.1 on a free port; its port in *port. */
static int
bind_loopback(int *port)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	*port = ntohs(sin.sin_port);
	return fd;
}

/* Start fx.srv in mode on a fresh port, listening with backlog. */
static void
srv_start(enum srv_mode mode, int status, int backlog)
{
	struct srv	*s = &fx.srv;

	s->mode = mode;
	s->status = status;
	s->fd = bind_loopback(&s->port);
	assert_int_equal(listen(s->fd, backlog), 0);
	ev_io_init(&s->aio, accept_cb, s->fd, EV_READ);
	s->aio.data = s;
	ev_io_start(EV_DEFAULT, &s->aio);
}

static void
srv_stop(struct srv *s)
{
	int	 i;

	for (i = 0; i < s->nconns; i++)
		conn_close(&s->conns[i]);
	s->nconns = 0;
	ev_io_stop(EV_DEFAULT, &s->aio);
	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
}

/* A port on 127.0.0.1 with nothing listening (bound, then closed). */
static int
dead_port(void)
{
	int	 fd, port;

	fd = bind_loopback(&port);
	close(fd);
	return port;
}

/* --- the probe ------------------------------------------------------- */

static void
result_cb(int ok, uint64_t took_ms, const char *why, void *arg)
{
	struct results	*r = arg;

	assert_non_null(why);
	if (r->n < MAX_RESULTS) {
		r->ok[r->n] = ok;
		r->took_ms[r->n] = took_ms;
		r->at_ms[r->n] = now_ms();
		snprintf(r->why[r->n], sizeof(r->why[0]), "%s", why);
	}
	r->n++;
	if (r->free_in_cb) {
		appprobe_free(fx.p);
		fx.p = NULL;
	}
}

static void
probe_start(const char *url, uint64_t period_ms, uint64_t timeout_ms)
{
	struct appprobe_config	 conf;
	char			 err[256] = "";

	memset(&conf, 0, sizeof(conf));
	snprintf(conf.url, sizeof(conf.url), "%s", url);
	conf.period_ms = period_ms;
	conf.timeout_ms = timeout_ms;
	fx.start_ms = now_ms();
	fx.p = appprobe_new(EV_DEFAULT, fx.cv, &conf, result_cb, &fx.r, err,
	    sizeof(err));
	if (fx.p == NULL)
		fail_msg("appprobe_new(%s): %s", url, err);
}

/* "http://127.0.0.1:PORT/PATH" for the test server. */
static const char *
srv_url(const char *scheme, const char *path)
{
	static char	 url[128];

	snprintf(url, sizeof(url), "%s://127.0.0.1:%d%s", scheme,
	    fx.srv.port, path);
	return url;
}

static void
limit_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

/* Run the loop until n results came, or ms passed. */
static void
run_until(int n, uint64_t ms)
{
	ev_timer	 limit;

	ev_now_update(EV_DEFAULT);
	ev_timer_init(&limit, limit_cb, ms / 1000.0, 0.);
	ev_timer_start(EV_DEFAULT, &limit);
	while (fx.r.n < n && ev_is_active(&limit))
		ev_run(EV_DEFAULT, EVRUN_ONCE);
	ev_timer_stop(EV_DEFAULT, &limit);
}

/* Run the loop for ms, whatever comes. */
static void
run_for(uint64_t ms)
{
	run_until(MAX_RESULTS * 100, ms);
}

/* One probe's result, with its why and took_ms. */
static void
expect_one(int ok, const char *why)
{
	if (fx.r.n < 1)
		fail_msg("no result");
	if (fx.r.ok[0] != ok || strcmp(fx.r.why[0], why) != 0)
		fail_msg("got ok %d \"%s\" after %llu ms, want ok %d \"%s\"",
		    fx.r.ok[0], fx.r.why[0],
		    (unsigned long long)fx.r.took_ms[0], ok, why);
}

static int
setup(void **state)
{
	char	 err[256];

	(void)state;
	memset(&fx, 0, sizeof(fx));
	fx.srv.fd = -1;
	if ((fx.cv = curlev_new(EV_DEFAULT, err, sizeof(err))) == NULL) {
		fprintf(stderr, "curlev_new: %s\n", err);
		return -1;
	}
	return 0;
}

static int
teardown(void **state)
{
	int	 i;

	(void)state;
	appprobe_free(fx.p);
	fx.p = NULL;
	srv_stop(&fx.srv);
	for (i = 0; i < fx.nfill; i++)
		close(fx.fill[i]);
	curlev_free(fx.cv);
	/* Let the loop forget what was stopped. */
	ev_run(EV_DEFAULT, EVRUN_NOWAIT);
	return 0;
}

/* --- HTTP ------------------------------------------------------------ */

/*
 * 200: healthy, one GET of the path with the query, leaderd's
 * User-Agent and the Host curl makes; the proxy in the environment
 * (main sets http_proxy to a dead port) is not used.
 */
static void
test_http_200(void **state)
{
	struct conn	*c = &fx.srv.conns[0];
	char		 host[64], *hdr;

	(void)state;
	srv_start(SRV_STATUS, 200, 16);
	probe_start(srv_url("http", "/healthz?deep=1"), 10000, 1000);
	run_until(1, 2000);
	expect_one(1, "status 200");
	assert_true(fx.r.took_ms[0] < 500);
	assert_int_equal(fx.srv.requests, 1);
	assert_true(strncmp(c->req, "GET /healthz?deep=1 HTTP/1.1\r\n",
	    30) == 0);
	snprintf(host, sizeof(host), "\r\nHost: 127.0.0.1:%d\r\n",
	    fx.srv.port);
	assert_non_null(strstr(c->req, host));
	assert_non_null(strstr(c->req, "\r\nUser-Agent: leaderd/"
	    LEADERD_VERSION "\r\n"));
	/* One User-Agent only, and no proxy header. */
	hdr = strstr(c->req, "User-Agent:");
	assert_null(strstr(hdr + 1, "User-Agent:"));
	assert_null(strstr(c->req, "Proxy-"));
}

/* A 302 is healthy and not followed: one request only. */
static void
test_http_302_not_followed(void **state)
{
	(void)state;
	srv_start(SRV_STATUS, 302, 16);
	probe_start(srv_url("http", "/healthz"), 10000, 1000);
	run_until(1, 2000);
	expect_one(1, "status 302");
	run_for(200);
	assert_int_equal(fx.r.n, 1);
	assert_int_equal(fx.srv.requests, 1);
	assert_int_equal(fx.srv.accepts, 1);
}

static void
test_http_500(void **state)
{
	(void)state;
	srv_start(SRV_STATUS, 500, 16);
	probe_start(srv_url("http", "/"), 10000, 1000);
	run_until(1, 2000);
	expect_one(0, "status 500");
}

/*
 * The edges of the kubelet's range, 200 <= status < 400.  (Below 200 a
 * status is informational and curl waits for the final one.)
 */
static void
test_http_edges_of_the_range(void **state)
{
	static const int statuses[] = { 400, 399, 200, 404, 503 };
	char		 want[32];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		memset(&fx.r, 0, sizeof(fx.r));
		srv_start(SRV_STATUS, statuses[i], 16);
		probe_start(srv_url("http", "/"), 10000, 1000);
		run_until(1, 2000);
		snprintf(want, sizeof(want), "status %d", statuses[i]);
		expect_one(statuses[i] >= 200 && statuses[i] < 400, want);
		appprobe_free(fx.p);
		fx.p = NULL;
		srv_stop(&fx.srv);
		fx.srv.requests = fx.srv.accepts = 0;
	}
}

/* A server that accepts and never answers: a failure at the timeout. */
static void
test_http_timeout(void **state)
{
	struct conn	*c = &fx.srv.conns[0];

	(void)state;
	srv_start(SRV_SILENT, 0, 16);
	probe_start(srv_url("http", "/"), 10000, 300);
	run_until(1, 2000);
	expect_one(0, "timed out after 300 ms");
	fprintf(stderr, "  timeout 300 ms: reported after %llu ms\n",
	    (unsigned long long)fx.r.took_ms[0]);
	assert_true(fx.r.took_ms[0] >= 290);
	assert_true(fx.r.took_ms[0] <= 300 + SLACK_MS);
	/* The connection was dropped with the probe. */
	run_for(100);
	assert_int_equal(fx.srv.requests, 1);
	assert_int_equal(c->eof, 1);
}

static void
test_http_refused(void **state)
{
	char	 url[64];

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/healthz",
	    dead_port());
	probe_start(url, 10000, 1000);
	run_until(1, 2000);
	expect_one(0, "connection refused");
	assert_true(fx.r.took_ms[0] < 500);
}

/* A slow answer inside the timeout is healthy; outside, it is not. */
static void
test_http_slow(void **state)
{
	(void)state;
	srv_start(SRV_SLOW, 0, 16);
	fx.srv.delay_ms = 200;
	probe_start(srv_url("http", "/"), 10000, 1000);
	run_until(1, 2000);
	expect_one(1, "status 200");
	assert_true(fx.r.took_ms[0] >= 190);
	assert_true(fx.r.took_ms[0] <= 200 + SLACK_MS);

	appprobe_free(fx.p);
	memset(&fx.r, 0, sizeof(fx.r));
	fx.srv.delay_ms = 600;
	probe_start(srv_url("http", "/"), 10000, 300);
	run_until(1, 2000);
	expect_one(0, "timed out after 300 ms");
	assert_true(fx.r.took_ms[0] <= 300 + SLACK_MS);
}

/*
 * A 200 whose body never ends: the probe reads the kubelet's 10 KiB,
 * drops them and is done, long before its timeout.
 */
static void
test_http_flood_body(void **state)
{
	(void)state;
	srv_start(SRV_FLOOD_BODY, 0, 16);
	probe_start(srv_url("http", "/"), 10000, 2000);
	run_until(1, 3000);
	expect_one(1, "status 200");
	fprintf(stderr, "  endless body: done after %llu ms, %zu bytes sent "
	    "by then\n", (unsigned long long)fx.r.took_ms[0],
	    fx.srv.flooded);
	assert_true(fx.r.took_ms[0] < 500);
	/* The server sees the connection closed. */
	run_for(100);
	assert_int_equal(fx.srv.conns[0].fd, -1);
}

/* Endless response headers: refused at 64 KiB, not run to the timeout. */
static void
test_http_flood_headers(void **state)
{
	char	 want[64];

	(void)state;
	srv_start(SRV_FLOOD_HEAD, 0, 16);
	probe_start(srv_url("http", "/"), 10000, 2000);
	run_until(1, 3000);
	snprintf(want, sizeof(want), "response headers over %d KiB",
	    HTTPGET_HEAD_MAX / 1024);
	expect_one(0, want);
	fprintf(stderr, "  endless headers: failed after %llu ms\n",
	    (unsigned long long)fx.r.took_ms[0]);
	assert_true(fx.r.took_ms[0] < 500);
}

/* A body trickling forever, under the cap: ended by the timeout. */
static void
test_http_trickle_ends_at_timeout(void **state)
{
	(void)state;
	srv_start(SRV_TRICKLE, 0, 16);
	probe_start(srv_url("http", "/"), 10000, 300);
	run_until(1, 2000);
	expect_one(0, "timed out after 300 ms");
	assert_true(fx.r.took_ms[0] >= 290);
	assert_true(fx.r.took_ms[0] <= 300 + SLACK_MS);
}

/* --- TCP ------------------------------------------------------------- */

/* A connect that succeeds is healthy, and the socket is closed at once. */
static void
test_tcp_ok(void **state)
{
	(void)state;
	srv_start(SRV_SILENT, 0, 16);
	probe_start(srv_url("tcp", ""), 10000, 1000);
	run_until(1, 2000);
	expect_one(1, "connected");
	assert_true(fx.r.took_ms[0] < 500);
	run_for(100);
	assert_int_equal(fx.srv.accepts, 1);
	assert_int_equal(fx.srv.requests, 0);
	assert_int_equal(fx.srv.conns[0].eof, 1);
}

static void
test_tcp_refused(void **state)
{
	char	 url[64];

	(void)state;
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", dead_port());
	probe_start(url, 10000, 1000);
	run_until(1, 2000);
	expect_one(0, "connection refused");
	assert_true(fx.r.took_ms[0] < 500);
}

/* "localhost" is both loopbacks: the IPv4 listener is found. */
static void
test_tcp_localhost(void **state)
{
	char	 url[64];

	(void)state;
	srv_start(SRV_SILENT, 0, 16);
	snprintf(url, sizeof(url), "tcp://localhost:%d", fx.srv.port);
	probe_start(url, 10000, 1000);
	run_until(1, 2000);
	expect_one(1, "connected");
}

/* The number of file descriptors this process has open. */
static int
open_fds(void)
{
	DIR		*d;
	struct dirent	*de;
	int		 n = 0;

	assert_non_null(d = opendir("/proc/self/fd"));
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * A listener with backlog 0 that never accepts: once its queue holds a
 * connection, the kernel drops further SYNs, so a connect hangs.  Fill
 * it until a connect does not complete within 100 ms.
 */
static void
fill_accept_queue(void)
{
	struct sockaddr_in	 sin;
	struct pollfd		 pfd;
	int			 fd;

	srv_start(SRV_SILENT, 0, 0);
	ev_io_stop(EV_DEFAULT, &fx.srv.aio);	/* never accept */
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(fx.srv.port);
	while (fx.nfill < 8) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		assert_true(fd >= 0);
		fx.fill[fx.nfill++] = fd;
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0)
			continue;
		assert_int_equal(errno, EINPROGRESS);
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, 100) == 0)
			return;
	}
	fail_msg("the accept queue did not fill");
}

/* A connect that hangs: a failure at the timeout. */
static void
test_tcp_timeout(void **state)
{
	(void)state;
	fill_accept_queue();
	probe_start(srv_url("tcp", ""), 10000, 300);
	run_until(1, 2000);
	expect_one(0, "timed out after 300 ms");
	assert_true(fx.r.took_ms[0] >= 290);
	assert_true(fx.r.took_ms[0] <= 300 + SLACK_MS);
}

/* --- timing and freeing ---------------------------------------------- */

/* The first probe at once, then one every period from the last start. */
static void
test_period(void **state)
{
	int	 i;
	int64_t	 gap;

	(void)state;
	srv_start(SRV_STATUS, 200, 16);
	probe_start(srv_url("http", "/"), 100, 50);
	run_until(6, 2000);
	assert_int_equal(fx.r.n, 6);
	assert_true(fx.r.at_ms[0] - fx.start_ms < 50);
	for (i = 1; i < 6; i++) {
		gap = (int64_t)(fx.r.at_ms[i] - fx.r.at_ms[i - 1]);
		fprintf(stderr, "  period 100 ms: result %d after %lld ms\n",
		    i, (long long)gap);
		assert_int_equal(fx.r.ok[i], 1);
		assert_true(gap >= 60 && gap <= 140);
	}
	/* Drift-free: six starts span five periods. */
	gap = (int64_t)(fx.r.at_ms[5] - fx.r.at_ms[0]);
	assert_true(gap >= 450 && gap <= 560);
	assert_int_equal(fx.srv.requests, 6);
}

/*
 * A period shorter than the timeout bounds each probe: the one still
 * running when the next is due is reported as timed out.
 */
static void
test_period_shorter_than_timeout(void **state)
{
	int	 i;

	(void)state;
	srv_start(SRV_SILENT, 0, 16);
	probe_start(srv_url("http", "/"), 150, 1000);
	run_until(3, 2000);
	assert_int_equal(fx.r.n, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(fx.r.ok[i], 0);
		assert_string_equal(fx.r.why[i], "timed out after 150 ms");
		assert_true(fx.r.took_ms[i] <= 150 + SLACK_MS);
	}
	assert_true(fx.r.at_ms[2] - fx.r.at_ms[0] >= 250);
}

/* Freed while a GET runs: no callback, and the connection is dropped. */
static void
test_free_during_http_probe(void **state)
{
	(void)state;
	srv_start(SRV_SILENT, 0, 16);
	probe_start(srv_url("http", "/"), 10000, 300);
	run_for(100);
	assert_int_equal(fx.srv.requests, 1);	/* it is running */
	appprobe_free(fx.p);
	fx.p = NULL;
	run_for(400);
	assert_int_equal(fx.r.n, 0);
	assert_int_equal(fx.srv.conns[0].eof, 1);
	assert_int_equal(curlev_running(fx.cv), 0);
}

/* Freed while a connect hangs: no callback, and its socket closed. */
static void
test_free_during_tcp_probe(void **state)
{
	int	 before;

	(void)state;
	fill_accept_queue();
	before = open_fds();
	probe_start(srv_url("tcp", ""), 10000, 300);
	run_for(100);
	assert_int_equal(open_fds(), before + 1);	/* connecting */
	appprobe_free(fx.p);
	fx.p = NULL;
	assert_int_equal(open_fds(), before);
	run_for(400);
	assert_int_equal(fx.r.n, 0);
}

/* Freed from its own callback: nothing after, nothing touched. */
static void
test_free_from_callback(void **state)
{
	char	 url[64];

	(void)state;
	srv_start(SRV_STATUS, 200, 16);
	fx.r.free_in_cb = 1;
	probe_start(srv_url("http", "/"), 50, 1000);
	run_for(300);
	assert_int_equal(fx.r.n, 1);
	assert_null(fx.p);

	/* The same for a TCP probe, refused inside the period timer. */
	memset(&fx.r, 0, sizeof(fx.r));
	fx.r.free_in_cb = 1;
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", dead_port());
	probe_start(url, 50, 1000);
	run_for(300);
	assert_int_equal(fx.r.n, 1);
	assert_int_equal(fx.r.ok[0], 0);
}

/* Nothing is probed before the loop runs. */
static void
test_nothing_before_the_loop(void **state)
{
	(void)state;
	srv_start(SRV_STATUS, 200, 16);
	probe_start(srv_url("http", "/"), 10000, 1000);
	assert_int_equal(fx.r.n, 0);
	assert_int_equal(curlev_running(fx.cv), 0);
	run_until(1, 2000);
	expect_one(1, "status 200");
}

/* URLs and settings that cannot be probed. */
static void
test_refused_config(void **state)
{
	static const struct {
		const char	*url;
		uint64_t	 period_ms, timeout_ms;
		const char	*err;
	} cases[] = {
		{ "https://127.0.0.1:8443/healthz", 1000, 1000,
		    "the scheme \"https\" cannot be probed" },
		{ "ftp://127.0.0.1:21/", 1000, 1000,
		    "the scheme \"ftp\" cannot be probed" },
		{ "tcp://127.0.0.1:80/x", 1000, 1000,
		    "a tcp:// probe has no path" },
		{ "http://127.0.0.1/healthz", 1000, 1000,
		    "it must be host:port" },
		{ "http://127.0.0.1:0/healthz", 1000, 1000,
		    "is not a port number" },
		{ "127.0.0.1:8080", 1000, 1000, "it must be a URL" },
		{ "http://127.0.0.1:80/", 0, 1000, "more than 0" },
		{ "http://127.0.0.1:80/", 1000, 0, "more than 0" },
	};
	struct appprobe_config	 conf;
	struct appprobe		*p;
	char			 err[256];
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&conf, 0, sizeof(conf));
		snprintf(conf.url, sizeof(conf.url), "%s", cases[i].url);
		conf.period_ms = cases[i].period_ms;
		conf.timeout_ms = cases[i].timeout_ms;
		err[0] = '\0';
		p = appprobe_new(EV_DEFAULT, fx.cv, &conf, result_cb, &fx.r,
		    err, sizeof(err));
		if (p != NULL || strstr(err, cases[i].err) == NULL)
			fail_msg("%s: got %s \"%s\", want NULL and \"%s\"",
			    cases[i].url, p != NULL ? "a probe" : "NULL",
			    err, cases[i].err);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_http_200, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_http_302_not_followed,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_500, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_http_edges_of_the_range,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_timeout, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_http_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_http_slow, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_http_flood_body, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_http_flood_headers,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(
		    test_http_trickle_ends_at_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tcp_ok, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tcp_refused, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tcp_localhost, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_tcp_timeout, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_period, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    test_period_shorter_than_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_during_http_probe,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_during_tcp_probe,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_from_callback,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_before_the_loop,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_config, setup,
		    teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	/* A proxy that is not there: the probe must not use it. */
	setenv("http_proxy", "http://127.0.0.1:9", 1);
	setenv("HTTP_PROXY", "http://127.0.0.1:9", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
