/*
 * incluster.c -- the credentials that do not come from a kubeconfig
 * file (creds.h): the in-cluster service account
 * (ref/clientgo-leaderelection.md 6.1), bearer token files, and the
 * checks on credential files that kubeconfig.c uses too.
 *
 * Token files are read in full into a buffer that is wiped before it is
 * freed, and no token ever appears in an error.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xmalloc.h"
#include "config/cfgfile.h"
#include "config/creds.h"

#define TOKEN_MAX	65536	/* larger token files are refused */
#define CRED_FILE_MAX	(1024 * 1024)	/* CA, certificate and key files */

static char	*read_small(const char *, size_t, const char *, char *,
		    size_t);

/*
 * Read at most max bytes of path, with surrounding white space removed.
 * what names the file in errors ("token file").
 */
static char *
read_small(const char *path, size_t max, const char *what, char *err,
    size_t errlen)
{
	char *buf, *s, *e;
	size_t len = 0;
	ssize_t n;
	int fd;

	/* Non-blocking open: a FIFO or a device is refused, not waited on. */
	if ((fd = cfgfile_open(path, max, what, err, errlen)) == -1)
		return NULL;
	buf = xmalloc(max + 2);
	while (len <= max && (n = read(fd, buf + len, max + 1 - len)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "%s %s: %s", what, path,
			    strerror(errno));
			goto fail;
		}
		len += (size_t)n;
	}
	if (len > max) {
		snprintf(err, errlen, "%s %s is larger than %zu bytes", what,
		    path, max);
		goto fail;
	}
	buf[len] = '\0';
	close(fd);
	for (s = buf; isspace((unsigned char)*s); s++)
		;
	for (e = buf + len; e > s && isspace((unsigned char)e[-1]); e--)
		;
	s = xstrndup(s, (size_t)(e - s));
	explicit_bzero(buf, len);
	free(buf);
	return s;
 fail:
	explicit_bzero(buf, len);
	free(buf);
	close(fd);
	return NULL;
}

int
creds_check_file(const char *path, const char *what, char *err,
    size_t errlen)
{
	int	 fd;

	if ((fd = cfgfile_open(path, CRED_FILE_MAX, what, err, errlen)) == -1)
		return -1;
	close(fd);
	return 0;
}

const char *
creds_cleartext(const struct kube_creds *c)
{
	if (c->server == NULL || strncmp(c->server, "http://", 7) != 0)
		return NULL;
	if (c->token != NULL || c->token_file != NULL)
		return "a bearer token";
	if (c->cert_pem != NULL || c->cert_file != NULL)
		return "a client certificate";
	return NULL;
}

/* Visible ASCII only: nothing that could break an HTTP header. */
int
creds_token_ok(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

char *
creds_read_token(const char *path, char *err, size_t errlen)
{
	char *tok;

	if (errlen > 0)
		err[0] = '\0';
	if ((tok = read_small(path, TOKEN_MAX, "token file", err,
	    errlen)) == NULL)
		return NULL;
	if (*tok == '\0') {
		snprintf(err, errlen, "token file %s is empty", path);
		free(tok);
		return NULL;
	}
	if (!creds_token_ok(tok)) {
		snprintf(err, errlen, "token file %s contains characters that "
		    "are not allowed in a bearer token", path);
		explicit_bzero(tok, strlen(tok));
		free(tok);
		return NULL;
	}
	return tok;
}

int
creds_incluster(struct kube_creds *c, const char *sa_dir, char *err,
    size_t errlen)
{
	const char *host, *port, *p;
	char *path, *tok, *ns;
	long n;

	memset(c, 0, sizeof(*c));
	if (errlen > 0)
		err[0] = '\0';
	host = getenv("KUBERNETES_SERVICE_HOST");
	port = getenv("KUBERNETES_SERVICE_PORT");
	if (host == NULL || *host == '\0' || port == NULL || *port == '\0') {
		/* The caller adds how to run outside a cluster. */
		snprintf(err, errlen, "not running in a cluster: "
		    "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
		    "must be set");
		return -1;
	}
	for (p = host; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && strchr(".-_:%", *p) == NULL)
			break;
	if (*p != '\0') {
		snprintf(err, errlen, "KUBERNETES_SERVICE_HOST \"%.256s\" is "
		    "not a host name or address", host);
		return -1;
	}
	n = 0;
	for (p = port; *p >= '0' && *p <= '9' && n <= 65535; p++)
		n = n * 10 + (*p - '0');
	if (*p != '\0' || n < 1 || n > 65535) {
		snprintf(err, errlen, "KUBERNETES_SERVICE_PORT \"%.32s\" is "
		    "not a port number", port);
		return -1;
	}
	/* net.JoinHostPort: an IPv6 address goes in brackets. */
	if (strchr(host, ':') != NULL)
		xasprintf(&c->server, "https://[%s]:%ld", host, n);
	else
		xasprintf(&c->server, "https://%s:%ld", host, n);

	if (sa_dir == NULL)
		sa_dir = KUBE_SA_DIR;
	xasprintf(&path, "%s/token", sa_dir);
	if ((tok = creds_read_token(path, err, errlen)) == NULL) {
		free(path);
		creds_clear(c);
		return -1;
	}
	explicit_bzero(tok, strlen(tok));
	free(tok);
	c->token_file = path;

	/*
	 * The service account's CA is always projected into a pod; without
	 * it leaderd would trust the system CA store instead, so its
	 * absence is an error (client-go logs one and fails TLS).
	 */
	xasprintf(&path, "%s/ca.crt", sa_dir);
	if (creds_check_file(path, "CA file", err, errlen) == -1) {
		free(path);
		creds_clear(c);
		return -1;
	}
	c->ca_file = path;

	xasprintf(&path, "%s/namespace", sa_dir);
	if ((ns = read_small(path, 1024, "namespace file", NULL, 0)) != NULL) {
		if (*ns != '\0')
			c->namespace = ns;
		else
			free(ns);
	}
	free(path);
	return 0;
}

void
creds_clear(struct kube_creds *c)
{
	if (c->token != NULL)
		explicit_bzero(c->token, strlen(c->token));
	if (c->key_pem != NULL)
		explicit_bzero(c->key_pem, strlen(c->key_pem));
	free(c->server);
	free(c->ca_file);
	free(c->ca_pem);
	free(c->cert_file);
	free(c->cert_pem);
	free(c->key_file);
	free(c->key_pem);
	free(c->token);
	free(c->token_file);
	free(c->tls_server_name);
	free(c->namespace);
	memset(c, 0, sizeof(*c));
}
