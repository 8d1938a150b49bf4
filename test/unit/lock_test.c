/*
 * lock_test.c -- the lock types (lib/lock.c) without a network: the
 * kube_* requests lock.c makes are defined here, recorded (method, path,
 * body) and answered by the test, which checks the objects every lock
 * type reads and writes: leases, endpoints, configmaps and the
 * MultiLocks endpointsleases and configmapsleases.
 *
 * A server's answer is the body the lock sent, with the metadata a server
 * adds (resourceVersion, uid): what the next PUT must carry back.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "api/kube.h"
#include "api/lock.h"
#include "base/xmalloc.h"
#include "codec/lease.h"
#include "codec/legacy.h"

#define NS		"ns1"
#define NAME		"lk"
#define ME		"me"
#define LEASES_PATH	"/apis/coordination.k8s.io/v1/namespaces/" NS "/leases"
#define MAX_REQS	8

/* One request lock.c made, as the API server would see it. */
struct req {
	char		 method[8];
	char		 path[256];
	char		*body;		/* POST and PUT; NULL for GET */
	kube_done_cb	 cb;
	void		*arg;
};

static struct req reqs[MAX_REQS];
static int	 nreq;
static int	 cancels;

/* What the lock operation's callback was given. */
static struct {
	int			 calls;
	enum kube_outcome	 outcome;
	char			 reason[64];
	int			 has_rec;
	struct lease		 rec;
} done;

static void
reset(void)
{
	int	 i;

	for (i = 0; i < nreq; i++)
		free(reqs[i].body);
	memset(reqs, 0, sizeof(reqs));
	nreq = 0;
	cancels = 0;
	memset(&done, 0, sizeof(done));
}

static int
record(const char *method, const char *body, kube_done_cb cb, void *arg,
    const char *fmt, ...)
{
	struct req	*r;
	va_list		 ap;

	assert_true(nreq < MAX_REQS);
	r = &reqs[nreq++];
	snprintf(r->method, sizeof(r->method), "%s", method);
	va_start(ap, fmt);
	vsnprintf(r->path, sizeof(r->path), fmt, ap);
	va_end(ap);
	r->body = body != NULL ? xstrdup(body) : NULL;
	r->cb = cb;
	r->arg = arg;
	return 0;
}

/* The kube.c functions lock.c calls, recording instead of sending. */
int
kube_lease_get(struct kube *k, const char *ns, const char *name,
    uint64_t timeout_ms, kube_done_cb done_cb, void *arg)
{
	(void)k;
	assert_true(timeout_ms > 0);
	return record("GET", NULL, done_cb, arg,
	    "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", ns, name);
}

