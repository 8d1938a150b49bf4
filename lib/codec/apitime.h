/*
 * apitime.h -- the Kubernetes API's times: MicroTime out, RFC 3339 in.
 *
 * The calendar arithmetic is done here, so no result depends on TZ or
 * on timegm.  Pure: no I/O, no clock, no logging.
 */

#ifndef APITIME_H
#define APITIME_H

#include <stdint.h>

#define APITIME_MICRO_LEN	28	/* "2006-01-02T15:04:05.000000Z" + NUL */

/*
 * Format a wall-clock time in µs as a MicroTime: exactly six fractional
 * digits and "Z" (ref/clientgo-leaderelection.md 4.3).  Times outside
 * 0000..9999 are clamped to that range.  buf must hold APITIME_MICRO_LEN
 * bytes.
 */
void	apitime_format_micro(int64_t us, char *buf);

/*
 * Parse an RFC 3339 time (any number of fractional digits up to nine,
 * "Z" or an offset) into wall-clock µs.  Returns 0, or -1 if s is not
 * RFC 3339 or falls outside 0000..9999 UTC.
 */
int	apitime_parse(const char *s, int64_t *us);

/*
 * The whole seconds of a wall-clock time in µs, rounded towards minus
 * infinity: the time a second-precision metav1.Time keeps.
 */
int64_t	apitime_seconds(int64_t us);

#endif /* APITIME_H */
