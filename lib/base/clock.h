/*
 * clock.h -- the daemon's clocks.  Deadlines use the monotonic clock
 * only; the wall clock fills acquireTime and renewTime and is never
 * compared (DESIGN.md "Time").  In test builds (LEADERD_TEST_HOOKS) both
 * can be bent through $LEADERD_TEST_CLOCK, see clock.c.
 */

#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>

/* Monotonic milliseconds. */
uint64_t	clock_mono_ms(void);

/* Wall-clock microseconds since the Unix epoch. */
int64_t		clock_wall_us(void);

/* Real seconds until the monotonic clock has advanced by ms, for timers. */
double		clock_timer_seconds(uint64_t ms);

#endif /* CLOCK_H */
