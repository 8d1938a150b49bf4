/*
 * lease.c -- the coordination.k8s.io/v1 Lease record and its JSON codec.
 *
 * With legacy.c, the only file that includes jansson.h.  Decoding
 * follows what the Go API types accept (ref/clientgo-leaderelection.md
 * 4.2, 4.3): every spec field is optional and null reads as absent.
 * Encoding follows client-go's LeaderElectionRecordToLeaseSpec (ref
 * 3.2).  The calendar arithmetic is done here, so no result depends on
 * TZ or on timegm.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lease.h"
#include "text.h"
#include "xmalloc.h"

#define LEASE_API_VERSION	"coordination.k8s.io/v1"
#define US_PER_S		INT64_C(1000000)
#define S_PER_DAY		INT64_C(86400)

/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z in Unix seconds. */
#define SECS_MIN		INT64_C(-62167219200)
#define SECS_MAX		INT64_C(253402300799)

static int	 floor_div(int64_t, int64_t, int64_t *);
static int64_t	 days_from_civil(int64_t, unsigned, unsigned);
static void	 civil_from_days(int64_t, int64_t *, unsigned *, unsigned *);
static void	 put_digits(char *, unsigned, int);
static int	 digits(const char *, int, int *);
static int	 check_object(json_t *, char *, size_t);
static int	 get_string(json_t *, const char *, const char *, char *,
		    size_t, char *, size_t);
static int	 get_int32(json_t *, const char *, const char *, int32_t *,
		    char *, size_t);
static int	 get_time(json_t *, const char *, const char *, int64_t *,
		    char *, size_t);
static json_t	*jstring(const char *);
static json_t	*jtime(int64_t);
static json_t	*encode_spec(const struct lease *);
static int	 same_time(int64_t, int64_t);
static void	 copy_field(json_t *, const char *, char *, size_t);

/*
 * jansson allocates through xmalloc, so out of memory is fatal in one
 * place and json_dumps of a tree we built cannot fail.
 */
void
lease_json_init(void)
{
	static int done;

	if (!done) {
		json_set_alloc_funcs(xmalloc, free);
		done = 1;
	}
}

/* Floor division; returns the remainder in [0, b). */
static int
floor_div(int64_t a, int64_t b, int64_t *q)
{
	int64_t r;

	*q = a / b;
	r = a % b;
	if (r < 0) {
		r += b;
		(*q)--;
	}
	return (int)r;
}

/*
 * Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil).
 */
static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era, yoe, doy, doe;

	if (m <= 2)
		y--;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The inverse of days_from_civil. */
static void
civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

void
lease_fencing_token(const struct lease *rec, char *buf, size_t len)
{
	if (len == 0)
		return;
	if (rec->holder[0] == '\0' || rec->transitions < 0) {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, len, "%010" PRId32 "-%s", rec->transitions, rec->uid);
}

void
lease_format_microtime(int64_t us, char *buf)
{
	int64_t secs, days, y;
	unsigned m, d;
	int frac, sod;

	/*
	 * Go would format years outside 0000..9999 with more or fewer
	 * digits; such times do not fit the buffer or RFC 3339, so they are
	 * clamped to the representable range.
	 */
	frac = floor_div(us, US_PER_S, &secs);
	if (secs < SECS_MIN) {
		secs = SECS_MIN;
		frac = 0;
	} else if (secs > SECS_MAX) {
		secs = SECS_MAX;
		frac = 999999;
	}
	sod = floor_div(secs, S_PER_DAY, &days);
	civil_from_days(days, &y, &m, &d);
	put_digits(buf, (unsigned)y, 4);
	buf[4] = '-';
	put_digits(buf + 5, m, 2);
	buf[7] = '-';
	put_digits(buf + 8, d, 2);
	buf[10] = 'T';
	put_digits(buf + 11, (unsigned)sod / 3600, 2);
	buf[13] = ':';
	put_digits(buf + 14, (unsigned)sod / 60 % 60, 2);
	buf[16] = ':';
	put_digits(buf + 17, (unsigned)sod % 60, 2);
	buf[19] = '.';
	put_digits(buf + 20, (unsigned)frac, 6);
	memcpy(buf + 26, "Z", 2);
}

