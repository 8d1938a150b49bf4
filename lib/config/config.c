/*
 * config.c -- defaults, values, flags and ${ENV} expansion.
 *
 * The key table drives everything: config_yaml.c reads the file into
 * it, config_set sets one key from a flag, config_finish.c fills what is
 * still unset, config_check.c validates and config_dump.c dumps.  Every
 * value carries its origin, for error messages.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/duration.h"
#include "base/mem.h"
#include "base/text.h"
#include "config/config.h"
#include "config/config_int.h"

#define STR(f)	offsetof(struct config, f), sizeof(((struct config *)0)->f)
#define NUM(f)	offsetof(struct config, f), 0

const struct config_keydef config_keys[CONFIG_NKEYS] = {
	{ "identity", CONFIG_IDENTITY, CONFIG_T_STR, STR(identity) },
	{ "lock.type", CONFIG_LOCK_TYPE, CONFIG_T_STR, STR(lock_type) },
	{ "lock.namespace", CONFIG_LOCK_NAMESPACE, CONFIG_T_STR,
	    STR(lock_namespace) },
	{ "lock.name", CONFIG_LOCK_NAME, CONFIG_T_STR, STR(lock_name) },
	{ "lease_duration", CONFIG_LEASE_DURATION, CONFIG_T_DUR,
	    NUM(lease_duration_ms) },
	{ "renew_deadline", CONFIG_RENEW_DEADLINE, CONFIG_T_DUR,
	    NUM(renew_deadline_ms) },
	{ "retry_period", CONFIG_RETRY_PERIOD, CONFIG_T_DUR,
	    NUM(retry_period_ms) },
	{ "release_on_cancel", CONFIG_RELEASE_ON_CANCEL, CONFIG_T_BOOL,
	    NUM(release_on_cancel) },
	{ "listen.http", CONFIG_LISTEN_HTTP, CONFIG_T_STR, STR(listen_http) },
	{ "listen.unix", CONFIG_LISTEN_UNIX, CONFIG_T_STR, STR(listen_unix) },
	{ "listen.max_streams", CONFIG_LISTEN_MAX_STREAMS, CONFIG_T_INT,
	    NUM(listen_max_streams) },
	{ "listen.probes", CONFIG_LISTEN_PROBES, CONFIG_T_STR,
	    STR(listen_probes) },
	{ "kubernetes.kubeconfig", CONFIG_KUBECONFIG, CONFIG_T_STR,
	    STR(kubeconfig) },
	{ "kubernetes.request_timeout", CONFIG_REQUEST_TIMEOUT, CONFIG_T_DUR,
	    NUM(request_timeout_ms) },
	{ "kubernetes.insecure_http", CONFIG_INSECURE_HTTP, CONFIG_T_BOOL,
	    NUM(insecure_http) },
	{ "log.level", CONFIG_LOG_LEVEL, CONFIG_T_STR, STR(log_level) },
	{ "log.format", CONFIG_LOG_FORMAT, CONFIG_T_STR, STR(log_format) },
	{ "readyz.leader_only", CONFIG_READYZ_LEADER_ONLY, CONFIG_T_BOOL,
	    NUM(readyz_leader_only) },
	{ "watch", CONFIG_WATCH, CONFIG_T_BOOL, NUM(watch) },
	{ "kubernetes.watch_timeout", CONFIG_WATCH_TIMEOUT, CONFIG_T_DUR,
	    NUM(watch_timeout_ms) },
	{ "run.grace", CONFIG_RUN_GRACE, CONFIG_T_DUR, NUM(run_grace_ms) },
	{ "run.restart", CONFIG_RUN_RESTART, CONFIG_T_STR, STR(run_restart) },
	{ "actions.label.enabled", CONFIG_LABEL_ENABLED, CONFIG_T_BOOL,
	    NUM(label_enabled) },
	{ "actions.label.key", CONFIG_LABEL_KEY, CONFIG_T_STR, STR(label_key) },
	{ "actions.label.pod", CONFIG_LABEL_POD, CONFIG_T_STR, STR(label_pod) },
	{ "actions.label.namespace", CONFIG_LABEL_NAMESPACE, CONFIG_T_STR,
	    STR(label_namespace) },
	{ "actions.endpoints.service", CONFIG_EP_SERVICE, CONFIG_T_STR,
	    STR(ep_service) },
	{ "actions.endpoints.namespace", CONFIG_EP_NAMESPACE, CONFIG_T_STR,
	    STR(ep_namespace) },
	{ "actions.endpoints.ip", CONFIG_EP_IP, CONFIG_T_STR, STR(ep_ip) },
	{ "actions.endpoints.port", CONFIG_EP_PORT, CONFIG_T_INT,
	    NUM(ep_port) },
	{ "actions.endpoints.port_name", CONFIG_EP_PORT_NAME, CONFIG_T_STR,
	    STR(ep_port_name) },
	{ "actions.endpoints.legacy", CONFIG_EP_LEGACY, CONFIG_T_BOOL,
	    NUM(ep_legacy) },
	{ "actions.endpoints.slice", CONFIG_EP_SLICE, CONFIG_T_BOOL,
	    NUM(ep_slice) },
	{ "actions.endpoints.ports_json", CONFIG_EP_PORTS_JSON, CONFIG_T_STR,
	    STR(ep_ports_json) },
	{ "actions.endpoints.node_name", CONFIG_EP_NODE_NAME, CONFIG_T_STR,
	    STR(ep_node_name) },
	{ "step_down.cooldown", CONFIG_STEP_DOWN_COOLDOWN, CONFIG_T_DUR,
	    NUM(step_down_cooldown_ms) },
	{ "shutdown_timeout", CONFIG_SHUTDOWN_TIMEOUT, CONFIG_T_DUR,
	    NUM(shutdown_timeout_ms) },
	{ "compat", CONFIG_COMPAT, CONFIG_T_STR, STR(compat) },
	{ "candidacy.probe.url", CONFIG_PROBE_URL, CONFIG_T_STR,
	    STR(probe_url) },
	{ "candidacy.probe.period", CONFIG_PROBE_PERIOD, CONFIG_T_DUR,
	    NUM(probe_period_ms) },
	{ "candidacy.probe.timeout", CONFIG_PROBE_TIMEOUT, CONFIG_T_DUR,
	    NUM(probe_timeout_ms) },
	{ "candidacy.probe.failure_threshold", CONFIG_PROBE_FAILURES,
	    CONFIG_T_INT, NUM(probe_failures) },
	{ "candidacy.probe.success_threshold", CONFIG_PROBE_SUCCESSES,
	    CONFIG_T_INT, NUM(probe_successes) },
	{ "candidacy.probe.any_host", CONFIG_PROBE_ANY_HOST, CONFIG_T_BOOL,
	    NUM(probe_any_host) },
	{ "candidacy.cooldown", CONFIG_CANDIDACY_COOLDOWN, CONFIG_T_DUR,
	    NUM(candidacy_cooldown_ms) },
	{ "candidacy.require_client", CONFIG_REQUIRE_CLIENT, CONFIG_T_BOOL,
	    NUM(require_client) },
	{ "candidacy.client_grace", CONFIG_CLIENT_GRACE, CONFIG_T_DUR,
	    NUM(client_grace_ms) },
	{ "listen.metrics", CONFIG_LISTEN_METRICS, CONFIG_T_STR,
	    STR(listen_metrics) },
	{ "candidacy.coordinated", CONFIG_COORDINATED, CONFIG_T_BOOL,
	    NUM(coordinated) },
	{ "candidacy.binary_version", CONFIG_BINARY_VERSION, CONFIG_T_STR,
	    STR(binary_version) },
	{ "candidacy.emulation_version", CONFIG_EMULATION_VERSION,
	    CONFIG_T_STR, STR(emulation_version) },
	{ "candidacy.strategy", CONFIG_CLE_STRATEGY, CONFIG_T_STR,
	    STR(cle_strategy) },
	{ "handover", CONFIG_HANDOVER, CONFIG_T_STR, STR(handover) },
	{ "shards.group", CONFIG_SHARDS_GROUP, CONFIG_T_STR,
	    STR(shards_group) },
	{ "shards.count", CONFIG_SHARDS_COUNT, CONFIG_T_INT,
	    NUM(shards_count) },
	{ "shards.force", CONFIG_SHARDS_FORCE, CONFIG_T_BOOL,
	    NUM(shards_force) },
	{ "shards.on_change", CONFIG_SHARDS_ON_CHANGE, CONFIG_T_STR,
	    STR(shards_on_change) },
};

int
config_shards_on(const struct config *c)
{
	return c->set[CONFIG_SHARDS_GROUP] || c->set[CONFIG_SHARDS_COUNT] ||
	    c->shards_group[0] != '\0' || c->shards_count != 0;
}

double
config_shards_rate(unsigned n, unsigned m, uint64_t retry_ms)
{
	if (retry_ms == 0)
		return 0;
	return (double)(n + m) * 1000.0 / (double)retry_ms;
}

void
config_errs_add(struct config_errs *e, const struct config_origin *o,
    const char *fmt, ...)
{
	va_list	 ap;

	e->n++;
	if (e->used + 1 >= e->len)
		return;
	if (e->used > 0)
		e->buf[e->used++] = '\n';
	if (o == NULL || o->src[0] == '\0')
		text_appendf(e->buf, e->len, &e->used, "leaderd: ");
	else if (o->line == 0)
		text_appendf(e->buf, e->len, &e->used, "%s: ", o->src);
	else
		text_appendf(e->buf, e->len, &e->used, "%s:%d:%d: ", o->src,
		    o->line, o->col);
	va_start(ap, fmt);
	text_vappendf(e->buf, e->len, &e->used, fmt, ap);
	va_end(ap);
}

void
config_origin_set(struct config_origin *o, const char *src, int line, int col)
{
	/* Whole: an origin is copied into a struct config, which mem.h's
	   mem_update compares byte by byte, the bytes after the string too. */
	memset(o->src, 0, sizeof(o->src));
	snprintf(o->src, sizeof(o->src), "%s", src);
	o->line = line;
	o->col = col;
}

