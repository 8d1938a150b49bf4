/*
 * sock_test.c -- sock_listen_unix against a directory someone else can
 * write (L3).  bind() is wrapped (-Wl,--wrap=bind): after the real bind,
 * the wrapper can swap the new socket for a symlink to a victim file,
 * which is the race a writer of the directory can win.  leaderd must
 * then neither change the victim's mode nor claim the path.
 *
 * And sock_listen_tcp on names: localhost is both loopbacks, one port
 * for both with port 0; the wrapper can fail the IPv6 bind, as a pod
 * without ::1 does (skipped) or with another error (fatal).
 *
 * And the control client's connections: wildcards stand for loopback,
 * and a failure names every address tried.
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <errno.h>

#include <cmocka.h>

#include "base/sock.h"

int	__real_bind(int, const struct sockaddr *, socklen_t);
int	__wrap_bind(int, const struct sockaddr *, socklen_t);

static char	 dir[] = "/tmp/sock_test.XXXXXX";
static char	 sock_path[128], victim[128], moved[128];
static int	 swap_after_bind;	/* the wrapper swaps once */
static int	 fail_v6_bind;		/* errno for an AF_INET6 bind, or 0 */
static int	 fail_v6_count = -1;	/* how many times; -1 is always */

int
__wrap_bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	int	 rc;

	if (fail_v6_bind != 0 && sa->sa_family == AF_INET6 &&
	    fail_v6_count != 0) {
		if (fail_v6_count > 0)
			fail_v6_count--;
		errno = fail_v6_bind;
		return -1;
	}
	rc = __real_bind(fd, sa, len);
	if (rc == 0 && swap_after_bind && sa->sa_family == AF_UNIX) {
		swap_after_bind = 0;
		if (rename(sock_path, moved) == -1 ||
		    symlink(victim, sock_path) == -1)
			abort();
	}
	return rc;
}

