/*
 * leaderd -- leader-election sidecar for Kubernetes.
 *
 * main.c parses flags, loads and checks the configuration, loads the
 * credentials, and hands over to daemon_run.  Wiring only.
 *
 * `leaderd [flags] run [flags] -- CMD ARGS...` is the run mode: CMD runs
 * only while this instance leads (actions.h).  `leaderd status` and the
 * other control commands are ctl.c's; invoked as kubectl-leaderd, the
 * binary is the kubectl plugin (lib/tool/plugin.c).
 */

#include <sys/resource.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/duration.h"
#include "base/log.h"
#include "base/version.h"
#include "config/compat.h"
#include "config/config.h"
#include "config/creds.h"
#include "config/kubeconfig.h"
#include "daemon/daemon.h"
#include "tool/tool.h"
#include "ctl.h"

#define EXIT_CONFIG	2

/* A bad configuration's exit status: 2, or what a peer exits with. */
static int	exit_config = EXIT_CONFIG;
static int	doctor_mode;	/* `leaderd [options] doctor`: ctl_doctor */

enum {
	OPT_ELECTION = 256, OPT_ELECTION_NS, OPT_ID, OPT_HTTP, OPT_UNIX,
	OPT_KUBECONFIG, OPT_LEASE_DURATION, OPT_RENEW_DEADLINE,
	OPT_RETRY_PERIOD, OPT_REQUEST_TIMEOUT, OPT_TTL, OPT_RELEASE,
	OPT_LOG_LEVEL, OPT_LOG_FORMAT, OPT_CLUSTER_CREDS, OPT_VERSION,
	OPT_WATCH, OPT_GRACE, OPT_RESTART, OPT_PROBES, OPT_LOCK_TYPE,
	OPT_COOLDOWN, OPT_SHUTDOWN_TIMEOUT, OPT_COMPAT, OPT_APP_PROBE,
	OPT_REQUIRE_CLIENT, OPT_COORDINATED, OPT_BINARY_VERSION,
	OPT_EMULATION_VERSION, OPT_CLE_STRATEGY, OPT_HANDOVER
};

static const struct option longopts[] = {
	{ "config",		required_argument, NULL, 'f' },
	{ "check",		no_argument,	   NULL, 'n' },
	{ "verbose",		no_argument,	   NULL, 'v' },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "election",		required_argument, NULL, OPT_ELECTION },
	{ "election-namespace",	required_argument, NULL, OPT_ELECTION_NS },
	{ "lock-type",		required_argument, NULL, OPT_LOCK_TYPE },
	{ "id",			required_argument, NULL, OPT_ID },
	{ "http",		required_argument, NULL, OPT_HTTP },
	{ "unix-socket",	required_argument, NULL, OPT_UNIX },
	{ "probes",		required_argument, NULL, OPT_PROBES },
	{ "kubeconfig",		required_argument, NULL, OPT_KUBECONFIG },
	{ "lease-duration",	required_argument, NULL, OPT_LEASE_DURATION },
	{ "renew-deadline",	required_argument, NULL, OPT_RENEW_DEADLINE },
	{ "retry-period",	required_argument, NULL, OPT_RETRY_PERIOD },
	{ "request-timeout",	required_argument, NULL, OPT_REQUEST_TIMEOUT },
	{ "ttl",		required_argument, NULL, OPT_TTL },
	{ "release-on-cancel",	required_argument, NULL, OPT_RELEASE },
	{ "log-level",		required_argument, NULL, OPT_LOG_LEVEL },
	{ "log-format",		required_argument, NULL, OPT_LOG_FORMAT },
	{ "watch",		required_argument, NULL, OPT_WATCH },
	{ "use-cluster-credentials", optional_argument, NULL,
	    OPT_CLUSTER_CREDS },
	{ "version",		no_argument,	   NULL, OPT_VERSION },
	{ "grace",		required_argument, NULL, OPT_GRACE },
	{ "restart",		required_argument, NULL, OPT_RESTART },
	{ "step-down-cooldown",	required_argument, NULL, OPT_COOLDOWN },
	{ "shutdown-timeout",	required_argument, NULL, OPT_SHUTDOWN_TIMEOUT },
	{ "compat",		required_argument, NULL, OPT_COMPAT },
	{ "app-probe",		required_argument, NULL, OPT_APP_PROBE },
	{ "require-client",	optional_argument, NULL, OPT_REQUIRE_CLIENT },
	{ "coordinated",	optional_argument, NULL, OPT_COORDINATED },
	{ "binary-version",	required_argument, NULL, OPT_BINARY_VERSION },
	{ "emulation-version",	required_argument, NULL,
	    OPT_EMULATION_VERSION },
	{ "coordinated-strategy", required_argument, NULL, OPT_CLE_STRATEGY },
	{ "handover",		required_argument, NULL, OPT_HANDOVER },
	{ NULL, 0, NULL, 0 }
};

