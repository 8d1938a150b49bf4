/*
 * sock.h -- listening sockets for the local API, after redis' anet.c:
 * plain helpers that write errors into the caller's buffer and never
 * log.  The unix socket rules follow OpenSMTPD control_create_socket and
 * tmux server_create_socket (ref/c-style-anchors.md 6.7).
 */

#ifndef SOCK_H
#define SOCK_H

#include <sys/types.h>

#include <stddef.h>

#define SOCK_BACKLOG	128	/* listen(2) backlog */

/*
 * Listen on "host:port" or "[v6]:port" (port 0 picks one; an empty host
 * means every address): non-blocking, close-on-exec, SO_REUSEADDR, and
 * IPV6_V6ONLY for IPv6.  The address bound is written to name
 * ("127.0.0.1:4040", "[::1]:4040") and its port to *port.  Returns the
 * socket, or -1 with err.
 */
int	sock_listen_tcp(const char *hostport, char *name, size_t namelen,
	    int *port, char *err, size_t errlen);

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

#endif /* SOCK_H */
