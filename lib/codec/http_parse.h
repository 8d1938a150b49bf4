/*
 * http_parse.h -- a push parser for the local API's HTTP/1.x requests,
 * in the shape of hiredis' reader: feed it bytes as they arrive, ask it
 * whether a whole request is there.  Pure: no I/O, no allocation, no
 * logging, so it can be fuzzed.
 *
 * Only what the local API needs is kept: method, path, query string
 * (beside the path, undecoded), HTTP version, Accept, Connection,
 * Content-Length and Host (a second Host header, or one over 255 bytes,
 * is a 400).
 * Request bodies are counted and skipped up to HTTP_PARSE_BODY_MAX.
 */

#ifndef HTTP_PARSE_H
#define HTTP_PARSE_H

#include <stddef.h>

#define HTTP_PARSE_LINE_MAX	2048	/* request line, incl. CRLF */
#define HTTP_PARSE_HEADERS_MAX	8192	/* all header lines together */
#define HTTP_PARSE_BODY_MAX	4096	/* request body bytes accepted */
#define HTTP_PARSE_PATH_MAX	1024
#define HTTP_PARSE_QUERY_MAX	HTTP_PARSE_LINE_MAX	/* any query that fits a line */

enum http_parse_status {
	HTTP_PARSE_MORE,	/* all input consumed; need more bytes */
	HTTP_PARSE_DONE,	/* a request is complete; see http_parse_request */
	HTTP_PARSE_ERROR	/* malformed or too large; see error_status */
};

struct http_request {
	char	 method[16];		/* "GET", ... */
	char	 path[HTTP_PARSE_PATH_MAX];	/* without the query string */
	char	 query[HTTP_PARSE_QUERY_MAX];	/* after '?', undecoded; "" if none */
	int	 minor;			/* 0 for HTTP/1.0, 1 for HTTP/1.1 */
	int	 keep_alive;		/* the connection may be reused */
	int	 accept_text;		/* Accept names text/plain before JSON */
	int	 accept_json;		/* Accept allows application/json */
	size_t	 content_length;	/* body length */
	char	 host[256];		/* the Host header, "" if absent */
	int	 has_host;		/* a Host header was sent */
};

struct http_parser {
	int			 state;		/* internal */
	size_t			 line_len;	/* bytes in the current line */
	size_t			 header_bytes;	/* header bytes so far */
	size_t			 body_left;	/* body bytes still to skip */
	char			 line[HTTP_PARSE_LINE_MAX]; /* the current line */
	struct http_request	 req;		/* the request being parsed */
	int			 error_status;	/* 400, 413, 431, 501, 505 */
	const char		*error;		/* static reason for the error */
};

/* Prepare p for a new connection. */
void	http_parse_init(struct http_parser *p);

/*
 * Feed len bytes.  *used is set to how many were consumed: on DONE the
 * rest belongs to the next request (pipelining); call http_parse_reset
 * and feed it again.  On ERROR the connection should get
 * p->error_status and be closed.
 */
enum http_parse_status http_parse_feed(struct http_parser *p,
	    const char *buf, size_t len, size_t *used);

/* The complete request, valid after DONE until the next reset. */
const struct http_request *http_parse_request(const struct http_parser *p);

/* Start on the next request of the same connection. */
void	http_parse_reset(struct http_parser *p);

/* Questions about a parsed request (http_request.c). */

/*
 * Whether a request that came in over TCP names this server in its Host
 * header, so a web page whose DNS name was rebound to 127.0.0.1 cannot
 * read the local API (ref/security-review.md I3).  Accepted hosts, any
 * letter case, each optionally with ":port" where port is local_port:
 * "localhost", an IP literal that is a loopback address or equals
 * local_ip (the address the client connected to; IPv6 in brackets), and
 * listen_host (the configured listen host, or NULL).  A request without
 * Host is accepted for HTTP/1.0 only.  Returns 0 to serve the request,
 * 400 (HTTP/1.1 without Host) or 421 (another host) to refuse it.
 */
int	http_host_check(const struct http_request *req, const char *local_ip,
	    int local_port, const char *listen_host);

/*
 * Look key (not empty) up in an undecoded query string such as
 * req->query ("wait=30s&index=7").  Keys are compared as sent, without
 * decoding; empty elements ("&&") are skipped.  The value of key's first
 * occurrence is decoded ('+' is a space, %XX a byte) into out, outlen
 * bytes with the NUL.  Returns how many times key occurs (0 when absent,
 * out then ""), or -1 (out "") when its first occurrence has no '=', a
 * bad or NUL escape, or a value that does not fit out.
 */
int	http_query_get(const char *query, const char *key, char *out,
	    size_t outlen);

/*
 * Write s into out (outlen bytes with the NUL) as a query value that
 * http_query_get decodes back to s: letters, digits and "-._~" as they
 * are, every other byte as %XX.  Returns the length written, or -1 (out
 * "") when it does not fit.
 */
int	http_query_escape(const char *s, char *out, size_t outlen);

/*
 * A whole HTTP/1.x response, as leaderd's control client reads the
 * local API's answers (http_response.c).
 */
struct http_response {
	int		 status;	/* the status code, 100 to 599 */
	long long	 content_length;	/* -1 when absent */
	const char	*body;		/* into the parsed bytes */
	size_t		 body_len;	/* bytes of body */
};

/*
 * Parse the response in buf, the len bytes read so far; eof says the
 * server has closed the connection.  Returns 1 when the response is
 * whole (its head, and Content-Length bytes of body or, without
 * Content-Length, every byte up to eof; bytes past Content-Length are
 * ignored), 0 when more bytes are needed, or -1 with what is wrong in
 * err: not HTTP/1.x, a bad status line or Content-Length, a chunked
 * body (the local API never sends one), or the end of the connection
 * before the end of the response.  Pure: no I/O, no allocation.
 */
int	http_response_parse(const char *buf, size_t len, int eof,
	    struct http_response *r, char *err, size_t errlen);

#endif /* HTTP_PARSE_H */
