/*
 * kubeconfig.c -- credentials for the API server from a context of a
 * kubeconfig file, or of the files of a KUBECONFIG list merged as
 * kubectl merges them (ref/clientgo-leaderelection.md 6.2): the files,
 * their merge and the walk from the context to its cluster and user.
 * What those entries say is kubeconfig_auth.c's; the in-cluster service
 * account and token files are incluster.c's.
 *
 * Each file is loaded as a libyaml document and only the nodes on the
 * path context -> cluster and user are read, so the many keys leaderd
 * does not use (preferences, extensions, other contexts) are never
 * errors.  Errors name the file and, where a node is known, its line and
 * column.
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
#include "config/kubeconfig_int.h"

/* Write "path:line:col: message" (or "path: message") into err. */
int
kc_err(struct kc *kc, yaml_node_t *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n != NULL)
		snprintf(kc->err, kc->errlen, "%s:%zu:%zu: %s",
		    kc->files[kc->cur].path,
		    n->start_mark.line + 1, n->start_mark.column + 1, msg);
	else
		snprintf(kc->err, kc->errlen, "%s: %s",
		    kc->files[kc->cur].path, msg);
	return -1;
}

/* Append a warning, "; "-separated, to the caller's buffer. */
void
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
int
kc_map_get(struct kc *kc, yaml_node_t *map, const char *key,
    yaml_node_t **keyp, yaml_node_t **valp)
{
	yaml_node_pair_t *p;
	yaml_node_t *k, *found = NULL;

	*valp = NULL;
	if (keyp != NULL)
		*keyp = NULL;
	for (p = map->data.mapping.pairs.start;
	    p < map->data.mapping.pairs.top; p++) {
		k = yaml_document_get_node(&kc->files[kc->cur].doc, p->key);
		if (k == NULL || k->type != YAML_SCALAR_NODE ||
		    strcmp((const char *)k->data.scalar.value, key) != 0)
			continue;
		if (found != NULL)
			return kc_err(kc, k, "duplicate key \"%s\"", key);
		found = k;
		*valp = yaml_document_get_node(&kc->files[kc->cur].doc,
		    p->value);
		if (keyp != NULL)
			*keyp = k;
	}
	if (cfgfile_yaml_null(*valp))
		*valp = NULL;
	return 0;
}

