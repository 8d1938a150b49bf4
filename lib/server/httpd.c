/*
 * httpd.c -- the local HTTP/1.1 server on the daemon's libev loop.
 *
 * Listeners accept a few connections per wakeup (redis'
 * max_new_conns_per_cycle).  At HTTPD_MAX_CONNS the connection that has
 * waited longest in its current phase (idle since its last reply, or in
 * a request since its first byte) is closed to make room, so a flood of
 * idle or slowloris connections cannot lock out a probe (F24).  On
 * EMFILE/ENFILE accept pauses until a connection closes (OpenSMTPD
 * control_accept).
 * Each connection reads into a small buffer, feeds http_parse, answers
 * each complete request through the handler and writes the reply
 * without blocking.  While a reply is unsent, the connection reads no
 * more (a client pipelining requests without reading is throttled, and
 * dropped past HTTPD_OUT_MAX).  One timer per connection bounds both
 * idleness and slowness: an idle connection lives HTTPD_IDLE_MS, and a
 * request must be complete, and its reply sent, within HTTPD_IDLE_MS of
 * its first byte, however slowly the bytes trickle in.
 *
 * A request the handler asks to wait parks its connection (CONN_WAIT):
 * the parser keeps the request, nothing more is parsed, and the timer
 * becomes the end of the wait.  A stream (CONN_STREAM) has sent its
 * headers and lives on without a timer; its input is read and dropped,
 * to see the client go.  Neither kind counts against HTTPD_MAX_CONNS
 * nor can be evicted: each has its own cap, so a flood of idle or slow
 * connections and a full set of streams still leave room for a probe.
 *
 * A connection is freed only by conn_close, which every path calls as
 * its last action on the connection.
 */

#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/netaddr.h"
#include "base/sock.h"
#include "base/text.h"
#include "base/xmalloc.h"
#include "server/httpd.h"

#define LISTEN_MAX		4	/* listeners per server */
#define HTTPD_PEER_MAX_STR	"8"	/* HTTPD_PEER_MAX, for messages */
#define ACCEPT_PER_CYCLE	16	/* connections accepted per wakeup */
#define ACCEPT_RETRY_S		1.0	/* retry accept after EMFILE */
#define CONN_IN_MAX		2048	/* read buffer per connection */
#define WARN_EVERY_S		60.0	/* repeat accept warnings this often */
#define LINGER_S		2.0	/* drain input this long before close */
#define LINGER_MAX		65536	/* or this many bytes */
#define STREAMS_DEFAULT		64	/* streams, and waiting requests */
#define STREAM_SNDBUF		16384	/* a stream's socket send buffer */

enum conn_kind {
	CONN_PLAIN,		/* requests and replies */
	CONN_WAIT,		/* a request waits for its answer */
	CONN_STREAM		/* a stream after its headers */
};

struct httpd_listener {
	struct httpd	*h;
	int		 fd;
	int		 is_unix;
	struct ev_io	 io;		/* io.data = this */
	char		 host[256];	/* configured TCP host, for Host checks */
	int		 probes_only;	/* /healthz, /readyz, /metrics only */
	int		 loopback;	/* TCP bound to a loopback address */
};

struct httpd_conn {
	struct httpd		*h;
	struct httpd_listener	*l;		/* accepted on */
	int			 fd;
	int			 remote;	/* a TCP peer off the loopback */
	struct sockaddr_storage	 peer;		/* its address, if remote */
	struct ev_io		 rio;		/* rio.data = this */
	struct ev_io		 wio;		/* wio.data = this */
	struct ev_timer		 timer;		/* idle / request deadline */
	struct http_parser	 parser;
	char			 in[CONN_IN_MAX];
	size_t			 inoff;		/* first byte not yet parsed */
	size_t			 inlen;		/* bytes in in[] */
	char			*out;		/* unsent reply bytes */
	size_t			 outoff;
	size_t			 outlen;
	size_t			 outcap;
	int			 in_request;	/* a request has begun */
	int			 closing;	/* close once out is sent */
	int			 overflow;	/* out would pass HTTPD_OUT_MAX */
	int			 eof;		/* the peer sent EOF */
	int			 lingering;	/* reply sent, draining input */
	size_t			 drained;	/* bytes drained meanwhile */
	ev_tstamp		 phase_at;	/* opened, or last reply queued */
	enum conn_kind		 kind;		/* plain, waiting or stream */
	const char		*ping;		/* stream keep-alive, static */
	struct httpd_conn	*prev, *next;
};

