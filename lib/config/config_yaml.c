/*
 * config_yaml.c -- config_load: the YAML file into struct config.
 *
 * The file is read with libyaml's document API; every node carries the
 * mark of where it starts, which becomes the origin of the value and
 * the position of any error.  Errors are collected, not returned at the
 * first one, so that one run of `leaderd -n` shows them all.
 */

#include <sys/stat.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "config/cfgfile.h"
#include "config/config.h"
#include "config/config_int.h"

/* The sections, in the order of the first key of each; dotted: nested. */
static const char *const sections[] = {
	"lock", "listen", "kubernetes", "log", "readyz", "run", "actions",
	"actions.label", "actions.endpoints", "step_down", "candidacy",
	"candidacy.probe", "elections", "shards"
};
#define SECTION_ELECTIONS	12	/* a sequence, not a mapping */
#define NSECTIONS	(sizeof(sections) / sizeof(sections[0]))

/* What one load is working on. */
struct load {
	yaml_document_t	*doc;
	const char	*path;		/* the file, as the caller named it */
	struct config	*c;		/* the copy being filled */
	struct config_errs *errs;	/* where errors go */
};

/* Set *o to where node n starts in the file, 1-based. */
static void
origin_mark(struct load *l, struct config_origin *o, const yaml_node_t *n)
{
	config_origin_set(o, l->path, (int)n->start_mark.line + 1,
	    (int)n->start_mark.column + 1);
}

/* What a value of type t looks like, for messages. */
static const char *
type_name(enum config_type t)
{
	switch (t) {
	case CONFIG_T_DUR:
		return "a duration such as 15s";
	case CONFIG_T_BOOL:
		return "true or false";
	case CONFIG_T_INT:
		return "a whole number";
	default:
		return "a string";
	}
}

static const char *
kind_name(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a sequence";
	default:
		return "a scalar";
	}
}

/*
 * Load one value node for key k into c, its origin into *org and 1 into
 * *set; errors go to l->errs.
 */
static void
load_value_to(struct load *l, const struct config_keydef *k, yaml_node_t *n,
    struct config *c, struct config_origin *org, int *set)
{
	struct config_origin	 o;
	char			 v[CONFIG_PATH_MAX], why[512];

	origin_mark(l, &o, n);
	if (n->type != YAML_SCALAR_NODE) {
		config_errs_add(l->errs, &o, "%s must be %s, not %s",
		    k->path, type_name(k->type), kind_name(n));
		return;
	}
	if (cfgfile_yaml_null(n)) {
		config_errs_add(l->errs, &o, "%s has no value; give %s%s, or "
		    "remove the key to use the default", k->path,
		    type_name(k->type), k->type == CONFIG_T_STR ?
		    " (\"\" for none)" : "");
		return;
	}
	if (strlen((const char *)n->data.scalar.value) !=
	    n->data.scalar.length) {
		config_errs_add(l->errs, &o, "%s contains a NUL character",
		    k->path);
		return;
	}
	if (config_expand((const char *)n->data.scalar.value, v, sizeof(v), why,
	    sizeof(why)) == -1) {
		config_errs_add(l->errs, &o, "%s: %s", k->path, why);
		return;
	}
	if (config_parse_value(c, k, v, why, sizeof(why)) == -1) {
		config_errs_add(l->errs, &o, "%s", why);
		return;
	}
	*org = o;
	*set = 1;
}

/* Load one value node for key k. */
static void
load_value(struct load *l, const struct config_keydef *k, yaml_node_t *n)
{
	load_value_to(l, k, n, l->c, &l->c->origin[k->key],
	    &l->c->set[k->key]);
}

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

/* The paths an elections: item takes, beside name, by slot. */
static const char *const election_paths[CONFIG_ELECTION_KEYS] = {
	"lock.type", "lock.namespace", "lock.name", "lease_duration",
	"renew_deadline", "retry_period", "actions.label.key"
};
#define ELECTION_ALLOWED	"name, lock (type, namespace, name), " \
	"lease_duration, renew_deadline, retry_period, actions (label (key))"

/*
 * Load the mapping n of an elections: item at prefix ("" for the item,
 * "lock" or "actions", "actions.label" below it) into it, the values
 * parsed as the top-level keys of the same path are; scratch is where
 * they are parsed.
 */
static void
load_election_map(struct load *l, yaml_node_t *n, const char *prefix,
    struct config_election *it, struct config *scratch)
{
	yaml_node_pair_t	*pair;
	yaml_node_t		*kn, *vn;
	struct config_origin	 o;
	const struct config_keydef *k;
	char			 path[128], v[CONFIG_PATH_MAX], why[512];
	const char		*name;
	size_t			 j, plen = strlen(prefix);
	int			 sub, seen_name = 0;

