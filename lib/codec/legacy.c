/*
 * legacy.c -- the Endpoints and ConfigMap locks' annotation record and
 * their object bodies (ref/clientgo-leaderelection.md 3.1, 3.3).
 *
 * The legacy objects' codec lives beside lease.c in codec/, the only
 * folder that includes jansson.h (through codec_int.h), in a module of
 * its own with the same rules (pure, no json_t outside codec/, errors
 * in the caller's buffer).  The annotation value
 * is written by hand rather than by jansson, because it must match Go's
 * encoding/json byte for byte (its HTML-safe escapes and its order).
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/text.h"
#include "codec/apitime.h"
#include "codec/codec_int.h"
#include "codec/lease.h"
#include "codec/legacy.h"

#define US_PER_S	INT64_C(1000000)

static void	 go_quote(struct buf *, const char *);
static void	 go_time(struct buf *, int64_t);
static int	 field_index(const char *);
static int	 get_field(int, json_t *, const char *, struct lease *,
		    char *, size_t);
static json_t	*load_object(const char *, const char *, size_t, char *,
		    size_t);
static int	 meta_string(json_t *, const char *, char *, size_t, char *,
		    size_t);

/* The record's fields, in Go's order; matched without regard to case. */
static const char *const fields[] = {
	"holderIdentity", "leaseDurationSeconds", "acquireTime",
	"renewTime", "leaderTransitions"
};

/*
 * A JSON string as Go's json.Marshal writes it (encodeState.string with
 * HTML escaping, Go 1.17 as client-go v0.23 was built with): '"' and
 * '\\' escaped, \n \r \t, other control bytes and < > & as \u00xx with
 * lowercase hex, U+2028 and U+2029 escaped, invalid UTF-8 as \ufffd.
 */
static void
go_quote(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	buf_add(b, "\"", 1);
	while (*p != '\0') {
		if (*p < 0x80) {
			if (*p >= 0x20 && *p != '"' && *p != '\\' &&
			    *p != '<' && *p != '>' && *p != '&')
				buf_add(b, (const char *)p, 1);
			else if (*p == '"' || *p == '\\')
				buf_printf(b, "\\%c", *p);
			else if (*p == '\n')
				buf_add(b, "\\n", 2);
			else if (*p == '\r')
				buf_add(b, "\\r", 2);
			else if (*p == '\t')
				buf_add(b, "\\t", 2);
			else
				buf_printf(b, "\\u00%c%c", hex[*p >> 4],
				    hex[*p & 0xf]);
			p++;
			continue;
		}
		if ((n = text_utf8_len(p)) == 0) {
			buf_add(b, "\\ufffd", 6);
			p++;
			continue;
		}
		if (n == 3 && p[0] == 0xe2 && p[1] == 0x80 &&
		    (p[2] == 0xa8 || p[2] == 0xa9))
			buf_printf(b, "\\u202%c", p[2] == 0xa8 ? '8' : '9');
		else
			buf_add(b, (const char *)p, n);
		p += n;
	}
	buf_add(b, "\"", 1);
}

/* A metav1.Time: RFC 3339 at second precision in UTC, null when zero. */
static void
go_time(struct buf *b, int64_t us)
{
	char	 t[APITIME_MICRO_LEN];
	int64_t	 s;

	if (us == 0) {
		buf_add(b, "null", 4);
		return;
	}
	/* Go's Format truncates: floor to the second. */
	s = us / US_PER_S - (us % US_PER_S < 0 ? 1 : 0);
	apitime_format_micro(s * US_PER_S, t);
	buf_printf(b, "\"%.19sZ\"", t);
}

int
legacy_record_live(const struct lease *rec, int64_t now_us, int64_t grace_us)
{
	if (rec->holder[0] == '\0' ||
	    strcmp(rec->holder, LEGACY_UNKNOWN_LEADER) == 0)
		return 0;
	return rec->renew_us + (int64_t)rec->duration_s * 1000000 +
	    grace_us >= now_us;
}

char *
legacy_record_encode(const struct lease *rec)
{
	struct buf	 b;
	size_t		 len;

	memset(&b, 0, sizeof(b));
	buf_add(&b, "{\"holderIdentity\":", 18);
	go_quote(&b, rec->holder);
	buf_printf(&b, ",\"leaseDurationSeconds\":%" PRId32
	    ",\"acquireTime\":", rec->duration_s);
	go_time(&b, rec->acquire_us);
	buf_add(&b, ",\"renewTime\":", 13);
	go_time(&b, rec->renew_us);
	buf_printf(&b, ",\"leaderTransitions\":%" PRId32 "}",
	    rec->transitions);
	return buf_steal(&b, &len);
}

