/*
 * config_yaml.c -- config_load: the YAML file into struct config.
 *
 * The file is read with libyaml's document API; every node carries the
 * mark of where it starts, which becomes the origin of the value and
 * the position of any error.  Errors are collected, not returned at the
 * first one, so that one run of `leaderd -n` shows them all.
 *
 * Here the walk: the file, its one document, the top-level mapping and
 * its sections, and for a key not known the nearest one.  What a key's
 * node holds, a scalar or the elections: items, is read by
 * config_yaml_value.c (config_yaml_int.h).
 */

#include <sys/stat.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "base/mem.h"
#include "base/xmalloc.h"
#include "config/cfgfile.h"
#include "config/config.h"
#include "config/config_int.h"
#include "config/config_yaml_int.h"

/* The sections, in the order of the first key of each; dotted: nested. */
static const char *const sections[] = {
	"lock", "listen", "kubernetes", "log", "readyz", "run", "actions",
	"actions.label", "actions.endpoints", "step_down", "candidacy",
	"candidacy.probe", "elections", "shards"
};
#define SECTION_ELECTIONS	12	/* a sequence, not a mapping */
#define NSECTIONS	(sizeof(sections) / sizeof(sections[0]))

/* A character as key suggestions compare it: '-' is '_', case ignored. */
static int
fold(char ch)
{
	if (ch == '-')
		return '_';
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A' + 'a';
	return (unsigned char)ch;
}

/* The edit distance of a and b, as fold() sees their characters. */
static size_t
distance(const char *a, const char *b)
{
	size_t	 d[64], i, j, la, lb, prev, tmp, cost;
	int	 ca, cb;

	la = strlen(a);
	lb = strlen(b);
	if (la >= 63 || lb >= 63)
		return 64;
	for (j = 0; j <= lb; j++)
		d[j] = j;
	for (i = 1; i <= la; i++) {
		prev = d[0];
		d[0] = i;
		for (j = 1; j <= lb; j++) {
			ca = fold(a[i - 1]);
			cb = fold(b[j - 1]);
			cost = ca == cb ? 0 : 1;
			tmp = d[j];
			d[j] = prev + cost;
			if (d[j - 1] + 1 < d[j])
				d[j] = d[j - 1] + 1;
			if (tmp + 1 < d[j])
				d[j] = tmp + 1;
			prev = tmp;
		}
	}
	return d[lb];
}

/* The last component of a dotted key path. */
static const char *
leaf(const char *path)
{
	const char	*dot = strrchr(path, '.');

	return dot == NULL ? path : dot + 1;
}

/* Whether path lies directly in section (NULL: at the top level). */
static int
in_section(const char *path, const char *section)
{
	size_t	 n;

	if (section == NULL)
		return strchr(path, '.') == NULL;
	n = strlen(section);
	return strncmp(path, section, n) == 0 && path[n] == '.' &&
	    strchr(path + n + 1, '.') == NULL;
}

/* Append word to the comma-separated list in buf, truncating. */
static void
list_add(char *buf, size_t len, const char *word)
{
	size_t	 used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", used ? ", " : "", word);
}

/* The classic leader-elector's flag names, for suggestions. */
static const struct {
	const char	*flag;
	const char	*path;
} classic[] = {
	{ "election", "lock.name" },
	{ "election_namespace", "lock.namespace" },
	{ "id", "identity" },
	{ "ttl", "lease_duration" },
	{ "unix_socket", "listen.unix" },
};