const enum config_key config_election_keys[CONFIG_ELECTION_KEYS] = {
	CONFIG_LOCK_TYPE, CONFIG_LOCK_NAMESPACE, CONFIG_LOCK_NAME,
	CONFIG_LEASE_DURATION, CONFIG_RENEW_DEADLINE, CONFIG_RETRY_PERIOD,
	CONFIG_LABEL_KEY
};

void
config_election(const struct config *c, int i, struct config *out)
{
	const struct config_election	*it;
	const struct config_keydef	*k;
	size_t				 j;
	uint64_t			 t;

	/*
	 * Copied where it differs only, so that the zero pages of out (a
	 * fresh allocation, a static) stay off the resident set (mem.h).
	 */
	if (i <= 0 || i > c->nelections) {
		mem_update(out, c, sizeof(*out));
		return;
	}
	/* The items stay behind: an election's copy is small. */
	mem_update(out, c, offsetof(struct config, nelections));
	out->nelections = 0;
	it = &c->elections[i - 1];
	for (j = 0; j < CONFIG_ELECTION_KEYS; j++) {
		if (!it->set[j])
			continue;
		k = &config_keys[config_election_keys[j]];
		memcpy((char *)out + k->off, it->val[j],
		    k->type == CONFIG_T_STR ? k->size : sizeof(uint64_t));
		out->origin[k->key] = it->origin[j];
		out->set[k->key] = 1;
	}
	/* What follows the durations by default follows this election's. */
	if (!c->set[CONFIG_REQUEST_TIMEOUT]) {
		t = out->renew_deadline_ms / 2;
		if (t < 1000)
			t = 1000;
		if (t >= out->renew_deadline_ms)
			t = out->renew_deadline_ms / 2;
		if (t > 0)
			out->request_timeout_ms = t;
	}
	if (!c->set[CONFIG_STEP_DOWN_COOLDOWN])
		out->step_down_cooldown_ms = out->lease_duration_ms;
	if (!c->set[CONFIG_CANDIDACY_COOLDOWN])
		out->candidacy_cooldown_ms = out->lease_duration_ms;
	/* The label is this election's only if the item names its key. */
	out->label_enabled = it->set[CONFIG_EL_LABEL_KEY];
	/* The command and the endpoints follow the first election only. */
	out->ep_service[0] = '\0';
}

