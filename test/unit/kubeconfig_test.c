/*
 * kubeconfig_test.c -- kubeconfig files (kubeconfig.c) and in-cluster
 * credentials (incluster.c).
 *
 * Golden cases live in TEST_DIR/kubeconfig:
 *   NAME.yaml + NAME.out      a kubeconfig that loads; NAME.out is the
 *                             struct kube_creds and the warning as printed
 *                             by dump_creds() below.
 *   err-NAME.yaml + .err      a kubeconfig that must fail; .err is the
 *                             exact error.
 * In both, $DIR stands for the fixture directory and $FILE for the
 * kubeconfig's path; UPDATE_GOLDEN=1 rewrites them (testutil.h).  The
 * in-cluster tests build a service account directory under /tmp.
 */

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/creds.h"
#include "config/kubeconfig.h"
#include "testutil.h"
#include "base/xmalloc.h"

#define MIN_VALID	8	/* the suites fail if cases go missing */
#define MIN_INVALID	25

static char fixtures[PATH_MAX];

static const char *
fixture_dir(void)
{
	const char *d;

	if (fixtures[0] == '\0') {
		if ((d = getenv("TEST_DIR")) == NULL || *d == '\0')
			d = "test/unit";
		snprintf(fixtures, sizeof(fixtures), "%s/kubeconfig", d);
	}
	return fixtures;
}

static void
spew(const char *path, const char *text)
{
	FILE *f;

	if ((f = fopen(path, "w")) == NULL) {
		fail_msg("cannot write %s: %s", path, strerror(errno));
		return;
	}
	fputs(text, f);
	fclose(f);
}

/*
 * Replace the kubeconfig's path by $FILE and the fixture directory by
 * $DIR in s; returns a new string.
 */
static char *
contract(const char *s, const char *file)
{
	const char *dir = fixture_dir();
	size_t n = 0, dlen = strlen(dir), flen = strlen(file);
	char *out;

	out = xmalloc(strlen(s) + 1);
	while (*s != '\0') {
		if (strncmp(s, file, flen) == 0) {
			memcpy(out + n, "$FILE", 5);
			n += 5;
			s += flen;
		} else if (strncmp(s, dir, dlen) == 0) {
			memcpy(out + n, "$DIR", 4);
			n += 4;
			s += dlen;
		} else
			out[n++] = *s++;
	}
	out[n] = '\0';
	return out;
}

/* Append s to buf as a quoted string with \n and \" escaped, or null. */
static void
dump_str(char *buf, size_t len, const char *key, const char *s)
{
	size_t n = strlen(buf);

	n += (size_t)snprintf(buf + n, len - n, "%s ", key);
	if (s == NULL) {
		snprintf(buf + n, len - n, "null\n");
		return;
	}
	buf[n++] = '"';
	for (; *s != '\0' && n + 4 < len; s++) {
		if (*s == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else if (*s == '"' || *s == '\\') {
			buf[n++] = '\\';
			buf[n++] = *s;
		} else
			buf[n++] = *s;
	}
	snprintf(buf + n, len - n, "\"\n");
}

static void
dump_creds(const struct kube_creds *c, const char *warn, char *buf,
    size_t len)
{
	buf[0] = '\0';
	dump_str(buf, len, "server", c->server);
	dump_str(buf, len, "ca_file", c->ca_file);
	dump_str(buf, len, "ca_pem", c->ca_pem);
	dump_str(buf, len, "cert_file", c->cert_file);
	dump_str(buf, len, "cert_pem", c->cert_pem);
	dump_str(buf, len, "key_file", c->key_file);
	dump_str(buf, len, "key_pem", c->key_pem);
	dump_str(buf, len, "token", c->token);
	dump_str(buf, len, "token_file", c->token_file);
	dump_str(buf, len, "tls_server_name", c->tls_server_name);
	dump_str(buf, len, "namespace", c->namespace);
	snprintf(buf + strlen(buf), len - strlen(buf), "insecure %d\n",
	    c->insecure);
	dump_str(buf, len, "warn", warn);
}

/* The NAME of every NAME.yaml; errs picks the err-* cases or the rest. */
static int
cases(int errs, char ***names)
{
	char **v;
	int i, j, n;

	if ((n = list_cases(fixture_dir(), ".yaml", &v)) <= 0)
		fail_msg("no cases in %s", fixture_dir());
	for (i = j = 0; i < n; i++) {
		if ((strncmp(v[i], "err-", 4) == 0) == errs)
			v[j++] = v[i];
		else
			free(v[i]);
	}
	v[j] = NULL;
	*names = v;
	return j;
}

static int
all_zero(const struct kube_creds *c)
{
	static const struct kube_creds zero;

	return memcmp(c, &zero, sizeof(zero)) == 0;
}

static void
test_golden_valid(void **state)
{
	char **names, path[PATH_MAX + 64], out[PATH_MAX + 64], err[1024];
	char warn[1024], got[8192], *text;
	struct kube_creds c;
	int i, n, failed = 0;

	(void)state;
	n = cases(0, &names);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s.yaml", fixture_dir(),
		    names[i]);
		snprintf(out, sizeof(out), "%s/%s.out", fixture_dir(),
		    names[i]);
		strcpy(warn, "stale");
		if (kubeconfig_load(&c, path, err, sizeof(err), warn,
		    sizeof(warn)) == -1) {
			print_error("%s: load failed: %s\n", names[i], err);
			failed++;
			continue;
		}
		dump_creds(&c, warn, got, sizeof(got));
		text = contract(got, path);
		if (expect_golden(text, out) == -1)
			failed++;
		free(text);
		creds_clear(&c);
		assert_true(all_zero(&c));
	}
	free_names(names);
	assert_int_equal(failed, 0);
	assert_true(n >= MIN_VALID);
}

