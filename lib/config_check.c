/*
 * config_check.c -- config_validate and config_dump: the rules that
 * span keys, and the effective configuration as YAML.
 */

#include <sys/socket.h>
#include <sys/un.h>

#include <arpa/inet.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_int.h"
#include "duration.h"
#include "elector.h"

#define IDENTITY_MAX	253	/* a pod name's limit */
#define SUN_PATH_MAX	(sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

#define ORIGIN(c, k)	(&(c)->origin[(k)])

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
static enum config_key
later(const struct config *c, enum config_key a, enum config_key b)
{
	if (rank(c, b) > rank(c, a))
		return b;
	if (rank(c, b) == 1 && rank(c, a) == 1 &&
	    strcmp(c->origin[a].src, c->origin[b].src) == 0 &&
	    c->origin[b].line > c->origin[a].line)
		return b;
	return a;
}

/* Whether s is valid UTF-8 without overlong forms or surrogates. */
static int
valid_utf8(const unsigned char *s)
{
	unsigned	 cp;
	int		 n, i;

	while (*s != '\0') {
		if (*s < 0x80) {
			s++;
			continue;
		}
		if ((*s & 0xe0) == 0xc0) {
			n = 1;
			cp = *s & 0x1f;
		} else if ((*s & 0xf0) == 0xe0) {
			n = 2;
			cp = *s & 0x0f;
		} else if ((*s & 0xf8) == 0xf0) {
			n = 3;
			cp = *s & 0x07;
		} else
			return 0;
		for (i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
		    (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		s += n + 1;
	}
	return 1;
}

/* A DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most max bytes. */
static int
dns_label(const char *s, size_t len, size_t max)
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
static int
dns_subdomain(const char *s)
{
	const char	*dot;

	if (strlen(s) > 253)
		return 0;
	for (;;) {
		dot = strchr(s, '.');
		if (!dns_label(s, dot ? (size_t)(dot - s) : strlen(s), 253))
			return 0;
		if (dot == NULL)
			return 1;
		s = dot + 1;
	}
}

/* Check "host:port"; returns NULL or what is wrong. */
static const char *
check_hostport(const char *s)
{
	const char	*colon, *p;
	char		 host[CONFIG_STR_MAX];
	unsigned char	 addr[16];
	unsigned long	 port;
	size_t		 n;
	int		 digits_dots = 1;

	if (s[0] == '[') {
		if ((p = strchr(s, ']')) == NULL || p[1] != ':')
			return "an IPv6 address is written [addr]:port";
		n = (size_t)(p - s - 1);
		memcpy(host, s + 1, n);
		host[n] = '\0';
		if (inet_pton(AF_INET6, host, addr) != 1)
			return "not a valid IPv6 address inside [ ]";
		colon = p + 1;
	} else {
		if ((colon = strrchr(s, ':')) == NULL)
			return "it must be host:port, such as 127.0.0.1:4040";
		n = (size_t)(colon - s);
		memcpy(host, s, n);
		host[n] = '\0';
		if (strchr(host, ':') != NULL)
			return "an IPv6 address needs brackets, such as "
			    "[::1]:4040";
		for (p = host; *p != '\0'; p++) {
			if (!((*p >= '0' && *p <= '9') || *p == '.'))
				digits_dots = 0;
			if (!((*p >= 'a' && *p <= 'z') ||
			    (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || *p == '.' || *p == '-'))
				return "the host must be an IP address or a "
				    "host name";
		}
		if (host[0] != '\0' && digits_dots &&
		    inet_pton(AF_INET, host, addr) != 1)
			return "not a valid IPv4 address";
	}
	p = colon + 1;
	if (*p == '\0' || strlen(p) > 5 || strspn(p, "0123456789") !=
	    strlen(p))
		return "the port must be a number from 0 to 65535";
	port = strtoul(p, NULL, 10);
	if (port > 65535)
		return "the port must be a number from 0 to 65535";
	return NULL;
}

static void
check_timing(const struct config *c, struct config_errs *e)
{
	char		 ld[32], rd[32], rp[32], min[64], lo[32], hi[32];
	char		 why[256];
	uint64_t	 l = c->lease_duration_ms, r = c->renew_deadline_ms;
	uint64_t	 p = c->retry_period_ms;
	int		 n = e->n;

	duration_format(l, ld, sizeof(ld));
	duration_format(r, rd, sizeof(rd));
	duration_format(p, rp, sizeof(rp));
	if (l == 0)
		config_errs_add(e, ORIGIN(c, CONFIG_LEASE_DURATION),
		    "lease_duration must be greater than zero");
	else if (l % 1000 != 0) {
		duration_format(l / 1000 * 1000, lo, sizeof(lo));
		duration_format((l / 1000 + 1) * 1000, hi, sizeof(hi));
		config_errs_add(e, ORIGIN(c, CONFIG_LEASE_DURATION),
		    "lease_duration (%s) must be a whole number of seconds, "
		    "as the Lease stores leaseDurationSeconds; use %s%s%s", ld,
		    l < 1000 ? "" : lo, l < 1000 ? "" : " or ", hi);
	} else if (l / 1000 > INT32_MAX)
		config_errs_add(e, ORIGIN(c, CONFIG_LEASE_DURATION),
		    "lease_duration (%s) is too long for the Lease's "
		    "leaseDurationSeconds", ld);
	if (r == 0)
		config_errs_add(e, ORIGIN(c, CONFIG_RENEW_DEADLINE),
		    "renew_deadline must be greater than zero");
	if (p == 0)
		config_errs_add(e, ORIGIN(c, CONFIG_RETRY_PERIOD),
		    "retry_period must be greater than zero");
	if (l > 0 && r > 0 && r >= l)
		config_errs_add(e, ORIGIN(c, later(c, CONFIG_RENEW_DEADLINE,
		    CONFIG_LEASE_DURATION)), "renew_deadline (%s) must be less "
		    "than lease_duration (%s); lower renew_deadline or raise "
		    "lease_duration", rd, ld);
	if (r > 0 && p > 0 && r * 5 <= p * 6) {
		/* NewLeaderElector (ref 1): renewDeadline > 1.2 x retryPeriod. */
		min[0] = '\0';
		if (p * 6 % 5 == 0) {
			snprintf(min, sizeof(min), ", that is more than ");
			duration_format(p * 6 / 5, min + strlen(min),
			    sizeof(min) - strlen(min));
		}
		config_errs_add(e, ORIGIN(c, later(c, CONFIG_RENEW_DEADLINE,
		    CONFIG_RETRY_PERIOD)), "renew_deadline (%s) must be more "
		    "than 1.2 x retry_period (%s)%s; raise renew_deadline or "
		    "lower retry_period", rd, rp, min);
	}
	/* The elector's own check must agree; if not, say so anyway. */
	if (e->n == n && elector_check_timing(l, r, p, why, sizeof(why)) == -1)
		config_errs_add(e, ORIGIN(c, CONFIG_RENEW_DEADLINE), "%s", why);
}

static void
check_request_timeout(const struct config *c, struct config_errs *e)
{
	char		 rd[32], rt[32];
	uint64_t	 r = c->renew_deadline_ms, t = c->request_timeout_ms;

	duration_format(r, rd, sizeof(rd));
	duration_format(t, rt, sizeof(rt));
	if (t == 0)
		config_errs_add(e, ORIGIN(c, CONFIG_REQUEST_TIMEOUT),
		    "kubernetes.request_timeout must be greater than zero");
	else if (r > 0 && t >= r)
		config_errs_add(e, ORIGIN(c, later(c, CONFIG_REQUEST_TIMEOUT,
		    CONFIG_RENEW_DEADLINE)), "kubernetes.request_timeout (%s) "
		    "must be less than renew_deadline (%s), so that a renew "
		    "can fail and be retried in time; lower request_timeout or "
		    "raise renew_deadline", rt, rd);
}

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
	else if (!valid_utf8((const unsigned char *)s))
		config_errs_add(e, ORIGIN(c, CONFIG_IDENTITY), "identity is "
		    "not valid UTF-8");
	else {
		for (; *s != '\0'; s++)
			if ((unsigned char)*s < 0x20 || *s == 0x7f)
				break;
		if (*s != '\0')
			config_errs_add(e, ORIGIN(c, CONFIG_IDENTITY),
			    "identity contains a control character (0x%02x); "
			    "use printable characters", (unsigned char)*s);
	}

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
	if (*s == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_NAME), "lock.name is "
		    "required (the name of the Lease to compete for); set "
		    "lock.name in the file or --election");
	else if (!dns_subdomain(s))
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_NAME), "lock.name "
		    "\"%s\" is not a valid Lease name: use at most 253 "
		    "lowercase letters, digits, '-' and '.', starting and "
		    "ending with a letter or digit", s);

	s = c->lock_namespace;
	if (*s == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_NAMESPACE),
		    "lock.namespace is empty; set it, or remove it to use "
		    "$POD_NAMESPACE or the service account's namespace");
	else if (!dns_label(s, strlen(s), 63))
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_NAMESPACE),
		    "lock.namespace \"%s\" is not a valid namespace: use at "
		    "most 63 lowercase letters, digits and '-', starting and "
		    "ending with a letter or digit", s);
}

