/*
 * watch.c -- the Lease watch: one streamed request at a time on its own
 * API client, events decoded inside libcurl's callbacks but handed to
 * the daemon from a libev timer (libcurl forbids starting transfers from
 * its callbacks, and the daemon starts requests in answer to events),
 * and the reconnect policy of ref/reliability-performance.md F22.  The
 * same code watches one Lease (a fieldSelector on its name) or the
 * Leases of a label selector (a shard group's): then the events wait
 * in a queue, the newest per Lease, and each goes to item_cb with its
 * name.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/watch.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "codec/apiobj.h"

#define BACKOFF_MIN_MS	250	/* first retry after a failed stream */
#define BACKOFF_MAX_MS	30000	/* retries never wait longer */
#define REFUSED_RETRY_MS 300000	/* ask again this long after a 403 */

/* An event of a collection watch waiting for deliver_cb. */
struct witem {
	char			 name[LEASE_HOLDER_MAX];
	struct lease		 rec;
	char			*obj;		/* NULL: DELETED */
};

struct watch {
	struct ev_loop		*loop;
	struct kube		*k;		/* ours; busy while streaming */
	char			*ns;
	char			*name;		/* one Lease, or */
	char			*labels;	/* a label selector's */
	char			 lock[512];	/* "lease ns/name", for logs */
	uint64_t		 timeout_ms;	/* timeoutSeconds, in ms */
	uint64_t		 slack_ms;	/* past it, a stream is dead */
	struct watch_cbs	 cbs;
	void			*arg;
	char			 rv[LEASE_RV_MAX]; /* resume from here */
	int			 running;	/* a stream request is out */
	int			 healthy;	/* it answered 200 */
	int			 refused;	/* the server refuses watches */
	int			 gone;		/* 410: wait for watch_seen */
	int			 said_refused;	/* that was logged */
	int			 said_watching;	/* "watching" was logged */
	int			 said_failing;	/* repeated failures logged */
	unsigned		 failures;	/* failed streams in a row */
	uint64_t		 opened_ms;	/* when the stream answered 200 */
	unsigned		 delivered;	/* events on this stream */
	uint64_t		 rng;		/* backoff jitter */
	ev_timer		 retry;		/* the next stream */
	ev_timer		 deliver;	/* hands events to the daemon */
	/* Filled inside libcurl's callbacks, drained by deliver_cb. */
	int			 pend_up;	/* the stream opened */
	int			 pend_reread;	/* DELETED or 410 */
	int			 have_pend;	/* pend_rec is new */
	struct lease		 pend_rec;
	char			*pend_obj;
	struct witem		*q;		/* a collection's events */
	size_t			 nq, capq;
	char			 bad[400];	/* why a line was refused */
	char			 err[1024];	/* the last stream's failure */
};

static void	connect_stream(struct watch *);

/* A collection's event, in place of an older one of the same Lease. */
static void
enqueue(struct watch *w, const struct apiobj_watch_event *ev, char *obj)
{
	struct witem	*it = NULL;
	size_t		 i;

	for (i = 0; i < w->nq; i++)
		if (strcmp(w->q[i].name, ev->name) == 0) {
			it = &w->q[i];
			free(it->obj);
			break;
		}
	if (it == NULL) {
		if (w->nq == w->capq) {
			w->capq = w->capq == 0 ? 16 : w->capq * 2;
			w->q = xrealloc(w->q, w->capq * sizeof(*w->q));
		}
		it = &w->q[w->nq++];
		snprintf(it->name, sizeof(it->name), "%s", ev->name);
	}
	it->rec = ev->rec;
	it->obj = obj;
}

int
watch_rv_newer(const char *rv, const char *than)
{
	return apiobj_rv_newer(rv, than);
}

static uint64_t
rnd(struct watch *w, uint64_t n)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return n == 0 ? 0 : w->rng % n;
}

static void
arm_retry(struct watch *w, uint64_t ms)
{
	ev_timer_stop(w->loop, &w->retry);
	ev_timer_set(&w->retry, clock_timer_seconds(ms), 0.);
	ev_timer_start(w->loop, &w->retry);
}

static void
set_health(struct watch *w, int up)
{
	if (w->healthy == up)
		return;
	w->healthy = up;
	if (w->cbs.health_cb != NULL)
		w->cbs.health_cb(up, w->arg);
}

static void
kick(struct watch *w)
{
	if (!ev_is_active(&w->deliver)) {
		ev_timer_set(&w->deliver, 0., 0.);
		ev_timer_start(w->loop, &w->deliver);
	}
}

