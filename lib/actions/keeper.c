/*
 * keeper.c -- keep one object in the state the claim says (keeper.h).
 *
 * Only the desired state and whether it has been written are kept: the
 * object is reconciled towards the latest wish, never replayed.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "actions/keeper.h"
#include "api/kube.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"

#define BACKOFF_MIN_MS	1000	/* first retry after a failed write */
#define BACKOFF_MAX_MS	30000	/* retries are at most this far apart */
#define DESCRIBE_MAX	2048	/* a log line's text, as log.c bounds it */

struct keeper {
	struct ev_loop		*loop;		/* the default loop */
	const struct keeper_ops	*ops;		/* borrowed */
	void			*obj;		/* for ops */
	const char		*needs;		/* a 403's hint */
	struct kube		*kube;		/* our own client */
	int			 want;		/* 1 leader, 0 not */
	int			 inflight;	/* state being written; -1 */
	int			 creating;	/* the one in flight: create */
	int			 again;		/* write once more after it */
	uint64_t		 backoff_ms;	/* next retry delay, 0 = none */
	ev_timer		 retry;		/* the retry after a failure */
	int			 finishing;	/* keeper_finish was called */
	void			(*done_cb)(void *); /* keeper_finish's */
	void			*done_arg;	/* for done_cb */
	char			 last_err[768];	/* last error logged */
};

static void	send_write(struct keeper *, int);

static void
finished(struct keeper *k)
{
	void	(*cb)(void *) = k->done_cb;

	if (cb == NULL)
		return;
	k->done_cb = NULL;
	cb(k->done_arg);
}

static void
write_done_cb(const struct kube_result *res, void *arg)
{
	struct keeper	*k = arg;
	int		 sent = k->inflight, created = k->creating, redo;
	char		 line[sizeof(k->last_err)], what[DESCRIBE_MAX];

	k->inflight = -1;
	k->creating = 0;
	if (k->ops->redo != NULL &&
	    (redo = k->ops->redo(k->obj, res, created)) != -1) {
		send_write(k, redo);
		return;
	}
	if (res->outcome == KUBE_OK) {
		k->ops->describe(k->obj, KEEPER_WRITTEN, sent, what,
		    sizeof(what));
		if (k->last_err[0] != '\0')
			log_info("%s again", what);
		else
			log_debug("%s", what);
		k->last_err[0] = '\0';
		k->backoff_ms = 0;
		if (k->ops->written != NULL)
			k->ops->written(k->obj, sent, k->want);
		if (k->finishing && sent == 0) {
			finished(k);
			return;
		}
		if (k->again || sent != k->want) {
			k->again = 0;
			send_write(k, 0);
		}
		return;
	}
	if (res->status == 401)
		kube_token_stale(k->kube);
	snprintf(line, sizeof(line), "%ld %s: %s", res->status, res->reason,
	    res->message);
	if (strcmp(line, k->last_err) != 0) {
		k->ops->describe(k->obj, KEEPER_WRITE, sent, what,
		    sizeof(what));
		log_warnx("%s failed: %s%s%s", what, line,
		    res->status == 403 ? "; the service account needs " : "",
		    res->status == 403 ? k->needs : "");
		memcpy(k->last_err, line, sizeof(line));
	}
	if (k->ops->failed != NULL)
		k->ops->failed(k->obj, sent);
	if (k->finishing) {
		/*
		 * Shutdown does not wait for a broken API server: one write
		 * of 0 is tried (after a failed write of 1), then we go on.
		 */
		k->again = 0;
		if (sent == 0)
			finished(k);
		else
			send_write(k, 0);
		return;
	}
	k->backoff_ms = k->backoff_ms == 0 ? BACKOFF_MIN_MS :
	    k->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
	    k->backoff_ms * 2;
	k->again = 0;
	ev_now_update(k->loop);
	ev_timer_set(&k->retry, clock_timer_seconds(k->backoff_ms), 0.);
	ev_timer_start(k->loop, &k->retry);
}

/* Write the wanted state (an update, or a create) now or after. */
static void
send_write(struct keeper *k, int create)
{
	if (k->inflight != -1) {
		k->again = 1;
		return;
	}
	ev_timer_stop(k->loop, &k->retry);
	k->inflight = k->want;
	k->creating = create;
	if (k->ops->send(k->obj, k->kube, k->want, create, write_done_cb,
	    k) == -1) {
		struct kube_result res;

		memset(&res, 0, sizeof(res));
		res.outcome = KUBE_FAILED;
		snprintf(res.reason, sizeof(res.reason), "NotSent");
		snprintf(res.message, sizeof(res.message), "the request could "
		    "not be started");
		write_done_cb(&res, k);
	}
}

static void
retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct keeper	*k = w->data;

	(void)loop;
	(void)revents;
	send_write(k, 0);
}

struct keeper *
keeper_new(struct ev_loop *loop, struct curlev *cv,
    const struct kube_creds *creds, struct token *token,
    const char *user_agent, const struct keeper_ops *ops, void *obj,
    const char *needs, char *err, size_t errlen)
{
	struct keeper	*k;

	k = xcalloc(1, sizeof(*k));
	k->loop = loop;
	k->ops = ops;
	k->obj = obj;
	k->needs = needs;
	k->inflight = -1;
	if ((k->kube = kube_new(cv, creds, token, user_agent, err,
	    errlen)) == NULL) {
		free(k);
		return NULL;
	}
	ev_init(&k->retry, retry_cb);
	k->retry.data = k;
	return k;
}

void
keeper_set(struct keeper *k, int state)
{
	char	 what[DESCRIBE_MAX];

	if (k->finishing)
		return;
	if (state != k->want) {
		k->ops->describe(k->obj, KEEPER_WISH, state, what,
		    sizeof(what));
		log_info("%s", what);
	}
	k->want = state;
	/* While backing off, the retry timer sends the latest wish. */
	if (k->backoff_ms != 0 && ev_is_active(&k->retry) && state == 0)
		send_write(k, 0);
	else if (k->backoff_ms == 0 || !ev_is_active(&k->retry))
		send_write(k, 0);
}

int
keeper_finishing(const struct keeper *k)
{
	return k->finishing;
}

void
keeper_finish(struct keeper *k, int clear, void (*done_cb)(void *),
    void *arg)
{
	k->finishing = 1;
	k->done_cb = done_cb;
	k->done_arg = arg;
	if (!clear && k->inflight == -1) {
		ev_timer_stop(k->loop, &k->retry);
		finished(k);
		return;
	}
	k->want = 0;
	k->backoff_ms = 0;
	send_write(k, 0);
}

void
keeper_set_observer(struct keeper *k, kube_observe_cb cb, void *arg)
{
	kube_set_observer(k->kube, cb, arg);
}

void
keeper_free(struct keeper *k)
{
	if (k == NULL)
		return;
	ev_timer_stop(k->loop, &k->retry);
	kube_free(k->kube);
	free(k);
}
