/*
 * plugin.c -- `kubectl leaderd`: the leaderd binary invoked as
 * kubectl-leaderd (cmd/leaderd/main.c selects it by argv[0]).  Its
 * command line (kubectl's flags: --kubeconfig, --context, -n, -A, and
 * each subcommand's) and the table of subcommands; the subcommands are
 * plugin_get.c's, plugin_shards.c's, plugin_move.c's and doctor.c's.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/duration.h"
#include "tool/tool.h"


/* The flags a subcommand takes beside the connection's. */
#define F_OUTPUT	0x01	/* -o */
#define F_ALLNS		0x02	/* -A */
#define F_SELECTOR	0x04	/* -l */
#define F_WATCH		0x08	/* -w */
#define F_MOVE		0x10	/* --to, --timeout, --force */

static const struct subcommand {
	const char	*name;
	int		(*run)(struct tool *);
	int		 flags;		/* F_* it takes */
	int		 min_args;	/* words after it */
	int		 max_args;
	const char	*usage;		/* its line of the usage */
	const char	*what;		/* one line on what it does */
} subcommands[] = {
	{ "get", plugin_get, F_OUTPUT | F_ALLNS | F_SELECTOR | F_WATCH, 0, 1,
	    "get [LEASE] [-A] [-o wide|json|yaml] [-l SELECTOR] [-w]",
	    "every Lease: holder, renewed, expires, transitions, candidates" },
	{ "shards", plugin_shards, 0, 1, 1,
	    "shards GROUP",
	    "a shard group: each shard's owner and time left, the members" },
	{ "move", plugin_move, F_MOVE, 1, 1,
	    "move LEASE --to ID [--timeout D] [--force]",
	    "hand LEASE to ID (preferredHolder) and wait until ID holds it" },
	{ "doctor", plugin_doctor, F_ALLNS | F_SELECTOR, 0, 1,
	    "doctor [LEASE] [-A] [-l SELECTOR]",
	    "the checks to run when nobody leads, each finding with its fix" },
};

enum { OPT_KUBECONFIG = 256, OPT_CONTEXT, OPT_TO, OPT_TIMEOUT, OPT_FORCE,
    OPT_REQUEST_TIMEOUT };

