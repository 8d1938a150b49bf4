/*
 * peer_classic.c -- the classic leader-elector sidecar's answer
 * (kubernetes/contrib election/example/main.go webHandler): the same
 * body to every path and method.
 */

#include <string.h>

#include "base/buf.h"
#include "core/elector.h"
#include "server/localapi.h"
#include "server/peers.h"

void
peer_classic_root(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	const struct localapi_state	*d = arg;
	struct buf			 b = { 0 };

	(void)req;
	/*
	 * Its bytes: Go's json.Marshal of {"name":...}, no newline, and no
	 * Content-Type, which net/http sniffs as text/plain.
	 */
	buf_add(&b, "{\"name\":", 8);
	buf_json_str(&b, elector_holder(d->el));
	buf_add(&b, "}", 1);
	reply->status = 200;
	reply->content_type = "text/plain; charset=utf-8";
	reply->body = buf_steal(&b, &reply->len);
}
