/*
 * compat_nais.c -- nais/elector's command line (cmd/elector/main.go;
 * test/compat/peers.md section 2): its flags as spf13/pflag v1.0.10
 * reads them, each also read by viper from ELECTOR_<FLAG>, and its
 * defaults.
 *
 * pflag: a long flag takes two dashes, "--f=v" or "--f v"; one dash is a
 * run of shorthand letters, and nais defines none, so "-election=x" is
 * "unknown shorthand flag: 'e' in -election=x"; "--help" and "-h" print
 * the usage and exit 0, any other error exits 2; arguments that are not
 * flags are kept aside and ignored, as is all after "--"; the last value
 * of a flag wins.  viper then gives a flag set on the command line
 * first, else its variable if set and not empty, else its default.
 * Missing election or namespace, and a log format or level nais does
 * not know, exit 1 as nais does.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config/compat.h"
#include "config/compat_int.h"
#include "config/config.h"

#define EXIT_USAGE	2	/* pflag's ExitOnError */
#define EXIT_CONFIG	1	/* nais's ExitConfig */

const char compat_nais_usage[] =
    "Usage of elector (leaderd --compat=nais; see leaderd(8)):\n"
    "      --election string             the election: the Lease's name\n"
    "      --election-namespace string   the Lease's namespace\n"
    "      --http string                 address of GET / and /sse "
    "(default \"0.0.0.0:27070\")\n"
    "      --log-format string           text or json (default \"text\")\n"
    "      --log-level string            a logrus level (default \"info\")\n"
    "      --metrics-address string      address of /metrics (default "
    "\"0.0.0.0:29090\")\n"
    "      --probe-address string        address of /healthz and /readyz "
    "(default \"0.0.0.0:28080\")\n"
    "Each flag may be given as a variable too, ELECTOR_ and its name in "
    "capitals\nwith '_' for '-' (ELECTOR_LOG_FORMAT=json).";

/* nais's flags, as pflag sorts them; viper's variables; our keys. */
enum { F_ELECTION, F_NAMESPACE, F_HTTP, F_LOG_FORMAT, F_LOG_LEVEL };
static const struct {
	const char	*name;		/* "--" name */
	const char	*env;		/* viper's AutomaticEnv name */
	const char	*key;		/* the configuration key */
	const char	*def;		/* the flag's default */
} flags[] = {
	{ "election", "ELECTOR_ELECTION", "lock.name", "" },
	{ "election-namespace", "ELECTOR_ELECTION_NAMESPACE",
	    "lock.namespace", "" },
	{ "http", "ELECTOR_HTTP", "listen.http", "0.0.0.0:27070" },
	{ "log-format", "ELECTOR_LOG_FORMAT", "log.format", "text" },
	{ "log-level", "ELECTOR_LOG_LEVEL", "log.level", "info" },
	{ "metrics-address", "ELECTOR_METRICS_ADDRESS", "listen.metrics",
	    "0.0.0.0:29090" },
	{ "probe-address", "ELECTOR_PROBE_ADDRESS", "listen.probes",
	    "0.0.0.0:28080" },
};
#define NFLAGS	(sizeof(flags) / sizeof(flags[0]))

/* logrus.ParseLevel's names (case-insensitive) as leaderd's levels. */
static const struct {
	const char	*logrus;
	const char	*ours;
} levels[] = {
	{ "panic", "error" }, { "fatal", "error" }, { "error", "error" },
	{ "warn", "warn" }, { "warning", "warn" }, { "info", "info" },
	{ "debug", "debug" }, { "trace", "debug" },
};

/* A pflag error: the message, then the usage; exit 2. */
static int
usage_error(struct compat_cmdline *out, char *err, size_t errlen,
    const char *fmt, const char *arg)
{
	char	 msg[512];

	snprintf(msg, sizeof(msg), fmt, arg);
	snprintf(err, errlen, "%s\n%s", msg, compat_nais_usage);
	out->exit_status = EXIT_USAGE;
	return -1;
}

/* One long flag at argv[*i] ("--name[=value]"); value into vals. */
static int
long_flag(int argc, char *argv[], int *i, const char *vals[],
    struct compat_cmdline *out, char *err, size_t errlen)
{
	const char	*s = argv[*i], *name = s + 2, *eq;
	size_t		 n, k;

	if (name[0] == '\0' || name[0] == '-' || name[0] == '=')
		return usage_error(out, err, errlen, "bad flag syntax: %s", s);
	eq = strchr(name, '=');
	n = eq != NULL ? (size_t)(eq - name) : strlen(name);
	for (k = 0; k < NFLAGS; k++)
		if (strlen(flags[k].name) == n &&
		    strncmp(flags[k].name, name, n) == 0)
			break;
	if (k == NFLAGS) {
		if (n == 4 && strncmp(name, "help", 4) == 0) {
			snprintf(err, errlen, "%s", compat_nais_usage);
			out->exit_status = 0;
			return -1;
		}
		snprintf(err, errlen, "unknown flag: --%.*s\n%s", (int)n,
		    name, compat_nais_usage);
		out->exit_status = EXIT_USAGE;
		return -1;
	}
	if (eq != NULL)
		vals[k] = eq + 1;
	else if (*i + 1 < argc)
		vals[k] = argv[++*i];	/* whatever it is, as pflag takes it */
	else
		return usage_error(out, err, errlen,
		    "flag needs an argument: %s", s);
	return 0;
}