static void
test_golden_invalid(void **state)
{
	char **names, path[PATH_MAX + 64], out[PATH_MAX + 64], err[1024];
	char warn[256], *text;
	struct kube_creds c;
	int i, n, failed = 0;

	(void)state;
	n = cases(1, &names);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s.yaml", fixture_dir(),
		    names[i]);
		snprintf(out, sizeof(out), "%s/%s.err", fixture_dir(),
		    names[i]);
		memset(&c, 0x5a, sizeof(c));
		strcpy(warn, "stale");
		if (kubeconfig_load(&c, path, err, sizeof(err), warn,
		    sizeof(warn)) == 0) {
			print_error("%s: loaded\n", names[i]);
			creds_clear(&c);
			failed++;
			continue;
		}
		if (!all_zero(&c) || warn[0] != '\0') {
			print_error("%s: creds or warning left set\n",
			    names[i]);
			failed++;
		}
		strcat(err, "\n");
		text = contract(err, path);
		if (expect_golden(text, out) == -1)
			failed++;
		free(text);
	}
	free_names(names);
	assert_int_equal(failed, 0);
	assert_true(n >= MIN_INVALID);
}

/* A kubeconfig named by a relative path resolves against its directory. */
static void
test_relative_path(void **state)
{
	char cwd[PATH_MAX], want[PATH_MAX + 64], err[1024];
	struct kube_creds c;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(fixture_dir()), 0);
	assert_int_equal(kubeconfig_load(&c, "token-file.yaml", err,
	    sizeof(err), NULL, 0), 0);
	assert_non_null(getcwd(want, sizeof(want)));
	strcat(want, "/tokens/sa-token");
	assert_string_equal(c.token_file, want);
	creds_clear(&c);

	assert_int_equal(chdir(".."), 0);
	assert_int_equal(kubeconfig_load(&c, "kubeconfig/token-file.yaml",
	    err, sizeof(err), NULL, 0), 0);
	assert_non_null(getcwd(want, sizeof(want)));
	strcat(want, "/kubeconfig/certs/ca.crt");
	assert_string_equal(c.ca_file, want);
	creds_clear(&c);
	assert_int_equal(chdir(cwd), 0);
}

