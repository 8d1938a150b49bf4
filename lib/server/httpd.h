/*
 * httpd.h -- the local HTTP/1.1 server, on TCP and on a unix socket.
 *
 * Non-blocking, on the daemon's libev loop; it never blocks the
 * election.  Limits: a cap on request connections (HTTPD_MAX_CONNS,
 * lowered so that HTTPD_FD_RESERVE descriptors stay free under
 * RLIMIT_NOFILE; past it the oldest is closed; accept pauses on EMFILE),
 * an idle timeout, a cap on buffered output (a client that never reads
 * is dropped), and http_parse's size limits.  Routing is a table the
 * caller gives (struct httpd_route): httpd answers from it a path it
 * does not name (404), another method (405) and a local-only path asked
 * from off the loopback (403), and calls the route's handler with every
 * other complete request.
 *
 * Two kinds of long-lived replies, each under its own cap (see
 * httpd_set_max_streams), outside the request connections' cap and
 * exempt from the idle timeout: streams (headers and a first body, then
 * whatever httpd_stream_send broadcasts, until the client or httpd
 * closes) and waiting requests (answered later, when httpd_wake finds
 * the handler ready to answer, or when their wait ends).
 */

#ifndef HTTPD_H
#define HTTPD_H

#include <stddef.h>
#include <stdint.h>
#include <ev.h>

#include "codec/http_parse.h"

#define HTTPD_MAX_CONNS		256	/* open request connections, all listeners */
#define HTTPD_FD_RESERVE	32	/* descriptors kept from local clients */
#define HTTPD_MIN_CONNS		8	/* the cap never goes below this */
#define HTTPD_PEER_MAX		8	/* connections per non-loopback peer */
#define HTTPD_STREAMS_REMOTE_DIV 2	/* non-loopback peers together: at most
					   1/2 of the streams, 1/2 of the waits */
#define HTTPD_IDLE_MS		10000	/* idle or slow connection timeout */
#define HTTPD_OUT_MAX		65536	/* unsent reply bytes per connection */
#define HTTPD_PING_MS		15000	/* a stream's keep-alive period */
#define HTTPD_HEADERS_MAX	256	/* extra header lines of one reply */

enum httpd_mode {
	HTTPD_REPLY_NOW,	/* answer at once (the default) */
	HTTPD_REPLY_STREAM,	/* start a stream: headers, body, then events */
	HTTPD_REPLY_WAIT	/* answer later: at httpd_wake or after wait_ms */
};

struct httpd_reply {
	int		 status;	/* 200, 404, ... */
	const char	*content_type;	/* static; "application/json" */
	char		*body;		/* caller-allocated; httpd frees it */
	size_t		 len;		/* body length */
	const char	*allow;		/* Allow header for a 405, or NULL */
	char		 headers[HTTPD_HEADERS_MAX]; /* more lines, each ending
						   in CRLF, or "" */
	enum httpd_mode	 mode;		/* how to answer */
	const char	*ping;		/* STREAM: static keep-alive bytes */
	uint64_t	 wait_ms;	/* WAIT: answer at most this late */
	int		 wait_over;	/* in: a waiting request's time is up,
					   answer now (mode is ignored) */
	int		 waited;	/* in: the request was waiting */
	int		 local;		/* in: came over the unix socket or a
					   TCP listener bound to loopback */
	uint64_t	 now_ms;	/* in: clock_mono_ms() at the answer */
	const char	*cache_control;	/* static; NULL: "no-store"; "": none */
	int		 channel;	/* STREAM: the broadcast it receives
					   (httpd_stream_send_on); 0 default */
	int		 chunked;	/* STREAM: chunked coding, kept alive,
					   as Go's net/http streams (HTTP/1.1
					   requests only) */
};

/*
 * Fill *reply for req.  Called from the loop; must not block.  reply is
 * zeroed but for the fields marked "in".  A waiting request is handed to the handler
 * again on each httpd_wake (it may wait on, until its first wait_ms
 * ends) and once more with wait_over set when its time is up.
 */
