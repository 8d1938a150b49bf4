/*
 * kubeconfig.h -- where the API server is and how to prove who we are,
 * from a kubeconfig file (the in-cluster service account is creds.h's).
 *
 * Pure apart from reading files and the environment; never logs.  Warnings
 * (insecure-skip-tls-verify) are returned to the caller to log.
 */

#ifndef KUBECONFIG_H
#define KUBECONFIG_H

#include <stddef.h>

#include "config/creds.h"

/*
 * Credentials from a kubeconfig file's current context
 * (ref/clientgo-leaderelection.md 6.2): server; certificate-authority or
 * -data; token, tokenFile, or client-certificate/-key (file or -data);
 * insecure-skip-tls-verify.  Relative paths resolve against the file's
 * directory.  More than one authentication method, a missing context,
 * cluster, user or server, a CA together with insecure-skip-tls-verify,
 * and unsupported methods (exec, auth-provider, username/password) are
 * errors, reported as "file:line:col: message" where the position is
 * known.  If warn is not NULL a warning for the caller to log is written
 * there ("" if none).  Returns 0, or -1 with err; the caller frees c
 * with creds_clear.
 */
int	kubeconfig_load(struct kube_creds *c, const char *path, char *err,
	    size_t errlen, char *warn, size_t warnlen);

#endif /* KUBECONFIG_H */