static void
test_load_errors(void **state)
{
	char err[1024], small[16], path[PATH_MAX + 64];
	struct kube_creds c;

	(void)state;
	assert_int_equal(kubeconfig_load(&c, "/nonexistent/kubeconfig", err,
	    sizeof(err), NULL, 0), -1);
	assert_string_equal(err,
	    "/nonexistent/kubeconfig: No such file or directory");
	assert_int_equal(kubeconfig_load(&c, fixture_dir(), err, sizeof(err),
	    NULL, 0), -1);
	snprintf(path, sizeof(path), "%s: not a regular file", fixture_dir());
	assert_string_equal(err, path);
	assert_true(all_zero(&c));

	/* Short buffers are truncated, never overrun. */
	snprintf(path, sizeof(path), "%s/err-exec.yaml", fixture_dir());
	assert_int_equal(kubeconfig_load(&c, path, small, sizeof(small), NULL,
	    0), -1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_int_equal(kubeconfig_load(&c, path, NULL, 0, NULL, 0), -1);
}

/*
 * A KUBECONFIG list merged as kubectl merges it: current-context from
 * the first file that sets one; of the contexts, clusters and users of
 * one name, the first file's; a missing file skipped; a named context.
 */
static void
test_merged(void **state)
{
	char dir[] = "/tmp/kcmerge-XXXXXX", a[PATH_MAX], b[PATH_MAX];
	char miss[PATH_MAX], err[1024], want[PATH_MAX + 64];
	const char *ab[2], *ba[2], *ma[2], *m1[1];
	struct kube_creds c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(miss, sizeof(miss), "%s/missing", dir);
	spew(a, "current-context: ca\n"
	    "contexts:\n"
	    "- {name: ca, context: {cluster: x, user: u, namespace: nsa}}\n"
	    "clusters:\n"
	    "- {name: x, cluster: {server: 'https://a.example'}}\n"
	    "users:\n"
	    "- {name: u, user: {token: toka}}\n");
	spew(b, "current-context: cb\n"
	    "contexts:\n"
	    "- {name: ca, context: {cluster: y, user: u}}\n"
	    "- {name: cb, context: {cluster: x, user: u2, namespace: nsb}}\n"
	    "clusters:\n"
	    "- {name: x, cluster: {server: 'https://b.example'}}\n"
	    "- {name: y, cluster: {server: 'https://y.example'}}\n"
	    "users:\n"
	    "- {name: u, user: {token: tokb}}\n"
	    "- {name: u2, user: {token: tok2}}\n");
	ab[0] = a, ab[1] = b;
	ba[0] = b, ba[1] = a;
	ma[0] = miss, ma[1] = a;
	m1[0] = miss;

	/* The first file's current-context, context, cluster and user. */
	assert_int_equal(kubeconfig_load_merged(&c, ab, 2, 1, NULL, err,
	    sizeof(err), NULL, 0), 0);
	assert_string_equal(c.server, "https://a.example");
	assert_string_equal(c.token, "toka");
	assert_string_equal(c.namespace, "nsa");
	creds_clear(&c);
	/* The other order: b's current-context, its cluster x first. */
	assert_int_equal(kubeconfig_load_merged(&c, ba, 2, 1, NULL, err,
	    sizeof(err), NULL, 0), 0);
	assert_string_equal(c.server, "https://b.example");
	assert_string_equal(c.token, "tok2");
	assert_string_equal(c.namespace, "nsb");
	creds_clear(&c);
	/* A named context from b, whose cluster x a defines first. */
	assert_int_equal(kubeconfig_load_merged(&c, ab, 2, 1, "cb", err,
	    sizeof(err), NULL, 0), 0);
	assert_string_equal(c.server, "https://a.example");
	assert_string_equal(c.token, "tok2");
	creds_clear(&c);
	/* Context ca is a's: b's entry of that name is not read. */
	assert_int_equal(kubeconfig_load_merged(&c, ba, 2, 1, "ca", err,
	    sizeof(err), NULL, 0), 0);
	assert_string_equal(c.server, "https://y.example");
	assert_string_equal(c.token, "tokb");
	assert_null(c.namespace);
	creds_clear(&c);
	/* A missing file of a list is skipped; of a list of one, an error. */
	assert_int_equal(kubeconfig_load_merged(&c, ma, 2, 1, NULL, err,
	    sizeof(err), NULL, 0), 0);
	assert_string_equal(c.token, "toka");
	creds_clear(&c);
	assert_int_equal(kubeconfig_load_merged(&c, m1, 1, 1, NULL, err,
	    sizeof(err), NULL, 0), -1);
	assert_non_null(strstr(err, "none of the kubeconfig files exists"));
	assert_int_equal(kubeconfig_load_merged(&c, m1, 1, 0, NULL, err,
	    sizeof(err), NULL, 0), -1);
	assert_non_null(strstr(err, "No such file or directory"));
	/* A context that no file defines. */
	assert_int_equal(kubeconfig_load_merged(&c, ab, 2, 1, "nope", err,
	    sizeof(err), NULL, 0), -1);
	snprintf(want, sizeof(want), "%s: context \"nope\" does not exist",
	    a);
	assert_string_equal(err, want);
	assert_true(all_zero(&c));
	unlink(a);
	unlink(b);
	rmdir(dir);
}

static void
test_warn_truncated(void **state)
{
	char err[1024], warn[40], path[PATH_MAX + 64];
	struct kube_creds c;

	(void)state;
	snprintf(path, sizeof(path), "%s/data-overrides-file.yaml",
	    fixture_dir());
	assert_int_equal(kubeconfig_load(&c, path, err, sizeof(err), warn,
	    sizeof(warn)), 0);
	assert_int_equal(strlen(warn), sizeof(warn) - 1);
	assert_memory_equal(warn, "cluster \"c\": certificate-authority-data",
	    sizeof(warn) - 1);
	creds_clear(&c);
}

/* A temporary service account directory. */
struct sa {
	char	 dir[64];
	char	 path[128];
};

static void
sa_file(struct sa *sa, const char *name, const char *text)
{
	snprintf(sa->path, sizeof(sa->path), "%s/%s", sa->dir, name);
	spew(sa->path, text);
}

static void
sa_rm(struct sa *sa, const char *name)
{
	snprintf(sa->path, sizeof(sa->path), "%s/%s", sa->dir, name);
	unlink(sa->path);
}

static int
sa_setup(void **state)
{
	struct sa *sa;

	sa = xcalloc(1, sizeof(*sa));
	snprintf(sa->dir, sizeof(sa->dir), "/tmp/kubeconfig_test.XXXXXX");
	if (mkdtemp(sa->dir) == NULL)
		return -1;
	*state = sa;
	return 0;
}

static int
sa_teardown(void **state)
{
	struct sa *sa = *state;

	sa_rm(sa, "token");
	sa_rm(sa, "ca.crt");
	sa_rm(sa, "namespace");
	sa_rm(sa, "kubeconfig");
	rmdir(sa->dir);
	free(sa);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	return 0;
}

static void
test_incluster(void **state)
{
	struct sa *sa = *state;
	struct kube_creds c;
	char err[512], want[256];

	sa_file(sa, "token", "eyJhbGciOi.payload.sig\n");
	sa_file(sa, "ca.crt", "-----BEGIN CERTIFICATE-----\n");
	sa_file(sa, "namespace", "  team-a\n");
	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    0);
	assert_string_equal(c.server, "https://10.96.0.1:443");
	snprintf(want, sizeof(want), "%s/token", sa->dir);
	assert_string_equal(c.token_file, want);
	assert_null(c.token);
	snprintf(want, sizeof(want), "%s/ca.crt", sa->dir);
	assert_string_equal(c.ca_file, want);
	assert_string_equal(c.namespace, "team-a");
	assert_null(c.ca_pem);
	assert_null(c.cert_file);
	assert_null(c.key_file);
	assert_int_equal(c.insecure, 0);
	creds_clear(&c);

	/* IPv6: bracketed as net.JoinHostPort does. */
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
	sa_file(sa, "namespace", "\n");
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    0);
	assert_string_equal(c.server, "https://[fd00::1]:6443");
	assert_null(c.namespace);
	creds_clear(&c);

	/* No ca.crt: an error naming it, never the system CA store (L6). */
	sa_rm(sa, "ca.crt");
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    -1);
	snprintf(want, sizeof(want), "CA file %s/ca.crt: No such file or "
	    "directory", sa->dir);
	assert_string_equal(err, want);
	assert_true(all_zero(&c));
	sa_file(sa, "ca.crt", "-----BEGIN CERTIFICATE-----\n");

	/* No namespace file at all. */
	sa_rm(sa, "namespace");
	setenv("KUBERNETES_SERVICE_HOST", "kubernetes.default.svc", 1);
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    0);
	assert_string_equal(c.server, "https://kubernetes.default.svc:6443");
	assert_null(c.namespace);
	creds_clear(&c);
}

