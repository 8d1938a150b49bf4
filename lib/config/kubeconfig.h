/*
 * kubeconfig.h -- where the API server is and how to prove who we are:
 * the in-cluster service account, or a kubeconfig file.
 *
 * Pure apart from reading files and the environment; never logs.  Warnings
 * (insecure-skip-tls-verify) are returned to the caller to log.
 */

#ifndef KUBECONFIG_H
#define KUBECONFIG_H

#include <stddef.h>

#define KUBE_SA_DIR	"/var/run/secrets/kubernetes.io/serviceaccount"

/*
 * Everything kube.c needs to reach and authenticate to the API server.
 * PEM data fields are NUL-terminated strings (decoded from base64 for
 * the *-data kubeconfig keys).  Owned by the struct; kubeconfig_free.
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
int	kubeconfig_incluster(struct kube_creds *c, const char *sa_dir,
	    char *err, size_t errlen);

/*
 * Credentials from a kubeconfig file's current context (ref 6.2):
 * server; certificate-authority or -data; token, tokenFile, or
 * client-certificate/-key (file or -data); insecure-skip-tls-verify.
 * Relative paths resolve against the file's directory.  More than one
 * authentication method, a missing context, cluster, user or server,
 * a CA together with insecure-skip-tls-verify, and unsupported methods
 * (exec, auth-provider, username/password) are errors, reported as
 * "file:line:col: message" where the position is known.  If warn is not
 * NULL a warning for the caller to log is written there ("" if none).
 * Returns 0, or -1 with err.
 */
int	kubeconfig_load(struct kube_creds *c, const char *path, char *err,
	    size_t errlen, char *warn, size_t warnlen);

/*
 * Read a bearer token file: contents with surrounding white space
 * removed.  Returns a string the caller frees, or NULL with err when the
 * file cannot be read or is empty.  The token never appears in err.
 */
char	*kubeconfig_read_token(const char *path, char *err, size_t errlen);

/*
 * Check that a credential file (CA, client certificate or key) can be
 * used: opened without blocking, a regular file, at most 1 MiB.  what
 * names it in err ("CA file").  Returns 0, or -1 with err.
 */
int	kubeconfig_check_file(const char *path, const char *what, char *err,
	    size_t errlen);

/*
 * What user credentials c would send in cleartext: "a bearer token" or
 * "a client certificate" when the server is an http:// URL (a proxy in
 * between sees the same bytes), or NULL when there are none or the
 * server is https:// (an HTTPS_PROXY tunnels TLS with CONNECT, so the
 * credentials stay inside TLS).
 */
const char *kubeconfig_cleartext(const struct kube_creds *c);

/* Free what c owns and zero it. */
void	kubeconfig_free(struct kube_creds *c);

#endif /* KUBECONFIG_H */
