/*
 * clock.h -- the daemon's clocks.  Deadlines use CLOCK_BOOTTIME only, a
 * monotonic clock that counts a suspend; the wall clock fills
 * acquireTime and renewTime and is never compared (DESIGN.md "Time").
 * In test builds (LEADERD_TEST_HOOKS) both can be bent through
 * $LEADERD_TEST_CLOCK, see clock.c.
 */

#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>
#include <time.h>

/*
 * The clock every claim and deadline is judged on: CLOCK_BOOTTIME, which
 * goes on counting while the machine is suspended, where CLOCK_MONOTONIC
 * (and so the event loop's timers) stands still.  Whether it counts a
 * suspend is what the election's simulation models (elector_sim).
 */
#define CLOCK_DEADLINE			CLOCK_BOOTTIME
#define CLOCK_DEADLINE_COUNTS_SUSPEND	(CLOCK_DEADLINE == CLOCK_BOOTTIME)

/* The deadline clock's milliseconds (CLOCK_BOOTTIME). */
uint64_t	clock_mono_ms(void);

/*
 * The real deadline clock in ms and in us, never bent by the test hook:
 * for what must follow real time even when the daemon's deadlines are
 * scaled, such as the duration of an API request (the server and the
 * metrics count real seconds) or the age of a token file (the kubelet
 * rotates it on real time).
 */
uint64_t	clock_raw_ms(void);
uint64_t	clock_raw_us(void);

/* Wall-clock microseconds since the Unix epoch. */
int64_t		clock_wall_us(void);

/* Real seconds until the deadline clock has advanced by ms, for timers. */
double		clock_timer_seconds(uint64_t ms);

#endif /* CLOCK_H */
