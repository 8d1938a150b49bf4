/*
 * config_check.c -- config_validate: the rules that span keys, each
 * error with the origin (file:line:col or flag) of the value it names.
 * Here the driver, the identity, compat and lock rules, and the
 * elections: items; the other families have files of their own
 * (config_check_int.h).
 */

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "config/compat.h"
#include "config/config.h"
#include "config/config_check_int.h"
#include "config/config_int.h"

#define IDENTITY_MAX	253	/* a pod name's limit */

/*
 * The identity leaderd writes as holderIdentity: what a pod name allows
 * (a DNS-1123 subdomain: lower-case letters, digits, '-' and '.'), plus
 * upper case and '_', because client-go users write "hostname_uuid" and
 * host names outside a cluster may have capitals.  It must start and end
 * with a letter or digit.  Anything else (spaces, ':', '/', quotes,
 * control characters, non-ASCII) would make log lines and text answers
 * ambiguous.  Returns the offset of the first byte that breaks the rule,
 * or (size_t)-1 if s (non-empty) is fine.
 */
#define IDENTITY_RULE	"an identity is 1 to 253 letters, digits, '-', '.' " \
			"and '_', starting and ending with a letter or digit, " \
			"such as a pod name (fix identity, --id or $POD_NAME)"
size_t
config_identity_bad(const char *s)
{
	size_t	 i, n = strlen(s);

	for (i = 0; i < n; i++) {
		if (isalnum((unsigned char)s[i]) && (unsigned char)s[i] < 0x80)
			continue;
		if ((s[i] == '-' || s[i] == '.' || s[i] == '_') && i > 0 &&
		    i + 1 < n)
			continue;
		return i;
	}
	return (size_t)-1;
}

static void	check_lock(const struct config *, struct config_errs *);

static void
check_names(const struct config *c, struct config_errs *e)
{
	const char	*s;
	size_t		 n;

	s = c->identity;
	n = strlen(s);
	if (n == 0)
		config_errs_add(e, ORIGIN(c, CONFIG_IDENTITY), "identity is "
		    "empty; set identity in the file, --id, or $POD_NAME");
	else if (n > IDENTITY_MAX)
		config_errs_add(e, ORIGIN(c, CONFIG_IDENTITY), "identity is "
		    "too long (%zu bytes; at most %d)", n, IDENTITY_MAX);
	else if ((n = config_identity_bad(s)) != (size_t)-1) {
		if (s[n] > 0x20 && s[n] < 0x7f)
			config_errs_add(e, ORIGIN(c, CONFIG_IDENTITY), "identity "
			    "has \"%c\" at byte %zu; " IDENTITY_RULE, s[n],
			    n + 1);
		else
			config_errs_add(e, ORIGIN(c, CONFIG_IDENTITY), "identity "
			    "has byte 0x%02x at byte %zu; " IDENTITY_RULE,
			    (unsigned char)s[n], n + 1);
	}

	/* The peers leaderd stands in for (compat.c, migrating.md). */
	s = c->compat;
	if (*s != '\0' && !compat_known(s))
		config_errs_add(e, ORIGIN(c, CONFIG_COMPAT), "compat \"%s\" "
		    "is not a peer leaderd stands in for; use one of %s, or "
		    "leave it unset", s, compat_names());

	check_lock(c, e);
}

/* lock.type, lock.name and lock.namespace. */
static void
check_lock(const struct config *c, struct config_errs *e)
{
	const char	*s;

	/*
	 * Every lock type client-go v0.23 had (ref 3.3): the legacy ones
	 * for peers that still use them, the MultiLocks to migrate off them.
	 */
	s = c->lock_type;
	if (strcmp(s, "leases") != 0 && strcmp(s, "endpoints") != 0 &&
	    strcmp(s, "configmaps") != 0 &&
	    strcmp(s, "endpointsleases") != 0 &&
	    strcmp(s, "configmapsleases") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_TYPE), "lock.type "
		    "\"%s\" is not supported; use leases (or endpoints, "
		    "configmaps, endpointsleases, configmapsleases to share "
		    "a lock with older clients)", s);


	s = c->lock_name;
	/* A shard group's member Lease: check_shards says what is wrong. */
	if (config_shards_on(c) && !c->set[CONFIG_LOCK_NAME])
		;
	else if (*s == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_NAME), "lock.name is "
		    "required (the name of the Lease to compete for); set "
		    "lock.name in the file or --election");
	else if (!config_dns_subdomain(s))
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_NAME), "lock.name "
		    "\"%s\" is not a valid Lease name: use at most 253 "
		    "lowercase letters, digits, '-' and '.', starting and "
		    "ending with a letter or digit", s);

	s = c->lock_namespace;
	if (*s == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_NAMESPACE),
		    "lock.namespace is empty; set it, or remove it to use "
		    "$POD_NAMESPACE or the service account's namespace");
	else if (!config_dns_label(s, strlen(s), 63))
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_NAMESPACE),
		    "lock.namespace \"%s\" is not a valid namespace: use at "
		    "most 63 lowercase letters, digits and '-', starting and "
		    "ending with a letter or digit", s);
}

/* Paths under /leader/ that are not an election's. */
static const char *const reserved_names[] = {
	"watch", "release", "pause", "resume"
};

