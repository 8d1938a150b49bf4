/*
 * label.c -- keep "<key>: leader|standby" on this pod (actions.label).
 *
 * Only the desired value and whether it has been written are kept: the
 * label is reconciled towards the latest wish, never replayed.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "actions/label.h"
#include "api/kube.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "config/config.h"

#define BACKOFF_MIN_MS	1000	/* first retry after a failed PATCH */
#define BACKOFF_MAX_MS	30000	/* retries are at most this far apart */

struct label {
	struct ev_loop		*loop;		/* the default loop */
	const struct config	*conf;		/* borrowed */
	struct kube		*kube;		/* our own client */
	const char		*ns;		/* the pod's namespace */
	int			 want;		/* 1 leader, 0 standby */
	int			 inflight;	/* value being PATCHed; -1 */
	int			 again;		/* PATCH once more after it */
	uint64_t		 backoff_ms;	/* next retry delay, 0 = none */
	ev_timer		 retry;		/* the retry after a failure */
	int			 finishing;	/* label_finish was called */
	void			(*done_cb)(void *); /* for label_finish */
	void			*done_arg;	/* for done_cb */
	char			 last_err[768];	/* last error logged */
};

static void	send_patch(struct label *);

static const char *
value(int leader)
{
	return leader ? "leader" : "standby";
}

static void
finished(struct label *l)
{
	void	(*cb)(void *) = l->done_cb;

	if (cb == NULL)
		return;
	l->done_cb = NULL;
	cb(l->done_arg);
}

static void
patch_done_cb(const struct kube_result *res, void *arg)
{
	struct label	*l = arg;
	int		 sent = l->inflight;
	char		 line[sizeof(l->last_err)];

	l->inflight = -1;
	if (res->outcome == KUBE_OK) {
		if (l->last_err[0] != '\0')
			log_info("label %s=%s set on pod %s/%s again",
			    l->conf->label_key, value(sent), l->ns,
			    l->conf->label_pod);
		else
			log_debug("label %s=%s set on pod %s/%s",
			    l->conf->label_key, value(sent), l->ns,
			    l->conf->label_pod);
		l->last_err[0] = '\0';
		l->backoff_ms = 0;
		if (l->finishing && sent == 0) {
			finished(l);
			return;
		}
		if (l->again || sent != l->want) {
			l->again = 0;
			send_patch(l);
		}
		return;
	}
	if (res->status == 401)
		kube_token_stale(l->kube);
	snprintf(line, sizeof(line), "%ld %s: %s", res->status, res->reason,
	    res->message);
	if (strcmp(line, l->last_err) != 0) {
		log_warnx("label %s=%s on pod %s/%s failed: %s%s",
		    l->conf->label_key, value(sent), l->ns, l->conf->label_pod,
		    line, res->status == 403 ? "; the service account needs "
		    "get and patch on pods" : "");
		memcpy(l->last_err, line, sizeof(line));
	}
	if (l->finishing) {
		/*
		 * Shutdown does not wait for a broken API server: one standby
		 * PATCH is tried (after a failed leader one), then we go on.
		 */
		l->again = 0;
		if (sent == 0)
			finished(l);
		else
			send_patch(l);
		return;
	}
	l->backoff_ms = l->backoff_ms == 0 ? BACKOFF_MIN_MS :
	    l->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
	    l->backoff_ms * 2;
	l->again = 0;
	ev_now_update(l->loop);
	ev_timer_set(&l->retry, clock_timer_seconds(l->backoff_ms), 0.);
	ev_timer_start(l->loop, &l->retry);
}

/* PATCH the wanted value now, or once the running PATCH is answered. */
static void
send_patch(struct label *l)
{
	char	 body[CONFIG_STR_MAX + 64];

	if (l->inflight != -1) {
		l->again = 1;
		return;
	}
	ev_timer_stop(l->loop, &l->retry);
	/* The key was validated (letters, digits, "-_./"): no escaping. */
	snprintf(body, sizeof(body), "{\"metadata\":{\"labels\":{\"%s\":"
	    "\"%s\"}}}", l->conf->label_key, value(l->want));
	l->inflight = l->want;
	if (kube_pod_patch(l->kube, l->ns, l->conf->label_pod, body,
	    l->conf->request_timeout_ms, patch_done_cb, l) == -1) {
		struct kube_result res;

		memset(&res, 0, sizeof(res));
		res.outcome = KUBE_FAILED;
		snprintf(res.reason, sizeof(res.reason), "NotSent");
		snprintf(res.message, sizeof(res.message), "the request could "
		    "not be started");
		patch_done_cb(&res, l);
	}
}

static void
retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct label	*l = w->data;

	(void)loop;
	(void)revents;
	send_patch(l);
}

struct label *
label_new(struct ev_loop *loop, struct curlev *cv,
    const struct kube_creds *creds, struct token *token,
    const char *user_agent, const struct config *c, char *err,
    size_t errlen)
{
	struct label	*l;

	l = xcalloc(1, sizeof(*l));
	l->loop = loop;
	l->conf = c;
	l->ns = c->label_namespace[0] != '\0' ? c->label_namespace :
	    c->lock_namespace;
	l->inflight = -1;
	if ((l->kube = kube_new(cv, creds, token, user_agent, err,
	    errlen)) == NULL) {
		free(l);
		return NULL;
	}
	ev_init(&l->retry, retry_cb);
	l->retry.data = l;
	return l;
}

void
label_set(struct label *l, int leader)
{
	if (l->finishing)
		return;
	if (leader != l->want)
		log_info("label %s=%s on pod %s/%s", l->conf->label_key,
		    value(leader), l->ns, l->conf->label_pod);
	l->want = leader;
	/* While backing off, the retry timer sends the latest wish. */
	if (l->backoff_ms != 0 && ev_is_active(&l->retry) && leader == 0)
		send_patch(l);
	else if (l->backoff_ms == 0 || !ev_is_active(&l->retry))
		send_patch(l);
}

void
label_finish(struct label *l, void (*done_cb)(void *), void *arg)
{
	l->finishing = 1;
	l->done_cb = done_cb;
	l->done_arg = arg;
	l->want = 0;
	l->backoff_ms = 0;
	send_patch(l);
}

void
label_set_observer(struct label *l, kube_observe_cb cb, void *arg)
{
	kube_set_observer(l->kube, cb, arg);
}

void
label_free(struct label *l)
{
	if (l == NULL)
		return;
	ev_timer_stop(l->loop, &l->retry);
	kube_free(l->kube);
	free(l);
}
