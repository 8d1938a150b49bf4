/*
 * lease.c -- the coordination.k8s.io/v1 Lease record and its JSON codec.
 *
 * Decoding follows what the Go API types accept
 * (ref/clientgo-leaderelection.md 4.2, 4.3): every spec field is optional
 * and null reads as absent.  Encoding follows client-go's
 * LeaderElectionRecordToLeaseSpec (ref 3.2).  Also the jansson set-up
 * and the string helpers that the other files of codec/ share
 * (codec_int.h).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "base/xmalloc.h"
#include "codec/apitime.h"
#include "codec/codec_int.h"
#include "codec/lease.h"

static int	 check_object(json_t *, char *, size_t);
static int	 get_int32(json_t *, const char *, const char *, int32_t *,
		    char *, size_t);
static json_t	*encode_spec(const struct lease *);
static int	 same_time(int64_t, int64_t);

/*
 * jansson allocates through xmalloc, so out of memory is fatal in one
 * place and json_dumps of a tree we built cannot fail.
 */
void
codec_json_init(void)
{
	static int done;

	if (!done) {
		json_set_alloc_funcs(xmalloc, free);
		done = 1;
	}
}

void
lease_fencing_token(const struct lease *rec, char *buf, size_t len)
{
	char		 num[TEXT_INT_LEN + 1];
	const char	*u;
	size_t		 n, i;

	if (len == 0)
		return;
	if (rec->holder[0] == '\0' || rec->transitions < 0) {
		buf[0] = '\0';
		return;
	}
	/* As "%010d-%s", without printf: /leader writes it every time. */
	n = text_u64(num, (uint64_t)rec->transitions, 10);
	num[n++] = '-';
	for (i = 0; i < n && i + 1 < len; i++)
		buf[i] = num[i];
	for (u = rec->uid; *u != '\0' && i + 1 < len; u++)
		buf[i++] = *u;
	buf[i] = '\0';
}

/* kind and apiVersion, where present, must say this is a v1 Lease. */
static int
check_object(json_t *root, char *err, size_t errlen)
{
	json_t *v;

	if (!json_is_object(root)) {
		snprintf(err, errlen, "not a JSON object");
		return -1;
	}
	if ((v = json_object_get(root, "kind")) != NULL) {
		if (!json_is_string(v)) {
			snprintf(err, errlen, "kind: not a string");
			return -1;
		}
		if (strcmp(json_string_value(v), "Lease") != 0) {
			snprintf(err, errlen,
			    "kind: \"%.64s\" is not \"Lease\"",
			    json_string_value(v));
			return -1;
		}
	}
	if ((v = json_object_get(root, "apiVersion")) != NULL) {
		if (!json_is_string(v)) {
			snprintf(err, errlen, "apiVersion: not a string");
			return -1;
		}
		if (strcmp(json_string_value(v), LEASE_API_VERSION) != 0) {
			snprintf(err, errlen,
			    "apiVersion: \"%.64s\" is not \"%s\"",
			    json_string_value(v), LEASE_API_VERSION);
			return -1;
		}
	}
	if ((v = json_object_get(root, "metadata")) != NULL &&
	    !json_is_object(v) && !json_is_null(v)) {
		snprintf(err, errlen, "metadata: not an object");
		return -1;
	}
	if ((v = json_object_get(root, "spec")) != NULL &&
	    !json_is_object(v) && !json_is_null(v)) {
		snprintf(err, errlen, "spec: not an object");
		return -1;
	}
	return 0;
}

int
codec_string_at(json_t *obj, const char *key, const char *path,
    const char **s, size_t *n, char *err, size_t errlen)
{
	json_t *v;

	if ((v = json_object_get(obj, key)) == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		snprintf(err, errlen, "%s: not a string", path);
		return -1;
	}
	*s = json_string_value(v);
	*n = json_string_length(v);
	return 1;
}

/*
 * Copy the string obj.key (path names it in errors) into buf of size len.
 * Absent or null leaves buf untouched.
 */
int
codec_get_string(json_t *obj, const char *key, const char *path, char *buf,
    size_t len, char *err, size_t errlen)
{
	const char	*s;
	size_t		 n;
	int		 r;

	if ((r = codec_string_at(obj, key, path, &s, &n, err, errlen)) <= 0)
		return r;
	if (n >= len) {
		snprintf(err, errlen, "%s: %zu bytes long, at most %zu allowed",
		    path, n, len - 1);
		return -1;
	}
	memcpy(buf, s, n + 1);
	return 0;
}

