/*
 * sock.c -- listening sockets for the local API (see sock.h).
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/netaddr.h"
#include "base/sock.h"

/* Bind and listen on the first address of res that works. */
static int
bind_first(struct addrinfo *res, const char **what)
{
	struct addrinfo	*ai;
	int		 fd, one = 1, saved;

	*what = "socket";
	errno = EADDRNOTAVAIL;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd == -1) {
			*what = "socket";
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
			    sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == -1)
			*what = "bind";
		else if (listen(fd, SOCK_BACKLOG) == -1)
			*what = "listen";
		else
			return fd;
		saved = errno;
		close(fd);
		errno = saved;
	}
	return -1;
}

int
sock_listen_tcp(const char *hostport, char *name, size_t namelen, int *port,
    char *err, size_t errlen)
{
	struct addrinfo		 hints, *res;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);
	char			 host[256], serv[8], addr[INET6_ADDRSTRLEN];
	char			 why[128];
	const char		*what;
	int			 fd, rc;

	if (netaddr_split(hostport, 0, host, sizeof(host), serv,
	    sizeof(serv), why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: %s", hostport, why);
		return -1;
	}
	if (netaddr_port(serv) == -1) {
		snprintf(err, errlen, "%s: the port must be a number from 0 "
		    "to 65535", hostport);
		return -1;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host[0] != '\0' ? host : NULL, serv, &hints,
	    &res)) != 0) {
		snprintf(err, errlen, "%s: %s", hostport, gai_strerror(rc));
		return -1;
	}
	fd = bind_first(res, &what);
	freeaddrinfo(res);
	if (fd == -1) {
		snprintf(err, errlen, "%s: %s: %s", hostport, what,
		    strerror(errno));
		return -1;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == -1) {
		snprintf(err, errlen, "%s: getsockname: %s", hostport,
		    strerror(errno));
		close(fd);
		return -1;
	}
	netaddr_sockaddr_text((struct sockaddr *)&ss, addr, sizeof(addr),
	    port);
	snprintf(name, namelen, strchr(addr, ':') != NULL ? "[%s]:%d" :
	    "%s:%d", addr, *port);
	return fd;
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

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (path[0] == '\0' || strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "unix socket path must be 1 to %zu "
		    "bytes: %s", sizeof(sun.sun_path) - 1, path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
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
