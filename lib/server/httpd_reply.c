/*
 * httpd_reply.c -- what the local HTTP server writes: the status line
 * and headers of a reply, the JSON error for a request it refuses, and
 * the start of a stream.  Output is queued on the connection, never
 * sent here (httpd_conn.c sends); past HTTPD_OUT_MAX the connection is
 * marked to be dropped instead, so a client that does not read cannot
 * grow our memory.
 */

#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "base/xmalloc.h"
#include "server/httpd_int.h"

#define STREAM_SNDBUF		16384	/* a stream's socket send buffer */

static const char *
reason_phrase(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
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

size_t
httpd_out_pending(const struct httpd_conn *c)
{
	return c->outlen - c->outoff;
}

/*
 * Queue hdr then body, both or neither; past HTTPD_OUT_MAX the
 * connection is marked to be dropped.  Returns 0 or -1.
 */
int
httpd_out_add(struct httpd_conn *c, const char *hdr, size_t hlen,
    const char *body, size_t blen)
{
	size_t	 need = hlen + blen;

	if (httpd_out_pending(c) + need > HTTPD_OUT_MAX) {
		c->overflow = 1;
		return -1;
	}
	if (c->outoff > 0) {
		memmove(c->out, c->out + c->outoff, httpd_out_pending(c));
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

/*
 * Queue len bytes of a stream's body on c, as one chunk if the stream
 * is chunked.  Returns 0, or -1 past HTTPD_OUT_MAX.
 */
int
httpd_stream_add(struct httpd_conn *c, const char *data, size_t len)
{
	char	 size[24], *chunk;
	int	 n, rv;

	if (!c->chunked)
		return httpd_out_add(c, NULL, 0, data, len);
	if (len == 0)
		return 0;	/* an empty chunk would end the body */
	n = snprintf(size, sizeof(size), "%zx\r\n", len);
	chunk = xmalloc(len + 2);
	memcpy(chunk, data, len);
	memcpy(chunk + len, "\r\n", 2);
	rv = httpd_out_add(c, size, (size_t)n, chunk, len + 2);
	free(chunk);
	return rv;
}

/* Queue a whole reply; past HTTPD_OUT_MAX the connection is dropped. */
void
httpd_queue_reply(struct httpd_conn *c, int status, const char *ctype,
    const char *cache, const char *allow, const char *extra,
    const char *body, size_t len, int head, int keep)
{
	char	 hdr[512 + HTTPD_HEADERS_MAX], num[TEXT_INT_LEN];
	size_t	 n = 0;

	if (cache == NULL)
		cache = "no-store";
	/* Every answer's: written without printf, as /leader's body. */
	text_i64(num, status);
	text_append(hdr, sizeof(hdr), &n, "HTTP/1.1 ");
	text_append(hdr, sizeof(hdr), &n, num);
	text_append(hdr, sizeof(hdr), &n, " ");
	text_append(hdr, sizeof(hdr), &n, reason_phrase(status));
	text_append(hdr, sizeof(hdr), &n, "\r\nContent-Type: ");
	text_append(hdr, sizeof(hdr), &n, ctype);
	text_u64(num, len, 0);
	text_append(hdr, sizeof(hdr), &n, "\r\nContent-Length: ");
	text_append(hdr, sizeof(hdr), &n, num);
	text_append(hdr, sizeof(hdr), &n, "\r\n");
	if (cache[0] != '\0') {
		text_append(hdr, sizeof(hdr), &n, "Cache-Control: ");
		text_append(hdr, sizeof(hdr), &n, cache);
		text_append(hdr, sizeof(hdr), &n, "\r\n");
	}
	if (allow != NULL) {
		text_append(hdr, sizeof(hdr), &n, "Allow: ");
		text_append(hdr, sizeof(hdr), &n, allow);
		text_append(hdr, sizeof(hdr), &n, "\r\n");
	}
	if (extra != NULL)
		text_append(hdr, sizeof(hdr), &n, extra);
	text_append(hdr, sizeof(hdr), &n, keep ? "Connection: keep-alive"
	    "\r\n\r\n" : "Connection: close\r\n\r\n");
	/* Cut short: the headers would not fit. */
	if (n + 1 >= sizeof(hdr)) {
		c->overflow = 1;
		return;
	}
	httpd_out_add(c, hdr, n, body, head ? 0 : len);
}

/* The JSON error reply for a request http_parse refused. */
void
httpd_queue_error(struct httpd_conn *c, int status, const char *why)
{
	char	 body[256], esc[128];
	int	 len;

	text_json_escape(esc, sizeof(esc), &why);
	len = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"status\":%d}\n",
	    esc, status);
	httpd_queue_reply(c, status, "application/json", NULL, NULL, NULL,
	    body, (size_t)len, 0, 0);
}

/*
 * Start a stream on c: headers without a length (the body ends when the
 * connection does), then the first body.  Input from now on is dropped.
 */
void
httpd_stream_start(struct httpd_conn *c, const struct httpd_reply *reply)
{
	struct httpd	*h = c->h;
	char		 hdr[512 + HTTPD_HEADERS_MAX];
	int		 n, sndbuf = STREAM_SNDBUF;

	/*
	 * A chunked stream is Go's: the handler's own headers, then
	 * Transfer-Encoding: chunked, kept alive.  Otherwise the body ends
	 * when the connection does.
	 */
	n = snprintf(hdr, sizeof(hdr), "HTTP/1.1 %d %s\r\n"
	    "Content-Type: %s\r\n"
	    "Cache-Control: no-cache\r\n"
	    "%s"
	    "%s"
	    "%s\r\n",
	    reply->status, reason_phrase(reply->status),
	    reply->content_type != NULL ? reply->content_type :
	    "application/octet-stream",
	    reply->chunked ? "" : "X-Accel-Buffering: no\r\n", reply->headers,
	    reply->chunked ? "Connection: keep-alive\r\n"
	    "Transfer-Encoding: chunked\r\n" : "Connection: close\r\n");
	if (n < 0 || (size_t)n >= sizeof(hdr)) {
		c->overflow = 1;
		return;
	}
	if (httpd_out_add(c, hdr, (size_t)n, NULL, 0) == -1)
		return;
	c->chunked = reply->chunked;
	c->channel = reply->channel;
	if (reply->body != NULL && reply->len > 0 &&
	    httpd_stream_add(c, reply->body, reply->len) == -1)
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
	httpd_stream_count(c, 1);
}
