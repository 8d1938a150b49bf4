/*
 * sock.h -- listening sockets for the local API, after redis' anet.c:
 * plain helpers that write errors into the caller's buffer and never
 * log; and the control client's connections to them.  The unix socket
 * rules follow OpenSMTPD control_create_socket and tmux
 * server_create_socket (ref/c-style-anchors.md 6.7).
 */

#ifndef SOCK_H
#define SOCK_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#define SOCK_BACKLOG	128	/* listen(2) backlog */
#define SOCK_ADDRS_MAX	4	/* addresses bound for one host:port */
#define SOCK_NAME_MAX	64	/* "[v6]:port" */

/* One listening TCP socket and the address it is bound to. */
struct sock_bound {
	int	 fd;
	int	 port;
	char	 name[SOCK_NAME_MAX];	/* "127.0.0.1:4040", "[::1]:4040" */
};

/*
 * The addresses to bind for host and port, at most max of them, into
 * ss[] and len[]: the empty host is every address (0.0.0.0 or ::, one of
 * them, as getaddrinfo passive gives first); a numeric host is itself;
 * "localhost" (any case) is 127.0.0.1 then ::1, whatever /etc/hosts
 * says; any other name is every address it resolves to, deduplicated,
 * in the resolver's order.  Returns how many, or -1 with err.
 */
int	sock_tcp_addrs(const char *host, int port,
	    struct sockaddr_storage *ss, socklen_t *len, int max, char *err,
	    size_t errlen);

/*
 * Listen on every address sock_tcp_addrs gives for "host:port" or
 * "[v6]:port" (port 0 picks one): non-blocking, close-on-exec,
 * SO_REUSEADDR, and IPV6_V6ONLY for IPv6 so that a v4 and a v6 socket
 * can share the port.  With port 0 the first socket picks the port
 * and the others take the same one.  When a host has several addresses,
 * one the machine lacks (EADDRNOTAVAIL, EAFNOSUPPORT: no ::1 in an
 * IPv4-only pod) is skipped and named in skipped ("" if none); any other
 * failure, or none bound, closes what was opened and fails.  Writes up
 * to max sockets to out.  Returns how many, or -1 with err.
 */
int	sock_listen_tcp(const char *hostport, struct sock_bound *out,
	    int max, char *skipped, size_t skippedlen, char *err,
	    size_t errlen);

/*
 * Listen on the unix socket path, non-blocking and close-on-exec, with
 * mode 0660 (bound under umask 0117).  If something answers on path,
 * refuse ("another leaderd is listening on PATH"); a stale socket is
 * removed first; a path that exists and is not a socket is an error.
 * The new socket file is identified in *dev and *ino for
 * sock_unlink_unix.  Returns the socket, or -1 with err.
 */
int	sock_listen_unix(const char *path, dev_t *dev, ino_t *ino, char *err,
	    size_t errlen);

/*
 * Remove path if it is still the socket file (dev, ino) that
 * sock_listen_unix made, not one a later daemon put there.
 */
void	sock_unlink_unix(const char *path, dev_t dev, ino_t ino);

/*
 * Connect to a local API listening on "host:port" or "[v6]:port", as a
 * client on this machine does: the host "" and the wildcards 0.0.0.0
 * and :: stand for loopback (127.0.0.1, ::1 and both, in that order for
 * ""), "localhost" is 127.0.0.1 then ::1, and a name is every address
 * it resolves to.  The addresses are tried in turn, each for at most
 * timeout_ms; the first that accepts wins.  Returns the socket,
 * non-blocking and close-on-exec, or -1 with err naming each address
 * tried and why it failed ("127.0.0.1:4040: Connection refused").
 */
int	sock_connect_tcp(const char *hostport, uint64_t timeout_ms,
	    char *err, size_t errlen);

/*
 * Connect to the unix socket path, retrying a full backlog (EAGAIN) for
 * up to timeout_ms.  Returns the socket, non-blocking and close-on-exec,
 * or -1 with err ("PATH: No such file or directory").
 */
int	sock_connect_unix(const char *path, uint64_t timeout_ms, char *err,
	    size_t errlen);

#endif /* SOCK_H */