/* An optional non-negative int32, as the Go types have it. */
static int
get_int32(json_t *obj, const char *key, const char *path, int32_t *out,
    char *err, size_t errlen)
{
	json_t *v;
	json_int_t i;

	if ((v = json_object_get(obj, key)) == NULL || json_is_null(v))
		return 0;
	if (!json_is_integer(v)) {
		snprintf(err, errlen, "%s: not an integer", path);
		return -1;
	}
	i = json_integer_value(v);
	if (i < 0) {
		snprintf(err, errlen, "%s: %" JSON_INTEGER_FORMAT
		    " is negative", path, i);
		return -1;
	}
	if (i > INT32_MAX) {
		snprintf(err, errlen, "%s: %" JSON_INTEGER_FORMAT
		    " does not fit in 32 bits", path, i);
		return -1;
	}
	*out = (int32_t)i;
	return 0;
}

json_t *
codec_load(const char *buf, size_t len, size_t max, char *err,
    size_t errlen)
{
	json_t *root;
	json_error_t jerr;

	if (max > 0 && len > max) {
		snprintf(err, errlen, "body of %zu bytes is larger than %zu",
		    len, max);
		return NULL;
	}
	if (memchr(buf, '\0', len) != NULL) {
		snprintf(err, errlen, "body contains a NUL byte");
		return NULL;
	}
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL)
		snprintf(err, errlen, "not JSON: %s at line %d column %d",
		    jerr.text, jerr.line, jerr.column);
	return root;
}

/* An optional RFC 3339 time; null reads as 0. */
int
codec_get_time(json_t *obj, const char *key, const char *path, int64_t *out,
    char *err, size_t errlen)
{
	json_t *v;

	if ((v = json_object_get(obj, key)) == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		snprintf(err, errlen, "%s: not a string", path);
		return -1;
	}
	if (apitime_parse(json_string_value(v), out) == -1) {
		snprintf(err, errlen, "%s: \"%.64s\" is not an RFC 3339 time",
		    path, json_string_value(v));
		return -1;
	}
	return 0;
}

int
lease_decode(const char *buf, size_t len, struct lease *out, char *err,
    size_t errlen)
{
	json_t *root, *meta, *spec, *ann, *v;
	struct lease l;
	int rc = -1;

	codec_json_init();
	if (errlen > 0)
		err[0] = '\0';
	if ((root = codec_load(buf, len, LEASE_BODY_MAX, err,
	    errlen)) == NULL)
		return -1;
	if (check_object(root, err, errlen) == -1)
		goto out;

	memset(&l, 0, sizeof(l));
	meta = json_object_get(root, "metadata");
	if (json_is_object(meta) && (codec_get_string(meta,
	    "resourceVersion", "metadata.resourceVersion", l.rv, sizeof(l.rv),
	    err, errlen) == -1 || codec_get_string(meta, "uid",
	    "metadata.uid", l.uid, sizeof(l.uid), err, errlen) == -1))
		goto out;
	if (json_is_object(meta) &&
	    json_is_object(json_object_get(meta, "annotations")) &&
	    codec_get_string(json_object_get(meta, "annotations"),
	    LEASE_HANDOVER, "metadata.annotations[" LEASE_HANDOVER "]",
	    l.handover, sizeof(l.handover), err, errlen) == -1)
		goto out;
	/*
	 * Our coordinated writes' mark: one that does not parse is nobody's
	 * (it only ever tells a write of ours from the controller's).
	 */
	if (json_is_object(meta) &&
	    json_is_object(ann = json_object_get(meta, "annotations")) &&
	    json_is_string(v = json_object_get(ann, LEASE_RENEWED)) &&
	    apitime_parse(json_string_value(v), &l.mark_us) == -1)
		l.mark_us = 0;
	spec = json_object_get(root, "spec");
	if (json_is_object(spec) &&
	    (codec_get_string(spec, "holderIdentity", "spec.holderIdentity",
	    l.holder, sizeof(l.holder), err, errlen) == -1 ||
	    get_int32(spec, "leaseDurationSeconds",
	    "spec.leaseDurationSeconds", &l.duration_s, err, errlen) == -1 ||
	    codec_get_time(spec, "acquireTime", "spec.acquireTime", &l.acquire_us,
	    err, errlen) == -1 ||
	    codec_get_time(spec, "renewTime", "spec.renewTime", &l.renew_us,
	    err, errlen) == -1 ||
	    get_int32(spec, "leaseTransitions", "spec.leaseTransitions",
	    &l.transitions, err, errlen) == -1 ||
	    codec_get_string(spec, "strategy", "spec.strategy", l.strategy,
	    sizeof(l.strategy), err, errlen) == -1 ||
	    codec_get_string(spec, "preferredHolder", "spec.preferredHolder",
	    l.preferred, sizeof(l.preferred), err, errlen) == -1))
		goto out;
	*out = l;
	rc = 0;
 out:
	json_decref(root);
	return rc;
}

