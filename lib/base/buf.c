/*
 * buf.c -- growable byte buffer.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/text.h"
#include "base/xmalloc.h"

static void
buf_grow(struct buf *b, size_t need)
{
	size_t	 cap;

	if (b->len + need + 1 <= b->cap)
		return;
	cap = b->cap == 0 ? 256 : b->cap;
	while (cap < b->len + need + 1)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

void
buf_add(struct buf *b, const void *p, size_t len)
{
	buf_grow(b, len);
	memcpy(b->data + b->len, p, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
buf_json_str(struct buf *b, const char *s)
{
	char	 chunk[256];
	size_t	 n;

	buf_add(b, "\"", 1);
	while (*s != '\0') {
		n = text_json_escape(chunk, sizeof(chunk), &s);
		buf_add(b, chunk, n);
	}
	buf_add(b, "\"", 1);
}

char *
buf_steal(struct buf *b, size_t *len)
{
	char	*p;

	if (b->data == NULL)
		buf_add(b, "", 0);
	p = b->data;
	if (len != NULL)
		*len = b->len;
	memset(b, 0, sizeof(*b));
	return p;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
