/*
 * xmalloc.h -- allocation that cannot fail: out of memory is fatal here,
 * in one place, so no caller carries an OOM path.
 */

#ifndef XMALLOC_H
#define XMALLOC_H

#include <stddef.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
char	*xstrndup(const char *, size_t);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

#endif /* XMALLOC_H */
