/*
 * config_check.c -- config_validate: the rules that span keys, each
 * error with the origin (file:line:col or flag) of the value it names.
 */

#include <sys/socket.h>
#include <sys/un.h>

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/duration.h"
#include "base/netaddr.h"
#include "codec/epslice.h"
#include "codec/leasecand.h"
#include "config/compat.h"
#include "config/config.h"
#include "config/config_int.h"
#include "core/elector.h"

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

int
config_pod_name_ok(const char *s)
{
	return dns_subdomain(s);
}

/* Check "host:port"; returns NULL or what is wrong (in why). */
static const char *
check_hostport(const char *s, char *why, size_t whylen)
{
	const char		*p;
	char			 host[CONFIG_STR_MAX], port[CONFIG_STR_MAX];
	struct netaddr_ip	 ip;
	int			 digits_dots = 1;

	if (netaddr_split(s, 0, host, sizeof(host), port, sizeof(port), why,
	    whylen) == -1)
		return why;
	if (s[0] == '[') {
		if (netaddr_ip_parse(host, &ip) == -1 ||
		    ip.family != AF_INET6)
			return "not a valid IPv6 address inside [ ]";
	} else {
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
		    (netaddr_ip_parse(host, &ip) == -1 ||
		    ip.family != AF_INET))
			return "not a valid IPv4 address";
	}
	if (netaddr_port(port) == -1)
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

/*
 * A watch shorter than a second is a request loop; the API server caps
 * timeoutSeconds by its own --min-request-timeout range anyway (1800 s
 * at most by default), so longer values are refused here.
 */
static void
check_watch_timeout(const struct config *c, struct config_errs *e)
{
	uint64_t	 t = c->watch_timeout_ms;

	if (t < 1000 || t > 1800000 || t % 1000 != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_WATCH_TIMEOUT),
		    "kubernetes.watch_timeout must be a whole number of "
		    "seconds from 1s to 30m (default 5m)");
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

/* Whether a host of listen.http or listen.probes is a wildcard address. */
static int
wildcard(const char *host)
{
	return host[0] == '\0' || strcmp(host, "0.0.0.0") == 0 ||
	    strcmp(host, "::") == 0;
}

/*
 * Whether two valid host:port values would bind a common address and
 * port: the same host, "localhost" (127.0.0.1 and ::1) beside a loopback
 * literal, or a wildcard beside anything, on the same port.
 */
static int
same_listener(const char *a, const char *b)
{
	char			 ha[CONFIG_STR_MAX], hb[CONFIG_STR_MAX];
	char			 pa[16], pb[16], why[64];
	struct netaddr_ip	 ip;

	if (netaddr_split(a, 0, ha, sizeof(ha), pa, sizeof(pa), why,
	    sizeof(why)) == -1 || netaddr_split(b, 0, hb, sizeof(hb), pb,
	    sizeof(pb), why, sizeof(why)) == -1)
		return 0;
	if (netaddr_port(pa) != netaddr_port(pb) || netaddr_port(pa) == 0)
		return 0;
	if (strcasecmp(ha, hb) == 0 || wildcard(ha) || wildcard(hb))
		return 1;
	if (strcasecmp(ha, "localhost") == 0)
		return netaddr_ip_parse(hb, &ip) == 0 && netaddr_ip_loopback(&ip);
	if (strcasecmp(hb, "localhost") == 0)
		return netaddr_ip_parse(ha, &ip) == 0 && netaddr_ip_loopback(&ip);
	return 0;
}