const char *
config_election_name(const struct config *c, int i)
{
	if (i <= 0 || i > c->nelections)
		return c->lock_name;
	if (c->elections[i - 1].name[0] == '\0')
		return c->elections[i - 1].val[CONFIG_EL_LOCK_NAME];
	return c->elections[i - 1].name;
}

const struct config_keydef *
config_keydef(const char *path)
{
	size_t	 i;

	for (i = 0; i < CONFIG_NKEYS; i++)
		if (strcmp(config_keys[i].path, path) == 0)
			return &config_keys[i];
	return NULL;
}

void
config_defaults(struct config *c)
{
	/* Most of c stays zero: its pages need not become resident. */
	mem_clear(c, sizeof(*c));
	snprintf(c->lock_type, sizeof(c->lock_type), "leases");
	c->lease_duration_ms = 15000;
	c->renew_deadline_ms = 10000;
	c->retry_period_ms = 2000;
	c->release_on_cancel = 1;
	snprintf(c->listen_http, sizeof(c->listen_http), "localhost:4040");
	c->listen_max_streams = 1024;
	c->request_timeout_ms = 5000;
	c->watch = 1;
	c->watch_timeout_ms = 300000;
	snprintf(c->log_level, sizeof(c->log_level), "info");
	snprintf(c->log_format, sizeof(c->log_format), "text");
	c->run_grace_ms = 10000;
	snprintf(c->run_restart, sizeof(c->run_restart), "never");
	snprintf(c->shards_on_change, sizeof(c->shards_on_change),
	    "restart");
	snprintf(c->label_key, sizeof(c->label_key), "leaderd.io/role");
	c->ep_slice = 1;
	c->shutdown_timeout_ms = 5000;
	c->probe_period_ms = 2000;
	c->probe_timeout_ms = 1000;
	c->probe_failures = 3;
	c->probe_successes = 1;
	snprintf(c->cle_strategy, sizeof(c->cle_strategy),
	    "OldestEmulationVersion");
	snprintf(c->handover, sizeof(c->handover), "none");
}

