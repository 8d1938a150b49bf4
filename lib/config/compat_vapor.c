/*
 * compat_vapor.c -- vapor-ware/k8s-elector 1.2.0's command line, read as
 * it reads it (cmd/elector.go; test/compat/peers.md section 3): Go's
 * flag package over its seven flags and the twelve klog v1.0.0 adds
 * (klog.InitFlags), and its defaults.
 *
 * The grammar is Go's flag.Parse, message for message: "-f" and "--f"
 * alike, "-f=v" or "-f v" (booleans only "-b" or "-b=v"), parsing
 * stops at the first argument that is not a flag or after "--" and the
 * rest is ignored (k8s-elector never reads flag.Args), the last value
 * wins, and an error prints its line and the usage and exits 2.  Each
 * value is checked as its flag.Value's Set checks it; only then is
 * anything applied, so what cannot be honoured is refused naming the
 * flag (-ttl) and the fix.  The klog flags other than -v are checked
 * and ignored: leaderd logs to stderr in its own format.  How Go reads
 * and quotes each value (strconv, time, klog) is compat_go.c's.
 */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/duration.h"
#include "config/compat.h"
#include "config/compat_int.h"
#include "config/config.h"
#include "config/config_int.h"

#define PEER		"vapor"
#define NS_PER_MS	UINT64_C(1000000)
#define NS_PER_S	UINT64_C(1000000000)
#define VERBOSE_DEBUG	4	/* client-go logs each renew at V(4) */

/* The values kept for leaderd; the other flags are checked, ignored. */
enum slot {
	S_ELECTION, S_HTTP, S_ID, S_KUBECONFIG, S_LOCK_TYPE, S_NAMESPACE,
	S_TTL, S_V, S_NSLOTS, S_NONE = -1
};

static const struct goflag {
	const char	*name;		/* without the dash */
	enum gf_type	 type;
	enum slot	 slot;		/* where the value goes, or S_NONE */
} goflags[] = {
	{ "election",		GF_STRING,	S_ELECTION },
	{ "http",		GF_STRING,	S_HTTP },
	{ "id",			GF_STRING,	S_ID },
	{ "kubeconfig",		GF_STRING,	S_KUBECONFIG },
	{ "lock-type",		GF_STRING,	S_LOCK_TYPE },
	{ "namespace",		GF_STRING,	S_NAMESPACE },
	{ "ttl",		GF_DURATION,	S_TTL },
	/* klog v1.0.0 InitFlags */
	{ "log_dir",		GF_STRING,	S_NONE },
	{ "log_file",		GF_STRING,	S_NONE },
	{ "log_file_max_size",	GF_UINT64,	S_NONE },
	{ "logtostderr",	GF_BOOL,	S_NONE },
	{ "alsologtostderr",	GF_BOOL,	S_NONE },
	{ "v",			GF_LEVEL,	S_V },
	{ "add_dir_header",	GF_BOOL,	S_NONE },
	{ "skip_headers",	GF_BOOL,	S_NONE },
	{ "skip_log_headers",	GF_BOOL,	S_NONE },
	{ "stderrthreshold",	GF_SEVERITY,	S_NONE },
	{ "vmodule",		GF_VMODULE,	S_NONE },
	{ "log_backtrace_at",	GF_TRACE,	S_NONE },
	/* leaderd's own --compat, in any spelling: skipped */
	{ "compat",		GF_STRING,	S_NONE },
};

/*
 * Go's flag.PrintDefaults for cmd/elector.go's flag set, byte for byte
 * (sorted by name; Go 1.16 and later print it so), without the "Usage
 * of ARGV0:" line above it and without the last newline.
 */
