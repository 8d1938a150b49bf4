/*
 * httpd_conn.c -- one connection of the local HTTP server: read, parse,
 * answer, write, close.
 *
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
 * to see the client go.
 *
 * A connection is freed only by httpd_conn_close, which every path
 * calls as its last action on the connection.
 */

#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/netaddr.h"
#include "base/xmalloc.h"
#include "server/httpd_int.h"

#define LINGER_S		2.0	/* drain input this long before close */
#define LINGER_MAX		65536	/* or this many bytes */

static void	conn_run(struct httpd_conn *);

void
httpd_conn_close(struct httpd_conn *c)
{
	struct httpd	*h = c->h;

	ev_io_stop(h->loop, &c->rio);
	ev_io_stop(h->loop, &c->wio);
	ev_timer_stop(h->loop, &c->timer);
	if (c->kind == CONN_STREAM)
		httpd_stream_count(c, 0);
	if (c->kind == CONN_WAIT) {
		h->nwaits--;
		h->nremote_waits -= c->remote;
	}
	close(c->fd);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		h->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	h->nconns--;
	free(c->out);
	free(c->rq);
	free(c);
	httpd_resume_accept(h);
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
	int			 st;

	if (c->l == NULL || c->l->is_unix)
		return 0;
	/* Asked once: the address a connection reached does not change. */
	if (c->local_port == 0) {
		c->local_port = -1;
		if (getsockname(c->fd, (struct sockaddr *)&ss, &sslen) == 0)
			netaddr_sockaddr_text((struct sockaddr *)&ss,
			    c->local_ip, sizeof(c->local_ip), &c->local_port);
	}
	if ((st = http_host_check(req, c->local_ip, c->local_port,
	    c->l->host)) == 0)
		return 0;
	log_debug("http: %s %s: Host \"%s\" refused (%d)", req->method,
	    req->path, req->host, st);
	httpd_queue_error(c, st, st == 400 ? "a Host header is required" :
	    "the Host header does not name this server; use localhost or "
	    "the listen address");
	c->closing = 1;
	return 1;
}

/* Park c's request until httpd_wake answers it or wait_ms ends. */
static void
conn_park(struct httpd_conn *c, uint64_t wait_ms)
{
	struct ev_loop	*loop = c->h->loop;

	c->kind = CONN_WAIT;
	c->h->nwaits++;
	c->h->nremote_waits += c->remote;
	ev_timer_stop(loop, &c->timer);
	ev_timer_set(&c->timer, (double)wait_ms / 1000.0, 0.);
	ev_timer_start(loop, &c->timer);
}

/*
 * Whether c, from a peer off the loopback, finds its kind's share full:
 * such peers hold n, and together they may hold max_streams /
 * HTTPD_STREAMS_REMOTE_DIV; the rest stays for this pod's clients.
 */
static int
remote_full(const struct httpd_conn *c, int n)
{
	return c->remote && n >= c->h->max_streams / HTTPD_STREAMS_REMOTE_DIV;
}

/* Fill reply with the JSON error a route refusal answers. */
static void
route_refusal(struct httpd_reply *reply, int status, const char *why)
{
	char	 body[512];

	snprintf(body, sizeof(body), "{\"error\":\"%s\",\"status\":%d}\n",
	    why, status);
	reply->status = status;
	reply->content_type = "application/json";
	reply->body = xstrdup(body);
	reply->len = strlen(body);
}

/*
 * Answer the request the parser holds (again, if c waits): refused from
 * the route table, or by its route's handler.  Returns 1 if it waits
 * on, 0 if it was answered (or refused).
 */