/*
 * A JSON string.  Invalid UTF-8 is replaced by U+FFFD, as Go's
 * encoding/json does, so that encoding never fails.
 */
json_t *
codec_jstring(const char *s)
{
	const unsigned char *p;
	json_t *j;
	char *fixed, *q;
	size_t n;

	if ((j = json_string(s)) != NULL)
		return j;
	fixed = q = xmalloc(strlen(s) * 3 + 1);
	for (p = (const unsigned char *)s; *p != '\0'; p += n) {
		if ((n = text_utf8_len(p)) == 0) {
			memcpy(q, "\xef\xbf\xbd", 3);
			q += 3;
			n = 1;
		} else {
			memcpy(q, p, n);
			q += n;
		}
	}
	*q = '\0';
	j = json_string(fixed);
	free(fixed);
	return j;
}

/* A MicroTime, or null for 0 (ref 4.3). */
json_t *
codec_jtime(int64_t us)
{
	char buf[APITIME_MICRO_LEN];

	if (us == 0)
		return json_null();
	apitime_format_micro(us, buf);
	return json_string(buf);
}

/* The spec client-go's LeaderElectionRecordToLeaseSpec writes (ref 3.2). */
static json_t *
encode_spec(const struct lease *rec)
{
	json_t *spec;

	spec = json_object();
	json_object_set_new(spec, "holderIdentity", codec_jstring(rec->holder));
	json_object_set_new(spec, "leaseDurationSeconds",
	    json_integer(rec->duration_s));
	json_object_set_new(spec, "acquireTime", codec_jtime(rec->acquire_us));
	json_object_set_new(spec, "renewTime", codec_jtime(rec->renew_us));
	json_object_set_new(spec, "leaseTransitions",
	    json_integer(rec->transitions));
	if (rec->strategy[0] != '\0')
		json_object_set_new(spec, "strategy",
		    codec_jstring(rec->strategy));
	if (rec->preferred[0] != '\0')
		json_object_set_new(spec, "preferredHolder",
		    codec_jstring(rec->preferred));
	return spec;
}

/* Serialise and free root. */
char *
codec_json_dump(json_t *root)
{
	char *s;

	s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (s == NULL)
		abort();	/* Cannot happen: allocation is xmalloc. */
	return s;
}

/*
 * A new Lease object ns/name: apiVersion, kind and metadata (name,
 * namespace), the metadata object also in *meta, for more; no spec.
 */
static json_t *
lease_skeleton(const char *ns, const char *name, json_t **meta)
{
	json_t	*root;

	codec_json_init();
	root = json_object();
	json_object_set_new(root, "apiVersion", json_string(LEASE_API_VERSION));
	json_object_set_new(root, "kind", json_string("Lease"));
	*meta = json_object();
	json_object_set_new(*meta, "name", codec_jstring(name));
	json_object_set_new(*meta, "namespace", codec_jstring(ns));
	return root;
}

char *
lease_encode_create(const char *ns, const char *name,
    const struct lease *rec)
{
	json_t *root, *meta;

	root = lease_skeleton(ns, name, &meta);
	json_object_set_new(root, "metadata", meta);
	json_object_set_new(root, "spec", encode_spec(rec));
	return codec_json_dump(root);
}