static void
check_listen(const struct config *c, struct config_errs *e)
{
	const char	*why;
	char		 buf[128];

	if (c->listen_http[0] != '\0' &&
	    (why = check_hostport(c->listen_http, buf, sizeof(buf))) != NULL)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_HTTP), "listen.http "
		    "\"%s\": %s (\"\" turns TCP off)", c->listen_http, why);
	if (c->listen_probes[0] != '\0' &&
	    (why = check_hostport(c->listen_probes, buf,
	    sizeof(buf))) != NULL)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_PROBES),
		    "listen.probes \"%s\": %s (\"\" turns it off)",
		    c->listen_probes, why);
	else if (c->listen_probes[0] != '\0' &&
	    same_listener(c->listen_probes, c->listen_http))
		config_errs_add(e, ORIGIN(c, later(c, CONFIG_LISTEN_HTTP,
		    CONFIG_LISTEN_PROBES)), "listen.probes \"%s\" and "
		    "listen.http \"%s\" share an address and port; the "
		    "probes need a port of their own", c->listen_probes,
		    c->listen_http);
	if (c->listen_metrics[0] != '\0' &&
	    (why = check_hostport(c->listen_metrics, buf,
	    sizeof(buf))) != NULL)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_METRICS),
		    "listen.metrics \"%s\": %s (\"\" turns it off)",
		    c->listen_metrics, why);
	else if (c->listen_metrics[0] != '\0' &&
	    (same_listener(c->listen_metrics, c->listen_http) ||
	    same_listener(c->listen_metrics, c->listen_probes)))
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_METRICS),
		    "listen.metrics \"%s\" shares an address and port with "
		    "listen.%s \"%s\"; the metrics need a port of their own",
		    c->listen_metrics, same_listener(c->listen_metrics,
		    c->listen_http) ? "http" : "probes",
		    same_listener(c->listen_metrics, c->listen_http) ?
		    c->listen_http : c->listen_probes);
	if (c->listen_unix[0] != '\0' && c->listen_unix[0] != '/')
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_UNIX), "listen.unix "
		    "\"%s\" must be an absolute path", c->listen_unix);
	else if (strlen(c->listen_unix) > SUN_PATH_MAX)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_UNIX), "listen.unix "
		    "is too long (%zu bytes; a unix socket path holds at most "
		    "%zu)", strlen(c->listen_unix), SUN_PATH_MAX);
	/* The peers run without a listener unless asked for one. */
	if (c->listen_http[0] == '\0' && c->listen_unix[0] == '\0' &&
	    c->compat[0] == '\0')
		config_errs_add(e, ORIGIN(c, later(c, CONFIG_LISTEN_HTTP,
		    CONFIG_LISTEN_UNIX)), "no listener: listen.http and "
		    "listen.unix are both empty; set at least one");
	if (c->listen_max_streams < 0 ||
	    c->listen_max_streams > CONFIG_STREAMS_MAX)
		config_errs_add(e, ORIGIN(c, CONFIG_LISTEN_MAX_STREAMS),
		    "listen.max_streams %d is out of range: give 0 (no push "
		    "clients) to %d", c->listen_max_streams,
		    CONFIG_STREAMS_MAX);
}

/* A label name: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, <= 63. */
static int
label_name(const char *s)
{
	size_t	 i, n = strlen(s);

	if (n == 0 || n > 63)
		return 0;
	for (i = 0; i < n; i++) {
		int	 alnum = (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9');

		if (!alnum && ((i == 0 || i == n - 1) ||
		    (s[i] != '-' && s[i] != '_' && s[i] != '.')))
			return 0;
	}
	return 1;
}

static void	check_label_key(const struct config *, struct config_errs *);

/* run.restart, and actions.label when it is enabled. */
static void
check_actions(const struct config *c, struct config_errs *e)
{
	if (strcmp(c->run_restart, "never") != 0 &&
	    strcmp(c->run_restart, "restart") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_RUN_RESTART), "run.restart "
		    "\"%s\" is not never or restart", c->run_restart);
	check_label_key(c, e);
	if (!c->label_enabled)
		return;
	if (c->label_pod[0] == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_LABEL_ENABLED),
		    "actions.label.enabled needs the pod's name: set "
		    "actions.label.pod, or $POD_NAME from the downward API "
		    "(fieldRef metadata.name)");
	else if (!dns_subdomain(c->label_pod))
		config_errs_add(e, ORIGIN(c, CONFIG_LABEL_POD),
		    "actions.label.pod \"%s\" is not a valid pod name",
		    c->label_pod);
	if (c->label_namespace[0] != '\0' &&
	    !dns_label(c->label_namespace, strlen(c->label_namespace), 63))
		config_errs_add(e, ORIGIN(c, CONFIG_LABEL_NAMESPACE),
		    "actions.label.namespace \"%s\" is not a valid "
		    "namespace", c->label_namespace);
}

