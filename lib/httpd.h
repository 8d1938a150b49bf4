/*
 * httpd.h -- the local HTTP/1.1 server, on TCP and on a unix socket.
 *
 * Non-blocking, on the daemon's libev loop; it never blocks the
 * election.  Limits: a cap on connections (HTTPD_MAX_CONNS, lowered so
 * that HTTPD_FD_RESERVE descriptors stay free under RLIMIT_NOFILE; past
 * it the oldest connection is closed; accept pauses on EMFILE), an idle timeout, a cap on buffered output (a client that
 * never reads is dropped), and http_parse's size limits.  Routing is the
 * caller's: httpd calls the handler with each complete request.
 */

#ifndef HTTPD_H
#define HTTPD_H

#include <stddef.h>
#include <ev.h>

#include "http_parse.h"

#define HTTPD_MAX_CONNS		256	/* open connections, all listeners */
#define HTTPD_FD_RESERVE	32	/* descriptors kept from local clients */
#define HTTPD_MIN_CONNS		8	/* the cap never goes below this */
#define HTTPD_PEER_MAX		8	/* connections per non-loopback peer */
#define HTTPD_IDLE_MS		10000	/* idle or slow connection timeout */
#define HTTPD_OUT_MAX		65536	/* unsent reply bytes per connection */

struct httpd_reply {
	int		 status;	/* 200, 404, ... */
	const char	*content_type;	/* static; "application/json" */
	char		*body;		/* caller-allocated; httpd frees it */
	size_t		 len;		/* body length */
	const char	*allow;		/* Allow header for a 405, or NULL */
};

/*
 * Fill *reply for req.  Called from the loop; must not block.
 */
typedef void (*httpd_handler_cb)(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

struct httpd;

struct httpd	*httpd_new(struct ev_loop *loop, httpd_handler_cb handler,
	    void *arg);

/*
 * Listen on "host:port" ("[::1]:4040" for IPv6; port 0 picks one).
 * Returns 0 or -1 with err.
 */
int	httpd_listen_tcp(struct httpd *h, const char *hostport, char *err,
	    size_t errlen);

/*
 * Listen on "host:port" for the kubelet's probes only: GET and HEAD of
 * /healthz and /readyz go to the handler; any other path gets 404
 * there, so the application API (/leader, ...) stays on the loopback
 * and unix listeners.  Returns 0 or -1 with err.
 */
int	httpd_listen_probes(struct httpd *h, const char *hostport, char *err,
	    size_t errlen);

/* The TCP port actually bound (useful with port 0), or -1. */
int	httpd_tcp_port(const struct httpd *h);

/*
 * Listen on the unix socket path with mode 0660.  If something answers
 * on path already, refuse (another daemon is live); a stale socket file
 * is replaced; a path that exists and is not a socket is an error.
 * Returns 0 or -1 with err.
 */
int	httpd_listen_unix(struct httpd *h, const char *path, char *err,
	    size_t errlen);

/* Number of open client connections. */
int	httpd_conns(const struct httpd *h);

/* Close every connection and listener, unlink the socket, free h. */
void	httpd_free(struct httpd *h);

#endif /* HTTPD_H */