/* Write v as exactly n decimal digits, zero-padded. */
static void
put_digits(char *buf, unsigned v, int n)
{
	while (n-- > 0) {
		buf[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

/* Read exactly n decimal digits at s into *v. */
static int
digits(const char *s, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

int
lease_parse_time(const char *s, int64_t *us)
{
	static const unsigned char mdays[] =
	    { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, sec, oh, om, n, leap;
	int64_t frac = 0, scale = 100000, secs, off = 0;

	/* YYYY-MM-DDTHH:MM:SS, with the separators Go's RFC3339 demands. */
	if (digits(s, 4, &y) == -1 || s[4] != '-' ||
	    digits(s + 5, 2, &mo) == -1 || s[7] != '-' ||
	    digits(s + 8, 2, &d) == -1 || s[10] != 'T' ||
	    digits(s + 11, 2, &h) == -1 || s[13] != ':' ||
	    digits(s + 14, 2, &mi) == -1 || s[16] != ':' ||
	    digits(s + 17, 2, &sec) == -1)
		return -1;
	s += 19;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    h > 23 || mi > 59 || sec > 59)
		return -1;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo == 2 && d == 29 && !leap)
		return -1;

	/* One to nine fractional digits; beyond µs they are truncated. */
	if (*s == '.') {
		s++;
		for (n = 0; s[n] >= '0' && s[n] <= '9'; n++) {
			if (n >= 9)
				return -1;
			frac += (s[n] - '0') * scale;
			scale /= 10;
		}
		if (n == 0)
			return -1;
		s += n;
	}

	if (*s == 'Z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		if (digits(s + 1, 2, &oh) == -1 || s[3] != ':' ||
		    digits(s + 4, 2, &om) == -1 || oh > 23 || om > 59)
			return -1;
		off = (int64_t)oh * 3600 + om * 60;
		if (*s == '-')
			off = -off;
		s += 6;
	} else
		return -1;
	if (*s != '\0')
		return -1;

	secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * S_PER_DAY +
	    h * 3600 + mi * 60 + sec - off;
	/*
	 * An offset can carry a time out of 0000..9999 UTC, which no
	 * MicroTime can write back (Go refuses to marshal it too).
	 */
	if (secs < SECS_MIN || secs > SECS_MAX)
		return -1;
	*us = secs * US_PER_S + frac;
	return 0;
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

/*
 * Copy the string obj.key (path names it in errors) into buf of size len.
 * Absent or null leaves buf untouched.
 */
static int
get_string(json_t *obj, const char *key, const char *path, char *buf,
    size_t len, char *err, size_t errlen)
{
	json_t *v;
	size_t n;

	if ((v = json_object_get(obj, key)) == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		snprintf(err, errlen, "%s: not a string", path);
		return -1;
	}
	n = json_string_length(v);
	if (n >= len) {
		snprintf(err, errlen, "%s: %zu bytes long, at most %zu allowed",
		    path, n, len - 1);
		return -1;
	}
	memcpy(buf, json_string_value(v), n + 1);
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

/* An optional RFC 3339 time; null reads as 0. */
static int
get_time(json_t *obj, const char *key, const char *path, int64_t *out,
    char *err, size_t errlen)
{
	json_t *v;

	if ((v = json_object_get(obj, key)) == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		snprintf(err, errlen, "%s: not a string", path);
		return -1;
	}
	if (lease_parse_time(json_string_value(v), out) == -1) {
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
	json_t *root, *meta, *spec;
	json_error_t jerr;
	struct lease l;
	int rc = -1;

	lease_json_init();
	if (errlen > 0)
		err[0] = '\0';
	if (len > LEASE_BODY_MAX) {
		snprintf(err, errlen, "body of %zu bytes is larger than %d",
		    len, LEASE_BODY_MAX);
		return -1;
	}
	if (memchr(buf, '\0', len) != NULL) {
		snprintf(err, errlen, "body contains a NUL byte");
		return -1;
	}
	if ((root = json_loadb(buf, len, JSON_REJECT_DUPLICATES,
	    &jerr)) == NULL) {
		snprintf(err, errlen, "not JSON: %s at line %d column %d",
		    jerr.text, jerr.line, jerr.column);
		return -1;
	}
	if (check_object(root, err, errlen) == -1)
		goto out;

	memset(&l, 0, sizeof(l));
	meta = json_object_get(root, "metadata");
	if (json_is_object(meta) && (get_string(meta, "resourceVersion",
	    "metadata.resourceVersion", l.rv, sizeof(l.rv), err,
	    errlen) == -1 || get_string(meta, "uid", "metadata.uid", l.uid,
	    sizeof(l.uid), err, errlen) == -1))
		goto out;
	spec = json_object_get(root, "spec");
	if (json_is_object(spec) &&
	    (get_string(spec, "holderIdentity", "spec.holderIdentity",
	    l.holder, sizeof(l.holder), err, errlen) == -1 ||
	    get_int32(spec, "leaseDurationSeconds",
	    "spec.leaseDurationSeconds", &l.duration_s, err, errlen) == -1 ||
	    get_time(spec, "acquireTime", "spec.acquireTime", &l.acquire_us,
	    err, errlen) == -1 ||
	    get_time(spec, "renewTime", "spec.renewTime", &l.renew_us,
	    err, errlen) == -1 ||
	    get_int32(spec, "leaseTransitions", "spec.leaseTransitions",
	    &l.transitions, err, errlen) == -1 ||
	    get_string(spec, "strategy", "spec.strategy", l.strategy,
	    sizeof(l.strategy), err, errlen) == -1 ||
	    get_string(spec, "preferredHolder", "spec.preferredHolder",
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
static json_t *
jstring(const char *s)
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
static json_t *
jtime(int64_t us)
{
	char buf[LEASE_MICROTIME_LEN];

	if (us == 0)
		return json_null();
	lease_format_microtime(us, buf);
	return json_string(buf);
}

/* The spec client-go's LeaderElectionRecordToLeaseSpec writes (ref 3.2). */
static json_t *
encode_spec(const struct lease *rec)
{
	json_t *spec;

	spec = json_object();
	json_object_set_new(spec, "holderIdentity", jstring(rec->holder));
	json_object_set_new(spec, "leaseDurationSeconds",
	    json_integer(rec->duration_s));
	json_object_set_new(spec, "acquireTime", jtime(rec->acquire_us));
	json_object_set_new(spec, "renewTime", jtime(rec->renew_us));
	json_object_set_new(spec, "leaseTransitions",
	    json_integer(rec->transitions));
	if (rec->strategy[0] != '\0')
		json_object_set_new(spec, "strategy", jstring(rec->strategy));
	if (rec->preferred[0] != '\0')
		json_object_set_new(spec, "preferredHolder",
		    jstring(rec->preferred));
	return spec;
}

/* Serialise and free root. */
char *
lease_json_dump(json_t *root)
{
	char *s;

	s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (s == NULL)
		abort();	/* Cannot happen: allocation is xmalloc. */
	return s;
}

char *
lease_encode_create(const char *ns, const char *name,
    const struct lease *rec)
{
	json_t *root, *meta;

	lease_json_init();
	root = json_object();
	json_object_set_new(root, "apiVersion", json_string(LEASE_API_VERSION));
	json_object_set_new(root, "kind", json_string("Lease"));
	meta = json_object();
	json_object_set_new(meta, "name", jstring(name));
	json_object_set_new(meta, "namespace", jstring(ns));
	json_object_set_new(root, "metadata", meta);
	json_object_set_new(root, "spec", encode_spec(rec));
	return lease_json_dump(root);
}

char *
lease_encode_event(const char *ns, const char *name, const struct lease *rec,
    const char *identity, const char *message, int64_t now_us)
{
	return lease_encode_event_on(LEASE_API_VERSION, "Lease", ns, name,
	    rec, identity, message, now_us);
}

char *
lease_encode_event_on(const char *api_version, const char *kind,
    const char *ns, const char *name, const struct lease *rec,
    const char *identity, const char *message, int64_t now_us)
{
	json_t	*root, *meta, *obj, *src;
	char	 ts[LEASE_MICROTIME_LEN], *evname;

	lease_json_init();
	/* Events carry metav1.Time: RFC 3339 at second precision. */
	lease_format_microtime(now_us - now_us % US_PER_S, ts);
	memcpy(ts + 19, "Z", 2);
	xasprintf(&evname, "%s.%llx", name,
	    (unsigned long long)now_us * 1000ULL);
	root = json_object();
	json_object_set_new(root, "apiVersion", json_string("v1"));
	json_object_set_new(root, "kind", json_string("Event"));
	meta = json_object();
	json_object_set_new(meta, "name", jstring(evname));
	json_object_set_new(meta, "namespace", jstring(ns));
	json_object_set_new(root, "metadata", meta);
	obj = json_object();
	json_object_set_new(obj, "apiVersion", json_string(api_version));
	json_object_set_new(obj, "kind", json_string(kind));
	json_object_set_new(obj, "name", jstring(name));
	json_object_set_new(obj, "namespace", jstring(ns));
	if (rec->uid[0] != '\0')
		json_object_set_new(obj, "uid", jstring(rec->uid));
	if (rec->rv[0] != '\0')
		json_object_set_new(obj, "resourceVersion", jstring(rec->rv));
	json_object_set_new(root, "involvedObject", obj);
	json_object_set_new(root, "reason", json_string("LeaderElection"));
	json_object_set_new(root, "message", jstring(message));
	json_object_set_new(root, "type", json_string("Normal"));
	json_object_set_new(root, "firstTimestamp", json_string(ts));
	json_object_set_new(root, "lastTimestamp", json_string(ts));
	json_object_set_new(root, "count", json_integer(1));
	src = json_object();
	json_object_set_new(src, "component", json_string("leaderd"));
	json_object_set_new(src, "host", jstring(identity));
	json_object_set_new(root, "source", src);
	json_object_set_new(root, "reportingComponent",
	    json_string("leaderd"));
	json_object_set_new(root, "reportingInstance", jstring(identity));
	free(evname);
	return lease_json_dump(root);
}

char *
lease_encode_update(const char *base, size_t baselen,
    const struct lease *rec, char *err, size_t errlen)
{
	json_t *root;
	json_error_t jerr;

	lease_json_init();
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
	return lease_json_dump(root);
}

/* A time as client-go's record JSON sees it: null, or whole seconds. */
static int
same_time(int64_t a_us, int64_t b_us)
{
	int64_t a, b;

	if ((a_us == 0) != (b_us == 0))
		return 0;
	floor_div(a_us, US_PER_S, &a);
	floor_div(b_us, US_PER_S, &b);
	return a == b;
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
lease_status(const char *buf, size_t len, char *reason, size_t reasonlen,
    char *message, size_t messagelen)
{
	json_t *root, *kind;
	json_error_t jerr;
	int rc = -1;

	lease_json_init();
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
lease_decode_event(const char *buf, size_t len, struct lease_event *ev,
    char **object, char *err, size_t errlen)
{
	static const char *const types[] = { "ADDED", "MODIFIED", "DELETED",
	    "BOOKMARK", "ERROR" };
	json_t *root, *type, *obj, *meta, *code;
	json_error_t jerr;
	char *s = NULL;
	size_t i;
	int rc = -1;

	lease_json_init();
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
	type = json_object_get(root, "type");
	obj = json_object_get(root, "object");
	if (!json_is_string(type) || !json_is_object(obj)) {
		snprintf(err, errlen, "watch event without type or object");
		goto out;
	}
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(json_string_value(type), types[i]) == 0)
			break;
	if (i == sizeof(types) / sizeof(types[0])) {
		snprintf(err, errlen, "unknown watch event type");
		goto out;
	}
	ev->type = (enum lease_event_type)i;
	switch (ev->type) {
	case LEASE_EV_ERROR:
		code = json_object_get(obj, "code");
		ev->code = json_is_integer(code) ?
		    (long)json_integer_value(code) : 0;
		copy_field(obj, "reason", ev->reason, sizeof(ev->reason));
		copy_field(obj, "message", ev->message, sizeof(ev->message));
		rc = 0;
		break;
	case LEASE_EV_BOOKMARK:
		meta = json_object_get(obj, "metadata");
		if (!json_is_object(meta) || get_string(meta,
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
		if (ev->type != LEASE_EV_DELETED) {
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
