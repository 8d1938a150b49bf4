/*
 * sock_test.c -- sock_listen_unix against a directory someone else can
 * write (L3).  bind() is wrapped (-Wl,--wrap=bind): after the real bind,
 * the wrapper can swap the new socket for a symlink to a victim file,
 * which is the race a writer of the directory can win.  leaderd must
 * then neither change the victim's mode nor claim the path.
 */

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/sock.h"

int	__real_bind(int, const struct sockaddr *, socklen_t);
int	__wrap_bind(int, const struct sockaddr *, socklen_t);

static char	 dir[] = "/tmp/sock_test.XXXXXX";
static char	 sock_path[128], victim[128], moved[128];
static int	 swap_after_bind;	/* the wrapper swaps once */

int
__wrap_bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	int	 rc;

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_swapped_for_symlink),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