/* A run of shorthand letters at argv[i]: nais has none but -h. */
static int
short_flags(const char *s, struct compat_cmdline *out, char *err,
    size_t errlen)
{
	char	 q[8];

	if (s[1] == 'h') {
		snprintf(err, errlen, "%s", compat_nais_usage);
		out->exit_status = 0;
		return -1;
	}
	/* Go's %q of the byte. */
	if ((unsigned char)s[1] >= 0x20 && (unsigned char)s[1] < 0x7f)
		snprintf(q, sizeof(q), s[1] == '\'' || s[1] == '\\' ?
		    "'\\%c'" : "'%c'", s[1]);
	else
		snprintf(q, sizeof(q), "'\\x%02x'", (unsigned char)s[1]);
	snprintf(err, errlen, "unknown shorthand flag: %s in %s\n%s", q, s,
	    compat_nais_usage);
	out->exit_status = EXIT_USAGE;
	return -1;
}

/* A nais exit 1: its message alone. */
static int
config_error(struct compat_cmdline *out, char *err, size_t errlen,
    const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	out->exit_status = EXIT_CONFIG;
	return -1;
}

int
compat_nais_args(struct config *c, int argc, char *argv[],
    struct compat_cmdline *out, char *err, size_t errlen)
{
	const char	*vals[NFLAGS], *v, *from[NFLAGS], *s;
	char		 msg[CONFIG_STR_MAX + 64], origin[64];
	size_t		 k, l;
	int		 i;

	memset(vals, 0, sizeof(vals));
	for (i = 1; i < argc; i++) {
		s = argv[i];
		if (compat_skip(argc, argv, &i))
			continue;
		if (s[0] != '-' || s[1] == '\0')
			continue;	/* positional: nais never reads them */
		if (strcmp(s, "--") == 0)
			break;		/* the rest is positional */
		if (s[1] == '-') {
			if (long_flag(argc, argv, &i, vals, out, err,
			    errlen) == -1)
				return -1;
		} else if (short_flags(s, out, err, errlen) == -1)
			return -1;
	}

	/* viper: the flag if given, else its variable if not empty. */
	for (k = 0; k < NFLAGS; k++) {
		from[k] = NULL;
		if (vals[k] == NULL && (v = getenv(flags[k].env)) != NULL &&
		    v[0] != '\0') {
			vals[k] = v;
			from[k] = flags[k].env;
		}
		if (vals[k] == NULL) {
			vals[k] = flags[k].def;
			from[k] = "";
		}
	}
	if (vals[F_ELECTION][0] == '\0' || vals[F_NAMESPACE][0] == '\0')
		return config_error(out, err, errlen, "both --election and "
		    "--election-namespace are required options");
	if (strcmp(vals[F_LOG_FORMAT], "text") != 0 &&
	    strcmp(vals[F_LOG_FORMAT], "json") != 0) {
		snprintf(msg, sizeof(msg), "log format \"%.200s\" is not "
		    "supported: use text or json", vals[F_LOG_FORMAT]);
		return config_error(out, err, errlen, msg);
	}
	for (l = 0; l < sizeof(levels) / sizeof(levels[0]); l++)
		if (strcasecmp(vals[F_LOG_LEVEL], levels[l].logrus) == 0)
			break;
	if (l == sizeof(levels) / sizeof(levels[0])) {
		snprintf(msg, sizeof(msg), "not a valid logrus Level: "
		    "\"%.200s\"", vals[F_LOG_LEVEL]);
		return config_error(out, err, errlen, msg);
	}
	vals[F_LOG_LEVEL] = levels[l].ours;

	for (k = 0; k < NFLAGS; k++) {
		v = vals[k];
		/* controller-runtime's "0" turns a listener off. */
		if ((strcmp(flags[k].key, "listen.probes") == 0 ||
		    strcmp(flags[k].key, "listen.metrics") == 0) &&
		    strcmp(v, "0") == 0)
			v = "";
		if (from[k] == NULL)
			snprintf(origin, sizeof(origin), "--%s",
			    flags[k].name);
		else if (from[k][0] != '\0')
			snprintf(origin, sizeof(origin), "$%s", from[k]);
		else
			snprintf(origin, sizeof(origin), "compat: nais");
		if (compat_set(c, flags[k].key, v, origin, err,
		    errlen) == -1) {
			out->exit_status = EXIT_USAGE;
			return -1;
		}
	}
	/* controller-runtime reads $KUBECONFIG before the pod's account. */
	if ((v = getenv("KUBECONFIG")) != NULL && v[0] != '\0' &&
	    compat_set(c, "kubernetes.kubeconfig", v, "$KUBECONFIG", err,
	    errlen) == -1) {
		out->exit_status = EXIT_USAGE;
		return -1;
	}
	return 0;
}

/*
 * nais/elector's defaults for what is still unset: the identity is the
 * hostname, the Pod's name (setup reads pods/<hostname>; $POD_NAME is
 * not read), a Lease that is never released, and its three listeners.
 * Its election and namespace have no default.
 */
void
compat_nais_finish(struct config *c)
{
	char	 host[CONFIG_STR_MAX];

	if (gethostname(host, sizeof(host)) == -1)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	compat_default(c, "nais", CONFIG_IDENTITY, host);
	compat_default(c, "nais", CONFIG_LOCK_TYPE, "leases");
	compat_default(c, "nais", CONFIG_RELEASE_ON_CANCEL, "false");
	compat_default(c, "nais", CONFIG_LISTEN_HTTP, "0.0.0.0:27070");
	compat_default(c, "nais", CONFIG_LISTEN_PROBES, "0.0.0.0:28080");
	compat_default(c, "nais", CONFIG_LISTEN_METRICS, "0.0.0.0:29090");
}