/* Which record field a key names (Go's case-insensitive match), or -1. */
static int
field_index(const char *key)
{
	size_t	 i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcasecmp(key, fields[i]) == 0)
			return (int)i;
	return -1;
}

/* Set field i of rec from v; null leaves it as it is, as Go does. */
static int
get_field(int i, json_t *v, const char *key, struct lease *rec, char *err,
    size_t errlen)
{
	json_int_t	 n;
	int64_t		 us;
	size_t		 len;

	if (json_is_null(v))
		return 0;
	switch (i) {
	case 0:
		if (!json_is_string(v)) {
			snprintf(err, errlen, "%s: not a string", key);
			return -1;
		}
		len = json_string_length(v);
		if (len >= sizeof(rec->holder)) {
			snprintf(err, errlen, "%s: %zu bytes long, at most "
			    "%zu allowed", key, len, sizeof(rec->holder) - 1);
			return -1;
		}
		memcpy(rec->holder, json_string_value(v), len + 1);
		return 0;
	case 1:
	case 4:
		if (!json_is_integer(v)) {
			snprintf(err, errlen, "%s: not an integer", key);
			return -1;
		}
		n = json_integer_value(v);
		if (n < 0 || n > INT32_MAX) {
			snprintf(err, errlen, "%s: %" JSON_INTEGER_FORMAT
			    " is out of range (0 to %d)", key, n, INT32_MAX);
			return -1;
		}
		if (i == 1)
			rec->duration_s = (int32_t)n;
		else
			rec->transitions = (int32_t)n;
		return 0;
	default:
		if (!json_is_string(v)) {
			snprintf(err, errlen, "%s: not a string", key);
			return -1;
		}
		if (apitime_parse(json_string_value(v), &us) == -1) {
			snprintf(err, errlen, "%s: \"%.64s\" is not an RFC "
			    "3339 time", key, json_string_value(v));
			return -1;
		}
		if (i == 2)
			rec->acquire_us = us;
		else
			rec->renew_us = us;
		return 0;
	}
}

int
legacy_record_decode(const char *s, size_t len, struct lease *rec,
    char *err, size_t errlen)
{
	json_t		*root, *v;
	json_error_t	 jerr;
	const char	*key;
	struct lease	 l;
	int		 i, rc = -1;

	codec_json_init();
	if (errlen > 0)
		err[0] = '\0';
	if (len > LEASE_BODY_MAX || memchr(s, '\0', len) != NULL) {
		snprintf(err, errlen, "record is too long or contains a NUL "
		    "byte");
		return -1;
	}
	/* Go keeps the last of duplicate keys; so does jansson by default. */
	if ((root = json_loadb(s, len, JSON_DECODE_ANY, &jerr)) == NULL) {
		snprintf(err, errlen, "not JSON: %s at line %d column %d",
		    jerr.text, jerr.line, jerr.column);
		return -1;
	}
	memset(&l, 0, sizeof(l));
	memcpy(l.rv, rec->rv, sizeof(l.rv));
	memcpy(l.uid, rec->uid, sizeof(l.uid));
	if (json_is_null(root)) {
		/* json.Unmarshal("null") leaves the record empty. */
		*rec = l;
		rc = 0;
		goto out;
	}
	if (!json_is_object(root)) {
		snprintf(err, errlen, "not a JSON object");
		goto out;
	}
	json_object_foreach(root, key, v) {
		if ((i = field_index(key)) == -1)
			continue;
		if (get_field(i, v, fields[i], &l, err, errlen) == -1)
			goto out;
	}
	*rec = l;
	rc = 0;
 out:
	json_decref(root);
	return rc;
}

/* Parse buf as a v1 object of kind (where kind and apiVersion are set). */
static json_t *
load_object(const char *kind, const char *buf, size_t len, char *err,
    size_t errlen)
{
	json_t		*root, *v;
	json_error_t	 jerr;

	if (len > LEASE_BODY_MAX) {
		snprintf(err, errlen, "body of %zu bytes is larger than %d",
		    len, LEASE_BODY_MAX);
		return NULL;
	}
	if (memchr(buf, '\0', len) != NULL) {
		snprintf(err, errlen, "body contains a NUL byte");
		return NULL;
	}
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL) {
		snprintf(err, errlen, "not JSON: %s at line %d column %d",
		    jerr.text, jerr.line, jerr.column);
		return NULL;
	}
	if (!json_is_object(root)) {
		snprintf(err, errlen, "not a JSON object");
		goto bad;
	}
	if ((v = json_object_get(root, "kind")) != NULL &&
	    (!json_is_string(v) || strcmp(json_string_value(v), kind) != 0)) {
		snprintf(err, errlen, "kind: %s%.64s%s is not \"%s\"",
		    json_is_string(v) ? "\"" : "", json_is_string(v) ?
		    json_string_value(v) : "not a string",
		    json_is_string(v) ? "\"" : "", kind);
		goto bad;
	}
	if ((v = json_object_get(root, "apiVersion")) != NULL &&
	    (!json_is_string(v) || strcmp(json_string_value(v), "v1") != 0)) {
		snprintf(err, errlen, "apiVersion: not \"v1\"");
		goto bad;
	}
	if ((v = json_object_get(root, "metadata")) != NULL &&
	    !json_is_object(v) && !json_is_null(v)) {
		snprintf(err, errlen, "metadata: not an object");
		goto bad;
	}
	return root;
