/*
 * config_yaml_int.h -- what config_yaml.c (the walk of the file) and
 * config_yaml_value.c (what a key's node holds) share; private to
 * lib/config.
 */

#ifndef CONFIG_YAML_INT_H
#define CONFIG_YAML_INT_H

#include <yaml.h>

#include "config/config.h"
#include "config/config_int.h"

/* What one load is working on. */
struct load {
	yaml_document_t	*doc;
	const char	*path;		/* the file, as the caller named it */
	struct config	*c;		/* the copy being filled */
	struct config_errs *errs;	/* where errors go */
};

/* Set *o to where node n starts in the file, 1-based. */
void	config_yaml_mark(struct load *l, struct config_origin *o,
	    const yaml_node_t *n);

/* What node n is, for messages: "a mapping", "a sequence", "a scalar". */
const char *config_yaml_kind(const yaml_node_t *n);

/*
 * Load the value node n of key k into l->c, its origin and set flag
 * with it; errors go to l->errs.
 */
void	config_yaml_value(struct load *l, const struct config_keydef *k,
	    yaml_node_t *n);

/*
 * Load the sequence n of elections: into l->c->elections (at most
 * CONFIG_ELECTIONS_MAX items); errors go to l->errs.
 */
void	config_yaml_elections(struct load *l, yaml_node_t *n);

#endif /* CONFIG_YAML_INT_H */
