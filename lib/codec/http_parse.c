/*
 * http_parse.c -- push parser for the local API's HTTP/1.x requests.
 *
 * Bytes are gathered into lines (LF ends a line, a CR before it is
 * dropped, so bare LF is tolerated).  Each complete line is checked and
 * interpreted at once; only the length limits are checked while a line
 * is still growing.  That makes the result independent of how the input
 * is split between calls, which the unit test checks.
 *
 * RFC 9112 is followed where it matters for a local, GET-only API:
 * origin-form or absolute-form targets, HTTP/1.0 and HTTP/1.1, no
 * obs-fold, no Transfer-Encoding, a single Content-Length.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec/http_parse.h"

/* Parser states, in the low bits of p->state. */
#define S_LINE		0	/* before or in the request line */
#define S_HEADER	1	/* in the header section */
#define S_BODY		2	/* skipping the body */
#define S_DONE		3	/* a request is complete */
#define S_ERROR		4	/* a sticky error */
#define S_MASK		0x7

/* Flags about the request being parsed, in the high bits of p->state. */
#define F_CL		0x0010	/* Content-Length seen */
#define F_CLOSE		0x0020	/* Connection: close */
#define F_KEEPALIVE	0x0040	/* Connection: keep-alive */
#define F_ACCEPT	0x0080	/* an Accept header with a media range */
#define F_TEXT_FIRST	0x0100	/* text/plain came before any JSON range */
#define F_JSON_SEEN	0x0200	/* a range allowing JSON was seen */
#define F_SPEC_SHIFT	12	/* 2 bits: specificity of the JSON range */
#define F_SPEC_MASK	(0x3 << F_SPEC_SHIFT)

#define EMPTY_LINES_MAX	8	/* empty lines skipped before a request */
#define Q_ONE		1000	/* q=1 in thousandths */

#define STATE(p)	((p)->state & S_MASK)

static void
set_state(struct http_parser *p, int s)
{
	p->state = (p->state & ~S_MASK) | s;
}

static enum http_parse_status
fail(struct http_parser *p, int status, const char *why)
{
	set_state(p, S_ERROR);
	p->error_status = status;
	p->error = why;
	return HTTP_PARSE_ERROR;
}

static int
lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

/* Whether s[0..len) equals the lower-case word w, ignoring case. */
static int
word_eq(const char *s, size_t len, const char *w)
{
	size_t	 i;

	if (strlen(w) != len)
		return 0;
	for (i = 0; i < len; i++)
		if (lower((unsigned char)s[i]) != w[i])
			return 0;
	return 1;
}