static void
test_incluster_errors(void **state)
{
	struct sa *sa = *state;
	struct kube_creds c;
	char err[512], want[512];

	sa_file(sa, "token", "tok\n");
	unsetenv("KUBERNETES_SERVICE_HOST");
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "not running in a cluster: "
	    "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be "
	    "set");
	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "", 1);
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    -1);
	assert_non_null(strstr(err, "not running in a cluster"));

	setenv("KUBERNETES_SERVICE_PORT", "tcp://10.0.0.1:443", 1);
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "KUBERNETES_SERVICE_PORT "
	    "\"tcp://10.0.0.1:443\" is not a port number");
	setenv("KUBERNETES_SERVICE_PORT", "65536", 1);
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    -1);
	setenv("KUBERNETES_SERVICE_PORT", "0", 1);
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    -1);
	setenv("KUBERNETES_SERVICE_PORT", "99999999999999999999", 1);
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    -1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	setenv("KUBERNETES_SERVICE_HOST", "evil.example/x?", 1);
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    -1);
	assert_string_equal(err, "KUBERNETES_SERVICE_HOST "
	    "\"evil.example/x?\" is not a host name or address");
	assert_true(all_zero(&c));

	/* The token must be readable and non-empty now. */
	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	sa_rm(sa, "token");
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    -1);
	snprintf(want, sizeof(want), "token file %s/token: No such file or "
	    "directory", sa->dir);
	assert_string_equal(err, want);
	assert_true(all_zero(&c));
	sa_file(sa, "token", " \n");
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    -1);
	snprintf(want, sizeof(want), "token file %s/token is empty", sa->dir);
	assert_string_equal(err, want);
	assert_true(all_zero(&c));

	/* NULL means the standard directory. */
	if (access(KUBE_SA_DIR "/token", R_OK) == -1) {
		assert_int_equal(creds_incluster(&c, NULL, err,
		    sizeof(err)), -1);
		assert_non_null(strstr(err, KUBE_SA_DIR "/token"));
	}
}