struct httpd {
	struct ev_loop		*loop;
	httpd_handler_cb	 handler;
	void			*arg;
	struct httpd_listener	 ls[LISTEN_MAX];
	int			 nls;
	int			 tcp_port;	/* first TCP listener, or -1 */
	char			*unix_path;	/* to unlink, or NULL */
	dev_t			 unix_dev;	/* the socket file we made */
	ino_t			 unix_ino;
	struct httpd_conn	*conns;
	int			 nconns;
	int			 max_conns;	/* HTTPD_MAX_CONNS or less */
	int			 paused;	/* accept is stopped */
	ev_tstamp		 warned_at;	/* last accept warning */
	struct ev_timer		 retry;		/* resume after EMFILE */
	int			 max_streams;	/* cap on streams, and on waits */
	int			 nstreams;	/* CONN_STREAM connections */
	int			 nwaits;	/* CONN_WAIT connections */
	struct ev_timer		 ping;		/* stream keep-alives */
};

static void	resume_accept(struct httpd *);
static void	conn_run(struct httpd_conn *);
static int	listen_tcp(struct httpd *, const char *, int, char *, size_t);

static const char *
reason_phrase(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 408: return "Request Timeout";
	case 413: return "Content Too Large";
	case 421: return "Misdirected Request";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default:  return "Unknown";
	}
}

static size_t
out_pending(const struct httpd_conn *c)
{
	return c->outlen - c->outoff;
}

static void
conn_close(struct httpd_conn *c)
{
	struct httpd	*h = c->h;

	ev_io_stop(h->loop, &c->rio);
	ev_io_stop(h->loop, &c->wio);
	ev_timer_stop(h->loop, &c->timer);
	if (c->kind == CONN_STREAM && --h->nstreams == 0)
		ev_timer_stop(h->loop, &h->ping);
	if (c->kind == CONN_WAIT)
		h->nwaits--;
	close(c->fd);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		h->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	h->nconns--;
	free(c->out);
	free(c);
	resume_accept(h);
}

/*
 * Queue hdr then body, both or neither; past HTTPD_OUT_MAX the
 * connection is marked to be dropped.  Returns 0 or -1.
 */
static int
out_add(struct httpd_conn *c, const char *hdr, size_t hlen, const char *body,
    size_t blen)
{
	size_t	 need = hlen + blen;

	if (out_pending(c) + need > HTTPD_OUT_MAX) {
		c->overflow = 1;
		return -1;
	}
	if (c->outoff > 0) {
		memmove(c->out, c->out + c->outoff, out_pending(c));
		c->outlen -= c->outoff;
		c->outoff = 0;
	}
	if (c->outlen + need > c->outcap) {
		c->outcap = c->outlen + need;
		c->out = xrealloc(c->out, c->outcap);
	}
	if (hlen > 0)
		memcpy(c->out + c->outlen, hdr, hlen);
	if (blen > 0)
		memcpy(c->out + c->outlen + hlen, body, blen);
	c->outlen += need;
	return 0;
}

/* Queue a whole reply; past HTTPD_OUT_MAX the connection is dropped. */
static void
queue_reply(struct httpd_conn *c, int status, const char *ctype,
    const char *allow, const char *extra, const char *body, size_t len,
    int head, int keep)
{
	char	 hdr[512 + HTTPD_HEADERS_MAX];
	int	 n;

	n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 %d %s\r\n"
	    "Content-Type: %s\r\n"
	    "Content-Length: %zu\r\n"
	    "Cache-Control: no-store\r\n"
	    "%s%s%s%s"
	    "Connection: %s\r\n\r\n",
	    status, reason_phrase(status), ctype, len,
	    allow != NULL ? "Allow: " : "", allow != NULL ? allow : "",
	    allow != NULL ? "\r\n" : "", extra != NULL ? extra : "",
	    keep ? "keep-alive" : "close");
	if (n < 0 || (size_t)n >= sizeof(hdr)) {
		c->overflow = 1;
		return;
	}
	out_add(c, hdr, (size_t)n, body, head ? 0 : len);
}

