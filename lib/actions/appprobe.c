/*
 * appprobe.c -- the application's health, probed as the kubelet probes
 * a container (appprobe.h).
 *
 * One probe runs at a time.  A repeating ev_timer starts one every
 * period, the first on the loop's next pass (never from appprobe_new, so
 * the callback never runs before the caller has its pointer); a second
 * ev_timer ends the probe at its bound, the timeout or the period when
 * that is shorter.  HTTP is api/httpget.c's GET on the daemon's curl
 * multi handle; TCP is a non-blocking connect watched for writability,
 * its SO_ERROR read and the socket closed at once, as the kubelet's
 * tcpSocket probe dials and closes.  Each address of a name is tried in
 * turn within the one bound, as Go's dialer does.
 *
 * Time here is the real monotonic clock (clock_raw_ms): the probe talks
 * to a real application whose sockets and curl's timeout count real
 * time, even in a test build whose daemon clock is bent.
 *
 * https:// is not probed: a pod-local application is reached over
 * loopback or the pod's own address, where the kubelet's own HTTPS
 * probe verifies nothing either.
 *
 * The callback may free the probe (appprobe_free); the object then goes
 * once the callback has returned (the redis rule: never free an object
 * under its own callback).
 */

#include <sys/types.h>
#include <sys/socket.h>

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "actions/appprobe.h"
#include "api/httpget.h"
#include "base/clock.h"
#include "base/netaddr.h"
#include "base/sock.h"
#include "base/xmalloc.h"

/* The User-Agent the daemon's API client sends too. */
#define USER_AGENT	"leaderd/" LEADERD_VERSION
#define HOST_MAX	256		/* a host name's bytes, with the NUL */

enum probe_kind {
	PROBE_HTTP,
	PROBE_TCP
};

struct appprobe {
	struct ev_loop	*loop;			/* borrowed */
	struct curlev	*cv;			/* borrowed */
	appprobe_cb	 cb;
	void		*arg;			/* for cb */
	enum probe_kind	 kind;
	char		 url[APPPROBE_URL_MAX + 16]; /* HTTP: curl's URL */
	char		 host[HOST_MAX];	/* TCP: the host to resolve */
	int		 port;			/* TCP: its port */
	uint64_t	 bound_ms;		/* min(timeout, period) */
	ev_timer	 period;		/* starts a probe; data = p */
	ev_timer	 deadline;		/* ends one; data = p */
	int		 running;		/* a probe is under way */
	uint64_t	 start_ms;		/* its start, clock_raw_ms */
	struct httpget	*get;			/* HTTP: the GET running */
	ev_io		 io;			/* TCP: connect; data = p */
	int		 fd;			/* TCP: its socket, or -1 */
	struct sockaddr_storage ss[SOCK_ADDRS_MAX]; /* TCP: the addresses */
	socklen_t	 sslen[SOCK_ADDRS_MAX];	/* and their lengths */
	int		 naddr;			/* how many */
	int		 iaddr;			/* the one being tried */
	int		 depth;			/* nested callbacks */
	int		 dead;			/* freed from a callback */
};

/* Stop whatever the running probe uses; no callback. */
static void
abort_probe(struct appprobe *p)
{
	ev_timer_stop(p->loop, &p->deadline);
	ev_io_stop(p->loop, &p->io);
	if (p->fd != -1) {
		close(p->fd);
		p->fd = -1;
	}
	httpget_cancel(p->get);
	p->get = NULL;
	p->running = 0;
}

/*
 * End the running probe and report it.  Returns -1 if the callback freed
 * p (then p must not be touched), 0 otherwise.
 */
static int
finish(struct appprobe *p, int ok, const char *why)
{
	uint64_t	 now_ms = clock_raw_ms();

	abort_probe(p);
	p->depth++;
	p->cb(ok, now_ms - p->start_ms, why, p->arg);
	p->depth--;
	if (p->dead && p->depth == 0) {
		free(p);
		return -1;
	}
	return 0;
}

static int
finish_timed_out(struct appprobe *p)
{
	char	 why[64];

	snprintf(why, sizeof(why), "timed out after %llu ms",
	    (unsigned long long)p->bound_ms);
	return finish(p, 0, why);
}

/* strerror(e) as a short lowercase reason: "connection refused". */
static void
errno_text(int e, char *buf, size_t len)
{
	snprintf(buf, len, "%s", strerror(e));
	if (buf[0] != '\0' && isupper((unsigned char)buf[0]) &&
	    !isupper((unsigned char)buf[1]))
		buf[0] = (char)tolower((unsigned char)buf[0]);
}

static void
http_done_cb(const struct httpget_result *res, void *arg)
{
	struct appprobe	*p = arg;
	char		 why[32];

	p->get = NULL;		/* freed by httpget already */
	if (res->timed_out) {
		finish_timed_out(p);
		return;
	}
	if (res->status == 0) {
		finish(p, 0, res->why);
		return;
	}
	/* The kubelet's rule: 200 <= status < 400 is healthy. */
	snprintf(why, sizeof(why), "status %ld", res->status);
	finish(p, res->status >= 200 && res->status < 400, why);
}

/*
 * Connect to the addresses from p->iaddr on, until one is under way or
 * connected, or none is left; last is the errno of the previous address
 * (0 for none).  Reports unless a connect is under way.
 */