static void
check_listen(const struct config *c, struct config_errs *e)
{
	const char	*why;

	if (c->listen_http[0] != '\0' &&
	    (why = check_hostport(c->listen_http)) != NULL)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_HTTP), "listen.http "
		    "\"%s\": %s (\"\" turns TCP off)", c->listen_http, why);
	if (c->listen_unix[0] != '\0' && c->listen_unix[0] != '/')
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_UNIX), "listen.unix "
		    "\"%s\" must be an absolute path", c->listen_unix);
	else if (strlen(c->listen_unix) > SUN_PATH_MAX)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_UNIX), "listen.unix "
		    "is too long (%zu bytes; a unix socket path holds at most "
		    "%zu)", strlen(c->listen_unix), SUN_PATH_MAX);
	if (c->listen_http[0] == '\0' && c->listen_unix[0] == '\0')
		config_errs_add(e, ORIGIN(c, later(c, CONFIG_LISTEN_HTTP,
		    CONFIG_LISTEN_UNIX)), "no listener: listen.http and "
		    "listen.unix are both empty; set at least one");
}

int
config_validate(const struct config *c, char *err, size_t errlen)
{
	struct config_errs	 e = { err, errlen, 0, 0 };

	if (errlen > 0)
		err[0] = '\0';
	check_names(c, &e);
	check_timing(c, &e);
	check_listen(c, &e);
	check_request_timeout(c, &e);
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
	int	 n;

	if (o->used + 1 >= o->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->used += (size_t)n;
	if (o->used >= o->len)
		o->used = o->len - 1;
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

size_t
config_dump(const struct config *c, char *buf, size_t len)
{
	struct out	 o = { buf, len, 0 };
	const struct config_keydef *k;
	const struct config_origin *org;
	const char	*dot, *section = "";
	char		 d[32];
	size_t		 i, n, seclen = 0;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	for (i = 0; i < CONFIG_NKEYS; i++) {
		k = &config_keys[i];
		if ((dot = strchr(k->path, '.')) != NULL) {
			n = (size_t)(dot - k->path);
			if (seclen != n || strncmp(section, k->path, n) != 0) {
				out_add(&o, "%.*s:\n", (int)n, k->path);
				section = k->path;
				seclen = n;
			}
			out_add(&o, "  %s: ", dot + 1);
		} else {
			seclen = 0;
			out_add(&o, "%s: ", k->path);
		}
		switch (k->type) {
		case CONFIG_T_STR:
			out_str(&o, (const char *)c + k->off);
			break;
		case CONFIG_T_DUR:
			duration_format(*(const uint64_t *)(const void *)
			    ((const char *)c + k->off), d, sizeof(d));
			out_add(&o, "%s", d);
			break;
		case CONFIG_T_BOOL:
			out_add(&o, "%s", *(const int *)(const void *)
			    ((const char *)c + k->off) ? "true" : "false");
			break;
		}
		org = &c->origin[k->key];
		if (org->src[0] != '\0' && org->line > 0)
			out_add(&o, "  # %s:%d:%d", org->src, org->line,
			    org->col);
		else if (org->src[0] != '\0')
			out_add(&o, "  # %s", org->src);
		out_add(&o, "\n");
	}
	return o.used;
}