int
config_expand(const char *s, char *out, size_t outlen, char *why,
    size_t whylen)
{
	const char	*p, *end, *val;
	char		 name[CONFIG_STR_MAX];
	size_t		 o = 0, n, i;

	for (p = s; *p != '\0'; p++) {
		if (*p != '$') {
			if (o + 1 >= outlen)
				goto toolong;
			out[o++] = *p;
			continue;
		}
		if (p[1] == '$') {
			if (o + 1 >= outlen)
				goto toolong;
			out[o++] = '$';
			p++;
			continue;
		}
		if (p[1] != '{') {
			snprintf(why, whylen, "a \"$\" must start ${NAME}; "
			    "write $$ for a literal $");
			return -1;
		}
		if ((end = strchr(p + 2, '}')) == NULL) {
			snprintf(why, whylen, "unterminated \"${\"; write "
			    "${NAME}, or $$ for a literal $");
			return -1;
		}
		n = (size_t)(end - (p + 2));
		for (i = 0; i < n; i++) {
			char ch = p[2 + i];

			if (!(ch == '_' || (ch >= 'A' && ch <= 'Z') ||
			    (ch >= 'a' && ch <= 'z') ||
			    (i > 0 && ch >= '0' && ch <= '9')))
				break;
		}
		if (n == 0 || i < n || n >= sizeof(name)) {
			snprintf(why, whylen, "bad variable reference "
			    "\"%.*s\": a name is letters, digits and _, not "
			    "starting with a digit", (int)(n + 3), p);
			return -1;
		}
		memcpy(name, p + 2, n);
		name[n] = '\0';
		if ((val = getenv(name)) == NULL) {
			snprintf(why, whylen, "environment variable %s is not "
			    "set", name);
			return -1;
		}
		n = strlen(val);
		if (o + n >= outlen)
			goto toolong;
		memcpy(out + o, val, n);
		o += n;
		p = end;
	}
	out[o] = '\0';
	return 0;
toolong:
	snprintf(why, whylen, "value is too long (at most %zu bytes)",
	    outlen - 1);
	return -1;
}

