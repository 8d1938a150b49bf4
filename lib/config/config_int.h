/*
 * config_int.h -- what the files of lib/config share: the key table,
 * a value parsed, origins, ${ENV} expansion, the error list; not for
 * other modules.
 */

#ifndef CONFIG_INT_H
#define CONFIG_INT_H

#include <stddef.h>

#include "config/config.h"

enum config_type {
	CONFIG_T_STR,		/* a string of at most size - 1 bytes */
	CONFIG_T_DUR,		/* a duration, stored as uint64_t ms */
	CONFIG_T_BOOL,		/* true or false, stored as int */
	CONFIG_T_INT		/* a decimal count, stored as int */
};

struct config_keydef {
	const char	*path;		/* dotted YAML path, "lock.name" */
	enum config_key	 key;		/* its index */
	enum config_type type;		/* how its value is parsed */
	size_t		 off;		/* the field's offset in struct config */
	size_t		 size;		/* the field's size, for strings */
};

/* Every key, indexed by enum config_key. */
extern const struct config_keydef config_keys[CONFIG_NKEYS];

/* The key with the dotted path, or NULL. */
const struct config_keydef *config_keydef(const char *path);

/*
 * Parse v as a value of key k into c (not touching origin or set).
 * Returns 0, or -1 with the reason, starting with the key, in why.
 */
int	config_parse_value(struct config *c, const struct config_keydef *k,
	    const char *v, char *why, size_t whylen);

/* Set *o to src, line and col (0 for a flag; src "" for a default). */
void	config_origin_set(struct config_origin *o, const char *src, int line,
	    int col);

/*
 * Expand ${NAME} from the environment and $$ to $ in s into out (outlen
 * bytes).  An unset variable, a "$" not starting ${NAME} or $$, a bad
 * name and a result too long are errors.  Returns 0, or -1 with the
 * reason in why.
 */
int	config_expand(const char *s, char *out, size_t outlen, char *why,
	    size_t whylen);

/* Whether s is a valid pod name (a DNS-1123 subdomain). */
int	config_pod_name_ok(const char *s);

/* An error list being built in a caller's buffer. */
struct config_errs {
	char		*buf;		/* the caller's buffer */
	size_t		 len;		/* its size */
	size_t		 used;		/* bytes written, without the NUL */
	int		 n;		/* errors added, written or not */
};

/*
 * Add one error line, prefixed by where it came from: "file:line:col: "
 * for a file, "src: " for a flag or a variable (line 0), "leaderd: " for
 * a default (o NULL or src "").  Lines are separated by '\n'; what does
 * not fit is cut off, but still counted.
 */
void	config_errs_add(struct config_errs *e, const struct config_origin *o,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* CONFIG_INT_H */
