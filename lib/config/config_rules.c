/*
 * config_rules.c -- what config_validate's rule families share: the DNS
 * name grammars (a label; a subdomain, and so a pod's name) and, of two
 * keys in conflict, the one to blame (config_check_int.h).
 */

#include <string.h>

#include "config/config.h"
#include "config/config_check_int.h"
#include "config/config_int.h"

/* How late a value was given: default 0, file 1, flag 2. */
static int
rank(const struct config *c, enum config_key k)
{
	if (!c->set[k])
		return 0;
	return c->origin[k].line > 0 ? 1 : 2;
}

/*
 * Of two keys in conflict, the one to blame: the one given later (a
 * flag over the file, a later line over an earlier one), else a.
 */
enum config_key
config_later(const struct config *c, enum config_key a, enum config_key b)
{
	if (rank(c, b) > rank(c, a))
		return b;
	if (rank(c, b) == 1 && rank(c, a) == 1 &&
	    strcmp(c->origin[a].src, c->origin[b].src) == 0 &&
	    c->origin[b].line > c->origin[a].line)
		return b;
	return a;
}

/* A DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most max bytes. */
int
config_dns_label(const char *s, size_t len, size_t max)
{
	size_t	 i;

	if (len == 0 || len > max || s[0] == '-' || s[len - 1] == '-')
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	return 1;
}

/* A DNS-1123 subdomain: labels joined by '.', at most 253 bytes. */
int
config_dns_subdomain(const char *s)
{
	const char	*dot;

	if (strlen(s) > 253)
		return 0;
	for (;;) {
		dot = strchr(s, '.');
		if (!config_dns_label(s, dot ? (size_t)(dot - s) : strlen(s),
		    253))
			return 0;
		if (dot == NULL)
			return 1;
		s = dot + 1;
	}
}

int
config_pod_name_ok(const char *s)
{
	return config_dns_subdomain(s);
}
