/*
 * buf.c -- growable byte buffer.
 */

#include <stdarg.h>
#include <stdint.h>
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
	const char	*src = p;
	char		*dst;
	size_t		 i;

	buf_grow(b, len);
	dst = b->data + b->len;
	/*
	 * The local API's answers are built of short pieces: copied here
	 * byte by byte, as musl's memcpy takes some 20 ns for any length.
	 */
	if (len <= 32) {
		for (i = 0; i < len; i++)
			dst[i] = src[i];
	} else
		memcpy(dst, src, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void
buf_add_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_add_u64(struct buf *b, uint64_t v)
{
	buf_grow(b, TEXT_INT_LEN);
	b->len += text_u64(b->data + b->len, v, 0);
}

void
buf_add_i64(struct buf *b, int64_t v)
{
	buf_grow(b, TEXT_INT_LEN);
	b->len += text_i64(b->data + b->len, v);
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	/* Formatted once where it fits the room left, else twice. */
	buf_grow(b, 64);
	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->data[b->len] = '\0';
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		buf_grow(b, (size_t)n);
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void
buf_json_str(struct buf *b, const char *s)
{
	buf_add(b, "\"", 1);
	/* Escaped in place, a piece of at most 256 bytes at a time. */
	while (*s != '\0') {
		buf_grow(b, 256);
		b->len += text_json_escape(b->data + b->len, b->cap - b->len,
		    &s);
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
