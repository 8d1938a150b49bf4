/*
 * config_dump.c -- config_dump: the effective configuration as YAML, what
 * `leaderd -n -v` prints.  Every key of the table, in its order, with
 * sections grouped and strings quoted only where YAML would read them
 * back as something else; the output reads back as the same config.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/duration.h"
#include "base/text.h"
#include "config/config.h"
#include "config/config_int.h"

/* Output being built in a caller's buffer. */
struct out {
	char	*buf;
	size_t	 len;
	size_t	 used;
};

static void __attribute__((format(printf, 2, 3)))
out_add(struct out *o, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	text_vappendf(o->buf, o->len, &o->used, fmt, ap);
	va_end(ap);
}

/* Whether s must be quoted to read back as the same string. */
static int
needs_quotes(const char *s)
{
	static const char *const words[] = { "~", "null", "true", "false",
	    "yes", "no", "on", "off", "y", "n" };
	const char	*p;
	char		*end;
	size_t		 i;

	if (*s == '\0' || strchr("-?:,[]{}#&*!|>'\"%@` ", *s) != NULL)
		return 1;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasecmp(s, words[i]) == 0)
			return 1;
	for (p = s; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '"' ||
		    *p == '\\' ||
		    (*p == ':' && (p[1] == ' ' || p[1] == '\0')) ||
		    (*p == ' ' && (p[1] == '#' || p[1] == '\0')))
			return 1;
	(void)strtod(s, &end);
	return *end == '\0';
}

/* A string value; '$' is doubled so the dump reads back unchanged. */
static void
out_str(struct out *o, const char *s)
{
	int	 q = needs_quotes(s);

	if (q)
		out_add(o, "\"");
	for (; *s != '\0'; s++) {
		if (*s == '$')
			out_add(o, "$$");
		else if (q && (*s == '"' || *s == '\\'))
			out_add(o, "\\%c", *s);
		else if (q && ((unsigned char)*s < 0x20 || *s == 0x7f))
			out_add(o, "\\x%02x", (unsigned char)*s);
		else
			out_add(o, "%c", *s);
	}
	if (q)
		out_add(o, "\"");
}

/* The length of k's top section ("actions" of "actions.label.key"). */
static size_t
section_len(const struct config_keydef *k)
{
	const char	*dot = strchr(k->path, '.');

	return dot != NULL ? (size_t)(dot - k->path) : 0;
}

static int
same_section(const struct config_keydef *a, const struct config_keydef *b)
{
	size_t	 n = section_len(a);

	return n > 0 && n == section_len(b) &&
	    strncmp(a->path, b->path, n) == 0;
}

/* A value and its origin, to the end of the line. */
static void
dump_value(struct out *o, const struct config *c, const struct config_keydef *k)
{
	const struct config_origin *org;
	char		 d[32];

	switch (k->type) {
	case CONFIG_T_STR:
		out_str(o, (const char *)c + k->off);
		break;
	case CONFIG_T_DUR:
		duration_format(*(const uint64_t *)(const void *)
		    ((const char *)c + k->off), d, sizeof(d));
		out_add(o, "%s", d);
		break;
	case CONFIG_T_BOOL:
		out_add(o, "%s", *(const int *)(const void *)
		    ((const char *)c + k->off) ? "true" : "false");
		break;
	case CONFIG_T_INT:
		out_add(o, "%d", *(const int *)(const void *)
		    ((const char *)c + k->off));
		break;
	}
	org = &c->origin[k->key];
	if (org->src[0] != '\0' && org->line > 0)
		out_add(o, "  # %s:%d:%d", org->src, org->line, org->col);
	else if (org->src[0] != '\0')
		out_add(o, "  # %s", org->src);
	out_add(o, "\n");
}

/*
 * shutdown_timeout as the budget a stop gets (config_stop_budget_ms):
 * unset, its 5s default plus what the actions take to stop, said in
 * the comment.
 */
static void
dump_shutdown(struct out *o, const struct config *c, int run)
{
	char		 b[32], d[32];
	const char	*sep = "";
	uint64_t	 budget, first;
	int		 ep;

	budget = config_stop_budget_ms(c, run);
	if (c->set[CONFIG_SHUTDOWN_TIMEOUT] || budget == c->shutdown_timeout_ms) {
		dump_value(o, c, &config_keys[CONFIG_SHUTDOWN_TIMEOUT]);
		return;
	}
	duration_format(budget, b, sizeof(b));
	duration_format(c->shutdown_timeout_ms, d, sizeof(d));
	out_add(o, "%s  # %s + ", b, d);
	ep = c->ep_service[0] != '\0' && (c->ep_slice || c->ep_legacy);
	first = (run ? c->run_grace_ms + 1000 : 0) +
	    (c->label_enabled ? 2 * c->request_timeout_ms : 0) +
	    (ep ? 2 * c->request_timeout_ms : 0);
	if (first + c->shutdown_timeout_ms != budget) {
		/* An item's label takes longer than the first election's. */
		out_add(o, "2 x request_timeout (an election's pod label)\n");
		return;
	}
	if (run) {
		out_add(o, "run.grace + 1s (the command)");
		sep = " + ";
	}
	if (c->label_enabled) {
		out_add(o, "%s2 x request_timeout (the pod label)", sep);
		sep = " + ";
	}
	if (ep)
		out_add(o, "%s2 x request_timeout (the endpoints)", sep);
	out_add(o, "\n");
}

