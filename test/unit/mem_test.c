/*
 * mem_test.c -- mem.c: clearing and copying give the bytes memset and
 * memcpy give, and leave the pages that would not change off the
 * resident set (the process's RSS, from /proc/self/statm, grows by the
 * pages written, not by the object's size).
 */

#include <sys/mman.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/mem.h"

#define PAGES	1024	/* 4 MiB of 4 KiB pages: far above the noise */

static long
resident_pages(void)
{
	FILE	*f;
	long	 size = 0, rss = 0;

	if ((f = fopen("/proc/self/statm", "r")) == NULL)
		fail_msg("/proc/self/statm: cannot open");
	if (fscanf(f, "%ld %ld", &size, &rss) != 2)
		fail_msg("/proc/self/statm: cannot read");
	fclose(f);
	return rss;
}

static unsigned char *
fresh(size_t len)
{
	void	*p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

static void
test_clear(void **state)
{
	size_t		 page = (size_t)sysconf(_SC_PAGESIZE);
	size_t		 len = PAGES * page;
	unsigned char	*p = fresh(len);
	long		 before;
	size_t		 i;

	(void)state;
	before = resident_pages();
	mem_clear(p, len);
	/* Never written, all zero: nothing became resident. */
	assert_true(resident_pages() - before < PAGES / 16);
	/* Bytes that are not zero, anywhere, are cleared. */
	p[0] = 1;
	p[page * 7 + 13] = 2;
	p[len - 1] = 3;
	mem_clear(p + 1, len - 2);
	assert_int_equal(p[0], 1);
	assert_int_equal(p[len - 1], 3);
	for (i = 1; i < len - 1; i++)
		if (p[i] != 0)
			fail_msg("byte %zu not cleared", i);
	mem_clear(p, 0);
	assert_int_equal(p[0], 1);
	munmap(p, len);
}

static void
test_update(void **state)
{
	size_t		 page = (size_t)sysconf(_SC_PAGESIZE);
	size_t		 len = PAGES * page;
	unsigned char	*dst = fresh(len), *src = malloc(len);
	long		 before;
	size_t		 i;

	(void)state;
	assert_non_null(src);
	memset(src, 0, len);
	src[page * 3 + 5] = 'x';
	src[page * 900] = 'y';
	before = resident_pages();
	mem_update(dst, src, len);
	/* Two pages differed: two written, not PAGES. */
	assert_true(resident_pages() - before < PAGES / 16);
	assert_memory_equal(dst, src, len);
	/* Unaligned, and every byte different. */
	for (i = 0; i < len; i++)
		src[i] = (unsigned char)(i * 7 + 1);
	mem_update(dst + 3, src + 5, len - 10);
	assert_memory_equal(dst + 3, src + 5, len - 10);
	assert_int_equal(dst[0], 0);
	free(src);
	munmap(dst, len);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clear),
		cmocka_unit_test(test_update),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
