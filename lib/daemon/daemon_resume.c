/*
 * daemon_resume.c -- the claims' alarm on the clock that counts a
 * suspend.  Claims are judged on CLOCK_BOOTTIME (base/clock.h), but
 * libev's timers run on CLOCK_MONOTONIC, which stands still while the
 * machine is suspended: after a resume, the timer set for the end of a
 * claim fires as much later as the suspend lasted, and until then the
 * run mode's command runs on and the streams say nothing.  A timerfd on
 * CLOCK_BOOTTIME, armed for the earliest end of a claim we hold, fires
 * at once after a resume past it and does what those timers would have:
 * the local API's answers and streams, the command's claim, the shard
 * plan.  Without a suspend it is re-armed by every renew and, at a
 * claim's end, fires beside the loop's own timers, which it repeats
 * harmlessly.
 */

#include <sys/timerfd.h>

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include <ev.h>

#include "base/clock.h"
#include "base/log.h"
#include "core/elector.h"
#include "actions/actions.h"
#include "daemon/daemon_int.h"

static void
alarm_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct daemon	*d = w->data;
	uint64_t	 n;
	int		 i;

	(void)loop;
	(void)revents;
	if (read(d->resume_fd, &n, sizeof(n)) == -1 && errno != EAGAIN)
		log_warn("claims' alarm: read");
	d->resume_at_ms = 0;
	for (i = 0; i < d->nel; i++) {
		daemon_notify_local(&d->el[i]);
		if (d->el[i].act != NULL)
			actions_claim_check(d->el[i].act);
	}
	if (d->sh != NULL)
		daemon_shards_changed(d);
}

void
daemon_resume_init(struct daemon *d)
{
	d->resume_fd = timerfd_create(CLOCK_DEADLINE, TFD_NONBLOCK |
	    TFD_CLOEXEC);
	if (d->resume_fd == -1) {
		log_warn("claims' alarm: timerfd_create; a claim's end is "
		    "seen late after a suspend");
		return;
	}
	ev_io_init(&d->resume_io, alarm_cb, d->resume_fd, EV_READ);
	d->resume_io.data = d;
	ev_io_start(d->loop, &d->resume_io);
}

void
daemon_resume_arm(struct daemon *d)
{
	struct itimerspec	 its = { { 0, 0 }, { 0, 0 } };
	uint64_t		 now_ms = clock_mono_ms(), at = 0, until;
	double			 s;
	int			 i;

	if (d->resume_fd == -1)
		return;
	for (i = 0; i < d->nel; i++) {
		until = d->el[i].el.lead_until_ms;
		if (elector_is_leader(&d->el[i].el, now_ms) &&
		    until != ELECTOR_FOR_LIFE_MS && (at == 0 || until < at))
			at = until;
	}
	if (at == d->resume_at_ms)
		return;
	d->resume_at_ms = at;
	if (at != 0) {
		/* Relative: the test hook's rate applies (clock.c). */
		s = clock_timer_seconds(at - now_ms);
		its.it_value.tv_sec = (time_t)s;
		its.it_value.tv_nsec = (long)((s - (double)(time_t)s) * 1e9);
		if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
			its.it_value.tv_nsec = 1;
	}
	if (timerfd_settime(d->resume_fd, 0, &its, NULL) == -1)
		log_warn("claims' alarm: timerfd_settime");
}

void
daemon_resume_free(struct daemon *d)
{
	if (d->resume_fd == -1)
		return;
	ev_io_stop(d->loop, &d->resume_io);
	close(d->resume_fd);
	d->resume_fd = -1;
}
