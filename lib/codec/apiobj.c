/*
 * apiobj.c -- Status bodies, core/v1 Events and watch events: the API
 * objects around the lock that are not the lock itself.
 *
 * An Event is written as client-go's event recorder writes the one for
 * its lock (ref/clientgo-leaderelection.md 3.2); a watch event's object
 * is decoded by lease.c.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "codec/apiobj.h"
#include "codec/apitime.h"
#include "codec/codec_int.h"

#define US_PER_S		INT64_C(1000000)

static void	 copy_field(json_t *, const char *, char *, size_t);

char *
apiobj_encode_event(const char *ns, const char *name, const struct lease *rec,
    const char *identity, const char *message, int64_t now_us)
{
	return apiobj_encode_event_on(LEASE_API_VERSION, "Lease", ns, name,
	    rec, identity, message, now_us);
}

static char	*encode_event(const char *, const char *, const char *,
		    const char *, const char *, const char *,
		    const struct lease *,
		    const char *, const char *, int64_t);

char *
apiobj_encode_event_on(const char *api_version, const char *kind,
    const char *ns, const char *name, const struct lease *rec,
    const char *identity, const char *message, int64_t now_us)
{
	return encode_event("Normal", "LeaderElection", api_version, kind,
	    ns, name, rec, identity, message, now_us);
}

char *
apiobj_encode_warning(const char *api_version, const char *kind,
    const char *ns, const char *name, const char *identity,
    const char *reason, const char *message, int64_t now_us)
{
	struct lease	 none;

	memset(&none, 0, sizeof(none));
	return encode_event("Warning", reason, api_version, kind, ns, name,
	    &none, identity, message, now_us);
}

static char *
encode_event(const char *type, const char *reason, const char *api_version,
    const char *kind, const char *ns, const char *name,
    const struct lease *rec, const char *identity, const char *message,
    int64_t now_us)
{
	json_t	*root, *meta, *obj, *src;
	char	 ts[APITIME_MICRO_LEN], *evname;

	codec_json_init();
	/* Events carry metav1.Time: RFC 3339 at second precision. */
	apitime_format_micro(now_us - now_us % US_PER_S, ts);
	memcpy(ts + 19, "Z", 2);
	xasprintf(&evname, "%s.%llx", name,
	    (unsigned long long)now_us * 1000ULL);
	root = json_object();
	json_object_set_new(root, "apiVersion", json_string("v1"));
	json_object_set_new(root, "kind", json_string("Event"));
	meta = json_object();
	json_object_set_new(meta, "name", codec_jstring(evname));
	json_object_set_new(meta, "namespace", codec_jstring(ns));
	json_object_set_new(root, "metadata", meta);
	obj = json_object();
	json_object_set_new(obj, "apiVersion", json_string(api_version));
	json_object_set_new(obj, "kind", json_string(kind));
	json_object_set_new(obj, "name", codec_jstring(name));
	json_object_set_new(obj, "namespace", codec_jstring(ns));
	if (rec->uid[0] != '\0')
		json_object_set_new(obj, "uid", codec_jstring(rec->uid));
	if (rec->rv[0] != '\0')
		json_object_set_new(obj, "resourceVersion",
		    codec_jstring(rec->rv));
	json_object_set_new(root, "involvedObject", obj);
	json_object_set_new(root, "reason", codec_jstring(reason));
	json_object_set_new(root, "message", codec_jstring(message));
	json_object_set_new(root, "type", json_string(type));
	json_object_set_new(root, "firstTimestamp", json_string(ts));
	json_object_set_new(root, "lastTimestamp", json_string(ts));
	json_object_set_new(root, "count", json_integer(1));
	src = json_object();
	json_object_set_new(src, "component", json_string("leaderd"));
	json_object_set_new(src, "host", codec_jstring(identity));
	json_object_set_new(root, "source", src);
	json_object_set_new(root, "reportingComponent",
	    json_string("leaderd"));
	json_object_set_new(root, "reportingInstance",
	    codec_jstring(identity));
	free(evname);
	return codec_json_dump(root);
}

