/*
 * lease_fuzz.c -- lease_decode, apiobj_decode_watch_event and
 * apiobj_status on arbitrary bytes; a decoded record must survive encode
 * and decode unchanged, and a watch event's object must decode as its
 * record.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "codec/apiobj.h"
#include "codec/lease.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lease	 l, back;
	struct apiobj_watch_event ev;
	char		 err[256], reason[64], msg[256], *body, *obj;

	apiobj_status((const char *)data, size, reason, sizeof(reason), msg,
	    sizeof(msg));
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