/* actions.label.key is a label key. */
static void
check_label_key(const struct config *c, struct config_errs *e)
{
	const char	*k = c->label_key, *slash;
	char		 prefix[CONFIG_STR_MAX];

	if ((slash = strchr(k, '/')) != NULL) {
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(slash - k), k);
		k = slash + 1;
	} else
		prefix[0] = '\0';
	if (!label_name(k) || (slash != NULL && !dns_subdomain(prefix)))
		config_errs_add(e, ORIGIN(c, CONFIG_LABEL_KEY),
		    "actions.label.key \"%s\" is not a label key: an "
		    "optional DNS subdomain and '/', then at most 63 letters, "
		    "digits, '-', '_' and '.', starting and ending with a "
		    "letter or digit", c->label_key);
}

/*
 * candidacy: the application probe's URL, by default only to this pod
 * (loopback, localhost, or $POD_IP): a probe is the application's
 * health, and a host elsewhere would make another pod's health decide
 * this one's candidacy.
 */
static void
check_candidacy(const struct config *c, struct config_errs *e)
{
	char		 scheme[16], host[256], why[256];
	const char	*path, *pod_ip;
	int		 port;

	if (c->probe_period_ms == 0 || c->probe_timeout_ms == 0)
		config_errs_add(e, ORIGIN(c, c->probe_period_ms == 0 ?
		    CONFIG_PROBE_PERIOD : CONFIG_PROBE_TIMEOUT),
		    "candidacy.probe.period and timeout must be greater "
		    "than zero (defaults 2s and 1s)");
	else if (c->probe_timeout_ms > c->probe_period_ms)
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_TIMEOUT),
		    "candidacy.probe.timeout (%llums) is longer than its "
		    "period (%llums): a probe must end before the next "
		    "starts; lower the timeout or lengthen the period",
		    (unsigned long long)c->probe_timeout_ms,
		    (unsigned long long)c->probe_period_ms);
	if (c->probe_failures < 1 || c->probe_failures > 1000)
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_FAILURES),
		    "candidacy.probe.failure_threshold %d is not from 1 to "
		    "1000 (default 3)", c->probe_failures);
	if (c->probe_successes < 1 || c->probe_successes > 1000)
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_SUCCESSES),
		    "candidacy.probe.success_threshold %d is not from 1 to "
		    "1000 (default 1)", c->probe_successes);
	if (c->require_client && c->listen_http[0] == '\0' &&
	    c->listen_unix[0] == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_REQUIRE_CLIENT),
		    "candidacy.require_client needs a listener for the "
		    "client's stream: set listen.http or listen.unix");
	if (c->probe_url[0] == '\0')
		return;
	if (netaddr_url_split(c->probe_url, scheme, sizeof(scheme), host,
	    sizeof(host), &port, &path, why, sizeof(why)) == -1) {
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_URL),
		    "candidacy.probe.url \"%s\": %s", c->probe_url, why);
		return;
	}
	if (strcmp(scheme, "http") != 0 && strcmp(scheme, "tcp") != 0) {
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_URL),
		    "candidacy.probe.url \"%s\": the scheme must be http "
		    "(a GET, healthy on 200-399) or tcp (a connect)",
		    c->probe_url);
		return;
	}
	if (strcmp(scheme, "tcp") == 0 && strcmp(path, "/") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_URL),
		    "candidacy.probe.url \"%s\": a tcp probe has no path; "
		    "write tcp://HOST:PORT", c->probe_url);
	pod_ip = getenv("POD_IP");
	if (!c->probe_any_host && strcasecmp(host, "localhost") != 0 &&
	    !netaddr_is_loopback(host) &&
	    (pod_ip == NULL || strcmp(host, pod_ip) != 0))
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_URL),
		    "candidacy.probe.url \"%s\": host %s is not this pod "
		    "(loopback, localhost or $POD_IP); probe the application "
		    "beside leaderd, or set candidacy.probe.any_host: true",
		    c->probe_url, host);
}