/* The string map.key; *s is NULL when absent or null. */
int
kc_get_str(struct kc *kc, yaml_node_t *map, const char *key, const char **s,
    yaml_node_t **np)
{
	yaml_node_t *v;

	*s = NULL;
	if (kc_map_get(kc, map, key, NULL, &v) == -1)
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
int
kc_get_bool(struct kc *kc, yaml_node_t *map, const char *key, int *b,
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
	if (kc_map_get(kc, map, key, NULL, &v) == -1)
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
 * In the list listkey of the current file's top level, of {name: ...,
 * inner: {...}} entries, the inner mapping of the entry called name.
 * Returns 0 with *out, 1 when there is none, -1 on an error.
 */
static int
find_in_file(struct kc *kc, const char *listkey, const char *inner,
    const char *name, yaml_node_t **out)
{
	yaml_node_item_t *it;
	yaml_node_t *root, *list, *e, *v, *n;
	const char *s;

	*out = NULL;
	root = yaml_document_get_root_node(&kc->files[kc->cur].doc);
	if (root == NULL)
		return 1;
	if (kc_map_get(kc, root, listkey, NULL, &list) == -1)
		return -1;
	if (list != NULL && list->type != YAML_SEQUENCE_NODE)
		return kc_err(kc, list, "%s must be a list", listkey);
	for (it = list != NULL ? list->data.sequence.items.start : NULL;
	    list != NULL && it < list->data.sequence.items.top; it++) {
		e = yaml_document_get_node(&kc->files[kc->cur].doc, *it);
		if (e == NULL || e->type != YAML_MAPPING_NODE)
			return kc_err(kc, e, "entries of %s must be mappings",
			    listkey);
		if (kc_get_str(kc, e, "name", &s, &n) == -1)
			return -1;
		if (s == NULL || strcmp(s, name) != 0)
			continue;
		if (kc_map_get(kc, e, inner, NULL, &v) == -1)
			return -1;
		if (v == NULL)
			return kc_err(kc, e, "%s entry \"%s\" has no %s",
			    listkey, name, inner);
		if (v->type != YAML_MAPPING_NODE)
			return kc_err(kc, v, "%s must be a mapping", inner);
		*out = v;
		return 0;
	}
	return 1;
}

/*
 * The entry called name of the list listkey, from the first file that
 * has one (kubectl's merge: the first file to define a name wins); the
 * current file becomes that file.  ref, a node of the current file,
 * asked for it: the error of an entry found nowhere points there.
 */
static int
find_named(struct kc *kc, const char *listkey, const char *inner,
    const char *name, yaml_node_t *ref, yaml_node_t **out)
{
	size_t asked = kc->cur, i;
	int rc;

	for (i = 0; i < kc->nfiles; i++) {
		kc->cur = i;
		if ((rc = find_in_file(kc, listkey, inner, name, out)) != 1)
			return rc;
	}
	kc->cur = asked;
	return kc_err(kc, ref, "%s \"%s\" not found in %s", inner, name,
	    listkey);
}

/* A path from the file, relative to the file's directory. */
char *
kc_resolve(struct kc *kc, const char *p)
{
	char *s;

	if (p[0] == '/')
		return xstrdup(p);
	xasprintf(&s, "%s/%s", kc->files[kc->cur].dir, p);
	return s;
}

/*
 * The context name (NULL: the current-context of the first file that
 * sets one) into c: its cluster, user and namespace.
 */
static int
load_context(struct kc *kc, const char *name, struct kube_creds *c)
{
	yaml_node_t *root, *cur_n = NULL, *ctx, *cl_n, *user_n, *cl, *u;
	const char *cur = NULL, *cl_name, *user_name, *ns;
	size_t i;
	int rc;

	for (i = 0; name == NULL && i < kc->nfiles; i++) {
		kc->cur = i;
		root = yaml_document_get_root_node(&kc->files[i].doc);
		if (root == NULL)
			continue;
		if (kc_get_str(kc, root, "current-context", &cur, &cur_n) == -1)
			return -1;
		if (cur != NULL && *cur != '\0')
			break;
	}
	if (name == NULL && (cur == NULL || *cur == '\0')) {
		kc->cur = 0;
		return kc_err(kc, cur_n, "current-context is not set; set it "
		    "with kubectl config use-context");
	}
	if (name != NULL) {
		for (i = 0; i < kc->nfiles; i++) {
			kc->cur = i;
			if ((rc = find_in_file(kc, "contexts", "context", name,
			    &ctx)) != 1)
				break;
		}
		if (i == kc->nfiles) {
			kc->cur = 0;
			return kc_err(kc, NULL, "context \"%s\" does not exist",
			    name);
		}
		if (rc == -1)
			return -1;
		cur = name;
	} else if (find_named(kc, "contexts", "context", cur, cur_n,
	    &ctx) == -1)
		return -1;
	if (kc_get_str(kc, ctx, "cluster", &cl_name, &cl_n) == -1 ||
	    kc_get_str(kc, ctx, "user", &user_name, &user_n) == -1 ||
	    kc_get_str(kc, ctx, "namespace", &ns, NULL) == -1)
		return -1;
	if (cl_name == NULL || *cl_name == '\0')
		return kc_err(kc, ctx, "cluster was not specified for "
		    "context \"%s\"", cur);
	if (user_name == NULL || *user_name == '\0')
		return kc_err(kc, ctx, "user was not specified for context "
		    "\"%s\"", cur);
	if (ns != NULL && *ns != '\0')
		c->namespace = xstrdup(ns);
	i = kc->cur;
	if (find_named(kc, "clusters", "cluster", cl_name, cl_n, &cl) == -1 ||
	    kc_load_cluster(kc, cl_name, cl, c) == -1)
		return -1;
	kc->cur = i;
	if (find_named(kc, "users", "user", user_name, user_n, &u) == -1 ||
	    kc_load_user(kc, user_name, u, c) == -1)
		return -1;
	return 0;
}

/*
 * Read path as the next file of the merge.  A file that does not exist
 * is skipped when missing_ok (a KUBECONFIG list's); so is an empty one
 * of a list.  Returns 0, or -1 with err.
 */
static int
load_file(struct kc *kc, const char *path, int missing_ok)
{
	struct kc_file *kf = &kc->files[kc->nfiles];
	yaml_parser_t parser;
	yaml_node_t *root;
	const char *slash;
	char cwd[4096], why[256], msg[512];
	yaml_mark_t mark;
	struct stat st;
	FILE *f;
	int fd, line, col;

	kc->cur = kc->nfiles;
	memset(kf, 0, sizeof(*kf));
	kf->path = path;
	if (missing_ok && stat(path, &st) == -1 && errno == ENOENT)
		return 0;
	if (kc->nfiles == KC_FILES_MAX)
		return kc_err(kc, NULL, "more than %d kubeconfig files",
		    KC_FILES_MAX);
	/* Non-blocking open: a FIFO or a device is refused, not waited on. */
	if ((fd = cfgfile_open(path, CFGFILE_MAX, NULL, why,
	    sizeof(why))) == -1)
		return kc_err(kc, NULL, "%s", why);
	if ((f = fdopen(fd, "rb")) == NULL) {
		close(fd);
		return kc_err(kc, NULL, "%s", strerror(errno));
	}
	/* Bounded nesting: libyaml's scanner is quadratic in its depth. */
	if (cfgfile_yaml_depth(f, CFGFILE_YAML_DEPTH, &mark) == -1) {
		fclose(f);
		snprintf(kc->err, kc->errlen, "%s:%zu:%zu: YAML nesting deeper "
		    "than %d levels; a kubeconfig needs about five", path,
		    mark.line + 1, mark.column + 1, CFGFILE_YAML_DEPTH);
		return -1;
	}
	/* Relative paths in the file resolve against its directory. */
	slash = strrchr(path, '/');
	if (path[0] == '/')
		kf->dir = xstrndup(path, slash == path ? 1 :
		    (size_t)(slash - path));
	else if (getcwd(cwd, sizeof(cwd)) == NULL) {
		fclose(f);
		return kc_err(kc, NULL, "getcwd: %s", strerror(errno));
	} else if (slash == NULL)
		kf->dir = xstrdup(cwd);
	else
		xasprintf(&kf->dir, "%s/%.*s", cwd, (int)(slash - path), path);
	kc->nfiles++;

	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		return kc_err(kc, NULL, "cannot initialise the YAML parser");
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &kf->doc)) {
		cfgfile_yaml_error(&parser, f, &line, &col, msg,
		    sizeof(msg));
		snprintf(kc->err, kc->errlen, "%s:%d:%d: %s", path, line, col,
		    msg);
		yaml_parser_delete(&parser);
		fclose(f);
		return -1;
	}
	kf->loaded = 1;
	yaml_parser_delete(&parser);
	fclose(f);
	if ((root = yaml_document_get_root_node(&kf->doc)) == NULL)
		return missing_ok ? 0 :
		    kc_err(kc, NULL, "empty file, not a kubeconfig");
	if (root->type != YAML_MAPPING_NODE)
		return kc_err(kc, root, "not a kubeconfig: the top level is "
		    "not a mapping");
	return 0;
}