static void
test_read_token(void **state)
{
	struct sa *sa = *state;
	char err[512], want[512], *tok, *big;

	sa_file(sa, "token", "\t secret-token.value \r\n\n");
	tok = creds_read_token(sa->path, err, sizeof(err));
	assert_non_null(tok);
	assert_string_equal(tok, "secret-token.value");
	free(tok);

	/* Inner white space or control characters would break a header. */
	sa_file(sa, "token", "secret\r\nX-Evil: 1\n");
	assert_null(creds_read_token(sa->path, err, sizeof(err)));
	snprintf(want, sizeof(want), "token file %s contains characters that "
	    "are not allowed in a bearer token", sa->path);
	assert_string_equal(err, want);
	assert_null(strstr(err, "secret"));
	sa_file(sa, "token", "sec ret");
	assert_null(creds_read_token(sa->path, err, sizeof(err)));
	assert_null(strstr(err, "sec"));

	sa_file(sa, "token", "");
	assert_null(creds_read_token(sa->path, err, sizeof(err)));
	snprintf(want, sizeof(want), "token file %s is empty", sa->path);
	assert_string_equal(err, want);

	/* 64 KiB is the limit. */
	big = xmalloc(65537 + 1);
	memset(big, 'a', 65537);
	big[65536] = '\0';
	sa_file(sa, "token", big);
	tok = creds_read_token(sa->path, err, sizeof(err));
	assert_non_null(tok);
	assert_int_equal(strlen(tok), 65536);
	free(tok);
	big[65536] = 'a';
	big[65537] = '\0';
	sa_file(sa, "token", big);
	assert_null(creds_read_token(sa->path, err, sizeof(err)));
	snprintf(want, sizeof(want), "token file %s is larger than 65536 "
	    "bytes", sa->path);
	assert_string_equal(err, want);
	free(big);

	assert_null(creds_read_token(sa->dir, err, sizeof(err)));
	snprintf(want, sizeof(want), "token file %s: not a regular file",
	    sa->dir);
	assert_string_equal(err, want);
	assert_null(creds_read_token("/nonexistent/token", err,
	    sizeof(err)));
	assert_string_equal(err,
	    "token file /nonexistent/token: No such file or directory");
}