/* Report the unknown key name in section, with a suggestion. */
static void
unknown_key(struct load *l, const char *name, const char *section,
    const struct config_origin *o)
{
	char		 where[64], allowed[256], hint[320];
	const char	*best = NULL, *path;
	size_t		 i, d, bestd = 99, limit;

	limit = strlen(name) / 4 + 1;
	if (limit > 3)
		limit = 3;
	allowed[0] = '\0';
	/* The closest key anywhere, preferring this section on a tie. */
	for (i = 0; i < CONFIG_NKEYS + NSECTIONS; i++) {
		path = i < CONFIG_NKEYS ? config_keys[i].path :
		    sections[i - CONFIG_NKEYS];
		d = distance(name, leaf(path));
		if (in_section(path, section)) {
			list_add(allowed, sizeof(allowed), leaf(path));
			if (d <= limit && d <= bestd) {
				best = path;
				bestd = d;
			}
		} else if (d <= limit && d < bestd) {
			best = path;
			bestd = d;
		}
	}
	/* A classic flag's exact name beats a near key ("id", not "ip"). */
	for (i = 0; i < sizeof(classic) / sizeof(classic[0]); i++)
		if (distance(name, classic[i].flag) == 0)
			best = classic[i].path;
	if (section == NULL)
		snprintf(where, sizeof(where), "at the top level");
	else
		snprintf(where, sizeof(where), "in %s", section);
	if (best == NULL)
		snprintf(hint, sizeof(hint), "allowed: %s", allowed);
	else if (in_section(best, section))
		snprintf(hint, sizeof(hint), "did you mean %s?", leaf(best));
	else if (strchr(best, '.') == NULL)
		snprintf(hint, sizeof(hint), "did you mean %s, at the top "
		    "level?", best);
	else
		snprintf(hint, sizeof(hint), "did you mean %s?", best);
	config_errs_add(l->errs, o, "unknown key \"%s\" %s; %s", name, where,
	    hint);
}


/* Load the mapping n, the top level (section NULL) or a section. */
static void
load_mapping(struct load *l, yaml_node_t *n, const char *section)
{
	yaml_node_pair_t	*pair;
	yaml_node_t		*kn, *vn;
	struct config_origin	 o;
	const struct config_keydef *k;
	char			 path[128];
	const char		*name;
	int			 seen[CONFIG_NKEYS + NSECTIONS], slot;
	size_t			 i;

	memset(seen, 0, sizeof(seen));
	for (pair = n->data.mapping.pairs.start;
	    pair < n->data.mapping.pairs.top; pair++) {
		kn = yaml_document_get_node(l->doc, pair->key);
		vn = yaml_document_get_node(l->doc, pair->value);
		if (kn == NULL || vn == NULL)
			continue;
		config_yaml_mark(l, &o, kn);
		if (kn->type != YAML_SCALAR_NODE) {
			config_errs_add(l->errs, &o, "a key must be a plain "
			    "string, not %s", config_yaml_kind(kn));
			continue;
		}
		name = (const char *)kn->data.scalar.value;
		if (section == NULL)
			snprintf(path, sizeof(path), "%s", name);
		else
			snprintf(path, sizeof(path), "%s.%s", section, name);
		k = strchr(name, '.') == NULL ? config_keydef(path) : NULL;
		slot = -1;
		if (k != NULL)
			slot = (int)k->key;
		for (i = 0; strchr(name, '.') == NULL && i < NSECTIONS; i++)
			if (strcmp(path, sections[i]) == 0)
				slot = CONFIG_NKEYS + (int)i;
		if (slot == -1) {
			unknown_key(l, name, section, &o);
			continue;
		}
		if (seen[slot] != 0) {
			config_errs_add(l->errs, &o, "duplicate key \"%s\"%s%s "
			    "(first at line %d); remove one", name,
			    section ? " in " : "", section ? section : "",
			    seen[slot]);
			continue;
		}
		seen[slot] = o.line;
		if (k != NULL) {
			config_yaml_value(l, k, vn);
			continue;
		}
		if (slot == CONFIG_NKEYS + SECTION_ELECTIONS) {
			l->c->elections_origin = o;
			config_yaml_elections(l, vn);
			continue;
		}
		if (cfgfile_yaml_null(vn))
			continue;	/* An empty section. */
		if (vn->type != YAML_MAPPING_NODE) {
			char allowed[128];

			allowed[0] = '\0';
			for (i = 0; i < CONFIG_NKEYS; i++)
				if (in_section(config_keys[i].path, path))
					list_add(allowed, sizeof(allowed),
					    leaf(config_keys[i].path));
			config_yaml_mark(l, &o, vn);
			config_errs_add(l->errs, &o, "%s must be a mapping "
			    "(with keys %s), not %s", name, allowed,
			    config_yaml_kind(vn));
			continue;
		}
		load_mapping(l, vn, sections[slot - CONFIG_NKEYS]);
	}
}

