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

/*
 * The same grammar in nanoseconds, without the whole-millisecond rule:
 * for a peer's flag that Go reads to the nanosecond, so that leaderd
 * can tell what it cannot honour from what is not a duration at all.
 * Returns 0, or -1 with the reason in err.
 */
int	duration_parse_ns(const char *s, uint64_t *ns, char *err,
	    size_t errlen);

/* Format ms the way Go prints it ("1m30s", "500ms", "0s") into buf. */
void	duration_format(uint64_t ms, char *buf, size_t len);

#endif /* DURATION_H */