/* Inside libcurl: decode, keep, and wake deliver_cb. */
static int
line_cb(const char *line, size_t len, void *arg)
{
	struct watch			*w = arg;
	struct apiobj_watch_event	 ev;
	char				*obj, err[200];

	if (line == NULL) {
		w->opened_ms = clock_mono_ms();
		w->delivered = 0;
		w->pend_up = 1;
		kick(w);
		return 0;
	}
	if (apiobj_decode_watch_event(line, len, &ev, &obj, err,
	    sizeof(err)) == -1) {
		snprintf(w->bad, sizeof(w->bad), "%s", err);
		return -1;
	}
	/*
	 * An ERROR event is no delivery: a server that answers every
	 * stream with one (504 "Too large resource version" from an API
	 * server whose cache is behind the version we resume from) meets
	 * the backoff, as one that cuts every stream does.
	 */
	if (ev.type != APIOBJ_WATCH_ERROR)
		w->delivered++;
	switch (ev.type) {
	case APIOBJ_WATCH_ADDED:
	case APIOBJ_WATCH_MODIFIED:
		if (w->labels != NULL) {
			enqueue(w, &ev, obj);
			memcpy(w->rv, ev.rv, sizeof(w->rv));
			break;
		}
		free(w->pend_obj);
		w->pend_obj = obj;
		w->pend_rec = ev.rec;
		w->have_pend = 1;
		memcpy(w->rv, ev.rv, sizeof(w->rv));
		break;
	case APIOBJ_WATCH_DELETED:
		if (w->labels != NULL)
			enqueue(w, &ev, NULL);
		else
			w->pend_reread = 1;
		memcpy(w->rv, ev.rv, sizeof(w->rv));
		break;
	case APIOBJ_WATCH_BOOKMARK:
		memcpy(w->rv, ev.rv, sizeof(w->rv));
		break;
	case APIOBJ_WATCH_ERROR:
		if (ev.code == 410) {
			/* Too old: read the Lease, resume from its version. */
			w->rv[0] = '\0';
			w->gone = 1;
			w->pend_reread = 1;
			break;
		}
		snprintf(w->bad, sizeof(w->bad), "%ld %s: %s", ev.code,
		    ev.reason, ev.message);
		return -1;
	}
	kick(w);
	return 0;
}

static void
deliver_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct watch	*w = t->data;
	struct lease	 rec;
	struct witem	*q;
	size_t		 i, n;
	char		*obj;

	(void)loop;
	(void)revents;
	if (w->pend_up) {
		w->pend_up = 0;
		if (!w->said_watching)
			log_info("%s: watching for changes", w->lock);
		if (w->said_refused)
			log_info("%s: the watch works again", w->lock);
		w->said_watching = 1;
		w->said_refused = 0;
		w->refused = 0;
		set_health(w, 1);
	}
	if (w->have_pend) {
		w->have_pend = 0;
		rec = w->pend_rec;
		obj = w->pend_obj;
		w->pend_obj = NULL;
		w->cbs.record_cb(&rec, obj, w->arg);
	}
	if (w->nq > 0) {
		/* Taken out first: the callbacks may start requests. */
		q = w->q;
		n = w->nq;
		w->q = NULL;
		w->nq = w->capq = 0;
		for (i = 0; i < n; i++)
			w->cbs.item_cb(q[i].name, &q[i].rec, q[i].obj, w->arg);
		free(q);
	}
	if (w->pend_reread) {
		w->pend_reread = 0;
		w->cbs.reread_cb(w->arg);
	}
}

/* A refusal that retrying soon will not change. */
static int
refusal(long status)
{
	return status == 400 || status == 403 || status == 404 ||
	    status == 405 || status == 406 || status == 501;
}

static void
done_cb(const struct kube_result *res, void *arg)
{
	struct watch	*w = arg;
	uint64_t	 ms;
	unsigned	 n;

	w->running = 0;
	/*
	 * A stream that opened and then carried events or lasted a while
	 * was a success, whatever ended it; one cut as soon as it opened
	 * counts as a failure, so that a server or proxy that keeps cutting
	 * streams meets the backoff, not a tight loop.
	 */
	if (w->opened_ms != 0 && (w->delivered > 0 ||
	    clock_mono_ms() - w->opened_ms >= 10000)) {
		w->failures = 0;
		w->said_failing = 0;
	}
	w->opened_ms = 0;
	if (res->outcome == KUBE_OK && res->status == 200) {
		/*
		 * The server ended the stream at timeoutSeconds, or after a
		 * 410: then the next stream starts from the version the
		 * daemon's read returns (watch_seen), or from now if that
		 * read has not answered within a second.
		 */
		arm_retry(w, w->gone ? 1000 : rnd(w, 100));
		return;
	}
	/*
	 * A stream that failed as it opened (its 200 and its error in one
	 * read) must not report the watch up afterwards, from deliver_cb:
	 * the followers would stop polling until the next stream fails.
	 */
	w->pend_up = 0;
	if (res->status != 0)
		snprintf(w->err, sizeof(w->err), "%s %s: %ld %s: %s",
		    res->verb, res->target, res->status, res->reason,
		    res->message);
	else
		snprintf(w->err, sizeof(w->err), "%s %s: %s: %s", res->verb,
		    res->target, res->reason, res->message);
	set_health(w, 0);
	if (res->status == 410) {
		/* Expired as a status rather than an ERROR event. */
		w->rv[0] = '\0';
		w->gone = 1;
		arm_retry(w, 1000);
		w->cbs.reread_cb(w->arg);
		return;
	}
	if (refusal(res->status)) {
		w->refused = 1;
		if (!w->said_refused)
			log_warnx("%s: watch %s (%ld %s: %s); following "
			    "the lease by polling every retry_period",
			    w->lock, res->status == 403 ? "forbidden" :
			    "not supported", res->status, res->reason,
			    res->message);
		w->said_refused = 1;
		arm_retry(w, REFUSED_RETRY_MS);
		return;
	}
	if (res->status == 401)
		kube_token_stale(w->k);
	if (w->failures < 16)
		w->failures++;
	for (ms = BACKOFF_MIN_MS, n = 1; n < w->failures &&
	    ms < BACKOFF_MAX_MS; n++)
		ms *= 2;
	if (ms > BACKOFF_MAX_MS)
		ms = BACKOFF_MAX_MS;
	ms = ms / 2 + rnd(w, ms / 2 + 1);
	if (w->bad[0] != '\0')
		log_warnx("%s: watch stream dropped: %s", w->lock,
		    w->bad);
	else if (res->timed_out)
		log_info("%s: watch stream silent for %llus; "
		    "reconnecting", w->lock,
		    (unsigned long long)((w->timeout_ms + w->slack_ms) / 1000));
	else if (w->failures >= 3 && !w->said_failing) {
		log_warnx("%s: watch keeps failing (%ld %s: %s); "
		    "polling every retry_period until it works", w->lock,
		    res->status, res->reason, res->message);
		w->said_failing = 1;
	} else
		log_debug("%s: watch ended (%ld %s: %s); again in "
		    "%llums", w->lock, res->status, res->reason,
		    res->message, (unsigned long long)ms);
	w->bad[0] = '\0';
	arm_retry(w, ms);
}