static const struct option longopts[] = {
	{ "kubeconfig",		required_argument, NULL, OPT_KUBECONFIG },
	{ "context",		required_argument, NULL, OPT_CONTEXT },
	{ "namespace",		required_argument, NULL, 'n' },
	{ "all-namespaces",	no_argument,	   NULL, 'A' },
	{ "output",		required_argument, NULL, 'o' },
	{ "selector",		required_argument, NULL, 'l' },
	{ "watch",		no_argument,	   NULL, 'w' },
	{ "to",			required_argument, NULL, OPT_TO },
	{ "timeout",		required_argument, NULL, OPT_TIMEOUT },
	{ "force",		no_argument,	   NULL, OPT_FORCE },
	{ "request-timeout",	required_argument, NULL, OPT_REQUEST_TIMEOUT },
	{ "help",		no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void
usage(const char *prog, FILE *f)
{
	size_t	 i;

	fprintf(f, "usage: %s COMMAND [flags]\n", prog);
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %s %s\n      %s\n", prog, subcommands[i].usage,
		    subcommands[i].what);
	fprintf(f,
	    "flags of every command:\n"
	    "  --kubeconfig FILE     the kubeconfig (default: $KUBECONFIG, a "
	    "list, else\n"
	    "                        ~/.kube/config, else the in-cluster "
	    "account)\n"
	    "  --context NAME        the context (default: current-context)\n"
	    "  -n, --namespace NS    the namespace (default: the context's, "
	    "else default)\n"
	    "  --request-timeout D   bound on each request (default 10s)\n"
	    "exit status: 0 done, 1 refused, unreachable, timed out or "
	    "found wrong, 2 usage\n");
}

static int
bad_usage(const char *prog, const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (%s --help)\n", prog);
	return TOOL_EXIT_USAGE;
}

/* Which flag of F_* an option is, 0 for the connection's. */
static int
flag_of(int ch)
{
	switch (ch) {
	case 'o':		return F_OUTPUT;
	case 'A':		return F_ALLNS;
	case 'l':		return F_SELECTOR;
	case 'w':		return F_WATCH;
	case OPT_TO:
	case OPT_TIMEOUT:
	case OPT_FORCE:		return F_MOVE;
	default:		return 0;
	}
}

/* The long name of option ch, for messages. */
static const char *
flag_name(int ch)
{
	size_t	 i;

	for (i = 0; longopts[i].name != NULL; i++)
		if (longopts[i].val == ch)
			return longopts[i].name;
	return "?";
}

static int
parse_duration(const char *prog, const char *flag, const char *s,
    uint64_t *ms)
{
	char	 err[200];

	if (duration_parse(s, ms, err, sizeof(err)) == -1 || *ms == 0) {
		fprintf(stderr, "%s: %s \"%s\": %s (a duration such as 30s "
		    "or 2m)\n", prog, flag, s, *ms == 0 && err[0] == '\0' ?
		    "must be more than 0" : err);
		return -1;
	}
	return 0;
}

int
plugin_main(int argc, char *argv[])
{
	return tool_main("kubectl leaderd", argc, argv);
}

int
tool_main(const char *prog, int argc, char *argv[])
{
	const struct subcommand	*sc = NULL;
	struct tool_opts	 o;
	struct tool		 t;
	const char		*optname;
	size_t			 i;
	int			 ch, rc, f;

	memset(&o, 0, sizeof(o));
	o.output = "";
	o.timeout_ms = TOOL_MOVE_TIMEOUT_MS;
	o.request_timeout_ms = TOOL_REQUEST_TIMEOUT_MS;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":n:Ao:l:wh", longopts,
	    NULL)) != -1) {
		optname = argv[optind - 1];
		/* pflag's "-n=NS" is "-n NS", as kubectl reads it. */
		if (optarg != NULL && optarg[0] == '=' &&
		    optname[0] == '-' && optname[1] != '-')
			optarg++;
		if (ch == '?')
			return bad_usage(prog, "unknown flag \"%s\"", optname);
		if (ch == ':')
			return bad_usage(prog, "%s needs a value", optname);
		switch (ch) {
		case OPT_KUBECONFIG:	o.kubeconfig = optarg; break;
		case OPT_CONTEXT:	o.context = optarg; break;
		case 'n':		o.namespace = optarg; break;
		case 'A':		o.all_ns = 1; break;
		case 'o':		o.output = optarg; break;
		case 'l':		o.selector = optarg; break;
		case 'w':		o.watch = 1; break;
		case OPT_TO:		o.to = optarg; break;
		case OPT_FORCE:		o.force = 1; break;
		case OPT_TIMEOUT:
			if (parse_duration(prog, "--timeout", optarg,
			    &o.timeout_ms) == -1)
				return TOOL_EXIT_USAGE;
			break;
		case OPT_REQUEST_TIMEOUT:
			if (parse_duration(prog, "--request-timeout", optarg,
			    &o.request_timeout_ms) == -1)
				return TOOL_EXIT_USAGE;
			break;
		case 'h':
			usage(prog, stdout);
			return TOOL_EXIT_OK;
		}
	}
	if (optind >= argc) {
		usage(prog, stderr);
		return TOOL_EXIT_USAGE;
	}
	for (i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(argv[optind], subcommands[i].name) == 0)
			sc = &subcommands[i];
	if (sc == NULL)
		return bad_usage(prog, "unknown command \"%s\"", argv[optind]);
	o.args = argv + optind + 1;
	o.nargs = argc - optind - 1;
	if (o.nargs < sc->min_args || o.nargs > sc->max_args)
		return bad_usage(prog, "wrong number of arguments: %s",
		    sc->usage);

	/* Each flag given must be one the subcommand takes. */
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":n:Ao:l:wh", longopts,
	    NULL)) != -1)
		if ((f = flag_of(ch)) != 0 && (sc->flags & f) == 0)
			return bad_usage(prog, "--%s: not a flag of this "
			    "command", flag_name(ch));
	if (strcmp(o.output, "") != 0 && strcmp(o.output, "wide") != 0 &&
	    strcmp(o.output, "json") != 0 && strcmp(o.output, "yaml") != 0)
		return bad_usage(prog, "-o \"%s\": one of wide, json or yaml",
		    o.output);
	if (o.all_ns && o.namespace != NULL)
		return bad_usage(prog, "%s", "-A and -n: give one");
	if (o.all_ns && o.nargs > 0 && sc->run == plugin_get)
		return bad_usage(prog, "%s", "a Lease is named in one "
		    "namespace: -n NS, not -A");
	if (sc->flags & F_MOVE && o.to == NULL)
		return bad_usage(prog, "%s", "move needs --to ID");

	if (tool_open(&t, prog, &o) == -1) {
		tool_close(&t);
		return TOOL_EXIT_FAIL;
	}
	rc = sc->run(&t);
	tool_close(&t);
	return rc;
}
