/*
 * kubeconfig.c -- credentials for the API server from the current
 * context of a kubeconfig file (ref/clientgo-leaderelection.md 6.2).
 * The in-cluster service account and token files are incluster.c's.
 *
 * The kubeconfig is loaded as a libyaml document and only the nodes on
 * the path current-context -> context -> cluster and user are read, so
 * the many keys leaderd does not use (preferences, extensions, other
 * contexts) are never errors.  Errors name the file and, where a node is
 * known, its line and column.
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "base/base64.h"
#include "base/text.h"
#include "base/xmalloc.h"
#include "config/cfgfile.h"
#include "config/creds.h"
#include "config/kubeconfig.h"

#define UNSUPPORTED	"which leaderd does not support; use a token, " \
			"tokenFile or client certificate"

/* One kubeconfig being read. */
struct kc {
	const char	*path;		/* the file, for messages */
	char		*dir;		/* its directory, absolute */
	yaml_document_t	 doc;		/* the parsed file */
	char		*err;		/* caller's error buffer */
	size_t		 errlen;
	char		*warn;		/* caller's warning buffer, or NULL */
	size_t		 warnlen;
};

static int	 kc_err(struct kc *, yaml_node_t *, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
static void	 kc_warn(struct kc *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static int	 map_get(struct kc *, yaml_node_t *, const char *,
		    yaml_node_t **, yaml_node_t **);
static int	 get_str(struct kc *, yaml_node_t *, const char *,
		    const char **, yaml_node_t **);
static int	 get_bool(struct kc *, yaml_node_t *, const char *, int *,
		    yaml_node_t **);
static int	 find_named(struct kc *, yaml_node_t *, const char *,
		    const char *, const char *, yaml_node_t *,
		    yaml_node_t **);
static char	*resolve(struct kc *, const char *);
static int	 get_file(struct kc *, yaml_node_t *, const char *, char **);
static int	 get_pem(struct kc *, yaml_node_t *, const char *, char **);
static int	 load_cluster(struct kc *, const char *, yaml_node_t *,
		    struct kube_creds *);
static int	 load_user(struct kc *, const char *, yaml_node_t *,
		    struct kube_creds *);
static int	 load_doc(struct kc *, struct kube_creds *);

/* Write "path:line:col: message" (or "path: message") into err. */
static int
kc_err(struct kc *kc, yaml_node_t *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n != NULL)
		snprintf(kc->err, kc->errlen, "%s:%zu:%zu: %s", kc->path,
		    n->start_mark.line + 1, n->start_mark.column + 1, msg);
	else
		snprintf(kc->err, kc->errlen, "%s: %s", kc->path, msg);
	return -1;
}

/* Append a warning, "; "-separated, to the caller's buffer. */
static void
kc_warn(struct kc *kc, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (kc->warn == NULL || kc->warnlen == 0)
		return;
	n = strlen(kc->warn);
	if (n > 0)
		text_appendf(kc->warn, kc->warnlen, &n, "; ");
	va_start(ap, fmt);
	text_vappendf(kc->warn, kc->warnlen, &n, fmt, ap);
	va_end(ap);
}

/*
 * The value of key in the mapping map (NULL if absent or null), and the
 * key node for messages.  A key given twice is an error.
 */
static int
map_get(struct kc *kc, yaml_node_t *map, const char *key,
    yaml_node_t **keyp, yaml_node_t **valp)
{
	yaml_node_pair_t *p;
	yaml_node_t *k, *found = NULL;

	*valp = NULL;
	if (keyp != NULL)
		*keyp = NULL;
	for (p = map->data.mapping.pairs.start;
	    p < map->data.mapping.pairs.top; p++) {
		k = yaml_document_get_node(&kc->doc, p->key);
		if (k == NULL || k->type != YAML_SCALAR_NODE ||
		    strcmp((const char *)k->data.scalar.value, key) != 0)
			continue;
		if (found != NULL)
			return kc_err(kc, k, "duplicate key \"%s\"", key);
		found = k;
		*valp = yaml_document_get_node(&kc->doc, p->value);
		if (keyp != NULL)
			*keyp = k;
	}
	if (cfgfile_yaml_null(*valp))
		*valp = NULL;
	return 0;
}

/* The string map.key; *s is NULL when absent or null. */
static int
get_str(struct kc *kc, yaml_node_t *map, const char *key, const char **s,
    yaml_node_t **np)
{
	yaml_node_t *v;

	*s = NULL;
	if (map_get(kc, map, key, NULL, &v) == -1)
		return -1;
	if (np != NULL)
		*np = v;
	if (v == NULL)
		return 0;
	if (v->type != YAML_SCALAR_NODE)
		return kc_err(kc, v, "%s must be a string", key);
	if (strlen((const char *)v->data.scalar.value) != v->data.scalar.length)
		return kc_err(kc, v, "%s contains a NUL byte", key);
	*s = (const char *)v->data.scalar.value;
	return 0;
}

/* A YAML 1.1 boolean, as sigs.k8s.io/yaml reads it; absent is false. */
static int
get_bool(struct kc *kc, yaml_node_t *map, const char *key, int *b,
    yaml_node_t **np)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes",
	    "Yes", "YES", "on", "On", "ON", NULL };
	static const char *const no[] = { "false", "False", "FALSE", "no",
	    "No", "NO", "off", "Off", "OFF", NULL };
	yaml_node_t *v;
	const char *s;
	int i;

	*b = 0;
	if (map_get(kc, map, key, NULL, &v) == -1)
		return -1;
	*np = v;
	if (v == NULL)
		return 0;
	if (v->type == YAML_SCALAR_NODE &&
	    v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		s = (const char *)v->data.scalar.value;
		for (i = 0; yes[i] != NULL; i++)
			if (strcmp(s, yes[i]) == 0) {
				*b = 1;
				return 0;
			}
		for (i = 0; no[i] != NULL; i++)
			if (strcmp(s, no[i]) == 0)
				return 0;
	}
	return kc_err(kc, v, "%s must be true or false", key);
}

