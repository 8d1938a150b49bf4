/*
 * leaseview.c -- Leases and LeaseCandidates for the operator's tools:
 * a list's items and a watch's events with their namespace, shard-group
 * labels and owner beside the record (lease_decode reads the record), and
 * a list of candidates.  Every Lease is shown, leaderd's or not; one that
 * does not decode is counted, never fatal to the page.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/apitime.h"
#include "codec/codec_int.h"
#include "codec/leaseview.h"

/* The metadata beside the record: namespace, labels, owner, creation. */
static int
view_meta(json_t *obj, struct leaseview *v, char *err, size_t errlen)
{
	json_t		*meta, *labels, *l, *owners, *o;
	const char	*kind, *oname;

	meta = json_object_get(obj, "metadata");
	if (!json_is_object(meta)) {
		snprintf(err, errlen, "no metadata");
		return -1;
	}
	if (codec_get_string(meta, "name", "metadata.name", v->name,
	    sizeof(v->name), err, errlen) == -1 ||
	    codec_get_string(meta, "namespace", "metadata.namespace", v->ns,
	    sizeof(v->ns), err, errlen) == -1 ||
	    codec_get_time(meta, "creationTimestamp",
	    "metadata.creationTimestamp", &v->created_us, err, errlen) == -1)
		return -1;
	labels = json_object_get(meta, "labels");
	if (json_is_object(labels)) {
		l = json_object_get(labels, LEASEVIEW_GROUP_LABEL);
		if (json_is_string(l) &&
		    strlen(json_string_value(l)) < sizeof(v->group))
			snprintf(v->group, sizeof(v->group), "%s",
			    json_string_value(l));
		l = json_object_get(labels, LEASEVIEW_MEMBER_LABEL);
		v->member = json_is_string(l) &&
		    strcmp(json_string_value(l), "true") == 0;
	}
	owners = json_object_get(meta, "ownerReferences");
	o = json_is_array(owners) ? json_array_get(owners, 0) : NULL;
	if (json_is_object(o)) {
		kind = json_string_value(json_object_get(o, "kind"));
		oname = json_string_value(json_object_get(o, "name"));
		if (kind != NULL && oname != NULL)
			snprintf(v->owner, sizeof(v->owner), "%.32s/%s", kind,
			    oname);
	}
	return 0;
}

/* obj (a list's item or a watch's object) into v. */
static int
view_decode(json_t *obj, struct leaseview *v, char *err, size_t errlen)
{
	char	*s;
	int	 rc;

	memset(v, 0, sizeof(*v));
	if (!json_is_object(obj)) {
		snprintf(err, errlen, "not an object");
		return -1;
	}
	if (view_meta(obj, v, err, errlen) == -1)
		return -1;
	/* A list's items carry no kind: lease_decode wants one. */
	json_object_set_new(obj, "apiVersion", json_string(LEASE_API_VERSION));
	json_object_set_new(obj, "kind", json_string("Lease"));
	json_incref(obj);
	s = codec_json_dump(obj);
	rc = lease_decode(s, strlen(s), &v->rec, err, errlen);
	free(s);
	return rc;
}

int
leaseview_list(const char *buf, size_t len,
    void (*item_cb)(const struct leaseview *, void *), void *arg,
    struct lease_list *out, char *err, size_t errlen)
{
	json_t			*root, *items, *item, *meta;
	struct leaseview	 v;
	char			 ierr[160];
	size_t			 i;
	int			 rc = -1;

