/*
 * label.c -- keep "<key>: leader|standby" on this pod (actions.label),
 * a keeper (keeper.c) whose write is a merge PATCH of the pod.
 */

#include <stdio.h>
#include <stdlib.h>

#include <ev.h>

#include "actions/keeper.h"
#include "actions/label.h"
#include "api/kube.h"
#include "base/xmalloc.h"
#include "config/config.h"

struct label {
	const struct config	*conf;		/* borrowed */
	const char		*ns;		/* the pod's namespace */
	struct keeper		*keeper;	/* the state and its writes */
};

static const char *
value(int leader)
{
	return leader ? "leader" : "standby";
}

/* PATCH the label to say leader or standby. */
static int
send_patch(void *obj, struct kube *kube, int leader, int create,
    kube_done_cb cb, void *cbarg)
{
	struct label	*l = obj;
	char		 body[CONFIG_STR_MAX + 64];

	(void)create;
	/* The key was validated (letters, digits, "-_./"): no escaping. */
	snprintf(body, sizeof(body), "{\"metadata\":{\"labels\":{\"%s\":"
	    "\"%s\"}}}", l->conf->label_key, value(leader));
	return kube_pod_patch(kube, l->ns, l->conf->label_pod, body,
	    l->conf->request_timeout_ms, cb, cbarg);
}

static void
describe(void *obj, enum keeper_say what, int leader, char *buf,
    size_t len)
{
	struct label	*l = obj;

	snprintf(buf, len, "label %s=%s %son pod %s/%s", l->conf->label_key,
	    value(leader), what == KEEPER_WRITTEN ? "set " : "", l->ns,
	    l->conf->label_pod);
}

static const struct keeper_ops label_ops = {
	.send = send_patch,
	.describe = describe
};

struct label *
label_new(struct ev_loop *loop, struct curlev *cv,
    const struct kube_creds *creds, struct token *token,
    const char *user_agent, const struct config *c, char *err,
    size_t errlen)
{
	struct label	*l;

	l = xcalloc(1, sizeof(*l));
	l->conf = c;
	l->ns = c->label_namespace[0] != '\0' ? c->label_namespace :
	    c->lock_namespace;
	if ((l->keeper = keeper_new(loop, cv, creds, token, user_agent,
	    &label_ops, l, "get and patch on pods", err, errlen)) == NULL) {
		free(l);
		return NULL;
	}
	return l;
}

void
label_set(struct label *l, int leader)
{
	keeper_set(l->keeper, leader);
}

void
label_finish(struct label *l, void (*done_cb)(void *), void *arg)
{
	keeper_finish(l->keeper, 1, done_cb, arg);
}

void
label_set_observer(struct label *l, kube_observe_cb cb, void *arg)
{
	keeper_set_observer(l->keeper, cb, arg);
}

void
label_free(struct label *l)
{
	if (l == NULL)
		return;
	keeper_free(l->keeper);
	free(l);
}