/*
 * In the list root.listkey of {name: ..., inner: {...}} entries, the
 * inner mapping of the entry called name.  what names an entry in
 * messages; ref is the node that asked for it.
 */
static int
find_named(struct kc *kc, yaml_node_t *root, const char *listkey,
    const char *inner, const char *name, yaml_node_t *ref,
    yaml_node_t **out)
{
	yaml_node_item_t *it;
	yaml_node_t *list, *e, *v, *n;
	const char *s;

	*out = NULL;
	if (map_get(kc, root, listkey, NULL, &list) == -1)
		return -1;
	if (list != NULL && list->type != YAML_SEQUENCE_NODE)
		return kc_err(kc, list, "%s must be a list", listkey);
	for (it = list != NULL ? list->data.sequence.items.start : NULL;
	    list != NULL && it < list->data.sequence.items.top; it++) {
		e = yaml_document_get_node(&kc->doc, *it);
		if (e == NULL || e->type != YAML_MAPPING_NODE)
			return kc_err(kc, e, "entries of %s must be mappings",
			    listkey);
		if (get_str(kc, e, "name", &s, &n) == -1)
			return -1;
		if (s == NULL || strcmp(s, name) != 0)
			continue;
		if (map_get(kc, e, inner, NULL, &v) == -1)
			return -1;
		if (v == NULL)
			return kc_err(kc, e, "%s entry \"%s\" has no %s",
			    listkey, name, inner);
		if (v->type != YAML_MAPPING_NODE)
			return kc_err(kc, v, "%s must be a mapping", inner);
		*out = v;
		return 0;
	}
	return kc_err(kc, ref, "%s \"%s\" not found in %s", inner, name,
	    listkey);
}

/* A path from the file, relative to the file's directory. */
static char *
resolve(struct kc *kc, const char *p)
{
	char *s;

	if (p[0] == '/')
		return xstrdup(p);
	xasprintf(&s, "%s/%s", kc->dir, p);
	return s;
}

