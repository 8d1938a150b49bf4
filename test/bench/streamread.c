/*
 * streamread.c -- many /leader/watch streams read at once, each event
 * timed as its read returns, for the local fan-out figures
 * (test/bench/bench.py's push_delivery, make bench-scale's part 3): a
 * reader whose own cost stays small beside the leaderd it measures.
 *
 *	streamread [-n STREAMS] [-t SECONDS] PORT SOCKET
 *
 * Opens STREAMS streams (default 100), "GET /leader/watch", alternately
 * over TCP to 127.0.0.1:PORT and over the unix socket SOCKET; one
 * thread, epoll.  Once every stream had its first event it prints
 * "ready".  Then, for each line read on stdin (a holder's name), it
 * reads until every stream had the event naming that holder, or until
 * SECONDS (default 10) passed, and prints one line:
 *
 *	change LAST MISSED D1 D2 ...
 *
 * LAST: ms from the event's changed_at until the last stream had it
 * ("-" when none did); MISSED: the streams that did not have it in
 * time; D1 D2 ...: each stream's ms from changed_at to its event.  An
 * event arrives at the CLOCK_REALTIME instant the read that completed
 * it returned; every ready socket is read before any is parsed.  An
 * empty line or the end of stdin ends it with exit 0; bad arguments
 * exit 2, a stream that cannot be opened or is refused exits 1, each
 * with a message.
 */

#define _GNU_SOURCE

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/apitime.h"

#define STREAMS_MAX	100000
#define INBUF		4096		/* an event is about 700 bytes */
#define HOLDER_MAX	256

static const char	 req[] = "GET /leader/watch HTTP/1.1\r\n"
			    "Host: localhost\r\n\r\n";

struct stream {
	int	 fd;			/* -1 once closed */
	int	 seen;			/* had its first event */
	int	 done;			/* had the awaited holder's event */
	int64_t	 read_us;		/* CLOCK_REALTIME of the last read */
	int64_t	 at_us;			/* arrival of name's first event */
	int64_t	 changed_us;		/* that event's changed_at, or 0 */
	char	 name[HOLDER_MAX];	/* holder of the latest event */
	size_t	 have;			/* bytes in in */
	char	 in[INBUF];
};

static struct stream		*streams;	/* nstreams of them */
static struct epoll_event	*evs;		/* one per stream, and stdin */
static int			 nstreams;
static int			 nseen;		/* streams that had an event */
static int			 npending;	/* open, awaiting want's event */
static char			 want[HOLDER_MAX]; /* "" when none awaited */