static int
setup(void **state)
{
	(void)state;
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(sock_path, sizeof(sock_path), "%s/leaderd.sock", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(moved, sizeof(moved), "%s/moved.sock", dir);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(sock_path);
	unlink(victim);
	unlink(moved);
	rmdir(dir);
	return 0;
}

static void
test_mode(void **state)
{
	struct stat	 st;
	char		 err[256];
	dev_t		 dev;
	ino_t		 ino;
	int		 fd;

	(void)state;
	fd = sock_listen_unix(sock_path, &dev, &ino, err, sizeof(err));
	if (fd == -1)
		fail_msg("%s", err);
	assert_int_equal(lstat(sock_path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0660);
	assert_true(st.st_dev == dev && st.st_ino == ino);
	close(fd);
	sock_unlink_unix(sock_path, dev, ino);
	assert_int_equal(lstat(sock_path, &st), -1);
}

static void
test_swapped_for_symlink(void **state)
{
	struct stat	 st;
	char		 err[256];
	dev_t		 dev;
	ino_t		 ino;
	FILE		*f;
	int		 fd;

	(void)state;
	assert_non_null(f = fopen(victim, "w"));
	fclose(f);
	assert_int_equal(chmod(victim, 0600), 0);
	swap_after_bind = 1;
	fd = sock_listen_unix(sock_path, &dev, &ino, err, sizeof(err));
	assert_int_equal(swap_after_bind, 0);
	/* The victim's mode is untouched, whatever else happened. */
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* And leaderd does not believe the path is its socket. */
	assert_int_equal(fd, -1);
	assert_non_null(strstr(err, "was replaced by something that is not "
	    "a socket"));
	/* The symlink someone else made is left alone. */
	assert_int_equal(lstat(sock_path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

static void
test_tcp_addrs(void **state)
{
	struct sockaddr_storage	 ss[SOCK_ADDRS_MAX];
	socklen_t		 len[SOCK_ADDRS_MAX];
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss[0];
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss[1];
	char			 err[128];

	(void)state;
	/* localhost: both loopbacks, v4 first, never a lookup. */
	assert_int_equal(sock_tcp_addrs("LocalHost", 4040, ss, len,
	    SOCK_ADDRS_MAX, err, sizeof(err)), 2);
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), INADDR_LOOPBACK);
	assert_int_equal(ntohs(sin->sin_port), 4040);
	assert_int_equal(sin6->sin6_family, AF_INET6);
	assert_memory_equal(&sin6->sin6_addr, &in6addr_loopback, 16);
	assert_int_equal(ntohs(sin6->sin6_port), 4040);
	/* Cut at max. */
	assert_int_equal(sock_tcp_addrs("localhost", 1, ss, len, 1, err,
	    sizeof(err)), 1);
	assert_int_equal(ss[0].ss_family, AF_INET);
	/* A literal is itself only. */
	assert_int_equal(sock_tcp_addrs("::1", 80, ss, len, SOCK_ADDRS_MAX,
	    err, sizeof(err)), 1);
	assert_int_equal(ss[0].ss_family, AF_INET6);
	assert_int_equal(sock_tcp_addrs("127.0.0.1", 80, ss, len,
	    SOCK_ADDRS_MAX, err, sizeof(err)), 1);
	assert_int_equal(ss[0].ss_family, AF_INET);
	/* The empty host is one wildcard. */
	assert_int_equal(sock_tcp_addrs("", 80, ss, len, SOCK_ADDRS_MAX,
	    err, sizeof(err)), 1);
}

static int
have_v6_loopback(void)
{
	struct sockaddr_in6	 sin6;
	int			 fd, ok;

	if ((fd = socket(AF_INET6, SOCK_STREAM, 0)) == -1)
		return 0;
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_addr = in6addr_loopback;
	ok = bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) == 0;
	close(fd);
	return ok;
}

static void
test_tcp_localhost(void **state)
{
	struct sock_bound	 b[SOCK_ADDRS_MAX];
	char			 err[256], skipped[256];
	int			 n, i;

	(void)state;
	if (!have_v6_loopback())
		skip();
	/* Port 0: one port for both. */
	n = sock_listen_tcp("localhost:0", b, SOCK_ADDRS_MAX, skipped,
	    sizeof(skipped), err, sizeof(err));
	assert_int_equal(n, 2);
	assert_string_equal(skipped, "");
	assert_int_not_equal(b[0].port, 0);
	assert_int_equal(b[0].port, b[1].port);
	assert_non_null(strstr(b[0].name, "127.0.0.1:"));
	assert_non_null(strstr(b[1].name, "[::1]:"));
	for (i = 0; i < n; i++)
		close(b[i].fd);
}

static void
test_tcp_no_v6(void **state)
{
	struct sock_bound	 b[SOCK_ADDRS_MAX];
	char			 err[256], skipped[256];
	int			 n;

	(void)state;
	/* No ::1 in the pod: skipped, said, and v4 still listens. */
	fail_v6_bind = EADDRNOTAVAIL;
	n = sock_listen_tcp("localhost:0", b, SOCK_ADDRS_MAX, skipped,
	    sizeof(skipped), err, sizeof(err));
	assert_int_equal(n, 1);
	assert_non_null(strstr(b[0].name, "127.0.0.1:"));
	assert_non_null(strstr(skipped, "::1: "));
	close(b[0].fd);
	/* Any other failure stops the start. */
	fail_v6_bind = EACCES;
	n = sock_listen_tcp("localhost:0", b, SOCK_ADDRS_MAX, skipped,
	    sizeof(skipped), err, sizeof(err));
	assert_int_equal(n, -1);
	assert_non_null(strstr(err, "bind ::1"));
	/* A literal alone is never skipped. */
	fail_v6_bind = EADDRNOTAVAIL;
	n = sock_listen_tcp("[::1]:0", b, SOCK_ADDRS_MAX, skipped,
	    sizeof(skipped), err, sizeof(err));
	assert_int_equal(n, -1);
	fail_v6_bind = 0;
}

static void
test_tcp_port0_taken(void **state)
{
	struct sock_bound	 b[SOCK_ADDRS_MAX];
	char			 err[256], skipped[256];
	int			 n, i;

	(void)state;
	if (!have_v6_loopback())
		skip();
	/* The port the first address got is taken on ::1: another one. */
	fail_v6_bind = EADDRINUSE;
	fail_v6_count = 1;
	n = sock_listen_tcp("localhost:0", b, SOCK_ADDRS_MAX, skipped,
	    sizeof(skipped), err, sizeof(err));
	assert_int_equal(fail_v6_count, 0);
	assert_int_equal(n, 2);
	assert_int_equal(b[0].port, b[1].port);
	for (i = 0; i < n; i++)
		close(b[i].fd);
	/* A port asked for and taken is an error, not a retry. */
	fail_v6_count = 1;
	n = sock_listen_tcp("localhost:40999", b, SOCK_ADDRS_MAX, skipped,
	    sizeof(skipped), err, sizeof(err));
	assert_int_equal(n, -1);
	assert_non_null(strstr(err, "Address already in use"));
	fail_v6_bind = 0;
	fail_v6_count = -1;
}

static void
test_connect(void **state)
{
	struct sock_bound	 b[SOCK_ADDRS_MAX];
	char			 err[512], skipped[256], hp[64], want[64];
	char			 path[160];
	const char		*forms[] = { "127.0.0.1:%d", "0.0.0.0:%d",
				    ":%d", "localhost:%d" };
	dev_t			 dev;
	ino_t			 ino;
	size_t			 i;
	int			 n, fd, port;

	(void)state;
	n = sock_listen_tcp("127.0.0.1:0", b, SOCK_ADDRS_MAX, skipped,
	    sizeof(skipped), err, sizeof(err));
	assert_int_equal(n, 1);
	port = b[0].port;
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(hp, sizeof(hp), forms[i], port);
		if ((fd = sock_connect_tcp(hp, 1000, err, sizeof(err))) == -1)
			fail_msg("%s: %s", hp, err);
		close(fd);
	}
	close(b[0].fd);
	snprintf(hp, sizeof(hp), "127.0.0.1:%d", port);
	assert_int_equal(sock_connect_tcp(hp, 1000, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "127.0.0.1:%d: Connection refused",
	    port);
	assert_string_equal(err, want);
	if (have_v6_loopback()) {
		/* Both loopbacks tried, both named. */
		snprintf(hp, sizeof(hp), "localhost:%d", port);
		assert_int_equal(sock_connect_tcp(hp, 1000, err, sizeof(err)),
		    -1);
		assert_non_null(strstr(err, want));
		snprintf(want, sizeof(want), "; [::1]:%d: ", port);
		assert_non_null(strstr(err, want));
	}
	assert_int_equal(sock_connect_tcp("127.0.0.1", 1000, err,
	    sizeof(err)), -1);
	assert_int_equal(sock_connect_tcp("127.0.0.1:0", 1000, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "from 1 to 65535"));

	snprintf(path, sizeof(path), "%s/connect.sock", dir);
	fd = sock_listen_unix(path, &dev, &ino, err, sizeof(err));
	assert_int_not_equal(fd, -1);
	n = sock_connect_unix(path, 1000, err, sizeof(err));
	assert_int_not_equal(n, -1);
	close(n);
	close(fd);
	sock_unlink_unix(path, dev, ino);
	assert_int_equal(sock_connect_unix(path, 1000, err, sizeof(err)), -1);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "No such file or directory"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_swapped_for_symlink),
		cmocka_unit_test(test_tcp_addrs),
		cmocka_unit_test(test_tcp_localhost),
		cmocka_unit_test(test_tcp_no_v6),
		cmocka_unit_test(test_tcp_port0_taken),
		cmocka_unit_test(test_connect),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
