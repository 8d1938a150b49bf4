/*
 * daemon_int.h -- what the files of daemon/ share; not for other modules.
 *
 * daemon.c owns the loop: the elector's steps, the wake and lead-end
 * timers; daemon_setup.c sets up what the loop drives, daemon_stop.c
 * stops it on a signal.  daemon_api.c turns API answers and the watch
 * into elector inputs, and the elector's events into log lines, Events
 * and counters.  daemon_http.c answers the local API's routes that need
 * the daemon: GET /metrics and POST /leader/release.  daemon_gate.c,
 * daemon_cand.c and daemon_shards*.c are candidacy, coordinated election
 * and a shard group.
 */

#ifndef DAEMON_INT_H
#define DAEMON_INT_H

#include <stdint.h>
#include <ev.h>

#include "actions/actions.h"
#include "api/curlev.h"
#include "api/kube.h"
#include "api/lock.h"
#include "api/token.h"
#include "api/watch.h"
#include "base/fifo.h"
#include "codec/lease.h"
#include "codec/leasecand.h"
#include "config/config.h"
#include "actions/appprobe.h"
#include "core/elector.h"
#include "core/gate.h"
#include "server/httpd.h"
#include "server/localapi.h"
#include "server/metrics.h"

/*
 * While the watch is healthy a follower still reads the Lease this often,
 * as a safety net against a stream that looks open but delivers nothing
 * (docs/operations.md "Watching the Lease").
 */
#define WATCH_POLL_MS	60000

/*
 * The Events waiting for the shared Events client: enough for every
 * election of a config to win and lose at once a few times over; past
 * it the oldest is dropped (leaderd_events_dropped_total).
 */
#define DAEMON_EVENTS_MAX	32

struct election;

/* One Event waiting to be sent (daemon_api.c's queue). */
struct daemon_event {
	struct election		*e;		/* about its lock */
	int64_t			 at_us;		/* wall clock when it happened */
	const char		*reason;	/* a Warning's (static), or NULL:
						   "LeaderElection" on the lock */
	char			 msg[CONFIG_STR_MAX + LOCALAPI_PROBLEM_MAX];
						/* "<id> <what>", a Warning's
						   message */
};

/*
 * The problems daemon_problem.c finds, in order of importance (the order
 * of /leader's "problems", docs/api.md "Problems"): index into
 * struct localapi_state's problems.
 */
enum problem_code {
	PROBLEM_UNAUTHORIZED,		/* 401 on a request */
	PROBLEM_FORBIDDEN,		/* 403 on a request */
	PROBLEM_UNREACHABLE,		/* no answer, or 5xx, 429 */
	PROBLEM_DUPLICATE_IDENTITY,	/* our identity renewed by another */
	PROBLEM_SPLIT_LOCK,		/* an old-style lock of the same name */
	PROBLEM_FOREIGN_LONG_LEASE,	/* a silent holder asking far more */
	PROBLEM_NOT_CANDIDATE,		/* the gate, or the cooldown */
	PROBLEM_WATCH_DOWN,		/* following by polling */
	PROBLEM_CLOCK_SKEW,		/* off the API server's Date */
	PROBLEM_LOCK_NAMESPACE,		/* not the pod's namespace */
	PROBLEM_N
};

/* What daemon_problem.c keeps of one election, beside st.problems. */
struct election_problems {
	uint64_t	 said_ms[PROBLEM_N];	/* its warning last logged */
	int		 said[PROBLEM_N];	/* logged since it began: its
						   clearing is said too */
	uint64_t	 since_ms[PROBLEM_N];	/* it began, monotonic */
	uint64_t	 event_ms[PROBLEM_N];	/* its Event last queued */
	int		 api_code[4];		/* by request kind (0: Events),
						   the last failure's
						   PROBLEM_*, or -1 */
	char		 api_msg[4][LOCALAPI_PROBLEM_MAX]; /* its message */
	int64_t		 self_renew_us;		/* renewTime of the last record
						   naming us that was not ours */
	int		 self_renews;		/* such renewTimes that changed */
	char		 holder[LEASE_HOLDER_MAX]; /* the foreign holder */
	int64_t		 holder_renew_us;	/* its last renewTime */
	uint64_t	 holder_since_ms;	/* when that was first seen */
	uint64_t	 watch_down_ms;		/* the watch went down; 0: up */
	int		 watch_up;		/* as its health callback last said */
	uint64_t	 split_next_ms;		/* next old-style lock check */
};

struct daemon;
struct shards;
struct buf;

/* GET /shards/watch's broadcast (httpd_stream_send_on). */
#define DAEMON_SHARDS_CHANNEL	8

/*
 * One election: its elector, its lock and watch, what the local API
 * shows of it, its step-down, and its label.  The first (index 0) is
 * the top level's; the others are the config's elections: items.  What
 * is not here is shared (struct daemon).
 */