/* The JSON error reply for a request http_parse refused. */
static void
queue_error(struct httpd_conn *c, int status, const char *why)
{
	char	 body[256], esc[128];
	int	 len;

	text_json_escape(esc, sizeof(esc), &why);
	len = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"status\":%d}\n",
	    esc, status);
	queue_reply(c, status, "application/json", NULL, NULL, body,
	    (size_t)len, 0, 0);
}

/*
 * On TCP, refuse a request whose Host does not name this server (DNS
 * rebinding, I3): 400 or 421, then close.  The unix socket is not
 * checked.  Returns 1 if refused.
 */
static int
host_refused(struct httpd_conn *c, const struct http_request *req)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);
	char			 ip[INET6_ADDRSTRLEN] = "";
	int			 st, port = -1;

	if (c->l == NULL || c->l->is_unix)
		return 0;
	if (getsockname(c->fd, (struct sockaddr *)&ss, &sslen) == 0)
		netaddr_sockaddr_text((struct sockaddr *)&ss, ip, sizeof(ip),
		    &port);
	if ((st = http_host_check(req, ip, port, c->l->host)) == 0)
		return 0;
	log_debug("http: %s %s: Host \"%s\" refused (%d)", req->method,
	    req->path, req->host, st);
	queue_error(c, st, st == 400 ? "a Host header is required" :
	    "the Host header does not name this server; use localhost or "
	    "the listen address");
	c->closing = 1;
	return 1;
}

/*
 * Start a stream on c: headers without a length (the body ends when the
 * connection does), then the first body.  Input from now on is dropped.
 */
static void
stream_start(struct httpd_conn *c, const struct httpd_reply *reply)
{
	struct httpd	*h = c->h;
	char		 hdr[512 + HTTPD_HEADERS_MAX];
	int		 n, sndbuf = STREAM_SNDBUF;

	n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 %d %s\r\n"
	    "Content-Type: %s\r\n"
	    "Cache-Control: no-cache\r\n"
	    "X-Accel-Buffering: no\r\n"
	    "%s"
	    "Connection: close\r\n\r\n",
	    reply->status, reason_phrase(reply->status),
	    reply->content_type != NULL ? reply->content_type :
	    "application/octet-stream", reply->headers);
	if (n < 0 || (size_t)n >= sizeof(hdr)) {
		c->overflow = 1;
		return;
	}
	if (out_add(c, hdr, (size_t)n, reply->body, reply->body != NULL ?
	    reply->len : 0) == -1)
		return;
	/*
	 * Events are small: a small socket buffer bounds what the kernel
	 * holds for a client that stops reading, so it reaches
	 * HTTPD_OUT_MAX, and is dropped, after a bounded number of events.
	 */
	setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	c->kind = CONN_STREAM;
	c->ping = reply->ping;
	c->inoff = c->inlen = 0;
	ev_timer_stop(h->loop, &c->timer);
	if (h->nstreams++ == 0)
		ev_timer_again(h->loop, &h->ping);
}

/* Park c's request until httpd_wake answers it or wait_ms ends. */
static void
conn_park(struct httpd_conn *c, uint64_t wait_ms)
{
	struct ev_loop	*loop = c->h->loop;

	c->kind = CONN_WAIT;
	c->h->nwaits++;
	ev_timer_stop(loop, &c->timer);
	ev_timer_set(&c->timer, (double)wait_ms / 1000.0, 0.);
	ev_timer_start(loop, &c->timer);
}

/*
 * Answer the request the parser holds (again, if c waits).  Returns 1
 * if it waits on, 0 if it was answered (or refused).
 */
