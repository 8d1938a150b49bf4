/*
 * http_parse_test.c -- table-driven tests of the HTTP request parser.
 *
 * Every case is a raw byte string and the list of outcomes it must
 * produce: complete requests (with their fields), an error status, or
 * "more input needed" at the end.  Each case is fed whole, one byte at a
 * time, and (when short) split in two at every position; all ways must
 * give the expected outcomes, including the same error text.
 *
 * And the control client's side: a query value escaped so that
 * http_query_get reads it back, and whole responses (http_response.c).
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

enum kind { X_END, X_DONE, X_ERROR, X_MORE };

struct outcome {
	enum kind	 kind;
	const char	*method;	/* X_DONE */
	const char	*path;
	int		 minor;
	int		 keep_alive;
	int		 text;		/* accept_text */
	int		 json;		/* accept_json */
	size_t		 clen;		/* content_length */
	int		 status;	/* X_ERROR: error_status */
	const char	*error;		/* filled by the driver only */
};

#define MAXOUT	4

struct tcase {
	const char	*name;
	const char	*raw;
	size_t		 len;
	struct outcome	 exp[MAXOUT];	/* ends at the first X_END */
};

#define RAW(s)		(s), sizeof(s) - 1
#define OK(m, p, mi, ka, t, j, cl) \
	{ X_DONE, (m), (p), (mi), (ka), (t), (j), (cl), 0, NULL }
#define GET11(p)	OK("GET", (p), 1, 1, 0, 1, 0)
#define ERR(st)		{ X_ERROR, NULL, NULL, 0, 0, 0, 0, 0, (st), NULL }
#define MORE		{ X_MORE, NULL, NULL, 0, 0, 0, 0, 0, 0, NULL }
#define END		{ X_END, NULL, NULL, 0, 0, 0, 0, 0, 0, NULL }

