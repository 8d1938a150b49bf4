/*
 * localapi_int.h -- what localapi.c (the answers) and localapi_routes.c
 * (the route table) share: the handlers the table names, each with the
 * election's struct localapi_state as arg; private to server/.
 */

#ifndef LOCALAPI_INT_H
#define LOCALAPI_INT_H

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

/* GET /readyz: the lease was read, and we lead if leader-only. */
void	localapi_reply_readyz(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

#endif /* LOCALAPI_INT_H */
