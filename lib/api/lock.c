/*
 * lock.c -- the lock types of client-go's resourcelock on top of kube.c
 * (ref/clientgo-leaderelection.md 3.2, 3.3): LeaseLock, EndpointsLock,
 * ConfigMapLock and MultiLock.
 *
 * Each lock is one or two objects.  An operation is a short sequence of
 * requests on them (one for a single lock; two or three for a MultiLock),
 * run one at a time on the shared kube client and bounded as a whole by
 * the elector's timeout.  Each object keeps the last body the server
 * returned for it, which the next PUT is built on (with its
 * resourceVersion and uid, as client-go sends the cached object).
 *
 * The MultiLock follows client-go v0.23's multilock.go with three
 * deliberate differences, all on the safe side:
 *  - Get returns the primary alone when the secondary is missing, even
 *    if the primary names us (client-go then answers NotFound and
 *    re-creates): the secondary is created by the next Update;
 *  - Create does not go on to the secondary when the primary already
 *    exists (client-go ignores that AlreadyExists): somebody else created
 *    it, so the attempt is a conflict;
 *  - Update writes the secondary over the version of it this lock last
 *    saw (or creates it if it was missing then), where client-go reads it
 *    again just before writing.  client-go's fresh read lets a MultiLock
 *    overwrite a Lease that a Lease-only elector took meanwhile, and both
 *    would lead; here that write is a conflict.  This matters during the
 *    migration's last step, when MultiLock and Lease-only electors share
 *    the election.
 * A release writes the primary, then the secondary; if the secondary
 * write conflicts with a renew of ours that landed after the elector
 * abandoned it (shutdown), the secondary is read and released again
 * when it still holds our term, so neither object is left naming a
 * stopped process.
 * The record the elector sees is the primary's when the two holders
 * agree.  When they differ, the elector must see a foreign holder, never
 * a free lock and never itself, and the name that the electors of the
 * live object report; so the record is that of the object seen to change
 * last (a live elector renews it; the other was left behind: the Lease
 * after a Lease-only elector took over during the migration's last step,
 * the primary when a legacy elector did during its first), or of the
 * other one if that names nobody; and its holder is
 * LEGACY_UNKNOWN_LEADER if the name would be ours or empty (client-go
 * always says unknown).  Its resourceVersion is both objects' joined, so
 * a write to either counts as a sign of life (client-go concatenates the
 * two raw records for the same purpose).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kube.h"
#include "api/lock.h"
#include "api/lock_int.h"
#include "base/clock.h"
#include "base/xmalloc.h"
#include "codec/apiobj.h"
#include "codec/lease.h"
#include "codec/legacy.h"

static const struct {
	const char	*type;
	enum obj_kind	 kinds[2];
	int		 nobj;
	const char	*rbac;
} types[] = {
	{ "leases", { OBJ_LEASE, OBJ_LEASE }, 1,
	    "get, update and create on leases (coordination.k8s.io)" },
	{ "endpoints", { OBJ_ENDPOINTS, OBJ_LEASE }, 1,
	    "get, update and create on endpoints" },
	{ "configmaps", { OBJ_CONFIGMAP, OBJ_LEASE }, 1,
	    "get, update and create on configmaps" },
	{ "endpointsleases", { OBJ_ENDPOINTS, OBJ_LEASE }, 2,
	    "get, update and create on endpoints and on leases "
	    "(coordination.k8s.io)" },
	{ "configmapsleases", { OBJ_CONFIGMAP, OBJ_LEASE }, 2,
	    "get, update and create on configmaps and on leases "
	    "(coordination.k8s.io)" },
};

static void	kube_cb(const struct kube_result *, void *);

const char *
lock_kind_name(enum obj_kind kind)
{
	return kind == OBJ_ENDPOINTS ? "Endpoints" : kind == OBJ_CONFIGMAP ?
	    "ConfigMap" : "Lease";
}

static const char *
resource(enum obj_kind kind)
{
	return kind == OBJ_ENDPOINTS ? "endpoints" : kind == OBJ_CONFIGMAP ?
	    "configmaps" : "leases";
}

int
lock_type_valid(const char *type)
{
	size_t	 i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(type, types[i].type) == 0)
			return 1;
	return 0;
}

struct lock *
lock_new(struct kube *k, const char *type, const char *ns, const char *name,
    const char *identity, char *err, size_t errlen)
{
	struct lock	*l;
	size_t		 i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(type, types[i].type) == 0)
			break;
	if (i == sizeof(types) / sizeof(types[0])) {
		snprintf(err, errlen, "lock type \"%s\" is not one of leases, "
		    "endpoints, configmaps, endpointsleases, configmapsleases",
		    type);
		return NULL;
	}
	l = xcalloc(1, sizeof(*l));
	l->k = k;
	snprintf(l->type, sizeof(l->type), "%s", type);
	l->ns = xstrdup(ns);
	l->name = xstrdup(name);
	l->identity = xstrdup(identity);
	xasprintf(&l->describe, "%s/%s/%s", type, ns, name);
	l->nobj = types[i].nobj;
	l->obj[0].kind = types[i].kinds[0];
	l->obj[1].kind = types[i].kinds[1];
	return l;
}

void
lock_adopt(struct lock *l, char *object, const struct lease *rec)
{
	struct lock_obj	*o = &l->obj[0];

	if (l->nobj != 1 || o->kind != OBJ_LEASE) {
		free(object);
		return;
	}
	if (o->body == NULL || strcmp(o->last.rv, rec->rv) != 0)
		o->changed_ms = clock_mono_ms();
	free(o->body);
	o->body = object;
	o->len = strlen(object);
	o->last = *rec;
	o->missing = 0;
}

const char *
lock_describe(const struct lock *l)
{
	return l->describe;
}

const char *
lock_type(const struct lock *l)
{
	return l->type;
}

const char *
lock_rbac(const struct lock *l)
{
	size_t	 i;

	if (l->for_life)
		return "get, create, list and watch on leases "
		    "(coordination.k8s.io), and get on pods";

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(l->type, types[i].type) == 0)
			return types[i].rbac;
	return "";
}

/* Decode an answer for object o; -1 with err if it is not one. */
static int
decode(const struct lock_obj *o, const char *body, size_t len,
    struct lease *rec, char *err, size_t errlen)
{
	if (o->kind == OBJ_LEASE)
		return lease_decode(body, len, rec, err, errlen);
	return legacy_decode(lock_kind_name(o->kind), body, len, rec, err,
	    errlen);
}

