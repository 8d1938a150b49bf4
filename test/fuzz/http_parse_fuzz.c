/*
 * http_parse_fuzz.c -- the local API's request parser, fed the input
 * whole and then in two pieces split at a point the input chooses; both
 * ways must agree.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "codec/http_parse.h"

static int
run(struct http_parser *p, const uint8_t *data, size_t size, size_t split,
    int *status)
{
	enum http_parse_status	 st = HTTP_PARSE_MORE;
	size_t			 off = 0, used, n;
	int			 done = 0, qn;
	const char		*q;
	char			 v[8];

	http_parse_init(p);
	while (off < size) {
		n = off < split ? split - off : size - off;
		st = http_parse_feed(p, (const char *)data + off, n, &used);
		if (used > n)
			abort();
		off += used;
		if (st == HTTP_PARSE_ERROR) {
			*status = p->error_status;
			return done;
		}
		if (st == HTTP_PARSE_DONE) {
			if (http_parse_request(p)->path[0] != '/')
				abort();
			/* The query is a string without spaces or controls. */
			q = http_parse_request(p)->query;
			if (memchr(q, '\0', HTTP_PARSE_QUERY_MAX) == NULL)
				abort();
			for (; *q != '\0'; q++)
				if ((unsigned char)*q <= ' ')
					abort();
			/* A lookup stays in its buffer and says what it did. */
			qn = http_query_get(http_parse_request(p)->query,
			    "wait", v, sizeof(v));
			if (qn < -1 || memchr(v, '\0', sizeof(v)) == NULL ||
			    (qn <= 0 && v[0] != '\0'))
				abort();
			done++;
			http_parse_reset(p);
		} else if (used < n)
			abort();	/* MORE must consume everything */
	}
	*status = 0;
	return done;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_parser	 a, b;
	int				 sa, sb, na, nb;

	na = run(&a, data, size, size, &sa);
	nb = run(&b, data, size, size > 0 ? data[0] % (size + 1) : 0, &sb);
	if (na != nb || sa != sb)
		abort();
	return 0;
}