int
kubeconfig_load_merged(struct kube_creds *c, const char *const *paths,
    size_t npaths, int list, const char *context, char *err, size_t errlen,
    char *warn, size_t warnlen)
{
	struct kc kc;
	size_t i;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	memset(&kc, 0, sizeof(kc));
	kc.err = err;
	kc.errlen = errlen;
	kc.warn = warn;
	kc.warnlen = warnlen;
	if (errlen > 0)
		err[0] = '\0';
	if (warn != NULL && warnlen > 0)
		warn[0] = '\0';
	for (i = 0; i < npaths && rc == 0; i++)
		if (paths[i][0] != '\0')
			rc = load_file(&kc, paths[i], list);
	if (rc == 0 && kc.nfiles == 0) {
		snprintf(err, errlen, "none of the kubeconfig files exists "
		    "(%s%s)", npaths > 0 ? paths[0] : "", npaths > 1 ?
		    ", ..." : "");
		rc = -1;
	}
	if (rc == 0)
		rc = load_context(&kc, context, c);
	for (i = 0; i < kc.nfiles; i++) {
		if (kc.files[i].loaded)
			yaml_document_delete(&kc.files[i].doc);
		free(kc.files[i].dir);
	}
	if (rc == -1) {
		creds_clear(c);
		if (warn != NULL && warnlen > 0)
			warn[0] = '\0';
	}
	return rc;
}

int
kubeconfig_load(struct kube_creds *c, const char *path, char *err,
    size_t errlen, char *warn, size_t warnlen)
{
	return kubeconfig_load_merged(c, &path, 1, 0, NULL, err, errlen,
	    warn, warnlen);
}