char *
lease_encode_create_labeled(const char *ns, const char *name,
    const struct lease *rec, const char *const *labels)
{
	json_t *root, *meta, *lab;

	root = lease_skeleton(ns, name, &meta);
	if (labels != NULL && labels[0] != NULL) {
		lab = json_object();
		for (; labels[0] != NULL && labels[1] != NULL; labels += 2)
			json_object_set_new(lab, labels[0],
			    codec_jstring(labels[1]));
		json_object_set_new(meta, "labels", lab);
	}
	json_object_set_new(root, "metadata", meta);
	json_object_set_new(root, "spec", encode_spec(rec));
	return codec_json_dump(root);
}

char *
lease_encode_create_owned(const char *ns, const char *name,
    const struct lease *rec, const struct lease_owner *owner)
{
	json_t *root, *meta, *refs, *ref, *spec;

	root = lease_skeleton(ns, name, &meta);
	ref = json_object();
	json_object_set_new(ref, "apiVersion",
	    codec_jstring(owner->api_version));
	json_object_set_new(ref, "kind", codec_jstring(owner->kind));
	json_object_set_new(ref, "name", codec_jstring(owner->name));
	json_object_set_new(ref, "uid", codec_jstring(owner->uid));
	refs = json_array();
	json_array_append_new(refs, ref);
	json_object_set_new(meta, "ownerReferences", refs);
	json_object_set_new(root, "metadata", meta);
	spec = json_object();
	json_object_set_new(spec, "holderIdentity", codec_jstring(rec->holder));
	json_object_set_new(spec, "acquireTime", codec_jtime(rec->acquire_us));
	json_object_set_new(root, "spec", spec);
	return codec_json_dump(root);
}

/* Set metadata.annotations[key] to who, or remove it ("" or NULL). */
static void
set_annotation(json_t *root, const char *key, const char *who)
{
	json_t	*meta, *ann;

	meta = json_object_get(root, "metadata");
	if (!json_is_object(meta)) {
		if (who[0] == '\0')
			return;
		meta = json_object();
		json_object_set_new(root, "metadata", meta);
	}
	ann = json_object_get(meta, "annotations");
	if (who[0] == '\0') {
		if (json_is_object(ann)) {
			json_object_del(ann, key);
			if (json_object_size(ann) == 0)
				json_object_del(meta, "annotations");
		}
		return;
	}
	if (!json_is_object(ann)) {
		ann = json_object();
		json_object_set_new(meta, "annotations", ann);
	}
	json_object_set_new(ann, key, codec_jstring(who));
}

char *
lease_encode_update(const char *base, size_t baselen,
    const struct lease *rec, char *err, size_t errlen)
{
	json_t *root;
	json_error_t jerr;
	char mark[APITIME_MICRO_LEN];

	codec_json_init();
	if (errlen > 0)
		err[0] = '\0';
	if (baselen > LEASE_BODY_MAX) {
		snprintf(err, errlen, "base of %zu bytes is larger than %d",
		    baselen, LEASE_BODY_MAX);
		return NULL;
	}
	if (memchr(base, '\0', baselen) != NULL) {
		snprintf(err, errlen, "base contains a NUL byte");
		return NULL;
	}
	if ((root = json_loadb(base, baselen, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL) {
		snprintf(err, errlen, "base is not JSON: %s at line %d "
		    "column %d", jerr.text, jerr.line, jerr.column);
		return NULL;
	}
	if (check_object(root, err, errlen) == -1) {
		json_decref(root);
		return NULL;
	}
	/* Replacing keeps the key's place, so only spec changes. */
	json_object_set_new(root, "spec", encode_spec(rec));
	set_annotation(root, LEASE_HANDOVER, rec->handover);
	mark[0] = '\0';
	if (rec->mark_us != 0)
		apitime_format_micro(rec->mark_us, mark);
	set_annotation(root, LEASE_RENEWED, mark);
	return codec_json_dump(root);
}

/* A time as client-go's record JSON sees it: null, or whole seconds. */
static int
same_time(int64_t a_us, int64_t b_us)
{
	if ((a_us == 0) != (b_us == 0))
		return 0;
	return apitime_seconds(a_us) == apitime_seconds(b_us);
}

int
lease_same_record(const struct lease *a, const struct lease *b)
{
	return strcmp(a->holder, b->holder) == 0 &&
	    a->duration_s == b->duration_s &&
	    same_time(a->acquire_us, b->acquire_us) &&
	    same_time(a->renew_us, b->renew_us) &&
	    a->transitions == b->transitions &&
	    strcmp(a->strategy, b->strategy) == 0 &&
	    strcmp(a->preferred, b->preferred) == 0;
}
