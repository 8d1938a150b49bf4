/*
 * daemon_shards_http.c -- what a shard group shows (docs/shards.md):
 * GET /shards and its stream /shards/watch, run mode's LEADERD_SHARDS and
 * the group's gauges for GET /metrics, as daemon_http.c is the single
 * election's.  They report the shards we own, each only while
 * elector_is_leader says so; a shard being taken from the command first
 * is listed as releasing.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions.h"
#include "base/buf.h"
#include "base/xmalloc.h"
#include "codec/http_parse.h"
#include "codec/lease.h"
#include "config/config.h"
#include "core/elector.h"
#include "core/shard.h"
#include "daemon/daemon_int.h"
#include "daemon/daemon_shards_int.h"
#include "server/httpd.h"
#include "server/localapi.h"

/* Whether we hold shard s now (owned, or being let go). */
static int
held(const struct shards *sh, unsigned s, uint64_t now_ms)
{
	struct election	*e = daemon_shards_el(sh, s);

	return !sh->d->stopping && elector_is_leader(&e->el, now_ms);
}

/* Whether shard s is ours now, as /shards reports it. */
static int
owned(const struct shards *sh, unsigned s, uint64_t now_ms)
{
	return held(sh, s, now_ms) && !sh->letgo[s];
}

/* The /shards body at now_ms (index included). */
static void
shards_json(const struct shards *sh, uint64_t now_ms, struct buf *b)
{
	const char	*members[SHARD_MEMBERS_MAX];
	char		 token[LEASE_TOKEN_MAX];
	unsigned	 s, i, nm;
	int		 first = 1;

	nm = daemon_shards_live_members(sh, now_ms, members);
	buf_add(b, "{\"group\":", 9);
	buf_json_str(b, sh->group);
	buf_printf(b, ",\"count\":%u,\"identity\":", sh->n);
	buf_json_str(b, sh->d->conf->identity);
	buf_printf(b, ",\"is_member\":%s,\"members\":[",
	    daemon_shards_self_member(sh, now_ms) ? "true" : "false");
	for (i = 0; i < nm; i++) {
		if (i > 0)
			buf_add(b, ",", 1);
		buf_json_str(b, members[i]);
	}
	buf_add(b, "],\"owned\":[", 11);
	for (s = 0; s < sh->n; s++)
		if (owned(sh, s, now_ms)) {
			buf_printf(b, "%s%u", first ? "" : ",", s);
			first = 0;
		}
	buf_printf(b, "],\"releasing\":[");
	for (first = 1, s = 0; s < sh->n; s++)
		if (held(sh, s, now_ms) && sh->letgo[s]) {
			buf_printf(b, "%s%u", first ? "" : ",", s);
			first = 0;
		}
	buf_add(b, "],\"fencing_tokens\":{", 20);
	first = 1;
	for (s = 0; s < sh->n; s++) {
		if (!owned(sh, s, now_ms))
			continue;
		lease_fencing_token(&daemon_shards_el(sh, s)->el.observed,
		    token, sizeof(token));
		buf_printf(b, "%s\"%u\":", first ? "" : ",", s);
		buf_json_str(b, token);
		first = 0;
	}
	buf_printf(b, "},\"stopping\":%s,\"index\":%llu}",
	    sh->d->stopping ? "true" : "false",
	    (unsigned long long)sh->index);
}

/*
 * Run mode: the command's LEADERD_SHARDS, the shards owned now; a change
 * restarts it or sends it SIGHUP (shards.on_change).
 */
void
daemon_shards_run_var(struct shards *sh, uint64_t now_ms)
{
	struct daemon	*d = sh->d;
	struct buf	 b = { 0 };
	char		*var;
	size_t		 len;
	unsigned	 s;
	int		 first = 1;

	/* Stopping: the command is stopped anyway, not restarted. */
	if (d->cmd == NULL || d->el[0].act == NULL || d->stopping)
		return;
	buf_printf(&b, "LEADERD_SHARDS=");
	for (s = 0; s < sh->n; s++)
		if (owned(sh, s, now_ms)) {
			buf_printf(&b, "%s%u", first ? "" : ",", s);
			first = 0;
		}
	var = buf_steal(&b, &len);
	actions_set_var(d->el[0].act, var,
	    strcmp(d->conf->shards_on_change, "sighup") == 0);
	free(var);
}

/*
 * Whether what /shards says changed since it was last noted: then bump
 * the index, send the event to the streams and wake the blocking reads.
 */
void
daemon_shards_report(struct shards *sh, uint64_t now_ms)
{
	struct daemon	*d = sh->d;
	struct buf	 b = { 0 };
	char		*sig, *ev, *p;
	size_t		 len;

	/* The body but for its index: the state's signature. */
	shards_json(sh, now_ms, &b);
	sig = buf_steal(&b, &len);
	if ((p = strstr(sig, ",\"index\":")) != NULL)
		*p = '\0';
	if (sh->seen != NULL && strcmp(sig, sh->seen) == 0) {
		free(sig);
		return;
	}
	free(sh->seen);
	sh->seen = sig;
	sh->index++;
	daemon_shards_run_var(sh, now_ms);
	if (d->httpd == NULL)
		return;
	buf_add(&b, "data: ", 6);
	shards_json(sh, now_ms, &b);
	buf_add(&b, "\n\n", 2);
	ev = buf_steal(&b, &len);
	httpd_stream_send_on(d->httpd, DAEMON_SHARDS_CHANNEL, ev, len);
	free(ev);
	httpd_wake(d->httpd);
}

