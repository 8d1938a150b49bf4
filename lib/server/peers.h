/*
 * peers.h -- the answers of the peer sidecars leaderd stands in for
 * (config/compat.h), in their bytes, for the local API's route table.
 * Each handler's arg is the struct localapi_state; each peer's are in
 * peer_PEER.c.  Pure: no I/O.
 */

#ifndef PEERS_H
#define PEERS_H

#include <stddef.h>
#include <stdint.h>

#include "codec/http_parse.h"
#include "server/httpd.h"
#include "server/localapi.h"

/*
 * classic: {"name":"<holder>"} without a newline, as text/plain (Go's
 * net/http sniffs the untyped body so), to every path and method.
 */
void	peer_classic_root(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/*
 * vapor: {"is_leader":B,"leader":"<holder>","node":"<identity>",
 * "timestamp":"<now, RFC 3339 UTC to the second>"} without a newline,
 * as application/json, to every path and method.  is_leader only while
 * our claim holds.
 */
void	peer_vapor_root(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/*
 * await: client-go's Check(2s) as k8s-await-election's status endpoint
 * answers it, to every path and method: 200 {"status": "ok"}, or 500
 * {"status": "expired"} while the record names us but has not changed
 * for lease_duration + 2s; text/plain (sniffed), no newline.
 */
void	peer_await_root(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/*
 * nais: nais/elector's result, {"name":"<holder>","last_update":"<RFC
 * 3339 UTC, to the second>"} with both fields omitted while empty ({}
 * before the first read of the lock), application/json, Cache-Control:
 * no-cache, no newline, to every path and method but /sse.
 */
void	peer_nais_root(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/*
 * nais's own routes (localapi_routes.c puts them in place of leaderd's):
 * /sse, its result as server-sent events ("data: <result>\n\n" at once,
 * then on every change of who leads, chunked, no keep-alive comments, on
 * LOCALAPI_PEER_CHANNEL), and on every listener but the metrics one
 * /healthz and /readyz and the checks below them as controller-runtime
 * v0.23's healthz.Handler answers them: healthz checks "manager" (the
 * election loop turns), readyz "candidate" (the pod was read) and
 * "official" (the lock was read).
 */
extern const struct httpd_route peer_nais_routes[];

/*
 * Take nais's result from the lock last read (its holder; a lock found
 * missing changes nothing, as nais reports the last record it read until
 * it reads another) into st->peer_*, and return the /sse event if the
 * holder changed, else NULL; the caller frees it.
 */
char	*peer_nais_event(struct localapi_state *st, uint64_t now_ms,
	    int64_t wall_us, size_t *len);

#endif /* PEERS_H */
