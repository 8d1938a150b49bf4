/*
 * peer_await.c -- k8s-await-election's status endpoint (main.go
 * startStatusEndpoint): a ServeMux with "/" alone, so every path and
 * every method gets client-go's elector.Check(2 * time.Second).
 */

#include <string.h>

#include "base/xmalloc.h"
#include "core/elector.h"
#include "server/localapi.h"
#include "server/peers.h"

#define CHECK_SLACK_MS	2000	/* Check's maxTolerableExpiredLease */

/*
 * client-go's Check: nil unless the observed record names us (IsLeader)
 * and it has not changed for more than LeaseDuration + 2s.  Our own
 * record lasts our lease_duration, which elector_expires_ms counts from
 * when it was last observed to change.
 */
static int
expired(const struct localapi_state *d, uint64_t now_ms)
{
	const char	*holder = elector_holder(d->el);

	if (holder[0] == '\0' || strcmp(holder, d->conf->identity) != 0)
		return 0;
	return now_ms > elector_expires_ms(d->el) + CHECK_SLACK_MS;
}

void
peer_await_root(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	const struct localapi_state	*d = arg;
	const char			*body;

	(void)req;
	/*
	 * Its bytes, with the space after the colon, no newline, and no
	 * Content-Type, which net/http sniffs as text/plain.
	 */
	if (expired(d, reply->now_ms)) {
		reply->status = 500;
		body = "{\"status\": \"expired\"}";
	} else {
		reply->status = 200;
		body = "{\"status\": \"ok\"}";
	}
	reply->content_type = "text/plain; charset=utf-8";
	reply->len = strlen(body);
	reply->body = xstrdup(body);
}
