/*
 * localapi.h -- the local API's routes, answered from the daemon's state.
 * No I/O: httpd parses and sends, daemon keeps the state current.
 *
 * Push: every change of who leads (holder, is_leader, or the daemon
 * starting to stop) bumps an index, which every /leader body carries.
 * The daemon asks localapi_changed after each elector step and when its
 * leadership runs out, and on a change sends localapi_event to the
 * streams (GET /leader/watch, GET /sse) and wakes the blocking reads
 * (GET /leader?wait=30s&index=N).
 */

#ifndef LOCALAPI_H
#define LOCALAPI_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "core/elector.h"
#include "server/httpd.h"

#define LOCALAPI_ROUTES	16	/* route table rows, the end included */

#define LOCALAPI_PROBLEMS	10	/* problem codes (daemon_problem.c) */
#define LOCALAPI_PROBLEM_MAX	768	/* a problem's one-line message */

/* One condition that keeps this instance from leading or working right. */
struct localapi_problem {
	const char	*code;		/* "forbidden", ... (static); NULL:
					   the condition does not hold */
	const char	*severity;	/* "error" or "warning" (static) */
	char		 message[LOCALAPI_PROBLEM_MAX]; /* names the cause */
	int64_t		 since_us;	/* wall clock it began */
};

/* What the daemon shows the local API; fields kept current by daemon/. */
struct localapi_state {
	const struct config	*conf;		/* borrowed */
	const struct elector	*el;		/* borrowed */
	int			 ready;		/* the lock was read once */
	uint64_t		 wake_ms;	/* armed elector wake, 0 = none */
	uint64_t		 req_deadline_ms; /* in-flight request's end, 0 = none */
	uint64_t		 written_ms;	/* last successful write, 0 = none */
	uint64_t		 index;		/* changes so far; 0 = none yet */
	int64_t			 changed_us;	/* wall clock of the last change */
	char			 seen_holder[LEASE_HOLDER_MAX]; /* at index */
	int			 seen_leader;	/* is_leader at index */
	int			 seen_stopping;	/* stopping at index */
	int			 stopping;	/* shutdown began: never "I lead" */
	const char		*not_candidate;	/* why not a candidate (static),
						   or NULL: a candidate */
	const char		*seen_reason;	/* candidate_reason at index */
	int			 owner_read;	/* for life: the Lease's owner,
						   the pod, was read (set-up) */
	int			 peer_has_result; /* a peer's own view of who
						   leads (nais: its result) */
	char			 peer_result[LEASE_HOLDER_MAX]; /* its holder */
	int64_t			 peer_result_us; /* wall clock it changed */
	int			 coordinated;	/* LOCALAPI_COORD_* */
	const char		*coordinated_reason; /* why 0 (static) */
	struct httpd_route	 routes[LOCALAPI_ROUTES]; /* localapi_routes */
	const char		*election;	/* its name (borrowed), carried
						   in /leader's body */
	int			 channel;	/* its streams' broadcast: 0 for
						   the first (/leader/watch) */
	char			 paths[3][CONFIG_STR_MAX + 24]; /* /leader/NAME,
						   its watch and release */
	struct localapi_state	**all;		/* every election's, the first
						   first (GET /leaders), or
						   NULL: this one alone */
	size_t			 nall;		/* how many */
	struct localapi_problem	 problems[LOCALAPI_PROBLEMS]; /* by order
						   of importance, the first
						   that holds shown first */
	int64_t			 confirmed_us;	/* wall clock the record was
						   last confirmed from the
						   API; 0 = never */
	uint64_t		 confirmed_ms;	/* the same, monotonic */
};

#define LOCALAPI_COORD_NONE	0	/* not asked for */
#define LOCALAPI_COORD_OFF	1	/* asked for, not working (reason) */
#define LOCALAPI_COORD_ON	2	/* the LeaseCandidate is kept */

#define LOCALAPI_WAIT_MAX_MS	300000	/* longest blocking read (5m) */
#define LOCALAPI_PING		": keep-alive\n\n"	/* stream comment */
#define LOCALAPI_PEER_CHANNEL	1	/* the streams of a peer's own shape */
#define LOCALAPI_ALL_CHANNEL	2	/* GET /leaders/watch: every election */
#define LOCALAPI_ELECTION_CHANNEL 16	/* + index: an election's streams
					   but the first's (channel 0) */