/* Where election i's name comes from: its name: key, else its lock. */
static const struct config_origin *
name_origin(const struct config *c, int i)
{
	const struct config_election	*it;

	if (i == 0)
		return ORIGIN(c, CONFIG_LOCK_NAME);
	it = &c->elections[i - 1];
	if (it->name[0] != '\0')
		return &it->name_origin;
	return &it->origin[CONFIG_EL_LOCK_NAME];
}

static char *
origin_text(const struct config_origin *o, char *buf, size_t len)
{
	if (o->src[0] == '\0')
		snprintf(buf, len, "the default");
	else if (o->line > 0)
		snprintf(buf, len, "%s:%d:%d", o->src, o->line, o->col);
	else
		snprintf(buf, len, "%s", o->src);
	return buf;
}

/*
 * elections: each item as a whole election (its lock, its timing, its
 * label key), and what must differ between elections: the name (the
 * local API's /leader/NAME), the lock, the label key.
 */
static void
check_elections(const struct config *c, struct config_errs *e)
{
	static struct config	 a, b;
	const char		*n, *m;
	char			 at[CONFIG_PATH_MAX + 32];
	size_t			 k;
	int			 i, j, same;

	if (c->nelections == 0)
		return;
	if (c->compat[0] != '\0')
		config_errs_add(e, &c->elections_origin, "elections cannot be "
		    "used with compat %s (the peer knows one election); remove "
		    "elections or compat", c->compat);
	for (i = 0; i <= c->nelections; i++) {
		n = config_election_name(c, i);
		if (i > 0) {
			config_election(c, i, &a);
			check_lock(&a, e);
			config_check_timing(&a, e);
			config_check_request_timeout(&a, e);
			if (a.label_enabled)
				config_check_label_key(&a, e);
			if (c->elections[i - 1].name[0] != '\0' &&
			    (strlen(n) > 63 || !config_dns_subdomain(n)))
				config_errs_add(e, name_origin(c, i), "election "
				    "name \"%s\" is not a valid name: use at "
				    "most 63 lowercase letters, digits, '-' and "
				    "'.', starting and ending with a letter or "
				    "digit (it is a path, /leader/NAME)", n);
		}
		for (k = 0; k < sizeof(reserved_names) /
		    sizeof(reserved_names[0]); k++)
			if (strcmp(n, reserved_names[k]) == 0)
				config_errs_add(e, name_origin(c, i), "election "
				    "name \"%s\" is taken by the path "
				    "/leader/%s; give the election %s "
				    "name: key", n, n, i == 0 ? "another lock "
				    "name, or the others a" : "another");
		for (j = 0; j < i; j++) {
			m = config_election_name(c, j);
			config_election(c, i, &a);
			config_election(c, j, &b);
			same = strcmp(a.lock_namespace, b.lock_namespace) == 0 &&
			    strcmp(a.lock_name, b.lock_name) == 0;
			if (same)
				config_errs_add(e, ORIGIN(&a, CONFIG_LOCK_NAME),
				    "lock %s/%s is already the lock of the "
				    "election at %s; one lock has one "
				    "election: name another Lease",
				    a.lock_namespace, a.lock_name,
				    origin_text(ORIGIN(&b, CONFIG_LOCK_NAME),
				    at, sizeof(at)));
			else if (strcmp(n, m) == 0)
				config_errs_add(e, name_origin(c, i), "election "
				    "name \"%s\" is already the name of the "
				    "election at %s; give this one another "
				    "name: key", n, origin_text(name_origin(c,
				    j), at, sizeof(at)));
			if (a.label_enabled && b.label_enabled &&
			    strcmp(a.label_key, b.label_key) == 0)
				config_errs_add(e, ORIGIN(&a, CONFIG_LABEL_KEY),
				    "actions.label.key \"%s\" is already the "
				    "label of the election at %s; give each "
				    "election its own key", a.label_key,
				    origin_text(ORIGIN(&b, CONFIG_LABEL_KEY),
				    at, sizeof(at)));
		}
	}
}

int
config_validate(const struct config *c, char *err, size_t errlen)
{
	struct config_errs	 e = { err, errlen, 0, 0 };

	if (errlen > 0)
		err[0] = '\0';
	check_names(c, &e);
	config_check_timing(c, &e);
	config_check_listen(c, &e);
	config_check_request_timeout(c, &e);
	config_check_watch_timeout(c, &e);
	config_check_actions(c, &e);
	config_check_endpoints(c, &e);
	config_check_candidacy(c, &e);
	config_check_shards(c, &e);
	check_elections(c, &e);
	config_check_coordinated(c, &e);
	if (c->shutdown_timeout_ms == 0)
		config_errs_add(&e, ORIGIN(c, CONFIG_SHUTDOWN_TIMEOUT),
		    "shutdown_timeout must be greater than zero (default 5s)");
	if (strcmp(c->log_level, "error") != 0 &&
	    strcmp(c->log_level, "warn") != 0 &&
	    strcmp(c->log_level, "info") != 0 &&
	    strcmp(c->log_level, "debug") != 0)
		config_errs_add(&e, ORIGIN(c, CONFIG_LOG_LEVEL), "log.level "
		    "\"%s\" is not one of error, warn, info, debug",
		    c->log_level);
	if (strcmp(c->log_format, "text") != 0 &&
	    strcmp(c->log_format, "json") != 0)
		config_errs_add(&e, ORIGIN(c, CONFIG_LOG_FORMAT), "log.format "
		    "\"%s\" is not text or json", c->log_format);
	return e.n == 0 ? 0 : -1;
}