struct election {
	struct daemon		*d;		/* the daemon it is part of */
	int			 idx;		/* 0: the first */
	const struct config	*conf;		/* its effective configuration
						   (config_election) */
	struct config		*own;		/* conf when not the first;
						   freed with it */
	struct elector		 el;
	struct kube		*kube;		/* its requests: one at a time,
						   so a stalled renew here never
						   holds another's release */
	struct watch		*watch;		/* the Lease watch, or NULL */
	struct lease		 pend_rec;	/* watched while a request ran */
	char			*pend_obj;	/* its object; NULL = none */
	int			 pend_reread;	/* a DELETED or 410 came then */
	int			 watch_started;	/* after the first read */
	struct lock		*lk;		/* the lock objects, over kube */
	int			 warned;	/* an API Warning was logged */
	ev_timer		 wake;		/* the elector's wake time */
	ev_timer		 lead_end;	/* re-check is_leader at its end */
	struct localapi_state	 st;		/* what the local API reports */
	enum elector_action_kind req;		/* request in flight */
	char			 lock[2 * CONFIG_STR_MAX + 34]; /* "ns/name",
						    "type/ns/name" */
	int			 unreleased_said; /* daemon_say_unreleased */
	char			 api_err[4][768]; /* last error logged, by
						    request kind; 0: Events */
	int			 released;	/* the release was written */
	struct actions		*act;		/* the first's: command, label,
						   endpoints; the others':
						   their label, or NULL */
	struct metrics		 metrics;	/* its counters; the first's
						   also the shared ones */
	int			 prev_get;	/* the last answer was a GET's */
	int			 req_renew;	/* the request renews our lease */
	int			 release_state;	/* RELEASE_* of POST /leader/release */
	int			 release_holding; /* run mode: waiting for the
						   command to go first */
	char			 handover_to[LEASE_HOLDER_MAX]; /* its to=, or "" */
	int			 cand;		/* candidacy as the elector has it */
	int			 cand_in;	/* CANDIDACY input: on or off */
	uint64_t		 cand_cooldown_ms; /* and its cooldown */
	const char		*cand_lost;	/* the gate's reason for the loss
						   being reported, or NULL */
	struct election_problems pr;		/* daemon_problem.c's */
};

struct daemon {
	struct ev_loop		*loop;
	const struct config	*conf;		/* the top level: the first
						   election's, and what all
						   share */
	struct election		*el;		/* el[0] the first */
	int			 resume_fd;	/* the claims' alarm, a timerfd on
						   CLOCK_BOOTTIME, or -1 */
	ev_io			 resume_io;
	uint64_t		 resume_at_ms;	/* when it is armed for, or 0 */
	int			 nel;		/* elections, 1 or more */
	struct curlev		*cv;		/* one connection pool */
	struct token		*token;		/* shared by every client */
	struct kube		*events;	/* a client for Events, shared */
	struct httpd		*httpd;
	struct httpd_route	*routes;	/* the local API's table */
	ev_timer		 hard_stop;	/* exit even if the API hangs */
	ev_signal		 sigterm;
	ev_signal		 sigint;
	ev_signal		 sighup;
	int			 stopping;	/* a signal arrived */
	uint64_t		 stop_until_ms;	/* the shutdown budget ends */
	char *const		*cmd;		/* run mode's command, or NULL */
	struct gate		 gate;		/* candidacy (core/gate.h), for
						   every election */
	struct appprobe		*probe;		/* the application's, or NULL */
	enum gate_reason	 reason;	/* the verdict last applied */
	int			 holding;	/* run mode: the command goes first */
	ev_timer		 gate_timer;	/* client grace; streams changed */
	int			 for_life;	/* the lock is held for life
						   (compat nais, elector.h) */
	ev_timer		 owner_retry;	/* for life: next pod read */
	int			 owner_hint;	/* its 404's hint was logged */
	/* Coordinated election (daemon_cand.c), of the first election. */
	struct kube		*ck;		/* the candidate's client, or
						   NULL */
	ev_timer		 cand_timer;	/* its next request */
	int			 cand_on;	/* the candidate is kept */
	int			 cand_req;	/* its request in flight */
	int			 cand_next;	/* the one the timer sends */
	int			 cand_fails;	/* failures in a row (backoff) */
	uint64_t		 cand_renew_ms;	/* renew by then anyway */
	uint64_t		 cand_list_ms;	/* no list before then */
	int			 cand_list_fails; /* lists failed in a row */
	struct lease_cand	 mine;		/* ours, as last read */
	struct lease_cand	 pick;		/* handover: auto's, as listed */
	int			 has_pick;	/* pick is set */
	size_t			 cand_skipped;	/* our Lease's items the last
						   list could not decode */
	char			 cand_err[512];	/* last failure logged */
	char			 cand_reason[560]; /* coordinated_reason's text */
	int			 exit_wait;	/* stopped: exit once the
						   candidate is deleted */
	char			 auto_to[LEASE_HOLDER_MAX]; /* handover: auto's
						   pick at the signal, or "" */
	struct shards		*sh;		/* the shard group, or NULL */
	struct localapi_state	**sts;		/* every election's, for the
						   local API's table */
	int			 ngate;		/* elections the gate drives:
						   all but a group's shards */
	struct fifo		 evq;		/* Events waiting for events,
						   over evq_slots */
	struct daemon_event	 evq_slots[DAEMON_EVENTS_MAX];
	int			 evq_warned;	/* a drop was logged */
	char			 probe_why[256]; /* the app probe's last
						   failure */
	/* daemon_problem.c */
	ev_timer		 problem_timer;	/* reminders, watch, stale */
	struct kube		*side;		/* the old-style lock checks'
						   client, or NULL */
	int			 side_el;	/* election checked, or -1 */
	int			 side_step;	/* its request: 0 first, 1 next */
	char			 pod_name[CONFIG_STR_MAX]; /* "": unknown */
	char			 pod_ns[CONFIG_STR_MAX];   /* "": unknown */
};

