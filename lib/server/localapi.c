/*
 * localapi.c -- the answers of the local API (DESIGN.md "The local API"):
 * who leads and whether it is us (/leader, its blocking reads and
 * streams, each election's and all of them, /leaders), health and
 * readiness.  Leadership is judged from the monotonic time of the
 * request, never from a flag, so a process that was paused does not
 * answer "I lead" from stale state.  The route table that says where and
 * how each answer is served is in localapi_routes.c (localapi_int.h).
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/duration.h"
#include "base/text.h"
#include "base/xmalloc.h"
#include "codec/apitime.h"
#include "codec/http_parse.h"
#include "server/localapi.h"
#include "server/localapi_int.h"

#define STUCK_SLACK_MS	5000	/* a timer this late means a stuck loop */

const char *
localapi_unhealthy(const struct localapi_state *d, uint64_t now_ms, char *why,
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
	    d->el->state != ELECTOR_STOPPING && !d->el->conf.for_life &&
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

/*
 * The pieces of the local API's JSON answers, written without printf
 * (a musl printf costs microseconds per answer): a key after the first
 * (",\"key\":"), a boolean, a time (MicroTime, or null for 0).
 */
static void
json_key(struct buf *b, const char *key)
{
	buf_add(b, ",\"", 2);
	buf_add_str(b, key);
	buf_add(b, "\":", 2);
}

static void
json_bool(struct buf *b, int v)
{
	if (v)
		buf_add(b, "true", 4);
	else
		buf_add(b, "false", 5);
}

static void
json_time(struct buf *b, const char *key, int64_t us)
{
	char	 t[APITIME_MICRO_LEN];

	json_key(b, key);
	if (us == 0) {
		buf_add(b, "null", 4);
		return;
	}
	apitime_format_micro(us, t);
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

	buf_add(&b, "{\"", 2);
	buf_add_str(&b, key);
	buf_add(&b, "\":", 2);
	buf_json_str(&b, value);
	if (reason != NULL) {
		buf_add(&b, ",\"reason\":", 10);
		buf_json_str(&b, reason);
	}
	buf_add(&b, "}", 1);
	reply_json(reply, status, &b);
}

/*
 * Why this instance does not compete at now_ms, as /leader's
 * candidate_reason says it: the gate's reason (the daemon's), or
 * "cooldown" after a step-down or a release for ill health; "" when it
 * is a candidate.
 */
static const char *
candidate_reason(const struct localapi_state *d, uint64_t now_ms)
{
	if (d->not_candidate != NULL)
		return d->not_candidate;
	if (elector_cooling_down(d->el, now_ms))
		return "cooldown";
	return "";
}

/* The /leader JSON body at now_ms, on one line, without a newline. */
static void
leader_json(const struct localapi_state *d, uint64_t now_ms, struct buf *b)
{
	const struct lease	*o = &d->el->observed;
	int			 leading = !d->stopping &&
				    elector_is_leader(d->el, now_ms);
	const char		*reason = candidate_reason(d, now_ms);
	char			 token[LEASE_TOKEN_MAX] = "";

	if (d->el->have_observed)
		lease_fencing_token(o, token, sizeof(token));
	buf_add(b, "{\"name\":", 8);
	buf_json_str(b, elector_holder(d->el));
	json_key(b, "is_leader");
	json_bool(b, leading);
	json_key(b, "identity");
	buf_json_str(b, d->conf->identity);
	/* The lock's and the state's names are plain: not escaped. */
	json_key(b, "lock");
	buf_add(b, "\"", 1);
	buf_add_str(b, d->conf->lock_type);
	buf_add(b, "/", 1);
	buf_add_str(b, d->conf->lock_namespace);
	buf_add(b, "/", 1);
	buf_add_str(b, d->conf->lock_name);
	buf_add(b, "\"", 1);
	json_key(b, "state");
	buf_add(b, "\"", 1);
	buf_add_str(b, d->stopping && d->el->state != ELECTOR_STOPPED ?
	    "stopping" : elector_state_name(d->el->state));
	buf_add(b, "\"", 1);
	json_key(b, "transitions");
	buf_add_i64(b, o->transitions);
	json_key(b, "fencing_token");
	buf_json_str(b, token);
	json_time(b, "acquire_time", o->acquire_us);
	json_time(b, "renew_time", o->renew_us);
	json_key(b, "lease_duration_seconds");
	buf_add_i64(b, o->duration_s);
	/* A claim held for life has no end in time to count down. */
	json_key(b, "valid_for_ms");
	buf_add_u64(b, leading && d->el->lead_until_ms != ELECTOR_FOR_LIFE_MS ?
	    d->el->lead_until_ms - now_ms : 0);
	json_key(b, "candidate");
	json_bool(b, *reason == '\0');
	json_key(b, "candidate_reason");
	buf_json_str(b, reason);
	/* Coordinated election, when asked for (candidacy.coordinated). */
	if (d->coordinated != LOCALAPI_COORD_NONE) {
		json_key(b, "coordinated");
		json_bool(b, d->coordinated == LOCALAPI_COORD_ON);
		json_key(b, "coordinated_reason");
		buf_json_str(b, d->coordinated_reason != NULL ?
		    d->coordinated_reason : "");
	}
	json_key(b, "index");
	buf_add_u64(b, d->index);
	json_time(b, "changed_at", d->changed_us);
	/* Which election this is: /leader/NAME's NAME. */
	json_key(b, "election");
	buf_json_str(b, d->election != NULL ? d->election :
	    d->conf->lock_name);
	localapi_problem_json(d, now_ms, b);
	buf_add(b, "}", 1);
}

static void
reply_error(struct httpd_reply *reply, int status, const char *why)
{
	struct buf	 b = { 0 };

	buf_add(&b, "{\"error\":", 9);
	buf_json_str(&b, why);
	json_key(&b, "status");
	buf_add_i64(&b, status);
	buf_add(&b, "}", 1);
	reply_json(reply, status, &b);
}

/* /leader's headers: X-Leaderd-Index, X-Leaderd-Fencing-Token in a term. */
static void
leader_headers(struct httpd_reply *reply, uint64_t index, const char *token)
{
	char	*h = reply->headers, num[TEXT_INT_LEN];
	size_t	 len = sizeof(reply->headers), used = 0;

	text_u64(num, index, 0);
	text_append(h, len, &used, "X-Leaderd-Index: ");
	text_append(h, len, &used, num);
	text_append(h, len, &used, "\r\n");
	if (token[0] != '\0') {
		text_append(h, len, &used, "X-Leaderd-Fencing-Token: ");
		text_append(h, len, &used, token);
		text_append(h, len, &used, "\r\n");
	}
}

/* GET /leader, blocking with wait and index. */
void
localapi_reply_leader(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	const struct localapi_state	*d = arg;
	uint64_t			 now_ms = reply->now_ms, wait_ms, index;
	struct buf			 b = { 0 };
	char				 err[256], why[300];
	char				 token[LEASE_TOKEN_MAX] = "";
	int				 blocking;

	if (localapi_parse_wait(req->query, &blocking, &wait_ms, &index, err,
	    sizeof(err)) == -1) {
		snprintf(why, sizeof(why), "%s; write e.g. "
		    "/leader?wait=30s&index=7", err);
		reply_error(reply, 400, why);
		return;
	}
	if (blocking && index == d->index && !reply->wait_over &&
	    wait_ms > 0) {
		reply->mode = HTTPD_REPLY_WAIT;
		reply->wait_ms = wait_ms;
		return;
	}
	if (d->el->have_observed)
		lease_fencing_token(&d->el->observed, token, sizeof(token));
	leader_headers(reply, d->index, token);
	if (req->accept_text) {
		/* One line: the holder is the Lease writer's text (L1). */
		size_t	 n = strlen(elector_holder(d->el)) * 4 + 8;
		char	*esc = xmalloc(n);

		text_escape(esc, n, elector_holder(d->el));
		buf_add_str(&b, esc);
		buf_add(&b, "\n", 1);
		free(esc);
		reply->status = 200;
		reply->content_type = "text/plain; charset=utf-8";
		reply->body = buf_steal(&b, &reply->len);
		return;
	}
	leader_json(d, now_ms, &b);
	reply_json(reply, 200, &b);
}

/* GET /leaders: every election's /leader body, by name. */
void
localapi_reply_leaders(const struct http_request *req,
    struct httpd_reply *reply, void *arg)
{
	const struct localapi_state	*d = arg;
	struct buf			 b = { 0 };
	size_t				 i;

	(void)req;
	buf_add(&b, "{", 1);
	for (i = 0; i < d->nall; i++) {
		if (i > 0)
			buf_add(&b, ",", 1);
		buf_json_str(&b, d->all[i]->election);
		buf_add(&b, ":", 1);
		leader_json(d->all[i], reply->now_ms, &b);
	}
	buf_add(&b, "}", 1);
	reply_json(reply, 200, &b);
}

/* GET /leaders/watch: every election's stream, one event each now. */
void
localapi_reply_watch_all(const struct http_request *req,
    struct httpd_reply *reply, void *arg)
{
	const struct localapi_state	*d = arg;
	struct buf			 b = { 0 };
	size_t				 i;

	(void)req;
	reply->status = 200;
	reply->content_type = "text/event-stream";
	reply->mode = HTTPD_REPLY_STREAM;
	reply->ping = LOCALAPI_PING;
	reply->channel = LOCALAPI_ALL_CHANNEL;
	for (i = 0; i < d->nall; i++) {
		buf_add(&b, "data: ", 6);
		leader_json(d->all[i], reply->now_ms, &b);
		buf_add(&b, "\n\n", 2);
	}
	reply->body = buf_steal(&b, &reply->len);
}

/* GET /leader/watch, /sse: a stream of events, the first one now. */
void
localapi_reply_watch(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	const struct localapi_state	*d = arg;
	uint64_t			 now_ms = reply->now_ms;

	(void)req;
	reply->status = 200;
	reply->content_type = "text/event-stream";
	reply->mode = HTTPD_REPLY_STREAM;
	reply->ping = LOCALAPI_PING;
	snprintf(reply->headers, sizeof(reply->headers),
	    "X-Leaderd-Index: %llu\r\n", (unsigned long long)d->index);
	/* /leader/NAME/watch: that election's broadcast. */
	reply->channel = d->channel;
	reply->body = localapi_event(d, now_ms, &reply->len);
}

int
localapi_changed(struct localapi_state *d, uint64_t now_ms, int64_t wall_us)
{
	const char	*holder = elector_holder(d->el);
	int		 leading = !d->stopping &&
			    elector_is_leader(d->el, now_ms) ? 1 : 0;
	int		 stopping = d->stopping ||
			    d->el->state == ELECTOR_STOPPING ||
			    d->el->state == ELECTOR_STOPPED;

	const char	*reason = candidate_reason(d, now_ms);

	if (d->index != 0 && leading == d->seen_leader &&
	    stopping == d->seen_stopping &&
	    strcmp(holder, d->seen_holder) == 0 &&
	    d->seen_reason != NULL && strcmp(reason, d->seen_reason) == 0)
		return 0;
	d->seen_reason = reason;
	d->index++;
	d->changed_us = wall_us;
	snprintf(d->seen_holder, sizeof(d->seen_holder), "%s", holder);
	d->seen_leader = leading;
	d->seen_stopping = stopping;
	return 1;
}

char *
localapi_event(const struct localapi_state *d, uint64_t now_ms, size_t *len)
{
	struct buf	 b = { 0 };

	buf_add(&b, "data: ", 6);
	leader_json(d, now_ms, &b);
	buf_add(&b, "\n\n", 2);
	return buf_steal(&b, len);
}

int
localapi_parse_wait(const char *query, int *blocking, uint64_t *wait_ms,
    uint64_t *index, char *err, size_t errlen)
{
	char		 v[64], derr[200];
	size_t		 i;
	int		 n;
	uint64_t	 x, d;

	*blocking = 0;
	*wait_ms = LOCALAPI_WAIT_MAX_MS;
	*index = 0;
	if ((n = http_query_get(query, "wait", v, sizeof(v))) > 0) {
		if (n > 1) {
			snprintf(err, errlen, "wait given twice");
			return -1;
		}
		if (duration_parse(v, wait_ms, derr, sizeof(derr)) == -1) {
			snprintf(err, errlen, "wait: %s", derr);
			return -1;
		}
		if (*wait_ms > LOCALAPI_WAIT_MAX_MS)
			*wait_ms = LOCALAPI_WAIT_MAX_MS;
	} else if (n == -1) {
		snprintf(err, errlen, "wait: missing or malformed value");
		return -1;
	}
	if ((n = http_query_get(query, "index", v, sizeof(v))) == 0)
		return 0;
	if (n == -1) {
		snprintf(err, errlen, "index: missing or malformed value");
		return -1;
	}
	if (n > 1) {
		snprintf(err, errlen, "index given twice");
		return -1;
	}
	x = 0;
	for (i = 0; v[i] >= '0' && v[i] <= '9'; i++) {
		d = (uint64_t)(v[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			break;
		x = x * 10 + d;
	}
	if (i == 0 || v[i] != '\0') {
		snprintf(err, errlen, "index \"%s\" is not a whole number "
		    "below 2^64", v);
		return -1;
	}
	*index = x;
	*blocking = 1;
	return 0;
}

/*
 * Whether a /readyz query asks for leader-only readiness: its leader
 * key (the first, decoded) is "true" or "1".
 */
static int
query_leader(const char *query)
{
	char	 v[8];

	return http_query_get(query, "leader", v, sizeof(v)) > 0 &&
	    (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

/* GET /: who leads, by name. */
void
localapi_reply_root(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	const struct localapi_state	*d = arg;

	(void)req;
	reply_status(reply, 200, "name", elector_holder(d->el), NULL);
}

/* GET /healthz: the loop turns and a leader renews. */
void
localapi_reply_healthz(const struct http_request *req,
    struct httpd_reply *reply, void *arg)
{
	const struct localapi_state	*d = arg;
	char				 why[1024];

	(void)req;
	if (localapi_unhealthy(d, reply->now_ms, why, sizeof(why)) != NULL)
		reply_status(reply, 503, "status", "unhealthy", why);
	else
		reply_status(reply, 200, "status", "ok", NULL);
}

/* GET /readyz: the lease was read, and we lead if leader-only. */
void
localapi_reply_readyz(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	const struct localapi_state	*d = arg;
	const struct localapi_problem	*p = localapi_problem_top(d);

	/* ?leader=true: 503 on followers, whatever the config. */
	if (!d->ready)
		reply_status(reply, 503, "status", "not ready", p != NULL ?
		    p->message : "the lease has not been read yet");
	else if ((d->conf->readyz_leader_only ||
	    query_leader(req->query)) && (d->stopping ||
	    !elector_is_leader(d->el, reply->now_ms)))
		reply_status(reply, 503, "status", "not ready",
		    "not the leader");
	else
		reply_status(reply, 200, "status", "ready", NULL);
}
