/*
 * config.h -- leaderd's configuration: defaults, the YAML file, flags.
 *
 * Order of precedence: built-in defaults, then the file (config_load),
 * then flags (config_set), then environment-derived defaults for what is
 * still unset (config_finish), then config_validate.  Every error names
 * its origin, "file:line:col: message" for the file or "--flag: message"
 * for a flag, and says what to do about it.  The module is pure: it
 * reads the file and the environment but never logs; errors are
 * collected, one per line, in the caller's buffer.
 */

#ifndef CONFIG_H
#define CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define CONFIG_STR_MAX		256
#define CONFIG_PATH_MAX		1024
#define CONFIG_ERR_MAX		4096	/* suggested size of an error buffer */
#define CONFIG_STREAMS_MAX	16384	/* largest listen.max_streams */
#define CONFIG_ELECTIONS_MAX	16	/* items of elections:, the first's
					   beside them not counted */
#define CONFIG_ELECTION_KEYS	7	/* keys an elections: item may set */
#define CONFIG_EL_LOCK_NAME	2	/* their slots: lock.name */
#define CONFIG_EL_LABEL_KEY	6	/* actions.label.key */

/* Where a value came from, for error messages. */
struct config_origin {
	char		 src[CONFIG_PATH_MAX];	/* file path or "--flag"; "" = default */
	int		 line;			/* 1-based; 0 for a flag */
	int		 col;			/* 1-based; 0 for a flag */
};

enum config_key {
	CONFIG_IDENTITY,
	CONFIG_LOCK_TYPE,
	CONFIG_LOCK_NAMESPACE,
	CONFIG_LOCK_NAME,
	CONFIG_LEASE_DURATION,
	CONFIG_RENEW_DEADLINE,
	CONFIG_RETRY_PERIOD,
	CONFIG_RELEASE_ON_CANCEL,
	CONFIG_LISTEN_HTTP,
	CONFIG_LISTEN_UNIX,
	CONFIG_LISTEN_MAX_STREAMS,
	CONFIG_LISTEN_PROBES,
	CONFIG_KUBECONFIG,
	CONFIG_REQUEST_TIMEOUT,
	CONFIG_INSECURE_HTTP,
	CONFIG_LOG_LEVEL,
	CONFIG_LOG_FORMAT,
	CONFIG_READYZ_LEADER_ONLY,
	CONFIG_WATCH,
	CONFIG_WATCH_TIMEOUT,
	CONFIG_RUN_GRACE,
	CONFIG_RUN_RESTART,
	CONFIG_LABEL_ENABLED,
	CONFIG_LABEL_KEY,
	CONFIG_LABEL_POD,
	CONFIG_LABEL_NAMESPACE,
	CONFIG_EP_SERVICE,
	CONFIG_EP_NAMESPACE,
	CONFIG_EP_IP,
	CONFIG_EP_PORT,
	CONFIG_EP_PORT_NAME,
	CONFIG_EP_LEGACY,
	CONFIG_EP_SLICE,
	CONFIG_EP_PORTS_JSON,
	CONFIG_EP_NODE_NAME,
	CONFIG_STEP_DOWN_COOLDOWN,
	CONFIG_SHUTDOWN_TIMEOUT,
	CONFIG_COMPAT,
	CONFIG_PROBE_URL,
	CONFIG_PROBE_PERIOD,
	CONFIG_PROBE_TIMEOUT,
	CONFIG_PROBE_FAILURES,
	CONFIG_PROBE_SUCCESSES,
	CONFIG_PROBE_ANY_HOST,
	CONFIG_CANDIDACY_COOLDOWN,
	CONFIG_REQUIRE_CLIENT,
	CONFIG_CLIENT_GRACE,
	CONFIG_LISTEN_METRICS,
	CONFIG_COORDINATED,
	CONFIG_BINARY_VERSION,
	CONFIG_EMULATION_VERSION,
	CONFIG_CLE_STRATEGY,
	CONFIG_HANDOVER,
	CONFIG_SHARDS_GROUP,
	CONFIG_SHARDS_COUNT,
	CONFIG_SHARDS_FORCE,
	CONFIG_SHARDS_ON_CHANGE,
	CONFIG_NKEYS
};

