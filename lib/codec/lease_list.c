/*
 * lease_list.c -- a LeaseList (the answer to a list of a namespace's
 * Leases), one page at a time: its items decoded one by one, what does
 * not belong or cannot be read skipped and counted rather than failing
 * the page, and the head of a page cut short (its continue token), so
 * that no Lease a co-tenant labels can stop a shard group's list.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "codec/codec_int.h"
#include "codec/lease.h"

/*
 * A list's item that lease_list_decode skips: counted, the first
 * unreadable one noted.
 */
static void
list_skip(struct lease_list *out, const char *name, const char *why)
{
	out->skipped++;
	if (why != NULL && out->why[0] == '\0')
		snprintf(out->why, sizeof(out->why), "%.80s: %.110s",
		    name[0] != '\0' ? name : "(no name)", why);
}

int
lease_list_decode(const char *buf, size_t len,
    int (*want_cb)(const char *, void *),
    void (*item_cb)(const char *, const struct lease *, char *, void *),
    void *arg, struct lease_list *out, char *err, size_t errlen)
{
	json_t		*root, *items, *item, *meta;
	struct lease	 rec;
	char		 name[LEASE_HOLDER_MAX], *obj, ierr[160];
	size_t		 i;
	int		 rc = -1;

	codec_json_init();
	if (errlen > 0)
		err[0] = '\0';
	memset(out, 0, sizeof(*out));
	/* A page of many Leases: no single Lease's bound. */
	if ((root = codec_load(buf, len, 0, err, errlen)) == NULL)
		return -1;
	meta = json_object_get(root, "metadata");
	if (json_is_object(meta) && (codec_get_string(meta, "resourceVersion",
	    "metadata.resourceVersion", out->rv, sizeof(out->rv), err,
	    errlen) == -1 || codec_get_string(meta, "continue",
	    "metadata.continue", out->cont, sizeof(out->cont), err,
	    errlen) == -1))
		goto out;
	items = json_object_get(root, "items");
	if (items != NULL && !json_is_null(items) && !json_is_array(items)) {
		snprintf(err, errlen, "items: not an array");
		goto out;
	}
	json_array_foreach(items, i, item) {
		name[0] = '\0';
		if (!json_is_object(item)) {
			list_skip(out, name, "not an object");
			continue;
		}
		meta = json_object_get(item, "metadata");
		if (!json_is_object(meta) || codec_get_string(meta, "name",
		    "metadata.name", name, sizeof(name), ierr,
		    sizeof(ierr)) == -1) {
			list_skip(out, "", json_is_object(meta) ? ierr :
			    "no metadata");
			continue;
		}
		if (want_cb != NULL && !want_cb(name, arg)) {
			list_skip(out, name, NULL);
			continue;
		}
		/* A list's items carry no kind: a PUT's body needs one. */
		json_object_set_new(item, "apiVersion",
		    json_string(LEASE_API_VERSION));
		json_object_set_new(item, "kind", json_string("Lease"));
		json_incref(item);
		obj = codec_json_dump(item);
		if (lease_decode(obj, strlen(obj), &rec, ierr,
		    sizeof(ierr)) == -1) {
			free(obj);
			list_skip(out, name, ierr);
			continue;
		}
		out->items++;
		item_cb(name, &rec, obj, arg);
	}
	rc = 0;
 out:
	json_decref(root);
	return rc;
}

int
lease_list_head(const char *buf, size_t len, struct lease_list *out,
    char *name, size_t namelen, char *err, size_t errlen)
{
	static const char	 items[] = "\"items\":[", none[] =
				    "\"items\":[]}", first[] =
				    "{\"metadata\":{\"name\":\"";
	json_t			*root, *meta;
	const char		*p, *end = buf + len;
	char			*head;
	size_t			 n, k;
	int			 rc = -1;

	codec_json_init();
	if (errlen > 0)
		err[0] = '\0';
	if (namelen > 0)
		name[0] = '\0';
	memset(out, 0, sizeof(*out));
	/*
	 * The first "items":[ is the list's: its head holds no string with
	 * a quote (kind, apiVersion, a version, a base64 token, a count).
	 */
	for (p = buf; p + sizeof(items) - 1 <= end; p++)
		if (memcmp(p, items, sizeof(items) - 1) == 0)
			break;
	if (p + sizeof(items) - 1 > end) {
		snprintf(err, errlen, "no items in the first %zu bytes", len);
		return -1;
	}
	n = (size_t)(p - buf);
	head = xmalloc(n + sizeof(none));
	memcpy(head, buf, n);
	memcpy(head + n, none, sizeof(none));
	if ((root = codec_load(head, strlen(head), 0, err, errlen)) == NULL)
		goto out;
	meta = json_object_get(root, "metadata");
	if (!json_is_object(meta)) {
		snprintf(err, errlen, "no metadata before the items");
		json_decref(root);
		goto out;
	}
	if (codec_get_string(meta, "resourceVersion",
	    "metadata.resourceVersion", out->rv, sizeof(out->rv), err,
	    errlen) == -1 || codec_get_string(meta, "continue",
	    "metadata.continue", out->cont, sizeof(out->cont), err,
	    errlen) == -1) {
		json_decref(root);
		goto out;
	}
	json_decref(root);
	rc = 0;
	/* The first item's name, as the API server writes it first. */
	p += sizeof(items) - 1;
	if ((size_t)(end - p) < sizeof(first) - 1 ||
	    memcmp(p, first, sizeof(first) - 1) != 0)
		goto out;
	p += sizeof(first) - 1;
	for (k = 0; p + k < end && k + 1 < namelen && k < 253 &&
	    ((p[k] >= 'a' && p[k] <= 'z') || (p[k] >= '0' && p[k] <= '9') ||
	    p[k] == '-' || p[k] == '.'); k++)
		;
	if (k > 0 && p + k < end && p[k] == '"') {
		memcpy(name, p, k);
		name[k] = '\0';
	}
 out:
	free(head);
	return rc;
}