/* Flags that set one configuration key, by option value. */
static const struct {
	int		 opt;
	const char	*key;
	const char	*flag;
} flag_keys[] = {
	{ OPT_ELECTION,		"lock.name",		"--election" },
	{ OPT_ELECTION_NS,	"lock.namespace",	"--election-namespace" },
	{ OPT_LOCK_TYPE,	"lock.type",		"--lock-type" },
	{ OPT_ID,		"identity",		"--id" },
	{ OPT_HTTP,		"listen.http",		"--http" },
	{ OPT_UNIX,		"listen.unix",		"--unix-socket" },
	{ OPT_PROBES,		"listen.probes",	"--probes" },
	{ OPT_KUBECONFIG,	"kubernetes.kubeconfig", "--kubeconfig" },
	{ OPT_LEASE_DURATION,	"lease_duration",	"--lease-duration" },
	{ OPT_RENEW_DEADLINE,	"renew_deadline",	"--renew-deadline" },
	{ OPT_RETRY_PERIOD,	"retry_period",		"--retry-period" },
	{ OPT_REQUEST_TIMEOUT,	"kubernetes.request_timeout",
	    "--request-timeout" },
	{ OPT_RELEASE,		"release_on_cancel",	"--release-on-cancel" },
	{ OPT_LOG_LEVEL,	"log.level",		"--log-level" },
	{ OPT_LOG_FORMAT,	"log.format",		"--log-format" },
	{ OPT_WATCH,		"watch",		"--watch" },
	{ OPT_GRACE,		"run.grace",		"--grace" },
	{ OPT_RESTART,		"run.restart",		"--restart" },
	{ OPT_COOLDOWN,		"step_down.cooldown",	"--step-down-cooldown" },
	{ OPT_SHUTDOWN_TIMEOUT,	"shutdown_timeout",	"--shutdown-timeout" },
	{ OPT_COMPAT,		"compat",		"--compat" },
	{ OPT_APP_PROBE,	"candidacy.probe.url",	"--app-probe" },
	{ OPT_REQUIRE_CLIENT,	"candidacy.require_client",
	    "--require-client" },
	{ OPT_COORDINATED,	"candidacy.coordinated", "--coordinated" },
	{ OPT_BINARY_VERSION,	"candidacy.binary_version",
	    "--binary-version" },
	{ OPT_EMULATION_VERSION, "candidacy.emulation_version",
	    "--emulation-version" },
	{ OPT_CLE_STRATEGY,	"candidacy.strategy", "--coordinated-strategy" },
	{ OPT_HANDOVER,		"handover",		"--handover" },
};

/*
 * What selected a peer's command line without --compat (the origin of
 * compat in -n -v), and whether it was the environment.  A selection by
 * a peer's variable, or a variable ignored beside leaderd's own words
 * (compat_select), is said at start-up, with --help and -n, and when a
 * peer's command line is refused, so that a variable left from a
 * migration never switches grammars unseen.  A peer selected by argv[0]
 * or its own flags prints what that peer prints, nothing more.
 */
static char	 compat_why[128];
static const char *compat_peer;
static int	 compat_by_env;

/* That note as one line, or NULL when there is nothing to say. */
static const char *
compat_note(char *buf, size_t len)
{
	if (!compat_by_env)
		return NULL;
	if (compat_peer == NULL)
		snprintf(buf, len, "%s", compat_why);
	else
		snprintf(buf, len, "the command line is read as compat %s's, "
		    "selected by %s (--compat= reads leaderd's own)",
		    compat_peer, compat_why);
	return buf;
}

static void
compat_say(FILE *f)
{
	char		 buf[256];
	const char	*note;

	if ((note = compat_note(buf, sizeof(buf))) != NULL)
		fprintf(f, "leaderd: %s\n", note);
}