/*
 * One item of elections: an election beside the first, in the same
 * process.  It sets some of config_election_keys (the lock, the
 * durations, the label key); the rest it inherits from the top level,
 * which describes the first election (see config_election).
 */
struct config_election {
	char		 name[CONFIG_STR_MAX];	/* "" until config_finish
						   makes it the lock's name */
	struct config_origin name_origin;	/* where name was given */
	struct config_origin at;		/* the item itself */
	char		 val[CONFIG_ELECTION_KEYS][CONFIG_STR_MAX]; /* values
						   as struct config stores
						   them, by key slot */
	int		 set[CONFIG_ELECTION_KEYS]; /* slot given in the item */
	struct config_origin origin[CONFIG_ELECTION_KEYS]; /* and where */
};

/* The keys an elections: item may set, by slot of its val[]. */
extern const enum config_key config_election_keys[CONFIG_ELECTION_KEYS];

struct config {
	char		 identity[CONFIG_STR_MAX];	/* holderIdentity */
	char		 lock_type[32];			/* "leases" */
	char		 lock_namespace[CONFIG_STR_MAX];	/* Lease namespace */
	char		 lock_name[CONFIG_STR_MAX];	/* Lease name */
	uint64_t	 lease_duration_ms;		/* default 15s */
	uint64_t	 renew_deadline_ms;		/* default 10s */
	uint64_t	 retry_period_ms;		/* default 2s */
	int		 release_on_cancel;		/* default 1 */
	char		 listen_http[CONFIG_STR_MAX];	/* host:port; "" = off */
	char		 listen_unix[CONFIG_PATH_MAX];	/* socket path; "" = off */
	int		 listen_max_streams;		/* push clients; default 1024 */
	char		 listen_probes[CONFIG_STR_MAX];	/* host:port; "" = off */
	char		 listen_metrics[CONFIG_STR_MAX]; /* "" = off */
	char		 kubeconfig[CONFIG_PATH_MAX];	/* "" = in-cluster */
	uint64_t	 request_timeout_ms;		/* default 5s; see finish */
	char		 log_level[16];			/* error|warn|info|debug */
	char		 log_format[16];		/* text|json */
	int		 readyz_leader_only;		/* /readyz 200 only leading */
	int		 watch;				/* watch the lock; default 1 */
	uint64_t	 watch_timeout_ms;		/* one watch's length; 5m */
	uint64_t	 run_grace_ms;			/* SIGTERM..SIGKILL; 10s */
	char		 run_restart[16];		/* never|restart */
	int		 label_enabled;			/* keep the pod label */
	char		 label_key[CONFIG_STR_MAX];	/* leaderd.io/role */
	char		 label_pod[CONFIG_STR_MAX];	/* pod; default $POD_NAME */
	char		 label_namespace[CONFIG_STR_MAX]; /* "" = lock's */
	char		 ep_service[CONFIG_STR_MAX];	/* "" = no endpoints */
	char		 ep_namespace[CONFIG_STR_MAX];	/* "" = lock's */
	char		 ep_ip[CONFIG_STR_MAX];		/* default $POD_IP */
	int		 ep_port;			/* 0 = no ports */
	char		 ep_port_name[CONFIG_STR_MAX];	/* the Service port's */
	int		 ep_legacy;			/* also core Endpoints */
	int		 ep_slice;			/* the slice; default 1 */
	char		 ep_ports_json[CONFIG_PATH_MAX];	/* "" = ep_port */
	char		 ep_node_name[CONFIG_STR_MAX];	/* "" = no nodeName */
	int		 insecure_http;			/* credentials over http:// */
	uint64_t	 step_down_cooldown_ms;		/* default lease_duration */
	uint64_t	 shutdown_timeout_ms;		/* signal..exit; default 5s
							   (plus the actions' time
							   when unset) */
	char		 compat[16];			/* "" or a peer, compat.h */
	char		 probe_url[512];		/* app probe; "" = none */
	uint64_t	 probe_period_ms;		/* default 2s */
	uint64_t	 probe_timeout_ms;		/* default 1s */
	int		 probe_failures;		/* failure_threshold, 3 */
	int		 probe_successes;		/* success_threshold, 1 */
	int		 probe_any_host;		/* hosts off the pod too */
	uint64_t	 candidacy_cooldown_ms;		/* default lease_duration */
	int		 require_client;		/* candidate only with a
							   client's stream */
	uint64_t	 client_grace_ms;		/* default 0 */
	int		 coordinated;			/* a LeaseCandidate; the
							   controller assigns */
	char		 binary_version[64];		/* its binaryVersion */
	char		 emulation_version[64];		/* "" = binary_version */
	char		 cle_strategy[128];		/* OldestEmulationVersion */
	char		 handover[16];			/* on SIGTERM: none|auto */
	char		 shards_group[CONFIG_STR_MAX];	/* "" = no shard group */
	int		 shards_count;			/* 1..256; 0 = none */
	int		 shards_force;			/* past the write limit */
	char		 shards_on_change[16];		/* run mode: restart|
							   sighup */
	struct config_origin origin[CONFIG_NKEYS];	/* where each value came from */
	int		 set[CONFIG_NKEYS];		/* value given explicitly */
	int		 nelections;			/* items of elections: */
	struct config_origin elections_origin;	/* the elections: key */
	struct config_election elections[CONFIG_ELECTIONS_MAX]; /* more
							   elections */
};