typedef void (*httpd_handler_cb)(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/* One path of a route table; a table ends with a NULL path. */
struct httpd_route {
	const char	*path;		/* exact: "/leader"; "/x/" and a star:
					   "/x/" and below; "*" any other */
	const char	*methods;	/* the Allow value: "GET, HEAD"; "*" any */
	int		 probes;	/* the listeners of some routes only
					   that serve it: HTTPD_ONLY_* bits
					   (1, the probes listener) */
	int		 local_only;	/* unix socket, loopback TCP only */
	const char	*what;		/* names it in the 403 if local_only */
	httpd_handler_cb handler;	/* answers what the table allows */
	void		*arg;		/* the handler's */
};

/* Listeners that serve some routes only (httpd_route_match's only). */
#define HTTPD_ONLY_PROBES	1	/* probes has this bit */
#define HTTPD_ONLY_METRICS	2	/* probes has this bit */

/*
 * The route of routes that answers a request for method and path on a
 * listener that serves some routes only (only: HTTPD_ONLY_PROBES or
 * HTTPD_ONLY_METRICS; 0 for all of them) or that is the unix socket or
 * bound to loopback (local).  Returns 0 and sets *route, or the
 * refusal's status (*route NULL) with its reason in why (whylen > 0;
 * the text of a JSON error) and, for a 405, the Allow value in *allow
 * (else NULL):
 * the first route whose path is the request's answers it; else the
 * first whose path, "/x/" and a star, takes it ("/x/" and below); else a
 * route whose path is "*", for every path the table does not name
 * (not on a listener of some routes only); one whose methods are "*"
 * answers every method.
 * 404 for a path the table does not name, or one such a listener
 * does not serve there (that reason names the ones it does); 405 for a
 * method the route does not list; 403 for a local-only route asked
 * over another listener.  Pure; never logs.
 */
int	httpd_route_match(const struct httpd_route *routes,
	    const char *method, const char *path, int only, int local,
	    const struct httpd_route **route, const char **allow, char *why,
	    size_t whylen);

struct httpd;

/*
 * A server on loop that answers each complete request from routes
 * (borrowed; the table, its handlers' args and loop must outlive it).
 * It listens nowhere until httpd_listen_* is called.  The connection
 * cap is set here from RLIMIT_NOFILE (logged when lowered).  Never
 * fails; free with httpd_free.
 */
struct httpd	*httpd_new(struct ev_loop *loop,
	    const struct httpd_route *routes);

/*
 * Listen on "host:port" ("[::1]:4040" for IPv6; port 0 picks one): a
 * name binds every address it has ("localhost": 127.0.0.1 and ::1), one
 * listener each, and an address the machine lacks is skipped with an
 * info line (see sock_listen_tcp).  Returns 0 or -1 with err.
 */
int	httpd_listen_tcp(struct httpd *h, const char *hostport, char *err,
	    size_t errlen);

/*
 * Listen on "host:port", as httpd_listen_tcp does, for the kubelet's
 * probes and Prometheus only: the routes marked probes (/healthz, /readyz and /metrics) are served
 * there; any other path gets 404 and a close, so the application API
 * (/leader, ...) stays on the loopback and unix listeners.  Requests
 * there are never local.  Returns 0 or -1 with err.
 */
int	httpd_listen_probes(struct httpd *h, const char *hostport, char *err,
	    size_t errlen);

/*
 * Listen on "host:port", as httpd_listen_tcp does, for Prometheus only:
 * the routes marked metrics (/metrics) are served there, any other path
 * gets 404 and a close.  Requests there are never local.  Returns 0 or
 * -1 with err.
 */
int	httpd_listen_metrics(struct httpd *h, const char *hostport, char *err,
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

/* Number of open client connections, streams and waiting ones included. */
int	httpd_conns(const struct httpd *h);

/*
 * Allow at most n streams and, apart, at most n waiting requests (0
 * turns both off); one more is answered 503 with a JSON error.  The
 * default is 1024.  Peers off the loopback together hold at most
 * n / HTTPD_STREAMS_REMOTE_DIV of each (512 of 1024), so that the other
 * half stays for this pod's clients (the unix socket, loopback peers).
 * n is lowered (and logged) where the open-file limit could not hold n
 * streams, n waiting requests and the connections' cap with
 * HTTPD_FD_RESERVE to spare, but never below 64.
 */
void	httpd_set_max_streams(struct httpd *h, int n);

/* Number of open streams. */
int	httpd_streams(const struct httpd *h);

/* Called with the number of the streams it counts each time it changes. */
typedef void (*httpd_streams_cb)(int n, void *arg);

/*
 * Have cb(n, arg) called when a stream from a local peer on one of
 * channels (httpd_reply.channel; a mask, bit N for channel N, N < 32)
 * opens or closes, n the number of such streams open (not while
 * httpd_free closes them).  A local peer is one on the unix socket or a
 * loopback TCP peer, on any listener; a peer off the loopback, and a
 * stream of another channel, never count.  cb may run in the middle of
 * httpd's work: it must not call into httpd; defer what it does to the
 * loop.
 */
void	httpd_set_streams_cb(struct httpd *h, uint32_t channels,
	    httpd_streams_cb cb, void *arg);

/*
 * Queue len bytes of data on every stream and send what the sockets
 * take now.  A stream whose unsent bytes would pass HTTPD_OUT_MAX is
 * closed (its client does not read).  data is copied.
 */
void	httpd_stream_send(struct httpd *h, const char *data, size_t len);

/*
 * The same for the streams started on channel (httpd_reply.channel);
 * httpd_stream_send is channel 0.
 */
void	httpd_stream_send_on(struct httpd *h, int channel, const char *data,
	    size_t len);

/* Hand every waiting request to the handler again (see above). */
void	httpd_wake(struct httpd *h);

/*
 * Answer the waiting requests as at the end of their wait, send what
 * the sockets take, close every connection and listener, unlink the
 * socket, free h.
 */
void	httpd_free(struct httpd *h);

#endif /* HTTPD_H */
