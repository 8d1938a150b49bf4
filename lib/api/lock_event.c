/*
 * lock_event.c -- the Events about a lock's objects, as client-go's
 * recorder writes them ("<identity> became leader" on the Lease, and on
 * the legacy object too for a MultiLock).  Sent on their own client, one
 * at a time, best effort: the election never waits for them.
 */

#include <stdlib.h>

#include "api/kube.h"
#include "api/lock.h"
#include "api/lock_int.h"
#include "codec/apiobj.h"

/* The Event about object i, as client-go's recorder writes it. */
static char *
event_body(const struct lock *l, int i, const char *message, int64_t now_us)
{
	const struct lock_obj	*o = &l->obj[i];

	if (o->kind == OBJ_LEASE)
		return apiobj_encode_event(l->ns, l->name, &o->last,
		    l->identity, message, now_us);
	return apiobj_encode_event_on("v1", lock_kind_name(o->kind), l->ns,
	    l->name, &o->last, l->identity, message, now_us);
}

/*
 * An Event was answered: send the next one if any, then report this
 * one.  In that order, so that while the done callback runs the client
 * is busy for as long as this lock has Events to send, and a caller that
 * queues Events (kube_busy) does not start another in between.
 */
static void
event_cb(const struct kube_result *res, void *arg)
{
	struct lock	*l = arg;
	char		*body = l->event_next;
	kube_done_cb	 done = l->event_done;
	void		*done_arg = l->event_arg;

	l->event_next = NULL;
	if (body != NULL && kube_event_create(l->event_kube, l->ns, body,
	    l->event_timeout_ms, event_cb, l) == -1)
		l->event_done = NULL;
	free(body);
	done(res, done_arg);
}

int
lock_record_event(struct lock *l, struct kube *ev, const char *message,
    int64_t now_us, uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	char	*body;
	int	 rv;

	free(l->event_next);
	l->event_next = NULL;
	l->event_kube = ev;
	l->event_timeout_ms = timeout_ms;
	l->event_done = cb;
	l->event_arg = arg;
	body = event_body(l, 0, message, now_us);
	/* Its own name: Events are named after the object and the time. */
	if (l->nobj == 2)
		l->event_next = event_body(l, 1, message, now_us + 1);
	if ((rv = kube_event_create(ev, l->ns, body, timeout_ms, event_cb,
	    l)) == -1) {
		free(l->event_next);
		l->event_next = NULL;
	}
	free(body);
	return rv;
}