/*
 * A FIFO, a device or an oversized file where a credential or the
 * kubeconfig should be is refused at once, never waited on (I1, L4).
 * A FIFO with no writer blocks a plain open() for ever; the alarm turns
 * such a hang into a failure.
 */
static void
test_hostile_files(void **state)
{
	struct sa *sa = *state;
	struct kube_creds c;
	char err[1024], want[1024], kc[256], *text;
	size_t i, n;
	FILE *f;

	alarm(20);
	sa_rm(sa, "token");
	assert_int_equal(mkfifo(sa->path, 0600), 0);
	assert_null(creds_read_token(sa->path, err, sizeof(err)));
	snprintf(want, sizeof(want), "token file %s: not a regular file",
	    sa->path);
	assert_string_equal(err, want);
	assert_null(creds_read_token("/dev/zero", err, sizeof(err)));
	assert_string_equal(err, "token file /dev/zero: not a regular file");

	/* In-cluster: a FIFO ca.crt. */
	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	sa_rm(sa, "token");
	sa_file(sa, "token", "tok\n");
	sa_rm(sa, "ca.crt");
	assert_int_equal(mkfifo(sa->path, 0600), 0);
	assert_int_equal(creds_incluster(&c, sa->dir, err, sizeof(err)),
	    -1);
	snprintf(want, sizeof(want), "CA file %s/ca.crt: not a regular file",
	    sa->dir);
	assert_string_equal(err, want);

	/* A kubeconfig naming a FIFO as its CA file. */
	snprintf(kc, sizeof(kc), "%s/kubeconfig", sa->dir);
	xasprintf(&text, "current-context: x\ncontexts:\n- name: x\n"
	    "  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
	    "  cluster:\n    server: https://h\n"
	    "    certificate-authority: %s/ca.crt\n"
	    "users:\n- name: u\n  user: {token: t}\n", sa->dir);
	spew(kc, text);
	free(text);
	assert_int_equal(kubeconfig_load(&c, kc, err, sizeof(err), NULL, 0),
	    -1);
	snprintf(want, sizeof(want), "%s:9:28: certificate-authority "
	    "%s/ca.crt: not a regular file", kc, sa->dir);
	assert_string_equal(err, want);

	/* The kubeconfig itself as a FIFO. */
	unlink(kc);
	assert_int_equal(mkfifo(kc, 0600), 0);
	assert_int_equal(kubeconfig_load(&c, kc, err, sizeof(err), NULL, 0),
	    -1);
	snprintf(want, sizeof(want), "%s: not a regular file", kc);
	assert_string_equal(err, want);
	unlink(kc);

	/* Over 1 MiB. */
	assert_non_null(f = fopen(kc, "w"));
	for (n = 0; n <= 1024 * 1024; n += 32)
		fputs("# padding padding padding paddi\n", f);
	fclose(f);
	assert_int_equal(kubeconfig_load(&c, kc, err, sizeof(err), NULL, 0),
	    -1);
	snprintf(want, sizeof(want), "%s: file too large (over 1048576 "
	    "bytes)", kc);
	assert_string_equal(err, want);

	/*
	 * Nesting, the top-level mapping being level 1: 64 levels load
	 * (and fail later), 65 are refused at the node that is too deep.
	 */
	n = 65;
	text = xmalloc(2 * n + 64);
	memcpy(text, "current-context: ", 17);
	for (i = 0; i < n; i++)
		text[17 + i] = '[';
	for (i = 0; i < n; i++)
		text[17 + n + i] = ']';
	text[17 + 2 * n] = '\n';
	text[18 + 2 * n] = '\0';
	spew(kc, text);
	assert_int_equal(kubeconfig_load(&c, kc, err, sizeof(err), NULL, 0),
	    -1);
	snprintf(want, sizeof(want), "%s:1:81: YAML nesting deeper than 64 "
	    "levels; a kubeconfig needs about five", kc);
	assert_string_equal(err, want);
	text[17] = ' ';
	text[17 + 2 * n - 1] = ' ';
	text[18] = ' ';
	text[17 + 2 * n - 2] = ' ';
	spew(kc, text);
	assert_int_equal(kubeconfig_load(&c, kc, err, sizeof(err), NULL, 0),
	    -1);
	assert_null(strstr(err, "nesting"));
	free(text);
	alarm(0);
}

