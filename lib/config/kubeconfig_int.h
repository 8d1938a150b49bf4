/*
 * kubeconfig_int.h -- what kubeconfig.c (the files, their merge and the
 * walk from a context to its cluster and user) and kubeconfig_auth.c
 * (what a cluster and a user entry say) share; private to config/.
 */

#ifndef KUBECONFIG_INT_H
#define KUBECONFIG_INT_H

#include <stddef.h>

#include <yaml.h>

#include "config/creds.h"

#define KC_FILES_MAX	16	/* files of one KUBECONFIG list read */

/* One kubeconfig file of the merge. */
struct kc_file {
	const char	*path;		/* the file, for messages */
	char		*dir;		/* its directory, absolute */
	yaml_document_t	 doc;		/* the parsed file */
	int		 loaded;	/* doc holds a document */
};

/* The kubeconfig files being read, in the order they merge. */
struct kc {
	struct kc_file	 files[KC_FILES_MAX];
	size_t		 nfiles;
	size_t		 cur;		/* the file whose nodes are read */
	char		*err;		/* caller's error buffer */
	size_t		 errlen;
	char		*warn;		/* caller's warning buffer, or NULL */
	size_t		 warnlen;
};

/*
 * Write "path:line:col: message" (or "path: message" for n NULL) into
 * err, for the current file.  Returns -1.
 */
int	 kc_err(struct kc *, yaml_node_t *n, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
/* Append a warning, "; "-separated, to the caller's buffer. */
void	 kc_warn(struct kc *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/*
 * The value of key in the mapping map of the current file (NULL if
 * absent or null), and the key node for messages.  A key given twice is
 * an error.
 */
int	 kc_map_get(struct kc *, yaml_node_t *map, const char *key,
	    yaml_node_t **keyp, yaml_node_t **valp);
/* The string map.key; *s is NULL when absent or null. */
int	 kc_get_str(struct kc *, yaml_node_t *map, const char *key,
	    const char **s, yaml_node_t **np);
/* A YAML 1.1 boolean, as sigs.k8s.io/yaml reads it; absent is false. */
int	 kc_get_bool(struct kc *, yaml_node_t *map, const char *key, int *b,
	    yaml_node_t **np);
/* A path from the current file, relative to its directory; caller frees. */
char	*kc_resolve(struct kc *, const char *p);

/* The cluster entry cl (named name) into c: server, CA, TLS. */
int	 kc_load_cluster(struct kc *, const char *name, yaml_node_t *cl,
	    struct kube_creds *c);
/* The user entry u (named name) into c: one authentication method. */
int	 kc_load_user(struct kc *, const char *name, yaml_node_t *u,
	    struct kube_creds *c);

#endif /* KUBECONFIG_INT_H */
