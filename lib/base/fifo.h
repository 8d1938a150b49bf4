/*
 * fifo.h -- a bounded first-in first-out queue of fixed-size records in
 * storage the caller owns, that makes room for a new record by dropping
 * the oldest one.  For work that is best effort but should not be lost
 * to a burst: the Events of several elections that change at once.
 * Pure: no allocation, no logging.
 */

#ifndef FIFO_H
#define FIFO_H

#include <stddef.h>
#include <stdint.h>

struct fifo {
	unsigned char	*slots;		/* cap records of size bytes,
					   the caller's */
	size_t		 size;		/* bytes per record */
	size_t		 cap;		/* records the storage holds */
	size_t		 head;		/* index of the oldest record */
	size_t		 len;		/* records queued */
	uint64_t	 dropped;	/* records dropped for room, ever */
};

/*
 * Set q up over slots, cap records of size bytes each (cap and size
 * above 0); the storage is borrowed for q's life.
 */
void	fifo_init(struct fifo *q, void *slots, size_t cap, size_t size);

/*
 * Room for one more record at the tail: the slot to fill, left as it
 * was (it may hold an old record's bytes).  When q is full the oldest
 * record is dropped to make the room, counted in q->dropped, and
 * *dropped (if not NULL) is set to 1; else to 0.
 */
void	*fifo_push(struct fifo *q, int *dropped);

/* The oldest record, or NULL when q is empty; valid until a push. */
void	*fifo_peek(const struct fifo *q);

/* Drop the oldest record, if any. */
void	fifo_pop(struct fifo *q);

/* Records queued. */
size_t	fifo_len(const struct fifo *q);

#endif /* FIFO_H */