/*
 * Why the daemon is unhealthy at now_ms, in why (len bytes), or NULL:
 * the loop has stalled (a timer or request far past its time), or we
 * hold the lease but have not renewed it within lease_duration
 * (client-go's HealthzAdaptor, 2.8; never for a lease held for life,
 * which is not renewed).  GET /healthz answers it.
 */
const char *localapi_unhealthy(const struct localapi_state *st,
	    uint64_t now_ms, char *why, size_t len);

/*
 * The most important problem that holds (problems[] in order), or NULL.
 */
const struct localapi_problem *localapi_problem_top(
	    const struct localapi_state *st);

/*
 * Whether who leads, as /leader would say at monotonic time now_ms
 * (holder, is_leader, and whether the daemon is stopping), differs from
 * what st last saw.  On a change, or on the first call, bump st->index,
 * note wall_us as the change's time and return 1; else return 0.
 */
int	localapi_changed(struct localapi_state *st, uint64_t now_ms,
	    int64_t wall_us);

/*
 * The server-sent event for the state at now_ms: "data: " and the /leader
 * JSON body on one line, then an empty line.  The caller frees it; *len
 * is its length.
 */
char	*localapi_event(const struct localapi_state *st, uint64_t now_ms,
	    size_t *len);

/*
 * After each elector step: let the selected peer update its own view of
 * who leads (st->peer_*) at now_ms and wall_us, and return the event its
 * own streams (LOCALAPI_PEER_CHANNEL: GET /sse under compat nais) get if
 * that view changed, else NULL.  The caller frees it; *len is its
 * length.
 */
char	*localapi_peer_event(struct localapi_state *st, uint64_t now_ms,
	    int64_t wall_us, size_t *len);

/*
 * Read "wait" and "index" from a /leader query string (other keys are
 * ignored).  *blocking is 1 when an index is given: then *index is it
 * and *wait_ms the wait (LOCALAPI_WAIT_MAX_MS if none, capped at it).
 * Returns 0, or -1 with the reason in err for a malformed value or a
 * key given twice.
 */
int	localapi_parse_wait(const char *query, int *blocking,
	    uint64_t *wait_ms, uint64_t *index, char *err, size_t errlen);

/*
 * The local API's route table, in st->routes (returned; for httpd_new).
 * GET or HEAD, answered from st at the reply's now_ms: /leader
 * (blocking with wait and index; 400 for a bad one; every answer
 * carries X-Leaderd-Index), the streams /leader/watch and /sse, / (who
 * leads), and, also on the probes listener, /healthz and /readyz
 * (?leader=true: 503 unless leading, whatever readyz.leader_only says).
 * The daemon's: GET or HEAD /metrics, also on the probes listener,
 * answered by metrics; POST /leader/release, on the unix socket and
 * loopback listeners only, by release; POST /leader/pause and
 * /leader/resume, there only too, by pause; all with arg.  With compat, the
 * peer answers / as it does (peers.h), by any method, and for the peers
 * that answer every path alike, every path leaderd does not serve (for
 * await, every path: leaderd's own routes are then not served); a peer
 * with routes of its own (nais: /sse, and /healthz, /readyz and their
 * sub-paths as controller-runtime answers them) has them replace
 * leaderd's of the same path.  /metrics is served on the metrics
 * listener too.
 */
const struct httpd_route *localapi_routes(struct localapi_state *st,
	    httpd_handler_cb metrics, httpd_handler_cb release,
	    httpd_handler_cb pause, void *arg);

/*
 * The local API's table with every election's routes, for httpd_new:
 * sts[0..n) the elections' states (sts[0] the first, whose routes
 * localapi_routes filled), release the handler of POST
 * /leader/NAME/release with args[i] for election i.  Added to the first's
 * table: GET /leader/NAME (the /leader body of that election, blocking
 * with wait and index as /leader), GET /leader/NAME/watch (its stream,
 * on st->channel), POST /leader/NAME/release (local only), GET /leaders
 * (a JSON object, election name to its /leader body, in the config's
 * order) and GET /leaders/watch (every election's events, on
 * LOCALAPI_ALL_CHANNEL).  Under compat none is added (a peer's paths
 * are its own).  Sets each state's all and nall.  The caller frees the
 * table (free) after httpd_free.
 */
struct httpd_route *localapi_routes_elections(struct localapi_state **sts,
	    size_t n, httpd_handler_cb release, void *const *args);

#endif /* LOCALAPI_H */
