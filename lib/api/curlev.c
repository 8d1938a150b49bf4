/*
 * curlev.c -- libcurl multi driven by libev, after curl's evhiperfifo.c
 * (ref/c-style-anchors.md 3a), with the pitfalls of 3b avoided:
 *
 * - one ev_timer for curl's single deadline; timeout_ms 0 starts a
 *   0-second timer so curl is never called from inside its own timer
 *   callback, and milliseconds become seconds with / 1000.0;
 * - socket events are passed as CURL_CSELECT_* bits;
 * - curl_multi_info_read is drained after every curl_multi_socket_action,
 *   and each done callback runs after its easy handle left the multi;
 * - the timer is not stopped when curl says nothing runs, since a done
 *   callback may have started the next transfer meanwhile;
 * - curl_multi_cleanup runs before the per-socket structs are freed,
 *   since it may still call the socket callback.
 *
 * A done callback may start, cancel or even free: the dispatch loop
 * re-checks its state after every callback, and curlev_free called from a
 * callback is completed once the dispatch unwinds (the redis rule: never
 * free an object under its own callback).
 */

#include <stdlib.h>
#include <string.h>

#include "api/curlev.h"
#include "base/log.h"
#include "base/xmalloc.h"

struct cv_xfer {
	CURL		*easy;		/* borrowed from the caller */
	curlev_done_cb	 done_cb;
	void		*arg;
	struct cv_xfer	*next;
};

struct cv_sock {
	struct curlev	*cv;
	curl_socket_t	 fd;
	struct ev_io	 io;		/* io.data = this */
	struct cv_sock	*prev, *next;
};

struct curlev {
	struct ev_loop	*loop;
	CURLM		*multi;
	struct ev_timer	 timer;		/* curl's deadline; timer.data = cv */
	struct cv_xfer	*xfers;		/* running transfers */
	int		 nxfers;
	struct cv_sock	*socks;		/* sockets curl asked us to watch */
	int		 depth;		/* nested dispatches */
	int		 dead;		/* curlev_free ran during a dispatch */
};

static void	curlev_destroy(struct curlev *);

static struct cv_xfer *
xfer_unlink(struct curlev *cv, CURL *easy)
{
	struct cv_xfer	**xp, *x;

	for (xp = &cv->xfers; (x = *xp) != NULL; xp = &x->next)
		if (x->easy == easy) {
			*xp = x->next;
			cv->nxfers--;
			return x;
		}
	return NULL;
}

/*
 * An error from curl_multi_socket_action leaves every transfer in an
 * unknown state ("should not be called again on the same multi handle
 * after an error"); that is a broken invariant, not a network failure.
 * CURLM_BAD_SOCKET only says a socket went away first, as evhiperfifo
 * notes.
 */
static void
check_mcode(const char *where, CURLMcode mc)
{
	if (mc == CURLM_OK || mc == CURLM_BAD_SOCKET)
		return;
	fatalx("curl %s: %s", where, curl_multi_strerror(mc));
}

/*
 * Hand finished transfers to their owners.  Each easy handle leaves the
 * multi before its callback runs, so the callback may reuse it.
 */
static void
dispatch(struct curlev *cv)
{
	struct cv_xfer	*x;
	CURLMsg		*msg;
	CURL		*easy;
	CURLcode	 result;
	int		 left;

	cv->depth++;
	while (!cv->dead &&
	    (msg = curl_multi_info_read(cv->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		/* The message dies with the handle: copy it first. */
		easy = msg->easy_handle;
		result = msg->data.result;
		x = xfer_unlink(cv, easy);
		curl_multi_remove_handle(cv->multi, easy);
		if (x == NULL)
			continue;
		x->done_cb(easy, result, x->arg);
		free(x);
	}
	cv->depth--;
	if (cv->dead && cv->depth == 0)
		curlev_destroy(cv);
}

static void
timer_cb(struct ev_loop *loop, struct ev_timer *w, int revents)
{
	struct curlev	*cv = w->data;
	int		 running;

	(void)loop;
	(void)revents;
	check_mcode("timer", curl_multi_socket_action(cv->multi,
	    CURL_SOCKET_TIMEOUT, 0, &running));
	dispatch(cv);
}

static void
io_cb(struct ev_loop *loop, struct ev_io *w, int revents)
{
	struct cv_sock	*s = w->data;
	struct curlev	*cv = s->cv;
	curl_socket_t	 fd = s->fd;
	int		 action = 0, running;

	(void)loop;
	if (revents & EV_READ)
		action |= CURL_CSELECT_IN;
	if (revents & EV_WRITE)
		action |= CURL_CSELECT_OUT;
	if (revents & EV_ERROR)
		action |= CURL_CSELECT_ERR;
	/* s may be freed inside (CURL_POLL_REMOVE): use the copies. */
	check_mcode("socket", curl_multi_socket_action(cv->multi, fd, action,
	    &running));
	dispatch(cv);
}

/* CURLMOPT_SOCKETFUNCTION: watch, rewatch or forget a socket. */
static int
sock_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *sockp)
{
	struct curlev	*cv = userp;
	struct cv_sock	*s = sockp;
	int		 events = 0;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		/* Not necessarily closed; curl forgets the pointer anyway. */
		if (s == NULL)
			return 0;
		ev_io_stop(cv->loop, &s->io);
		if (s->prev != NULL)
			s->prev->next = s->next;
		else
			cv->socks = s->next;
		if (s->next != NULL)
			s->next->prev = s->prev;
		free(s);
		return 0;
	}
	if (s == NULL) {
		s = xcalloc(1, sizeof(*s));
		s->cv = cv;
		s->fd = fd;
		ev_init(&s->io, io_cb);
		s->io.data = s;
		s->next = cv->socks;
		if (cv->socks != NULL)
			cv->socks->prev = s;
		cv->socks = s;
		curl_multi_assign(cv->multi, fd, s);
	}
	if (what & CURL_POLL_IN)
		events |= EV_READ;
	if (what & CURL_POLL_OUT)
		events |= EV_WRITE;
	ev_io_stop(cv->loop, &s->io);
	ev_io_set(&s->io, fd, events);
	ev_io_start(cv->loop, &s->io);
	return 0;
}

