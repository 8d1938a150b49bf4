/*
 * endpoints.c -- keep the leader's EndpointSlice, or its Endpoints
 * object, naming this pod while it leads (actions.endpoints).
 *
 * Only the desired value and whether it has been written are kept, as in
 * label.c: the object is reconciled towards the latest wish.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "actions/endpoints.h"
#include "api/kube.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "codec/epslice.h"
#include "config/config.h"

#define BACKOFF_MIN_MS	1000	/* first retry after a failed write */
#define BACKOFF_MAX_MS	30000	/* retries are at most this far apart */

struct endpoints {
	struct ev_loop		*loop;		/* the default loop */
	const struct config	*conf;		/* borrowed */
	struct kube		*kube;		/* our own client */
	int			 legacy;	/* core Endpoints, not slice */
	struct epslice		 what;		/* the object's contents */
	char			 name[CONFIG_STR_MAX + 16]; /* object name */
	const char		*kind;		/* for the log */
	int			 want;		/* 1 this pod, 0 none */
	int			 owned;		/* may name us: ours to clear */
	int			 inflight;	/* value being written; -1 */
	int			 creating;	/* the write in flight: POST */
	int			 again;		/* write once more after it */
	uint64_t		 backoff_ms;	/* next retry delay, 0 = none */
	ev_timer		 retry;		/* the retry after a failure */
	int			 finishing;	/* endpoints_finish called */
	void			(*done_cb)(void *); /* for endpoints_finish */
	void			*done_arg;	/* for done_cb */
	char			 last_err[768];	/* last error logged */
};

static void	send_write(struct endpoints *, int);

static const char *
value(int leader)
{
	return leader ? "this pod" : "no endpoint";
}

static void
finished(struct endpoints *e)
{
	void	(*cb)(void *) = e->done_cb;

	if (cb == NULL)
		return;
	e->done_cb = NULL;
	cb(e->done_arg);
}

static void
write_done_cb(const struct kube_result *res, void *arg)
{
	struct endpoints *e = arg;
	int		 sent = e->inflight, created = e->creating;
	char		 line[sizeof(e->last_err)];

	e->inflight = -1;
	e->creating = 0;
	/* Absent: create it; created meanwhile by another: PUT again. */
	if ((res->outcome == KUBE_NOTFOUND && !created) ||
	    (res->outcome == KUBE_CONFLICT && created)) {
		send_write(e, !created);
		return;
	}
	if (res->outcome == KUBE_OK) {
		if (e->last_err[0] != '\0')
			log_info("%s %s/%s names %s again", e->kind,
			    e->what.ns, e->name, value(sent));
		else
			log_debug("%s %s/%s names %s", e->kind, e->what.ns,
			    e->name, value(sent));
		e->last_err[0] = '\0';
		e->backoff_ms = 0;
		if (sent == 0 && e->want == 0)
			e->owned = 0;
		if (e->finishing && sent == 0) {
			finished(e);
			return;
		}
		if (e->again || sent != e->want) {
			e->again = 0;
			send_write(e, 0);
		}
		return;
	}
	if (res->status == 401)
		kube_token_stale(e->kube);
	snprintf(line, sizeof(line), "%ld %s: %s", res->status, res->reason,
	    res->message);
	if (strcmp(line, e->last_err) != 0) {
		log_warnx("%s %s/%s naming %s failed: %s%s", e->kind,
		    e->what.ns, e->name, value(sent), line,
		    res->status == 403 ? (e->legacy ? "; the service account "
		    "needs get, create and update on endpoints" : "; the "
		    "service account needs get, create and update on "
		    "endpointslices (discovery.k8s.io)") : "");
		memcpy(e->last_err, line, sizeof(line));
	}
	if (e->finishing) {
		/* Shutdown does not wait for a broken API server. */
		e->again = 0;
		if (sent == 0)
			finished(e);
		else
			send_write(e, 0);
		return;
	}
	e->backoff_ms = e->backoff_ms == 0 ? BACKOFF_MIN_MS :
	    e->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
	    e->backoff_ms * 2;
	e->again = 0;
	ev_now_update(e->loop);
	ev_timer_set(&e->retry, clock_timer_seconds(e->backoff_ms), 0.);
	ev_timer_start(e->loop, &e->retry);
}

