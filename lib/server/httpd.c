/*
 * httpd.c -- the local HTTP/1.1 server on the daemon's libev loop: its
 * listeners, accept and admission, the caps, and the streams' keep-alive.
 * One connection's life is httpd_conn.c's; what goes out is
 * httpd_reply.c's.
 *
 * Listeners accept a few connections per wakeup (redis'
 * max_new_conns_per_cycle).  At HTTPD_MAX_CONNS the connection that has
 * waited longest in its current phase (idle since its last reply, or in
 * a request since its first byte) is closed to make room, so a flood of
 * idle or slowloris connections cannot lock out a probe (F24).  On
 * EMFILE/ENFILE accept pauses until a connection closes (OpenSMTPD
 * control_accept).
 *
 * Waiting requests and streams neither count against HTTPD_MAX_CONNS
 * nor can be evicted: each has its own cap, so a flood of idle or slow
 * connections and a full set of streams still leave room for a probe.
 */

#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/netaddr.h"
#include "base/sock.h"
#include "base/xmalloc.h"
#include "server/httpd_int.h"

#define HTTPD_PEER_MAX_STR	"8"	/* HTTPD_PEER_MAX, for messages */
#define ACCEPT_PER_CYCLE	16	/* connections accepted per wakeup */
#define ACCEPT_RETRY_S		1.0	/* retry accept after EMFILE */
#define WARN_EVERY_S		60.0	/* repeat accept warnings this often */
#define STREAMS_DEFAULT		1024	/* streams, and waiting requests */
#define STREAMS_FLOOR		64	/* httpd_set_max_streams: not below */

static int	listen_tcp(struct httpd *, const char *, int, char *, size_t);

static void
pause_accept(struct httpd *h)
{
	int	 i;

	for (i = 0; i < h->nls; i++)
		ev_io_stop(h->loop, &h->ls[i].io);
	h->paused = 1;
}

void
httpd_resume_accept(struct httpd *h)
{
	int	 i;

	if (!h->paused)
		return;
	ev_timer_stop(h->loop, &h->retry);
	for (i = 0; i < h->nls; i++)
		ev_io_start(h->loop, &h->ls[i].io);
	h->paused = 0;
}

static void
retry_cb(struct ev_loop *loop, struct ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	httpd_resume_accept(w->data);
}

/* Whether an accept problem may be logged now (once a minute at most). */
static int
may_warn(struct httpd *h)
{
	ev_tstamp	 now = ev_now(h->loop);

	if (h->warned_at != 0 && now - h->warned_at < WARN_EVERY_S)
		return 0;
	h->warned_at = now;
	return 1;
}

/* Close the connection longest in its current phase, to make room. */
static void
evict_oldest(struct httpd *h)
{
	struct httpd_conn	*c, *old = NULL;

	for (c = h->conns; c != NULL; c = c->next)
		if (c->kind == CONN_PLAIN &&
		    (old == NULL || c->phase_at <= old->phase_at))
			old = c;
	if (old != NULL) {
		log_debug("http: %d connections; closing the oldest",
		    h->nconns);
		httpd_conn_close(old);
	}
}

/* Whether ss is a loopback peer (netaddr.h); a unix socket peer is. */
static int
peer_is_loopback(const struct sockaddr_storage *ss)
{
	struct netaddr_ip	 ip;

	if (netaddr_from_sockaddr((const struct sockaddr *)ss, &ip,
	    NULL) == -1)
		return 1;
	return netaddr_ip_loopback(&ip);
}

static int
same_peer(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		    ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
	    &((const struct sockaddr_in6 *)b)->sin6_addr,
	    sizeof(struct in6_addr)) == 0;
}

/*
 * Whether to refuse a new connection from a peer off the loopback (a
 * kubelet probe, or another pod when the probes listener is exposed):
 * each such peer may hold HTTPD_PEER_MAX connections, and all of them
 * together half the cap, so local clients always keep room (M1).
 */
static int
remote_refused(struct httpd *h, const struct sockaddr_storage *peer)
{
	struct httpd_conn	*c;
	int			 same = 0, all = 0;

	for (c = h->conns; c != NULL; c = c->next) {
		if (!c->remote)
			continue;
		all++;
		if (same_peer(&c->peer, peer))
			same++;
	}
	if (same < HTTPD_PEER_MAX && all < h->max_conns / 2)
		return 0;
	if (may_warn(h))
		log_warnx("refusing a connection from a non-loopback peer: "
		    "%s", same >= HTTPD_PEER_MAX ? "it has "
		    HTTPD_PEER_MAX_STR " open already" : "non-loopback peers "
		    "hold half the connection slots");
	return 1;
}