int
config_check_grace(const struct config *c, char *err, size_t errlen)
{
	uint64_t	 room;

	room = c->lease_duration_ms > c->renew_deadline_ms ?
	    c->lease_duration_ms - c->renew_deadline_ms : 0;
	if (c->run_grace_ms <= room)
		return 0;
	snprintf(err, errlen, "run.grace %llums is longer than lease_duration "
	    "- renew_deadline (%llums): a command that ignores SIGTERM may "
	    "still run when another instance takes the lease; lower "
	    "run.grace (--grace) or widen that gap",
	    (unsigned long long)c->run_grace_ms, (unsigned long long)room);
	return -1;
}

int
config_check_shutdown(const struct config *c, char *err, size_t errlen)
{
	struct config_errs	 e = { err, errlen, 0, 0 };
	char			 st[32], g[32];

	if (errlen > 0)
		err[0] = '\0';
	if (!c->set[CONFIG_SHUTDOWN_TIMEOUT] ||
	    c->shutdown_timeout_ms > c->run_grace_ms)
		return 0;
	duration_format(c->shutdown_timeout_ms, st, sizeof(st));
	duration_format(c->run_grace_ms, g, sizeof(g));
	config_errs_add(&e, ORIGIN(c, later(c, CONFIG_SHUTDOWN_TIMEOUT,
	    CONFIG_RUN_GRACE)), "shutdown_timeout (%s) must be longer than "
	    "run.grace (%s): the budget counts from the signal and covers the "
	    "command's stop, then the release; raise shutdown_timeout (e.g. "
	    "to run.grace + 5s) or lower run.grace", st, g);
	return -1;
}

uint64_t
config_shutdown_ms(const struct config *c, uint64_t actions_ms)
{
	if (c->set[CONFIG_SHUTDOWN_TIMEOUT])
		return c->shutdown_timeout_ms;
	return c->shutdown_timeout_ms + actions_ms;
}

/* actions.endpoints when a Service is named. */
static void
check_endpoints(const struct config *c, struct config_errs *e)
{
	struct netaddr_ip	 ip;
	char			 why[256];

	if (c->ep_service[0] == '\0')
		return;
	/* "<service>-leader" must be a DNS subdomain too. */
	if (!dns_label(c->ep_service, strlen(c->ep_service), 63))
		config_errs_add(e, ORIGIN(c, CONFIG_EP_SERVICE),
		    "actions.endpoints.service \"%s\" is not a valid Service "
		    "name (a DNS label: lower-case letters, digits and '-', at "
		    "most 63)", c->ep_service);
	if (c->ep_ip[0] == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_EP_SERVICE),
		    "actions.endpoints.service needs this pod's IP: set "
		    "actions.endpoints.ip, or $POD_IP from the downward API "
		    "(fieldRef status.podIP)");
	else if (netaddr_ip_parse(c->ep_ip, &ip) == -1)
		config_errs_add(e, ORIGIN(c, CONFIG_EP_IP),
		    "actions.endpoints.ip \"%s\" is not an IPv4 or IPv6 "
		    "address", c->ep_ip);
	if (c->ep_namespace[0] != '\0' &&
	    !dns_label(c->ep_namespace, strlen(c->ep_namespace), 63))
		config_errs_add(e, ORIGIN(c, CONFIG_EP_NAMESPACE),
		    "actions.endpoints.namespace \"%s\" is not a valid "
		    "namespace", c->ep_namespace);
	if (c->ep_port < 0 || c->ep_port > 65535)
		config_errs_add(e, ORIGIN(c, CONFIG_EP_PORT),
		    "actions.endpoints.port %d is not 0 (no port) or a port "
		    "1-65535", c->ep_port);
	if (c->ep_port_name[0] != '\0' && (c->ep_port == 0 ||
	    !dns_label(c->ep_port_name, strlen(c->ep_port_name), 15)))
		config_errs_add(e, ORIGIN(c, CONFIG_EP_PORT_NAME),
		    "actions.endpoints.port_name \"%s\" needs "
		    "actions.endpoints.port and must be the Service port's "
		    "name (a DNS label, at most 15)", c->ep_port_name);
	if (c->ep_ports_json[0] != '\0' &&
	    epslice_ports_check(c->ep_ports_json, why, sizeof(why)) == -1)
		config_errs_add(e, ORIGIN(c, CONFIG_EP_PORTS_JSON),
		    "actions.endpoints.ports_json: %s", why);
	else if (c->ep_ports_json[0] != '\0' && (c->ep_port != 0 ||
	    c->ep_port_name[0] != '\0'))
		config_errs_add(e, ORIGIN(c, later(c, CONFIG_EP_PORTS_JSON,
		    c->ep_port != 0 ? CONFIG_EP_PORT : CONFIG_EP_PORT_NAME)),
		    "actions.endpoints.ports_json and actions.endpoints.port "
		    "(or port_name) both name the ports; keep one");
	if (c->ep_node_name[0] != '\0' && !dns_subdomain(c->ep_node_name))
		config_errs_add(e, ORIGIN(c, CONFIG_EP_NODE_NAME),
		    "actions.endpoints.node_name \"%s\" is not a valid node "
		    "name (a DNS subdomain)", c->ep_node_name);
	if (!c->ep_slice && !c->ep_legacy)
		config_errs_add(e, ORIGIN(c, CONFIG_EP_SLICE),
		    "actions.endpoints.slice is false and legacy is not true: "
		    "nothing would be written; set legacy: true to keep the "
		    "core Endpoints object alone");
}