struct b64_case {
	const char	*data;		/* certificate-authority-data */
	const char	*pem;		/* decoded, or NULL for an error */
};

/* The base64 decoder, through certificate-authority-data. */
static void
test_base64(void **state)
{
	static const struct b64_case cases[] = {
		{ "LS0tLS1CRUdJTiBBLS0tLS0K", "-----BEGIN A-----\n" },
		{ "LS0tLS1CRUdJTiBBQi0tLS0tCg==", "-----BEGIN AB-----\n" },
		{ "LS0tLS1CRUdJTiBBQkMtLS0tLQo=", "-----BEGIN ABC-----\n" },
		{ "LS0tLS1C\\r\\nRUdJTiBB\\nLS0tLS0K\\n",
		    "-----BEGIN A-----\n" },
		{ "LS0tLS1CRUdJTiBBQi0tLS0tCg", NULL },	/* no padding */
		{ "LS0tLS1CRUdJTiBBQi0tLS0tCg=", NULL },	/* short pad */
		{ "LS0tLS1CRUdJTiBBQi0tLS0tC===", NULL },
		{ "LS0tLS1CRUdJTiBBQi0tLS0t=Cg=", NULL },
		{ "LS0tLS1CRUdJTiBBQi0tLS0tCg==LS0t", NULL },
		{ "LS0tLS1CRUdJTiBBQi0tLS0tCg==\\n=", NULL },
		{ "=LS0tLS1CRUdJTiBBLS0tLS0K", NULL },
		{ "LS0tLS1CRUdJTiBB LS0tLS0K", NULL },	/* space */
		{ "LS0tLS1CRUdJTiBBLS0tLS0K\t", NULL },
		{ "LS0tLS1CRUdJTiB-LS0tLS0K", NULL },	/* base64url */
		{ "LS0tLS1CRUdJTiB_LS0tLS0K", NULL },
	};
	struct sa *sa = *state;
	struct kube_creds c;
	char text[512], err[1024];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "current-context: c\n"
		    "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
		    "clusters: [{name: c, cluster: {server: \"https://h\", "
		    "certificate-authority-data: \"%s\"}}]\n"
		    "users: [{name: u, user: {}}]\n", cases[i].data);
		sa_file(sa, "kubeconfig", text);
		rc = kubeconfig_load(&c, sa->path, err, sizeof(err), NULL, 0);
		if (cases[i].pem == NULL) {
			if (rc != -1)
				fail_msg("case %zu: decoded \"%s\"", i,
				    c.ca_pem);
			assert_non_null(strstr(err,
			    "certificate-authority-data is not valid base64"));
			continue;
		}
		if (rc == -1)
			fail_msg("case %zu: %s", i, err);
		assert_string_equal(c.ca_pem, cases[i].pem);
		creds_clear(&c);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_valid),
		cmocka_unit_test(test_golden_invalid),
		cmocka_unit_test(test_relative_path),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_merged),
		cmocka_unit_test(test_warn_truncated),
		cmocka_unit_test_setup_teardown(test_incluster, sa_setup,
		    sa_teardown),
		cmocka_unit_test_setup_teardown(test_incluster_errors,
		    sa_setup, sa_teardown),
		cmocka_unit_test_setup_teardown(test_read_token, sa_setup,
		    sa_teardown),
		cmocka_unit_test_setup_teardown(test_base64, sa_setup,
		    sa_teardown),
		cmocka_unit_test_setup_teardown(test_hostile_files, sa_setup,
		    sa_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