static void
accept_cb(struct ev_loop *loop, struct ev_io *w, int revents)
{
	struct httpd_listener	*l = w->data;
	struct httpd		*h = l->h;
	struct sockaddr_storage	 peer;
	socklen_t		 plen;
	int			 i, fd, one = 1, remote;

	(void)revents;
	for (i = 0; i < ACCEPT_PER_CYCLE; i++) {
		plen = sizeof(peer);
		fd = accept4(l->fd, (struct sockaddr *)&peer, &plen,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			switch (errno) {
			case EINTR:
			case ECONNABORTED:
			case EPROTO:
				continue;
			case EAGAIN:
#if EAGAIN != EWOULDBLOCK
			case EWOULDBLOCK:
#endif
				return;
			case EMFILE:
			case ENFILE:
			case ENOBUFS:
			case ENOMEM:
				if (may_warn(h))
					log_warn("accept (pausing the local "
					    "API)");
				pause_accept(h);
				ev_timer_set(&h->retry, ACCEPT_RETRY_S, 0.);
				ev_timer_start(loop, &h->retry);
				return;
			default:
				log_warn("accept");
				return;
			}
		}
		remote = !l->is_unix && !peer_is_loopback(&peer);
		if (remote && remote_refused(h, &peer)) {
			close(fd);
			continue;
		}
		if (h->nconns - h->nstreams - h->nwaits >= h->max_conns) {
			if (may_warn(h))
				log_warnx("%d local API connections open; "
				    "closing the oldest to make room",
				    h->max_conns);
			evict_oldest(h);
		}
		if (!l->is_unix)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
			    sizeof(one));
		httpd_conn_new(h, fd, l);
		if (remote) {
			h->conns->remote = 1;	/* the newest is first */
			h->conns->peer = peer;
		}
	}
}

static void
ping_cb(struct ev_loop *loop, struct ev_timer *w, int revents)
{
	struct httpd		*h = w->data;
	struct httpd_conn	*c, *next;

	(void)loop;
	(void)revents;
	for (c = h->conns; c != NULL; c = next) {
		next = c->next;
		if (c->kind == CONN_STREAM && c->ping != NULL)
			httpd_stream_queue(c, c->ping, strlen(c->ping));
	}
}

/*
 * The connection cap: HTTPD_MAX_CONNS, or fewer when the open-file
 * limit would not leave HTTPD_FD_RESERVE descriptors for the API client
 * (its connections, the CA and token files) and the listeners; a local
 * flood must never starve the renew (L2).
 */
static int
conn_cap(void)
{
	struct rlimit	 rl;
	rlim_t		 cap;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= (rlim_t)HTTPD_MAX_CONNS + HTTPD_FD_RESERVE)
		return HTTPD_MAX_CONNS;
	cap = rl.rlim_cur > HTTPD_FD_RESERVE + HTTPD_MIN_CONNS ?
	    rl.rlim_cur - HTTPD_FD_RESERVE : HTTPD_MIN_CONNS;
	log_warnx("open-file limit %llu: local API connections at most %d, "
	    "keeping %d descriptors for the API client",
	    (unsigned long long)rl.rlim_cur, (int)cap, HTTPD_FD_RESERVE);
	return (int)cap;
}

struct httpd *
httpd_new(struct ev_loop *loop, const struct httpd_route *routes)
{
	struct httpd	*h;

	h = xcalloc(1, sizeof(*h));
	h->loop = loop;
	h->routes = routes;
	h->tcp_port = -1;
	h->max_conns = conn_cap();
	ev_init(&h->retry, retry_cb);
	h->retry.data = h;
	h->max_streams = STREAMS_DEFAULT;
	ev_init(&h->ping, ping_cb);
	h->ping.repeat = HTTPD_PING_MS / 1000.0;
	h->ping.data = h;
	return h;
}

static void
add_listener(struct httpd *h, int fd, int is_unix)
{
	struct httpd_listener	*l = &h->ls[h->nls++];

	l->h = h;
	l->fd = fd;
	l->is_unix = is_unix;
	ev_io_init(&l->io, accept_cb, fd, EV_READ);
	l->io.data = l;
	if (!h->paused)
		ev_io_start(h->loop, &l->io);
}

int
httpd_listen_tcp(struct httpd *h, const char *hostport, char *err,
    size_t errlen)
{
	return listen_tcp(h, hostport, 0, err, errlen);
}

int
httpd_listen_probes(struct httpd *h, const char *hostport, char *err,
    size_t errlen)
{
	return listen_tcp(h, hostport, HTTPD_ONLY_PROBES, err, errlen);
}

int
httpd_listen_metrics(struct httpd *h, const char *hostport, char *err,
    size_t errlen)
{
	return listen_tcp(h, hostport, HTTPD_ONLY_METRICS, err, errlen);
}

