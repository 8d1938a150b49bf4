/*
 * compat.c -- which peer sidecar leaderd stands in for, and the table of
 * them: each peer's command-line grammar (NULL for leaderd's own) and
 * its defaults.  The peers' own grammars are in compat_PEER.c.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/compat.h"
#include "config/compat_int.h"
#include "config/config.h"
#include "config/config_int.h"

/*
 * The classic leader-elector sidecar's defaults for what is still unset
 * (kubernetes/contrib election/example/main.go and lib/election.go):
 * an Endpoints lock in the namespace "default", --ttl 10s split into
 * lease 10s, renew 5s and retry 2.5s, and HTTP only with --http.
 */
static void
finish_classic(struct config *c)
{
	compat_default(c, "classic", CONFIG_LOCK_TYPE, "endpoints");
	compat_default(c, "classic", CONFIG_LOCK_NAMESPACE, "default");
	compat_default(c, "classic", CONFIG_LEASE_DURATION, "10s");
	compat_default(c, "classic", CONFIG_RENEW_DEADLINE, "5s");
	compat_default(c, "classic", CONFIG_RETRY_PERIOD, "2.5s");
	compat_default(c, "classic", CONFIG_LISTEN_HTTP, "");
}

static const struct peer {
	const char	*name;
	/* NULL: leaderd's own flags */
	int		(*args)(struct config *, int, char *[],
			    struct compat_cmdline *, char *, size_t);
	const char	*usage;
	void		(*finish)(struct config *);
} peers[] = {
	{ "classic", NULL, NULL, finish_classic },
	{ "vapor", compat_vapor_args, compat_vapor_usage, compat_vapor_finish },
	{ "await", compat_await_args, NULL, compat_await_finish },
	{ "nais", compat_nais_args, compat_nais_usage, compat_nais_finish },
};

/*
 * What selects a peer without --compat, first match wins: the binary's
 * name (the base name, or the whole path when it starts with "/"), an
 * environment variable that is set, or a flag (before any "=").
 */
static const struct {
	enum { BY_ARGV0, BY_PATH, BY_ENV, BY_FLAG } by;
	const char	*what;
	const char	*peer;
} selectors[] = {
	/* run.sh runs "/server --id=$(hostname) $@"; a bare "server"
	 * found on $PATH is too common a name to mean it. */
	{ BY_ARGV0,	"leader-elector",	"classic" },
	{ BY_PATH,	"/server",		"classic" },
	/*
	 * vapor-ware/k8s-elector reads Go's flag package, the one peer
	 * grammar with single-dash long flags: leaderd's getopt and the
	 * pflag of classic and nais read "-election" as the letters e, l,
	 * e..., and refuse it.  Its binary is "elector" (./elector in its
	 * image), nais/elector's too (/elector), so argv[0] does not select
	 * it; these rows come before any argv[0] row for "elector".
	 */
	{ BY_FLAG,	"-election",		"vapor" },
	{ BY_FLAG,	"-namespace",		"vapor" },
	{ BY_FLAG,	"-lock-type",		"vapor" },
	{ BY_FLAG,	"-ttl",			"vapor" },
	{ BY_FLAG,	"-http",		"vapor" },
	{ BY_FLAG,	"-id",			"vapor" },
	{ BY_FLAG,	"-kubeconfig",		"vapor" },
	/* Set even empty: then the command runs with no election. */
	{ BY_ARGV0,	"k8s-await-election",	"await" },
	{ BY_ENV,	"K8S_AWAIT_ELECTION_ENABLED", "await" },
	/*
	 * nais/elector's viper variables; naiserator sets ELECTOR_LOG_FORMAT
	 * in every injection.  Its binary's name, "elector", is also the
	 * one vapor-ware's users copy theirs to, so argv[0] cannot tell.
	 */
	{ BY_ENV,	"ELECTOR_ELECTION",	"nais" },
	{ BY_ENV,	"ELECTOR_ELECTION_NAMESPACE", "nais" },
	{ BY_ENV,	"ELECTOR_HTTP",		"nais" },
	{ BY_ENV,	"ELECTOR_PROBE_ADDRESS", "nais" },
	{ BY_ENV,	"ELECTOR_METRICS_ADDRESS", "nais" },
	{ BY_ENV,	"ELECTOR_LOG_FORMAT",	"nais" },
	{ BY_ENV,	"ELECTOR_LOG_LEVEL",	"nais" },
	{ BY_FLAG,	"--probe-address",	"nais" },
	{ BY_FLAG,	"--metrics-address",	"nais" },
};