static void __attribute__((noreturn))
usage(int status)
{
	compat_say(status == 0 ? stdout : stderr);
	fprintf(status == 0 ? stdout : stderr,
	    "usage: leaderd [-nv] [-f file] [options]\n"
	    "       leaderd [-f file] [options] run [options] -- CMD "
	    "[ARG...]\n"
	    "       leaderd status | release | pause | resume | wait-leader "
	    "(-h)\n"
	    "       leaderd [-f file] [options] doctor   (docs/operations.md)\n"
	    "  run -- CMD ARGS...          run CMD while this instance leads\n"
	    "  --grace D                   SIGTERM to SIGKILL of CMD "
	    "(run.grace, 10s)\n"
	    "  --restart POLICY            when CMD exits while leading: never "
	    "or restart\n"
	    "  -f, --config FILE           YAML configuration file\n"
	    "  -n, --check                 check the configuration and exit\n"
	    "  -v, --verbose               with -n print the effective "
	    "configuration;\n"
	    "                              otherwise log at debug level\n"
	    "  --election NAME             lease name (lock.name)\n"
	    "  --election-namespace NS     lease namespace (lock.namespace)\n"
	    "  --lock-type TYPE            leases, endpoints, configmaps,\n"
	    "                              endpointsleases, configmapsleases\n"
	    "  --id ID                     identity written as holder\n"
	    "  --http HOST:PORT            local API on TCP (listen.http)\n"
	    "  --unix-socket PATH          local API on a unix socket\n"
	    "  --probes HOST:PORT          /healthz, /readyz and /metrics "
	    "only, for kubelet\n"
	    "                              probes and Prometheus\n"
	    "  --kubeconfig PATH           kubeconfig instead of in-cluster "
	    "credentials\n"
	    "  --lease-duration D          e.g. 15s\n"
	    "  --renew-deadline D          e.g. 10s\n"
	    "  --retry-period D            e.g. 2s\n"
	    "  --request-timeout D         e.g. 5s\n"
	    "  --ttl D                     leader-elector: lease D, renew "
	    "D/2, retry D/4\n"
	    "  --release-on-cancel BOOL    release the lease on SIGTERM\n"
	    "  --shutdown-timeout D        signal to exit, release included "
	    "(default 5s;\n"
	    "                              run mode: run.grace + 6s)\n"
	    "  --log-level LEVEL           error, warn, info or debug\n"
	    "  --log-format FORMAT         text or json\n"
	    "  --watch BOOL                watch the lock (default true)\n"
	    "  --step-down-cooldown D      no takeover this long after POST "
	    "/leader/release\n"
	    "                              (step_down.cooldown; default "
	    "lease_duration)\n"
	    "  --app-probe URL             a candidate only while the app is "
	    "healthy:\n"
	    "                              http://127.0.0.1:PORT/PATH or "
	    "tcp://HOST:PORT\n"
	    "  --require-client[=BOOL]     a candidate only while a local "
	    "client holds\n"
	    "                              a /leader/watch or /sse stream\n"
	    "  --coordinated[=BOOL]        coordinated election: keep a "
	    "LeaseCandidate, the\n"
	    "                              API server's controller picks "
	    "the leader\n"
	    "  --binary-version V          its binaryVersion "
	    "(candidacy.binary_version)\n"
	    "  --emulation-version V       its emulationVersion (default "
	    "binary version)\n"
	    "  --coordinated-strategy S    its strategy (default "
	    "OldestEmulationVersion)\n"
	    "  --handover MODE             on SIGTERM: none (release) or auto "
	    "(hand to a\n"
	    "                              live candidate)\n"
	    "  --use-cluster-credentials   accepted; in-cluster is the "
	    "default\n"
	    "  --compat PEER               classic: the leader-elector "
	    "sidecar's defaults\n"
	    "                              and answers (also as argv[0] "
	    "leader-elector\n"
	    "                              or /server)\n"
	    "                              vapor: k8s-elector's Go flags, "
	    "defaults and\n"
	    "                              answers (also on -election "
	    "etc.)\n"
	    "                              await: k8s-await-election's "
	    "environment,\n"
	    "                              argv[1..] the command (also as "
	    "argv[0]\n"
	    "                              k8s-await-election, or with\n"
	    "                              K8S_AWAIT_ELECTION_ENABLED set)\n"
	    "                              nais: nais/elector's own flags "
	    "(also with an\n"
	    "                              ELECTOR_ variable, --probe-address "
	    "or\n"
	    "                              --metrics-address)\n"
	    "                              A peer's variable selects it only "
	    "when none of\n"
	    "                              -f, -n, -v, run or a control word "
	    "is given\n"
	    "                              (leaderd says so); --compat= reads "
	    "leaderd's own\n"
	    "  --version                   print the version\n");
	exit(status);
}

