/*
 * config_yaml_value.c -- what a key's node in the YAML file holds, for
 * config_yaml.c's walk: a scalar, its ${ENV} expanded, parsed as the
 * key's type, with its origin; and the elections: sequence, each item a
 * mapping of the keys an election may set, parsed as the top-level keys
 * of the same paths are.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "config/cfgfile.h"
#include "config/config.h"
#include "config/config_int.h"
#include "config/config_yaml_int.h"

/* Set *o to where node n starts in the file, 1-based. */
void
config_yaml_mark(struct load *l, struct config_origin *o, const yaml_node_t *n)
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

const char *
config_yaml_kind(const yaml_node_t *n)
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

	config_yaml_mark(l, &o, n);
	if (n->type != YAML_SCALAR_NODE) {
		config_errs_add(l->errs, &o, "%s must be %s, not %s",
		    k->path, type_name(k->type), config_yaml_kind(n));
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
void
config_yaml_value(struct load *l, const struct config_keydef *k,
    yaml_node_t *n)
{
	load_value_to(l, k, n, l->c, &l->c->origin[k->key],
	    &l->c->set[k->key]);
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
		config_yaml_mark(l, &o, kn);
		if (kn->type != YAML_SCALAR_NODE) {
			config_errs_add(l->errs, &o, "a key must be a plain "
			    "string, not %s", config_yaml_kind(kn));
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
			config_yaml_mark(l, &o, vn);
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
				config_yaml_mark(l, &o, vn);
				config_errs_add(l->errs, &o, "%s must be a "
				    "mapping, not %s", path,
				    config_yaml_kind(vn));
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
void
config_yaml_elections(struct load *l, yaml_node_t *n)
{
	static struct config	 scratch;
	struct config_election	*it;
	struct config_origin	 o;
	yaml_node_item_t	*item;
	yaml_node_t		*in;

	if (cfgfile_yaml_null(n))
		return;
	config_yaml_mark(l, &o, n);
	if (n->type != YAML_SEQUENCE_NODE) {
		config_errs_add(l->errs, &o, "elections must be a sequence of "
		    "mappings (\"- lock: {name: b}\"), not %s",
		    config_yaml_kind(n));
		return;
	}
	l->c->nelections = 0;
	for (item = n->data.sequence.items.start;
	    item < n->data.sequence.items.top; item++) {
		if ((in = yaml_document_get_node(l->doc, *item)) == NULL)
			continue;
		config_yaml_mark(l, &o, in);
		if (in->type != YAML_MAPPING_NODE) {
			config_errs_add(l->errs, &o, "an elections item must be "
			    "a mapping with keys " ELECTION_ALLOWED ", not %s",
			    config_yaml_kind(in));
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