/* Time left for the operation; 0 when it is used up. */
static uint64_t
remaining(const struct lock *l)
{
	uint64_t	 now_ms = clock_mono_ms();

	return now_ms < l->deadline_ms ? l->deadline_ms - now_ms : 0;
}

/* Start the request for stage on object i: GET, or write l->rec. */
static int
obj_request(struct lock *l, int i, enum lock_op what, uint64_t timeout_ms)
{
	struct lock_obj	*o = &l->obj[i];
	char		*body = NULL, err[256];
	int		 rv;

	l->cur = i;
	if (what == OP_GET) {
		if (o->kind == OBJ_LEASE)
			return kube_lease_get(l->k, l->ns, l->name, timeout_ms,
			    kube_cb, l);
		return kube_core_get(l->k, resource(o->kind), l->ns, l->name,
		    timeout_ms, kube_cb, l);
	}
	if (what == OP_CREATE) {
		if (l->for_life) {
			/* Owned by the pod, nais/elector's spec. */
			if (l->owner.uid[0] == '\0')
				return -1;
			body = lease_encode_create_owned(l->ns, l->name,
			    &l->rec, &l->owner);
			rv = kube_lease_create(l->k, l->ns, body, timeout_ms,
			    kube_cb, l);
		} else if (o->kind == OBJ_LEASE) {
			body = l->labels != NULL ?
			    lease_encode_create_labeled(l->ns, l->name,
			    &l->rec, l->labels) :
			    lease_encode_create(l->ns, l->name, &l->rec);
			rv = kube_lease_create(l->k, l->ns, body, timeout_ms,
			    kube_cb, l);
		} else {
			body = legacy_encode_create(lock_kind_name(o->kind),
			    l->ns, l->name, &l->rec);
			rv = kube_core_create(l->k, resource(o->kind), l->ns,
			    body, timeout_ms, kube_cb, l);
		}
		free(body);
		return rv;
	}
	if (o->body == NULL || l->for_life)
		return -1;	/* Nothing to write over, or never again. */
	if (o->kind == OBJ_LEASE)
		body = lease_encode_update(o->body, o->len, &l->rec, err,
		    sizeof(err));
	else
		body = legacy_encode_update(lock_kind_name(o->kind), o->body,
		    o->len, &l->rec, err, sizeof(err));
	if (body == NULL)
		return -1;
	if (o->kind == OBJ_LEASE)
		rv = kube_lease_update(l->k, l->ns, l->name, body, timeout_ms,
		    kube_cb, l);
	else
		rv = kube_core_update(l->k, resource(o->kind), l->ns,
		    l->name, body, timeout_ms, kube_cb, l);
	free(body);
	return rv;
}