static void
retry_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	(void)loop;
	(void)revents;
	connect_stream(t->data);
}

static void
connect_stream(struct watch *w)
{
	if (w->running)
		return;
	w->bad[0] = '\0';
	w->gone = 0;
	if (kube_lease_watch(w->k, w->ns, w->name, w->labels, w->rv,
	    (unsigned)(w->timeout_ms / 1000), w->timeout_ms + w->slack_ms,
	    line_cb, done_cb, w) == -1) {
		set_health(w, 0);
		arm_retry(w, BACKOFF_MAX_MS);
		return;
	}
	w->running = 1;
}

static struct watch *
new_watch(struct ev_loop *loop, struct kube *k, const char *ns,
    uint64_t timeout_ms, uint64_t slack_ms, const struct watch_cbs *cbs,
    void *arg)
{
	struct watch	*w;

	w = xcalloc(1, sizeof(*w));
	w->loop = loop;
	w->k = k;
	w->ns = xstrdup(ns);
	w->timeout_ms = timeout_ms;
	w->slack_ms = slack_ms;
	w->cbs = *cbs;
	w->arg = arg;
	w->rng = (uint64_t)clock_wall_us() | 1;
	ev_timer_init(&w->retry, retry_cb, 0., 0.);
	w->retry.data = w;
	ev_timer_init(&w->deliver, deliver_cb, 0., 0.);
	w->deliver.data = w;
	return w;
}

struct watch *
watch_new(struct ev_loop *loop, struct kube *k, const char *ns,
    const char *name, uint64_t timeout_ms, uint64_t slack_ms,
    const struct watch_cbs *cbs, void *arg)
{
	struct watch	*w;

	w = new_watch(loop, k, ns, timeout_ms, slack_ms, cbs, arg);
	w->name = xstrdup(name);
	snprintf(w->lock, sizeof(w->lock), "lease %s/%s", ns, name);
	return w;
}

struct watch *
watch_new_labels(struct ev_loop *loop, struct kube *k, const char *ns,
    const char *labels, uint64_t timeout_ms, uint64_t slack_ms,
    const struct watch_cbs *cbs, void *arg)
{
	struct watch	*w;

	w = new_watch(loop, k, ns, timeout_ms, slack_ms, cbs, arg);
	w->labels = xstrdup(labels);
	snprintf(w->lock, sizeof(w->lock), "leases %s/%s", ns, labels);
	return w;
}

void
watch_start(struct watch *w, const char *rv)
{
	snprintf(w->rv, sizeof(w->rv), "%s", rv);
	connect_stream(w);
}

void
watch_seen(struct watch *w, const char *rv)
{
	if (watch_rv_newer(rv, w->rv))
		snprintf(w->rv, sizeof(w->rv), "%s", rv);
	if (w->gone && !w->running && w->rv[0] != '\0') {
		ev_timer_stop(w->loop, &w->retry);
		connect_stream(w);
	}
}

const char *
watch_error(const struct watch *w)
{
	return w->err;
}

int
watch_healthy(const struct watch *w)
{
	return w->healthy;
}

void
watch_free(struct watch *w)
{
	if (w == NULL)
		return;
	ev_timer_stop(w->loop, &w->retry);
	ev_timer_stop(w->loop, &w->deliver);
	kube_free(w->k);
	free(w->pend_obj);
	for (; w->nq > 0; w->nq--)
		free(w->q[w->nq - 1].obj);
	free(w->q);
	free(w->ns);
	free(w->name);
	free(w->labels);
	free(w);
}
