/*
 * metrics.c -- Prometheus counters and their text exposition (format
 * 0.0.4).  See metrics.h.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/version.h"
#include "server/metrics.h"

static const char *const verbs[METRICS_NVERBS] = {
	"get", "list", "create", "update", "delete", "watch", "patch",
	"event", "other"
};

/* Upper bounds, as client-go's rest_client_request_duration_seconds. */
static const double bounds[METRICS_NBUCKETS] = {
	0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60
};
static const char *const bound_names[METRICS_NBUCKETS] = {
	"0.005", "0.025", "0.1", "0.25", "0.5", "1", "2", "4", "8", "15",
	"30", "60"
};

void
metrics_init(struct metrics *m, const char *lock_name, const char *version)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", lock_name);
	snprintf(m->version, sizeof(m->version), "%s", version);
}

static int
verb_index(const char *verb)
{
	int	 i;

	for (i = 0; i < METRICS_NVERBS - 1; i++)
		if (strcmp(verbs[i], verb) == 0)
			return i;
	return METRICS_NVERBS - 1;
}

void
metrics_api_request(struct metrics *m, const char *verb, long code,
    double seconds)
{
	int	 v = verb_index(verb), i, b;

	if (code < 0 || code > 999)
		code = 0;
	for (i = 0; i < m->nreqs; i++)
		if (m->reqs[i].verb == v && m->reqs[i].code == code)
			break;
	if (i == m->nreqs) {
		if (m->nreqs < METRICS_NCODES) {
			m->reqs[i].verb = v;
			m->reqs[i].code = code;
			m->nreqs++;
		} else
			i = -1;
	}
	if (i >= 0)
		m->reqs[i].n++;
	else
		m->other_reqs++;
	if (!(seconds > 0))
		seconds = 0;
	for (b = 0; b < METRICS_NBUCKETS && seconds > bounds[b]; b++)
		;
	m->bucket[v][b]++;
	m->sum[v] += seconds;
	m->count[v]++;
}

void
metrics_app_probe(struct metrics *m, int ok, double seconds)
{
	int	 b;

	m->probes[ok != 0]++;
	if (!(seconds > 0))
		seconds = 0;
	for (b = 0; b < METRICS_NBUCKETS && seconds > bounds[b]; b++)
		;
	m->probe_bucket[b]++;
	m->probe_sum += seconds;
}

/* A label value, escaped: backslash, double quote and newline. */
static void
label_value(struct buf *b, const char *s)
{
	buf_add(b, "\"", 1);
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			buf_add(b, "\\\\", 2);
		else if (*s == '"')
			buf_add(b, "\\\"", 2);
		else if (*s == '\n')
			buf_add(b, "\\n", 2);
		else
			buf_add(b, s, 1);
	}
	buf_add(b, "\"", 1);
}

