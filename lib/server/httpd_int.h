/*
 * httpd_int.h -- what httpd.c, httpd_conn.c and httpd_reply.c share;
 * not for other modules.
 *
 * httpd.c owns the server: listeners, accept and admission, the caps,
 * the streams' keep-alive timer.  httpd_conn.c owns one connection:
 * read, parse, answer, write, close.  httpd_reply.c writes what goes out:
 * status lines, headers, JSON errors, a stream's start.
 */

#ifndef HTTPD_INT_H
#define HTTPD_INT_H

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>
#include <ev.h>

#include "codec/http_parse.h"
#include "server/httpd.h"

#define LISTEN_MAX		8	/* listeners per server */
#define CONN_IN_MAX		2048	/* read buffer per connection */

enum conn_kind {
	CONN_PLAIN,		/* requests and replies */
	CONN_WAIT,		/* a request waits for its answer */
	CONN_STREAM		/* a stream after its headers */
};

struct httpd_listener {
	struct httpd	*h;
	int		 fd;
	int		 is_unix;
	struct ev_io	 io;		/* io.data = this */
	char		 host[256];	/* configured TCP host, for Host checks */
	int		 only;		/* 0, or HTTPD_ONLY_*: some routes */
	int		 loopback;	/* TCP bound to a loopback address */
};

/*
 * What only a connection that reads requests needs: the parser and the
 * read buffer.  A stream's client has nothing more to say, so a stream
 * frees it (conn_run), and a stream's out buffer is freed once sent:
 * an idle stream holds struct httpd_conn alone (docs/performance.md,
 * "Cost at cluster scale").
 */
struct httpd_conn_rq {
	struct http_parser	 parser;
	char			 in[CONN_IN_MAX];
};

struct httpd_conn {
	struct httpd		*h;
	struct httpd_listener	*l;		/* accepted on */
	int			 fd;
	int			 remote;	/* a TCP peer off the loopback */
	struct sockaddr_storage	 peer;		/* its address, if remote */
	char			 local_ip[INET6_ADDRSTRLEN]; /* the
						   address it reached */
	int			 local_port;	/* and its port; 0 = not yet
						   asked (getsockname) */
	struct ev_io		 rio;		/* rio.data = this */
	struct ev_io		 wio;		/* wio.data = this */
	struct ev_timer		 timer;		/* idle / request deadline */
	struct httpd_conn_rq	*rq;		/* NULL once a stream */
	size_t			 inoff;		/* first byte not yet parsed */
	size_t			 inlen;		/* bytes in rq->in[] */
	char			*out;		/* unsent reply bytes */
	size_t			 outoff;
	size_t			 outlen;
	size_t			 outcap;
	int			 in_request;	/* a request has begun */
	int			 closing;	/* close once out is sent */
	int			 overflow;	/* out would pass HTTPD_OUT_MAX */
	int			 eof;		/* the peer sent EOF */
	int			 lingering;	/* reply sent, draining input */
	size_t			 drained;	/* bytes drained meanwhile */
	ev_tstamp		 phase_at;	/* opened, or last reply queued */
	enum conn_kind		 kind;		/* plain, waiting or stream */
	const char		*ping;		/* stream keep-alive, static */
	int			 channel;	/* stream: its broadcast */
	int			 chunked;	/* stream: chunked coding */
	struct httpd_conn	*prev, *next;
};

struct httpd {
	struct ev_loop		*loop;
	const struct httpd_route *routes;	/* borrowed */
	struct httpd_listener	 ls[LISTEN_MAX];
	int			 nls;
	int			 tcp_port;	/* first TCP listener, or -1 */
	char			*unix_path;	/* to unlink, or NULL */
	dev_t			 unix_dev;	/* the socket file we made */
	ino_t			 unix_ino;
	struct httpd_conn	*conns;
	int			 nconns;
	int			 max_conns;	/* HTTPD_MAX_CONNS or less */
	int			 paused;	/* accept is stopped */
	ev_tstamp		 warned_at;	/* last accept warning */
	struct ev_timer		 retry;		/* resume after EMFILE */
	int			 max_streams;	/* cap on streams, and on waits */
	int			 nstreams;	/* CONN_STREAM connections */
	int			 nwaits;	/* CONN_WAIT connections */
	int			 nremote_streams; /* those of peers off the */
	int			 nremote_waits;	/* loopback (c->remote) */
	struct ev_timer		 ping;		/* stream keep-alives */
	uint32_t		 client_channels; /* streams_cb counts these:
						   bit N, channel N */
	int			 nclients;	/* those streams from local peers */
	httpd_streams_cb	 streams_cb;	/* nclients changed */
	void			*streams_arg;
};

/* httpd.c */

/*
 * Start accepting again after a pause (a connection closed).  The one
 * call from httpd_conn.c back into httpd.c (lib/README.md says why).
 */
void	httpd_resume_accept(struct httpd *h);

/* httpd_conn.c */

/* A connection for fd, accepted on l; it goes first in h->conns. */
void	httpd_conn_new(struct httpd *h, int fd, struct httpd_listener *l);

/* Free c; the last thing any path does with a connection. */
void	httpd_conn_close(struct httpd_conn *c);

/* The request c waits with is due for an answer: finish it. */
void	httpd_conn_answer(struct httpd_conn *c, int wait_over);

/* Write what the socket takes.  Returns -1 on a write error. */
int	httpd_conn_flush(struct httpd_conn *c);

/*
 * c became a stream (opened 1) or a stream ends (opened 0): the counts,
 * the keep-alive timer, and streams_cb if the local clients' count on
 * its channel changed.
 */
void	httpd_stream_count(struct httpd_conn *c, int opened);

/* Queue len bytes on stream c and send; may close c. */
void	httpd_stream_queue(struct httpd_conn *c, const char *data,
	    size_t len);

/* httpd_reply.c */

/* Unsent reply bytes of c. */
size_t	httpd_out_pending(const struct httpd_conn *c);

/*
 * Queue hdr then body, both or neither; past HTTPD_OUT_MAX the
 * connection is marked to be dropped.  Returns 0 or -1.
 */
int	httpd_out_add(struct httpd_conn *c, const char *hdr, size_t hlen,
	    const char *body, size_t blen);

/*
 * Queue a whole reply: status line, headers (Cache-Control: cache, or
 * no-store if NULL, none if ""; Allow if allow is not NULL, then the
 * extra lines), and the body unless head.  keep: keep-alive,
 * else Connection: close.  Past HTTPD_OUT_MAX the connection is dropped.
 */
void	httpd_queue_reply(struct httpd_conn *c, int status, const char *ctype,
	    const char *cache, const char *allow, const char *extra,
	    const char *body, size_t len, int head, int keep);

/* The JSON error reply, with Connection: close, for status and why. */
void	httpd_queue_error(struct httpd_conn *c, int status, const char *why);

/*
 * Queue len bytes of a stream's body on c: as they are, or as one chunk
 * of a chunked stream.  Returns 0, or -1 past HTTPD_OUT_MAX (the
 * connection is then marked to be dropped).
 */
int	httpd_stream_add(struct httpd_conn *c, const char *data, size_t len);

/*
 * Start a stream on c with reply: headers without a length, then the
 * first body; c becomes a CONN_STREAM.  A chunked stream frames each of
 * its writes as one chunk (httpd_stream_queue).
 */
void	httpd_stream_start(struct httpd_conn *c,
	    const struct httpd_reply *reply);

#endif /* HTTPD_INT_H */