static int
handle_request(struct httpd_conn *c, int wait_over)
{
	struct httpd			*h = c->h;
	const struct http_request	*req = http_parse_request(&c->parser);
	struct httpd_reply		 reply;
	int				 head, waiting = c->kind == CONN_WAIT;

	memset(&reply, 0, sizeof(reply));
	if (host_refused(c, req))
		return 0;
	if (c->l != NULL && c->l->probes_only &&
	    strcmp(req->path, "/healthz") != 0 &&
	    strcmp(req->path, "/readyz") != 0 &&
	    strcmp(req->path, "/metrics") != 0) {
		queue_error(c, 404, "only /healthz, /readyz and /metrics are "
		    "served here; the local API is on the loopback and unix "
		    "listeners");
		c->closing = 1;
		return 0;
	}
	reply.wait_over = wait_over;
	reply.waited = waiting;
	reply.local = c->l != NULL && !c->l->probes_only &&
	    (c->l->is_unix || c->l->loopback);
	h->handler(req, &reply, h->arg);
	if (reply.status < 100 || reply.status > 599)
		reply.status = 500;
	reply.headers[sizeof(reply.headers) - 1] = '\0';
	head = strcmp(req->method, "HEAD") == 0;
	if (wait_over || head)
		reply.mode = HTTPD_REPLY_NOW;
	if (reply.mode == HTTPD_REPLY_WAIT) {
		free(reply.body);
		if (waiting)
			return 1;
		if (h->nwaits >= h->max_streams) {
			log_debug("http: %d requests wait; refusing one more",
			    h->nwaits);
			queue_error(c, 503, "too many waiting requests; "
			    "try again later");
			c->closing = 1;
			return 0;
		}
		log_debug("http: %s %s?%s waits", req->method, req->path,
		    req->query);
		conn_park(c, reply.wait_ms);
		return 1;
	}
	if (waiting) {
		c->kind = CONN_PLAIN;
		h->nwaits--;
		ev_timer_stop(h->loop, &c->timer);
		c->timer.repeat = HTTPD_IDLE_MS / 1000.0;
	}
	if (reply.mode == HTTPD_REPLY_STREAM && reply.status == 200) {
		if (h->nstreams >= h->max_streams) {
			log_debug("http: %s %s -> 503: %d streams open",
			    req->method, req->path, h->nstreams);
			queue_error(c, 503, "too many streams open; try again "
			    "later");
			c->closing = 1;
		} else {
			log_debug("http: %s %s -> 200, streaming", req->method,
			    req->path);
			stream_start(c, &reply);
		}
		free(reply.body);
		c->phase_at = ev_now(h->loop);
		return 0;
	}
	log_debug("http: %s %s -> %d", req->method, req->path, reply.status);
	queue_reply(c, reply.status, reply.content_type != NULL ?
	    reply.content_type : "application/json", reply.allow,
	    reply.headers, reply.body != NULL ? reply.body : "",
	    reply.body != NULL ? reply.len : 0, head, req->keep_alive);
	free(reply.body);
	c->phase_at = ev_now(h->loop);
	if (!req->keep_alive)
		c->closing = 1;
	return 0;
}

/* The request c waits with is due for an answer: finish it. */
static void
conn_answer(struct httpd_conn *c, int wait_over)
{
	if (handle_request(c, wait_over))
		return;
	http_parse_reset(&c->parser);
	c->in_request = 0;
	conn_run(c);
}

/* Parse what is buffered, answering each request, while output is small. */
static void
conn_parse(struct httpd_conn *c)
{
	enum http_parse_status	 st;
	size_t			 used;

	while (!c->closing && !c->overflow && c->kind == CONN_PLAIN &&
	    c->inoff < c->inlen && out_pending(c) < HTTPD_OUT_MAX / 2) {
		if (!c->in_request) {
			/* The request's deadline starts with its first byte. */
			c->in_request = 1;
			ev_timer_again(c->h->loop, &c->timer);
		}
		st = http_parse_feed(&c->parser, c->in + c->inoff,
		    c->inlen - c->inoff, &used);
		c->inoff += used;
		if (st == HTTP_PARSE_MORE)
			break;
		if (st == HTTP_PARSE_ERROR) {
			log_debug("http: bad request: %d %s",
			    c->parser.error_status, c->parser.error);
			queue_error(c, c->parser.error_status, c->parser.error);
			c->closing = 1;
			break;
		}
		if (handle_request(c, 0))
			break;
		http_parse_reset(&c->parser);
		c->in_request = 0;
	}
	if (c->inoff == c->inlen)
		c->inoff = c->inlen = 0;
}

/* Write what we can.  Returns -1 on a write error. */
static int
conn_flush(struct httpd_conn *c)
{
	ssize_t	 n;

	while (out_pending(c) > 0) {
		n = send(c->fd, c->out + c->outoff, out_pending(c),
		    MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			log_debug("http: send: %s", strerror(errno));
			return -1;
		}
		c->outoff += (size_t)n;
	}
	c->outoff = c->outlen = 0;
	return 0;
}