static void
config_fail(const char *err)
{
	fprintf(stderr, "%s%s", err,
	    err[0] != '\0' && err[strlen(err) - 1] != '\n' ? "\n" : "");
	exit(exit_config);
}

/* --ttl D: the classic sidecar's lease D, renew D/2, retry D/4. */
static void
set_ttl(struct config *c, const char *arg, char *err, size_t errlen)
{
	uint64_t	 ms;
	char		 v[32];

	if (duration_parse(arg, &ms, err, errlen) == -1) {
		char	 e[CONFIG_ERR_MAX + 128];

		snprintf(e, sizeof(e), "--ttl: %s", err);
		config_fail(e);
	}
	duration_format(ms, v, sizeof(v));
	if (config_set(c, "lease_duration", v, "--ttl", err, errlen) == -1)
		config_fail(err);
	duration_format(ms / 2, v, sizeof(v));
	if (config_set(c, "renew_deadline", v, "--ttl", err, errlen) == -1)
		config_fail(err);
	duration_format(ms / 4, v, sizeof(v));
	if (config_set(c, "retry_period", v, "--ttl", err, errlen) == -1)
		config_fail(err);
}

static void
load_creds(struct config *c, struct kube_creds *creds, char *err,
    size_t errlen)
{
	char		 warn[512] = "";
	const char	*what;

	memset(creds, 0, sizeof(*creds));
	if (c->kubeconfig[0] != '\0') {
		if (kubeconfig_load(creds, c->kubeconfig, err, errlen, warn,
		    sizeof(warn)) == -1)
			config_fail(err);
		if (warn[0] != '\0')
			log_warnx("%s", warn);
	} else if (creds_incluster(creds, getenv("LEADERD_SA_DIR"),
	    err, errlen) == -1) {
		char	 e[CONFIG_ERR_MAX + 128];

		snprintf(e, sizeof(e), "leaderd: in-cluster credentials: %s; "
		    "outside a cluster, set kubernetes.kubeconfig or "
		    "--kubeconfig", err);
		config_fail(e);
	}
	/* Credentials in cleartext only when asked for explicitly (L5). */
	if ((what = creds_cleartext(creds)) != NULL) {
		if (!c->insecure_http) {
			char	 e[CONFIG_ERR_MAX + 512];

			snprintf(e, sizeof(e), "%s: server %s is plain HTTP, "
			    "so %s would cross the network in cleartext; use "
			    "an https:// server, or set "
			    "kubernetes.insecure_http: true to allow it",
			    c->kubeconfig, creds->server, what);
			config_fail(e);
		}
		log_warnx("kubernetes.insecure_http is true: %s goes to %s "
		    "in cleartext", what, creds->server);
	}
	/* A kubeconfig context's namespace comes before the defaults. */
	if (!c->set[CONFIG_LOCK_NAMESPACE] && getenv("POD_NAMESPACE") == NULL &&
	    creds->namespace != NULL && creds->namespace[0] != '\0')
		config_set(c, "lock.namespace", creds->namespace,
		    "kubeconfig", err, errlen);
}

/*
 * Raise the soft open-file limit to the hard one, as Go programs do
 * since Go 1.19: a low default must not leave the API client without
 * descriptors (httpd caps local connections below what remains).
 */
static void
raise_nofile(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			log_warn("setrlimit RLIMIT_NOFILE");
	}
}

/*
 * The shard group that -n checked: its Leases, and its steady-state API
 * writes for a few member counts (config_shards_rate, the figure
 * docs/shards.md tabulates).
 */
