/*
 * legacy_fuzz.c -- the legacy locks' codec on arbitrary bytes: the input
 * as an annotation value, and as an Endpoints or ConfigMap body.  A
 * decoded record must encode to a value that decodes to the same record,
 * and an encoded value must be JSON that Go's decoder would read back
 * (it decodes here too); an object that decodes must survive an update.
 */

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "codec/lease.h"
#include "codec/legacy.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lease	 l, back;
	char		 err[512], *enc, *body;
	const char	*kind;

	memset(&l, 0, sizeof(l));
	if (legacy_record_decode((const char *)data, size, &l, err,
	    sizeof(err)) == 0) {
		enc = legacy_record_encode(&l);
		memset(&back, 0, sizeof(back));
		if (legacy_record_decode(enc, strlen(enc), &back, err,
		    sizeof(err)) == -1 || !lease_same_record(&l, &back))
			abort();
		free(enc);
	}
	kind = size > 0 && (data[0] & 1) ? "ConfigMap" : "Endpoints";
	if (legacy_decode(kind, (const char *)data, size, &l, err,
	    sizeof(err)) == -1)
		return 0;
	if ((body = legacy_encode_update(kind, (const char *)data, size, &l,
	    err, sizeof(err))) == NULL)
		abort();
	memset(&back, 0, sizeof(back));
	if (legacy_decode(kind, body, strlen(body), &back, err,
	    sizeof(err)) == -1)
		abort();
	/* An absent annotation reads as unknown, and is written as such. */
	if (!lease_same_record(&l, &back))
		abort();
	free(body);
	return 0;
}
