/*
 * duration.h -- Go-syntax durations ("15s", "1m30s", "500ms", "1.5h")
 * to and from milliseconds.  Pure; no logging.
 */

#ifndef DURATION_H
#define DURATION_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parse s as a Go time.Duration (units ns, us, µs, ms, s, m, h; decimal
 * fractions allowed; no sign, since leaderd has no use for negative
 * durations).  The value must be a whole number of milliseconds.
 * Returns 0, or -1 with the reason in err.
 */
int	duration_parse(const char *s, uint64_t *ms, char *err, size_t errlen);

/* Format ms the way Go prints it ("1m30s", "500ms", "0s") into buf. */
void	duration_format(uint64_t ms, char *buf, size_t len);

#endif /* DURATION_H */