/* End the operation: report res (and rec when it succeeded). */
static void
finish(struct lock *l, const struct kube_result *res, const struct lease *rec)
{
	struct kube_result	 r = *res;
	lock_done_cb		 cb = l->cb;
	void			*arg = l->arg;

	if (l->warning[0] != '\0')
		memcpy(r.warning, l->warning, sizeof(r.warning));
	l->op = OP_NONE;
	l->cb = NULL;
	l->arg = NULL;
	if (rec == NULL && r.outcome == KUBE_OK)
		r.outcome = KUBE_FAILED;
	cb(&r, r.outcome == KUBE_OK ? rec : NULL, arg);
}

/* End the operation with a failure of our own making. */
static void
fail(struct lock *l, const char *reason, const char *message, int timed_out)
{
	struct kube_result	 r;

	memset(&r, 0, sizeof(r));
	r.outcome = KUBE_FAILED;
	r.body = "";
	r.timed_out = timed_out;
	snprintf(r.reason, sizeof(r.reason), "%s", reason);
	snprintf(r.message, sizeof(r.message), "%s", message);
	finish(l, &r, NULL);
}

/* Go on with the next request of the operation on object i. */
static void
next(struct lock *l, int i, enum lock_op what)
{
	uint64_t	 t;
	char		 msg[128];

	l->stage++;
	if ((t = remaining(l)) == 0) {
		snprintf(msg, sizeof(msg), "the %s of %s did not finish in "
		    "time", what == OP_GET ? "read" : "write", l->describe);
		fail(l, "Timeout", msg, 1);
		return;
	}
	if (obj_request(l, i, what, t) == -1)
		fail(l, "InternalError", "cannot start the request", 0);
}

/*
 * The MultiLock's record from the primary's p and the secondary's s (NULL
 * if missing): see the top comment.
 */
