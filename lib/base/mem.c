/*
 * mem.c -- clearing and copying without writing pages that would not
 * change (see mem.h).
 */

#include <stdint.h>
#include <string.h>

#include "base/mem.h"

#define PAGE	4096	/* the smallest page: a larger one is whole pages */

/* Bytes from p to the next page boundary, at most left. */
static size_t
to_page_end(const void *p, size_t left)
{
	size_t	 n = PAGE - (uintptr_t)p % PAGE;

	return n < left ? n : left;
}

static int
all_zero(const unsigned char *p, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

void
mem_clear(void *p, size_t len)
{
	unsigned char	*d = p;
	size_t		 n;

	while (len > 0) {
		n = to_page_end(d, len);
		if (!all_zero(d, n))
			memset(d, 0, n);
		d += n;
		len -= n;
	}
}

void
mem_update(void *dst, const void *src, size_t len)
{
	unsigned char		*d = dst;
	const unsigned char	*s = src;
	size_t			 n;

	while (len > 0) {
		n = to_page_end(d, len);
		if (memcmp(d, s, n) != 0)
			memcpy(d, s, n);
		d += n;
		s += n;
		len -= n;
	}
}