static int
listen_tcp(struct httpd *h, const char *hostport, int only, char *err,
    size_t errlen)
{
	struct sockaddr_storage	 ss;
	struct sock_bound	 b[SOCK_ADDRS_MAX];
	struct httpd_listener	*l;
	socklen_t		 sslen;
	char			 skipped[256], host[256], serv[16], why[128];
	int			 i, n;

	if (h->nls >= LISTEN_MAX) {
		snprintf(err, errlen, "%s: too many listeners", hostport);
		return -1;
	}
	if ((n = sock_listen_tcp(hostport, b, LISTEN_MAX - h->nls, skipped,
	    sizeof(skipped), err, errlen)) == -1)
		return -1;
	if (skipped[0] != '\0')
		log_info("%s: skipped %s", hostport, skipped);
	/* The configured host, without port or brackets. */
	if (netaddr_split(hostport, 0, host, sizeof(host), serv, sizeof(serv),
	    why, sizeof(why)) == -1)
		host[0] = '\0';
	for (i = 0; i < n; i++) {
		log_info("listening on %s%s", b[i].name,
		    only == HTTPD_ONLY_PROBES ? " (probes only)" :
		    only == HTTPD_ONLY_METRICS ? " (metrics only)" : "");
		if (h->tcp_port == -1 && !only)
			h->tcp_port = b[i].port;
		add_listener(h, b[i].fd, 0);
		l = &h->ls[h->nls - 1];
		l->only = only;
		sslen = sizeof(ss);
		l->loopback = getsockname(b[i].fd, (struct sockaddr *)&ss,
		    &sslen) == 0 && (ss.ss_family == AF_INET ||
		    ss.ss_family == AF_INET6) && peer_is_loopback(&ss);
		snprintf(l->host, sizeof(l->host), "%s", host);
	}
	return 0;
}

int
httpd_tcp_port(const struct httpd *h)
{
	return h->tcp_port;
}

int
httpd_listen_unix(struct httpd *h, const char *path, char *err,
    size_t errlen)
{
	int	 fd;

	if (h->nls >= LISTEN_MAX || h->unix_path != NULL) {
		snprintf(err, errlen, "%s: one unix socket only", path);
		return -1;
	}
	if ((fd = sock_listen_unix(path, &h->unix_dev, &h->unix_ino, err,
	    errlen)) == -1)
		return -1;
	h->unix_path = xstrdup(path);
	log_info("listening on unix:%s", path);
	add_listener(h, fd, 1);
	return 0;
}

int
httpd_conns(const struct httpd *h)
{
	return h->nconns;
}

/*
 * Streams and waiting requests, n of each at most, beside the request
 * connections' cap, must leave HTTPD_FD_RESERVE descriptors free under
 * the open-file limit, as conn_cap does for the connections (L2); never
 * lowered below STREAMS_FLOOR (or n, if smaller), the old default.
 */
void
httpd_set_max_streams(struct httpd *h, int n)
{
	struct rlimit	 rl;
	long long	 room;

	if (n < 0)
		n = 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		room = ((long long)rl.rlim_cur - HTTPD_FD_RESERVE -
		    h->max_conns) / 2;
		if (room < STREAMS_FLOOR)
			room = STREAMS_FLOOR;
		if (n > room) {
			log_warnx("open-file limit %llu: at most %lld streams "
			    "and %lld waiting requests, not listen.max_streams "
			    "%d; raise the limit (ulimit -n) to %lld for %d",
			    (unsigned long long)rl.rlim_cur, room, room, n,
			    2LL * n + HTTPD_FD_RESERVE + h->max_conns, n);
			n = (int)room;
		}
	}
	h->max_streams = n;
}

int
httpd_streams(const struct httpd *h)
{
	return h->nstreams;
}

void
httpd_set_streams_cb(struct httpd *h, uint32_t channels,
    httpd_streams_cb cb, void *arg)
{
	h->client_channels = channels;
	h->streams_cb = cb;
	h->streams_arg = arg;
}

void
httpd_stream_send(struct httpd *h, const char *data, size_t len)
{
	httpd_stream_send_on(h, 0, data, len);
}

void
httpd_stream_send_on(struct httpd *h, int channel, const char *data,
    size_t len)
{
	struct httpd_conn	*c, *next;

	for (c = h->conns; c != NULL; c = next) {
		next = c->next;
		if (c->kind == CONN_STREAM && c->channel == channel)
			httpd_stream_queue(c, data, len);
	}
}

void
httpd_wake(struct httpd *h)
{
	struct httpd_conn	*c, *next;

	for (c = h->conns; c != NULL; c = next) {
		next = c->next;
		if (c->kind == CONN_WAIT)
			httpd_conn_answer(c, 0);
	}
}

void
httpd_free(struct httpd *h)
{
	struct httpd_conn	*c, *next;
	int			 i;

	if (h == NULL)
		return;
	h->paused = 0;		/* no resume from httpd_conn_close */
	h->streams_cb = NULL;	/* nor news of the streams it closes */
	for (c = h->conns; c != NULL; c = next) {
		next = c->next;
		if (c->kind == CONN_WAIT)
			httpd_conn_answer(c, 1);
	}
	while ((c = h->conns) != NULL) {
		/* What the socket takes now is delivered after close. */
		if (httpd_out_pending(c) > 0 && !c->overflow)
			httpd_conn_flush(c);
		if (c->kind == CONN_STREAM)
			shutdown(c->fd, SHUT_WR);
		httpd_conn_close(c);
	}
	ev_timer_stop(h->loop, &h->ping);
	ev_timer_stop(h->loop, &h->retry);
	for (i = 0; i < h->nls; i++) {
		ev_io_stop(h->loop, &h->ls[i].io);
		close(h->ls[i].fd);
	}
	if (h->unix_path != NULL)
		sock_unlink_unix(h->unix_path, h->unix_dev, h->unix_ino);
	free(h->unix_path);
	free(h);
}