int
config_parse_value(struct config *c, const struct config_keydef *k,
    const char *v, char *why, size_t whylen)
{
	uint64_t	 ms;
	char		 derr[256];
	const char	*p;
	long		 n = 0;

	switch (k->type) {
	case CONFIG_T_STR:
		if (strlen(v) >= k->size) {
			snprintf(why, whylen, "value for %s is too long (at "
			    "most %zu bytes)", k->path, k->size - 1);
			return -1;
		}
		memcpy((char *)c + k->off, v, strlen(v) + 1);
		return 0;
	case CONFIG_T_DUR:
		if (duration_parse(v, &ms, derr, sizeof(derr)) == -1) {
			snprintf(why, whylen, "%s: %s", k->path, derr);
			return -1;
		}
		*(uint64_t *)(void *)((char *)c + k->off) = ms;
		return 0;
	case CONFIG_T_BOOL:
		if (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 ||
		    strcmp(v, "TRUE") == 0)
			*(int *)(void *)((char *)c + k->off) = 1;
		else if (strcmp(v, "false") == 0 || strcmp(v, "False") == 0 ||
		    strcmp(v, "FALSE") == 0)
			*(int *)(void *)((char *)c + k->off) = 0;
		else {
			snprintf(why, whylen, "%s: \"%s\" is not a boolean; "
			    "write true or false", k->path, v);
			return -1;
		}
		return 0;
	case CONFIG_T_INT:
		for (p = v; *p >= '0' && *p <= '9' && n <= 1000000; p++)
			n = n * 10 + (*p - '0');
		if (p == v || *p != '\0' || n > 1000000) {
			snprintf(why, whylen, "%s: \"%s\" is not a count; "
			    "write a whole number such as 64", k->path, v);
			return -1;
		}
		*(int *)(void *)((char *)c + k->off) = (int)n;
		return 0;
	}
	return -1;
}

int
config_set(struct config *c, const char *key, const char *value,
    const char *flag, char *err, size_t errlen)
{
	const struct config_keydef *k;
	char			 why[512];

	if (value == NULL) {
		snprintf(err, errlen, "%s: a value is required", flag);
		return -1;
	}
	if ((k = config_keydef(key)) == NULL) {
		snprintf(err, errlen, "%s: unknown configuration key %s",
		    flag, key);
		return -1;
	}
	if (config_parse_value(c, k, value, why, sizeof(why)) == -1) {
		snprintf(err, errlen, "%s: %s", flag, why);
		return -1;
	}
	config_origin_set(&c->origin[k->key], flag, 0, 0);
	c->set[k->key] = 1;
	return 0;
}

/* What one election's actions may take to stop (config_stop_budget_ms). */
static uint64_t
actions_stop_ms(const struct config *c, int cmd)
{
	uint64_t	 ms = 0;

	if (cmd)
		ms += c->run_grace_ms + 1000;
	if (c->label_enabled)
		ms += 2 * c->request_timeout_ms;
	if (c->ep_service[0] != '\0' && (c->ep_slice || c->ep_legacy))
		ms += 2 * c->request_timeout_ms;
	return ms;
}

uint64_t
config_stop_budget_ms(const struct config *c, int run)
{
	static struct config	 e;
	uint64_t		 ms, act_ms;
	int			 i;

	act_ms = actions_stop_ms(c, run);
	for (i = 1; i <= c->nelections; i++) {
		config_election(c, i, &e);
		if ((ms = actions_stop_ms(&e, 0)) > act_ms)
			act_ms = ms;
	}
	return config_shutdown_ms(c, act_ms);
}
