/*
 * loadgen.c -- keep-alive HTTP/1.1 GETs as fast as a server answers
 * them, for make bench's CPU per /leader request (test/bench/speed.py):
 * a small wrk that needs nothing but libc.
 *
 *	loadgen [-c CONNS] [-d SECONDS] HOST PORT PATH
 *
 * Opens CONNS connections (default 50) to HOST:PORT and on each, over
 * and over, sends "GET PATH" and reads the whole answer (Content-Length
 * bodies only) before the next; one thread, epoll.  After SECONDS
 * (default 5) prints one line:
 *
 *	requests N errors E seconds S
 *
 * N answers read in full, E of them not 200 or cut short; exit 0, or 2
 * with a message for bad arguments or a connection refused at the start.
 */

#define _GNU_SOURCE

#include <sys/epoll.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CONNS_MAX	1024
#define INBUF		8192

struct conn {
	int	 fd;
	size_t	 have;			/* bytes in in */
	char	 in[INBUF];
};

static char	 req[1024];
static size_t	 reqlen;
static long	 nreq, nerr;

static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
dial(const struct sockaddr_in *sin)
{
	int	 fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	if (connect(fd, (const struct sockaddr *)sin, sizeof(*sin)) == -1) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

static int
send_req(struct conn *c)
{
	/* A request is small: the socket buffer always takes it whole. */
	return send(c->fd, req, reqlen, MSG_NOSIGNAL) == (ssize_t)reqlen ?
	    0 : -1;
}

/*
 * Consume whole answers at the front of c->in.  Returns 1 when one was
 * read (the next request is sent), 0 when more bytes are needed, -1 on
 * an answer we cannot read.
 */
static int
consume(struct conn *c)
{
	char	*end, *cl;
	size_t	 hlen, blen, total;

	c->in[c->have] = '\0';
	if ((end = strstr(c->in, "\r\n\r\n")) == NULL)
		return c->have + 1 >= sizeof(c->in) ? -1 : 0;
	hlen = (size_t)(end - c->in) + 4;
	if ((cl = strcasestr(c->in, "\r\nContent-Length:")) == NULL ||
	    cl > end)
		return -1;
	blen = strtoul(cl + 17, NULL, 10);
	total = hlen + blen;
	if (total >= sizeof(c->in))
		return -1;
	if (c->have < total)
		return 0;
	nreq++;
	if (strncmp(c->in, "HTTP/1.1 200 ", 13) != 0)
		nerr++;
	memmove(c->in, c->in + total, c->have - total);
	c->have -= total;
	return 1;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in	 sin;
	struct epoll_event	 ev, evs[64];
	struct conn		*conns;
	double			 dur = 5, t0, t1;
	int			 nconn = 50, ep, ch, i, n, r;
	ssize_t			 got;

	while ((ch = getopt(argc, argv, "c:d:")) != -1) {
		switch (ch) {
		case 'c':
			nconn = atoi(optarg);
			break;
		case 'd':
			dur = atof(optarg);
			break;
		default:
			goto usage;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 3 || nconn < 1 || nconn > CONNS_MAX || dur <= 0)
		goto usage;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)atoi(argv[1]));
	if (inet_pton(AF_INET, argv[0], &sin.sin_addr) != 1) {
		fprintf(stderr, "loadgen: %s: not an IPv4 address\n", argv[0]);
		return 2;
	}
	reqlen = (size_t)snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\n"
	    "Host: %s:%s\r\n\r\n", argv[2], argv[0], argv[1]);
	if (reqlen >= sizeof(req)) {
		fprintf(stderr, "loadgen: %s: path too long\n", argv[2]);
		return 2;
	}
	if ((conns = calloc((size_t)nconn, sizeof(*conns))) == NULL ||
	    (ep = epoll_create1(0)) == -1) {
		perror("loadgen");
		return 2;
	}
	for (i = 0; i < nconn; i++) {
		if ((conns[i].fd = dial(&sin)) == -1) {
			fprintf(stderr, "loadgen: connect to %s:%s: %s\n",
			    argv[0], argv[1], strerror(errno));
			return 2;
		}
		ev.events = EPOLLIN;
		ev.data.ptr = &conns[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
	}
	t0 = now_s();
	for (i = 0; i < nconn; i++)
		send_req(&conns[i]);
	while ((t1 = now_s()) < t0 + dur) {
		n = epoll_wait(ep, evs, 64, 100);
		for (i = 0; i < n; i++) {
			struct conn	*c = evs[i].data.ptr;

			if (c->fd == -1)
				continue;
			got = recv(c->fd, c->in + c->have,
			    sizeof(c->in) - 1 - c->have, 0);
			if (got == -1 && errno == EAGAIN)
				continue;
			if (got > 0) {
				c->have += (size_t)got;
				while ((r = consume(c)) == 1)
					if (send_req(c) == -1) {
						r = -1;
						break;
					}
				if (r == 0)
					continue;
			}
			/* Closed, failed or unreadable: count it, drop it. */
			nerr++;
			close(c->fd);
			c->fd = -1;
		}
	}
	printf("requests %ld errors %ld seconds %.3f\n", nreq, nerr, t1 - t0);
	return 0;
usage:
	fprintf(stderr, "usage: loadgen [-c CONNS] [-d SECONDS] HOST PORT "
	    "PATH\n");
	return 2;
}