/* Fill c with the built-in defaults (DESIGN.md "Configuration"). */
void	config_defaults(struct config *c);

/*
 * Read the YAML file path into c, over what c holds.  ${VAR} is expanded
 * from the environment in every scalar ($$ is a literal $; an unset
 * variable is an error).  Unknown keys, wrong types, bad durations and
 * duplicate keys are errors.  Returns 0, or -1 with every error found,
 * one "file:line:col: message" per line, in err.
 */
int	config_load(struct config *c, const char *path, char *err,
	    size_t errlen);

/*
 * Set one key from a flag: key is the dotted YAML path ("lock.name",
 * "lease_duration"), value is parsed as the file would parse it, flag is
 * the flag's spelling for error messages.  Returns 0 or -1 with err.
 */
int	config_set(struct config *c, const char *key, const char *value,
	    const char *flag, char *err, size_t errlen);

/*
 * Fill what is still unset from the environment: identity from $POD_NAME,
 * else the hostname; lock.namespace from $POD_NAMESPACE, else the
 * service-account namespace file at sa_dir/namespace (sa_dir NULL means
 * /var/run/secrets/kubernetes.io/serviceaccount), else "default".  An
 * unset request_timeout follows renew_deadline as client-go's does:
 * max(1s, renew_deadline / 2), but below renew_deadline (5s for 10s).
 * With compat "classic", what is unset takes the classic leader-elector
 * sidecar's defaults instead: lock.type endpoints, lock.namespace the
 * literal "default" (never the pod's), lease 10s, renew 5s, retry 2.5s
 * (its --ttl 10s), and no TCP listener (it serves only with --http).
 * With compat "nais", nais/elector's: identity the hostname (never
 * $POD_NAME), lock.type leases, release_on_cancel false, listen.http
 * 0.0.0.0:27070, listen.probes 0.0.0.0:28080, listen.metrics
 * 0.0.0.0:29090.
 */
void	config_finish(struct config *c, const char *sa_dir);

/*
 * Check the whole configuration: client-go's timing rules (lease_duration
 * > renew_deadline > 1.2 x retry_period, all > 0), whole seconds for
 * lease_duration, request_timeout < renew_deadline, identity and lock
 * name non-empty and valid, listen addresses well formed, at least one
 * listener.  Errors name the origin of the offending value.  Returns 0,
 * or -1 with every error, one per line, in err.
 */
int	config_validate(const struct config *c, char *err, size_t errlen);

/*
 * Where s breaks the identity rule (1 to 253 letters, digits, '-', '.'
 * and '_', starting and ending with a letter or digit): the offset of
 * the first bad byte, or (size_t)-1 if s, non-empty, is fine.
 */
size_t	config_identity_bad(const char *s);