	codec_json_init();
	memset(out, 0, sizeof(*out));
	if ((root = codec_load(buf, len, 0, err, errlen)) == NULL)
		return -1;
	meta = json_object_get(root, "metadata");
	if (json_is_object(meta) && (codec_get_string(meta, "continue",
	    "metadata.continue", out->cont, sizeof(out->cont), err,
	    errlen) == -1 || codec_get_string(meta, "resourceVersion",
	    "metadata.resourceVersion", out->rv, sizeof(out->rv), err,
	    errlen) == -1))
		goto out;
	items = json_object_get(root, "items");
	if (!json_is_object(root) || (items != NULL && !json_is_null(items) &&
	    !json_is_array(items))) {
		snprintf(err, errlen, "not a list: items is not an array");
		goto out;
	}
	json_array_foreach(items, i, item) {
		if (view_decode(item, &v, ierr, sizeof(ierr)) == -1) {
			if (out->skipped == 0)
				snprintf(out->why, sizeof(out->why),
				    "%.80s: %.110s", v.name[0] != '\0' ?
				    v.name : "(no name)", ierr);
			out->skipped++;
			continue;
		}
		out->items++;
		item_cb(&v, arg);
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int
leaseview_one(const char *buf, size_t len, struct leaseview *v, char *err,
    size_t errlen)
{
	json_t	*root;
	int	 rc;

	codec_json_init();
	memset(v, 0, sizeof(*v));
	if ((root = codec_load(buf, len, LEASE_BODY_MAX, err,
	    errlen)) == NULL)
		return -1;
	rc = view_decode(root, v, err, errlen);
	json_decref(root);
	return rc;
}

int
leaseview_event(const char *buf, size_t len, struct leaseview_event *ev,
    char *err, size_t errlen)
{
	json_t		*root, *obj, *meta, *code;
	const char	*msg;
	int		 rc = -1;

	codec_json_init();
	memset(ev, 0, sizeof(*ev));
	if ((root = codec_load(buf, len, LEASE_BODY_MAX, err,
	    errlen)) == NULL)
		return -1;
	if (codec_watch_head(root, &ev->type, &obj, err, errlen) == -1)
		goto out;
	if (ev->type == APIOBJ_WATCH_ERROR) {
		code = json_object_get(obj, "code");
		ev->code = json_is_integer(code) ?
		    (long)json_integer_value(code) : 0;
		msg = json_string_value(json_object_get(obj, "message"));
		snprintf(ev->message, sizeof(ev->message), "%s",
		    msg != NULL ? msg : "");
		rc = 0;
		goto out;
	}
	meta = json_object_get(obj, "metadata");
	if (json_is_object(meta) && codec_get_string(meta, "resourceVersion",
	    "metadata.resourceVersion", ev->rv, sizeof(ev->rv), err,
	    errlen) == -1)
		goto out;
	if (ev->type == APIOBJ_WATCH_BOOKMARK) {
		rc = 0;
		goto out;
	}
	rc = view_decode(obj, &ev->v, err, errlen);
out:
	json_decref(root);
	return rc;
}

int
leaseview_cands(const char *buf, size_t len,
    void (*item_cb)(const char *, const struct lease_cand *, void *),
    void *arg, unsigned *skipped, char *err, size_t errlen)
{
	json_t			*root, *items, *item, *meta;
	struct lease_cand	 c;
	const char		*ns;
	char			*s, ierr[160];
	size_t			 i;
	int			 rc = -1;

	codec_json_init();
	*skipped = 0;
	if ((root = codec_load(buf, len, 0, err, errlen)) == NULL)
		return -1;
	items = json_is_object(root) ? json_object_get(root, "items") : NULL;
	if (!json_is_object(root) || (items != NULL && !json_is_null(items) &&
	    !json_is_array(items))) {
		snprintf(err, errlen, "not a list: items is not an array");
		goto out;
	}
	json_array_foreach(items, i, item) {
		meta = json_is_object(item) ?
		    json_object_get(item, "metadata") : NULL;
		ns = json_is_object(meta) ?
		    json_string_value(json_object_get(meta, "namespace")) :
		    NULL;
		if (ns == NULL) {
			(*skipped)++;
			continue;
		}
		json_object_set_new(item, "apiVersion",
		    json_string(LEASECAND_API_VERSION));
		json_object_set_new(item, "kind",
		    json_string("LeaseCandidate"));
		json_incref(item);
		s = codec_json_dump(item);
		if (lease_cand_decode(s, strlen(s), &c, ierr,
		    sizeof(ierr)) == -1)
			(*skipped)++;
		else
			item_cb(ns, &c, arg);
		free(s);
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}
