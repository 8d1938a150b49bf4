/*
 * buf.h -- a growable byte buffer for building replies and log lines,
 * with a JSON string writer for the few documents leaderd writes itself
 * (the local API's answers; Lease bodies go through lease.c).
 */

#ifndef BUF_H
#define BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	char	*data;		/* NUL-terminated; NULL until first append */
	size_t	 len;		/* bytes used, without the NUL */
	size_t	 cap;		/* bytes allocated */
};

/* Append len bytes of p. */
void	buf_add(struct buf *b, const void *p, size_t len);
/* Append the NUL-terminated string s (without its NUL). */
void	buf_add_str(struct buf *b, const char *s);
/*
 * Append v in decimal (text_u64, text_i64): the local API's answers
 * write their numbers with these rather than buf_printf, which costs a
 * few microseconds per answer on musl.
 */
void	buf_add_u64(struct buf *b, uint64_t v);
void	buf_add_i64(struct buf *b, int64_t v);
/* Append a formatted string. */
void	buf_printf(struct buf *b, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/*
 * Append s as a quoted JSON string, escaped as text_json_escape does
 * (bytes that are not UTF-8 become U+FFFD).
 */
void	buf_json_str(struct buf *b, const char *s);
/* Give the data to the caller (who frees it) and reset b. */
char	*buf_steal(struct buf *b, size_t *len);
/* Free what b holds and reset it. */
void	buf_free(struct buf *b);

#endif /* BUF_H */