/*
 * Close after a reply without losing it: closing a socket with unread
 * input makes the kernel send a reset, which can destroy the reply in
 * the client's buffers (a 431 answered before the client finished
 * sending, say).  So send FIN first and drain the input for a moment.
 */
static void
conn_linger(struct httpd_conn *c)
{
	struct ev_loop	*loop = c->h->loop;

	shutdown(c->fd, SHUT_WR);
	c->lingering = 1;
	c->inoff = c->inlen = 0;
	ev_io_stop(loop, &c->wio);
	ev_io_start(loop, &c->rio);
	ev_timer_stop(loop, &c->timer);
	ev_timer_set(&c->timer, LINGER_S, 0.);
	ev_timer_start(loop, &c->timer);
}

/*
 * Make progress on c: answer buffered requests, send, then wait for the
 * right event.  May close c; the caller must not touch it afterwards.
 */
static void
conn_run(struct httpd_conn *c)
{
	struct ev_loop	*loop = c->h->loop;

	for (;;) {
		conn_parse(c);
		if (c->overflow) {
			log_debug("http: client does not read its %s; closing",
			    c->kind == CONN_STREAM ? "stream" : "replies");
			conn_close(c);
			return;
		}
		if (conn_flush(c) == -1) {
			conn_close(c);
			return;
		}
		if (out_pending(c) > 0)
			break;
		if (c->eof && (c->inoff == c->inlen || c->kind != CONN_PLAIN)) {
			conn_close(c);
			return;
		}
		if (c->closing) {
			conn_linger(c);
			return;
		}
		if (c->inoff == c->inlen || c->kind != CONN_PLAIN)
			break;
	}
	if (c->kind == CONN_STREAM) {
		/* Read on, to see the client go; write when blocked. */
		ev_io_start(loop, &c->rio);
		if (out_pending(c) > 0)
			ev_io_start(loop, &c->wio);
		else
			ev_io_stop(loop, &c->wio);
		return;
	}
	if (out_pending(c) > 0) {
		ev_io_stop(loop, &c->rio);
		ev_io_start(loop, &c->wio);
		return;
	}
	ev_io_stop(loop, &c->wio);
	if (c->kind == CONN_WAIT) {
		/* The timer is the end of the wait. */
		if (c->inoff == c->inlen)
			ev_io_start(loop, &c->rio);
		else
			ev_io_stop(loop, &c->rio);
		return;
	}
	ev_io_start(loop, &c->rio);
	if (!c->in_request)
		ev_timer_again(loop, &c->timer);	/* idle from now */
}

static void
conn_read_cb(struct ev_loop *loop, struct ev_io *w, int revents)
{
	struct httpd_conn	*c = w->data;
	ssize_t			 n;

	(void)loop;
	(void)revents;
	/* Only called with an empty buffer: conn_run stops reading else. */
	n = read(c->fd, c->in, sizeof(c->in));
	if (c->lingering) {
		if (n > 0)
			c->drained += (size_t)n;
		if (n > 0 && c->drained <= LINGER_MAX)
			return;
		if (n == -1 && (errno == EINTR || errno == EAGAIN ||
		    errno == EWOULDBLOCK))
			return;
		conn_close(c);
		return;
	}
	if (n == -1) {
		if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		log_debug("http: read: %s", strerror(errno));
		conn_close(c);
		return;
	}
	if (c->kind == CONN_STREAM) {
		/* A stream's client has nothing to say; drop it. */
		if (n == 0) {
			log_debug("http: stream closed by the client");
			conn_close(c);
		}
		return;
	}
	if (n == 0) {
		c->eof = 1;
		if (c->in_request) {
			/* A request cut short: nothing to answer. */
			conn_close(c);
			return;
		}
	}
	c->inoff = 0;
	c->inlen = (size_t)n;
	conn_run(c);
}

static void
conn_write_cb(struct ev_loop *loop, struct ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	conn_run(w->data);
}

static void
conn_timer_cb(struct ev_loop *loop, struct ev_timer *w, int revents)
{
	struct httpd_conn	*c = w->data;

	(void)loop;
	(void)revents;
	if (c->kind == CONN_WAIT) {
		conn_answer(c, 1);
		return;
	}
	if (!c->lingering)
		log_debug("http: connection %s; closing", c->in_request ?
		    "too slow" : "idle");
	conn_close(c);
}

