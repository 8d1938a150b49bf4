/*
 * fifo_test.c -- the bounded FIFO: order, wrap-around, the oldest
 * dropped when full and counted, the slots it hands out inside the
 * caller's storage.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "base/fifo.h"

struct rec {
	int	 n;
	char	 text[12];
};

static void
push(struct fifo *q, int n, int want_dropped)
{
	struct rec	*r;
	int		 dropped = -1;

	r = fifo_push(q, &dropped);
	assert_non_null(r);
	assert_int_equal(dropped, want_dropped);
	r->n = n;
}

static int
pop(struct fifo *q)
{
	struct rec	*r;
	int		 n;

	r = fifo_peek(q);
	assert_non_null(r);
	n = r->n;
	fifo_pop(q);
	return n;
}

static void
test_order(void **state)
{
	struct rec	 slots[4];
	struct fifo	 q;
	int		 i;

	(void)state;
	fifo_init(&q, slots, 4, sizeof(slots[0]));
	assert_null(fifo_peek(&q));
	assert_int_equal(fifo_len(&q), 0);
	fifo_pop(&q);		/* empty: nothing happens */
	assert_int_equal(fifo_len(&q), 0);
	/* Many rounds, so head and tail wrap around the storage. */
	for (i = 0; i < 10; i++) {
		push(&q, 3 * i, 0);
		push(&q, 3 * i + 1, 0);
		push(&q, 3 * i + 2, 0);
		assert_int_equal(fifo_len(&q), 3);
		assert_int_equal(pop(&q), 3 * i);
		assert_int_equal(pop(&q), 3 * i + 1);
		assert_int_equal(pop(&q), 3 * i + 2);
		assert_null(fifo_peek(&q));
	}
	assert_int_equal(q.dropped, 0);
}

static void
test_full_drops_oldest(void **state)
{
	struct rec	 slots[3];
	struct fifo	 q;
	int		 i;

	(void)state;
	fifo_init(&q, slots, 3, sizeof(slots[0]));
	push(&q, 1, 0);
	push(&q, 2, 0);
	push(&q, 3, 0);
	push(&q, 4, 1);		/* 1 goes */
	push(&q, 5, 1);		/* 2 goes */
	assert_int_equal(fifo_len(&q), 3);
	assert_int_equal(q.dropped, 2);
	assert_int_equal(pop(&q), 3);
	assert_int_equal(pop(&q), 4);
	push(&q, 6, 0);
	push(&q, 7, 0);
	push(&q, 8, 1);		/* 5 goes */
	assert_int_equal(q.dropped, 3);
	assert_int_equal(pop(&q), 6);
	assert_int_equal(pop(&q), 7);
	assert_int_equal(pop(&q), 8);
	assert_int_equal(fifo_len(&q), 0);
	/* A NULL dropped is allowed, and the count still moves. */
	for (i = 0; i < 5; i++)
		((struct rec *)fifo_push(&q, NULL))->n = i;
	assert_int_equal(q.dropped, 5);
	assert_int_equal(pop(&q), 2);
}

static void
test_slots_in_storage(void **state)
{
	struct rec	 slots[5];
	struct fifo	 q;
	unsigned char	*p;
	int		 i;

	(void)state;
	fifo_init(&q, slots, 5, sizeof(slots[0]));
	for (i = 0; i < 23; i++) {
		p = fifo_push(&q, NULL);
		assert_true(p >= (unsigned char *)slots);
		assert_true(p + sizeof(slots[0]) <=
		    (unsigned char *)(slots + 5));
		assert_int_equal((p - (unsigned char *)slots) %
		    sizeof(slots[0]), 0);
		memcpy(((struct rec *)p)->text, "x", 2);
		((struct rec *)p)->n = i;
	}
	/* The last five, oldest first. */
	for (i = 18; i < 23; i++)
		assert_int_equal(pop(&q), i);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_full_drops_oldest),
		cmocka_unit_test(test_slots_in_storage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