const char compat_vapor_usage[] =
    "  -add_dir_header\n"
    "    \tIf true, adds the file directory to the header\n"
    "  -alsologtostderr\n"
    "    \tlog to standard error as well as files\n"
    "  -election string\n"
    "    \tThe name of the election. This is required.\n"
    "  -http string\n"
    "    \tThe HTTP address (host:port) which leader state will be "
    "reported on.\n"
    "  -id string\n"
    "    \tThe ID of the election participant. If not set, the hostname, "
    "as reported by the kernel, is used.\n"
    "  -kubeconfig string\n"
    "    \tThe kubeconfig file to use. If not set, in-cluster config will "
    "be used.\n"
    "  -lock-type string\n"
    "    \tThe type of Kubernetes object to use for the lock (leases, "
    "endpoints, configmaps) (default \"leases\")\n"
    "  -log_backtrace_at value\n"
    "    \twhen logging hits line file:N, emit a stack trace\n"
    "  -log_dir string\n"
    "    \tIf non-empty, write log files in this directory\n"
    "  -log_file string\n"
    "    \tIf non-empty, use this log file\n"
    "  -log_file_max_size uint\n"
    "    \tDefines the maximum size a log file can grow to. Unit is "
    "megabytes. If the value is 0, the maximum file size is unlimited. "
    "(default 1800)\n"
    "  -logtostderr\n"
    "    \tlog to standard error instead of files (default true)\n"
    "  -namespace string\n"
    "    \tThe Kubernetes namespace to run the election in. If not set, "
    "elections will run in the default namespace. (default \"default\")\n"
    "  -skip_headers\n"
    "    \tIf true, avoid header prefixes in the log messages\n"
    "  -skip_log_headers\n"
    "    \tIf true, avoid headers when opening log files\n"
    "  -stderrthreshold value\n"
    "    \tlogs at or above this threshold go to stderr (default 2)\n"
    "  -ttl duration\n"
    "    \tThe TTL for the election. (default 10s)\n"
    "  -v value\n"
    "    \tnumber for the log level verbosity\n"
    "  -vmodule value\n"
    "    \tcomma-separated list of pattern=N settings for file-filtered "
    "logging";

static const struct goflag *
goflag_find(const char *name, size_t len)
{
	size_t	 i;

	for (i = 0; i < sizeof(goflags) / sizeof(goflags[0]); i++)
		if (strlen(goflags[i].name) == len &&
		    memcmp(goflags[i].name, name, len) == 0)
			return &goflags[i];
	return NULL;
}


/* "Usage of ARGV0:" and the defaults, after what (a line, or ""). */
static void
usage(const char *argv0, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s%sUsage of %s:\n%s", what,
	    what[0] != '\0' ? "\n" : "", argv0, compat_vapor_usage);
}

/* A flag error: Go's line and the usage, exit 2. */
static int
fail(const char *argv0, struct compat_cmdline *out, char *err,
    size_t errlen, const char *fmt, ...) __attribute__((format(printf, 5,
    6)));

static int
fail(const char *argv0, struct compat_cmdline *out, char *err,
    size_t errlen, const char *fmt, ...)
{
	char	 line[1024];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	usage(argv0, line, err, errlen);
	out->exit_status = 2;
	return -1;
}

