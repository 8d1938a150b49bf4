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

/*
 * The same from the files paths[0..npaths-1] merged as kubectl merges a
 * KUBECONFIG list: current-context from the first file that sets it, and
 * of the contexts, clusters and users of one name, the first file's
 * (relative paths resolve against the file that defined the entry).  No
 * other key is merged: preferences, extensions and the
 * insecure-skip-tls-verify or namespace given on kubectl's own command
 * line are not read.  list: a file that does not exist, or an empty one,
 * is skipped, as kubectl skips them in KUBECONFIG (at least one must be
 * read); otherwise every file must be a kubeconfig.  Empty paths are
 * skipped.  context: the context to use (NULL: current-context); one that
 * no file defines is the error "context \"NAME\" does not exist".
 */
int	kubeconfig_load_merged(struct kube_creds *c, const char *const *paths,
	    size_t npaths, int list, const char *context, char *err,
	    size_t errlen, char *warn, size_t warnlen);

#endif /* KUBECONFIG_H */