/* Report libyaml's error, from the parser that read f. */
static void
yaml_error(struct load *l, const yaml_parser_t *p, FILE *f)
{
	struct config_origin	 o;
	char			 msg[512];
	int			 line, col;

	cfgfile_yaml_error(p, f, &line, &col, msg, sizeof(msg));
	config_origin_set(&o, l->path, line, col);
	config_errs_add(l->errs, &o, "%s", msg);
}

/* Parse the open file f; errors go to l->errs. */
static void
load_file(struct load *l, FILE *f)
{
	yaml_parser_t		 parser;
	yaml_document_t		 doc, extra;
	yaml_node_t		*root;
	struct config_origin	 o;

	if (!yaml_parser_initialize(&parser)) {
		config_errs_add(l->errs, NULL, "%s: cannot start the YAML "
		    "parser", l->path);
		return;
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		yaml_error(l, &parser, f);
		yaml_parser_delete(&parser);
		return;
	}
	l->doc = &doc;
	if ((root = yaml_document_get_root_node(&doc)) != NULL) {
		if (root->type == YAML_MAPPING_NODE)
			load_mapping(l, root, NULL);
		else if (!cfgfile_yaml_null(root)) {
			config_yaml_mark(l, &o, root);
			config_errs_add(l->errs, &o, "the top level must be a "
			    "mapping of keys such as identity and lock, not "
			    "%s", config_yaml_kind(root));
		}
		if (!yaml_parser_load(&parser, &extra))
			yaml_error(l, &parser, f);
		else {
			if ((root = yaml_document_get_root_node(&extra)) !=
			    NULL) {
				config_yaml_mark(l, &o, root);
				config_errs_add(l->errs, &o, "a second YAML "
				    "document; the file must hold only one");
			}
			yaml_document_delete(&extra);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
}

int
config_load(struct config *c, const char *path, char *err, size_t errlen)
{
	struct config		*tmp;
	struct config_origin	 o;
	struct config_errs	 errs = { err, errlen, 0, 0 };
	struct load		 l;
	yaml_mark_t		 mark;
	char			 why[CONFIG_PATH_MAX + 128];
	FILE			*f;
	int			 fd;

	if (errlen > 0)
		err[0] = '\0';
	config_origin_set(&o, path, 0, 0);	/* for errors of the file */
	/* Non-blocking open: a FIFO or a device is refused, not waited on. */
	if ((fd = cfgfile_open(path, CFGFILE_MAX, NULL, why,
	    sizeof(why))) == -1) {
		config_errs_add(&errs, &o, "cannot open: %s", why);
		return -1;
	}
	if ((f = fdopen(fd, "r")) == NULL) {
		config_errs_add(&errs, &o, "cannot open: %s", strerror(errno));
		close(fd);
		return -1;
	}
	/* Bounded nesting: libyaml's scanner is quadratic in its depth. */
	if (cfgfile_yaml_depth(f, CFGFILE_YAML_DEPTH, &mark) == -1) {
		config_origin_set(&o, path, (int)mark.line + 1,
		    (int)mark.column + 1);
		config_errs_add(&errs, &o, "YAML nesting deeper than %d "
		    "levels; leaderd's configuration needs two (section: "
		    "key: value)", CFGFILE_YAML_DEPTH);
		fclose(f);
		return -1;
	}
	/*
	 * Work on a copy so that c is left as it was on failure: on the
	 * heap, not the stack (a struct config is some 250 kB), and copied
	 * back only where it changed, so that what stays zero of c stays
	 * off the resident set (mem.h).
	 */
	tmp = xmalloc(sizeof(*tmp));
	*tmp = *c;
	l.doc = NULL;
	l.path = path;
	l.c = tmp;
	l.errs = &errs;
	load_file(&l, f);
	fclose(f);
	if (errs.n == 0)
		mem_update(c, tmp, sizeof(*c));
	free(tmp);
	return errs.n == 0 ? 0 : -1;
}
