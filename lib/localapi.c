/*
 * localapi.c -- the answers of the local API (DESIGN.md "The local API"):
 * who leads and whether it is us, health and readiness.  Leadership is
 * judged from the monotonic time of the request, never from a flag, so a
 * process that was paused does not answer "I lead" from stale state.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "localapi.h"

#define STUCK_SLACK_MS	5000	/* a timer this late means a stuck loop */

/*
 * Why the daemon is unhealthy, or NULL: the loop has stalled (a timer or
 * request far past its time), or we hold the lease but have not renewed
 * it within lease_duration (client-go's HealthzAdaptor, 2.8).
 */
static const char *
unhealthy(const struct localapi_state *d, uint64_t now_ms, char *why,
    size_t len)
{
	if (d->wake_ms != 0 && now_ms > d->wake_ms + STUCK_SLACK_MS) {
		snprintf(why, len, "election loop is stuck: a timer is %llu "
		    "ms late", (unsigned long long)(now_ms - d->wake_ms));
		return why;
	}
	if (d->req_deadline_ms != 0 &&
	    now_ms > d->req_deadline_ms + STUCK_SLACK_MS) {
		snprintf(why, len, "election loop is stuck: a request is "
		    "%llu ms past its timeout",
		    (unsigned long long)(now_ms - d->req_deadline_ms));
		return why;
	}
	if (d->el->have_observed && d->el->ours && d->written_ms != 0 &&
	    d->el->state != ELECTOR_STOPPING &&
	    now_ms > d->written_ms + d->conf->lease_duration_ms) {
		snprintf(why, len, "leader has not renewed lease %s/%s for "
		    "%llu ms (lease_duration %llu ms)", d->conf->lock_namespace,
		    d->conf->lock_name,
		    (unsigned long long)(now_ms - d->written_ms),
		    (unsigned long long)d->conf->lease_duration_ms);
		return why;
	}
	return NULL;
}

static void
json_time(struct buf *b, const char *key, int64_t us)
{
	char	 t[LEASE_MICROTIME_LEN];

	buf_printf(b, ",\"%s\":", key);
	if (us == 0) {
		buf_add(b, "null", 4);
		return;
	}
	lease_format_microtime(us, t);
	buf_json_str(b, t);
}

static void
reply_json(struct httpd_reply *reply, int status, struct buf *b)
{
	reply->status = status;
	reply->content_type = "application/json";
	buf_add(b, "\n", 1);
	reply->body = buf_steal(b, &reply->len);
}

static void
reply_status(struct httpd_reply *reply, int status, const char *key,
    const char *value, const char *reason)
{
	struct buf	 b = { 0 };

	buf_printf(&b, "{\"%s\":", key);
	buf_json_str(&b, value);
	if (reason != NULL) {
		buf_add(&b, ",\"reason\":", 10);
		buf_json_str(&b, reason);
	}
	buf_add(&b, "}", 1);
	reply_json(reply, status, &b);
}

static void
reply_leader(const struct localapi_state *d, const struct http_request *req,
    uint64_t now_ms, struct httpd_reply *reply)
{
	const struct lease	*o = &d->el->observed;
	const char		*holder = elector_holder(d->el);
	struct buf		 b = { 0 };
	int			 leading = elector_is_leader(d->el, now_ms);

	if (req->accept_text) {
		buf_printf(&b, "%s\n", holder);
		reply->status = 200;
		reply->content_type = "text/plain; charset=utf-8";
		reply->body = buf_steal(&b, &reply->len);
		return;
	}
	buf_add(&b, "{\"name\":", 8);
	buf_json_str(&b, holder);
	buf_printf(&b, ",\"is_leader\":%s,\"identity\":",
	    leading ? "true" : "false");
	buf_json_str(&b, d->conf->identity);
	buf_printf(&b, ",\"lock\":\"%s/%s/%s\",\"state\":\"%s\"",
	    d->conf->lock_type, d->conf->lock_namespace, d->conf->lock_name,
	    elector_state_name(d->el->state));
	buf_printf(&b, ",\"transitions\":%d", o->transitions);
	json_time(&b, "acquire_time", o->acquire_us);
	json_time(&b, "renew_time", o->renew_us);
	buf_printf(&b, ",\"lease_duration_seconds\":%d,\"valid_for_ms\":%llu}",
	    o->duration_s, leading ?
	    (unsigned long long)(d->el->lead_until_ms - now_ms) : 0ULL);
	reply_json(reply, 200, &b);
}

void
localapi_reply(const struct localapi_state *d, const struct http_request *req,
    uint64_t now_ms, struct httpd_reply *reply)
{
	char		 why[1024];
	struct buf	 b = { 0 };

	if (strcmp(req->method, "GET") != 0 &&
	    strcmp(req->method, "HEAD") != 0) {
		reply->allow = "GET, HEAD";
		buf_add(&b, "{\"error\":\"method not allowed\",\"status\":405}",
		    43);
		reply_json(reply, 405, &b);
		return;
	}
	if (strcmp(req->path, "/leader") == 0)
		reply_leader(d, req, now_ms, reply);
	else if (strcmp(req->path, "/") == 0)
		reply_status(reply, 200, "name", elector_holder(d->el), NULL);
	else if (strcmp(req->path, "/healthz") == 0) {
		if (unhealthy(d, now_ms, why, sizeof(why)) != NULL)
			reply_status(reply, 503, "status", "unhealthy", why);
		else
			reply_status(reply, 200, "status", "ok", NULL);
	} else if (strcmp(req->path, "/readyz") == 0) {
		if (!d->ready)
			reply_status(reply, 503, "status", "not ready",
			    "the lease has not been read yet");
		else if (d->conf->readyz_leader_only &&
		    !elector_is_leader(d->el, now_ms))
			reply_status(reply, 503, "status", "not ready",
			    "not the leader");
		else
			reply_status(reply, 200, "status", "ready", NULL);
	} else {
		buf_add(&b, "{\"error\":\"not found\",\"status\":404}", 34);
		reply_json(reply, 404, &b);
	}
}