/* A value leaderd refuses, once the command line parsed: exit 2. */
static int
refuse(struct compat_cmdline *out, char *err, size_t errlen,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
refuse(struct compat_cmdline *out, char *err, size_t errlen,
    const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	out->exit_status = 2;
	return -1;
}

/*
 * -ttl split as k8s-elector splits it (pkg/elector.go run): lease ttl,
 * renew ttl/3, retry ttl/6 (in ms, a fraction of a ms below Go's ns:
 * the renew deadline a hair earlier, never later).  A ttl that is not
 * whole seconds is refused: k8s-elector writes leaseDurationSeconds
 * int(ttl/1s) yet waits the full ttl, and leaderd keeps the two equal.
 */
static int
apply_ttl(struct config *c, const char *raw, struct compat_cmdline *out,
    char *err, size_t errlen)
{
	int64_t		 ns;
	uint64_t	 ms, s;
	char		 v[32], q[256];

	/* Checked while parsing. */
	(void)compat_go_parse_duration(raw, &ns);
	compat_go_quote(raw, q, sizeof(q));
	if (ns <= 0)
		return refuse(out, err, errlen, "-ttl: %s is not above zero: "
		    "k8s-elector panics on it (leaseDuration must be greater "
		    "than renewDeadline) and exits 2; give a ttl such as "
		    "-ttl=10s (its default)", q);
	if ((uint64_t)ns < NS_PER_S)
		return refuse(out, err, errlen, "-ttl: %s is under one second: "
		    "k8s-elector would write leaseDurationSeconds 0, which the "
		    "API refuses on a Lease; use -ttl=1s or more", q);
	if ((uint64_t)ns % NS_PER_S != 0) {
		s = (uint64_t)ns / NS_PER_S;
		return refuse(out, err, errlen, "-ttl: %s is not a whole "
		    "number of seconds: k8s-elector writes "
		    "leaseDurationSeconds %llu but waits the whole ttl "
		    "itself, and leaderd keeps the record and the wait "
		    "equal; use -ttl=%llus or -ttl=%llus",
		    q, (unsigned long long)s, (unsigned long long)s,
		    (unsigned long long)s + 1);
	}
	ms = (uint64_t)ns / NS_PER_MS;
	duration_format(ms, v, sizeof(v));
	if (compat_set(c, "lease_duration", v, "-ttl", err, errlen) == -1)
		goto bad;
	duration_format(ms / 3, v, sizeof(v));
	if (compat_set(c, "renew_deadline", v, "-ttl", err, errlen) == -1)
		goto bad;
	duration_format(ms / 6, v, sizeof(v));
	if (compat_set(c, "retry_period", v, "-ttl", err, errlen) == -1)
		goto bad;
	return 0;
bad:
	out->exit_status = 2;
	return -1;
}

/*
 * Whether a ttl of ttl_ms is too short for lock_type (NULL: leases)
 * beside k8s-elector pods.  client-go v0.17 counts a record as renewed
 * only when its bytes change, and the legacy record's times are whole
 * seconds: a leader renewing every ttl/6 changes them up to 1s + ttl/6
 * apart, and a follower, trying every ttl/6 x [1, 2.2], sees that up to
 * 2.2 x ttl/6 late; it takes over once ttl has passed unseen, so that
 * sum must stay below ttl: ttl > 2.14s, 3s in whole seconds.  (Lease
 * times have microseconds: every renew changes them.)
 */
#define LEGACY_TTL_MIN_S	3u
static int
legacy_ttl_short(const char *lock_type, uint64_t ttl_ms)
{
	return lock_type != NULL && strcmp(lock_type, "leases") != 0 &&
	    ttl_ms < LEGACY_TTL_MIN_S * 1000;
}

/* Apply the values parsed (slot: the last value given, or NULL). */
static int
apply(struct config *c, const char *const val[S_NSLOTS],
    struct compat_cmdline *out, char *err, size_t errlen)
{
	static const struct {
		enum slot	 slot;
		const char	*key;
		const char	*flag;
	} keys[] = {
		{ S_HTTP,	"listen.http",		"-http" },
		{ S_KUBECONFIG,	"kubernetes.kubeconfig", "-kubeconfig" },
		{ S_LOCK_TYPE,	"lock.type",		"-lock-type" },
		{ S_NAMESPACE,	"lock.namespace",	"-namespace" },
	};
	int64_t		 level;
	size_t		 i;
	char		 q[256];

	/* checkConfig (pkg/elector.go): its message, exit 2 not 255. */
	if (val[S_ELECTION] == NULL || val[S_ELECTION][0] == '\0')
		return refuse(out, err, errlen, "-election: missing required "
		    "value: election name was not specified (see '--help' for "
		    "usage)");
	if (compat_set(c, "lock.name", val[S_ELECTION], "-election", err,
	    errlen) == -1)
		goto bad;
	/* An empty -id means the hostname, as an absent one (finish). */
	if (val[S_ID] != NULL && val[S_ID][0] != '\0' &&
	    compat_set(c, "identity", val[S_ID], "-id", err, errlen) == -1)
		goto bad;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (val[keys[i].slot] != NULL && compat_set(c, keys[i].key,
		    val[keys[i].slot], keys[i].flag, err, errlen) == -1)
			goto bad;
	if (val[S_TTL] != NULL && apply_ttl(c, val[S_TTL], out, err,
	    errlen) == -1)
		return -1;
	if (val[S_TTL] != NULL && legacy_ttl_short(val[S_LOCK_TYPE],
	    c->lease_duration_ms))
		return refuse(out, err, errlen, "-ttl: %s with -lock-type=%s "
		    "is too short beside k8s-elector pods: that record's "
		    "times are whole seconds, so they may see it unchanged "
		    "for 1s + 3.2 x ttl/6, longer than the ttl, and take the "
		    "lock from a live leader; use -ttl=%us or more, or "
		    "-lock-type=leases", compat_go_quote(val[S_TTL], q,
		    sizeof(q)), val[S_LOCK_TYPE], LEGACY_TTL_MIN_S);
	/* klog -v: client-go logs each renew at V(4), leaderd at debug. */
	if (val[S_V] != NULL &&
	    compat_go_parse_int(val[S_V], 32, &level) == NUM_OK &&
	    compat_set(c, "log.level", level >= VERBOSE_DEBUG ? "debug" :
	    "info", "-v", err, errlen) == -1)
		goto bad;
	return 0;
bad:
	out->exit_status = 2;
	return -1;
}

int
compat_vapor_args(struct config *c, int argc, char *argv[],
    struct compat_cmdline *out, char *err, size_t errlen)
{
	const struct goflag	*f;
	const char		*val[S_NSLOTS] = { NULL };
	const char		*argv0 = argc > 0 ? argv[0] : "elector";
	const char		*s, *name, *value, *eq;
	char			 why[1024], q[512];
	size_t			 nlen;
	int			 i, b;

	/* flag.FlagSet.parseOne, one argument at a time. */
	for (i = 1; i < argc; ) {
		s = argv[i];
		if (strlen(s) < 2 || s[0] != '-')
			break;		/* the first non-flag ends the flags */
		name = s + 1;
		if (s[1] == '-') {
			if (s[2] == '\0') {
				i++;	/* "--" ends them too */
				break;
			}
			name = s + 2;
		}
		if (name[0] == '\0' || name[0] == '-' || name[0] == '=')
			return fail(argv0, out, err, errlen,
			    "bad flag syntax: %s", s);
		i++;
		value = NULL;
		if ((eq = strchr(name + 1, '=')) != NULL) {
			nlen = (size_t)(eq - name);
			value = eq + 1;
		} else
			nlen = strlen(name);
		if ((f = goflag_find(name, nlen)) == NULL) {
			if ((nlen == 4 && strncmp(name, "help", 4) == 0) ||
			    (nlen == 1 && name[0] == 'h')) {
				/* ErrHelp: exit 0 since Go 1.15. */
				usage(argv0, "", err, errlen);
				out->exit_status = 0;
				return -1;
			}
			return fail(argv0, out, err, errlen, "flag provided "
			    "but not defined: -%.*s", (int)nlen, name);
		}
		if (f->type == GF_BOOL) {
			if (value != NULL &&
			    compat_go_parse_bool(value, &b) == -1)
				return fail(argv0, out, err, errlen, "invalid "
				    "boolean value %s for -%s: parse error",
				    compat_go_quote(value, q, sizeof(q)),
				    f->name);
			continue;
		}
		if (value == NULL && i < argc)
			value = argv[i++];
		if (value == NULL)
			return fail(argv0, out, err, errlen, "flag needs an "
			    "argument: -%s", f->name);
		if (compat_go_check(f->type, value, why, sizeof(why)) == -1)
			return fail(argv0, out, err, errlen, "invalid value %s "
			    "for flag -%s: %s", compat_go_quote(value, q,
			    sizeof(q)), f->name, why);
		if (f->slot != S_NONE)
			val[f->slot] = value;	/* the last one wins */
	}
	/* The rest is flag.Args(), which k8s-elector never reads. */
	return apply(c, val, out, err, errlen);
}

/*
 * k8s-elector's defaults for what is still unset: the namespace the
 * literal "default" (never the pod's), the lock a Lease, -ttl 10s split
 * into 10s, 3.333s and 1.666s, no HTTP without -http, the identity the
 * hostname (not $POD_NAME), and the pod label k8s-elector/status
 * (leader or standby) on the pod $ELECTOR_POD_NAME, else the hostname,
 * in the lock's namespace.  A hostname that cannot be a pod's name (a
 * workstation's, outside a cluster) leaves the label off: k8s-elector's
 * PATCH of it could only fail, which it logs and goes on.
 */
void
compat_vapor_finish(struct config *c)
{
	char		 host[CONFIG_STR_MAX], err[CONFIG_ERR_MAX];
	const char	*pod;

	compat_default(c, PEER, CONFIG_LOCK_TYPE, "leases");
	compat_default(c, PEER, CONFIG_LOCK_NAMESPACE, "default");
	compat_default(c, PEER, CONFIG_LEASE_DURATION, "10s");
	compat_default(c, PEER, CONFIG_RENEW_DEADLINE, "3.333s");
	compat_default(c, PEER, CONFIG_RETRY_PERIOD, "1.666s");
	compat_default(c, PEER, CONFIG_LISTEN_HTTP, "");
	if (gethostname(host, sizeof(host)) == -1)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	if (host[0] != '\0')
		compat_default(c, PEER, CONFIG_IDENTITY, host);
	if (!c->set[CONFIG_LABEL_POD] &&
	    (pod = getenv("ELECTOR_POD_NAME")) != NULL && *pod != '\0')
		(void)compat_set(c, "actions.label.pod", pod,
		    "$ELECTOR_POD_NAME", err, sizeof(err));
	if (!c->set[CONFIG_LABEL_POD] && config_pod_name_ok(host))
		compat_default(c, PEER, CONFIG_LABEL_POD, host);
	if (c->set[CONFIG_LABEL_POD])
		compat_default(c, PEER, CONFIG_LABEL_ENABLED, "true");
	compat_default(c, PEER, CONFIG_LABEL_KEY, "k8s-elector/status");
	compat_default(c, PEER, CONFIG_LABEL_NAMESPACE, c->lock_namespace);
}