int
kube_lease_create(struct kube *k, const char *ns, const char *body,
    uint64_t timeout_ms, kube_done_cb done_cb, void *arg)
{
	(void)k;
	assert_true(timeout_ms > 0);
	return record("POST", body, done_cb, arg,
	    "/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
}

int
kube_lease_update(struct kube *k, const char *ns, const char *name,
    const char *body, uint64_t timeout_ms, kube_done_cb done_cb, void *arg)
{
	(void)k;
	assert_true(timeout_ms > 0);
	return record("PUT", body, done_cb, arg,
	    "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", ns, name);
}

int
kube_core_get(struct kube *k, const char *resource, const char *ns,
    const char *name, uint64_t timeout_ms, kube_done_cb done_cb, void *arg)
{
	(void)k;
	assert_true(timeout_ms > 0);
	return record("GET", NULL, done_cb, arg, "/api/v1/namespaces/%s/%s/%s",
	    ns, resource, name);
}

int
kube_core_create(struct kube *k, const char *resource, const char *ns,
    const char *body, uint64_t timeout_ms, kube_done_cb done_cb, void *arg)
{
	(void)k;
	assert_true(timeout_ms > 0);
	return record("POST", body, done_cb, arg, "/api/v1/namespaces/%s/%s",
	    ns, resource);
}

int
kube_core_update(struct kube *k, const char *resource, const char *ns,
    const char *name, const char *body, uint64_t timeout_ms,
    kube_done_cb done_cb, void *arg)
{
	(void)k;
	assert_true(timeout_ms > 0);
	return record("PUT", body, done_cb, arg, "/api/v1/namespaces/%s/%s/%s",
	    ns, resource, name);
}

int
kube_event_create(struct kube *k, const char *ns, const char *body,
    uint64_t timeout_ms, kube_done_cb done_cb, void *arg)
{
	(void)k;
	assert_true(timeout_ms > 0);
	return record("POST", body, done_cb, arg, "/api/v1/namespaces/%s/events",
	    ns);
}

void
kube_cancel(struct kube *k)
{
	(void)k;
	cancels++;
}

/* Every lock type: its objects' paths, kinds and where the record is. */
static const struct type_case {
	const char	*type;
	const char	*path;		/* the primary's collection */
	const char	*kind;		/* the primary's kind */
	int		 multi;		/* a Lease follows the primary */
} cases[] = {
	{ "leases", LEASES_PATH, "Lease", 0 },
	{ "endpoints", "/api/v1/namespaces/" NS "/endpoints", "Endpoints", 0 },
	{ "configmaps", "/api/v1/namespaces/" NS "/configmaps", "ConfigMap",
	    0 },
	{ "endpointsleases", "/api/v1/namespaces/" NS "/endpoints",
	    "Endpoints", 1 },
	{ "configmapsleases", "/api/v1/namespaces/" NS "/configmaps",
	    "ConfigMap", 1 },
};
#define NCASES	((int)(sizeof(cases) / sizeof(cases[0])))

static void
lock_done(const struct kube_result *res, const struct lease *rec, void *arg)
{
	(void)arg;
	done.calls++;
	done.outcome = res->outcome;
	snprintf(done.reason, sizeof(done.reason), "%s", res->reason);
	done.has_rec = rec != NULL;
	if (rec != NULL)
		done.rec = *rec;
}

/* Answer request i with outcome, HTTP status and body (may be NULL). */
static void
answer(int i, enum kube_outcome outcome, long status, const char *body)
{
	struct kube_result	 res;

	assert_true(i < nreq);
	memset(&res, 0, sizeof(res));
	res.outcome = outcome;
	res.status = status;
	res.body = body != NULL ? body : "";
	res.len = strlen(res.body);
	reqs[i].cb(&res, reqs[i].arg);
}

/* A record held by holder, at fixed whole seconds (legacy precision). */
static struct lease
record_of(const char *holder, int32_t transitions)
{
	struct lease	 r;

	memset(&r, 0, sizeof(r));
	snprintf(r.holder, sizeof(r.holder), "%s", holder);
	r.duration_s = 15;
	r.transitions = transitions;
	r.acquire_us = 1714979289000000LL;
	r.renew_us = 1714979299000000LL;
	return r;
}

/*
 * The object a server holds after the write body: body with
 * metadata.resourceVersion rv and uid uid.  The caller frees it.
 */
static char *
stored(const char *body, const char *rv, const char *uid)
{
	json_t		*root, *meta;
	json_error_t	 jerr;
	char		*s;

	root = json_loads(body, 0, &jerr);
	assert_non_null(root);
	meta = json_object_get(root, "metadata");
	assert_non_null(meta);
	json_object_set_new(meta, "resourceVersion", json_string(rv));
	json_object_set_new(meta, "uid", json_string(uid));
	s = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return s;
}

/* The object a server holds for a type's primary, from scratch. */
static char *
object_of(const char *kind, const struct lease *rec, const char *rv)
{
	char	*body, *s;

	if (strcmp(kind, "Lease") == 0)
		body = lease_encode_create(NS, NAME, rec);
	else
		body = legacy_encode_create(kind, NS, NAME, rec);
	s = stored(body, rv, "uid-1");
	free(body);
	return s;
}

static const char *
str_at(json_t *root, const char *a, const char *b)
{
	json_t	*v = json_object_get(root, a);

	if (b != NULL)
		v = json_object_get(v, b);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/*
 * Check a write body of the given kind: its kind and apiVersion, its
 * metadata (name, namespace, and resourceVersion rv for a PUT, none for a
 * POST) and the record in it (spec of a Lease, the annotation of a legacy
 * object) held by holder.
 */
static void
check_body(const char *body, const char *kind, const char *rv,
    const char *holder)
{
	json_t		*root, *rec;
	json_error_t	 jerr;
	const char	*v;

	root = json_loads(body, 0, &jerr);
	assert_non_null(root);
	assert_string_equal(str_at(root, "kind", NULL), kind);
	assert_string_equal(str_at(root, "apiVersion", NULL),
	    strcmp(kind, "Lease") == 0 ? "coordination.k8s.io/v1" : "v1");
	assert_string_equal(str_at(root, "metadata", "name"), NAME);
	assert_string_equal(str_at(root, "metadata", "namespace"), NS);
	if (rv != NULL)
		assert_string_equal(str_at(root, "metadata",
		    "resourceVersion"), rv);
	else
		assert_null(str_at(root, "metadata", "resourceVersion"));
	if (strcmp(kind, "Lease") == 0) {
		assert_string_equal(str_at(root, "spec", "holderIdentity"),
		    holder);
		assert_int_equal(json_integer_value(json_object_get(
		    json_object_get(root, "spec"), "leaseDurationSeconds")), 15);
		assert_null(json_object_get(
		    json_object_get(root, "metadata"), "annotations"));
	} else {
		assert_null(json_object_get(root, "spec"));
		v = str_at(json_object_get(root, "metadata"), "annotations",
		    LEGACY_ANNOTATION);
		assert_non_null(v);
		rec = json_loads(v, 0, &jerr);
		assert_non_null(rec);
		assert_string_equal(str_at(rec, "holderIdentity", NULL),
		    holder);
		assert_int_equal(json_integer_value(json_object_get(rec,
		    "leaseDurationSeconds")), 15);
		json_decref(rec);
	}
	json_decref(root);
}

static void
check_req(int i, const char *method, const char *path)
{
	assert_true(i < nreq);
	assert_string_equal(reqs[i].method, method);
	assert_string_equal(reqs[i].path, path);
	assert_int_equal(reqs[i].body != NULL, strcmp(method, "GET") != 0);
}

static struct lock *
new_lock(const struct type_case *c)
{
	struct lock	*l;
	char		 err[256];

	l = lock_new(NULL, c->type, NS, NAME, ME, err, sizeof(err));
	assert_non_null(l);
	return l;
}

static void
test_types(void **state)
{
	struct lock	*l;
	char		 err[256], want[128];
	int		 i;

	(void)state;
	for (i = 0; i < NCASES; i++) {
		assert_true(lock_type_valid(cases[i].type));
		l = new_lock(&cases[i]);
		assert_string_equal(lock_type(l), cases[i].type);
		snprintf(want, sizeof(want), "%s/%s/%s", cases[i].type, NS,
		    NAME);
		assert_string_equal(lock_describe(l), want);
		assert_non_null(strstr(lock_rbac(l), cases[i].multi ?
		    "and on leases" : "get, update and create on"));
		lock_free(l);
	}
	assert_false(lock_type_valid("lease"));
	assert_false(lock_type_valid(""));
	assert_null(lock_new(NULL, "Leases", NS, NAME, ME, err, sizeof(err)));
	assert_string_equal(err, "lock type \"Leases\" is not one of leases, "
	    "endpoints, configmaps, endpointsleases, configmapsleases");
}

/* Create, then Update over what the create returned, for every type. */
static void
test_create_then_update(void **state)
{
	const struct type_case	*c;
	struct lock		*l;
	struct lease		 rec;
	char			 path[256], *obj, *sec;
	int			 i;

	(void)state;
	for (i = 0; i < NCASES; i++) {
		c = &cases[i];
		reset();
		l = new_lock(c);
		rec = record_of(ME, 0);
		assert_int_equal(lock_create(l, &rec, 5000, lock_done, NULL),
		    0);
		/* A second operation while one runs is refused. */
		assert_int_equal(lock_get(l, 5000, lock_done, NULL), -1);
		check_req(0, "POST", c->path);
		check_body(reqs[0].body, c->kind, NULL, ME);
		obj = stored(reqs[0].body, "10", "uid-p");
		answer(0, KUBE_OK, 201, obj);
		free(obj);
		sec = NULL;
		if (c->multi) {
			assert_int_equal(done.calls, 0);
			check_req(1, "POST", LEASES_PATH);
			check_body(reqs[1].body, "Lease", NULL, ME);
			sec = stored(reqs[1].body, "20", "uid-s");
			answer(1, KUBE_OK, 201, sec);
			free(sec);
		}
		assert_int_equal(nreq, c->multi ? 2 : 1);
		assert_int_equal(done.calls, 1);
		assert_int_equal(done.outcome, KUBE_OK);
		assert_true(done.has_rec);
		assert_string_equal(done.rec.holder, ME);
		/* A MultiLock's version is both objects' joined. */
		assert_string_equal(done.rec.rv, c->multi ? "10,20" : "10");
		assert_string_equal(done.rec.uid, "uid-p");

		/* Update: PUT over the versions last seen. */
		rec = record_of(ME, 0);
		rec.renew_us += 2000000;
		assert_int_equal(lock_update(l, &rec, 5000, lock_done, NULL),
		    0);
		snprintf(path, sizeof(path), "%s/%s", c->path, NAME);
		check_req(nreq - 1, "PUT", path);
		check_body(reqs[nreq - 1].body, c->kind, "10", ME);
		obj = stored(reqs[nreq - 1].body, "11", "uid-p");
		answer(nreq - 1, KUBE_OK, 200, obj);
		free(obj);
		if (c->multi) {
			check_req(nreq - 1, "PUT", LEASES_PATH "/" NAME);
			check_body(reqs[nreq - 1].body, "Lease", "20", ME);
			sec = stored(reqs[nreq - 1].body, "21", "uid-s");
			answer(nreq - 1, KUBE_OK, 200, sec);
			free(sec);
		}
		assert_int_equal(nreq, c->multi ? 4 : 2);
		assert_int_equal(done.calls, 2);
		assert_int_equal(done.outcome, KUBE_OK);
		assert_string_equal(done.rec.rv, c->multi ? "11,21" : "11");
		assert_true(done.rec.renew_us == rec.renew_us);
		lock_free(l);
		assert_int_equal(cancels, 0);
	}
	reset();
}

/* What lock_owner_get's callback was given. */
static struct {
	int			 calls;
	enum kube_outcome	 outcome;
	char			 reason[64];
} owner_done;

static void
owner_cb(const struct kube_result *res, void *arg)
{
	(void)arg;
	owner_done.calls++;
	owner_done.outcome = res->outcome;
	snprintf(owner_done.reason, sizeof(owner_done.reason), "%s",
	    res->reason);
}

/*
 * For life (nais/elector): the pod is read first; until its uid is
 * known nothing is created; the create names it as the owner, with
 * holderIdentity and acquireTime only; no update is ever sent.
 */
static void
test_for_life(void **state)
{
	struct lock	*l;
	struct lease	 rec;
	json_t		*root, *spec, *ref;
	json_error_t	 jerr;
	char		*obj;

	(void)state;
	reset();
	memset(&owner_done, 0, sizeof(owner_done));
	/* Only a Lease lock is held for life. */
	l = new_lock(&cases[1]);
	assert_int_equal(lock_owner_get(l, "pod-a", 5000, owner_cb, NULL),
	    -1);
	lock_free(l);
	assert_int_equal(nreq, 0);

	l = new_lock(&cases[0]);
	assert_int_equal(lock_owner_get(l, "pod-a", 5000, owner_cb, NULL), 0);
	assert_non_null(strstr(lock_rbac(l), "create, list and watch on "
	    "leases"));
	check_req(0, "GET", "/api/v1/namespaces/" NS "/pods/pod-a");
	rec = record_of(ME, 0);
	rec.duration_s = 0;
	rec.renew_us = 0;
	/* Busy reading the pod. */
	assert_int_equal(lock_create(l, &rec, 5000, lock_done, NULL), -1);
	/* A pod without a uid: BadPod, and still no create. */
	answer(0, KUBE_OK, 200, "{\"kind\":\"Pod\",\"metadata\":{}}");
	assert_int_equal(owner_done.calls, 1);
	assert_int_equal(owner_done.outcome, KUBE_FAILED);
	assert_string_equal(owner_done.reason, "BadPod");
	assert_int_equal(lock_create(l, &rec, 5000, lock_done, NULL), -1);
	assert_int_equal(lock_owner_get(l, "pod-a", 5000, owner_cb, NULL), 0);
	answer(1, KUBE_OK, 200, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"name\":\"pod-a\",\"uid\":\"uid-pod\"}}");
	assert_int_equal(owner_done.outcome, KUBE_OK);

	assert_int_equal(lock_create(l, &rec, 5000, lock_done, NULL), 0);
	check_req(2, "POST", LEASES_PATH);
	root = json_loads(reqs[2].body, 0, &jerr);
	assert_non_null(root);
	ref = json_array_get(json_object_get(json_object_get(root,
	    "metadata"), "ownerReferences"), 0);
	assert_string_equal(str_at(ref, "apiVersion", NULL), "v1");
	assert_string_equal(str_at(ref, "kind", NULL), "Pod");
	assert_string_equal(str_at(ref, "name", NULL), "pod-a");
	assert_string_equal(str_at(ref, "uid", NULL), "uid-pod");
	spec = json_object_get(root, "spec");
	assert_int_equal(json_object_size(spec), 2);
	assert_string_equal(str_at(spec, "holderIdentity", NULL), ME);
	assert_non_null(str_at(spec, "acquireTime", NULL));
	json_decref(root);
	obj = stored(reqs[2].body, "30", "uid-l");
	answer(2, KUBE_OK, 201, obj);
	free(obj);
	assert_int_equal(done.outcome, KUBE_OK);
	assert_string_equal(done.rec.holder, ME);

	/* Read, but never written over. */
	assert_int_equal(lock_update(l, &rec, 5000, lock_done, NULL), -1);
	assert_int_equal(lock_get(l, 5000, lock_done, NULL), 0);
	check_req(3, "GET", LEASES_PATH "/" NAME);
	lock_free(l);
	assert_int_equal(cancels, 1);
	reset();
}

/* Get reads the primary, then a MultiLock's Lease; the record is read. */
static void
test_get(void **state)
{
	const struct type_case	*c;
	struct lock		*l;
	struct lease		 rec;
	char			 path[256], *obj;
	int			 i;

	(void)state;
	for (i = 0; i < NCASES; i++) {
		c = &cases[i];
		reset();
		l = new_lock(c);
		assert_int_equal(lock_get(l, 5000, lock_done, NULL), 0);
		snprintf(path, sizeof(path), "%s/%s", c->path, NAME);
		check_req(0, "GET", path);
		rec = record_of("other", 3);
		obj = object_of(c->kind, &rec, "30");
		answer(0, KUBE_OK, 200, obj);
		free(obj);
		if (c->multi) {
			check_req(1, "GET", LEASES_PATH "/" NAME);
			obj = object_of("Lease", &rec, "40");
			answer(1, KUBE_OK, 200, obj);
			free(obj);
		}
		assert_int_equal(done.calls, 1);
		assert_int_equal(done.outcome, KUBE_OK);
		assert_string_equal(done.rec.holder, "other");
		assert_int_equal(done.rec.transitions, 3);
		assert_int_equal(done.rec.duration_s, 15);
		assert_true(done.rec.renew_us == rec.renew_us);
		assert_string_equal(done.rec.rv, c->multi ? "30,40" : "30");

		/* Not found: the primary's 404 is the answer. */
		assert_int_equal(lock_get(l, 5000, lock_done, NULL), 0);
		check_req(nreq - 1, "GET", path);
		answer(nreq - 1, KUBE_NOTFOUND, 404, "{}");
		assert_int_equal(done.calls, 2);
		assert_int_equal(done.outcome, KUBE_NOTFOUND);
		assert_false(done.has_rec);

		/* An object that does not decode is a failure. */
		assert_int_equal(lock_get(l, 5000, lock_done, NULL), 0);
		answer(nreq - 1, KUBE_OK, 200, "{\"kind\": 7}");
		assert_int_equal(done.calls, 3);
		assert_int_equal(done.outcome, KUBE_FAILED);
		assert_string_equal(done.reason, strcmp(c->kind, "Lease") == 0 ?
		    "BadLease" : "BadRecord");
		assert_false(done.has_rec);
		lock_free(l);
	}
	reset();
}

/*
 * A MultiLock whose Lease is missing reads as the primary alone; the next
 * Update writes the primary and creates the Lease.
 */
static void
test_multilock_secondary_missing(void **state)
{
	const struct type_case	*c;
	struct lock		*l;
	struct lease		 rec;
	char			 path[256], *obj;
	int			 i;

	(void)state;
	for (i = 0; i < NCASES; i++) {
		c = &cases[i];
		if (!c->multi)
			continue;
		reset();
		l = new_lock(c);
		assert_int_equal(lock_get(l, 5000, lock_done, NULL), 0);
		rec = record_of("old-client", 1);
		obj = object_of(c->kind, &rec, "50");
		answer(0, KUBE_OK, 200, obj);
		free(obj);
		check_req(1, "GET", LEASES_PATH "/" NAME);
		answer(1, KUBE_NOTFOUND, 404, "{}");
		assert_int_equal(done.calls, 1);
		assert_int_equal(done.outcome, KUBE_OK);
		assert_string_equal(done.rec.holder, "old-client");
		assert_string_equal(done.rec.rv, "50");

		rec = record_of(ME, 2);
		assert_int_equal(lock_update(l, &rec, 5000, lock_done, NULL),
		    0);
		snprintf(path, sizeof(path), "%s/%s", c->path, NAME);
		check_req(2, "PUT", path);
		check_body(reqs[2].body, c->kind, "50", ME);
		obj = stored(reqs[2].body, "51", "uid-1");
		answer(2, KUBE_OK, 200, obj);
		free(obj);
		check_req(3, "POST", LEASES_PATH);
		check_body(reqs[3].body, "Lease", NULL, ME);
		obj = stored(reqs[3].body, "60", "uid-s");
		answer(3, KUBE_OK, 201, obj);
		free(obj);
		assert_int_equal(done.calls, 2);
		assert_int_equal(done.outcome, KUBE_OK);
		assert_string_equal(done.rec.holder, ME);
		assert_string_equal(done.rec.rv, "51,60");

		/* A conflict on the primary ends the Update there. */
		assert_int_equal(lock_update(l, &rec, 5000, lock_done, NULL),
		    0);
		check_req(4, "PUT", path);
		answer(4, KUBE_CONFLICT, 409, "{}");
		assert_int_equal(nreq, 5);
		assert_int_equal(done.calls, 3);
		assert_int_equal(done.outcome, KUBE_CONFLICT);
		assert_false(done.has_rec);
		lock_free(l);
	}
	reset();
}

/*
 * A MultiLock whose objects name different holders never reads as ours
 * nor free: here the primary names us and the Lease nobody, so the holder
 * is the unknown leader, and the version is both objects'.
 */
static void
test_multilock_holders_differ(void **state)
{
	struct lock	*l;
	struct lease	 p, s;
	char		*obj;

	(void)state;
	reset();
	l = new_lock(&cases[3]);
	assert_int_equal(lock_get(l, 5000, lock_done, NULL), 0);
	p = record_of(ME, 4);
	obj = object_of("Endpoints", &p, "70");
	answer(0, KUBE_OK, 200, obj);
	free(obj);
	s = record_of("", 4);
	obj = object_of("Lease", &s, "80");
	answer(1, KUBE_OK, 200, obj);
	free(obj);
	assert_int_equal(done.calls, 1);
	assert_int_equal(done.outcome, KUBE_OK);
	assert_string_equal(done.rec.holder, LEGACY_UNKNOWN_LEADER);
	assert_string_equal(done.rec.rv, "70,80");
	assert_string_equal(done.rec.uid, "uid-1");
	lock_free(l);
	reset();
}

static int	 events_done;
static int	 events_done_nreq;	/* requests when last reported */

static void
event_done(const struct kube_result *res, void *arg)
{
	(void)res;
	(void)arg;
	events_done++;
	events_done_nreq = nreq;
}

/* Check the Event of request i: about kind, at version rv. */
static void
check_event(int i, const char *kind, const char *rv)
{
	json_t		*root, *inv;
	json_error_t	 jerr;

	check_req(i, "POST", "/api/v1/namespaces/" NS "/events");
	root = json_loads(reqs[i].body, 0, &jerr);
	assert_non_null(root);
	assert_string_equal(str_at(root, "kind", NULL), "Event");
	assert_string_equal(str_at(root, "message", NULL), "me became leader");
	inv = json_object_get(root, "involvedObject");
	assert_string_equal(str_at(inv, "kind", NULL), kind);
	assert_string_equal(str_at(inv, "name", NULL), NAME);
	assert_string_equal(str_at(inv, "namespace", NULL), NS);
	assert_string_equal(str_at(inv, "uid", NULL), "uid-1");
	assert_string_equal(str_at(inv, "resourceVersion", NULL), rv);
	json_decref(root);
}

/* Events: about the primary, then a MultiLock's Lease; kind and uid. */
static void
test_events(void **state)
{
	const struct type_case	*c;
	struct lock		*l;
	struct lease		 rec;
	char			*obj;
	int			 i, j;

	(void)state;
	for (i = 0; i < NCASES; i++) {
		c = &cases[i];
		reset();
		l = new_lock(c);
		assert_int_equal(lock_get(l, 5000, lock_done, NULL), 0);
		rec = record_of(ME, 0);
		obj = object_of(c->kind, &rec, "90");
		answer(0, KUBE_OK, 200, obj);
		free(obj);
		if (c->multi) {
			obj = object_of("Lease", &rec, "91");
			answer(1, KUBE_OK, 200, obj);
			free(obj);
		}
		j = nreq;
		events_done = 0;
		assert_int_equal(lock_record_event(l, NULL, "me became leader",
		    1714979299123456LL, 5000, event_done, NULL), 0);
		check_event(j, c->kind, "90");
		assert_int_equal(nreq, j + 1);
		answer(j, KUBE_OK, 201, "{}");
		/* A MultiLock's second Event is under way before the first
		   is reported, so the client stays busy until both are. */
		assert_int_equal(events_done_nreq, j + (c->multi ? 2 : 1));
		if (c->multi) {
			check_event(j + 1, "Lease", "91");
			answer(j + 1, KUBE_OK, 201, "{}");
		}
		assert_int_equal(nreq, j + (c->multi ? 2 : 1));
		assert_int_equal(events_done, c->multi ? 2 : 1);
		lock_free(l);
	}
	reset();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_create_then_update),
		cmocka_unit_test(test_get),
		cmocka_unit_test(test_multilock_secondary_missing),
		cmocka_unit_test(test_multilock_holders_differ),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_for_life),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
