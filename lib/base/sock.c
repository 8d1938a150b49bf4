/*
 * sock.c -- listening sockets for the local API, and the control
 * client's connection to them (see sock.h).
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base/netaddr.h"
#include "base/sock.h"
#include "base/text.h"

#define SOCK_PORT_TRIES	8	/* port 0 taken on a later address */

/* Append sa to ss[] unless it is there already; returns the new n. */
static int
add_addr(struct sockaddr_storage *ss, socklen_t *len, int n, int max,
    const struct sockaddr *sa, socklen_t salen)
{
	int	 i;

	if (salen > sizeof(*ss))
		return n;
	for (i = 0; i < n; i++)
		if (len[i] == salen && memcmp(&ss[i], sa, salen) == 0)
			return n;
	if (n == max)
		return n;
	memset(&ss[n], 0, sizeof(ss[n]));
	memcpy(&ss[n], sa, salen);
	len[n] = salen;
	return n + 1;
}

int
sock_tcp_addrs(const char *host, int port, struct sockaddr_storage *ss,
    socklen_t *len, int max, char *err, size_t errlen)
{
	struct addrinfo		 hints, *res, *ai;
	struct sockaddr_in	 sin;
	struct sockaddr_in6	 sin6;
	char			 serv[8];
	int			 n = 0, rc;

	if (strcasecmp(host, "localhost") == 0) {
		/* Both loopbacks, not whatever /etc/hosts maps. */
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons(port);
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		memset(&sin6, 0, sizeof(sin6));
		sin6.sin6_family = AF_INET6;
		sin6.sin6_port = htons(port);
		sin6.sin6_addr = in6addr_loopback;
		n = add_addr(ss, len, n, max, (struct sockaddr *)&sin,
		    sizeof(sin));
		return add_addr(ss, len, n, max, (struct sockaddr *)&sin6,
		    sizeof(sin6));
	}
	snprintf(serv, sizeof(serv), "%d", port);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (host[0] == '\0' ? AI_PASSIVE : 0);
	if ((rc = getaddrinfo(host[0] != '\0' ? host : NULL, serv, &hints,
	    &res)) != 0) {
		snprintf(err, errlen, "%s", gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		n = add_addr(ss, len, n, max, ai->ai_addr, ai->ai_addrlen);
		if (host[0] == '\0')
			break;
	}
	freeaddrinfo(res);
	if (n == 0) {
		snprintf(err, errlen, "no IPv4 or IPv6 address");
		return -1;
	}
	return n;
}

/* Bind and listen on sa; returns the socket, or -1 with errno and what. */
static int
bind_one(const struct sockaddr_storage *sa, socklen_t salen,
    const char **what)
{
	int	 fd, one = 1, saved;

	*what = "socket";
	if ((fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	*what = "bind";
	if (bind(fd, (const struct sockaddr *)sa, salen) == 0) {
		*what = "listen";
		if (listen(fd, SOCK_BACKLOG) == 0)
			return fd;
	}
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

/* Set the port of an IPv4 or IPv6 socket address. */
static void
set_port(struct sockaddr_storage *sa, int port)
{
	if (sa->ss_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

/* Fill b from the socket bound to fd; -1 with errno. */
static int
bound_name(int fd, struct sock_bound *b)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);
	char			 addr[INET6_ADDRSTRLEN];

	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == -1)
		return -1;
	netaddr_sockaddr_text((struct sockaddr *)&ss, addr, sizeof(addr),
	    &b->port);
	snprintf(b->name, sizeof(b->name), strchr(addr, ':') != NULL ?
	    "[%s]:%d" : "%s:%d", addr, b->port);
	b->fd = fd;
	return 0;
}

/*
 * Bind every address of ss[] (the port of each set already, or 0) into
 * out.  Returns how many, 0 with *retry when port 0 was taken on a later
 * address, or -1 with err.
 */
static int
bind_all(const char *hostport, struct sockaddr_storage *ss, socklen_t *len,
    int n, int want, struct sock_bound *out, char *skipped,
    size_t skippedlen, int *retry, char *err, size_t errlen)
{
	struct sock_bound	 b;
	char			 addr[INET6_ADDRSTRLEN];
	const char		*what;
	size_t			 used = 0;
	int			 i, j, fd, got = 0, port = want, e = 0, p;

	*retry = 0;
	if (skippedlen > 0)
		skipped[0] = '\0';
	for (i = 0; i < n; i++) {
		if (port != 0)
			set_port(&ss[i], port);
		if ((fd = bind_one(&ss[i], len[i], &what)) != -1 &&
		    bound_name(fd, &b) == -1) {
			what = "getsockname";
			e = errno;
			close(fd);
			errno = e;
			fd = -1;
		}
		if (fd != -1) {
			out[got++] = b;
			port = b.port;
			continue;
		}
		e = errno;
		netaddr_sockaddr_text((struct sockaddr *)&ss[i], addr,
		    sizeof(addr), &p);
		if (n > 1 && (e == EADDRNOTAVAIL || e == EAFNOSUPPORT)) {
			text_appendf(skipped, skippedlen, &used, "%s%s: %s",
			    used > 0 ? ", " : "", addr, strerror(e));
			continue;
		}
		for (j = 0; j < got; j++)
			close(out[j].fd);
		if (want == 0 && got > 0 && e == EADDRINUSE) {
			*retry = 1;
			return 0;
		}
		if (n > 1)
			snprintf(err, errlen, "%s: %s %s: %s", hostport, what,
			    addr, strerror(e));
		else
			snprintf(err, errlen, "%s: %s: %s", hostport, what,
			    strerror(e));
		return -1;
	}
	if (got == 0) {
		snprintf(err, errlen, "%s: no address could be bound (%s)",
		    hostport, skipped);
		return -1;
	}
	return got;
}

int
sock_listen_tcp(const char *hostport, struct sock_bound *out, int max,
    char *skipped, size_t skippedlen, char *err, size_t errlen)
{
	struct sockaddr_storage	 ss[SOCK_ADDRS_MAX];
	socklen_t		 len[SOCK_ADDRS_MAX];
	char			 host[256], serv[8], why[128];
	int			 n, port, tries, retry, got;

	if (netaddr_split(hostport, 0, host, sizeof(host), serv,
	    sizeof(serv), why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: %s", hostport, why);
		return -1;
	}
	if ((port = netaddr_port(serv)) == -1) {
		snprintf(err, errlen, "%s: the port must be a number from 0 "
		    "to 65535", hostport);
		return -1;
	}
	if (max > SOCK_ADDRS_MAX)
		max = SOCK_ADDRS_MAX;
	if ((n = sock_tcp_addrs(host, port, ss, len, max, why,
	    sizeof(why))) == -1) {
		snprintf(err, errlen, "%s: %s", hostport, why);
		return -1;
	}
	for (tries = 0; tries < SOCK_PORT_TRIES; tries++) {
		got = bind_all(hostport, ss, len, n, port, out, skipped,
		    skippedlen, &retry, err, errlen);
		if (!retry)
			return got;
		for (got = 0; got < n; got++)
			set_port(&ss[got], 0);
	}
	snprintf(err, errlen, "%s: no port free on every address after %d "
	    "tries", hostport, SOCK_PORT_TRIES);
	return -1;
}

/* The address of the unix socket path, or -1 with err for a bad path. */
static int
unix_addr(const char *path, struct sockaddr_un *sun, char *err,
    size_t errlen)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (path[0] == '\0' || strlen(path) >= sizeof(sun->sun_path)) {
		snprintf(err, errlen, "unix socket path must be 1 to %zu "
		    "bytes: %s", sizeof(sun->sun_path) - 1, path);
		return -1;
	}
	memcpy(sun->sun_path, path, strlen(path) + 1);
	return 0;
}

/* Refuse a live socket at path, remove a stale one. */
static int
check_unix_path(const char *path, const struct sockaddr_un *sun, char *err,
    size_t errlen)
{
	struct stat	 st;
	int		 fd, rc;

	if (lstat(path, &st) == -1) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket", path);
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
	if (rc == 0 || errno == EAGAIN || errno == EINPROGRESS) {
		/* Answering, or too busy to: either way, alive. */
		close(fd);
		snprintf(err, errlen, "another leaderd is listening on %s",
		    path);
		return -1;
	}
	rc = errno;
	close(fd);
	if (rc != ECONNREFUSED) {
		snprintf(err, errlen, "%s: connect: %s", path, strerror(rc));
		return -1;
	}
	if (unlink(path) == -1 && errno != ENOENT) {
		snprintf(err, errlen, "cannot remove stale socket %s: %s",
		    path, strerror(errno));
		return -1;
	}
	return 0;
}

int
sock_listen_unix(const char *path, dev_t *dev, ino_t *ino, char *err,
    size_t errlen)
{
	struct sockaddr_un	 sun;
	struct stat		 st;
	mode_t			 old;
	int			 fd;
	const char		*what;

	if (unix_addr(path, &sun, err, errlen) == -1)
		return -1;
	if (check_unix_path(path, &sun, err, errlen) == -1)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	old = umask(0117);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		umask(old);
		snprintf(err, errlen, "%s: bind: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	/*
	 * The umask made the mode 0660; nothing is done to the path by name
	 * after bind (a chmod would follow a symlink swapped in meanwhile).
	 * lstat only reads, and what it finds must be a socket: otherwise
	 * someone replaced ours, and it is not ours to unlink.
	 */
	if (lstat(path, &st) == -1) {
		snprintf(err, errlen, "%s: lstat: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s was replaced by something that is "
		    "not a socket while leaderd bound it; is its directory "
		    "writable by others?", path);
		close(fd);
		return -1;
	}
	what = "";
	if (listen(fd, SOCK_BACKLOG) == -1)
		what = "listen";
	if (what[0] != '\0') {
		snprintf(err, errlen, "%s: %s: %s", path, what,
		    strerror(errno));
		sock_unlink_unix(path, st.st_dev, st.st_ino);
		close(fd);
		return -1;
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	return fd;
}

void
sock_unlink_unix(const char *path, dev_t dev, ino_t ino)
{
	struct stat	 st;

	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == dev &&
	    st.st_ino == ino)
		unlink(path);
}

/*
 * Connect fd to sa within timeout_ms; 0, or -1 with errno (ETIMEDOUT
 * when no answer came in time).
 */
static int
connect_within(int fd, const struct sockaddr_storage *sa, socklen_t salen,
    uint64_t timeout_ms)
{
	struct pollfd	 pfd;
	socklen_t	 elen = sizeof(int);
	int		 e, n;

	if (connect(fd, (const struct sockaddr *)sa, salen) == 0)
		return 0;
	if (errno != EINPROGRESS)
		return -1;
	pfd.fd = fd;
	pfd.events = POLLOUT;
	while ((n = poll(&pfd, 1, timeout_ms > INT32_MAX ? INT32_MAX :
	    (int)timeout_ms)) == -1 && errno == EINTR)
		;
	if (n == -1)
		return -1;
	if (n == 0) {
		errno = ETIMEDOUT;
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) == -1)
		return -1;
	if (e != 0) {
		errno = e;
		return -1;
	}
	return 0;
}

int
sock_connect_tcp(const char *hostport, uint64_t timeout_ms, char *err,
    size_t errlen)
{
	struct sockaddr_storage	 ss[SOCK_ADDRS_MAX];
	socklen_t		 len[SOCK_ADDRS_MAX];
	char			 host[256], serv[8], why[128];
	char			 addr[INET6_ADDRSTRLEN];
	const char		*h;
	size_t			 used = 0;
	int			 i, n, port, fd, e, v6;

	if (netaddr_split(hostport, 0, host, sizeof(host), serv,
	    sizeof(serv), why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: %s", hostport, why);
		return -1;
	}
	if ((port = netaddr_port(serv)) <= 0) {
		snprintf(err, errlen, "%s: the port must be a number from 1 "
		    "to 65535", hostport);
		return -1;
	}
	/* A server bound to every address answers on loopback too. */
	h = host;
	if (host[0] == '\0')
		h = "localhost";
	else if (strcmp(host, "0.0.0.0") == 0)
		h = "127.0.0.1";
	else if (strcmp(host, "::") == 0)
		h = "::1";
	if ((n = sock_tcp_addrs(h, port, ss, len, SOCK_ADDRS_MAX, why,
	    sizeof(why))) == -1) {
		snprintf(err, errlen, "%s: %s", hostport, why);
		return -1;
	}
	err[0] = '\0';
	for (i = 0; i < n; i++) {
		if ((fd = socket(ss[i].ss_family, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0)) != -1 &&
		    connect_within(fd, &ss[i], len[i], timeout_ms) == 0)
			return fd;
		e = errno;
		if (fd != -1)
			close(fd);
		netaddr_sockaddr_text((struct sockaddr *)&ss[i], addr,
		    sizeof(addr), NULL);
		v6 = strchr(addr, ':') != NULL;
		text_appendf(err, errlen, &used, "%s%s%s%s:%d: %s",
		    used > 0 ? "; " : "", v6 ? "[" : "", addr, v6 ? "]" : "",
		    port, e == ETIMEDOUT ? "no answer in time" : strerror(e));
	}
	return -1;
}

int
sock_connect_unix(const char *path, uint64_t timeout_ms, char *err,
    size_t errlen)
{
	struct sockaddr_un	 sun;
	struct timespec		 pause = { 0, 20 * 1000 * 1000 };
	uint64_t		 waited_ms = 0;
	int			 fd;

	if (unix_addr(path, &sun, err, errlen) == -1)
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	/* A unix connect does not complete later: a full backlog is EAGAIN. */
	while (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		if (errno != EAGAIN ||
		    waited_ms >= timeout_ms) {
			snprintf(err, errlen, "%s: %s", path, errno == EAGAIN ?
			    "no answer in time (its backlog is full)" :
			    strerror(errno));
			close(fd);
			return -1;
		}
		nanosleep(&pause, NULL);
		waited_ms += 20;
	}
	return fd;
}