/*
 * Whether the run mode's guarantee holds: the command is stopped within
 * run.grace after the claim ends (renew_deadline after the last renew
 * was sent), so it is gone before another instance may take the lease
 * only if grace <= lease_duration - renew_deadline.  Returns 0, or -1
 * with the advice in err.
 */
int	config_check_grace(const struct config *c, char *err, size_t errlen);

/*
 * Whether candidacy.require_client meets a listen.http that peers off
 * the pod may reach (any host but localhost or a loopback literal).
 * Their streams never keep this instance a candidate, but the operator
 * should know, and how to serve this pod only.  Returns 0, or -1 with
 * the warning, prefixed by where listen.http came from, in err.
 */
int	config_check_client_listen(const struct config *c, char *err,
	    size_t errlen);

/*
 * Whether shutdown_timeout leaves the run mode's command room to stop:
 * an explicit shutdown_timeout must be longer than run.grace, since the
 * budget counts from the signal and covers the command's stop before the
 * release.  Returns 0, or -1 with the fix in err.
 */
int	config_check_shutdown(const struct config *c, char *err,
	    size_t errlen);

/*
 * The shutdown budget in ms, from the signal to the exit: shutdown_timeout
 * when given; unset, its default (5s) for the release plus actions_ms,
 * what the caller's actions may take to stop (run.grace + 1s for a
 * command, 2 x request_timeout for the pod label).
 */
uint64_t config_shutdown_ms(const struct config *c, uint64_t actions_ms);

/*
 * The shutdown budget the daemon gives a stop, in ms, from the
 * configuration alone: config_shutdown_ms with the largest of what each
 * election's actions may take to stop (run.grace + 1s for the run
 * mode's command, the first election's when run is set; 2 x
 * request_timeout for the pod label, and as much for the leader's
 * endpoints).  One function for the daemon's stop and `leaderd -n -v`.
 */
uint64_t config_stop_budget_ms(const struct config *c, int run);

/*
 * Shard groups (docs/shards.md).  A group of n shards renews each shard
 * Lease and each member's member Lease once per retry_period at steady
 * state; config_validate refuses a group whose rate with n members (the
 * most that can each hold a shard) exceeds CONFIG_SHARDS_RATE_MAX unless
 * shards.force is true.  50 writes/s is half of what the kubelets of a
 * 1,000-node cluster write for their node Leases (one every 10 s each),
 * and ten times client-go's default client rate (QPS 5): enough for 64
 * shards at 60s/40s/10s or 25 at the defaults, not enough to let one
 * Deployment's sidecars become the API server's main writer.
 */
#define CONFIG_SHARDS_MAX	256	/* largest shards.count */
#define CONFIG_SHARDS_RATE_MAX	50	/* writes/s per group, unforced */

/* Whether c configures a shard group (shards.group or count given). */
int	config_shards_on(const struct config *c);

/*
 * The steady-state API writes per second of a group of n shards with m
 * members renewing every retry_ms: (n + m) / retry_period.  The one
 * home of this figure: the check, `leaderd -n` and docs/shards.md's
 * table use it.
 */
double	config_shards_rate(unsigned n, unsigned m, uint64_t retry_ms);

/*
 * The election of index i as a whole configuration, in out: i 0 is c
 * itself (the top level); i from 1 to c->nelections is c with what
 * elections[i - 1] sets (lock, durations, label key) put over it, with
 * its origins, and out->nelections 0.  Durations not set are the first
 * election's, from the file or flags; lock.type and lock.namespace too.
 */
void	config_election(const struct config *c, int i, struct config *out);

/*
 * The name of election i (0: the first, whose name is its lock's name;
 * else the item's name, by default its lock's name).  Borrowed from c.
 */
const char *config_election_name(const struct config *c, int i);

/*
 * Write the effective configuration as YAML (durations in Go syntax) to
 * buf, for `leaderd -n -v`; run says whether leaderd runs a command (the
 * run mode), which shutdown_timeout's budget counts
 * (config_stop_budget_ms).  Returns the length written, truncated to
 * len - 1.
 */
size_t	config_dump(const struct config *c, int run, char *buf,
	    size_t len);

#endif /* CONFIG_H */
