/*
 * creds.h -- where the API server is and how to prove who we are, as
 * plain data (struct kube_creds), and the credentials that do not come
 * from a kubeconfig file: the in-cluster service account, token files and
 * credential files (incluster.c).  kubeconfig.h fills the same struct
 * from a kubeconfig file.
 *
 * Pure apart from reading files and the environment; never logs.
 */

#ifndef CREDS_H
#define CREDS_H

#include <stddef.h>

#define KUBE_SA_DIR	"/var/run/secrets/kubernetes.io/serviceaccount"

/*
 * Everything kube.c needs to reach and authenticate to the API server.
 * PEM data fields are NUL-terminated strings (decoded from base64 for
 * the *-data kubeconfig keys).  Owned by the struct; creds_clear.
 */
struct kube_creds {
	char	*server;	/* "https://host:port", no trailing slash */
	char	*ca_file;	/* CA bundle path, or NULL */
	char	*ca_pem;	/* CA bundle PEM, or NULL */
	char	*cert_file;	/* client certificate path, or NULL */
	char	*cert_pem;	/* client certificate PEM, or NULL */
	char	*key_file;	/* client key path, or NULL */
	char	*key_pem;	/* client key PEM, or NULL */
	char	*token;		/* static bearer token, or NULL */
	char	*token_file;	/* token re-read from this file, or NULL */
	char	*tls_server_name; /* SNI / verified name override, or NULL */
	char	*namespace;	/* context or in-cluster namespace, or NULL */
	int	 insecure;	/* insecure-skip-tls-verify: true in the file */
};

/*
 * In-cluster credentials (ref/clientgo-leaderelection.md 6.1):
 * $KUBERNETES_SERVICE_HOST and _PORT, and sa_dir/{token,ca.crt,namespace}
 * (sa_dir NULL means KUBE_SA_DIR).  The token and ca.crt files must be
 * readable regular files now; there is no fallback to the system CA store.
 * Returns 0, or -1 with the reason in err.
 */
int	creds_incluster(struct kube_creds *c, const char *sa_dir,
	    char *err, size_t errlen);

/*
 * Read a bearer token file: contents with surrounding white space
 * removed.  Returns a string the caller frees, or NULL with err when the
 * file cannot be read or is empty.  The token never appears in err.
 */
char	*creds_read_token(const char *path, char *err, size_t errlen);

/*
 * Whether s may be sent as a bearer token: visible ASCII only, nothing
 * that could break an HTTP header.  Returns 1 or 0.
 */
int	creds_token_ok(const char *s);

/*
 * Check that a credential file (CA, client certificate or key) can be
 * used: opened without blocking, a regular file, at most 1 MiB.  what
 * names it in err ("CA file").  Returns 0, or -1 with err.
 */
int	creds_check_file(const char *path, const char *what, char *err,
	    size_t errlen);

/*
 * What user credentials c would send in cleartext: "a bearer token" or
 * "a client certificate" when the server is an http:// URL (a proxy in
 * between sees the same bytes), or NULL when there are none or the
 * server is https:// (an HTTPS_PROXY tunnels TLS with CONNECT, so the
 * credentials stay inside TLS).
 */
const char *creds_cleartext(const struct kube_creds *c);

/* Free what c owns, wiping the secrets first, and zero it. */
void	creds_clear(struct kube_creds *c);

#endif /* CREDS_H */