/*
 * shards: the group's name (a DNS label: it names the Leases NAME-0 ..
 * NAME-(N-1) and NAME-member-IDENTITY and is the value of the label
 * leaderd.io/shard-group, at most 63), its count, the identity as part
 * of a Lease name, and the steady-state write rate (config.h).
 */
static void
check_shards(const struct config *c, struct config_errs *e)
{
	static const struct {
		uint64_t	 lease, renew, retry;
	} ladder[] = {
		{ 15000, 10000, 2000 }, { 30000, 20000, 5000 },
		{ 60000, 40000, 10000 }, { 120000, 80000, 20000 },
		{ 240000, 160000, 40000 },
	};
	const char	*g = c->shards_group;
	char		 rp[32], ld[32], rd[32], rr[32];
	size_t		 i, len;
	unsigned	 n;
	double		 rate;

	if (!config_shards_on(c))
		return;
	if (*g == '\0') {
		config_errs_add(e, ORIGIN(c, CONFIG_SHARDS_COUNT),
		    "shards.count needs shards.group, the group's name (its "
		    "Leases are NAME-0 .. NAME-(count-1))");
		return;
	}
	if (!dns_label(g, strlen(g), 63)) {
		config_errs_add(e, ORIGIN(c, CONFIG_SHARDS_GROUP),
		    "shards.group \"%s\" is not a valid group name: use at "
		    "most 63 lowercase letters, digits and '-', starting and "
		    "ending with a letter or digit (it names the Leases "
		    "NAME-0 .. and NAME-member-IDENTITY)", g);
		return;
	}
	if (!c->set[CONFIG_SHARDS_COUNT]) {
		config_errs_add(e, ORIGIN(c, CONFIG_SHARDS_GROUP),
		    "shards.group needs shards.count, the number of shards "
		    "(1 to %d)", CONFIG_SHARDS_MAX);
		return;
	}
	if (c->shards_count < 1 || c->shards_count > CONFIG_SHARDS_MAX) {
		config_errs_add(e, ORIGIN(c, CONFIG_SHARDS_COUNT),
		    "shards.count %d is not from 1 to %d", c->shards_count,
		    CONFIG_SHARDS_MAX);
		return;
	}
	n = (unsigned)c->shards_count;
	if (strcmp(c->shards_on_change, "restart") != 0 &&
	    strcmp(c->shards_on_change, "sighup") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_SHARDS_ON_CHANGE),
		    "shards.on_change \"%s\" is not restart or sighup (what "
		    "run mode does to the command when its shards change)",
		    c->shards_on_change);
	/*
	 * The group is the whole of the daemon's work: its first election
	 * is the member Lease, in lock.namespace; nothing else fits beside.
	 */
	if (c->set[CONFIG_LOCK_NAME])
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_NAME), "lock.name "
		    "cannot be given with shards: a shard group's first "
		    "election is its member Lease %s-member-IDENTITY; remove "
		    "lock.name (and --election), or run the other election "
		    "in a leaderd of its own", g);
	if (c->nelections > 0)
		config_errs_add(e, &c->elections[0].at, "elections: cannot be "
		    "given with shards: a leaderd runs one shard group and "
		    "nothing beside it; remove elections: or run them in a "
		    "leaderd of their own");
	if (strcmp(c->lock_type, "leases") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_TYPE), "lock.type %s "
		    "cannot be used with shards: a shard group's locks are "
		    "Leases; remove lock.type or set it to leases",
		    c->lock_type);
	if (c->compat[0] != '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_COMPAT), "compat %s "
		    "cannot be used with shards: the peer sidecars have no "
		    "shard groups; remove compat (or --compat)", c->compat);
	if (c->label_enabled)
		config_errs_add(e, ORIGIN(c, CONFIG_LABEL_ENABLED),
		    "actions.label cannot be used with shards: a pod owns "
		    "several shards, not one leadership; remove "
		    "actions.label and read GET /shards");
	if (c->ep_service[0] != '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_EP_SERVICE),
		    "actions.endpoints cannot be used with shards: there is "
		    "no one leader to point a Service at; remove "
		    "actions.endpoints");
	if (c->coordinated)
		config_errs_add(e, ORIGIN(c, CONFIG_COORDINATED),
		    "candidacy.coordinated cannot be used with shards: the "
		    "shards are balanced by the group's planner, not by the "
		    "API server's election controller; remove "
		    "candidacy.coordinated (and --coordinated)");
	if (strcmp(c->handover, "auto") == 0)
		config_errs_add(e, ORIGIN(c, CONFIG_HANDOVER),
		    "handover: auto cannot be used with shards: on SIGTERM "
		    "each shard is released and the planner of the members "
		    "left takes it at once; remove handover");
	len = strlen(g) + strlen("-member-") + strlen(c->identity);
	if (c->identity[0] != '\0' && !dns_subdomain(c->identity))
		config_errs_add(e, ORIGIN(c, CONFIG_IDENTITY), "identity \"%s\" "
		    "cannot be part of the member Lease's name %s-member-%s: "
		    "in a shard group the identity must be lowercase letters, "
		    "digits, '-' and '.', as a pod name is (fix identity, --id "
		    "or $POD_NAME)", c->identity, g, c->identity);
	else if (len > 253)
		config_errs_add(e, ORIGIN(c, later(c, CONFIG_SHARDS_GROUP,
		    CONFIG_IDENTITY)), "the member Lease's name %s-member-%s "
		    "is %zu bytes, more than a Lease name's 253; shorten "
		    "shards.group or the identity", g, c->identity, len);
	rate = config_shards_rate(n, n, c->retry_period_ms);
	if (c->shards_force || rate <= CONFIG_SHARDS_RATE_MAX ||
	    c->retry_period_ms == 0)
		return;
	for (i = 0; i < sizeof(ladder) / sizeof(ladder[0]) - 1; i++)
		if (ladder[i].retry > c->retry_period_ms &&
		    config_shards_rate(n, n, ladder[i].retry) <=
		    CONFIG_SHARDS_RATE_MAX)
			break;
	duration_format(c->retry_period_ms, rp, sizeof(rp));
	duration_format(ladder[i].lease, ld, sizeof(ld));
	duration_format(ladder[i].renew, rd, sizeof(rd));
	duration_format(ladder[i].retry, rr, sizeof(rr));
	config_errs_add(e, ORIGIN(c, later(c, CONFIG_SHARDS_COUNT,
	    CONFIG_RETRY_PERIOD)), "a group of %u shards writes %.1f/s to the "
	    "API server with retry_period %s and %u members (each shard Lease "
	    "and each member Lease renewed once per retry_period), more than "
	    "the limit of %d/s: use lease_duration %s, renew_deadline %s, "
	    "retry_period %s (%.1f/s), fewer shards, or shards.force: true",
	    n, rate, rp, n, CONFIG_SHARDS_RATE_MAX, ld, rd, rr,
	    config_shards_rate(n, n, ladder[i].retry));
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
			check_timing(&a, e);
			check_request_timeout(&a, e);
			if (a.label_enabled)
				check_label_key(&a, e);
			if (c->elections[i - 1].name[0] != '\0' &&
			    (strlen(n) > 63 || !dns_subdomain(n)))
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

