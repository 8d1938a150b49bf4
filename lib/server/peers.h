/*
 * peers.h -- the answers of the peer sidecars leaderd stands in for
 * (config/compat.h), in their bytes, for the local API's route table.
 * Each handler's arg is the struct localapi_state; each peer's are in
 * peer_PEER.c.  Pure: no I/O.
 */

#ifndef PEERS_H
#define PEERS_H

#include "codec/http_parse.h"
#include "server/httpd.h"

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

#endif /* PEERS_H */