/* CURLMOPT_TIMERFUNCTION: replace the single deadline. */
static int
multi_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct curlev	*cv = userp;

	(void)multi;
	ev_timer_stop(cv->loop, &cv->timer);
	if (timeout_ms >= 0) {
		/*
		 * 0 means "as soon as possible", but not from inside this
		 * callback: a 0-second timer runs on the next loop pass.
		 */
		ev_timer_set(&cv->timer, (double)timeout_ms / 1000.0, 0.);
		ev_timer_start(cv->loop, &cv->timer);
	}
	return 0;
}

struct curlev *
curlev_new(struct ev_loop *loop, char *err, size_t errlen)
{
	static int	 global_done;
	struct curlev	*cv;
	CURLcode	 rc;

	if (!global_done) {
		if ((rc = curl_global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK) {
			snprintf(err, errlen, "curl_global_init: %s",
			    curl_easy_strerror(rc));
			return NULL;
		}
		global_done = 1;
	}
	cv = xcalloc(1, sizeof(*cv));
	cv->loop = loop;
	if ((cv->multi = curl_multi_init()) == NULL) {
		snprintf(err, errlen, "curl_multi_init failed");
		free(cv);
		return NULL;
	}
	ev_init(&cv->timer, timer_cb);
	cv->timer.data = cv;
	curl_multi_setopt(cv->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	curl_multi_setopt(cv->multi, CURLMOPT_SOCKETDATA, cv);
	curl_multi_setopt(cv->multi, CURLMOPT_TIMERFUNCTION, multi_timer_cb);
	curl_multi_setopt(cv->multi, CURLMOPT_TIMERDATA, cv);
	return cv;
}

int
curlev_add(struct curlev *cv, CURL *easy, curlev_done_cb done_cb, void *arg)
{
	struct cv_xfer	*x;

	if (cv->dead)
		return -1;
	x = xcalloc(1, sizeof(*x));
	x->easy = easy;
	x->done_cb = done_cb;
	x->arg = arg;
	/*
	 * curl answers with a timer callback (timeout 0), never with a
	 * completion: the transfer starts on the next loop pass.
	 */
	if (curl_multi_add_handle(cv->multi, easy) != CURLM_OK) {
		free(x);
		return -1;
	}
	x->next = cv->xfers;
	cv->xfers = x;
	cv->nxfers++;
	return 0;
}

void
curlev_cancel(struct curlev *cv, CURL *easy)
{
	struct cv_xfer	*x;

	if ((x = xfer_unlink(cv, easy)) == NULL)
		return;
	/* Also drops a completion message still queued for easy. */
	curl_multi_remove_handle(cv->multi, easy);
	free(x);
}

int
curlev_running(const struct curlev *cv)
{
	return cv->nxfers;
}

static void
curlev_destroy(struct curlev *cv)
{
	struct cv_sock	*s;

	ev_timer_stop(cv->loop, &cv->timer);
	/* May call sock_cb, which needs cv and the sockets. */
	curl_multi_cleanup(cv->multi);
	while ((s = cv->socks) != NULL) {
		cv->socks = s->next;
		ev_io_stop(cv->loop, &s->io);
		free(s);
	}
	free(cv);
}

void
curlev_free(struct curlev *cv)
{
	if (cv == NULL)
		return;
	while (cv->xfers != NULL)
		curlev_cancel(cv, cv->xfers->easy);
	if (cv->depth > 0) {
		/* Called from a done callback: dispatch finishes the job. */
		cv->dead = 1;
		return;
	}
	curlev_destroy(cv);
}
