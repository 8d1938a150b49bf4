/*
 * metrics.h -- the counters behind GET /metrics and their rendering in
 * the Prometheus text exposition format 0.0.4.
 *
 * Pure: no I/O, no clock, no logging.  daemon_api.c counts (it hears
 * every API answer through kube.c's observer hook and every elector
 * event); daemon_http.c hands the gauges of the moment to
 * metrics_render.
 */

#ifndef METRICS_H
#define METRICS_H

#include <stddef.h>
#include <stdint.h>

#define METRICS_CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

#define METRICS_NVERBS		9	/* get list create update delete
					   watch patch event other */
#define METRICS_NBUCKETS	12	/* client-go's request latency */
#define METRICS_NCODES		32	/* distinct (verb, code) pairs kept */

struct metrics_reqs {
	int		 verb;		/* index into the verb names */
	long		 code;		/* HTTP status; 0 = transport error */
	uint64_t	 n;		/* requests so far */
};

struct metrics {
	char		 name[256];	/* the election's name, the name label */
	char		 version[64];	/* leaderd's version */
	char		 lock_type[32];	/* leases, endpoints, ... (info) */
	char		 lock_namespace[256]; /* the lock object's namespace */
	char		 lock_name[256]; /* the lock object's name */
	char		 identity[256];	/* our holderIdentity */
	uint64_t	 slowpath;	/* writes that needed a GET first */
	uint64_t	 transitions;	/* changes of the observed holder */
	uint64_t	 renew_failures; /* renews that did not succeed */
	struct metrics_reqs reqs[METRICS_NCODES]; /* by verb and code */
	int		 nreqs;		/* entries used in reqs */
	uint64_t	 other_reqs;	/* requests past METRICS_NCODES pairs */
	uint64_t	 bucket[METRICS_NVERBS][METRICS_NBUCKETS + 1];
					/* per verb, per bucket (last: +Inf),
					   not cumulative */
	double		 sum[METRICS_NVERBS];	/* seconds, per verb */
	uint64_t	 count[METRICS_NVERBS];	/* observations, per verb */
	int		 app_probe;	/* an application probe runs */
	uint64_t	 probes[2];	/* its results: failed, succeeded */
	uint64_t	 probe_bucket[METRICS_NBUCKETS + 1]; /* as bucket */
	double		 probe_sum;	/* seconds */
	uint64_t	 elections_won;	/* compat nais: our creates answered */
	uint64_t	 elections_lost; /* compat nais: creates refused 409 */
	uint64_t	 events_dropped; /* Events dropped from a full queue */
};

/* What changes from moment to moment, given at each render. */
struct metrics_gauges {
	int		 master;	/* 1 if this instance leads now */
	double		 expires_in_s;	/* see leaderd_lease_expires_in_s */
	int		 connections;	/* open local API connections */
	int		 candidate;	/* 1 if a candidate for the lease */
};

/*
 * One election's series when there are several (metrics_render_elections):
 * its counters m (m->name is the name label) and its gauges of the
 * moment, as plain numbers.
 */
struct metrics_election {
	const struct metrics *m;	/* its counters and name */
	uint64_t	 master;	/* 1 if this instance leads it now */
	uint64_t	 slowpath;	/* m's, copied */
	uint64_t	 transitions;	/* m's, copied */
	uint64_t	 renew_failures; /* m's, copied */
	double		 expires_in_s;	/* as metrics_gauges' */
	uint64_t	 candidate;	/* 1 if a candidate for it now */
};

/*
 * Zero m and set the election name (the name label) and the version it
 * reports (both copied).
 */
void	metrics_init(struct metrics *m, const char *name,
	    const char *version);

/*
 * Set the lock that leaderd_election_info names: its type ("leases",
 * "endpoints", "configmaps", "endpointsleases", "configmapsleases"),
 * namespace and name, and our identity (all copied).  Until it is
 * called, the info gauge's labels are empty.
 */
void	metrics_lock(struct metrics *m, const char *type, const char *ns,
	    const char *name, const char *identity);

/*
 * Count one API request: verb is "get", "create", "update", "watch",
 * "patch" or "event" (anything else counts as "other"), code the HTTP
 * status or 0 for a transport error, seconds its duration (negative
 * taken as 0).
 */
void	metrics_api_request(struct metrics *m, const char *verb, long code,
	    double seconds);

/* One application probe's result (ok 1 or 0) and its duration. */
void	metrics_app_probe(struct metrics *m, int ok, double seconds);

/*
 * The exposition of m and g, with HELP and TYPE lines for every metric
 * and label values escaped as the format requires (\\, \", \n).  Every
 * leaderd_* and leader_election_* series carries name="ELECTION" (m's
 * name), so that one rule serves one election and several.  The
 * counters of compat nais, elector_elections_won and _lost (nais/
 * elector's names, no labels), appear once they are above 0, as a
 * CounterVec's series does after its first Inc.  The caller frees it;
 * *len is its length.
 */
char	*metrics_render(const struct metrics *m,
	    const struct metrics_gauges *g, size_t *len);

/*
 * The same with several elections, els[0..n) (n >= 1; the first's in
 * m and g too): the per-election series (leader_election_master_status,
 * leader_election_slowpath_total, leaderd_transitions_total,
 * leaderd_renew_failures_total, leaderd_lease_expires_in_seconds,
 * leaderd_candidate, leaderd_election_info) get one sample per
 * election, each labelled name="ELECTION"; the rest (API requests,
 * connections, the probe, the build) are the process's, from m and g,
 * labelled with the first election's name.  With n 1, metrics_render's
 * bytes.
 */
char	*metrics_render_elections(const struct metrics *m,
	    const struct metrics_gauges *g,
	    const struct metrics_election *els, size_t n, size_t *len);

#endif /* METRICS_H */