/*
 * Whether the flag what (up to any "=") is on the command line before
 * any "--".  A single-dash long flag is Go's flag package's, which stops
 * at the first argument that is not a flag (or not the value of a flag
 * written without "="): it is looked for only before that, so the
 * arguments of a command a peer runs (k8s-await-election's) never
 * select by themselves.
 */
static int
flag_given(int argc, char *const argv[], const char *what)
{
	size_t		 n = strlen(what);
	const char	*e;
	int		 a, go = what[0] == '-' && what[1] != '-';

	for (a = 1; a < argc && strcmp(argv[a], "--") != 0; a++) {
		e = argv[a];
		if (strncmp(e, what, n) == 0 && (e[n] == '\0' || e[n] == '='))
			return 1;
		if (go && (e[0] != '-' || e[1] == '\0') && !(a > 1 &&
		    argv[a - 1][0] == '-' && argv[a - 1][1] != '\0' &&
		    strchr(argv[a - 1], '=') == NULL))
			return 0;
	}
	return 0;
}

static const struct peer *
peer_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
		if (strcmp(peers[i].name, name) == 0)
			return &peers[i];
	return NULL;
}

int
compat_known(const char *peer)
{
	return peer_find(peer) != NULL;
}

const char *
compat_names(void)
{
	static char	 names[128];
	size_t		 i, off = 0;

	if (names[0] != '\0')
		return names;
	for (i = 0; i < sizeof(peers) / sizeof(peers[0]); i++)
		off += snprintf(names + off, sizeof(names) - off, "%s%s",
		    i == 0 ? "" : ", ", peers[i].name);
	return names;
}

int
compat_for_life(const char *peer)
{
	/* nais/elector creates its Lease once, owned by its pod. */
	return strcmp(peer, "nais") == 0;
}

int
compat_own_args(const char *peer)
{
	const struct peer	*p = peer_find(peer);

	return p != NULL && p->args != NULL;
}

const char *
compat_usage(const char *peer)
{
	const struct peer	*p = peer_find(peer);

	return p != NULL && p->usage != NULL ? p->usage : "";
}

/* The value of a --compat flag at argv[*i], or NULL if it is not one. */
static const char *
compat_flag(int argc, char *const argv[], int *i)
{
	const char	*a = argv[*i];

	if (strncmp(a, "--", 2) == 0)
		a += 2;
	else if (a[0] == '-')
		a += 1;
	else
		return NULL;
	if (strncmp(a, "compat", 6) != 0)
		return NULL;
	if (a[6] == '=')
		return a + 7;
	if (a[6] == '\0' && *i + 1 < argc) {
		(*i)++;
		return argv[*i];
	}
	return NULL;
}

int
compat_skip(int argc, char *const argv[], int *i)
{
	return compat_flag(argc, argv, i) != NULL;
}

/*
 * Whether argv is leaderd's own command line, which no variable of a
 * peer's environment may turn into that peer's: a control word first,
 * or one of the words and flags only leaderd has.  await takes argv[1..]
 * as its command, so only argv[1] counts there (a command's own "-f"
 * stays the command's); nais reads flags only, so any of them counts,
 * before a "--".
 */
static int
leaderd_words(int argc, char *const argv[], const char *peer, int ctl_word)
{
	static const char *const own[] = { "run", "-f", "-n", "-v", "-nv",
	    "-vn", "--config" };
	const char	*a;
	size_t		 i;
	int		 n;

	if (ctl_word)
		return 1;
	for (n = 1; n < argc && strcmp(argv[n], "--") != 0; n++) {
		if (n > 1 && strcmp(peer, "await") == 0)
			break;
		a = argv[n];
		if (strncmp(a, "--config=", 9) == 0 ||
		    (strncmp(a, "-f", 2) == 0 && a[2] != '\0' &&
		    strcmp(peer, "await") != 0))
			return 1;
		for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
			if (strcmp(a, own[i]) == 0)
				return 1;
		/* No command starts with '-': it can only be a flag. */
		if (strcmp(peer, "await") == 0 && a[0] == '-')
			return 1;
	}
	return 0;
}