static void
print_shards(const struct config *c)
{
	static const unsigned	 ms[] = { 1, 3, 8 };
	unsigned		 n = (unsigned)c->shards_count, i;
	char			 rp[32];

	duration_format(c->retry_period_ms, rp, sizeof(rp));
	printf("shards %s: Leases %s-0 .. %s-%u, member Lease %s-member-%s\n",
	    c->shards_group, c->shards_group, c->shards_group, n - 1,
	    c->shards_group, c->identity);
	printf("shards %s: API writes/s at retry_period %s:", c->shards_group,
	    rp);
	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		printf(" %.1f with %u member%s,", config_shards_rate(n, ms[i],
		    c->retry_period_ms), ms[i], ms[i] == 1 ? "" : "s");
	printf(" %.1f with %u (limit %d%s)\n", config_shards_rate(n, n,
	    c->retry_period_ms), n, CONFIG_SHARDS_RATE_MAX,
	    c->shards_force ? ", forced" : "");
}

/*
 * Check the configuration, load the credentials, and run; or with check,
 * report and exit.  The configuration is checked before the credentials
 * are loaded, so a bad file is reported as such wherever leaderd runs; a
 * kubeconfig context's namespace may then fill an unset lock.namespace.
 */
static int
start(struct config *conf, int check, int verbose, int run, char **cmd)
{
	struct kube_creds	 creds;
	char			 err[CONFIG_ERR_MAX], dump[8192];
	enum log_level		 level;
	enum log_format		 format;
	int			 ret;

	config_finish(conf, getenv("LEADERD_SA_DIR"));
	if (config_validate(conf, err, sizeof(err)) == -1)
		config_fail(err);
	if (doctor_mode) {
		load_creds(conf, &creds, err, sizeof(err));
		return ctl_doctor(conf, &creds);
	}
	if (run && config_check_grace(conf, err, sizeof(err)) == -1)
		fprintf(stderr, "leaderd: warning: %s\n", err);
	if (run && config_check_shutdown(conf, err, sizeof(err)) == -1)
		config_fail(err);
	/* Said by -n here, by the daemon at start-up (daemon_gate.c). */
	if (check && config_check_client_listen(conf, err, sizeof(err)) == -1)
		fprintf(stderr, "leaderd: warning: %s\n", err);
	if (check) {
		if (conf->kubeconfig[0] != '\0') {
			load_creds(conf, &creds, err, sizeof(err));
			creds_clear(&creds);
			if (config_validate(conf, err, sizeof(err)) == -1)
				config_fail(err);
		}
		if (verbose) {
			config_dump(conf, run, dump, sizeof(dump));
			fputs(dump, stdout);
		}
		printf("lock %s/%s/%s\n", conf->lock_type, conf->lock_namespace,
		    conf->lock_name);
		if (config_shards_on(conf))
			print_shards(conf);
		compat_say(stdout);
		printf("configuration OK\n");
		return 0;
	}
	if (log_level_parse(conf->log_level, &level) == -1)
		level = LOG_LEVEL_INFO;
	if (log_format_parse(conf->log_format, &format) == -1)
		format = LOG_FORMAT_TEXT;
	log_init(verbose ? LOG_LEVEL_DEBUG : level, format);
	if (compat_note(dump, sizeof(dump)) != NULL)
		log_info("%s", dump);

	load_creds(conf, &creds, err, sizeof(err));
	if (config_validate(conf, err, sizeof(err)) == -1)
		config_fail(err);

	raise_nofile();
	ret = daemon_run(conf, &creds, run ? cmd : NULL);
	creds_clear(&creds);
	return ret;
}

