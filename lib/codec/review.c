/*
 * review.c -- access reviews, a SelfSubjectReview, a pod's service
 * account and an object's last spec writer, to and from JSON (review.h).
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/xmalloc.h"
#include "codec/codec_int.h"
#include "codec/lease.h"
#include "codec/review.h"

/* spec.resourceAttributes of a review asking a. */
static json_t *
attributes(const struct review_ask *a)
{
	json_t	*ra = json_object();

	json_object_set_new(ra, "verb", codec_jstring(a->verb));
	json_object_set_new(ra, "group", codec_jstring(a->group));
	json_object_set_new(ra, "resource", codec_jstring(a->resource));
	if (a->ns != NULL && a->ns[0] != '\0')
		json_object_set_new(ra, "namespace", codec_jstring(a->ns));
	if (a->name != NULL && a->name[0] != '\0')
		json_object_set_new(ra, "name", codec_jstring(a->name));
	return ra;
}

static json_t *
review(const char *kind)
{
	json_t	*root;

	codec_json_init();
	root = json_object();
	json_object_set_new(root, "kind", json_string(kind));
	json_object_set_new(root, "apiVersion",
	    json_string("authorization.k8s.io/v1"));
	return root;
}

char *
review_encode_self(const struct review_ask *a)
{
	json_t	*root = review("SelfSubjectAccessReview"), *spec;

	spec = json_object();
	json_object_set_new(spec, "resourceAttributes", attributes(a));
	json_object_set_new(root, "spec", spec);
	return codec_json_dump(root);
}

char *
review_encode_sa(const char *sa_ns, const char *sa,
    const struct review_ask *a)
{
	json_t	*root = review("SubjectAccessReview"), *spec, *groups;
	char	 s[600];

	spec = json_object();
	json_object_set_new(spec, "resourceAttributes", attributes(a));
	snprintf(s, sizeof(s), "system:serviceaccount:%s:%s", sa_ns, sa);
	json_object_set_new(spec, "user", codec_jstring(s));
	groups = json_array();
	json_array_append_new(groups, json_string("system:serviceaccounts"));
	snprintf(s, sizeof(s), "system:serviceaccounts:%s", sa_ns);
	json_array_append_new(groups, codec_jstring(s));
	json_array_append_new(groups, json_string("system:authenticated"));
	json_object_set_new(spec, "groups", groups);
	json_object_set_new(root, "spec", spec);
	return codec_json_dump(root);
}

int
review_decode(const char *buf, size_t len, int *allowed, char *reason,
    size_t reasonlen, char *err, size_t errlen)
{
	json_t	*root, *st, *al;
	int	 rc = -1;

	codec_json_init();
	reason[0] = '\0';
	if ((root = codec_load(buf, len, LEASE_BODY_MAX, err, errlen)) == NULL)
		return -1;
	st = json_object_get(root, "status");
	al = json_object_get(st, "allowed");
	if (!json_is_object(st) || !json_is_boolean(al))
		snprintf(err, errlen, "the answer is not an access review with "
		    "status.allowed");
	else if (codec_get_string(st, "reason", "status.reason", reason,
	    reasonlen, err, errlen) == -1)
		;
	else if (reason[0] == '\0' && codec_get_string(st, "evaluationError",
	    "status.evaluationError", reason, reasonlen, err, errlen) == -1)
		;
	else {
		*allowed = json_is_true(al);
		rc = 0;
	}
	json_decref(root);
	return rc;
}

int
review_whoami(const char *buf, size_t len, char *user, size_t userlen,
    char *err, size_t errlen)
{
	json_t	*root, *ui;
	int	 rc = -1;

	codec_json_init();
	user[0] = '\0';
	if ((root = codec_load(buf, len, LEASE_BODY_MAX, err, errlen)) == NULL)
		return -1;
	ui = json_object_get(json_object_get(root, "status"), "userInfo");
	if (!json_is_object(ui))
		snprintf(err, errlen, "the answer has no status.userInfo");
	else if (codec_get_string(ui, "username", "status.userInfo.username",
	    user, userlen, err, errlen) == 0)
		rc = 0;
	json_decref(root);
	return rc;
}

int
review_pod_sa(const char *buf, size_t len, char *sa, size_t salen,
    char *err, size_t errlen)
{
	json_t	*root, *spec;
	int	 rc = -1;

	codec_json_init();
	snprintf(sa, salen, "default");
	if ((root = codec_load(buf, len, LEASE_BODY_MAX, err, errlen)) == NULL)
		return -1;
	spec = json_object_get(root, "spec");
	if (!json_is_object(spec))
		snprintf(err, errlen, "the pod has no spec");
	else if (codec_get_string(spec, "serviceAccountName",
	    "spec.serviceAccountName", sa, salen, err, errlen) == 0)
		rc = 0;
	if (rc == 0 && sa[0] == '\0')
		snprintf(sa, salen, "default");
	json_decref(root);
	return rc;
}