static void
compose(const struct lock *l, struct lease *out, const struct lease *p,
    const struct lease *s)
{
	unsigned long long	 h = 1469598103934665603ULL;
	const struct lease	*pick;
	const char		*c;
	int			 n;

	*out = *p;
	if (s == NULL)
		return;
	if (strcmp(p->holder, s->holder) != 0) {
		pick = l->obj[1].changed_ms > l->obj[0].changed_ms ? s : p;
		if (pick->holder[0] == '\0')
			pick = pick == p ? s : p;
		*out = *pick;
		memcpy(out->uid, p->uid, sizeof(out->uid));
		if (strcmp(out->holder, l->identity) == 0 ||
		    out->holder[0] == '\0')
			snprintf(out->holder, sizeof(out->holder), "%s",
			    LEGACY_UNKNOWN_LEADER);
	}
	n = snprintf(out->rv, sizeof(out->rv), "%s,%s", p->rv, s->rv);
	if (n < 0 || (size_t)n >= sizeof(out->rv)) {
		/* Too long to join: a hash still changes with either. */
		for (c = p->rv; *c != '\0'; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
		h = (h ^ ',') * 1099511628211ULL;
		for (c = s->rv; *c != '\0'; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ULL;
		snprintf(out->rv, sizeof(out->rv), "#%016llx", h);
	}
}

/* One request of the operation is answered; decode it and go on. */
static void
kube_cb(const struct kube_result *res, void *arg)
{
	struct lock		*l = arg;
	struct lock_obj		*o = &l->obj[l->cur];
	struct kube_result	 bad;
	struct lease		 rec, out;
	char			 err[512];

	if (l->warning[0] == '\0' && res->warning[0] != '\0')
		memcpy(l->warning, res->warning, sizeof(l->warning));
	if (res->outcome == KUBE_OK) {
		memset(&rec, 0, sizeof(rec));
		if (decode(o, res->body, res->len, &rec, err,
		    sizeof(err)) == -1) {
			bad = *res;
			bad.outcome = KUBE_FAILED;
			snprintf(bad.reason, sizeof(bad.reason), "%s",
			    o->kind == OBJ_LEASE ? "BadLease" : "BadRecord");
			snprintf(bad.message, sizeof(bad.message), "%s %.64s: "
			    "%.400s", lock_kind_name(o->kind), l->name, err);
			finish(l, &bad, NULL);
			return;
		}
		if (o->body == NULL || strcmp(o->last.rv, rec.rv) != 0)
			o->changed_ms = clock_mono_ms();
		free(o->body);
		o->body = xmalloc(res->len + 1);
		memcpy(o->body, res->body, res->len);
		o->body[res->len] = '\0';
		o->len = res->len;
		o->last = rec;
		o->missing = 0;
	} else if (res->outcome == KUBE_NOTFOUND && l->op == OP_GET)
		o->missing = 1;
	if (l->nobj == 1) {
		finish(l, res, res->outcome == KUBE_OK ? &rec : NULL);
		return;
	}

	/* The MultiLock. */
	if (l->stage == 0) {
		if (res->outcome != KUBE_OK) {
			finish(l, res, NULL);
			return;
		}
		l->prim = rec;
		if (l->op == OP_UPDATE)
			next(l, 1, l->obj[1].missing || l->obj[1].body == NULL ?
			    OP_CREATE : OP_UPDATE);
		else
			next(l, 1, l->op);
		return;
	}
	if (l->op == OP_GET) {
		if (res->outcome == KUBE_NOTFOUND) {
			/* Held by an old client, or not migrated yet. */
			bad = *res;
			bad.outcome = KUBE_OK;
			compose(l, &out, &l->prim, NULL);
			finish(l, &bad, &out);
			return;
		}
		if (res->outcome == KUBE_OK)
			compose(l, &out, &l->prim, &rec);
		finish(l, res, res->outcome == KUBE_OK ? &out : NULL);
		return;
	}
	/*
	 * A release whose secondary write meets a renew of ours that landed
	 * after all (abandoned at shutdown; the primary was released over
	 * its answer): read the secondary, and release it over its new
	 * version once if it still holds our term (our identity, its
	 * acquireTime and leaseTransitions).  Anything else is a conflict.
	 */
	if (l->op == OP_UPDATE && l->rec.holder[0] == '\0' && l->stage == 1 &&
	    res->outcome == KUBE_CONFLICT && o->body != NULL) {
		l->sec_term = o->last;
		next(l, 1, OP_GET);
		return;
	}
	if (l->op == OP_UPDATE && l->stage == 2) {
		if (res->outcome != KUBE_OK) {
			finish(l, res, NULL);
			return;
		}
		if (strcmp(rec.holder, l->identity) == 0 &&
		    strcmp(l->sec_term.holder, l->identity) == 0 &&
		    rec.acquire_us == l->sec_term.acquire_us &&
		    rec.transitions == l->sec_term.transitions) {
			next(l, 1, OP_UPDATE);
			return;
		}
		bad = *res;
		bad.outcome = KUBE_CONFLICT;
		bad.status = 409;
		snprintf(bad.reason, sizeof(bad.reason), "Conflict");
		snprintf(bad.message, sizeof(bad.message), "the Lease of %s "
		    "changed hands during the release", l->describe);
		finish(l, &bad, NULL);
		return;
	}
	/* The secondary's write ends a Create or an Update. */
	if (res->outcome == KUBE_OK)
		compose(l, &out, &l->prim, &rec);
	finish(l, res, res->outcome == KUBE_OK ? &out : NULL);
}

/* Start op: its first request, on the primary. */
static int
begin(struct lock *l, enum lock_op op, const struct lease *rec,
    uint64_t timeout_ms, lock_done_cb cb, void *arg)
{
	if (l->op != OP_NONE)
		return -1;
	l->op = op;
	l->stage = 0;
	l->cb = cb;
	l->arg = arg;
	l->warning[0] = '\0';
	if (rec != NULL)
		l->rec = *rec;
	l->deadline_ms = clock_mono_ms() + timeout_ms;
	if (obj_request(l, 0, op, timeout_ms) == -1) {
		l->op = OP_NONE;
		l->cb = NULL;
		l->arg = NULL;
		return -1;
	}
	return 0;
}

int
lock_get(struct lock *l, uint64_t timeout_ms, lock_done_cb cb, void *arg)
{
	return begin(l, OP_GET, NULL, timeout_ms, cb, arg);
}

int
lock_create(struct lock *l, const struct lease *rec, uint64_t timeout_ms,
    lock_done_cb cb, void *arg)
{
	return begin(l, OP_CREATE, rec, timeout_ms, cb, arg);
}

int
lock_update(struct lock *l, const struct lease *rec, uint64_t timeout_ms,
    lock_done_cb cb, void *arg)
{
	return begin(l, OP_UPDATE, rec, timeout_ms, cb, arg);
}

/* The pod's answer to lock_owner_get. */
static void
owner_cb(const struct kube_result *res, void *arg)
{
	struct lock		*l = arg;
	struct kube_result	 r = *res;
	kube_done_cb		 cb = l->owner_cb;
	char			 err[256];

	l->op = OP_NONE;
	l->owner_cb = NULL;
	if (r.outcome == KUBE_OK && apiobj_uid(r.body, r.len, "Pod",
	    l->owner.uid, sizeof(l->owner.uid), err, sizeof(err)) == -1) {
		r.outcome = KUBE_FAILED;
		snprintf(r.reason, sizeof(r.reason), "BadPod");
		snprintf(r.message, sizeof(r.message), "pod %.200s: %.250s",
		    l->owner.name, err);
	}
	cb(&r, l->arg);
}

int
lock_owner_get(struct lock *l, const char *pod, uint64_t timeout_ms,
    kube_done_cb done_cb, void *arg)
{
	if (l->op != OP_NONE || l->nobj != 1 || l->obj[0].kind != OBJ_LEASE)
		return -1;
	l->for_life = 1;
	snprintf(l->owner.api_version, sizeof(l->owner.api_version), "v1");
	snprintf(l->owner.kind, sizeof(l->owner.kind), "Pod");
	snprintf(l->owner.name, sizeof(l->owner.name), "%s", pod);
	l->owner.uid[0] = '\0';
	l->op = OP_OWNER;
	l->owner_cb = done_cb;
	l->arg = arg;
	if (kube_core_get(l->k, "pods", l->ns, pod, timeout_ms, owner_cb,
	    l) == -1) {
		l->op = OP_NONE;
		l->owner_cb = NULL;
		l->arg = NULL;
		return -1;
	}
	return 0;
}

void
lock_cancel(struct lock *l)
{
	if (l->op == OP_NONE)
		return;
	kube_cancel(l->k);
	l->op = OP_NONE;
	l->cb = NULL;
	l->owner_cb = NULL;
	l->arg = NULL;
}

void
lock_free(struct lock *l)
{
	if (l == NULL)
		return;
	lock_cancel(l);
	free(l->obj[0].body);
	free(l->obj[1].body);
	free(l->ns);
	free(l->name);
	free(l->describe);
	free(l->identity);
	free(l->event_next);
	free(l);
}

void
lock_set_labels(struct lock *l, const char *const *labels)
{
	l->labels = labels;
}