	for (pair = n->data.mapping.pairs.start;
	    pair < n->data.mapping.pairs.top; pair++) {
		kn = yaml_document_get_node(l->doc, pair->key);
		vn = yaml_document_get_node(l->doc, pair->value);
		if (kn == NULL || vn == NULL)
			continue;
		origin_mark(l, &o, kn);
		if (kn->type != YAML_SCALAR_NODE) {
			config_errs_add(l->errs, &o, "a key must be a plain "
			    "string, not %s", kind_name(kn));
			continue;
		}
		name = (const char *)kn->data.scalar.value;
		snprintf(path, sizeof(path), "%s%s%s", prefix,
		    plen > 0 ? "." : "", name);
		if (plen == 0 && strcmp(name, "name") == 0) {
			if (seen_name++) {
				config_errs_add(l->errs, &o, "duplicate key "
				    "\"name\" in an elections item; remove "
				    "one");
				continue;
			}
			origin_mark(l, &o, vn);
			if (vn->type != YAML_SCALAR_NODE ||
			    cfgfile_yaml_null(vn)) {
				config_errs_add(l->errs, &o, "elections: name "
				    "must be a string (the election's name in "
				    "/leader/NAME)");
				continue;
			}
			if (config_expand((const char *)vn->data.scalar.value,
			    v, sizeof(v), why, sizeof(why)) == -1) {
				config_errs_add(l->errs, &o, "name: %s", why);
				continue;
			}
			if (strlen(v) >= sizeof(it->name)) {
				config_errs_add(l->errs, &o, "elections: name "
				    "is too long (at most 63 bytes)");
				continue;
			}
			memcpy(it->name, v, strlen(v) + 1);
			it->name_origin = o;
			if (it->name[0] == '\0')
				config_errs_add(l->errs, &o, "elections: name "
				    "is empty; give a name, or remove the key "
				    "to use the lock's name");
			continue;
		}
		for (j = 0; j < CONFIG_ELECTION_KEYS; j++)
			if (strcmp(election_paths[j], path) == 0)
				break;
		sub = strcmp(path, "lock") == 0 ||
		    strcmp(path, "actions") == 0 ||
		    strcmp(path, "actions.label") == 0;
		if (j == CONFIG_ELECTION_KEYS && !sub) {
			config_errs_add(l->errs, &o, "unknown key \"%s\" in "
			    "an elections item%s%s; allowed: "
			    ELECTION_ALLOWED, name, plen > 0 ? ", in " : "",
			    prefix);
			continue;
		}
		if (sub) {
			if (vn->type != YAML_MAPPING_NODE) {
				origin_mark(l, &o, vn);
				config_errs_add(l->errs, &o, "%s must be a "
				    "mapping, not %s", path, kind_name(vn));
				continue;
			}
			load_election_map(l, vn, path, it, scratch);
			continue;
		}
		if (it->set[j]) {
			config_errs_add(l->errs, &o, "duplicate key \"%s\" in "
			    "an elections item (first at line %d); remove one",
			    path, it->origin[j].line);
			continue;
		}
		k = &config_keys[config_election_keys[j]];
		load_value_to(l, k, vn, scratch, &it->origin[j], &it->set[j]);
		if (it->set[j])
			memcpy(it->val[j], (char *)scratch + k->off,
			    k->type == CONFIG_T_STR ? k->size :
			    sizeof(uint64_t));
	}
}

/* Load the sequence n of elections: into l->c->elections. */
static void
load_elections(struct load *l, yaml_node_t *n)
{
	static struct config	 scratch;
	struct config_election	*it;
	struct config_origin	 o;
	yaml_node_item_t	*item;
	yaml_node_t		*in;

	if (cfgfile_yaml_null(n))
		return;
	origin_mark(l, &o, n);
	if (n->type != YAML_SEQUENCE_NODE) {
		config_errs_add(l->errs, &o, "elections must be a sequence of "
		    "mappings (\"- lock: {name: b}\"), not %s", kind_name(n));
		return;
	}
	l->c->nelections = 0;
	for (item = n->data.sequence.items.start;
	    item < n->data.sequence.items.top; item++) {
		if ((in = yaml_document_get_node(l->doc, *item)) == NULL)
			continue;
		origin_mark(l, &o, in);
		if (in->type != YAML_MAPPING_NODE) {
			config_errs_add(l->errs, &o, "an elections item must be "
			    "a mapping with keys " ELECTION_ALLOWED ", not %s",
			    kind_name(in));
			continue;
		}
		if (l->c->nelections == CONFIG_ELECTIONS_MAX) {
			config_errs_add(l->errs, &o, "more than %d elections "
			    "besides the first; run another leaderd for the "
			    "rest", CONFIG_ELECTIONS_MAX);
			return;
		}
		it = &l->c->elections[l->c->nelections++];
		memset(it, 0, sizeof(*it));
		it->at = o;
		load_election_map(l, in, "", it, &scratch);
		if (!it->set[CONFIG_EL_LOCK_NAME])
			config_errs_add(l->errs, &o, "an elections item needs "
			    "lock.name (the Lease of that election)");
	}
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
		origin_mark(l, &o, kn);
		if (kn->type != YAML_SCALAR_NODE) {
			config_errs_add(l->errs, &o, "a key must be a plain "
			    "string, not %s", kind_name(kn));
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
			load_value(l, k, vn);
			continue;
		}
		if (slot == CONFIG_NKEYS + SECTION_ELECTIONS) {
			l->c->elections_origin = o;
			load_elections(l, vn);
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
			origin_mark(l, &o, vn);
			config_errs_add(l->errs, &o, "%s must be a mapping "
			    "(with keys %s), not %s", name, allowed,
			    kind_name(vn));
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
			origin_mark(l, &o, root);
			config_errs_add(l->errs, &o, "the top level must be a "
			    "mapping of keys such as identity and lock, not "
			    "%s", kind_name(root));
		}
		if (!yaml_parser_load(&parser, &extra))
			yaml_error(l, &parser, f);
		else {
			if ((root = yaml_document_get_root_node(&extra)) !=
			    NULL) {
				origin_mark(l, &o, root);
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
	struct config		 tmp;
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
	/* Work on a copy so that c is left as it was on failure. */
	tmp = *c;
	l.doc = NULL;
	l.path = path;
	l.c = &tmp;
	l.errs = &errs;
	load_file(&l, f);
	fclose(f);
	if (errs.n == 0)
		*c = tmp;
	return errs.n == 0 ? 0 : -1;
}