int
review_pod_list(const char *buf, size_t len,
    void (*cb)(const char *name, void *arg), void *arg, char *err,
    size_t errlen)
{
	json_t	*root, *items, *e, *n;
	size_t	 i;

	codec_json_init();
	if ((root = codec_load(buf, len, LEASE_BODY_MAX, err, errlen)) == NULL)
		return -1;
	items = json_object_get(root, "items");
	if (!json_is_array(items)) {
		snprintf(err, errlen, "the answer is not a list (no items)");
		json_decref(root);
		return -1;
	}
	json_array_foreach(items, i, e) {
		n = json_object_get(json_object_get(e, "metadata"), "name");
		if (json_is_string(n) && json_string_length(n) > 0 &&
		    json_string_length(n) < LEASE_HOLDER_MAX)
			cb(json_string_value(n), arg);
	}
	json_decref(root);
	return 0;
}

int
review_event_leaders(const char *buf, size_t len,
    void (*cb)(const char *id, void *arg), void *arg, char *err,
    size_t errlen)
{
	static const char	 tail[] = " became leader";
	json_t			*root, *items, *e, *r, *m;
	char			 id[LEASE_HOLDER_MAX];
	const char		*msg;
	size_t			 i, n, t = sizeof(tail) - 1;

	codec_json_init();
	if ((root = codec_load(buf, len, LEASE_BODY_MAX, err, errlen)) == NULL)
		return -1;
	items = json_object_get(root, "items");
	if (!json_is_array(items)) {
		snprintf(err, errlen, "the answer is not a list (no items)");
		json_decref(root);
		return -1;
	}
	json_array_foreach(items, i, e) {
		r = json_object_get(e, "reason");
		m = json_object_get(e, "message");
		if (!json_is_string(r) || !json_is_string(m) ||
		    strcmp(json_string_value(r), "LeaderElection") != 0)
			continue;
		msg = json_string_value(m);
		n = json_string_length(m);
		if (n <= t || n - t >= sizeof(id) ||
		    strcmp(msg + n - t, tail) != 0)
			continue;
		snprintf(id, sizeof(id), "%.*s", (int)(n - t), msg);
		if (strchr(id, ' ') == NULL)
			cb(id, arg);
	}
	json_decref(root);
	return 0;
}

int
review_spec_manager(const char *buf, size_t len, char *manager,
    size_t managerlen, char *err, size_t errlen)
{
	json_t	*root, *mf, *e, *op, *fv;
	size_t	 i;
	int64_t	 t, best = -1;
	char	 e_err[128];

	codec_json_init();
	manager[0] = '\0';
	if ((root = codec_load(buf, len, LEASE_BODY_MAX, err, errlen)) == NULL)
		return -1;
	if (!json_is_object(root)) {
		snprintf(err, errlen, "the answer is not an object");
		json_decref(root);
		return -1;
	}
	mf = json_object_get(json_object_get(root, "metadata"),
	    "managedFields");
	json_array_foreach(mf, i, e) {
		op = json_object_get(e, "operation");
		fv = json_object_get(e, "fieldsV1");
		if (!json_is_string(op) ||
		    strcmp(json_string_value(op), "Update") != 0 ||
		    json_object_get(fv, "f:spec") == NULL ||
		    codec_get_time(e, "time", "managedFields[].time", &t, e_err,
		    sizeof(e_err)) == -1 || t < best)
			continue;
		if (codec_get_string(e, "manager", "managedFields[].manager",
		    manager, managerlen, e_err, sizeof(e_err)) == 0)
			best = t;
	}
	json_decref(root);
	return 0;
}

int
review_jwt_exp(const char *token, int64_t *exp_s)
{
	const char	*p, *q;
	char		*b64, *payload, err[64];
	size_t		 n, i, len;
	json_t		*root, *exp;
	int		 rc = -1;

	if ((p = strchr(token, '.')) == NULL ||
	    (q = strchr(p + 1, '.')) == NULL)
		return -1;
	n = (size_t)(q - p - 1);
	/* base64url without padding into standard base64 with it. */
	b64 = xmalloc(n + 4);
	for (i = 0; i < n; i++)
		b64[i] = p[1 + i] == '-' ? '+' : p[1 + i] == '_' ? '/' :
		    p[1 + i];
	while (i % 4 != 0)
		b64[i++] = '=';
	b64[i] = '\0';
	payload = base64_decode(b64, &len);
	free(b64);
	if (payload == NULL)
		return -1;
	codec_json_init();
	if ((root = codec_load(payload, len, LEASE_BODY_MAX, err,
	    sizeof(err))) != NULL) {
		exp = json_object_get(root, "exp");
		if (json_is_integer(exp) && json_integer_value(exp) > 0) {
			*exp_s = (int64_t)json_integer_value(exp);
			rc = 0;
		} else if (json_is_real(exp) && json_real_value(exp) > 0) {
			*exp_s = (int64_t)json_real_value(exp);
			rc = 0;
		}
		json_decref(root);
	}
	explicit_bzero(payload, len);
	free(payload);
	return rc;
}