static void
conn_new(struct httpd *h, int fd, struct httpd_listener *l)
{
	struct httpd_conn	*c;

	c = xcalloc(1, sizeof(*c));
	c->h = h;
	c->l = l;
	c->fd = fd;
	http_parse_init(&c->parser);
	ev_io_init(&c->rio, conn_read_cb, fd, EV_READ);
	ev_io_init(&c->wio, conn_write_cb, fd, EV_WRITE);
	ev_init(&c->timer, conn_timer_cb);
	c->timer.repeat = HTTPD_IDLE_MS / 1000.0;
	c->rio.data = c->wio.data = c->timer.data = c;
	c->next = h->conns;
	if (h->conns != NULL)
		h->conns->prev = c;
	h->conns = c;
	h->nconns++;
	c->phase_at = ev_now(h->loop);
	ev_io_start(h->loop, &c->rio);
	ev_timer_again(h->loop, &c->timer);
}

static void
pause_accept(struct httpd *h)
{
	int	 i;

	for (i = 0; i < h->nls; i++)
		ev_io_stop(h->loop, &h->ls[i].io);
	h->paused = 1;
}

static void
resume_accept(struct httpd *h)
{
	int	 i;

	if (!h->paused)
		return;
	ev_timer_stop(h->loop, &h->retry);
	for (i = 0; i < h->nls; i++)
		ev_io_start(h->loop, &h->ls[i].io);
	h->paused = 0;
}

static void
retry_cb(struct ev_loop *loop, struct ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	resume_accept(w->data);
}

/* Whether an accept problem may be logged now (once a minute at most). */
static int
may_warn(struct httpd *h)
{
	ev_tstamp	 now = ev_now(h->loop);

	if (h->warned_at != 0 && now - h->warned_at < WARN_EVERY_S)
		return 0;
	h->warned_at = now;
	return 1;
}

/* Close the connection longest in its current phase, to make room. */
static void
evict_oldest(struct httpd *h)
{
	struct httpd_conn	*c, *old = NULL;

	for (c = h->conns; c != NULL; c = c->next)
		if (c->kind == CONN_PLAIN &&
		    (old == NULL || c->phase_at <= old->phase_at))
			old = c;
	if (old != NULL) {
		log_debug("http: %d connections; closing the oldest",
		    h->nconns);
		conn_close(old);
	}
}

/* Whether ss is a loopback peer (netaddr.h); a unix socket peer is. */
static int
peer_is_loopback(const struct sockaddr_storage *ss)
{
	struct netaddr_ip	 ip;

	if (netaddr_from_sockaddr((const struct sockaddr *)ss, &ip,
	    NULL) == -1)
		return 1;
	return netaddr_ip_loopback(&ip);
}

static int
same_peer(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		    ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
	    &((const struct sockaddr_in6 *)b)->sin6_addr,
	    sizeof(struct in6_addr)) == 0;
}

/*
 * Whether to refuse a new connection from a peer off the loopback (a
 * kubelet probe, or another pod when the probes listener is exposed):
 * each such peer may hold HTTPD_PEER_MAX connections, and all of them
 * together half the cap, so local clients always keep room (M1).
 */
static int
remote_refused(struct httpd *h, const struct sockaddr_storage *peer)
{
	struct httpd_conn	*c;
	int			 same = 0, all = 0;

	for (c = h->conns; c != NULL; c = c->next) {
		if (!c->remote)
			continue;
		all++;
		if (same_peer(&c->peer, peer))
			same++;
	}
	if (same < HTTPD_PEER_MAX && all < h->max_conns / 2)
		return 0;
	if (may_warn(h))
		log_warnx("refusing a connection from a non-loopback peer: "
		    "%s", same >= HTTPD_PEER_MAX ? "it has "
		    HTTPD_PEER_MAX_STR " open already" : "non-loopback peers "
		    "hold half the connection slots");
	return 1;
}

