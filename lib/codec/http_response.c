/*
 * http_response.c -- a whole HTTP/1.x response, for leaderd's control
 * client (`leaderd status` and the others) reading the local API's
 * answers: the status, Content-Length and the body.  The local API
 * always sends Content-Length and never a chunked body; anything else
 * here is a server that is not leaderd.  Pure; declared in http_parse.h.
 */

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "codec/http_parse.h"

#define HEAD_MAX	(16 * 1024)	/* the local API's heads are < 1 KiB */

/* The first CRLF in [p, lim), or NULL. */
static const char *
crlf(const char *p, const char *lim)
{
	for (; p + 1 < lim; p++)
		if (p[0] == '\r' && p[1] == '\n')
			return p;
	return NULL;
}

/* The end of the head (after its blank line) in buf, or NULL. */
static const char *
head_end(const char *buf, size_t len)
{
	size_t	 i;

	for (i = 0; i + 3 < len; i++)
		if (memcmp(buf + i, "\r\n\r\n", 4) == 0)
			return buf + i + 4;
	return NULL;
}

/* Whether the header line [p, e) is name: (any case); *v is its value. */
static int
header_is(const char *p, const char *e, const char *name, const char **v)
{
	size_t	 n = strlen(name);

	if ((size_t)(e - p) <= n || p[n] != ':' || strncasecmp(p, name, n) != 0)
		return 0;
	for (p += n + 1; p < e && (*p == ' ' || *p == '\t'); p++)
		;
	*v = p;
	return 1;
}

int
http_response_parse(const char *buf, size_t len, int eof,
    struct http_response *r, char *err, size_t errlen)
{
	const char	*end, *p, *e, *v;
	long long	 cl = -1;
	int		 i, status = 0;

	memset(r, 0, sizeof(*r));
	r->content_length = -1;
	if ((end = head_end(buf, len)) == NULL) {
		if (len > HEAD_MAX) {
			snprintf(err, errlen, "the answer's head is over %d "
			    "bytes", HEAD_MAX);
			return -1;
		}
		if (!eof)
			return 0;
		snprintf(err, errlen, len == 0 ? "the connection was closed "
		    "without an answer" : "the connection was closed in the "
		    "middle of the answer's head");
		return -1;
	}
	/* "HTTP/1.x NNN reason" */
	if (end - buf < 16 || memcmp(buf, "HTTP/1.", 7) != 0 ||
	    (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ') {
		snprintf(err, errlen, "not an HTTP/1.x answer");
		return -1;
	}
	for (i = 9; i < 12; i++) {
		if (buf[i] < '0' || buf[i] > '9') {
			snprintf(err, errlen, "a malformed status line");
			return -1;
		}
		status = status * 10 + (buf[i] - '0');
	}
	if (status < 100 || (buf[12] != ' ' && buf[12] != '\r')) {
		snprintf(err, errlen, "a malformed status line");
		return -1;
	}
	/* The header lines, between the status line and the blank one. */
	for (p = crlf(buf, end) + 2; p < end - 2; p = e + 2) {
		e = crlf(p, end);
		if (header_is(p, e, "Content-Length", &v)) {
			if (cl != -1 || v == e) {
				snprintf(err, errlen, "a bad Content-Length");
				return -1;
			}
			for (cl = 0; v < e && *v >= '0' && *v <= '9' &&
			    cl < 1LL << 40; v++)
				cl = cl * 10 + (*v - '0');
			if (v != e) {
				snprintf(err, errlen, "a bad Content-Length");
				return -1;
			}
		} else if (header_is(p, e, "Transfer-Encoding", &v)) {
			snprintf(err, errlen, "a Transfer-Encoding "
			    "(the local API never sends one)");
			return -1;
		}
	}
	r->status = status;
	r->content_length = cl;
	r->body = end;
	r->body_len = len - (size_t)(end - buf);
	if (cl >= 0) {
		if ((long long)r->body_len >= cl) {
			r->body_len = (size_t)cl;
			return 1;
		}
		if (!eof)
			return 0;
		snprintf(err, errlen, "the connection was closed after %zu of "
		    "%lld bytes of the answer's body", r->body_len, cl);
		return -1;
	}
	return eof ? 1 : 0;
}
