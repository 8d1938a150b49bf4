/*
 * localapi_int.h -- what localapi.c (the answers) and localapi_routes.c
 * (the route table) share: the handlers the table names, each with the
 * election's struct localapi_state as arg; private to server/.
 */

#ifndef LOCALAPI_INT_H
#define LOCALAPI_INT_H

#include <stdint.h>

#include "codec/http_parse.h"
#include "server/httpd.h"

/* GET /: who leads, by name. */
void	localapi_reply_root(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/* GET /leader and /leader/NAME, blocking with wait and index. */
void	localapi_reply_leader(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/* GET /leader/watch, /sse, /leader/NAME/watch: the election's stream. */
void	localapi_reply_watch(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/* GET /leaders: every election's /leader body, by name. */
void	localapi_reply_leaders(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/* GET /leaders/watch: every election's stream. */
void	localapi_reply_watch_all(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/* GET /healthz: the loop turns and a leader renews. */
void	localapi_reply_healthz(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/*
 * /leader's fields of what is wrong (localapi_problem.c), appended to b
 * at now_ms: "problem" (the most important, or null), "problems" (all
 * that hold, most important first), "confirmed_at" and "stale".
 */
struct buf;
struct localapi_state;
void	localapi_problem_json(const struct localapi_state *st,
	    uint64_t now_ms, struct buf *b);

/* GET /readyz: the lease was read, and we lead if leader-only. */
void	localapi_reply_readyz(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

#endif /* LOCALAPI_INT_H */