static int
handle_request(struct httpd_conn *c, int wait_over)
{
	struct httpd			*h = c->h;
	const struct http_request	*req = http_parse_request(&c->rq->parser);
	const struct httpd_route	*route;
	struct httpd_reply		 reply;
	char				 why[256];
	int				 head, st, only,
					 waiting = c->kind == CONN_WAIT;

	memset(&reply, 0, sizeof(reply));
	if (host_refused(c, req))
		return 0;
	only = c->l != NULL ? c->l->only : 0;
	reply.wait_over = wait_over;
	reply.waited = waiting;
	reply.local = c->l != NULL && only == 0 &&
	    (c->l->is_unix || c->l->loopback);
	reply.now_ms = clock_mono_ms();
	st = httpd_route_match(h->routes, req->method, req->path, only,
	    reply.local, &route, &reply.allow, why, sizeof(why));
	if (st == 404 && only) {
		httpd_queue_error(c, 404, why);
		c->closing = 1;
		return 0;
	}
	if (st != 0)
		route_refusal(&reply, st, why);
	else
		route->handler(req, &reply, route->arg);
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
		if (h->nwaits >= h->max_streams ||
		    remote_full(c, h->nremote_waits)) {
			log_debug("http: %d requests wait; refusing one more "
			    "(%d off the loopback)", h->nwaits,
			    h->nremote_waits);
			httpd_queue_error(c, 503, "too many waiting requests; "
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
		h->nremote_waits -= c->remote;
		ev_timer_stop(h->loop, &c->timer);
		c->timer.repeat = HTTPD_IDLE_MS / 1000.0;
	}
	/* HTTP/1.0 has no chunked coding: such a stream ends with a close. */
	if (req->minor == 0)
		reply.chunked = 0;
	if (reply.mode == HTTPD_REPLY_STREAM && reply.status == 200) {
		if (h->nstreams >= h->max_streams ||
		    remote_full(c, h->nremote_streams)) {
			log_debug("http: %s %s -> 503: %d streams open (%d "
			    "off the loopback)", req->method, req->path,
			    h->nstreams, h->nremote_streams);
			httpd_queue_error(c, 503, "too many streams open; try "
			    "again later");
			c->closing = 1;
		} else {
			log_debug("http: %s %s -> 200, streaming", req->method,
			    req->path);
			httpd_stream_start(c, &reply);
		}
		free(reply.body);
		c->phase_at = ev_now(h->loop);
		return 0;
	}
	log_debug("http: %s %s -> %d", req->method, req->path, reply.status);
	httpd_queue_reply(c, reply.status, reply.content_type != NULL ?
	    reply.content_type : "application/json", reply.cache_control,
	    reply.allow,
	    reply.headers, reply.body != NULL ? reply.body : "",
	    reply.body != NULL ? reply.len : 0, head, req->keep_alive);
	free(reply.body);
	c->phase_at = ev_now(h->loop);
	if (!req->keep_alive)
		c->closing = 1;
	return 0;
}

/* The request c waits with is due for an answer: finish it. */
void
httpd_conn_answer(struct httpd_conn *c, int wait_over)
{
	if (handle_request(c, wait_over))
		return;
	http_parse_reset(&c->rq->parser);
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
	    c->inoff < c->inlen && httpd_out_pending(c) < HTTPD_OUT_MAX / 2) {
		if (!c->in_request) {
			/* The request's deadline starts with its first byte. */
			c->in_request = 1;
			ev_timer_again(c->h->loop, &c->timer);
		}
		st = http_parse_feed(&c->rq->parser, c->rq->in + c->inoff,
		    c->inlen - c->inoff, &used);
		c->inoff += used;
		if (st == HTTP_PARSE_MORE)
			break;
		if (st == HTTP_PARSE_ERROR) {
			log_debug("http: bad request: %d %s",
			    c->rq->parser.error_status, c->rq->parser.error);
			httpd_queue_error(c, c->rq->parser.error_status,
			    c->rq->parser.error);
			c->closing = 1;
			break;
		}
		if (handle_request(c, 0))
			break;
		http_parse_reset(&c->rq->parser);
		c->in_request = 0;
	}
	if (c->inoff == c->inlen)
		c->inoff = c->inlen = 0;
}