/* RFC 9110 5.6.2 tchar. */
static int
is_tchar(int c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int
is_ows(int c)
{
	return c == ' ' || c == '\t';
}

/* Trim optional white space from both ends of [*s, *s + *len). */
static void
trim_ows(const char **s, size_t *len)
{
	while (*len > 0 && is_ows((unsigned char)(*s)[0])) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && is_ows((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

/*
 * Split the next comma-separated element off [*s, *s + *len) into
 * [*e, *e + *elen), trimmed.  Returns 0 when the list is exhausted.
 */
static int
next_element(const char **s, size_t *len, const char **e, size_t *elen)
{
	const char	*comma;

	if (*len == 0)
		return 0;
	comma = memchr(*s, ',', *len);
	*e = *s;
	if (comma == NULL) {
		*elen = *len;
		*s += *len;
		*len = 0;
	} else {
		*elen = (size_t)(comma - *s);
		*len -= *elen + 1;
		*s = comma + 1;
	}
	trim_ows(e, elen);
	return 1;
}

/*
 * Parse a qvalue (RFC 9110 12.4.2) into thousandths.  Anything that is
 * not a qvalue counts as q=1, the default.
 */
static int
parse_q(const char *s, size_t len)
{
	size_t	 i;
	int	 q, scale;

	if (len == 0 || (s[0] != '0' && s[0] != '1'))
		return Q_ONE;
	q = (s[0] - '0') * Q_ONE;
	if (len == 1)
		return q;
	if (s[1] != '.' || len > 5)
		return Q_ONE;
	for (i = 2, scale = 100; i < len; i++, scale /= 10) {
		if (s[i] < '0' || s[i] > '9')
			return Q_ONE;
		q += (s[i] - '0') * scale;
	}
	return q > Q_ONE ? Q_ONE : q;
}

/*
 * Record one Accept element.  The result is kept in req.accept_text and
 * req.accept_json as scratch (q + 1, 0 = absent) until the header
 * section ends, see finish_accept.
 */
static void
accept_element(struct http_parser *p, const char *e, size_t elen)
{
	const char	*semi, *param;
	size_t		 rlen, plen;
	int		 q = Q_ONE, spec, oldspec;

	semi = memchr(e, ';', elen);
	rlen = semi != NULL ? (size_t)(semi - e) : elen;
	while (rlen > 0 && is_ows((unsigned char)e[rlen - 1]))
		rlen--;
	if (rlen == 0)
		return;
	while (semi != NULL) {
		param = semi + 1;
		plen = elen - (size_t)(param - e);
		semi = memchr(param, ';', plen);
		if (semi != NULL)
			plen = (size_t)(semi - param);
		trim_ows(&param, &plen);
		if (plen >= 2 && lower((unsigned char)param[0]) == 'q' &&
		    param[1] == '=')
			q = parse_q(param + 2, plen - 2);
	}
	p->state |= F_ACCEPT;

	if (word_eq(e, rlen, "text/plain")) {
		p->req.accept_text = q + 1;
		if (q > 0 && !(p->state & F_JSON_SEEN))
			p->state |= F_TEXT_FIRST;
		return;
	}
	if (word_eq(e, rlen, "application/json"))
		spec = 3;
	else if (word_eq(e, rlen, "application/*"))
		spec = 2;
	else if (word_eq(e, rlen, "*/*"))
		spec = 1;
	else
		return;
	/* The most specific range decides (RFC 9110 12.5.1). */
	oldspec = (p->state & F_SPEC_MASK) >> F_SPEC_SHIFT;
	if (spec >= oldspec) {
		p->req.accept_json = q + 1;
		p->state = (p->state & ~F_SPEC_MASK) | (spec << F_SPEC_SHIFT);
	}
	if (q > 0)
		p->state |= F_JSON_SEEN;
}

/* Turn the Accept scratch values into the final flags. */
static void
finish_accept(struct http_parser *p)
{
	int	 qt, qj;

	if (!(p->state & F_ACCEPT)) {
		p->req.accept_text = 0;
		p->req.accept_json = 1;
		return;
	}
	qt = p->req.accept_text - 1;	/* -1 when absent */
	qj = p->req.accept_json - 1;
	p->req.accept_json = qj > 0;
	p->req.accept_text = qt > 0 && (qj <= 0 || qt > qj ||
	    (qt == qj && (p->state & F_TEXT_FIRST)));
}

static enum http_parse_status
parse_request_line(struct http_parser *p, const char *line, size_t len)
{
	const char	*sp1, *sp2, *target, *ver, *end, *q;
	size_t		 mlen, tlen, vlen, i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if (c < 0x20 || c == 0x7f)
			return fail(p, 400, "control character in request line");
	}
	if ((sp1 = memchr(line, ' ', len)) == NULL)
		return fail(p, 400, "malformed request line");
	mlen = (size_t)(sp1 - line);
	target = sp1 + 1;
	if ((sp2 = memchr(target, ' ', len - mlen - 1)) == NULL)
		return fail(p, 400, "malformed request line");
	tlen = (size_t)(sp2 - target);
	ver = sp2 + 1;
	vlen = len - (size_t)(ver - line);
	if (memchr(ver, ' ', vlen) != NULL)
		return fail(p, 400, "malformed request line");

	if (mlen == 0)
		return fail(p, 400, "empty method");
	for (i = 0; i < mlen; i++)
		if (!is_tchar((unsigned char)line[i]))
			return fail(p, 400, "invalid method");
	if (mlen >= sizeof(p->req.method))
		return fail(p, 501, "method not implemented");

	if (vlen != 8 || memcmp(ver, "HTTP/", 5) != 0 ||
	    ver[5] < '0' || ver[5] > '9' || ver[6] != '.' ||
	    ver[7] < '0' || ver[7] > '9')
		return fail(p, 400, "malformed HTTP version");
	if (ver[5] != '1' || (ver[7] != '0' && ver[7] != '1'))
		return fail(p, 505, "HTTP version not supported");

	if (tlen == 0)
		return fail(p, 400, "empty request target");
	for (i = 0; i < tlen; i++)
		if ((unsigned char)target[i] > 0x7e)
			return fail(p, 400, "invalid character in request target");
	end = target + tlen;
	if (tlen >= 7 && (word_eq(target, 7, "http://") ||
	    (tlen >= 8 && word_eq(target, 8, "https://")))) {
		/* Absolute form: drop the scheme and the authority. */
		target = (const char *)memchr(target, ':', tlen) + 3;
		while (target < end && *target != '/' && *target != '?')
			target++;
		if (target == end || *target == '?') {
			target = "/";
			end = target + 1;
		}
	} else if (target[0] != '/')
		return fail(p, 400, "request target must start with /");
	for (i = 0; target + i < end && target[i] != '?'; i++)
		;
	if (i >= sizeof(p->req.path))
		return fail(p, 414, "URI too long");
	q = target + i < end ? target + i + 1 : end;
	if ((size_t)(end - q) >= sizeof(p->req.query))
		return fail(p, 414, "query string too long");

	memcpy(p->req.method, line, mlen);
	p->req.method[mlen] = '\0';
	memcpy(p->req.path, target, i);
	p->req.path[i] = '\0';
	memcpy(p->req.query, q, (size_t)(end - q));
	p->req.query[end - q] = '\0';
	p->req.minor = ver[7] - '0';
	set_state(p, S_HEADER);
	p->header_bytes = 0;
	return HTTP_PARSE_MORE;
}

static enum http_parse_status
header_content_length(struct http_parser *p, const char *v, size_t vlen)
{
	size_t	 i, n = 0;

	if (vlen == 0)
		return fail(p, 400, "invalid Content-Length");
	for (i = 0; i < vlen; i++) {
		if (v[i] < '0' || v[i] > '9')
			return fail(p, 400, "invalid Content-Length");
		/* Saturate just past the limit; the exact value is moot. */
		if (n <= HTTP_PARSE_BODY_MAX)
			n = n * 10 + (size_t)(v[i] - '0');
	}
	if ((p->state & F_CL) && n != p->req.content_length)
		return fail(p, 400, "conflicting Content-Length");
	p->state |= F_CL;
	p->req.content_length = n;
	if (n > HTTP_PARSE_BODY_MAX)
		return fail(p, 413, "request body too large");
	return HTTP_PARSE_MORE;
}

static void
header_connection(struct http_parser *p, const char *v, size_t vlen)
{
	const char	*e;
	size_t		 elen;

	while (next_element(&v, &vlen, &e, &elen)) {
		if (word_eq(e, elen, "close"))
			p->state |= F_CLOSE;
		else if (word_eq(e, elen, "keep-alive"))
			p->state |= F_KEEPALIVE;
	}
}

static enum http_parse_status
header_host(struct http_parser *p, const char *v, size_t vlen)
{
	if (p->req.has_host)
		return fail(p, 400, "more than one Host header");
	if (vlen >= sizeof(p->req.host))
		return fail(p, 400, "Host header too long");
	memcpy(p->req.host, v, vlen);
	p->req.host[vlen] = '\0';
	p->req.has_host = 1;
	return HTTP_PARSE_MORE;
}

static enum http_parse_status
end_of_headers(struct http_parser *p)
{
	finish_accept(p);
	if (p->req.minor == 0)
		p->req.keep_alive = (p->state & F_KEEPALIVE) &&
		    !(p->state & F_CLOSE);
	else
		p->req.keep_alive = !(p->state & F_CLOSE);
	p->body_left = p->req.content_length;
	set_state(p, p->body_left > 0 ? S_BODY : S_DONE);
	return HTTP_PARSE_MORE;
}

static enum http_parse_status
parse_header_line(struct http_parser *p, const char *line, size_t len)
{
	const char	*colon, *v, *e;
	size_t		 nlen, vlen, elen, i;

	if (len == 0)
		return end_of_headers(p);
	if (is_ows((unsigned char)line[0]))
		return fail(p, 400, "obsolete header line folding");
	if ((colon = memchr(line, ':', len)) == NULL)
		return fail(p, 400, "header line without colon");
	nlen = (size_t)(colon - line);
	if (nlen == 0)
		return fail(p, 400, "empty header name");
	for (i = 0; i < nlen; i++)
		if (!is_tchar((unsigned char)line[i]))
			return fail(p, 400, "invalid header name");
	v = colon + 1;
	vlen = len - nlen - 1;
	for (i = 0; i < vlen; i++) {
		unsigned char c = (unsigned char)v[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(p, 400, "control character in header");
	}
	trim_ows(&v, &vlen);

	if (word_eq(line, nlen, "content-length"))
		return header_content_length(p, v, vlen);
	if (word_eq(line, nlen, "transfer-encoding"))
		return fail(p, 400, "Transfer-Encoding not supported");
	if (word_eq(line, nlen, "host"))
		return header_host(p, v, vlen);
	if (word_eq(line, nlen, "connection"))
		header_connection(p, v, vlen);
	else if (word_eq(line, nlen, "accept"))
		while (next_element(&v, &vlen, &e, &elen))
			accept_element(p, e, elen);
	return HTTP_PARSE_MORE;
}

/* Interpret the complete line in p->line (LF removed). */
static enum http_parse_status
parse_line(struct http_parser *p)
{
	size_t	 len = p->line_len;

	if (len > 0 && p->line[len - 1] == '\r')
		len--;
	p->line_len = 0;
	if (STATE(p) == S_HEADER)
		return parse_header_line(p, p->line, len);
	if (len == 0) {
		/* RFC 9112 2.2: empty lines before a request are ignored. */
		if (++p->header_bytes > EMPTY_LINES_MAX)
			return fail(p, 400, "too many empty lines");
		return HTTP_PARSE_MORE;
	}
	return parse_request_line(p, p->line, len);
}

void
http_parse_init(struct http_parser *p)
{
	memset(p, 0, sizeof(*p));
	http_parse_reset(p);
}

void
http_parse_reset(struct http_parser *p)
{
	p->state = S_LINE;
	p->line_len = 0;
	p->header_bytes = 0;
	p->body_left = 0;
	memset(&p->req, 0, sizeof(p->req));
	p->error_status = 0;
	p->error = NULL;
}

const struct http_request *
http_parse_request(const struct http_parser *p)
{
	return &p->req;
}

enum http_parse_status
http_parse_feed(struct http_parser *p, const char *buf, size_t len,
    size_t *used)
{
	const char		*nl;
	size_t			 i = 0, n, need;
	enum http_parse_status	 st;

	for (;;) {
		switch (STATE(p)) {
		case S_ERROR:
			*used = i;
			return HTTP_PARSE_ERROR;
		case S_DONE:
			*used = i;
			return HTTP_PARSE_DONE;
		case S_BODY:
			n = len - i < p->body_left ? len - i : p->body_left;
			i += n;
			p->body_left -= n;
			if (p->body_left == 0) {
				set_state(p, S_DONE);
				continue;
			}
			*used = i;
			return HTTP_PARSE_MORE;
		default:
			break;
		}

		/* S_LINE or S_HEADER: gather a line. */
		if (i == len) {
			*used = i;
			return HTTP_PARSE_MORE;
		}
		nl = memchr(buf + i, '\n', len - i);
		n = nl != NULL ? (size_t)(nl - (buf + i)) : len - i;
		/* The line, with its LF still to come, must fit. */
		need = p->line_len + n + 1;
		if (STATE(p) == S_LINE && need > HTTP_PARSE_LINE_MAX) {
			*used = i;
			return fail(p, 414, "request line too long");
		}
		if (STATE(p) == S_HEADER && (need > HTTP_PARSE_LINE_MAX ||
		    p->header_bytes + need > HTTP_PARSE_HEADERS_MAX)) {
			*used = i;
			return fail(p, 431, "request header fields too large");
		}
		memcpy(p->line + p->line_len, buf + i, n);
		p->line_len += n;
		i += n;
		if (nl == NULL)
			continue;
		i++;			/* the LF */
		if (STATE(p) == S_HEADER)
			p->header_bytes += p->line_len + 1;
		p->line[p->line_len] = '\0';
		st = parse_line(p);
		if (st == HTTP_PARSE_ERROR) {
			*used = i;
			return st;
		}
	}
}