static void
tcp_try(struct appprobe *p, int last)
{
	const struct sockaddr	*sa;
	char			 why[128];
	int			 fd;

	for (; p->iaddr < p->naddr; p->iaddr++) {
		sa = (const struct sockaddr *)&p->ss[p->iaddr];
		if ((fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0)) == -1) {
			last = errno;
			continue;
		}
		if (connect(fd, sa, p->sslen[p->iaddr]) == 0) {
			close(fd);
			finish(p, 1, "connected");
			return;
		}
		if (errno == EINPROGRESS) {
			p->fd = fd;
			ev_io_set(&p->io, fd, EV_WRITE);
			ev_io_start(p->loop, &p->io);
			return;
		}
		last = errno;
		close(fd);
	}
	errno_text(last != 0 ? last : ECONNREFUSED, why, sizeof(why));
	finish(p, 0, why);
}

static void
tcp_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct appprobe	*p = w->data;
	socklen_t	 len = sizeof(int);
	int		 soerr = 0;

	(void)revents;
	ev_io_stop(loop, &p->io);
	if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == -1)
		soerr = errno;
	close(p->fd);
	p->fd = -1;
	if (soerr == 0) {
		finish(p, 1, "connected");
		return;
	}
	p->iaddr++;
	tcp_try(p, soerr);
}

static void
start_probe(struct appprobe *p)
{
	char	 err[256], why[HOST_MAX + 300];

	p->running = 1;
	p->start_ms = clock_raw_ms();
	ev_timer_set(&p->deadline, (double)p->bound_ms / 1000.0, 0.);
	ev_timer_start(p->loop, &p->deadline);
	if (p->kind == PROBE_HTTP) {
		if ((p->get = httpget_start(p->cv, p->url, p->bound_ms,
		    USER_AGENT, http_done_cb, p, err, sizeof(err))) == NULL)
			finish(p, 0, err);
		return;
	}
	/*
	 * The configuration allows only loopback and pod-local hosts, so
	 * this resolves locally: an IP literal never reaches a resolver,
	 * "localhost" is both loopbacks, and another name is a getaddrinfo
	 * (AI_NUMERICSERV) answered from /etc/hosts.  Resolved at each
	 * probe, as the kubelet dials.
	 */
	if ((p->naddr = sock_tcp_addrs(p->host, p->port, p->ss, p->sslen,
	    SOCK_ADDRS_MAX, err, sizeof(err))) == -1) {
		snprintf(why, sizeof(why), "cannot resolve %s: %s", p->host,
		    err);
		finish(p, 0, why);
		return;
	}
	p->iaddr = 0;
	tcp_try(p, 0);
}

static void
period_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct appprobe	*p = w->data;

	(void)loop;
	(void)revents;
	/*
	 * Only when the bound is the period and this timer came first: the
	 * probe is abandoned as it would have been a moment later.
	 */
	if (p->running && finish_timed_out(p) == -1)
		return;
	start_probe(p);
}

static void
deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct appprobe	*p = w->data;

	(void)loop;
	(void)revents;
	if (p->running)
		finish_timed_out(p);
}

struct appprobe *
appprobe_new(struct ev_loop *loop, struct curlev *cv,
    const struct appprobe_config *conf, appprobe_cb cb, void *arg,
    char *err, size_t errlen)
{
	struct appprobe	*p;
	char		 scheme[16], host[HOST_MAX], why[256];
	const char	*path;
	int		 port, n;

	if (conf->period_ms == 0 || conf->timeout_ms == 0) {
		snprintf(err, errlen, "the probe's period and timeout must "
		    "be more than 0");
		return NULL;
	}
	if (netaddr_url_split(conf->url, scheme, sizeof(scheme), host,
	    sizeof(host), &port, &path, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: %s", conf->url, why);
		return NULL;
	}
	if (strcmp(scheme, "http") != 0 && strcmp(scheme, "tcp") != 0) {
		snprintf(err, errlen, "%s: the scheme \"%s\" cannot be "
		    "probed; use http:// or tcp://", conf->url, scheme);
		return NULL;
	}
	if (strcmp(scheme, "tcp") == 0 && strcmp(path, "/") != 0) {
		snprintf(err, errlen, "%s: a tcp:// probe has no path; use "
		    "tcp://HOST:PORT", conf->url);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->loop = loop;
	p->cv = cv;
	p->cb = cb;
	p->arg = arg;
	p->fd = -1;
	p->bound_ms = conf->timeout_ms < conf->period_ms ? conf->timeout_ms :
	    conf->period_ms;
	if (strcmp(scheme, "http") == 0) {
		p->kind = PROBE_HTTP;
		/* Rebuilt from the parts, so curl reads what was vetted. */
		n = snprintf(p->url, sizeof(p->url), "http://%s%s%s:%d%s",
		    strchr(host, ':') != NULL ? "[" : "", host,
		    strchr(host, ':') != NULL ? "]" : "", port, path);
		if (n < 0 || (size_t)n >= sizeof(p->url)) {
			snprintf(err, errlen, "%s: the URL is too long",
			    conf->url);
			free(p);
			return NULL;
		}
	} else {
		p->kind = PROBE_TCP;
		snprintf(p->host, sizeof(p->host), "%s", host);
		p->port = port;
	}
	ev_init(&p->deadline, deadline_cb);
	p->deadline.data = p;
	ev_init(&p->io, tcp_io_cb);
	p->io.data = p;
	ev_timer_init(&p->period, period_cb, 0.,
	    (double)conf->period_ms / 1000.0);
	p->period.data = p;
	ev_timer_start(loop, &p->period);
	return p;
}

void
appprobe_free(struct appprobe *p)
{
	if (p == NULL)
		return;
	abort_probe(p);
	ev_timer_stop(p->loop, &p->period);
	if (p->depth > 0) {
		/* From the callback: finish() frees p once it returns. */
		p->dead = 1;
		return;
	}
	free(p);
}