#define RELEASE_NONE	0	/* no step-down asked, or answered */
#define RELEASE_PENDING	1	/* stepped down; release not written yet */
#define RELEASE_DONE	2	/* the release was written */
#define RELEASE_MOOT	3	/* another holder wrote first */

/* daemon.c */

/*
 * Feed one input to the elector (rec: the record it carries, or NULL)
 * and carry out its actions, until one is a request under way or none.
 */
void	daemon_step(struct election *e, enum elector_input_kind kind,
	    const struct lease *rec);

/*
 * Push a change of who leads to the local API's clients (streams and
 * blocking reads) and keep the lead-end timer at the end of our claim.
 */
void	daemon_notify_local(struct election *e);

/* daemon_setup.c */

/*
 * Set up the shared parts, every election, the LeaseCandidate, a shard
 * group's list, the local API and candidacy.  Returns 0, or -1 logged.
 */
int	daemon_setup(struct daemon *d, const struct config *c,
	    const struct kube_creds *creds);

/* daemon_stop.c */

/* SIGTERM and SIGINT stop the daemon, a second one exits; SIGHUP: no. */
void	daemon_signal_cb(struct ev_loop *loop, ev_signal *w, int revents);

/* The shutdown budget is spent: say what did not finish, and exit. */
void	daemon_hard_stop_cb(struct ev_loop *loop, ev_timer *w, int revents);

/* The command ended leaderd (run.restart never): stop as on SIGTERM. */
void	daemon_command_quit_cb(void *arg);

/* daemon_api.c */

/* Start the request an action names; -1 if it could not be started. */
int	daemon_send_request(struct election *e,
	    const struct elector_action *act);

/*
 * The elector's events (ELECTOR_EV_*) of one step: log lines, Events,
 * counters, readiness and the state of a step-down.
 */
void	daemon_log_events(struct election *e, unsigned ev);

/*
 * For life: read the pod, the Lease's owner (lock_owner_get), then start
 * the election; after a failure, again a retry_period later.
 */
void	daemon_owner_read(struct daemon *d);

/* kube_set_observer's callback, for every client: the request metrics. */
void	daemon_api_observe_cb(const char *verb, long status, double seconds,
	    void *arg);

/* The Lease watch's callbacks (struct watch_cbs); arg is the election. */
void	daemon_watch_record_cb(const struct lease *rec, char *obj, void *arg);
void	daemon_watch_reread_cb(void *arg);
void	daemon_watch_health_cb(int healthy, void *arg);

/* daemon_gate.c */

/*
 * Candidacy: set up the gate and the application probe and tell the
 * elector where it starts (not a candidate before the first probe
 * result, or without a client when one is required).  Returns 0, or -1
 * logged.
 */
int	daemon_gate_setup(struct daemon *d);

/* Stop probing and free the probe. */
void	daemon_gate_free(struct daemon *d);

