/*
 * lease_fuzz.c -- lease_decode, apiobj_decode_watch_event, apiobj_status,
 * and a LeaseList page whole (lease_list_decode) and cut short
 * (lease_list_head) on arbitrary bytes; a decoded record must survive
 * encode and decode unchanged, a watch event's object must decode as its
 * record, and every listed item must decode alone as the record the list
 * gave.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "codec/apiobj.h"
#include "codec/lease.h"

static void
list_item(const char *name, const struct lease *rec, char *object,
    void *arg)
{
	struct lease	 back;
	char		 err[256];

	(void)arg;
	if (name[0] == '\0' || lease_decode(object, strlen(object), &back,
	    err, sizeof(err)) == -1 || !lease_same_record(rec, &back))
		abort();
	free(object);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lease	 l, back;
	struct lease_list list;
	struct apiobj_watch_event ev;
	char		 err[256], reason[64], msg[256], name[256], *body, *obj;

	apiobj_status((const char *)data, size, reason, sizeof(reason), msg,
	    sizeof(msg));
	(void)lease_list_decode((const char *)data, size, NULL, list_item,
	    NULL, &list, err, sizeof(err));
	(void)lease_list_head((const char *)data, size, &list, name,
	    sizeof(name), err, sizeof(err));
	if (apiobj_decode_watch_event((const char *)data, size, &ev, &obj, err,
	    sizeof(err)) == 0 && obj != NULL) {
		if (lease_decode(obj, strlen(obj), &back, err,
		    sizeof(err)) == -1 || !lease_same_record(&ev.rec, &back) ||
		    strcmp(ev.rv, back.rv) != 0)
			abort();
		free(obj);
	}
	if (lease_decode((const char *)data, size, &l, err, sizeof(err)) == -1)
		return 0;
	if ((body = lease_encode_update((const char *)data, size, &l, err,
	    sizeof(err))) == NULL)
		return 0;
	if (lease_decode(body, strlen(body), &back, err, sizeof(err)) == -1 ||
	    !lease_same_record(&l, &back) || l.acquire_us != back.acquire_us ||
	    l.renew_us != back.renew_us)
		abort();
	free(body);
	return 0;
}
