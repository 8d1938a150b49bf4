/*
 * mem.h -- clearing and copying large structures without making their
 * untouched pages resident.  A page of a static or freshly mapped
 * object that was never written is the kernel's shared zero page while
 * it is only read, and costs the process nothing; writing it, even a
 * zero, gives it a private page.  leaderd's struct config is some 250
 * kB, most of it room for what a configuration may hold (every key's
 * origin, sixteen elections) and zero in a typical one: clearing or
 * copying it whole made all of it resident, a quarter of the image's
 * memory.
 */

#ifndef MEM_H
#define MEM_H

#include <stddef.h>

/* Set len bytes at p to zero, writing only the pages that are not. */
void	mem_clear(void *p, size_t len);

/*
 * Make the len bytes at dst those at src (no overlap), writing only the
 * pages of dst that differ.  dst is read first, so it must hold defined
 * bytes: a static, or an allocation from calloc (which leaves a fresh
 * mapping's pages untouched too).
 */
void	mem_update(void *dst, const void *src, size_t len);

#endif /* MEM_H */