/* POST /leader/pause and /leader/resume (httpd_handler_cb); arg: daemon. */
void	daemon_pause_reply(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/* daemon_problem.c: what keeps an instance from leading, said */

/*
 * Set up: the pod's name and namespace, the lock namespace check, the
 * old-style lock checks' client, the reminders' timer.  Returns 0, or
 * -1 logged.
 */
int	daemon_problem_setup(struct daemon *d, const struct kube_creds *creds,
	    const char *ua);
void	daemon_problem_free(struct daemon *d);

/* Every API answer of election e (slot: the request kind, 0: Events). */
void	daemon_problem_api(struct election *e, int slot,
	    const struct kube_result *res);

/* After each elector step: the record observed, the gate's verdict. */
void	daemon_problem_step(struct election *e);

/* The watch went up or down. */
void	daemon_problem_watch(struct election *e, int healthy);

/*
 * Problem c (PROBLEM_*) of e holds, with the message msg: logged and
 * its Warning Event queued when it begins; a message that changes while
 * it holds is shown at once and said at the next reminder.
 */
void	daemon_problem_set(struct election *e, int c, const char *msg);

/* Problem c of e no longer holds: one line if it did. */
void	daemon_problem_clear(struct election *e, int c);

/* us as RFC 3339 at second precision ("2026-12-05T07:00:00Z"). */
void	daemon_problem_time(int64_t us, char *buf);

/* daemon_split.c: start the next old-style lock check due, if none runs. */
void	daemon_split_due(struct daemon *d, uint64_t now_ms);

/*
 * Queue an Event (daemon_api.c): reason NULL for "<identity> what"
 * (Normal, LeaderElection, on the lock), else a Warning with that
 * reason and message what, on the pod when its name is known.
 */
void	daemon_record_event(struct election *e, const char *reason,
	    const char *what);

/*
 * Send the queued Warning ev through d->events, as lock_record_event
 * sends the others.  Returns 0, or -1 (done_cb will not run).
 */
int	daemon_problem_event(struct daemon *d, const struct daemon_event *ev,
	    kube_done_cb done_cb);

/* daemon_http.c */

/* GET /metrics (httpd_handler_cb); arg is the daemon. */
void	daemon_metrics_reply(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/*
 * POST /leader/release and /leader/NAME/release (httpd_handler_cb); arg
 * is the election.
 */
void	daemon_release_reply(const struct http_request *req,
	    struct httpd_reply *reply, void *arg);

/* daemon_cand.c */

/*
 * Coordinated election: create the LeaseCandidate and keep it (above the
 * file).  Nothing without candidacy.coordinated.  Returns 0, or -1 logged.
 */
int	daemon_cand_setup(struct daemon *d, const struct kube_creds *creds,
	    const char *ua);

/*
 * The candidate handover: auto hands to: of our Lease's candidates at
 * the last list (made while leading), never ours, the one the strategy
 * picks (OldestEmulationVersion), else the freshest, of those live by
 * lease_cand_live then and still now; NULL if none, or while the
 * candidate is not kept (coordinated false).
 */
const char *daemon_cand_pick(struct daemon *d);

/* Stop keeping the candidate and delete it, bounded by until_ms. */
void	daemon_cand_stop(struct daemon *d, uint64_t until_ms);

/* Whether the delete is still in flight. */
int	daemon_cand_busy(const struct daemon *d);

void	daemon_cand_free(struct daemon *d);
/* daemon_shards.c: a shard group (docs/shards.md) */

/*
 * With shards: in d->conf, set up d->sh and d->nel (the member Lease,
 * then the N shards).  Returns 0; nothing to do without shards.
 */
int	daemon_shards_init(struct daemon *d);

/* Shard election i's configuration (i from 1), in out. */
void	daemon_shards_conf(struct daemon *d, int i, struct config *out);

/* The labels election e's creates carry (its lock is set up). */
void	daemon_shards_labels(struct election *e);

/* The group's list client.  Returns 0, or -1 logged. */
int	daemon_shards_setup(struct daemon *d, const struct kube_creds *creds,
	    const char *ua);

/* Start: the shards not candidates until planned, the first list. */
void	daemon_shards_start(struct daemon *d);

/*
 * The claims' alarm (daemon_resume.c): a timer on the clock that counts
 * a suspend, armed for the earliest end of a claim we hold, so that a
 * claim's end is acted on at once after a resume past it.
 */
void	daemon_say_unreleased(struct election *e);
void	daemon_resume_init(struct daemon *d);
void	daemon_resume_arm(struct daemon *d);
void	daemon_resume_free(struct daemon *d);

/* A group election stepped: plan again, from the loop. */
void	daemon_shards_changed(struct daemon *d);

/* The daemon is stopping: no more lists or plans. */
void	daemon_shards_stopping(struct daemon *d);

/*
 * Every election has stopped: delete the member Lease we released.
 * Returns 1 when the delete is under way (it ends the loop when
 * answered), 0 when the loop may end now.
 */
int	daemon_shards_stopped(struct daemon *d);

void	daemon_shards_free(struct daemon *d);

/* The route table t (httpd_new's) with /shards and /shards/watch. */
struct httpd_route *daemon_shards_routes(struct daemon *d,
	    struct httpd_route *t);

/* The group's gauges for GET /metrics, appended to b. */
void	daemon_shards_metrics(const struct daemon *d, uint64_t now_ms,
	    struct buf *b);

#endif /* DAEMON_INT_H */