static void
accept_cb(struct ev_loop *loop, struct ev_io *w, int revents)
{
	struct httpd_listener	*l = w->data;
	struct httpd		*h = l->h;
	struct sockaddr_storage	 peer;
	socklen_t		 plen;
	int			 i, fd, one = 1, remote;

	(void)revents;
	for (i = 0; i < ACCEPT_PER_CYCLE; i++) {
		plen = sizeof(peer);
		fd = accept4(l->fd, (struct sockaddr *)&peer, &plen,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			switch (errno) {
			case EINTR:
			case ECONNABORTED:
			case EPROTO:
				continue;
			case EAGAIN:
#if EAGAIN != EWOULDBLOCK
			case EWOULDBLOCK:
#endif
				return;
			case EMFILE:
			case ENFILE:
			case ENOBUFS:
			case ENOMEM:
				if (may_warn(h))
					log_warn("accept (pausing the local "
					    "API)");
				pause_accept(h);
				ev_timer_set(&h->retry, ACCEPT_RETRY_S, 0.);
				ev_timer_start(loop, &h->retry);
				return;
			default:
				log_warn("accept");
				return;
			}
		}
		remote = !l->is_unix && !peer_is_loopback(&peer);
		if (remote && remote_refused(h, &peer)) {
			close(fd);
			continue;
		}
		if (h->nconns - h->nstreams - h->nwaits >= h->max_conns) {
			if (may_warn(h))
				log_warnx("%d local API connections open; "
				    "closing the oldest to make room",
				    h->max_conns);
			evict_oldest(h);
		}
		if (!l->is_unix)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			    sizeof(one));
		conn_new(h, fd, l);
		if (remote) {
			h->conns->remote = 1;	/* conn_new puts it first */
			h->conns->peer = peer;
		}
	}
}

/* Queue len bytes on stream c and send; may close c. */
static void
stream_queue(struct httpd_conn *c, const char *data, size_t len)
{
	if (out_add(c, NULL, 0, data, len) == -1) {
		log_debug("http: stream client does not read; closing");
		conn_close(c);
		return;
	}
	conn_run(c);
}

static void
ping_cb(struct ev_loop *loop, struct ev_timer *w, int revents)
{
	struct httpd		*h = w->data;
	struct httpd_conn	*c, *next;

	(void)loop;
	(void)revents;
	for (c = h->conns; c != NULL; c = next) {
		next = c->next;
		if (c->kind == CONN_STREAM && c->ping != NULL)
			stream_queue(c, c->ping, strlen(c->ping));
	}
}

/*
 * The connection cap: HTTPD_MAX_CONNS, or fewer when the open-file
 * limit would not leave HTTPD_FD_RESERVE descriptors for the API client
 * (its connections, the CA and token files) and the listeners; a local
 * flood must never starve the renew (L2).
 */
static int
conn_cap(void)
{
	struct rlimit	 rl;
	rlim_t		 cap;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= (rlim_t)HTTPD_MAX_CONNS + HTTPD_FD_RESERVE)
		return HTTPD_MAX_CONNS;
	cap = rl.rlim_cur > HTTPD_FD_RESERVE + HTTPD_MIN_CONNS ?
	    rl.rlim_cur - HTTPD_FD_RESERVE : HTTPD_MIN_CONNS;
	log_warnx("open-file limit %llu: local API connections at most %d, "
	    "keeping %d descriptors for the API client",
	    (unsigned long long)rl.rlim_cur, (int)cap, HTTPD_FD_RESERVE);
	return (int)cap;
}

struct httpd *
httpd_new(struct ev_loop *loop, httpd_handler_cb handler, void *arg)
{
	struct httpd	*h;

	h = xcalloc(1, sizeof(*h));
	h->loop = loop;
	h->handler = handler;
	h->arg = arg;
	h->tcp_port = -1;
	h->max_conns = conn_cap();
	ev_init(&h->retry, retry_cb);
	h->retry.data = h;
	h->max_streams = STREAMS_DEFAULT;
	ev_init(&h->ping, ping_cb);
	h->ping.repeat = HTTPD_PING_MS / 1000.0;
	h->ping.data = h;
	return h;
}

static void
add_listener(struct httpd *h, int fd, int is_unix)
{
	struct httpd_listener	*l = &h->ls[h->nls++];

	l->h = h;
	l->fd = fd;
	l->is_unix = is_unix;
	ev_io_init(&l->io, accept_cb, fd, EV_READ);
	l->io.data = l;
	if (!h->paused)
		ev_io_start(h->loop, &l->io);
}

