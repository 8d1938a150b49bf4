/*
 * fifo.c -- a bounded FIFO of fixed-size records that drops the oldest
 * when full (fifo.h).
 */

#include <stddef.h>
#include <stdint.h>

#include "base/fifo.h"

void
fifo_init(struct fifo *q, void *slots, size_t cap, size_t size)
{
	q->slots = slots;
	q->size = size;
	q->cap = cap;
	q->head = 0;
	q->len = 0;
	q->dropped = 0;
}

void *
fifo_push(struct fifo *q, int *dropped)
{
	size_t	 i;

	if (dropped != NULL)
		*dropped = 0;
	if (q->len == q->cap) {
		/* The oldest goes: its slot becomes the new tail. */
		q->head = (q->head + 1) % q->cap;
		q->len--;
		q->dropped++;
		if (dropped != NULL)
			*dropped = 1;
	}
	i = (q->head + q->len) % q->cap;
	q->len++;
	return q->slots + i * q->size;
}

void *
fifo_peek(const struct fifo *q)
{
	if (q->len == 0)
		return NULL;
	return q->slots + q->head * q->size;
}

void
fifo_pop(struct fifo *q)
{
	if (q->len == 0)
		return;
	q->head = (q->head + 1) % q->cap;
	q->len--;
}

size_t
fifo_len(const struct fifo *q)
{
	return q->len;
}
