/*
 * endpoints.c -- keep the leader's EndpointSlice, or its Endpoints
 * object, naming this pod while it leads (actions.endpoints).
 *
 * A keeper (keeper.c) whose write is a PUT of the whole object, a POST
 * when it is absent.
 */

#include <stdio.h>
#include <stdlib.h>

#include <ev.h>

#include "actions/endpoints.h"
#include "actions/keeper.h"
#include "api/kube.h"
#include "base/xmalloc.h"
#include "codec/epslice.h"
#include "config/config.h"

struct endpoints {
	const struct config	*conf;		/* borrowed */
	int			 legacy;	/* core Endpoints, not slice */
	struct epslice		 what;		/* the object's contents */
	char			 name[CONFIG_STR_MAX + 16]; /* object name */
	const char		*kind;		/* for the log */
	int			 owned;		/* may name us: ours to clear */
	struct keeper		*keeper;	/* the state and its writes */
	endpoints_result_cb	 notify;	/* how writes naming us end */
	void			*notify_arg;	/* for notify */
};

static const char *
value(int leader)
{
	return leader ? "this pod" : "no endpoint";
}

/* Write the object naming this pod or none: PUT, or POST when create. */
static int
send_write(void *obj, struct kube *kube, int leader, int create,
    kube_done_cb cb, void *cbarg)
{
	struct endpoints *e = obj;
	char		*body;
	int		 rv;

	if ((body = epslice_body(&e->what, e->legacy, leader)) == NULL)
		return -1;
	if (e->legacy && create)
		rv = kube_core_create(kube, "endpoints", e->what.ns, body,
		    e->conf->request_timeout_ms, cb, cbarg);
	else if (e->legacy)
		rv = kube_core_update(kube, "endpoints", e->what.ns, e->name,
		    body, e->conf->request_timeout_ms, cb, cbarg);
	else if (create)
		rv = kube_slice_create(kube, e->what.ns, body,
		    e->conf->request_timeout_ms, cb, cbarg);
	else
		rv = kube_slice_update(kube, e->what.ns, e->name, body,
		    e->conf->request_timeout_ms, cb, cbarg);
	free(body);
	return rv;
}

static void
describe(void *obj, enum keeper_say what, int leader, char *buf,
    size_t len)
{
	struct endpoints *e = obj;

	snprintf(buf, len, "%s %s/%s%s %s", e->kind, e->what.ns, e->name,
	    what == KEEPER_WISH ? ": naming" : what == KEEPER_WRITE ?
	    " naming" : " names", value(leader));
}

/* Absent: create it; created meanwhile by another: PUT again. */
static int
redo(void *obj, const struct kube_result *res, int created)
{
	(void)obj;
	if (res->outcome == KUBE_NOTFOUND && !created)
		return 1;
	if (res->outcome == KUBE_CONFLICT && created)
		return 0;
	return -1;
}

/* No endpoint written while none is wanted: nothing of ours is left. */
static void
written(void *obj, int sent, int want)
{
	struct endpoints *e = obj;

	if (sent == 0 && want == 0)
		e->owned = 0;
	if (sent == 1 && e->notify != NULL)
		e->notify(1, e->notify_arg);
}

static void
failed(void *obj, int sent)
{
	struct endpoints *e = obj;

	if (sent == 1 && e->notify != NULL)
		e->notify(0, e->notify_arg);
}

static const struct keeper_ops endpoints_ops = {
	.send = send_write,
	.describe = describe,
	.redo = redo,
	.written = written,
	.failed = failed
};

struct endpoints *
endpoints_new(struct ev_loop *loop, struct curlev *cv,
    const struct kube_creds *creds, struct token *token,
    const char *user_agent, const struct config *c, int legacy, char *err,
    size_t errlen)
{
	struct endpoints *e;

	e = xcalloc(1, sizeof(*e));
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
	e->what.ports_json = c->ep_ports_json;
	e->what.node_name = c->ep_node_name;
	/* Without a slice of ours, the control plane mirrors the object. */
	e->what.mirror = !c->ep_slice;
	if (legacy) {
		snprintf(e->name, sizeof(e->name), "%s", c->ep_service);
		e->kind = "endpoints";
	} else {
		epslice_name(c->ep_service, e->name, sizeof(e->name));
		e->kind = "endpointslice";
	}
	if ((e->keeper = keeper_new(loop, cv, creds, token, user_agent,
	    &endpoints_ops, e, legacy ? "get, create and update on endpoints" :
	    "get, create and update on endpointslices (discovery.k8s.io)",
	    err, errlen)) == NULL) {
		free(e);
		return NULL;
	}
	return e;
}

void
endpoints_set(struct endpoints *e, int leader)
{
	if (keeper_finishing(e->keeper))
		return;
	/* Never clear what another leader wrote: only what we did. */
	if (!leader && !e->owned)
		return;
	if (leader)
		e->owned = 1;
	keeper_set(e->keeper, leader);
}

void
endpoints_finish(struct endpoints *e, void (*done_cb)(void *), void *arg)
{
	/* An instance that never named itself there writes nothing. */
	keeper_finish(e->keeper, e->owned, done_cb, arg);
}

void
endpoints_set_notify(struct endpoints *e, endpoints_result_cb cb, void *arg)
{
	e->notify = cb;
	e->notify_arg = arg;
}

void
endpoints_set_observer(struct endpoints *e, kube_observe_cb cb, void *arg)
{
	keeper_set_observer(e->keeper, cb, arg);
}

void
endpoints_free(struct endpoints *e)
{
	if (e == NULL)
		return;
	keeper_free(e->keeper);
	free(e);
}