static int64_t
wall_us(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t
mono_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The RFC 3339 time at s, up to its closing quote, into microseconds
 * since the epoch (apitime_parse, leaderd's own reader of API times);
 * 0, or -1 when it is not one.
 */
static int
changed_at_us(const char *s, int64_t *us)
{
	char		 buf[48];
	const char	*q;

	if ((q = strchr(s, '"')) == NULL || (size_t)(q - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, (size_t)(q - s));
	buf[q - s] = '\0';
	return apitime_parse(buf, us);
}

/* Stream s had the awaited holder's event: count it. */
static void
arrived(struct stream *s)
{
	if (want[0] == '\0' || s->done || strcmp(s->name, want) != 0)
		return;
	s->done = 1;
	npending--;
}

/*
 * One event's data, "{"name":"HOLDER",...", on s: a new holder's first
 * event sets its arrival and changed_at.  Returns 0, or -1 when its
 * holder does not fit.
 */
static int
event(struct stream *s, const char *data)
{
	const char	*end, *t;
	size_t		 len;

	if ((end = strchr(data, '"')) == NULL ||
	    (len = (size_t)(end - data)) >= sizeof(s->name))
		return -1;
	if (!s->seen) {
		s->seen = 1;
		nseen++;
	}
	if (strncmp(s->name, data, len) == 0 && s->name[len] == '\0')
		return 0;	/* the same holder again: not a change */
	memcpy(s->name, data, len);
	s->name[len] = '\0';
	s->at_us = s->read_us;
	/* changed_at is null before the first change: 0 then. */
	s->changed_us = 0;
	if ((t = strstr(end, "\"changed_at\":\"")) != NULL)
		(void)changed_at_us(t + 14, &s->changed_us);
	arrived(s);
	return 0;
}

/*
 * The whole events in s->in, each ending in a blank line (the chunk
 * framing between them is skipped with the rest that is not data),
 * and the partial one moved to the front.  Returns 0, or -1 with a
 * message on a stream that cannot be read.
 */
static int
parse(struct stream *s, int k)
{
	char	*p = s->in, *end, *d;

	s->in[s->have] = '\0';
	if (!s->seen && s->have >= 12 && strncmp(s->in, "HTTP/1.1 200", 12)) {
		s->in[strcspn(s->in, "\r\n")] = '\0';
		fprintf(stderr, "streamread: stream %d: leaderd answered "
		    "\"%s\"\n", k, s->in);
		return -1;
	}
	while ((end = strstr(p, "\n\n")) != NULL) {
		*end = '\0';
		if ((d = strstr(p, "data: {\"name\":\"")) != NULL &&
		    event(s, d + 15) == -1) {
			fprintf(stderr, "streamread: stream %d: a holder "
			    "longer than %d bytes\n", k, HOLDER_MAX - 1);
			return -1;
		}
		p = end + 2;
	}
	s->have -= (size_t)(p - s->in);
	memmove(s->in, p, s->have);
	if (s->have + 1 >= sizeof(s->in)) {
		fprintf(stderr, "streamread: stream %d: an event longer than "
		    "%d bytes\n", k, INBUF - 1);
		return -1;
	}
	return 0;
}

/* Await the event naming holder on every open stream. */
static void
await(const char *holder)
{
	size_t	 len = strlen(holder);
	int	 k;

	/* A line of stdin, shorter than want (main). */
	if (len >= sizeof(want))
		len = sizeof(want) - 1;
	memcpy(want, holder, len);
	want[len] = '\0';
	npending = 0;
	for (k = 0; k < nstreams; k++) {
		streams[k].done = 0;
		/* A closed stream may have had it before it closed. */
		if (streams[k].fd != -1 ||
		    strcmp(streams[k].name, want) == 0)
			npending++;
		arrived(&streams[k]);
	}
}

/* Print the awaited change's line and await nothing. */
static void
report(void)
{
	struct stream	*s;
	int64_t		 last = INT64_MIN, at = 0;
	int		 k, missed = 0;

	for (k = 0; k < nstreams; k++) {
		s = &streams[k];
		if (!s->done) {
			missed++;
			continue;
		}
		if (at == 0)
			at = s->changed_us;
		if (s->at_us > last)
			last = s->at_us;
	}
	if (last == INT64_MIN)
		printf("change - %d", missed);
	else
		printf("change %.3f %d", (last - at) / 1000.0, missed);
	for (k = 0; k < nstreams; k++) {
		s = &streams[k];
		if (s->done)
			printf(" %.3f", (s->at_us - s->changed_us) / 1000.0);
	}
	printf("\n");
	fflush(stdout);
	want[0] = '\0';
}

static int
dial(int k, const struct sockaddr_in *sin, const struct sockaddr_un *sun)
{
	int	 fd;

	if (k % 2 == 0) {
		if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
			return -1;
		if (connect(fd, (const struct sockaddr *)sin,
		    sizeof(*sin)) == -1)
			goto fail;
	} else {
		if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
			return -1;
		if (connect(fd, (const struct sockaddr *)sun,
		    sizeof(*sun)) == -1)
			goto fail;
	}
	/* A request is small: the socket buffer always takes it whole. */
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(req) - 1)
		goto fail;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * The first whole line of stdin in line[] (have bytes), if any: await
 * its holder.  Returns 1 on an empty line (the end), else 0.
 */
static int
next_holder(char *line, size_t *have)
{
	char	*nl;

	if ((nl = memchr(line, '\n', *have)) == NULL)
		return 0;
	if (nl == line)
		return 1;
	*nl = '\0';
	await(line);
	*have -= (size_t)(nl + 1 - line);
	memmove(line, nl + 1, *have);
	return 0;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in	 sin;
	struct sockaddr_un	 sun;
	struct epoll_event	 ev;
	struct rlimit		 rl;
	struct stream		*s;
	char			 line[HOLDER_MAX];
	size_t			 linelen = 0;
	int64_t			 deadline_ms = 0, wait_ms;
	double			 secs = 10;
	int			 ep, ch, i, k, n, ready = 0, in = 0, eof = 0;
	ssize_t			 got;

	nstreams = 100;
	while ((ch = getopt(argc, argv, "n:t:")) != -1) {
		switch (ch) {
		case 'n':
			nstreams = atoi(optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		default:
			goto usage;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2 || nstreams < 1 || nstreams > STREAMS_MAX || secs <= 0)
		goto usage;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)atoi(argv[0]));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(argv[1]) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "streamread: %s: longer than a unix socket's "
		    "%zu bytes; use a shorter path\n", argv[1],
		    sizeof(sun.sun_path) - 1);
		return 2;
	}
	strcpy(sun.sun_path, argv[1]);
	/* A descriptor per stream: as many as the hard limit allows. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if ((streams = calloc((size_t)nstreams, sizeof(*streams))) == NULL ||
	    (evs = calloc((size_t)nstreams + 1, sizeof(*evs))) == NULL ||
	    (ep = epoll_create1(0)) == -1) {
		perror("streamread");
		return 1;
	}
	for (k = 0; k < nstreams; k++) {
		if ((streams[k].fd = dial(k, &sin, &sun)) == -1) {
			fprintf(stderr, "streamread: stream %d of %d: %s%s: "
			    "%s\n", k + 1, nstreams, k % 2 ? "" : "127.0.0.1:",
			    k % 2 ? argv[1] : argv[0], strerror(errno));
			return 1;
		}
		ev.events = EPOLLIN;
		ev.data.ptr = &streams[k];
		epoll_ctl(ep, EPOLL_CTL_ADD, streams[k].fd, &ev);
	}
	for (;;) {
		wait_ms = -1;
		if (want[0] != '\0' && (wait_ms = deadline_ms - mono_ms()) < 0)
			wait_ms = 0;
		if ((n = epoll_wait(ep, evs, nstreams + 1, (int)wait_ms)) == -1) {
			if (errno != EINTR) {
				perror("streamread: epoll_wait");
				return 1;
			}
			n = 0;
		}
		/* Read (and time) every ready socket first, parse after. */
		for (i = 0; i < n; i++) {
			if ((s = evs[i].data.ptr) == NULL) {
				in = 1;		/* stdin (data.ptr NULL) */
				continue;
			}
			got = read(s->fd, s->in + s->have,
			    sizeof(s->in) - 1 - s->have);
			s->read_us = wall_us();
			if (got > 0) {
				s->have += (size_t)got;
				continue;
			}
			if (got == -1 && errno == EAGAIN)
				continue;
			/* Closed by leaderd: it misses what comes. */
			close(s->fd);
			s->fd = -1;
			if (!s->seen) {
				fprintf(stderr, "streamread: stream %d: closed "
				    "before its first event\n",
				    (int)(s - streams) + 1);
				return 1;
			}
			if (want[0] != '\0' && !s->done)
				npending--;
		}
		for (i = 0; i < n; i++)
			if ((s = evs[i].data.ptr) != NULL && s->fd != -1 &&
			    parse(s, (int)(s - streams) + 1) == -1)
				return 1;
		if (in) {
			in = 0;
			got = read(0, line + linelen, sizeof(line) - linelen);
			if (got <= 0) {
				eof = 1;
				epoll_ctl(ep, EPOLL_CTL_DEL, 0, NULL);
			} else if ((linelen += (size_t)got) == sizeof(line) &&
			    memchr(line, '\n', linelen) == NULL) {
				fprintf(stderr, "streamread: a holder longer "
				    "than %d bytes on stdin\n", HOLDER_MAX - 1);
				return 2;
			}
		}
		if (!ready && nseen == nstreams) {
			ready = 1;
			printf("ready\n");
			fflush(stdout);
			ev.events = EPOLLIN;
			ev.data.ptr = NULL;
			epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev);
		}
		if (want[0] != '\0' && npending > 0 && mono_ms() < deadline_ms)
			continue;
		if (want[0] != '\0')
			report();
		/* The next holder, once the last one's line is out. */
		while (ready && want[0] == '\0' &&
		    memchr(line, '\n', linelen) != NULL) {
			if (next_holder(line, &linelen) == 1)
				return 0;
			deadline_ms = mono_ms() + (int64_t)(secs * 1000);
			if (npending == 0)
				report();
		}
		if (eof && want[0] == '\0')
			return 0;
	}
usage:
	fprintf(stderr, "usage: streamread [-n STREAMS] [-t SECONDS] PORT "
	    "SOCKET\n");
	return 2;
}