int
main(int argc, char *argv[])
{
	static struct config	 conf;
	struct compat_cmdline	 pc;
	char			 err[CONFIG_ERR_MAX];
	const char		*file = NULL, *peer;
	int			 ch, check = 0, verbose = 0, ctl_word;
	size_t			 i;
	char		       **cmd = NULL;
	int			 run = 0, nargs;

	/*
	 * A peer with a command line of its own (compat.h) reads all of
	 * argv as that peer does, "--" included; its environment selects
	 * it only when argv is not leaderd's own.  The control commands
	 * talk to a running leaderd (ctl.c), except where argv[0] selects
	 * a peer of its own grammar: k8s-await-election hands every word
	 * to its command.
	 */
	/* Invoked as kubectl-leaderd: the kubectl plugin (lib/tool/). */
	if (argc > 0 && strcmp((peer = strrchr(argv[0], '/')) != NULL ?
	    peer + 1 : argv[0], "kubectl-leaderd") == 0)
		return plugin_main(argc, argv);
	ctl_word = argc > 1 && ctl_is_command(argv[1]);
	peer = compat_peer = compat_select(argc, argv, ctl_word, compat_why,
	    sizeof(compat_why), &compat_by_env);
	if (ctl_word && (peer == NULL || !compat_own_args(peer)))
		return ctl_command(argc, argv);
	if (peer != NULL && compat_own_args(peer)) {
		config_defaults(&conf);
		if (compat_args(&conf, peer, argc, argv, &pc, err,
		    sizeof(err)) == -1) {
			if (err[0] != '\0')
				fprintf(stderr, "%s\n", err);
			compat_say(stderr);
			exit(pc.exit_status);
		}
		if (pc.exit_status >= 0) {
			compat_say(stderr);
			exit(pc.exit_status);
		}
		if (pc.config_status > 0)
			exit_config = pc.config_status;
		if (pc.exec_direct) {
			execvp(pc.cmd[0], pc.cmd);
			fprintf(stderr, "leaderd: %s: %s\n", pc.cmd[0],
			    strerror(errno));
			exit(1);
		}
		return start(&conf, 0, 0, pc.cmd != NULL, pc.cmd);
	}

	/*
	 * The run mode: everything after the first "--" is the command,
	 * and the flags before it may surround the word "run".  getopt only
	 * sees what comes before "--".
	 */
	for (nargs = 1; nargs < argc && strcmp(argv[nargs], "--") != 0;
	    nargs++)
		;
	if (nargs < argc) {
		cmd = argv + nargs + 1;
		argv[nargs] = NULL;
	}
	argc = nargs;

	/* First pass: the file and the modes; flags override the file. */
	while ((ch = getopt_long(argc, argv, "f:nvh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			file = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			/* The classic sidecar's pflag exits 2 on --help. */
			usage(peer != NULL && strcmp(peer, "classic") == 0 ?
			    EXIT_CONFIG : 0);
		case OPT_VERSION:
			printf("leaderd %s (revision %s)\n", LEADERD_VERSION,
			    version_revision());
			return 0;
		case '?':
			usage(EXIT_CONFIG);
		default:
			break;
		}
	}
	if (optind < argc && strcmp(argv[optind], "doctor") == 0)
		doctor_mode = 1;
	if (optind < argc && (doctor_mode || strcmp(argv[optind], "run") == 0)) {
		run = !doctor_mode;
		optind++;
	}
	if (optind < argc) {
		fprintf(stderr, "leaderd: unexpected argument \"%s\"\n",
		    argv[optind]);
		usage(EXIT_CONFIG);
	}
	if (run && (cmd == NULL || cmd[0] == NULL)) {
		fprintf(stderr, "leaderd: run needs a command: leaderd run "
		    "[options] -- CMD [ARG...]\n");
		exit(EXIT_CONFIG);
	}
	if (!run && cmd != NULL) {
		fprintf(stderr, "leaderd: a command after \"--\" needs the "
		    "run mode: leaderd run [options] -- CMD [ARG...]\n");
		exit(EXIT_CONFIG);
	}

	config_defaults(&conf);
	if (file != NULL && config_load(&conf, file, err, sizeof(err)) == -1)
		config_fail(err);
	/*
	 * argv[0] (or the environment) selects a peer unless the file
	 * does; --compat, read below, overrides both.
	 */
	if (!conf.set[CONFIG_COMPAT] && peer != NULL) {
		if (config_set(&conf, "compat", peer, compat_why, err,
		    sizeof(err)) == -1)
			config_fail(err);
	}
	optind = 1;
	while ((ch = getopt_long(argc, argv, "f:nvh", longopts, NULL)) != -1) {
		if (ch == OPT_TTL) {
			set_ttl(&conf, optarg, err, sizeof(err));
			continue;
		}
		for (i = 0; i < sizeof(flag_keys) / sizeof(flag_keys[0]); i++)
			if (flag_keys[i].opt == ch &&
			    config_set(&conf, flag_keys[i].key, optarg != NULL ?
			    optarg : "true", flag_keys[i].flag, err,
			    sizeof(err)) == -1)
				config_fail(err);
	}

	return start(&conf, check, verbose, run, cmd);
}