const char *
compat_select(int argc, char *const argv[], int ctl_word, char *why,
    size_t whylen, int *by_env)
{
	const char	*v, *base, *found = NULL, *ignored = NULL;
	size_t		 i;
	int		 a;

	if (whylen > 0)
		why[0] = '\0';
	if (by_env != NULL)
		*by_env = 0;
	for (a = 1; a < argc && strcmp(argv[a], "--") != 0; a++)
		if ((v = compat_flag(argc, argv, &a)) != NULL)
			found = v;	/* the last one wins */
	if (found != NULL) {
		snprintf(why, whylen, "--compat");
		return found;
	}
	if (argc < 1 || argv[0] == NULL)
		return NULL;
	base = (base = strrchr(argv[0], '/')) != NULL ? base + 1 : argv[0];
	for (i = 0; i < sizeof(selectors) / sizeof(selectors[0]); i++) {
		switch (selectors[i].by) {
		case BY_ARGV0:
			if (strcmp(base, selectors[i].what) == 0) {
				snprintf(why, whylen, "argv[0] %s", base);
				return selectors[i].peer;
			}
			break;
		case BY_PATH:
			if (strcmp(argv[0], selectors[i].what) == 0) {
				snprintf(why, whylen, "argv[0] %s", argv[0]);
				return selectors[i].peer;
			}
			break;
		case BY_ENV:
			if (getenv(selectors[i].what) == NULL)
				break;
			if (leaderd_words(argc, argv, selectors[i].peer,
			    ctl_word)) {
				if (ignored == NULL)
					ignored = selectors[i].what;
				break;
			}
			snprintf(why, whylen, "%s in the environment",
			    selectors[i].what);
			if (by_env != NULL)
				*by_env = 1;
			return selectors[i].peer;
		case BY_FLAG:
			if (flag_given(argc, argv, selectors[i].what)) {
				snprintf(why, whylen, "the flag %s",
				    selectors[i].what);
				return selectors[i].peer;
			}
			break;
		}
	}
	if (ignored != NULL) {
		snprintf(why, whylen, "%s in the environment is ignored: "
		    "leaderd's own flags or words were given", ignored);
		if (by_env != NULL)
			*by_env = 1;
	}
	return NULL;
}

const char *
compat_detect(int argc, char *const argv[])
{
	return compat_select(argc, argv, 0, NULL, 0, NULL);
}

int
compat_args(struct config *c, const char *peer, int argc, char *argv[],
    struct compat_cmdline *out, char *err, size_t errlen)
{
	const struct peer	*p = peer_find(peer);

	memset(out, 0, sizeof(*out));
	out->exit_status = -1;
	if (p == NULL || p->args == NULL) {
		snprintf(err, errlen, "compat \"%s\" reads leaderd's own "
		    "flags", peer);
		out->exit_status = 2;
		return -1;
	}
	if (config_set(c, "compat", peer, "--compat", err, errlen) == -1) {
		out->exit_status = 2;
		return -1;
	}
	return p->args(c, argc, argv, out, err, errlen);
}

void
compat_default(struct config *c, const char *peer, enum config_key key,
    const char *value)
{
	char	 why[512], origin[64];

	if (c->set[key])
		return;
	if (config_parse_value(c, &config_keys[key], value, why,
	    sizeof(why)) == 0) {
		snprintf(origin, sizeof(origin), "compat: %s", peer);
		config_origin_set(&c->origin[key], origin, 0, 0);
	}
	c->set[key] = 1;
}

int
compat_set(struct config *c, const char *key, const char *value,
    const char *flag, char *err, size_t errlen)
{
	return config_set(c, key, value, flag, err, errlen);
}

void
compat_finish(struct config *c)
{
	const struct peer	*p;

	if (c->compat[0] != '\0' && (p = peer_find(c->compat)) != NULL &&
	    p->finish != NULL)
		p->finish(c);
}