static void
head(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A sample of a metric whose only label is name="LOCK". */
static void
named(struct buf *b, const struct metrics *m, const char *metric,
    const char *value)
{
	buf_printf(b, "%s{name=", metric);
	label_value(b, m->name);
	buf_printf(b, "} %s\n", value);
}

/*
 * A sample of a per-election metric that has no label with one
 * election: with several (els non-NULL), one sample per election, each
 * with name="ELECTION".
 */
static void
per_election(struct buf *b, const struct metrics_election *els, size_t n,
    const char *metric, const char *fmt_u, const char *fmt_d, size_t field,
    int is_double)
{
	size_t	 i;
	char	 v[64];

	for (i = 0; i < n; i++) {
		const char	*base = (const char *)&els[i];

		if (is_double)
			snprintf(v, sizeof(v), fmt_d, *(const double *)(const
			    void *)(base + field) > 0 ? *(const double *)(const
			    void *)(base + field) : 0.0);
		else
			snprintf(v, sizeof(v), fmt_u, (unsigned long long)
			    *(const uint64_t *)(const void *)(base + field));
		named(b, els[i].m, metric, v);
	}
}

/*
 * The exposition; els (n of them) when there are several elections,
 * else NULL and m and g alone.
 */
static char *
render(const struct metrics *m, const struct metrics_gauges *g,
    const struct metrics_election *els, size_t n, size_t *len)
{
	struct buf	 b = { 0 };
	char		 v[64];
	uint64_t	 cum;
	int		 i, k;

	head(&b, "leader_election_master_status", "gauge",
	    "Whether this instance leads the lock now (1) or not (0).");
	if (els != NULL)
		per_election(&b, els, n, "leader_election_master_status",
		    "%llu", NULL, offsetof(struct metrics_election, master),
		    0);
	else
		named(&b, m, "leader_election_master_status",
		    g->master ? "1" : "0");
	head(&b, "leader_election_slowpath_total", "counter",
	    "Lease writes (acquire or renew) that needed a GET first.");
	snprintf(v, sizeof(v), "%llu", (unsigned long long)m->slowpath);
	if (els != NULL)
		per_election(&b, els, n, "leader_election_slowpath_total",
		    "%llu", NULL, offsetof(struct metrics_election, slowpath),
		    0);
	else
		named(&b, m, "leader_election_slowpath_total", v);

	head(&b, "leaderd_transitions_total", "counter",
	    "Changes of the lease holder this instance observed.");
	if (els != NULL)
		per_election(&b, els, n, "leaderd_transitions_total", "%llu",
		    NULL, offsetof(struct metrics_election, transitions), 0);
	else
		buf_printf(&b, "leaderd_transitions_total %llu\n",
		    (unsigned long long)m->transitions);
	head(&b, "leaderd_renew_failures_total", "counter",
	    "Renews of the lease held by this instance that failed.");
	if (els != NULL)
		per_election(&b, els, n, "leaderd_renew_failures_total",
		    "%llu", NULL, offsetof(struct metrics_election,
		    renew_failures), 0);
	else
		buf_printf(&b, "leaderd_renew_failures_total %llu\n",
		    (unsigned long long)m->renew_failures);

	head(&b, "leaderd_api_requests_total", "counter",
	    "Requests to the Kubernetes API server, by verb and HTTP status "
	    "(error for a transport failure).");
	for (i = 0; i < m->nreqs; i++) {
		if (m->reqs[i].code == 0)
			snprintf(v, sizeof(v), "error");
		else
			snprintf(v, sizeof(v), "%ld", m->reqs[i].code);
		buf_printf(&b, "leaderd_api_requests_total{verb=\"%s\","
		    "code=\"%s\"} %llu\n", verbs[m->reqs[i].verb], v,
		    (unsigned long long)m->reqs[i].n);
	}
	if (m->other_reqs > 0)
		buf_printf(&b, "leaderd_api_requests_total{verb=\"other\","
		    "code=\"other\"} %llu\n",
		    (unsigned long long)m->other_reqs);

	head(&b, "leaderd_api_request_duration_seconds", "histogram",
	    "Duration of requests to the Kubernetes API server, by verb "
	    "(a watch lasts as long as its stream).");
	for (k = 0; k < METRICS_NVERBS; k++) {
		if (m->count[k] == 0)
			continue;
		cum = 0;
		for (i = 0; i <= METRICS_NBUCKETS; i++) {
			cum += m->bucket[k][i];
			buf_printf(&b, "leaderd_api_request_duration_seconds_"
			    "bucket{verb=\"%s\",le=\"%s\"} %llu\n", verbs[k],
			    i < METRICS_NBUCKETS ? bound_names[i] : "+Inf",
			    (unsigned long long)cum);
		}
		buf_printf(&b, "leaderd_api_request_duration_seconds_sum"
		    "{verb=\"%s\"} %.6f\n", verbs[k], m->sum[k]);
		buf_printf(&b, "leaderd_api_request_duration_seconds_count"
		    "{verb=\"%s\"} %llu\n", verbs[k],
		    (unsigned long long)m->count[k]);
	}

	head(&b, "leaderd_lease_expires_in_seconds", "gauge",
	    "For the leader, the time left of its claim; for a follower, "
	    "until the observed lease expires by the local clock; 0 if "
	    "unknown.");
	if (els != NULL)
		per_election(&b, els, n, "leaderd_lease_expires_in_seconds",
		    NULL, "%.3f", offsetof(struct metrics_election,
		    expires_in_s), 1);
	else
		buf_printf(&b, "leaderd_lease_expires_in_seconds %.3f\n",
		    g->expires_in_s > 0 ? g->expires_in_s : 0.0);
	head(&b, "leaderd_local_api_connections", "gauge",
	    "Open connections to the local API, streams included.");
	buf_printf(&b, "leaderd_local_api_connections %d\n", g->connections);
	head(&b, "leaderd_events_dropped_total", "counter",
	    "Kubernetes Events dropped unsent because too many were "
	    "waiting.");
	buf_printf(&b, "leaderd_events_dropped_total %llu\n",
	    (unsigned long long)m->events_dropped);
	head(&b, "leaderd_candidate", "gauge",
	    "Whether this instance is a candidate for the lease now (1) or "
	    "not (0); /leader's candidate_reason says why not.");
	if (els != NULL)
		per_election(&b, els, n, "leaderd_candidate", "%llu", NULL,
		    offsetof(struct metrics_election, candidate), 0);
	else
		buf_printf(&b, "leaderd_candidate %d\n", g->candidate);
	if (m->app_probe) {
		head(&b, "leaderd_app_probe_total", "counter",
		    "Probes of the application, by result.");
		buf_printf(&b, "leaderd_app_probe_total{result=\"success\"} "
		    "%llu\n", (unsigned long long)m->probes[1]);
		buf_printf(&b, "leaderd_app_probe_total{result=\"failure\"} "
		    "%llu\n", (unsigned long long)m->probes[0]);
		head(&b, "leaderd_app_probe_duration_seconds", "histogram",
		    "Duration of the probes of the application.");
		cum = 0;
		for (i = 0; i <= METRICS_NBUCKETS; i++) {
			cum += m->probe_bucket[i];
			buf_printf(&b, "leaderd_app_probe_duration_seconds_"
			    "bucket{le=\"%s\"} %llu\n", i < METRICS_NBUCKETS ?
			    bound_names[i] : "+Inf", (unsigned long long)cum);
		}
		buf_printf(&b, "leaderd_app_probe_duration_seconds_sum %.6f\n",
		    m->probe_sum);
		buf_printf(&b, "leaderd_app_probe_duration_seconds_count "
		    "%llu\n", (unsigned long long)cum);
	}
	/* nais/elector's (pkg/metrics/metrics.go), once counted. */
	if (m->elections_won > 0) {
		head(&b, "elector_elections_won", "counter",
		    "Elections won: creates of the Lease that succeeded.");
		buf_printf(&b, "elector_elections_won %llu\n",
		    (unsigned long long)m->elections_won);
	}
	if (m->elections_lost > 0) {
		head(&b, "elector_elections_lost", "counter",
		    "Elections lost: creates of the Lease that found it "
		    "there.");
		buf_printf(&b, "elector_elections_lost %llu\n",
		    (unsigned long long)m->elections_lost);
	}
	head(&b, "leaderd_build_info", "gauge",
	    "Always 1; the labels are leaderd's version and the source "
	    "revision it was built from.");
	buf_add(&b, "leaderd_build_info{version=", 27);
	label_value(&b, m->version);
	buf_add(&b, ",revision=", 10);
	label_value(&b, version_revision());
	buf_add(&b, "} 1\n", 4);
	return buf_steal(&b, len);
}

char *
metrics_render(const struct metrics *m, const struct metrics_gauges *g,
    size_t *len)
{
	return render(m, g, NULL, 0, len);
}

char *
metrics_render_elections(const struct metrics *m,
    const struct metrics_gauges *g, const struct metrics_election *els,
    size_t n, size_t *len)
{
	return render(m, g, n > 1 ? els : NULL, n, len);
}
