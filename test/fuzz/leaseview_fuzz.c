/*
 * leaseview_fuzz.c -- what the operator's tools read from the API
 * server, on arbitrary bytes: a LeaseList page, one watch event, one
 * Lease, a LeaseCandidateList.  Nothing may crash or overrun, every
 * string decoded must be NUL-terminated within its field, and a list's
 * items plus its skipped ones never exceed what was handed out.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "codec/leaseview.h"

static unsigned	 seen;

static void
item_cb(const struct leaseview *v, void *arg)
{
	(void)arg;
	if (memchr(v->ns, '\0', sizeof(v->ns)) == NULL ||
	    memchr(v->name, '\0', sizeof(v->name)) == NULL ||
	    memchr(v->group, '\0', sizeof(v->group)) == NULL ||
	    memchr(v->owner, '\0', sizeof(v->owner)) == NULL ||
	    memchr(v->rec.holder, '\0', sizeof(v->rec.holder)) == NULL)
		abort();
	seen++;
}

static void
cand_cb(const char *ns, const struct lease_cand *c, void *arg)
{
	(void)arg;
	if (ns == NULL || memchr(c->lease_name, '\0',
	    sizeof(c->lease_name)) == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lease_list	 out;
	struct leaseview_event	 ev;
	struct leaseview	 v;
	unsigned		 skipped;
	char			 err[256];

	seen = 0;
	if (leaseview_list((const char *)data, size, item_cb, NULL, &out,
	    err, sizeof(err)) == 0 && (out.items != seen ||
	    memchr(out.cont, '\0', sizeof(out.cont)) == NULL))
		abort();
	if (leaseview_event((const char *)data, size, &ev, err,
	    sizeof(err)) == 0 && ev.type != APIOBJ_WATCH_ERROR &&
	    ev.type != APIOBJ_WATCH_BOOKMARK)
		item_cb(&ev.v, NULL);
	if (leaseview_one((const char *)data, size, &v, err,
	    sizeof(err)) == 0)
		item_cb(&v, NULL);
	(void)leaseview_cands((const char *)data, size, cand_cb, NULL,
	    &skipped, err, sizeof(err));
	return 0;
}
