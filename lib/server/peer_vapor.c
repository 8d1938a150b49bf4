/*
 * peer_vapor.c -- vapor-ware/k8s-elector's answer (pkg/elector.go
 * httpLeaderInfo): the same body to every path and method.
 */

#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "codec/apitime.h"
#include "core/elector.h"
#include "server/localapi.h"
#include "server/peers.h"

#define RFC3339_SECONDS	19	/* "2006-01-02T15:04:05", before the "Z" */

void
peer_vapor_root(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	const struct localapi_state	*d = arg;
	struct buf			 b = { 0 };
	char				 t[APITIME_MICRO_LEN];
	int				 leading;

	(void)req;
	/*
	 * k8s-elector says is_leader when its ID is the last holder it
	 * heard of, and keeps saying it after its lease ran out until it
	 * hears of another.  Ours is true only while our claim holds (at
	 * the time of asking, and not once we stop), which is the same
	 * whenever the holder named is live.
	 */
	leading = !d->stopping && elector_is_leader(d->el, reply->now_ms) &&
	    strcmp(elector_holder(d->el), d->conf->identity) == 0;
	/* time.Now().UTC().Format(time.RFC3339): to the second, "Z". */
	apitime_format_micro(clock_wall_us(), t);
	t[RFC3339_SECONDS] = '\0';
	/* json.Marshal of a map: the keys sorted, no newline. */
	buf_printf(&b, "{\"is_leader\":%s,\"leader\":",
	    leading ? "true" : "false");
	buf_json_str(&b, elector_holder(d->el));
	buf_add(&b, ",\"node\":", 8);
	buf_json_str(&b, d->conf->identity);
	buf_printf(&b, ",\"timestamp\":\"%sZ\"}", t);
	reply->status = 200;
	reply->content_type = "application/json";
	reply->body = buf_steal(&b, &reply->len);
}