/*
 * Coordinated election (candidacy.coordinated) and handover: a Lease
 * lock, versions the API server takes, a strategy it knows, and an
 * identity that can name a LeaseCandidate.
 */
static void
check_coordinated(const struct config *c, struct config_errs *e)
{
	const char	*p, *slash;

	if (strcmp(c->handover, "none") != 0 &&
	    strcmp(c->handover, "auto") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_HANDOVER),
		    "handover \"%s\" is not none or auto", c->handover);
	if (!c->coordinated)
		return;
	if (strcmp(c->lock_type, "leases") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_COORDINATED),
		    "candidacy.coordinated needs lock.type leases, not %s",
		    c->lock_type);
	if (c->compat[0] != '\0' && compat_for_life(c->compat))
		config_errs_add(e, ORIGIN(c, CONFIG_COORDINATED),
		    "candidacy.coordinated cannot be used with compat %s "
		    "(a lease held for life)", c->compat);
	if (c->binary_version[0] == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_COORDINATED),
		    "candidacy.coordinated needs candidacy.binary_version, "
		    "the version of this binary as MAJOR.MINOR.PATCH "
		    "(e.g. 1.4.0)");
	else if (!lease_cand_version_ok(c->binary_version))
		config_errs_add(e, ORIGIN(c, CONFIG_BINARY_VERSION),
		    "candidacy.binary_version \"%s\" is not semver, "
		    "MAJOR.MINOR.PATCH (digits, no leading v)", c->binary_version);
	if (c->emulation_version[0] != '\0' &&
	    !lease_cand_version_ok(c->emulation_version))
		config_errs_add(e, ORIGIN(c, CONFIG_EMULATION_VERSION),
		    "candidacy.emulation_version \"%s\" is not semver, "
		    "MAJOR.MINOR.PATCH (digits, no leading v)", c->emulation_version);
	else if (c->emulation_version[0] != '\0' &&
	    lease_cand_version_ok(c->binary_version) &&
	    lease_cand_version_cmp(c->emulation_version,
	    c->binary_version) > 0)
		config_errs_add(e, ORIGIN(c, CONFIG_EMULATION_VERSION),
		    "candidacy.emulation_version %s is newer than "
		    "binary_version %s; it must not be", c->emulation_version,
		    c->binary_version);
	slash = strchr(c->cle_strategy, '/');
	if (strcmp(c->cle_strategy, "OldestEmulationVersion") != 0 &&
	    (slash == NULL || slash == c->cle_strategy || slash[1] == '\0' ||
	    strchr(slash + 1, '/') != NULL))
		config_errs_add(e, ORIGIN(c, CONFIG_CLE_STRATEGY),
		    "candidacy.strategy \"%s\" is neither "
		    "OldestEmulationVersion nor a qualified name "
		    "(example.com/name)", c->cle_strategy);
	for (p = c->identity; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    *p == '-' || *p == '.')) {
			config_errs_add(e, ORIGIN(c, CONFIG_IDENTITY),
			    "identity \"%s\" cannot name a LeaseCandidate "
			    "(candidacy.coordinated): use lower-case letters, "
			    "digits, '-' and '.' only", c->identity);
			break;
		}
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
	check_watch_timeout(c, &e);
	check_actions(c, &e);
	check_endpoints(c, &e);
	check_candidacy(c, &e);
	check_shards(c, &e);
	check_elections(c, &e);
	check_coordinated(c, &e);
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
