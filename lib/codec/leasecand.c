/*
 * leasecand.c -- the LeaseCandidate (coordination.k8s.io/v1beta1) codec,
 * the version order of the OldestEmulationVersion strategy and the pick
 * it makes.  See leasecand.h.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "codec/apitime.h"
#include "codec/codec_int.h"
#include "codec/leasecand.h"

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
	    errlen) == -1 || codec_get_string(spec, "binaryVersion",
	    "spec.binaryVersion", c.binary_version, sizeof(c.binary_version),
	    err, errlen) == -1 || codec_get_string(spec, "emulationVersion",
	    "spec.emulationVersion", c.emulation_version,
	    sizeof(c.emulation_version), err, errlen) == -1 ||
	    codec_get_string(spec, "strategy", "spec.strategy", c.strategy,
	    sizeof(c.strategy), err, errlen) == -1 ||
	    codec_get_time(spec, "pingTime", "spec.pingTime", &c.ping_us, err,
	    errlen) == -1 || codec_get_time(spec, "renewTime", "spec.renewTime",
	    &c.renew_us, err, errlen) == -1))
		return -1;
	*out = c;
	return 0;
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
lease_cand_decode_list(const char *buf, size_t len, const char *lease_name,
    struct lease_cand *out, size_t max, size_t *n, char *err, size_t errlen)
{
	json_t			*root, *items, *it;
	struct lease_cand	 c;
	size_t			 i;
	int			 rc = -1;

	*n = 0;
	if ((root = load(buf, len, err, errlen)) == NULL)
		return -1;
	items = json_is_object(root) ? json_object_get(root, "items") : NULL;
	if (items != NULL && !json_is_array(items) && !json_is_null(items)) {
		snprintf(err, errlen, "items: not an array");
		goto out;
	}
	json_array_foreach(items, i, it) {
		if (decode_obj(it, &c, err, errlen) == -1)
			goto out;
		if (lease_name != NULL && strcmp(c.lease_name, lease_name) != 0)
			continue;
		if (*n < max)
			out[(*n)++] = c;
	}
	rc = 0;
 out:
	json_decref(root);
	return rc;
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

/* Whether x is a better pick than y (OldestEmulationVersion). */
static int
better(const struct lease_cand *x, const struct lease_cand *y)
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

int
lease_cand_pick(const struct lease_cand *c, size_t n, const char *skip,
    int64_t not_before_us)
{
	size_t	 i;
	int	 best = -1;

	for (i = 0; i < n; i++) {
		if ((skip != NULL && strcmp(c[i].name, skip) == 0) ||
		    c[i].renew_us < not_before_us)
			continue;
		if (best == -1 || better(&c[i], &c[best]))
			best = (int)i;
	}
	return best;
}