bad:
	json_decref(root);
	return NULL;
}

/* Copy the string meta.key into buf; absent or null leaves "". */
static int
meta_string(json_t *meta, const char *key, char *buf, size_t len,
    char *err, size_t errlen)
{
	json_t	*v;

	if ((v = json_object_get(meta, key)) == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v) || json_string_length(v) >= len) {
		snprintf(err, errlen, "metadata.%s: not a string of at most "
		    "%zu bytes", key, len - 1);
		return -1;
	}
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

int
legacy_decode(const char *kind, const char *buf, size_t len,
    struct lease *out, char *err, size_t errlen)
{
	json_t		*root, *meta, *ann, *v;
	struct lease	 l;
	char		 why[256];
	int		 rc = -1;

	codec_json_init();
	if (errlen > 0)
		err[0] = '\0';
	if ((root = load_object(kind, buf, len, err, errlen)) == NULL)
		return -1;
	memset(&l, 0, sizeof(l));
	snprintf(l.holder, sizeof(l.holder), "%s", LEGACY_UNKNOWN_LEADER);
	meta = json_object_get(root, "metadata");
	if (!json_is_object(meta)) {
		*out = l;
		rc = 0;
		goto out;
	}
	l.holder[0] = '\0';
	if (meta_string(meta, "resourceVersion", l.rv, sizeof(l.rv), err,
	    errlen) == -1 || meta_string(meta, "uid", l.uid, sizeof(l.uid),
	    err, errlen) == -1)
		goto out;
	ann = json_object_get(meta, "annotations");
	if (ann != NULL && !json_is_object(ann) && !json_is_null(ann)) {
		snprintf(err, errlen, "metadata.annotations: not an object");
		goto out;
	}
	if ((v = json_object_get(ann, LEGACY_ANNOTATION)) == NULL)
		snprintf(l.holder, sizeof(l.holder), "%s",
		    LEGACY_UNKNOWN_LEADER);
	else {
		if (!json_is_string(v)) {
			snprintf(err, errlen, "annotation %s: not a string",
			    LEGACY_ANNOTATION);
			goto out;
		}
		if (legacy_record_decode(json_string_value(v),
		    json_string_length(v), &l, why, sizeof(why)) == -1) {
			snprintf(err, errlen, "annotation %s is not a leader "
			    "election record: %s", LEGACY_ANNOTATION, why);
			goto out;
		}
	}
	*out = l;
	rc = 0;
 out:
	json_decref(root);
	return rc;
}

char *
legacy_encode_create(const char *kind, const char *ns, const char *name,
    const struct lease *rec)
{
	json_t	*root, *meta, *ann;
	char	*val;

	codec_json_init();
	val = legacy_record_encode(rec);
	root = json_object();
	json_object_set_new(root, "apiVersion", json_string("v1"));
	json_object_set_new(root, "kind", json_string(kind));
	meta = json_object();
	/* Names are checked by the config: valid UTF-8, so never NULL. */
	json_object_set_new(meta, "name", json_string(name));
	json_object_set_new(meta, "namespace", json_string(ns));
	ann = json_object();
	json_object_set_new(ann, LEGACY_ANNOTATION, json_string(val));
	json_object_set_new(meta, "annotations", ann);
	json_object_set_new(root, "metadata", meta);
	free(val);
	return codec_json_dump(root);
}

char *
legacy_encode_update(const char *kind, const char *base, size_t baselen,
    const struct lease *rec, char *err, size_t errlen)
{
	json_t	*root, *meta, *ann;
	char	*val;

	codec_json_init();
	if (errlen > 0)
		err[0] = '\0';
	if ((root = load_object(kind, base, baselen, err, errlen)) == NULL)
		return NULL;
	if (!json_is_object(meta = json_object_get(root, "metadata"))) {
		meta = json_object();
		json_object_set_new(root, "metadata", meta);
	}
	if (!json_is_object(ann = json_object_get(meta, "annotations"))) {
		ann = json_object();
		json_object_set_new(meta, "annotations", ann);
	}
	val = legacy_record_encode(rec);
	json_object_set_new(ann, LEGACY_ANNOTATION, json_string(val));
	free(val);
	return codec_json_dump(root);
}