static const struct tcase cases[] = {
	/* Well-formed requests. */
	{ "simple", RAW("GET /leader HTTP/1.1\r\nHost: x\r\n\r\n"),
	    { GET11("/leader") } },
	{ "no headers", RAW("GET / HTTP/1.1\r\n\r\n"), { GET11("/") } },
	{ "query split off", RAW("GET /leader?a=1&b=/x HTTP/1.1\r\n\r\n"),
	    { GET11("/leader") } },
	{ "http/1.0 closes", RAW("GET / HTTP/1.0\r\n\r\n"),
	    { OK("GET", "/", 0, 0, 0, 1, 0) } },
	{ "http/1.0 keep-alive", RAW("GET / HTTP/1.0\r\n"
	    "Connection: Keep-Alive\r\n\r\n"),
	    { OK("GET", "/", 0, 1, 0, 1, 0) } },
	{ "http/1.1 close", RAW("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"),
	    { OK("GET", "/", 1, 0, 0, 1, 0) } },
	{ "connection list", RAW("GET / HTTP/1.0\r\n"
	    "Connection: Upgrade , keep-alive\r\n\r\n"),
	    { OK("GET", "/", 0, 1, 0, 1, 0) } },
	{ "close wins", RAW("GET / HTTP/1.1\r\nConnection: keep-alive\r\n"
	    "Connection: close\r\n\r\n"),
	    { OK("GET", "/", 1, 0, 0, 1, 0) } },
	{ "names ignore case", RAW("GET / HTTP/1.1\r\nCONNECTION: CLOSE\r\n"
	    "aCCEPT: Text/Plain\r\n\r\n"),
	    { OK("GET", "/", 1, 0, 1, 0, 0) } },
	{ "value white space", RAW("GET / HTTP/1.1\r\nAccept: \t text/plain \t"
	    "\r\n\r\n"),
	    { OK("GET", "/", 1, 1, 1, 0, 0) } },
	{ "other methods", RAW("HEAD /healthz HTTP/1.1\r\n\r\n"
	    "DELETE /x HTTP/1.1\r\n\r\nM-SEARCH / HTTP/1.1\r\n\r\n"),
	    { OK("HEAD", "/healthz", 1, 1, 0, 1, 0),
	      OK("DELETE", "/x", 1, 1, 0, 1, 0),
	      OK("M-SEARCH", "/", 1, 1, 0, 1, 0) } },
	{ "15-char method", RAW("ABCDEFGHIJKLMNO / HTTP/1.1\r\n\r\n"),
	    { OK("ABCDEFGHIJKLMNO", "/", 1, 1, 0, 1, 0) } },
	{ "bare LF", RAW("GET /x HTTP/1.1\nHost: y\n\n"), { GET11("/x") } },
	{ "mixed line ends", RAW("GET /x HTTP/1.1\r\nHost: y\n\r\n"),
	    { GET11("/x") } },
	{ "empty lines first", RAW("\r\n\n\r\nGET / HTTP/1.1\r\n\r\n"),
	    { GET11("/") } },
	{ "eight empty lines", RAW("\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n"
	    "GET / HTTP/1.1\r\n\r\n"), { GET11("/") } },
	{ "absolute form", RAW("GET http://127.0.0.1:4040/leader?x HTTP/1.1"
	    "\r\n\r\n"), { GET11("/leader") } },
	{ "absolute form, no path", RAW("GET HTTPS://localhost HTTP/1.1\r\n"
	    "\r\n"), { GET11("/") } },
	{ "absolute form, query only", RAW("GET http://h?x=/y HTTP/1.1\r\n"
	    "\r\n"), { GET11("/") } },
	{ "unknown headers kept out", RAW("GET / HTTP/1.1\r\nX-Foo: a:b\r\n"
	    "Host: [::1]:4040\r\nUser-Agent: curl/8\r\nX-Empty:\r\n\r\n"),
	    { GET11("/") } },
	{ "obs-text in value", RAW("GET / HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n"),
	    { GET11("/") } },

	/* Accept. */
	{ "accept text", RAW("GET / HTTP/1.1\r\nAccept: text/plain\r\n\r\n"),
	    { OK("GET", "/", 1, 1, 1, 0, 0) } },
	{ "accept json then text", RAW("GET / HTTP/1.1\r\n"
	    "Accept: application/json, text/plain\r\n\r\n"),
	    { OK("GET", "/", 1, 1, 0, 1, 0) } },
	{ "accept text then json", RAW("GET / HTTP/1.1\r\n"
	    "Accept: text/plain, application/json\r\n\r\n"),
	    { OK("GET", "/", 1, 1, 1, 1, 0) } },
	{ "accept any", RAW("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n"),
	    { GET11("/") } },
	{ "accept application/*", RAW("GET / HTTP/1.1\r\n"
	    "Accept: application/*\r\n\r\n"), { GET11("/") } },
	{ "accept text q=0", RAW("GET / HTTP/1.1\r\n"
	    "Accept: text/plain;q=0\r\n\r\n"),
	    { OK("GET", "/", 1, 1, 0, 0, 0) } },
	{ "accept json lower q", RAW("GET / HTTP/1.1\r\n"
	    "Accept: application/json;q=0.5, text/plain\r\n\r\n"),
	    { OK("GET", "/", 1, 1, 1, 1, 0) } },
	{ "accept text lower q", RAW("GET / HTTP/1.1\r\n"
	    "Accept: text/plain; q=0.5, application/json\r\n\r\n"),
	    { OK("GET", "/", 1, 1, 0, 1, 0) } },
	{ "accept json refused", RAW("GET / HTTP/1.1\r\n"
	    "Accept: application/json;q=0, */*;q=0.8, text/plain;q=0.1\r\n"
	    "\r\n"), { OK("GET", "/", 1, 1, 1, 0, 0) } },
	{ "accept other", RAW("GET / HTTP/1.1\r\nAccept: text/html\r\n\r\n"),
	    { OK("GET", "/", 1, 1, 0, 0, 0) } },
	{ "accept two headers", RAW("GET / HTTP/1.1\r\nAccept: text/plain\r\n"
	    "Accept: application/json\r\n\r\n"),
	    { OK("GET", "/", 1, 1, 1, 1, 0) } },
	{ "accept empty", RAW("GET / HTTP/1.1\r\nAccept:\r\n\r\n"),
	    { GET11("/") } },
	{ "accept bad q", RAW("GET / HTTP/1.1\r\n"
	    "Accept: text/plain;q=abc\r\n\r\n"),
	    { OK("GET", "/", 1, 1, 1, 0, 0) } },

	/* Bodies and pipelining. */
	{ "body skipped", RAW("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n"
	    "0123456789GET /y HTTP/1.1\r\n\r\n"),
	    { OK("POST", "/x", 1, 1, 0, 1, 10), GET11("/y") } },
	{ "body looks like a request", RAW("PUT / HTTP/1.1\r\n"
	    "Content-Length: 18\r\n\r\nGET / HTTP/1.1\r\n\r\n"),
	    { OK("PUT", "/", 1, 1, 0, 1, 18) } },
	{ "content-length 0", RAW("POST / HTTP/1.1\r\nContent-Length: 0\r\n"
	    "\r\n"), { OK("POST", "/", 1, 1, 0, 1, 0) } },
	{ "content-length repeated", RAW("POST / HTTP/1.1\r\n"
	    "Content-Length: 2\r\ncontent-length: 2\r\n\r\nab"),
	    { OK("POST", "/", 1, 1, 0, 1, 2) } },
	{ "content-length leading 0s", RAW("POST / HTTP/1.1\r\n"
	    "Content-Length: 0003\r\n\r\nabc"),
	    { OK("POST", "/", 1, 1, 0, 1, 3) } },
	{ "pipelined", RAW("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.0\r\n\r\n"),
	    { GET11("/a"), OK("GET", "/b", 0, 0, 0, 1, 0) } },
	{ "pipelined, last partial", RAW("GET /a HTTP/1.1\r\n\r\n"
	    "HEAD /b HTTP/1.1\r\nAccept: text/plain\r\n\r\nGET /c HTT"),
	    { GET11("/a"), OK("HEAD", "/b", 1, 1, 1, 0, 0), MORE } },
	{ "flags do not leak", RAW("GET /a HTTP/1.1\r\nConnection: close\r\n"
	    "Accept: text/plain\r\nContent-Length: 1\r\n\r\nx"
	    "GET /b HTTP/1.1\r\n\r\n"),
	    { OK("GET", "/a", 1, 0, 1, 0, 1), GET11("/b") } },
	{ "partial headers", RAW("GET / HTTP/1.1\r\nHost: x\r\n"), { MORE } },
	{ "partial body", RAW("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n"
	    "abc"), { MORE } },
	{ "good then bad", RAW("GET /a HTTP/1.1\r\n\r\nGARBAGE\r\n\r\n"),
	    { GET11("/a"), ERR(400) } },

	/* Request line errors. */
	{ "http/0.9", RAW("GET /\r\n\r\n"), { ERR(400) } },
	{ "two spaces", RAW("GET  / HTTP/1.1\r\n\r\n"), { ERR(400) } },
	{ "trailing space", RAW("GET / HTTP/1.1 \r\n\r\n"), { ERR(400) } },
	{ "tab separator", RAW("GET\t/ HTTP/1.1\r\n\r\n"), { ERR(400) } },
	{ "leading space", RAW(" GET / HTTP/1.1\r\n\r\n"), { ERR(400) } },
	{ "http/2.0", RAW("GET / HTTP/2.0\r\n\r\n"), { ERR(505) } },
	{ "http/1.2", RAW("GET / HTTP/1.2\r\n\r\n"), { ERR(505) } },
	{ "http/0.9 spelled", RAW("GET / HTTP/0.9\r\n\r\n"), { ERR(505) } },
	{ "http/1.10", RAW("GET / HTTP/1.10\r\n\r\n"), { ERR(400) } },
	{ "lower-case version", RAW("GET / http/1.1\r\n\r\n"), { ERR(400) } },
	{ "not http", RAW("GET / FTP/1.1\r\n\r\n"), { ERR(400) } },
	{ "relative target", RAW("GET leader HTTP/1.1\r\n\r\n"),
	    { ERR(400) } },
	{ "asterisk target", RAW("OPTIONS * HTTP/1.1\r\n\r\n"), { ERR(400) } },
	{ "bad method char", RAW("G@T / HTTP/1.1\r\n\r\n"), { ERR(400) } },
	{ "16-char method", RAW("ABCDEFGHIJKLMNOP / HTTP/1.1\r\n\r\n"),
	    { ERR(501) } },
	{ "NUL in request line", RAW("GET /\0 HTTP/1.1\r\n\r\n"),
	    { ERR(400) } },
	{ "bare CR", RAW("GET / HTTP/1.1\rHost: x\r\n\r\n"), { ERR(400) } },
	{ "8-bit target", RAW("GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n"),
	    { ERR(400) } },
	{ "DEL in target", RAW("GET /\x7f HTTP/1.1\r\n\r\n"), { ERR(400) } },
	{ "nine empty lines", RAW("\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n"
	    "GET / HTTP/1.1\r\n\r\n"), { ERR(400) } },
	{ "binary junk", RAW("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n"),
	    { ERR(400) } },

	/* Header errors. */
	{ "obs-fold", RAW("GET / HTTP/1.1\r\nX-A: b\r\n  c\r\n\r\n"),
	    { ERR(400) } },
	{ "first header indented", RAW("GET / HTTP/1.1\r\n\tHost: x\r\n\r\n"),
	    { ERR(400) } },
	{ "no colon", RAW("GET / HTTP/1.1\r\nHost x\r\n\r\n"), { ERR(400) } },
	{ "space before colon", RAW("GET / HTTP/1.1\r\nHost : x\r\n\r\n"),
	    { ERR(400) } },
	{ "empty name", RAW("GET / HTTP/1.1\r\n: x\r\n\r\n"), { ERR(400) } },
	{ "bad name char", RAW("GET / HTTP/1.1\r\nX(y): x\r\n\r\n"),
	    { ERR(400) } },
	{ "NUL in value", RAW("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n"),
	    { ERR(400) } },
	{ "control in value", RAW("GET / HTTP/1.1\r\nX: a\x01\r\n\r\n"),
	    { ERR(400) } },
	{ "CR in value", RAW("GET / HTTP/1.1\r\nX: a\rb\r\n\r\n"),
	    { ERR(400) } },
	{ "content-length letters", RAW("POST / HTTP/1.1\r\n"
	    "Content-Length: abc\r\n\r\n"), { ERR(400) } },
	{ "content-length negative", RAW("POST / HTTP/1.1\r\n"
	    "Content-Length: -1\r\n\r\n"), { ERR(400) } },
	{ "content-length list", RAW("POST / HTTP/1.1\r\n"
	    "Content-Length: 1, 1\r\n\r\nx"), { ERR(400) } },
	{ "content-length empty", RAW("POST / HTTP/1.1\r\n"
	    "Content-Length:\r\n\r\n"), { ERR(400) } },
	{ "content-length conflict", RAW("POST / HTTP/1.1\r\n"
	    "Content-Length: 1\r\nContent-Length: 2\r\n\r\nxx"), { ERR(400) } },
	{ "content-length max", RAW("POST / HTTP/1.1\r\n"
	    "Content-Length: 4096\r\n\r\n"), { MORE } },
	{ "content-length too big", RAW("POST / HTTP/1.1\r\n"
	    "Content-Length: 4097\r\n\r\n"), { ERR(413) } },
	{ "content-length huge", RAW("POST / HTTP/1.1\r\n"
	    "Content-Length: 184467440737095516160000\r\n\r\n"), { ERR(413) } },
	{ "transfer-encoding", RAW("POST / HTTP/1.1\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), { ERR(400) } },
};

/* Feed raw in chunks: first, then step bytes at a time. */
static int
run(const char *raw, size_t len, size_t first, size_t step,
    struct outcome *out)
{
	struct http_parser	*p;
	const struct http_request *r;
	enum http_parse_status	 st;
	size_t			 off = 0, end, used;
	int			 n = 0, pending = 0, stopped = 0;

	p = malloc(sizeof(*p));
	assert_non_null(p);
	http_parse_init(p);
	memset(out, 0, MAXOUT * sizeof(*out));
	while (off < len && !stopped) {
		end = off + (off == 0 ? first : step);
		if (end > len)
			end = len;
		while (off < end) {
			st = http_parse_feed(p, raw + off, end - off, &used);
			assert_true(used <= end - off);
			off += used;
			pending = 1;
			if (st == HTTP_PARSE_MORE) {
				/* MORE means every byte was taken. */
				assert_int_equal(off, end);
				break;
			}
			assert_true(n < MAXOUT - 1);
			if (st == HTTP_PARSE_ERROR) {
				out[n].kind = X_ERROR;
				out[n].status = p->error_status;
				out[n].error = p->error;
				assert_non_null(p->error);
				n++;
				stopped = 1;
				break;
			}
			r = http_parse_request(p);
			out[n].kind = X_DONE;
			out[n].method = strdup(r->method);
			out[n].path = strdup(r->path);
			out[n].minor = r->minor;
			out[n].keep_alive = r->keep_alive;
			out[n].text = r->accept_text;
			out[n].json = r->accept_json;
			out[n].clen = r->content_length;
			n++;
			http_parse_reset(p);
			pending = 0;
		}
	}
	if (!stopped && pending) {
		assert_true(n < MAXOUT - 1);
		out[n++].kind = X_MORE;
	}
	free(p);
	return n;
}

static void
free_outcomes(struct outcome *out)
{
	int	 i;

	for (i = 0; i < MAXOUT; i++) {
		free((char *)(uintptr_t)out[i].method);
		free((char *)(uintptr_t)out[i].path);
	}
}

static int
same_str(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* Compare one run with the expectation and with the whole-input run. */
static void
check(const char *name, const char *mode, const struct outcome *exp,
    const struct outcome *got, const struct outcome *whole)
{
	int	 i;

	for (i = 0; i < MAXOUT; i++) {
		const struct outcome *e = &exp[i], *g = &got[i];

		if (e->kind != g->kind)
			fail_msg("%s [%s] outcome %d: kind %d, want %d%s%s",
			    name, mode, i, g->kind, e->kind,
			    g->error ? ": " : "", g->error ? g->error : "");
		if (e->kind == X_END)
			break;
		if (e->kind == X_ERROR) {
			if (g->status != e->status)
				fail_msg("%s [%s] outcome %d: status %d (%s), "
				    "want %d", name, mode, i, g->status,
				    g->error, e->status);
			if (!same_str(g->error, whole[i].error))
				fail_msg("%s [%s] outcome %d: error \"%s\", "
				    "whole input gave \"%s\"", name, mode, i,
				    g->error, whole[i].error);
		}
		if (e->kind != X_DONE)
			continue;
		if (!same_str(g->method, e->method) ||
		    !same_str(g->path, e->path))
			fail_msg("%s [%s] outcome %d: \"%s %s\", want \"%s %s\"",
			    name, mode, i, g->method, g->path, e->method,
			    e->path);
		if (g->minor != e->minor || g->keep_alive != e->keep_alive ||
		    g->text != e->text || g->json != e->json ||
		    g->clen != e->clen)
			fail_msg("%s [%s] outcome %d: minor %d keep_alive %d "
			    "text %d json %d clen %zu, want %d %d %d %d %zu",
			    name, mode, i, g->minor, g->keep_alive, g->text,
			    g->json, g->clen, e->minor, e->keep_alive,
			    e->text, e->json, e->clen);
	}
}

/* Run one case in every way of splitting its input. */
static void
check_case(const char *name, const char *raw, size_t len,
    const struct outcome *exp)
{
	struct outcome	 whole[MAXOUT], got[MAXOUT];
	char		 mode[32];
	size_t		 k;

	run(raw, len, len, len, whole);
	check(name, "whole", exp, whole, whole);
	run(raw, len, 1, 1, got);
	check(name, "bytewise", exp, got, whole);
	free_outcomes(got);
	if (len <= 1024) {
		for (k = 1; k < len; k++) {
			run(raw, len, k, len, got);
			snprintf(mode, sizeof(mode), "split at %zu", k);
			check(name, mode, exp, got, whole);
			free_outcomes(got);
		}
		/* Odd chunk sizes, too. */
		for (k = 2; k < 8 && k < len; k++) {
			run(raw, len, k, k, got);
			snprintf(mode, sizeof(mode), "chunks of %zu", k);
			check(name, mode, exp, got, whole);
			free_outcomes(got);
		}
	}
	free_outcomes(whole);
}

static void
test_table(void **state)
{
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(cases[i].name, cases[i].raw, cases[i].len,
		    cases[i].exp);
}

/* A buffer holding prefix, then fill bytes of c, then suffix. */
static char *
build(const char *prefix, int c, size_t fill, const char *suffix,
    size_t *len)
{
	size_t	 pl = strlen(prefix), sl = strlen(suffix);
	char	*b;

	b = malloc(pl + fill + sl + 1);
	assert_non_null(b);
	memcpy(b, prefix, pl);
	memset(b + pl, c, fill);
	memcpy(b + pl + fill, suffix, sl + 1);
	*len = pl + fill + sl;
	return b;
}

static void
test_limits(void **state)
{
	static const struct outcome ok_q[] = { GET11("/"), END };
	static const struct outcome e414[] = { ERR(414), END };
	static const struct outcome e431[] = { ERR(431), END };
	static const struct outcome more[] = { MORE, END };
	struct outcome	 exp[2];
	char		*b, *path;
	size_t		 len, fill, n, i;

	(void)state;

	/* A request line of exactly HTTP_PARSE_LINE_MAX bytes, and one more. */
	fill = HTTP_PARSE_LINE_MAX - strlen("GET /? HTTP/1.1\r\n");
	b = build("GET /?", 'q', fill, " HTTP/1.1\r\n\r\n", &len);
	check_case("line at limit", b, len, ok_q);
	free(b);
	b = build("GET /?", 'q', fill + 1, " HTTP/1.1\r\n\r\n", &len);
	check_case("line over limit", b, len, e414);
	free(b);
	/* A long line that never ends is cut at the limit too. */
	b = build("GET /", 'a', 100000, "", &len);
	check_case("endless line", b, len, e414);
	free(b);

	/* The longest path that fits, and one byte more. */
	fill = HTTP_PARSE_PATH_MAX - 2;
	b = build("GET /", 'p', fill, " HTTP/1.1\r\n\r\n", &len);
	path = build("/", 'p', fill, "", &n);
	exp[0] = (struct outcome)GET11(path);
	exp[1] = (struct outcome)END;
	check_case("path at limit", b, len, exp);
	free(b);
	free(path);
	b = build("GET /", 'p', fill + 1, " HTTP/1.1\r\n\r\n", &len);
	check_case("path over limit", b, len, e414);
	free(b);

	/* One header line longer than a line may be. */
	b = build("GET / HTTP/1.1\r\nX-Big: ", 'v', HTTP_PARSE_LINE_MAX,
	    "\r\n\r\n", &len);
	check_case("header line too long", b, len, e431);
	free(b);

	/*
	 * Many small headers: exactly HTTP_PARSE_HEADERS_MAX bytes of header
	 * lines (each "X-Hdr: vvv...\r\n" of 64 bytes) is fine, more is 431.
	 */
	for (i = 0; i < 2; i++) {
		size_t	 nlines = HTTP_PARSE_HEADERS_MAX / 64, j, off;
		char	*r;

		r = malloc(64 * nlines + 64);
		assert_non_null(r);
		off = (size_t)sprintf(r, "GET / HTTP/1.1\r\n");
		for (j = 0; j < nlines; j++) {
			/* The last line loses 2 bytes for the final CRLF. */
			size_t	 l = j + 1 < nlines ? 64 : 62;

			if (i == 1 && j + 1 == nlines)
				l++;
			memcpy(r + off, "X-Hdr: ", 7);
			memset(r + off + 7, 'v', l - 9);
			memcpy(r + off + l - 2, "\r\n", 2);
			off += l;
		}
		memcpy(r + off, "\r\n", 2);
		off += 2;
		if (i == 0)
			check_case("headers at limit", r, off, ok_q);
		else
			check_case("headers over limit", r, off, e431);
		free(r);
	}

	/* A huge header section is cut, not buffered. */
	{
		size_t	 nlines = 1000, j, off;
		char	*r = malloc(nlines * 20 + 64);

		assert_non_null(r);
		off = (size_t)sprintf(r, "GET / HTTP/1.1\r\n");
		for (j = 0; j < nlines; j++)
			off += (size_t)sprintf(r + off, "X-%05zu: abcdefghi\r\n",
			    j);
		off += (size_t)sprintf(r + off, "\r\n");
		check_case("huge header section", r, off, e431);
		free(r);
	}

	/* The largest body is skipped. */
	b = build("POST / HTTP/1.1\r\nContent-Length: 4096\r\n\r\n", 'b',
	    HTTP_PARSE_BODY_MAX, "", &len);
	exp[0] = (struct outcome)OK("POST", "/", 1, 1, 0, 1, 4096);
	check_case("largest body", b, len, exp);
	free(b);
	b = build("POST / HTTP/1.1\r\nContent-Length: 4096\r\n\r\n", 'b',
	    HTTP_PARSE_BODY_MAX - 1, "", &len);
	check_case("body one short", b, len, more);
	free(b);
}

/* After an error or a request, further input is not consumed. */
static void
test_sticky(void **state)
{
	struct http_parser	 p;
	size_t			 used;
	const char		*bad = "BAD\r\nGET / HTTP/1.1\r\n\r\n";
	const char		*good = "GET / HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n";

	(void)state;
	http_parse_init(&p);
	assert_int_equal(http_parse_feed(&p, bad, strlen(bad), &used),
	    HTTP_PARSE_ERROR);
	assert_int_equal(used, 5);
	assert_int_equal(p.error_status, 400);
	assert_int_equal(http_parse_feed(&p, good, strlen(good), &used),
	    HTTP_PARSE_ERROR);
	assert_int_equal(used, 0);

	http_parse_init(&p);
	assert_int_equal(http_parse_feed(&p, good, strlen(good), &used),
	    HTTP_PARSE_DONE);
	assert_int_equal(used, 18);
	assert_string_equal(http_parse_request(&p)->path, "/");
	assert_int_equal(http_parse_feed(&p, good + used, strlen(good) - used,
	    &used), HTTP_PARSE_DONE);
	assert_int_equal(used, 0);
	assert_string_equal(http_parse_request(&p)->path, "/");
	http_parse_reset(&p);
	assert_int_equal(http_parse_feed(&p, good + 18, strlen(good) - 18,
	    &used), HTTP_PARSE_DONE);
	assert_int_equal(used, strlen(good) - 18);
	assert_string_equal(http_parse_request(&p)->path, "/b");

	/* Empty input needs more. */
	http_parse_reset(&p);
	assert_int_equal(http_parse_feed(&p, "", 0, &used), HTTP_PARSE_MORE);
	assert_int_equal(used, 0);
}

/* Parse one complete request; the parser holds it. */
static const struct http_request *
parse_req(struct http_parser *p, const char *raw)
{
	size_t	 used;

	http_parse_init(p);
	if (http_parse_feed(p, raw, strlen(raw), &used) != HTTP_PARSE_DONE)
		fail_msg("not parsed: %s (%s)", raw, p->error ? p->error : "");
	return http_parse_request(p);
}

struct host_case {
	const char	*req;		/* the request */
	const char	*local;		/* the address the client reached */
	const char	*listen;	/* configured listen host */
	int		 want;		/* 0, 400, 421 */
};

/* The Host check against DNS rebinding (I3). */
/* http_query_get: first occurrence decoded, occurrences counted. */
static void
test_query_get(void **state)
{
	static const struct {
		const char	*query;
		const char	*key;
		int		 rv;
		const char	*value;
	} gc[] = {
		{ "", "wait", 0, "" },
		{ "wait=30s&index=7", "wait", 1, "30s" },
		{ "wait=30s&index=7", "index", 1, "7" },
		{ "waiting=1&xwait=2", "wait", 0, "" },
		{ "&&wait=1s&&", "wait", 1, "1s" },
		{ "wait=", "wait", 1, "" },
		{ "wait", "wait", -1, "" },
		{ "a=%33%30+s", "a", 1, "30 s" },
		{ "a=%3", "a", -1, "" },
		{ "a=%zz", "a", -1, "" },
		{ "a=%00", "a", -1, "" },
		{ "a=1&a=2", "a", 2, "1" },
		{ "a&a=2", "a", -1, "" },
		{ "a=1&a", "a", 2, "1" },
		{ "%61=1", "a", 0, "" },
		{ "a=12345678", "a", 1, "12345678" },
		{ "a=123456789", "a", -1, "" },
	};
	char	 v[9];
	size_t	 i;
	int	 rv;

	(void)state;
	for (i = 0; i < sizeof(gc) / sizeof(gc[0]); i++) {
		rv = http_query_get(gc[i].query, gc[i].key, v, sizeof(v));
		if (rv != gc[i].rv || strcmp(v, gc[i].value) != 0)
			fail_msg("\"%s\" %s: %d \"%s\"", gc[i].query,
			    gc[i].key, rv, v);
	}
}

static void
test_host_check(void **state)
{
	static const struct host_case hcases[] = {
		{ "GET / HTTP/1.1\r\nHost: localhost:4040\r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 0 },
		{ "GET / HTTP/1.1\r\nHost: LocalHost\r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 0 },
		{ "GET / HTTP/1.1\r\nHost: 127.0.0.1:4040\r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 0 },
		{ "GET / HTTP/1.1\r\nHost: [::1]:4040\r\n\r\n",
		    "::1", "[::1]", 0 },
		{ "GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 0 },
		/* A pod IP on a wildcard listener: the address reached. */
		{ "GET /healthz HTTP/1.1\r\nHost: 10.1.2.3:4040\r\n\r\n",
		    "10.1.2.3", "0.0.0.0", 0 },
		{ "GET /healthz HTTP/1.1\r\nHost: [fd00::5]:4040\r\n\r\n",
		    "fd00::5", "", 0 },
		/* A configured name. */
		{ "GET / HTTP/1.1\r\nHost: leaderd.local:4040\r\n\r\n",
		    "127.0.0.1", "leaderd.local", 0 },
		/* No Host: HTTP/1.0 only. */
		{ "GET / HTTP/1.0\r\n\r\n", "127.0.0.1", "127.0.0.1", 0 },
		{ "GET / HTTP/1.1\r\n\r\n", "127.0.0.1", "127.0.0.1", 400 },
		/* DNS rebinding: the attacker's name. */
		{ "GET /leader HTTP/1.1\r\nHost: evil.example:4040\r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 421 },
		{ "GET /leader HTTP/1.0\r\nHost: evil.example\r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 421 },
		/* Another address, another port, junk. */
		{ "GET / HTTP/1.1\r\nHost: 10.1.2.4:4040\r\n\r\n",
		    "10.1.2.3", "0.0.0.0", 421 },
		{ "GET / HTTP/1.1\r\nHost: 0.0.0.0:4040\r\n\r\n",
		    "127.0.0.1", "0.0.0.0", 421 },
		{ "GET / HTTP/1.1\r\nHost: localhost:4041\r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 421 },
		{ "GET / HTTP/1.1\r\nHost: localhost:\r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 421 },
		{ "GET / HTTP/1.1\r\nHost: localhost:4040x\r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 421 },
		{ "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n",
		    "::1", "", 421 },
		{ "GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n",
		    "::1", "", 421 },
		{ "GET / HTTP/1.1\r\nHost: \r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 421 },
		{ "GET / HTTP/1.1\r\nHost: localhost.evil.example\r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 421 },
		/* IPv4-mapped loopback is loopback (netaddr.h); no other. */
		{ "GET / HTTP/1.1\r\nHost: [::ffff:127.0.0.1]:4040\r\n\r\n",
		    "::1", "[::1]", 0 },
		{ "GET / HTTP/1.1\r\nHost: [::ffff:10.0.0.1]:4040\r\n\r\n",
		    "::1", "[::1]", 421 },
		{ "GET / HTTP/1.1\r\nHost: [0:0:0:0:0:0:0:1]\r\n\r\n",
		    "::1", "", 0 },
		/* An IPv4 literal is not written in brackets. */
		{ "GET / HTTP/1.1\r\nHost: [127.0.0.1]:4040\r\n\r\n",
		    "127.0.0.1", "", 421 },
		{ "GET / HTTP/1.1\r\nHost: ::1:4040\r\n\r\n",
		    "::1", "", 421 },
		{ "GET / HTTP/1.1\r\nHost: localhost:99999\r\n\r\n",
		    "127.0.0.1", "127.0.0.1", 421 },
	};
	struct http_parser	 p;
	const struct http_request *req;
	size_t			 i, used;
	int			 got;

	(void)state;
	for (i = 0; i < sizeof(hcases) / sizeof(hcases[0]); i++) {
		req = parse_req(&p, hcases[i].req);
		got = http_host_check(req, hcases[i].local, 4040,
		    hcases[i].listen);
		if (got != hcases[i].want)
			fail_msg("case %zu: %s: got %d, want %d", i,
			    hcases[i].req, got, hcases[i].want);
	}
	/* Two Host headers, or one too long, are malformed. */
	http_parse_init(&p);
	assert_int_equal(http_parse_feed(&p, "GET / HTTP/1.1\r\nHost: a\r\n"
	    "Host: b\r\n\r\n", 36, &used), HTTP_PARSE_ERROR);
	assert_int_equal(p.error_status, 400);
}

/* Arbitrary bytes never crash and always end in a defined state. */
static void
test_noise(void **state)
{
	struct http_parser	 p;
	char			 buf[512];
	size_t			 used, off;
	unsigned int		 seed = 12345, i, j;
	enum http_parse_status	 st;

	(void)state;
	for (i = 0; i < 2000; i++) {
		for (j = 0; j < sizeof(buf); j++) {
			seed = seed * 1103515245u + 12345u;
			/* Mostly request-like bytes (and NUL), some noise. */
			buf[j] = (seed >> 16) % 8 == 0 ? (char)(seed >> 8) :
			    "GET /HTP1.\r\n: ab"[(seed >> 20) % 17];
		}
		http_parse_init(&p);
		off = 0;
		do {
			st = http_parse_feed(&p, buf + off, sizeof(buf) - off,
			    &used);
			assert_true(used <= sizeof(buf) - off);
			off += used;
			if (st == HTTP_PARSE_DONE)
				http_parse_reset(&p);
		} while (st == HTTP_PARSE_DONE && off < sizeof(buf));
		if (st == HTTP_PARSE_ERROR) {
			assert_non_null(p.error);
			assert_true(p.error_status >= 400 &&
			    p.error_status <= 505);
		} else if (st == HTTP_PARSE_MORE)
			assert_int_equal(off, sizeof(buf));
	}
}

/* The query string is kept, undecoded, apart from the path. */
static void
test_query(void **state)
{
	static const struct {
		const char	*raw;
		const char	*path;
		const char	*query;
		int		 status;	/* 0: parsed */
	} qc[] = {
		{ "GET /leader?wait=30s&index=7 HTTP/1.1\r\n\r\n", "/leader",
		    "wait=30s&index=7", 0 },
		{ "GET /leader HTTP/1.1\r\n\r\n", "/leader", "", 0 },
		{ "GET /leader? HTTP/1.1\r\n\r\n", "/leader", "", 0 },
		{ "GET /a?b?c=%20 HTTP/1.1\r\n\r\n", "/a", "b?c=%20", 0 },
		{ "GET http://h:1/leader?index=2 HTTP/1.1\r\n\r\n",
		    "/leader", "index=2", 0 },
	};
	struct http_parser	 p;
	const struct http_request *r;
	char			 raw[HTTP_PARSE_LINE_MAX];
	size_t			 i, used, n;

	(void)state;
	for (i = 0; i < sizeof(qc) / sizeof(qc[0]); i++) {
		http_parse_init(&p);
		assert_int_equal(http_parse_feed(&p, qc[i].raw,
		    strlen(qc[i].raw), &used), HTTP_PARSE_DONE);
		r = http_parse_request(&p);
		assert_string_equal(r->path, qc[i].path);
		assert_string_equal(r->query, qc[i].query);
		/* A reset forgets the query. */
		http_parse_reset(&p);
		assert_int_equal(http_parse_feed(&p, "GET / HTTP/1.1\r\n\r\n",
		    18, &used), HTTP_PARSE_DONE);
		assert_string_equal(http_parse_request(&p)->query, "");
	}
	/* The longest request line keeps its whole query. */
	n = HTTP_PARSE_LINE_MAX - strlen("GET /? HTTP/1.1\r\n");
	memcpy(raw, "GET /?", 6);
	memset(raw + 6, 'q', n);
	memcpy(raw + 6 + n, " HTTP/1.1\r\n", 11);
	http_parse_init(&p);
	assert_int_equal(http_parse_feed(&p, raw, 6 + n + 11, &used),
	    HTTP_PARSE_MORE);
	assert_int_equal(http_parse_feed(&p, "\r\n", 2, &used),
	    HTTP_PARSE_DONE);
	assert_int_equal(strlen(http_parse_request(&p)->query), n);
}

/* http_query_escape: what http_query_get decodes back, byte for byte. */
static void
test_query_escape(void **state)
{
	static const struct {
		const char	*s;
		const char	*want;
	} ec[] = {
		{ "", "" },
		{ "pod-a_1.x~", "pod-a_1.x~" },
		{ "a b&c=d", "a%20b%26c%3Dd" },
		{ "100%+", "100%25%2B" },
		{ "\xc3\xa9/?#", "%C3%A9%2F%3F%23" },
	};
	char	 q[64], v[80], small[4];
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof(ec) / sizeof(ec[0]); i++) {
		assert_int_equal(http_query_escape(ec[i].s, q, sizeof(q)),
		    (int)strlen(ec[i].want));
		assert_string_equal(q, ec[i].want);
		snprintf(v, sizeof(v), "to=%s", q);
		assert_int_equal(http_query_get(v, "to", q, sizeof(q)), 1);
		assert_string_equal(q, ec[i].s);
	}
	/* Too long, even by the last escape: -1 and "". */
	assert_int_equal(http_query_escape("abcd", small, sizeof(small)), -1);
	assert_string_equal(small, "");
	assert_int_equal(http_query_escape("ab ", small, sizeof(small)), -1);
	assert_string_equal(small, "");
	assert_int_equal(http_query_escape("abc", small, sizeof(small)), 3);
	assert_int_equal(http_query_escape("", small, 0), -1);
}

/* http_response_parse: whole, cut short, closed early, not HTTP. */
static void
test_response(void **state)
{
	static const struct {
		const char	*raw;
		int		 eof;
		int		 rv;
		int		 status;
		const char	*body;	/* or the error's start */
	} rc[] = {
		{ "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", 0, 1,
		    200, "abc" },
		/* Bytes past Content-Length are not the body. */
		{ "HTTP/1.1 200 OK\r\ncontent-length:  2\r\n\r\nabc", 0, 1,
		    200, "ab" },
		{ "HTTP/1.0 409 Conflict\r\nX: y\r\nContent-Length: 0\r\n"
		    "\r\n", 0, 1, 409, "" },
		{ "HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nx", 0, 1, 200,
		    "x" },
		/* Without Content-Length, the body ends at the close. */
		{ "HTTP/1.1 200 OK\r\n\r\n{}", 0, 0, 0, "" },
		{ "HTTP/1.1 200 OK\r\n\r\n{}", 1, 1, 200, "{}" },
		/* More to come. */
		{ "", 0, 0, 0, "" },
		{ "HTTP/1.1 200 OK\r\nContent-Len", 0, 0, 0, "" },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", 0, 0,
		    0, "" },
		/* Closed early. */
		{ "", 1, -1, 0, "the connection was closed without" },
		{ "HTTP/1.1 200 OK\r\nConte", 1, -1, 0,
		    "the connection was closed in the middle" },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", 1, -1,
		    0, "the connection was closed after 2 of 5" },
		/* Not the local API. */
		{ "SSH-2.0-OpenSSH_9.6\r\n\r\n", 0, -1, 0,
		    "not an HTTP/1.x answer" },
		{ "HTTP/2 200\r\n\r\n", 0, -1, 0, "not an HTTP/1.x" },
		{ "HTTP/1.1 2x0 OK\r\n\r\n", 0, -1, 0, "a malformed" },
		{ "HTTP/1.1 099 Odd\r\n\r\n", 0, -1, 0, "a malformed" },
		{ "HTTP/1.1 200OK\r\n\r\n", 0, -1, 0, "a malformed" },
		{ "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 0, -1,
		    0, "a bad Content-Length" },
		{ "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n", 0, -1, 0,
		    "a bad Content-Length" },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
		    "Content-Length: 1\r\n\r\nx", 0, -1, 0,
		    "a bad Content-Length" },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999\r\n"
		    "\r\n", 0, -1, 0, "a bad Content-Length" },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "2\r\n{}\r\n0\r\n\r\n", 0, -1, 0,
		    "a Transfer-Encoding" },
	};
	struct http_response	 r;
	char			 err[128], *big;
	size_t			 i;
	int			 rv;

	(void)state;
	for (i = 0; i < sizeof(rc) / sizeof(rc[0]); i++) {
		err[0] = '\0';
		rv = http_response_parse(rc[i].raw, strlen(rc[i].raw),
		    rc[i].eof, &r, err, sizeof(err));
		if (rv != rc[i].rv)
			fail_msg("case %zu: %d, want %d (%s)", i, rv, rc[i].rv,
			    err);
		if (rv == 1) {
			assert_int_equal(r.status, rc[i].status);
			assert_int_equal(r.body_len, strlen(rc[i].body));
			assert_memory_equal(r.body, rc[i].body, r.body_len);
		} else if (rv == -1 && strncmp(err, rc[i].body,
		    strlen(rc[i].body)) != 0)
			fail_msg("case %zu: \"%s\", want \"%s...\"", i, err,
			    rc[i].body);
	}
	/* A head that never ends is not read for ever. */
	big = malloc(20000);
	assert_non_null(big);
	memset(big, 'x', 20000);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	assert_int_equal(http_response_parse(big, 20000, 0, &r, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "head is over"));
	free(big);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_sticky),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_query),
		cmocka_unit_test(test_query_get),
		cmocka_unit_test(test_host_check),
		cmocka_unit_test(test_query_escape),
		cmocka_unit_test(test_response),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