/* Write what we can.  Returns -1 on a write error. */
int
httpd_conn_flush(struct httpd_conn *c)
{
	ssize_t	 n;

	while (httpd_out_pending(c) > 0) {
		n = send(c->fd, c->out + c->outoff, httpd_out_pending(c),
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
	if (c->kind == CONN_STREAM) {
		/* Events are rare and small: hold no buffer between them. */
		free(c->out);
		c->out = NULL;
		c->outcap = 0;
	}
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
			httpd_conn_close(c);
			return;
		}
		if (httpd_conn_flush(c) == -1) {
			httpd_conn_close(c);
			return;
		}
		if (httpd_out_pending(c) > 0)
			break;
		if (c->eof && (c->inoff == c->inlen || c->kind != CONN_PLAIN)) {
			httpd_conn_close(c);
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
		/* Its requests are over (conn_parse is done with rq). */
		free(c->rq);
		c->rq = NULL;
		/* Read on, to see the client go; write when blocked. */
		ev_io_start(loop, &c->rio);
		if (httpd_out_pending(c) > 0)
			ev_io_start(loop, &c->wio);
		else
			ev_io_stop(loop, &c->wio);
		return;
	}
	if (httpd_out_pending(c) > 0) {
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
	char			 drop[256];
	ssize_t			 n;

	(void)loop;
	(void)revents;
	/*
	 * Only called with an empty buffer: conn_run stops reading else.
	 * What a stream or a lingering connection reads is dropped.
	 */
	if (c->rq != NULL && !c->lingering)
		n = read(c->fd, c->rq->in, sizeof(c->rq->in));
	else
		n = read(c->fd, drop, sizeof(drop));
	if (c->lingering) {
		if (n > 0)
			c->drained += (size_t)n;
		if (n > 0 && c->drained <= LINGER_MAX)
			return;
		if (n == -1 && (errno == EINTR || errno == EAGAIN ||
		    errno == EWOULDBLOCK))
			return;
		httpd_conn_close(c);
		return;
	}
	if (n == -1) {
		if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		log_debug("http: read: %s", strerror(errno));
		httpd_conn_close(c);
		return;
	}
	if (c->kind == CONN_STREAM) {
		/* A stream's client has nothing to say; drop it. */
		if (n == 0) {
			log_debug("http: stream closed by the client");
			httpd_conn_close(c);
		}
		return;
	}
	if (n == 0) {
		c->eof = 1;
		if (c->in_request) {
			/* A request cut short: nothing to answer. */
			httpd_conn_close(c);
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
		httpd_conn_answer(c, 1);
		return;
	}
	if (!c->lingering)
		log_debug("http: connection %s; closing", c->in_request ?
		    "too slow" : "idle");
	httpd_conn_close(c);
}

void
httpd_conn_new(struct httpd *h, int fd, struct httpd_listener *l)
{
	struct httpd_conn	*c;

	c = xcalloc(1, sizeof(*c));
	c->h = h;
	c->l = l;
	c->fd = fd;
	c->rq = xmalloc(sizeof(*c->rq));
	http_parse_init(&c->rq->parser);
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

void
httpd_stream_count(struct httpd_conn *c, int opened)
{
	struct httpd	*h = c->h;
	int		 d = opened ? 1 : -1;

	h->nstreams += d;
	h->nremote_streams += c->remote ? d : 0;
	if (opened && h->nstreams == 1)
		ev_timer_again(h->loop, &h->ping);
	else if (!opened && h->nstreams == 0)
		ev_timer_stop(h->loop, &h->ping);
	/* The application's streams: from this pod, on its channel. */
	if (c->remote || c->channel < 0 || c->channel >= 32 ||
	    (h->client_channels & (UINT32_C(1) << c->channel)) == 0)
		return;
	h->nclients += d;
	if (h->streams_cb != NULL)
		h->streams_cb(h->nclients, h->streams_arg);
}

/* Queue len bytes on stream c and send; may close c. */
void
httpd_stream_queue(struct httpd_conn *c, const char *data, size_t len)
{
	if (httpd_stream_add(c, data, len) == -1) {
		log_debug("http: stream client does not read; closing");
		httpd_conn_close(c);
		return;
	}
	conn_run(c);
}