/* The readable file named by map.key, resolved, or NULL when absent. */
static int
get_file(struct kc *kc, yaml_node_t *map, const char *key, char **out)
{
	yaml_node_t *n;
	const char *s;
	char *p, why[1024];

	*out = NULL;
	if (get_str(kc, map, key, &s, &n) == -1)
		return -1;
	if (s == NULL || *s == '\0')
		return 0;
	p = resolve(kc, s);
	if (creds_check_file(p, key, why, sizeof(why)) == -1) {
		kc_err(kc, n, "%s", why);
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

/* The PEM text in the base64 value map.key, or NULL when absent. */
static int
get_pem(struct kc *kc, yaml_node_t *map, const char *key, char **out)
{
	yaml_node_t *n;
	const char *s;
	char *pem;
	size_t len;

	*out = NULL;
	if (get_str(kc, map, key, &s, &n) == -1)
		return -1;
	if (s == NULL || *s == '\0')
		return 0;
	if ((pem = base64_decode(s, &len)) == NULL)
		return kc_err(kc, n, "%s is not valid base64", key);
	/* PEM is text; DER or other binary data is refused here. */
	if (memchr(pem, '\0', len) != NULL ||
	    strstr(pem, "-----BEGIN ") == NULL) {
		explicit_bzero(pem, len);
		free(pem);
		return kc_err(kc, n, "%s does not decode to PEM", key);
	}
	*out = pem;
	return 0;
}

static int
load_cluster(struct kc *kc, const char *name, yaml_node_t *cl,
    struct kube_creds *c)
{
	yaml_node_t *n, *insecure_n;
	const char *s;
	size_t len;

	if (get_str(kc, cl, "server", &s, &n) == -1)
		return -1;
	if (s == NULL || *s == '\0')
		return kc_err(kc, cl, "no server found for cluster \"%s\"",
		    name);
	if ((strncmp(s, "https://", 8) != 0 || s[8] == '\0') &&
	    (strncmp(s, "http://", 7) != 0 || s[7] == '\0'))
		return kc_err(kc, n, "server \"%s\" must be an https:// or "
		    "http:// URL", s);
	len = strlen(s);
	while (len > 0 && s[len - 1] == '/')
		len--;
	c->server = xstrndup(s, len);

	if (get_pem(kc, cl, "certificate-authority-data", &c->ca_pem) == -1)
		return -1;
	if (get_str(kc, cl, "certificate-authority", &s, &n) == -1)
		return -1;
	if (c->ca_pem != NULL && s != NULL && *s != '\0')
		kc_warn(kc, "cluster \"%s\": certificate-authority-data "
		    "overrides certificate-authority", name);
	else if (get_file(kc, cl, "certificate-authority", &c->ca_file) == -1)
		return -1;

	if (get_bool(kc, cl, "insecure-skip-tls-verify", &c->insecure,
	    &insecure_n) == -1)
		return -1;
	if (c->insecure && (c->ca_pem != NULL || c->ca_file != NULL))
		return kc_err(kc, insecure_n, "specifying a root certificates "
		    "file with the insecure flag is not allowed");
	if (c->insecure)
		kc_warn(kc, "cluster \"%s\": insecure-skip-tls-verify is "
		    "true: the API server's certificate is not verified",
		    name);

	if (get_str(kc, cl, "tls-server-name", &s, NULL) == -1)
		return -1;
	if (s != NULL && *s != '\0')
		c->tls_server_name = xstrdup(s);
	return 0;
}

static int
load_user(struct kc *kc, const char *name, yaml_node_t *u,
    struct kube_creds *c)
{
	static const struct {
		const char	*key;
		const char	*method;
	} unsupported[] = {
		{ "exec", "an exec plugin (exec)" },
		{ "auth-provider", "an auth-provider" },
		{ "username", "basic authentication (username/password)" },
		{ "password", "basic authentication (username/password)" },
		{ "as", "impersonation (as)" },
		{ "as-uid", "impersonation (as-uid)" },
		{ "as-groups", "impersonation (as-groups)" },
		{ "as-user-extra", "impersonation (as-user-extra)" },
	};
	yaml_node_t *k, *v, *tok_n, *file_n;
	char *tok, terr[512];
	const char *s;
	size_t i;

	for (i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		if (map_get(kc, u, unsupported[i].key, &k, &v) == -1)
			return -1;
		if (v != NULL && (v->type != YAML_SCALAR_NODE ||
		    v->data.scalar.length > 0))
			return kc_err(kc, k, "user \"%s\" uses %s, "
			    UNSUPPORTED, name, unsupported[i].method);
	}

	if (get_str(kc, u, "token", &s, &tok_n) == -1)
		return -1;
	if (s != NULL && *s != '\0') {
		if (!creds_token_ok(s))
			return kc_err(kc, tok_n, "token contains characters "
			    "that are not allowed in a bearer token");
		c->token = xstrdup(s);
	}
	if (get_str(kc, u, "tokenFile", &s, &file_n) == -1)
		return -1;
	if (s != NULL && *s != '\0') {
		/* Read now so a bad file fails at start; token.c re-reads. */
		c->token_file = resolve(kc, s);
		if ((tok = creds_read_token(c->token_file, terr,
		    sizeof(terr))) == NULL)
			return kc_err(kc, file_n, "tokenFile: %s", terr);
		explicit_bzero(tok, strlen(tok));
		free(tok);
	}

	if (get_pem(kc, u, "client-certificate-data", &c->cert_pem) == -1 ||
	    get_pem(kc, u, "client-key-data", &c->key_pem) == -1)
		return -1;
	if (get_str(kc, u, "client-certificate", &s, NULL) == -1)
		return -1;
	if (c->cert_pem != NULL && s != NULL && *s != '\0')
		kc_warn(kc, "user \"%s\": client-certificate-data overrides "
		    "client-certificate", name);
	else if (get_file(kc, u, "client-certificate", &c->cert_file) == -1)
		return -1;
	if (get_str(kc, u, "client-key", &s, NULL) == -1)
		return -1;
	if (c->key_pem != NULL && s != NULL && *s != '\0')
		kc_warn(kc, "user \"%s\": client-key-data overrides "
		    "client-key", name);
	else if (get_file(kc, u, "client-key", &c->key_file) == -1)
		return -1;

	if ((c->cert_pem != NULL || c->cert_file != NULL) &&
	    c->key_pem == NULL && c->key_file == NULL)
		return kc_err(kc, u, "user \"%s\" has a client certificate "
		    "but no client-key or client-key-data", name);
	if ((c->key_pem != NULL || c->key_file != NULL) &&
	    c->cert_pem == NULL && c->cert_file == NULL)
		return kc_err(kc, u, "user \"%s\" has a client key but no "
		    "client-certificate or client-certificate-data", name);
	if ((c->token != NULL || c->token_file != NULL) &&
	    (c->cert_pem != NULL || c->cert_file != NULL))
		return kc_err(kc, u, "user \"%s\" has more than one "
		    "authentication method (a token and a client "
		    "certificate); keep one", name);
	return 0;
}

static int
load_doc(struct kc *kc, struct kube_creds *c)
{
	yaml_node_t *root, *cur_n, *ctx, *cl_n, *user_n, *cl, *u;
	const char *cur, *cl_name, *user_name, *ns;

	if ((root = yaml_document_get_root_node(&kc->doc)) == NULL)
		return kc_err(kc, NULL, "empty file, not a kubeconfig");
	if (root->type != YAML_MAPPING_NODE)
		return kc_err(kc, root, "not a kubeconfig: the top level is "
		    "not a mapping");
	if (get_str(kc, root, "current-context", &cur, &cur_n) == -1)
		return -1;
	if (cur == NULL || *cur == '\0')
		return kc_err(kc, cur_n, "current-context is not set; set it "
		    "with kubectl config use-context");
	if (find_named(kc, root, "contexts", "context", cur, cur_n,
	    &ctx) == -1)
		return -1;
	if (get_str(kc, ctx, "cluster", &cl_name, &cl_n) == -1 ||
	    get_str(kc, ctx, "user", &user_name, &user_n) == -1 ||
	    get_str(kc, ctx, "namespace", &ns, NULL) == -1)
		return -1;
	if (cl_name == NULL || *cl_name == '\0')
		return kc_err(kc, ctx, "cluster was not specified for "
		    "context \"%s\"", cur);
	if (user_name == NULL || *user_name == '\0')
		return kc_err(kc, ctx, "user was not specified for context "
		    "\"%s\"", cur);
	if (find_named(kc, root, "clusters", "cluster", cl_name, cl_n,
	    &cl) == -1 ||
	    load_cluster(kc, cl_name, cl, c) == -1 ||
	    find_named(kc, root, "users", "user", user_name, user_n,
	    &u) == -1 ||
	    load_user(kc, user_name, u, c) == -1)
		return -1;
	if (ns != NULL && *ns != '\0')
		c->namespace = xstrdup(ns);
	return 0;
}

int
kubeconfig_load(struct kube_creds *c, const char *path, char *err,
    size_t errlen, char *warn, size_t warnlen)
{
	struct kc kc;
	yaml_parser_t parser;
	const char *slash;
	char cwd[4096], why[256], msg[512];
	yaml_mark_t mark;
	FILE *f;
	int fd, rc, line, col;

	memset(c, 0, sizeof(*c));
	memset(&kc, 0, sizeof(kc));
	kc.path = path;
	kc.err = err;
	kc.errlen = errlen;
	kc.warn = warn;
	kc.warnlen = warnlen;
	if (errlen > 0)
		err[0] = '\0';
	if (warn != NULL && warnlen > 0)
		warn[0] = '\0';

	/* Non-blocking open: a FIFO or a device is refused, not waited on. */
	if ((fd = cfgfile_open(path, CFGFILE_MAX, NULL, why,
	    sizeof(why))) == -1)
		return kc_err(&kc, NULL, "%s", why);
	if ((f = fdopen(fd, "rb")) == NULL) {
		close(fd);
		return kc_err(&kc, NULL, "%s", strerror(errno));
	}
	/* Bounded nesting: libyaml's scanner is quadratic in its depth. */
	if (cfgfile_yaml_depth(f, CFGFILE_YAML_DEPTH, &mark) == -1) {
		fclose(f);
		snprintf(err, errlen, "%s:%zu:%zu: YAML nesting deeper than "
		    "%d levels; a kubeconfig needs about five", path,
		    mark.line + 1, mark.column + 1, CFGFILE_YAML_DEPTH);
		return -1;
	}
	/* Relative paths in the file resolve against its directory. */
	slash = strrchr(path, '/');
	if (path[0] == '/')
		kc.dir = xstrndup(path, slash == path ? 1 :
		    (size_t)(slash - path));
	else if (getcwd(cwd, sizeof(cwd)) == NULL) {
		fclose(f);
		return kc_err(&kc, NULL, "getcwd: %s", strerror(errno));
	} else if (slash == NULL)
		kc.dir = xstrdup(cwd);
	else
		xasprintf(&kc.dir, "%s/%.*s", cwd, (int)(slash - path), path);

	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		free(kc.dir);
		return kc_err(&kc, NULL, "cannot initialise the YAML parser");
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &kc.doc)) {
		cfgfile_yaml_error(&parser, f, &line, &col, msg,
		    sizeof(msg));
		snprintf(err, errlen, "%s:%d:%d: %s", path, line, col, msg);
		rc = -1;
	} else {
		rc = load_doc(&kc, c);
		yaml_document_delete(&kc.doc);
	}
	yaml_parser_delete(&parser);
	fclose(f);
	free(kc.dir);
	if (rc == -1) {
		creds_clear(c);
		if (warn != NULL && warnlen > 0)
			warn[0] = '\0';
	}
	return rc;
}