/* Write the wanted value (PUT, or POST when create) now or after. */
static void
send_write(struct endpoints *e, int create)
{
	char	*body;
	int	 rv;

	if (e->inflight != -1) {
		e->again = 1;
		return;
	}
	ev_timer_stop(e->loop, &e->retry);
	e->inflight = e->want;
	e->creating = create;
	rv = -1;
	if ((body = epslice_body(&e->what, e->legacy, e->want)) != NULL) {
		if (e->legacy && create)
			rv = kube_core_create(e->kube, "endpoints", e->what.ns,
			    body, e->conf->request_timeout_ms, write_done_cb,
			    e);
		else if (e->legacy)
			rv = kube_core_update(e->kube, "endpoints", e->what.ns,
			    e->name, body, e->conf->request_timeout_ms,
			    write_done_cb, e);
		else if (create)
			rv = kube_slice_create(e->kube, e->what.ns, body,
			    e->conf->request_timeout_ms, write_done_cb, e);
		else
			rv = kube_slice_update(e->kube, e->what.ns, e->name,
			    body, e->conf->request_timeout_ms, write_done_cb,
			    e);
		free(body);
	}
	if (rv == -1) {
		struct kube_result res;

		memset(&res, 0, sizeof(res));
		res.outcome = KUBE_FAILED;
		snprintf(res.reason, sizeof(res.reason), "NotSent");
		snprintf(res.message, sizeof(res.message), "the request could "
		    "not be started");
		write_done_cb(&res, e);
	}
}

static void
retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct endpoints *e = w->data;

	(void)loop;
	(void)revents;
	send_write(e, 0);
}

struct endpoints *
endpoints_new(struct ev_loop *loop, struct curlev *cv,
    const struct kube_creds *creds, struct token *token,
    const char *user_agent, const struct config *c, int legacy, char *err,
    size_t errlen)
{
	struct endpoints *e;

	e = xcalloc(1, sizeof(*e));
	e->loop = loop;
	e->conf = c;
	e->legacy = legacy;
	e->what.service = c->ep_service;
	e->what.ns = c->ep_namespace[0] != '\0' ? c->ep_namespace :
	    c->lock_namespace;
	e->what.ip = c->ep_ip;
	e->what.port = c->ep_port;
	e->what.port_name = c->ep_port_name;
	e->what.pod = c->label_pod;
	e->what.pod_ns = c->label_namespace[0] != '\0' ? c->label_namespace :
	    c->lock_namespace;
	if (legacy) {
		snprintf(e->name, sizeof(e->name), "%s", c->ep_service);
		e->kind = "endpoints";
	} else {
		epslice_name(c->ep_service, e->name, sizeof(e->name));
		e->kind = "endpointslice";
	}
	e->inflight = -1;
	if ((e->kube = kube_new(cv, creds, token, user_agent, err,
	    errlen)) == NULL) {
		free(e);
		return NULL;
	}
	ev_init(&e->retry, retry_cb);
	e->retry.data = e;
	return e;
}

void
endpoints_set(struct endpoints *e, int leader)
{
	if (e->finishing)
		return;
	/* Never clear what another leader wrote: only what we did. */
	if (!leader && !e->owned)
		return;
	if (leader)
		e->owned = 1;
	if (leader != e->want)
		log_info("%s %s/%s: naming %s", e->kind, e->what.ns, e->name,
		    value(leader));
	e->want = leader;
	/* While backing off, the retry timer sends the latest wish. */
	if (e->backoff_ms != 0 && ev_is_active(&e->retry) && leader == 0)
		send_write(e, 0);
	else if (e->backoff_ms == 0 || !ev_is_active(&e->retry))
		send_write(e, 0);
}

void
endpoints_finish(struct endpoints *e, void (*done_cb)(void *), void *arg)
{
	e->finishing = 1;
	e->done_cb = done_cb;
	e->done_arg = arg;
	if (!e->owned && e->inflight == -1) {
		ev_timer_stop(e->loop, &e->retry);
		finished(e);
		return;
	}
	e->want = 0;
	e->backoff_ms = 0;
	send_write(e, 0);
}

void
endpoints_set_observer(struct endpoints *e, kube_observe_cb cb, void *arg)
{
	kube_set_observer(e->kube, cb, arg);
}

void
endpoints_free(struct endpoints *e)
{
	if (e == NULL)
		return;
	ev_timer_stop(e->loop, &e->retry);
	kube_free(e->kube);
	free(e);
}