int
httpd_listen_tcp(struct httpd *h, const char *hostport, char *err,
    size_t errlen)
{
	return listen_tcp(h, hostport, 0, err, errlen);
}

int
httpd_listen_probes(struct httpd *h, const char *hostport, char *err,
    size_t errlen)
{
	return listen_tcp(h, hostport, 1, err, errlen);
}

static int
listen_tcp(struct httpd *h, const char *hostport, int probes, char *err,
    size_t errlen)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);
	char			 name[300], serv[16], why[128];
	int			 fd, port;

	if (h->nls >= LISTEN_MAX) {
		snprintf(err, errlen, "%s: too many listeners", hostport);
		return -1;
	}
	if ((fd = sock_listen_tcp(hostport, name, sizeof(name), &port, err,
	    errlen)) == -1)
		return -1;
	log_info("listening on %s%s", name, probes ? " (probes only)" : "");
	if (h->tcp_port == -1 && !probes)
		h->tcp_port = port;
	add_listener(h, fd, 0);
	h->ls[h->nls - 1].probes_only = probes;
	h->ls[h->nls - 1].loopback = getsockname(fd, (struct sockaddr *)&ss,
	    &sslen) == 0 && (ss.ss_family == AF_INET ||
	    ss.ss_family == AF_INET6) && peer_is_loopback(&ss);
	/* The configured host, without port or brackets. */
	if (netaddr_split(hostport, 0, h->ls[h->nls - 1].host,
	    sizeof(h->ls[0].host), serv, sizeof(serv), why,
	    sizeof(why)) == -1)
		h->ls[h->nls - 1].host[0] = '\0';
	return 0;
}

int
httpd_tcp_port(const struct httpd *h)
{
	return h->tcp_port;
}

int
httpd_listen_unix(struct httpd *h, const char *path, char *err,
    size_t errlen)
{
	int	 fd;

	if (h->nls >= LISTEN_MAX || h->unix_path != NULL) {
		snprintf(err, errlen, "%s: one unix socket only", path);
		return -1;
	}
	if ((fd = sock_listen_unix(path, &h->unix_dev, &h->unix_ino, err,
	    errlen)) == -1)
		return -1;
	h->unix_path = xstrdup(path);
	log_info("listening on unix:%s", path);
	add_listener(h, fd, 1);
	return 0;
}

int
httpd_conns(const struct httpd *h)
{
	return h->nconns;
}

void
httpd_set_max_streams(struct httpd *h, int n)
{
	h->max_streams = n < 0 ? 0 : n;
}

int
httpd_streams(const struct httpd *h)
{
	return h->nstreams;
}

void
httpd_stream_send(struct httpd *h, const char *data, size_t len)
{
	struct httpd_conn	*c, *next;

	for (c = h->conns; c != NULL; c = next) {
		next = c->next;
		if (c->kind == CONN_STREAM)
			stream_queue(c, data, len);
	}
}

void
httpd_wake(struct httpd *h)
{
	struct httpd_conn	*c, *next;

	for (c = h->conns; c != NULL; c = next) {
		next = c->next;
		if (c->kind == CONN_WAIT)
			conn_answer(c, 0);
	}
}

void
httpd_free(struct httpd *h)
{
	struct httpd_conn	*c, *next;
	int			 i;

	if (h == NULL)
		return;
	h->paused = 0;		/* no resume from conn_close */
	for (c = h->conns; c != NULL; c = next) {
		next = c->next;
		if (c->kind == CONN_WAIT)
			conn_answer(c, 1);
	}
	while ((c = h->conns) != NULL) {
		/* What the socket takes now is delivered after close. */
		if (out_pending(c) > 0 && !c->overflow)
			conn_flush(c);
		if (c->kind == CONN_STREAM)
			shutdown(c->fd, SHUT_WR);
		conn_close(c);
	}
	ev_timer_stop(h->loop, &h->ping);
	ev_timer_stop(h->loop, &h->retry);
	for (i = 0; i < h->nls; i++) {
		ev_io_stop(h->loop, &h->ls[i].io);
		close(h->ls[i].fd);
	}
	if (h->unix_path != NULL)
		sock_unlink_unix(h->unix_path, h->unix_dev, h->unix_ino);
	free(h->unix_path);
	free(h);
}