/*
 * elections:, when there are any: each item's name, lock and durations
 * as that election has them (its own, or inherited, with their
 * origins), and its label key if it sets one.
 */
static void
dump_elections(struct out *o, const struct config *c)
{
	static struct config	 e;
	const struct config_election *it;
	int			 i;

	if (c->nelections == 0)
		return;
	out_add(o, "elections:\n");
	for (i = 1; i <= c->nelections; i++) {
		it = &c->elections[i - 1];
		config_election(c, i, &e);
		out_add(o, "  - name: ");
		out_str(o, config_election_name(c, i));
		if (it->name[0] != '\0' && it->name_origin.line > 0)
			out_add(o, "  # %s:%d:%d", it->name_origin.src,
			    it->name_origin.line, it->name_origin.col);
		out_add(o, "\n    lock:\n      type: ");
		dump_value(o, &e, &config_keys[CONFIG_LOCK_TYPE]);
		out_add(o, "      namespace: ");
		dump_value(o, &e, &config_keys[CONFIG_LOCK_NAMESPACE]);
		out_add(o, "      name: ");
		dump_value(o, &e, &config_keys[CONFIG_LOCK_NAME]);
		out_add(o, "    lease_duration: ");
		dump_value(o, &e, &config_keys[CONFIG_LEASE_DURATION]);
		out_add(o, "    renew_deadline: ");
		dump_value(o, &e, &config_keys[CONFIG_RENEW_DEADLINE]);
		out_add(o, "    retry_period: ");
		dump_value(o, &e, &config_keys[CONFIG_RETRY_PERIOD]);
		if (it->set[CONFIG_EL_LABEL_KEY]) {
			out_add(o, "    actions:\n      label:\n        key: ");
			dump_value(o, &e, &config_keys[CONFIG_LABEL_KEY]);
		}
	}
}

/*
 * Keys in table order, each top section once, at its first key (keys
 * added to the end of the table may belong to a section listed
 * earlier), nested sections two spaces deeper.  The shards section is
 * left out when no shard group is configured.
 */
size_t
config_dump(const struct config *c, int run, char *buf, size_t len)
{
	struct out	 o = { buf, len, 0 };
	const struct config_keydef *k;
	const char	*dot, *p, *section = "";
	size_t		 order[CONFIG_NKEYS], no = 0, i, j, n, depth;
	size_t		 seclen = 0;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	for (i = 0; i < CONFIG_NKEYS; i++) {
		/* A shard group's keys only when one is configured. */
		if (strncmp(config_keys[i].path, "shards.", 7) == 0 &&
		    !config_shards_on(c))
			continue;
		if (section_len(&config_keys[i]) == 0) {
			order[no++] = i;
			continue;
		}
		for (j = 0; j < i; j++)
			if (same_section(&config_keys[j], &config_keys[i]))
				break;
		if (j < i)
			continue;	/* placed with its section already */
		for (j = i; j < CONFIG_NKEYS; j++)
			if (same_section(&config_keys[j], &config_keys[i]))
				order[no++] = j;
	}
	for (i = 0; i < no; i++) {
		k = &config_keys[order[i]];
		/*
		 * Open the sections of this key that the previous key did not
		 * share ("actions.label.key" after "run.grace": actions:,
		 * then label:), each nested two spaces deeper.
		 */
		dot = strrchr(k->path, '.');
		n = dot != NULL ? (size_t)(dot - k->path) : 0;
		for (p = k->path, depth = 0; dot != NULL && p < dot; depth++) {
			const char *end = strchr(p, '.');
			size_t	 upto = (size_t)(end - k->path);

			if (upto > seclen ||
			    strncmp(section, k->path, upto) != 0 ||
			    (upto < seclen && section[upto] != '.'))
				out_add(&o, "%*s%.*s:\n", (int)(2 * depth), "",
				    (int)(end - p), p);
			p = end + 1;
		}
		section = k->path;
		seclen = n;
		out_add(&o, "%*s%s: ", (int)(2 * depth), "",
		    dot != NULL ? dot + 1 : k->path);
		if (k->key == CONFIG_SHUTDOWN_TIMEOUT)
			dump_shutdown(&o, c, run);
		else
			dump_value(&o, c, k);
	}
	dump_elections(&o, c);
	return o.used;
}
