/*
 * leasecand.c -- the LeaseCandidate (coordination.k8s.io/v1beta1) codec,
 * the scan of a list for handover: auto's pick, the liveness it asks of
 * a candidate and the OldestEmulationVersion order.  See leasecand.h.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "codec/apitime.h"
#include "codec/codec_int.h"
#include "codec/leasecand.h"

/*
 * An optional version at obj.key into buf: what comes before any build
 * metadata ('+'), cut to len - 1 bytes (and *cut set) when longer.
 */
static int
get_version(json_t *obj, const char *key, const char *path, char *buf,
    size_t len, int *cut, char *err, size_t errlen)
{
	const char	*s, *plus;
	size_t		 n;
	int		 r;

	if ((r = codec_string_at(obj, key, path, &s, &n, err, errlen)) <= 0)
		return r;
	if ((plus = memchr(s, '+', n)) != NULL)
		n = (size_t)(plus - s);
	if (n >= len) {
		n = len - 1;
		*cut = 1;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

/* One decoded item (root an object); kind checked when present. */
static int
decode_obj(json_t *root, struct lease_cand *out, char *err, size_t errlen)
{
	struct lease_cand	 c;
	json_t			*v, *meta, *spec;

	if (!json_is_object(root)) {
		snprintf(err, errlen, "not a JSON object");
		return -1;
	}
	if ((v = json_object_get(root, "kind")) != NULL &&
	    (!json_is_string(v) ||
	    strcmp(json_string_value(v), "LeaseCandidate") != 0)) {
		snprintf(err, errlen, "kind: not \"LeaseCandidate\"");
		return -1;
	}
	memset(&c, 0, sizeof(c));
	meta = json_object_get(root, "metadata");
	spec = json_object_get(root, "spec");
	if (json_is_object(meta) && (codec_get_string(meta, "name",
	    "metadata.name", c.name, sizeof(c.name), err, errlen) == -1 ||
	    codec_get_string(meta, "resourceVersion",
	    "metadata.resourceVersion", c.rv, sizeof(c.rv), err,
	    errlen) == -1 || codec_get_time(meta, "creationTimestamp",
	    "metadata.creationTimestamp", &c.created_us, err, errlen) == -1))
		return -1;
	if (json_is_object(spec) && (codec_get_string(spec, "leaseName",
	    "spec.leaseName", c.lease_name, sizeof(c.lease_name), err,
	    errlen) == -1 || get_version(spec, "binaryVersion",
	    "spec.binaryVersion", c.binary_version, sizeof(c.binary_version),
	    &c.cut, err, errlen) == -1 || get_version(spec,
	    "emulationVersion", "spec.emulationVersion", c.emulation_version,
	    sizeof(c.emulation_version), &c.cut, err, errlen) == -1 ||
	    codec_get_string(spec, "strategy", "spec.strategy", c.strategy,
	    sizeof(c.strategy), err, errlen) == -1 ||
	    codec_get_time(spec, "pingTime", "spec.pingTime", &c.ping_us, err,
	    errlen) == -1 || codec_get_time(spec, "renewTime", "spec.renewTime",
	    &c.renew_us, err, errlen) == -1))
		return -1;
	*out = c;
	return 0;
}

/* Whether item's spec.leaseName is lease_name; nothing else is read. */
static int
item_of(json_t *item, const char *lease_name)
{
	json_t	*spec, *v;

	if (!json_is_object(item) ||
	    !json_is_object(spec = json_object_get(item, "spec")) ||
	    !json_is_string(v = json_object_get(spec, "leaseName")))
		return 0;
	return json_string_length(v) == strlen(lease_name) &&
	    strcmp(json_string_value(v), lease_name) == 0;
}

static json_t *
load(const char *buf, size_t len, char *err, size_t errlen)
{
	codec_json_init();
	if (errlen > 0)
		err[0] = '\0';
	return codec_load(buf, len, LEASE_BODY_MAX, err, errlen);
}

int
lease_cand_decode(const char *buf, size_t len, struct lease_cand *out,
    char *err, size_t errlen)
{
	json_t	*root;
	int	 rc;

	if ((root = load(buf, len, err, errlen)) == NULL)
		return -1;
	rc = decode_obj(root, out, err, errlen);
	json_decref(root);
	return rc;
}

int
lease_cand_scan_list(const char *buf, size_t len, struct lease_cand_scan *s,
    char *err, size_t errlen)
{
	json_t			*root, *items, *it;
	struct lease_cand	 c;
	char			 why[sizeof(s->why)];
	size_t			 i;
	int			 rc = -1;

	s->found = 0;
	s->n = s->skipped = 0;
	s->why[0] = '\0';
	if ((root = load(buf, len, err, errlen)) == NULL)
		return -1;
	items = json_is_object(root) ? json_object_get(root, "items") : NULL;
	if (items != NULL && !json_is_array(items) && !json_is_null(items)) {
		snprintf(err, errlen, "items: not an array");
		goto out;
	}
	json_array_foreach(items, i, it) {
		if (!item_of(it, s->lease_name))
			continue;
		s->n++;
		if (decode_obj(it, &c, why, sizeof(why)) == -1) {
			if (s->skipped++ == 0)
				memcpy(s->why, why, sizeof(s->why));
			continue;
		}
		if ((s->skip != NULL && strcmp(c.name, s->skip) == 0) ||
		    !lease_cand_live(&c, s->now_us))
			continue;
		if (!s->found || (s->by_version ?
		    lease_cand_better(&c, &s->best) :
		    c.renew_us > s->best.renew_us)) {
			s->best = c;
			s->found = 1;
		}
	}
	rc = 0;
 out:
	json_decref(root);
	return rc;
}

int
lease_cand_live(const struct lease_cand *c, int64_t now_us)
{
	return c->renew_us != 0 && !c->cut &&
	    c->renew_us <= now_us + LEASECAND_SKEW_US &&
	    c->renew_us >= now_us - LEASECAND_LIVE_US &&
	    c->ping_us <= c->renew_us;
}

/* Set the spec fields the candidate owns, in client-go's order. */
static void
set_spec(json_t *spec, const struct lease_cand *c, int64_t renew_us,
    int with_lease)
{
	if (with_lease)
		json_object_set_new(spec, "leaseName",
		    codec_jstring(c->lease_name));
	json_object_set_new(spec, "binaryVersion",
	    codec_jstring(c->binary_version));
	if (c->emulation_version[0] != '\0')
		json_object_set_new(spec, "emulationVersion",
		    codec_jstring(c->emulation_version));
	json_object_set_new(spec, "strategy", codec_jstring(c->strategy));
	json_object_set_new(spec, "renewTime", codec_jtime(renew_us));
}

char *
lease_cand_encode_create(const char *ns, const struct lease_cand *c)
{
	json_t	*root, *meta, *spec;

	codec_json_init();
	root = json_object();
	json_object_set_new(root, "apiVersion",
	    json_string(LEASECAND_API_VERSION));
	json_object_set_new(root, "kind", json_string("LeaseCandidate"));
	meta = json_object();
	json_object_set_new(meta, "name", codec_jstring(c->name));
	json_object_set_new(meta, "namespace", codec_jstring(ns));
	if (c->rv[0] != '\0')
		json_object_set_new(meta, "resourceVersion",
		    codec_jstring(c->rv));
	json_object_set_new(root, "metadata", meta);
	spec = json_object();
	set_spec(spec, c, c->renew_us, 1);
	if (c->rv[0] != '\0' && c->ping_us != 0)
		json_object_set_new(spec, "pingTime", codec_jtime(c->ping_us));
	json_object_set_new(root, "spec", spec);
	return codec_json_dump(root);
}

char *
lease_cand_encode_update(const char *base, size_t baselen,
    const struct lease_cand *c, int64_t renew_us, char *err, size_t errlen)
{
	json_t			*root, *spec;
	struct lease_cand	 chk;

	if ((root = load(base, baselen, err, errlen)) == NULL)
		return NULL;
	if (decode_obj(root, &chk, err, errlen) == -1) {
		json_decref(root);
		return NULL;
	}
	if (!json_is_object(spec = json_object_get(root, "spec"))) {
		spec = json_object();
		json_object_set_new(root, "spec", spec);
	}
	set_spec(spec, c, renew_us, 0);
	return codec_json_dump(root);
}

/* The next numeric part of a version at *s, 0 if none; moves *s. */
static unsigned long
next_part(const char **s)
{
	unsigned long	 v = 0;

	while (isdigit((unsigned char)**s))
		v = v * 10 + (unsigned long)(*(*s)++ - '0');
	if (**s == '.')
		(*s)++;
	return v;
}

int
lease_cand_version_cmp(const char *a, const char *b)
{
	unsigned long	 x, y;
	int		 i;

	if (*a == 'v')
		a++;
	if (*b == 'v')
		b++;
	for (i = 0; i < 3; i++) {
		x = next_part(&a);
		y = next_part(&b);
		if (x != y)
			return x < y ? -1 : 1;
	}
	return strcmp(a, b);
}

int
lease_cand_version_ok(const char *s)
{
	int	 parts = 0;

	for (;;) {
		if (!isdigit((unsigned char)*s))
			return 0;
		while (isdigit((unsigned char)*s))
			s++;
		parts++;
		if (*s != '.')
			break;
		s++;
	}
	return parts == 3 &&
	    (*s == '\0' || *s == '-' || *s == '+');
}

int
lease_cand_better(const struct lease_cand *x, const struct lease_cand *y)
{
	int	 r;

	if ((r = lease_cand_version_cmp(x->emulation_version[0] != '\0' ?
	    x->emulation_version : x->binary_version,
	    y->emulation_version[0] != '\0' ? y->emulation_version :
	    y->binary_version)) != 0)
		return r < 0;
	if ((r = lease_cand_version_cmp(x->binary_version,
	    y->binary_version)) != 0)
		return r < 0;
	if (x->created_us != y->created_us)
		return x->created_us < y->created_us;
	return strcmp(x->name, y->name) < 0;
}
