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
metrics_init(struct metrics *m, const char *name, const char *version)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->version, sizeof(m->version), "%s", version);
}

void
metrics_lock(struct metrics *m, const char *type, const char *ns,
    const char *name, const char *identity)
{
	snprintf(m->lock_type, sizeof(m->lock_type), "%s", type);
	snprintf(m->lock_namespace, sizeof(m->lock_namespace), "%s", ns);
	snprintf(m->lock_name, sizeof(m->lock_name), "%s", name);
	snprintf(m->identity, sizeof(m->identity), "%s", identity);
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

/*
 * A sample of metric with labels: the pairs in labels (already
 * formatted, 'verb="get",' with its comma, or "") and then
 * name="ELECTION", m's name, which every series carries.
 */
static void
labelled(struct buf *b, const struct metrics *m, const char *metric,
    const char *labels, const char *value)
{
	buf_printf(b, "%s{%sname=", metric, labels);
	label_value(b, m->name);
	buf_printf(b, "} %s\n", value);
}

/* A sample of a metric whose only label is name="ELECTION". */
static void
named(struct buf *b, const struct metrics *m, const char *metric,
    const char *value)
{
	labelled(b, m, metric, "", value);
}

/* A per-election metric: one sample per election of els[0..n). */
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

/* leaderd_election_info's sample for one election. */
static void
election_info(struct buf *b, const struct metrics *m)
{
	buf_add(b, "leaderd_election_info{lock=", 27);
	label_value(b, m->lock_type);
	buf_add(b, ",lock_namespace=", 16);
	label_value(b, m->lock_namespace);
	buf_add(b, ",lock_name=", 11);
	label_value(b, m->lock_name);
	buf_add(b, ",identity=", 10);
	label_value(b, m->identity);
	buf_add(b, ",name=", 6);
	label_value(b, m->name);
	buf_add(b, "} 1\n", 4);
}

/* The exposition of the elections els[0..n) (n >= 1), m and g. */
static char *
render(const struct metrics *m, const struct metrics_gauges *g,
    const struct metrics_election *els, size_t n, size_t *len)
{
	struct buf	 b = { 0 };
	char		 v[64], l[96];
	uint64_t	 cum;
	size_t		 e;
	int		 i, k;

	head(&b, "leader_election_master_status", "gauge",
	    "Whether this instance leads the lock now (1) or not (0).");
	per_election(&b, els, n, "leader_election_master_status", "%llu",
	    NULL, offsetof(struct metrics_election, master), 0);
	head(&b, "leader_election_slowpath_total", "counter",
	    "Lease writes (acquire or renew) that needed a GET first.");
	per_election(&b, els, n, "leader_election_slowpath_total", "%llu",
	    NULL, offsetof(struct metrics_election, slowpath), 0);

	head(&b, "leaderd_transitions_total", "counter",
	    "Changes of the lease holder this instance observed.");
	per_election(&b, els, n, "leaderd_transitions_total", "%llu", NULL,
	    offsetof(struct metrics_election, transitions), 0);
	head(&b, "leaderd_renew_failures_total", "counter",
	    "Renews of the lease held by this instance that failed.");
	per_election(&b, els, n, "leaderd_renew_failures_total", "%llu", NULL,
	    offsetof(struct metrics_election, renew_failures), 0);

	head(&b, "leaderd_api_requests_total", "counter",
	    "Requests to the Kubernetes API server, by verb and HTTP status "
	    "(error for a transport failure).");
	for (i = 0; i < m->nreqs; i++) {
		if (m->reqs[i].code == 0)
			snprintf(l, sizeof(l), "verb=\"%s\",code=\"error\",",
			    verbs[m->reqs[i].verb]);
		else
			snprintf(l, sizeof(l), "verb=\"%s\",code=\"%ld\",",
			    verbs[m->reqs[i].verb], m->reqs[i].code);
		snprintf(v, sizeof(v), "%llu",
		    (unsigned long long)m->reqs[i].n);
		labelled(&b, m, "leaderd_api_requests_total", l, v);
	}
	if (m->other_reqs > 0) {
		snprintf(v, sizeof(v), "%llu",
		    (unsigned long long)m->other_reqs);
		labelled(&b, m, "leaderd_api_requests_total",
		    "verb=\"other\",code=\"other\",", v);
	}

	head(&b, "leaderd_api_request_duration_seconds", "histogram",
	    "Duration of requests to the Kubernetes API server, by verb "
	    "(a watch lasts as long as its stream).");
	for (k = 0; k < METRICS_NVERBS; k++) {
		if (m->count[k] == 0)
			continue;
		cum = 0;
		for (i = 0; i <= METRICS_NBUCKETS; i++) {
			cum += m->bucket[k][i];
			snprintf(l, sizeof(l), "verb=\"%s\",le=\"%s\",",
			    verbs[k], i < METRICS_NBUCKETS ? bound_names[i] :
			    "+Inf");
			snprintf(v, sizeof(v), "%llu", (unsigned long long)cum);
			labelled(&b, m, "leaderd_api_request_duration_seconds_"
			    "bucket", l, v);
		}
		snprintf(l, sizeof(l), "verb=\"%s\",", verbs[k]);
		snprintf(v, sizeof(v), "%.6f", m->sum[k]);
		labelled(&b, m, "leaderd_api_request_duration_seconds_sum", l,
		    v);
		snprintf(v, sizeof(v), "%llu",
		    (unsigned long long)m->count[k]);
		labelled(&b, m, "leaderd_api_request_duration_seconds_count", l,
		    v);
	}

	head(&b, "leaderd_lease_expires_in_seconds", "gauge",
	    "For the leader, the time left of its claim; for a follower, "
	    "until the observed lease expires by the local clock; 0 if "
	    "unknown.");
	per_election(&b, els, n, "leaderd_lease_expires_in_seconds", NULL,
	    "%.3f", offsetof(struct metrics_election, expires_in_s), 1);
	head(&b, "leaderd_local_api_connections", "gauge",
	    "Open connections to the local API, streams included.");
	snprintf(v, sizeof(v), "%d", g->connections);
	named(&b, m, "leaderd_local_api_connections", v);
	head(&b, "leaderd_events_dropped_total", "counter",
	    "Kubernetes Events dropped unsent because too many were "
	    "waiting.");
	snprintf(v, sizeof(v), "%llu", (unsigned long long)m->events_dropped);
	named(&b, m, "leaderd_events_dropped_total", v);
	head(&b, "leaderd_candidate", "gauge",
	    "Whether this instance is a candidate for the lease now (1) or "
	    "not (0); /leader's candidate_reason says why not.");
	per_election(&b, els, n, "leaderd_candidate", "%llu", NULL,
	    offsetof(struct metrics_election, candidate), 0);
	head(&b, "leaderd_election_info", "gauge",
	    "Always 1; the labels name the lock of the election (its type, "
	    "namespace and name) and this instance's identity.");
	for (e = 0; e < n; e++)
		election_info(&b, els[e].m);
	if (m->app_probe) {
		head(&b, "leaderd_app_probe_total", "counter",
		    "Probes of the application, by result.");
		snprintf(v, sizeof(v), "%llu", (unsigned long long)m->probes[1]);
		labelled(&b, m, "leaderd_app_probe_total",
		    "result=\"success\",", v);
		snprintf(v, sizeof(v), "%llu", (unsigned long long)m->probes[0]);
		labelled(&b, m, "leaderd_app_probe_total",
		    "result=\"failure\",", v);
		head(&b, "leaderd_app_probe_duration_seconds", "histogram",
		    "Duration of the probes of the application.");
		cum = 0;
		for (i = 0; i <= METRICS_NBUCKETS; i++) {
			cum += m->probe_bucket[i];
			snprintf(l, sizeof(l), "le=\"%s\",",
			    i < METRICS_NBUCKETS ? bound_names[i] : "+Inf");
			snprintf(v, sizeof(v), "%llu", (unsigned long long)cum);
			labelled(&b, m, "leaderd_app_probe_duration_seconds_"
			    "bucket", l, v);
		}
		snprintf(v, sizeof(v), "%.6f", m->probe_sum);
		named(&b, m, "leaderd_app_probe_duration_seconds_sum", v);
		snprintf(v, sizeof(v), "%llu", (unsigned long long)cum);
		named(&b, m, "leaderd_app_probe_duration_seconds_count", v);
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
	buf_add(&b, ",name=", 6);
	label_value(&b, m->name);
	buf_add(&b, "} 1\n", 4);
	return buf_steal(&b, len);
}

char *
metrics_render(const struct metrics *m, const struct metrics_gauges *g,
    size_t *len)
{
	struct metrics_election	 one;

	memset(&one, 0, sizeof(one));
	one.m = m;
	one.master = g->master ? 1 : 0;
	one.slowpath = m->slowpath;
	one.transitions = m->transitions;
	one.renew_failures = m->renew_failures;
	one.expires_in_s = g->expires_in_s;
	one.candidate = g->candidate ? 1 : 0;
	return render(m, g, &one, 1, len);
}

char *
metrics_render_elections(const struct metrics *m,
    const struct metrics_gauges *g, const struct metrics_election *els,
    size_t n, size_t *len)
{
	if (n == 0)
		return metrics_render(m, g, len);
	return render(m, g, els, n, len);
}