/* Copy the string root.key, truncated to fit, into buf; "" otherwise. */
static void
copy_field(json_t *root, const char *key, char *buf, size_t len)
{
	json_t *v;

	if (buf == NULL || len == 0)
		return;
	v = json_object_get(root, key);
	snprintf(buf, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

int
apiobj_status(const char *buf, size_t len, char *reason, size_t reasonlen,
    char *message, size_t messagelen)
{
	json_t *root, *kind;
	json_error_t jerr;
	int rc = -1;

	codec_json_init();
	if (reason != NULL && reasonlen > 0)
		reason[0] = '\0';
	if (message != NULL && messagelen > 0)
		message[0] = '\0';
	if (len > LEASE_BODY_MAX || memchr(buf, '\0', len) != NULL)
		return -1;
	if ((root = json_loadb(buf, len, 0, &jerr)) == NULL)
		return -1;
	kind = json_object_get(root, "kind");
	if (json_is_object(root) && json_is_string(kind) &&
	    strcmp(json_string_value(kind), "Status") == 0) {
		copy_field(root, "reason", reason, reasonlen);
		copy_field(root, "message", message, messagelen);
		rc = 0;
	}
	json_decref(root);
	return rc;
}

int
codec_watch_head(json_t *root, enum apiobj_watch_type *type, json_t **obj,
    char *err, size_t errlen)
{
	static const char *const types[] = { "ADDED", "MODIFIED", "DELETED",
	    "BOOKMARK", "ERROR" };
	json_t	*t;
	size_t	 i;

	t = json_object_get(root, "type");
	*obj = json_object_get(root, "object");
	if (!json_is_string(t) || !json_is_object(*obj)) {
		snprintf(err, errlen, "watch event without type or object");
		return -1;
	}
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(json_string_value(t), types[i]) == 0) {
			*type = (enum apiobj_watch_type)i;
			return 0;
		}
	snprintf(err, errlen, "unknown watch event type");
	return -1;
}

int
apiobj_decode_watch_event(const char *buf, size_t len,
    struct apiobj_watch_event *ev, char **object, char *err, size_t errlen)
{
	json_t *root, *obj, *meta, *code;
	json_error_t jerr;
	char *s = NULL;
	int rc = -1;

	codec_json_init();
	memset(ev, 0, sizeof(*ev));
	*object = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if (len > LEASE_BODY_MAX || memchr(buf, '\0', len) != NULL) {
		snprintf(err, errlen, "watch event too large or with a NUL byte");
		return -1;
	}
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL) {
		snprintf(err, errlen, "watch event is not JSON: %s", jerr.text);
		return -1;
	}
	if (codec_watch_head(root, &ev->type, &obj, err, errlen) == -1)
		goto out;
	switch (ev->type) {
	case APIOBJ_WATCH_ERROR:
		code = json_object_get(obj, "code");
		ev->code = json_is_integer(code) ?
		    (long)json_integer_value(code) : 0;
		copy_field(obj, "reason", ev->reason, sizeof(ev->reason));
		copy_field(obj, "message", ev->message, sizeof(ev->message));
		rc = 0;
		break;
	case APIOBJ_WATCH_BOOKMARK:
		meta = json_object_get(obj, "metadata");
		if (!json_is_object(meta) || codec_get_string(meta,
		    "resourceVersion", "metadata.resourceVersion", ev->rv,
		    sizeof(ev->rv), err, errlen) == -1 || ev->rv[0] == '\0') {
			if (err[0] == '\0')
				snprintf(err, errlen, "bookmark without "
				    "a resourceVersion");
			break;
		}
		rc = 0;
		break;
	default:
		s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (s == NULL)
			abort();	/* Cannot happen: allocation is xmalloc. */
		if (lease_decode(s, strlen(s), &ev->rec, err, errlen) == -1)
			break;
		memcpy(ev->rv, ev->rec.rv, sizeof(ev->rv));
		/* A watch of a collection tells its objects apart so. */
		meta = json_object_get(obj, "metadata");
		if (json_is_object(meta))
			copy_field(meta, "name", ev->name, sizeof(ev->name));
		if (ev->type != APIOBJ_WATCH_DELETED) {
			*object = s;
			s = NULL;
		}
		rc = 0;
		break;
	}
out:
	free(s);
	json_decref(root);
	return rc;
}

int
apiobj_uid(const char *buf, size_t len, const char *kind, char *uid,
    size_t uidlen, char *err, size_t errlen)
{
	json_t		*root, *k, *meta;
	json_error_t	 jerr;
	int		 rc = -1;

	codec_json_init();
	uid[0] = '\0';
	if (len > LEASE_BODY_MAX || memchr(buf, '\0', len) != NULL) {
		snprintf(err, errlen, "the %s is too large or has a NUL byte",
		    kind);
		return -1;
	}
	if ((root = json_loadb(buf, len, 0, &jerr)) == NULL) {
		snprintf(err, errlen, "the %s is not JSON: %s", kind,
		    jerr.text);
		return -1;
	}
	k = json_object_get(root, "kind");
	meta = json_object_get(root, "metadata");
	if (!json_is_object(root) || (k != NULL && (!json_is_string(k) ||
	    strcmp(json_string_value(k), kind) != 0)))
		snprintf(err, errlen, "the answer is not a %s", kind);
	else if (!json_is_object(meta))
		snprintf(err, errlen, "the %s has no metadata", kind);
	else if (codec_get_string(meta, "uid", "metadata.uid", uid, uidlen,
	    err, errlen) == -1)
		;
	else if (uid[0] == '\0')
		snprintf(err, errlen, "the %s has no metadata.uid", kind);
	else
		rc = 0;
	json_decref(root);
	if (rc == -1)
		uid[0] = '\0';
	return rc;
}

int
apiobj_rv_newer(const char *rv, const char *than)
{
	size_t	 a = strlen(rv), b = strlen(than);

	if (a == 0)
		return 0;
	if (b == 0 || strspn(rv, "0123456789") != a ||
	    strspn(than, "0123456789") != b)
		return strcmp(rv, than) != 0;
	while (a > 1 && *rv == '0') {
		rv++;
		a--;
	}
	while (b > 1 && *than == '0') {
		than++;
		b--;
	}
	return a != b ? a > b : strcmp(rv, than) > 0;
}
