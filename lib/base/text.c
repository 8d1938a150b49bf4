/*
 * text.c -- UTF-8 lengths, JSON string bodies and terminal-safe text
 * (see text.h).  The UTF-8 rules are those of RFC 3629 and Go's
 * unicode/utf8, as jansson's src/utf.c applies them.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"

static const char hex[] = "0123456789abcdef";

size_t
text_utf8_len(const unsigned char *s)
{
	size_t		 n, i;
	unsigned int	 cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* also stops at the NUL */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

size_t
text_json_escape(char *dst, size_t len, const char **s)
{
	const unsigned char *p = (const unsigned char *)*s;
	size_t		 off = 0, n;

	if (len == 0)
		return 0;
	while (*p != '\0' && off + 7 < len) {
		/*
		 * Most text is printable ASCII: one byte as it is, without
		 * a call to memcpy (musl's costs some 20 ns however short).
		 */
		if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\') {
			dst[off++] = (char)*p++;
			continue;
		}
		if (*p == '"' || *p == '\\') {
			dst[off++] = '\\';
			dst[off++] = (char)*p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			dst[off++] = '\\';
			dst[off++] = 'u';
			dst[off++] = '0';
			dst[off++] = '0';
			dst[off++] = hex[*p >> 4];
			dst[off++] = hex[*p & 0xf];
			p++;
		} else if ((n = text_utf8_len(p)) == 0) {
			memcpy(dst + off, "\xef\xbf\xbd", 3);
			off += 3;
			p++;
		} else {
			memcpy(dst + off, p, n);
			off += n;
			p += n;
		}
	}
	dst[off] = '\0';
	*s = (const char *)p;
	return off;
}

/*
 * Characters that print as nothing or reorder what follows them: the
 * soft hyphen, the bidirectional marks, embeddings, overrides and
 * isolates, the zero-width spaces and joiners, the line and paragraph
 * separators, the byte-order mark, the interlinear annotations and the
 * tag characters (Unicode's invisible format characters, category Cf).
 */
static const struct { unsigned int lo, hi; } hidden[] = {
	{ 0x00ad, 0x00ad }, { 0x061c, 0x061c }, { 0x180e, 0x180e },
	{ 0x200b, 0x200f }, { 0x2028, 0x202e }, { 0x2060, 0x2064 },
	{ 0x2066, 0x206f }, { 0xfeff, 0xfeff }, { 0xfff9, 0xfffb },
	{ 0xe0000, 0xe007f }
};

/* The code point of the well-formed sequence of n bytes at p. */
static unsigned int
utf8_decode(const unsigned char *p, size_t n)
{
	static const unsigned char lead[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	unsigned int	 cp = p[0] & lead[n];
	size_t		 i;

	for (i = 1; i < n; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	return cp;
}

static int
is_hidden(unsigned int cp)
{
	size_t	 i;

	for (i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
		if (cp >= hidden[i].lo && cp <= hidden[i].hi)
			return 1;
	return 0;
}

size_t
text_escape(char *dst, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int	 cp;
	size_t		 off = 0, n, i;
	int		 w;

	if (len == 0)
		return 0;
	while (*p != '\0' && off + 5 < len) {
		n = text_utf8_len(p);
		/* C1 controls (U+0080 to U+009F) are escaped like C0. */
		if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
			n = 0;
		if (n == 1 && *p >= 0x20 && *p != 0x7f && *p != '\\') {
			dst[off++] = (char)*p++;
			continue;
		}
		if (n > 1 && is_hidden(cp = utf8_decode(p, n))) {
			/* As Go's %+q: \uXXXX, or \UXXXXXXXX past U+FFFF. */
			w = cp > 0xffff ? 10 : 6;
			if (off + (size_t)w >= len)
				break;
			snprintf(dst + off, len - off, cp > 0xffff ?
			    "\\U%08x" : "\\u%04x", cp);
			off += (size_t)w;
			p += n;
			continue;
		}
		if (n > 1) {
			for (i = 0; i < n; i++)
				dst[off++] = (char)*p++;
			continue;
		}
		if (*p == '\\') {
			dst[off++] = '\\';
			dst[off++] = '\\';
			p++;
			continue;
		}
		dst[off++] = '\\';
		dst[off++] = 'x';
		dst[off++] = hex[*p >> 4];
		dst[off++] = hex[*p & 0xf];
		p++;
	}
	dst[off] = '\0';
	return off;
}

size_t
text_u64(char *dst, uint64_t v, int width)
{
	char	 tmp[TEXT_INT_LEN];
	size_t	 n = 0, i;

	if (width > TEXT_INT_LEN - 1)
		width = TEXT_INT_LEN - 1;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n < (size_t)(width > 0 ? width : 0))
		tmp[n++] = '0';
	for (i = 0; i < n; i++)
		dst[i] = tmp[n - 1 - i];
	dst[n] = '\0';
	return n;
}

size_t
text_i64(char *dst, int64_t v)
{
	if (v >= 0)
		return text_u64(dst, (uint64_t)v, 0);
	/* The magnitude as unsigned: -INT64_MIN does not fit an int64_t. */
	dst[0] = '-';
	return 1 + text_u64(dst + 1, -(uint64_t)v, 0);
}

void
text_vappendf(char *buf, size_t len, size_t *used, const char *fmt,
    va_list ap)
{
	int	 n;

	if (len == 0)
		return;
	if (*used >= len)
		*used = len - 1;
	n = vsnprintf(buf + *used, len - *used, fmt, ap);
	if (n > 0)
		*used += (size_t)n;
	if (*used >= len)
		*used = len - 1;
	buf[*used] = '\0';
}

void
text_append(char *buf, size_t len, size_t *used, const char *s)
{
	size_t	 n;

	if (len == 0)
		return;
	if ((n = *used) >= len)
		n = len - 1;
	while (*s != '\0' && n + 1 < len)
		buf[n++] = *s++;
	buf[n] = '\0';
	*used = n;
}

void
text_appendf(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	text_vappendf(buf, len, used, fmt, ap);
	va_end(ap);
}