/* GET /shards, blocking with wait and index as /leader. */
static void
reply_shards(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	struct shards	*sh = arg;
	struct buf	 b = { 0 };
	uint64_t	 wait_ms, index;
	char		 err[256];
	int		 blocking;

	if (localapi_parse_wait(req->query, &blocking, &wait_ms, &index, err,
	    sizeof(err)) == -1) {
		buf_add(&b, "{\"error\":", 9);
		buf_printf(&b, "\"%s; write e.g. /shards?wait=30s&index=7\"",
		    err);
		buf_printf(&b, ",\"status\":400}\n");
		reply->status = 400;
		reply->content_type = "application/json";
		reply->body = buf_steal(&b, &reply->len);
		return;
	}
	/*
	 * No daemon_shards_report() here (httpd is in the middle of its
	 * work): a change by time alone is noted by the plan timer, armed
	 * at each claim's end, which bumps the index and wakes this read.
	 */
	if (blocking && index == sh->index && !reply->wait_over &&
	    wait_ms > 0) {
		reply->mode = HTTPD_REPLY_WAIT;
		reply->wait_ms = wait_ms;
		return;
	}
	snprintf(reply->headers, sizeof(reply->headers),
	    "X-Leaderd-Index: %llu\r\n", (unsigned long long)sh->index);
	shards_json(sh, reply->now_ms, &b);
	buf_add(&b, "\n", 1);
	reply->status = 200;
	reply->content_type = "application/json";
	reply->body = buf_steal(&b, &reply->len);
}

/* GET /shards/watch: an event now and on every change. */
static void
reply_shards_watch(const struct http_request *req, struct httpd_reply *reply,
    void *arg)
{
	struct shards	*sh = arg;
	struct buf	 b = { 0 };

	(void)req;
	reply->status = 200;
	reply->content_type = "text/event-stream";
	reply->mode = HTTPD_REPLY_STREAM;
	reply->ping = LOCALAPI_PING;
	reply->channel = DAEMON_SHARDS_CHANNEL;
	snprintf(reply->headers, sizeof(reply->headers),
	    "X-Leaderd-Index: %llu\r\n", (unsigned long long)sh->index);
	buf_add(&b, "data: ", 6);
	shards_json(sh, reply->now_ms, &b);
	buf_add(&b, "\n\n", 2);
	reply->body = buf_steal(&b, &reply->len);
}

struct httpd_route *
daemon_shards_routes(struct daemon *d, struct httpd_route *t)
{
	size_t	 n = 0;

	if (d->sh == NULL)
		return t;
	while (t[n].path != NULL)
		n++;
	t = xrealloc(t, (n + 3) * sizeof(*t));
	t[n++] = (struct httpd_route){ "/shards", "GET, HEAD", 0, 0, NULL,
	    reply_shards, d->sh };
	t[n++] = (struct httpd_route){ "/shards/watch", "GET, HEAD", 0, 0,
	    NULL, reply_shards_watch, d->sh };
	memset(&t[n], 0, sizeof(t[n]));
	return t;
}

void
daemon_shards_metrics(const struct daemon *d, uint64_t now_ms,
    struct buf *b)
{
	const struct shards	*sh = d->sh;
	const char		*members[SHARD_MEMBERS_MAX];
	unsigned		 s, n = 0;

	if (sh == NULL)
		return;
	for (s = 0; s < sh->n; s++)
		n += owned(sh, s, now_ms) ? 1 : 0;
	/* name: the member Lease's, as every leaderd_* series has one. */
	buf_printf(b, "# HELP leaderd_shards_owned Shards of the group this "
	    "instance owns now.\n# TYPE leaderd_shards_owned gauge\n"
	    "leaderd_shards_owned{group=\"%s\",name=\"%s\"} %u\n", sh->group,
	    d->el[0].metrics.name, n);
	buf_printf(b, "# HELP leaderd_shard_members Live members of the "
	    "group as this instance sees them.\n# TYPE "
	    "leaderd_shard_members gauge\nleaderd_shard_members{group=\"%s\","
	    "name=\"%s\"} %u\n", sh->group, d->el[0].metrics.name,
	    daemon_shards_live_members(sh, now_ms, members));
	buf_printf(b, "# HELP leaderd_shard_members_unconfirmed Member "
	    "Leases of the group naming a holder that this instance does not "
	    "count: never seen renewing, or held by another name than their "
	    "own.\n# TYPE leaderd_shard_members_unconfirmed gauge\n"
	    "leaderd_shard_members_unconfirmed{group=\"%s\",name=\"%s\"} %u\n",
	    sh->group, d->el[0].metrics.name, daemon_shards_unconfirmed(sh));
	buf_printf(b, "# HELP leaderd_shard_leases_skipped Leases with the "
	    "group's label that its last whole list skipped: not a shard or "
	    "member Lease of the group, or not one leaderd can read.\n"
	    "# TYPE leaderd_shard_leases_skipped gauge\n"
	    "leaderd_shard_leases_skipped{group=\"%s\",name=\"%s\"} %u\n",
	    sh->group, d->el[0].metrics.name, sh->skipped);
	buf_printf(b, "# HELP leaderd_shard_handovers_total Shards this "
	    "instance handed to another member to balance the group.\n"
	    "# TYPE leaderd_shard_handovers_total counter\n"
	    "leaderd_shard_handovers_total{group=\"%s\",name=\"%s\"} %u\n",
	    sh->group, d->el[0].metrics.name, sh->moves);
}
