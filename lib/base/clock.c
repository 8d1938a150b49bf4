/*
 * clock.c -- the daemon's two clocks: CLOCK_DEADLINE for every deadline,
 * CLOCK_REALTIME only for the times written into records.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/clock.h"

#ifdef LEADERD_TEST_HOOKS
static uint64_t	hook_suspended_us(void);
#endif

/* CLOCK_DEADLINE in microseconds, as the kernel keeps it. */
static uint64_t
deadline_us(void)
{
	struct timespec	 ts;
	uint64_t	 us;

	clock_gettime(CLOCK_DEADLINE, &ts);
	us = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
#ifdef LEADERD_TEST_HOOKS
	/* CLOCK_MONOTONIC stands still while the machine is suspended. */
	if (CLOCK_DEADLINE == CLOCK_MONOTONIC)
		us -= hook_suspended_us();
#endif
	return us;
}

uint64_t
clock_raw_ms(void)
{
	return deadline_us() / 1000;
}

uint64_t
clock_raw_us(void)
{
	return deadline_us();
}

#ifdef LEADERD_TEST_HOOKS
/*
 * Test builds only (make build/leaderd-testhooks): the file named by
 * $LEADERD_TEST_CLOCK holds "RATE OFFSET_S [SUSPENDED_S]".  The deadline
 * clock the daemon sees runs at RATE times the real one (F19, a clock
 * that runs slow or fast) and the wall clock is shifted by OFFSET_S
 * seconds (F18, a wall-clock jump).  SUSPENDED_S is how long the
 * machine has been suspended in all, as the kernel's clocks would show
 * it: CLOCK_MONOTONIC stood still that long, while CLOCK_BOOTTIME and the
 * wall clock ran on (F40; a test SIGSTOPs the daemon meanwhile, as a
 * suspend stops every process).  The file is re-read when it changes,
 * and the scaled clock stays continuous across a change of rate.
 */
#include <sys/stat.h>

static struct {
	double		 rate;		/* scaled ms per real ms */
	int64_t		 offset_us;	/* added to the wall clock */
	uint64_t	 suspended_us;	/* CLOCK_MONOTONIC stood still */
	uint64_t	 raw_base_ms;	/* real time of the last rate change */
	uint64_t	 base_ms;	/* scaled time at that moment */
	struct timespec	 mtime;		/* of the file when last read */
} hook = { 1.0, 0, 0, 0, 0, { 0, 0 } };

static uint64_t
hook_scaled(uint64_t raw_ms)
{
	/* Signed: a suspend set since the base moves raw_ms back. */
	return hook.base_ms + (uint64_t)(int64_t)((double)(int64_t)(raw_ms -
	    hook.raw_base_ms) * hook.rate);
}

static void
hook_reload(void)
{
	const char	*path = getenv("LEADERD_TEST_CLOCK");
	struct stat	 st;
	FILE		*f;
	double		 rate, off, susp = 0;
	uint64_t	 raw;

	if (path == NULL || stat(path, &st) == -1 ||
	    (st.st_mtim.tv_sec == hook.mtime.tv_sec &&
	    st.st_mtim.tv_nsec == hook.mtime.tv_nsec))
		return;
	hook.mtime = st.st_mtim;
	if ((f = fopen(path, "r")) == NULL)
		return;
	if (fscanf(f, "%lf %lf %lf", &rate, &off, &susp) >= 2 && rate > 0 &&
	    susp >= 0) {
		raw = clock_raw_ms();
		if (hook.raw_base_ms == 0)
			hook.base_ms = hook.raw_base_ms = raw;
		hook.base_ms = hook_scaled(raw);
		hook.raw_base_ms = raw;
		hook.rate = rate;
		hook.offset_us = (int64_t)(off * 1e6);
		/* Not rebased: the clock stood still, it did not slow. */
		hook.suspended_us = (uint64_t)(susp * 1e6);
	}
	fclose(f);
}

static uint64_t
hook_suspended_us(void)
{
	hook_reload();
	return hook.suspended_us;
}

uint64_t
clock_mono_ms(void)
{
	uint64_t	 raw = clock_raw_ms();

	hook_reload();
	if (hook.raw_base_ms == 0)
		return raw;
	return hook_scaled(raw);
}

double
clock_timer_seconds(uint64_t ms)
{
	return (double)ms / hook.rate / 1000.0;
}
#else
uint64_t
clock_mono_ms(void)
{
	return clock_raw_ms();
}

double
clock_timer_seconds(uint64_t ms)
{
	return (double)ms / 1000.0;
}
#endif

int64_t
clock_wall_us(void)
{
	struct timespec	 ts;
	int64_t		 us;

	clock_gettime(CLOCK_REALTIME, &ts);
	us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
#ifdef LEADERD_TEST_HOOKS
	hook_reload();
	us += hook.offset_us;
#endif
	return us;
}
