/*
 * ctl.c -- the control commands' command line: which command, which
 * local API to ask (the flags, else the configuration file's listeners,
 * else localhost:4040), and how to print.  The requests themselves are
 * daemon/ctl.c's.  Wiring only, as main.c.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/duration.h"
#include "base/netaddr.h"
#include "config/config.h"
#include "config/creds.h"
#include "daemon/ctl.h"
#include "tool/doctor.h"
#include "ctl.h"

#define CTL_DEFAULT_HTTP	"localhost:4040"
#define CTL_SLACK_MS		5000	/* past the daemon's own limit */

enum { CMD_STATUS, CMD_RELEASE, CMD_PAUSE, CMD_RESUME, CMD_WAIT_LEADER };

static const struct {
	const char	*name;
	int		 cmd;
} commands[] = {
	{ "status",		CMD_STATUS },
	{ "release",		CMD_RELEASE },
	{ "pause",		CMD_PAUSE },
	{ "resume",		CMD_RESUME },
	{ "wait-leader",	CMD_WAIT_LEADER },
};

enum { OPT_HTTP = 256, OPT_UNIX, OPT_JSON, OPT_TO, OPT_TIMEOUT };

static const struct option longopts[] = {
	{ "config",		required_argument, NULL, 'f' },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "http",		required_argument, NULL, OPT_HTTP },
	{ "unix-socket",	required_argument, NULL, OPT_UNIX },
	{ "json",		no_argument,	   NULL, OPT_JSON },
	{ "to",			required_argument, NULL, OPT_TO },
	{ "timeout",		required_argument, NULL, OPT_TIMEOUT },
	{ NULL, 0, NULL, 0 }
};

static void __attribute__((noreturn))
usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: leaderd status [--json] [where]\n"
	    "       leaderd release [--to ID] [--json] [where]\n"
	    "       leaderd pause | resume [--json] [where]\n"
	    "       leaderd wait-leader [--timeout D] [--json] [where]\n"
	    "  status                      who leads, and whether this "
	    "instance does\n"
	    "  release                     step down (POST /leader/release)\n"
	    "  --to ID                     hand the lease to ID (needs a "
	    "leaderd with\n"
	    "                              directed handover)\n"
	    "  pause, resume               leave candidacy, come back\n"
	    "  wait-leader                 exit 0 once this instance leads\n"
	    "  --timeout D                 give up after D (exit 4); default: "
	    "no limit\n"
	    "  --json                      print the daemon's JSON answers as "
	    "they are\n"
	    "where, the local API to ask (default: localhost:4040):\n"
	    "  --unix-socket PATH          its unix socket\n"
	    "  --http HOST:PORT            its TCP listener\n"
	    "  -f, --config FILE           the listeners of leaderd's "
	    "configuration file\n"
	    "                              (listen.unix first, else "
	    "listen.http)\n"
	    "exit status: 0 done, 1 the daemon said no, 2 usage, 3 cannot "
	    "reach leaderd,\n"
	    "4 wait-leader timed out\n");
	exit(status);
}

static void __attribute__((noreturn))
usage_error(const char *cmd, const char *what)
{
	fprintf(stderr, "leaderd: %s: %s\n", cmd, what);
	usage(CTL_EXIT_USAGE);
}

int
ctl_is_command(const char *word)
{
	size_t	 i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(word, commands[i].name) == 0)
			return 1;
	return 0;
}

int
ctl_command(int argc, char *argv[])
{
	static struct config	 conf;
	struct ctl_target	 t;
	const char		*name = argv[1], *file = NULL, *http = NULL;
	const char		*unix_path = NULL, *to = NULL, *timeout = NULL;
	char			 err[CONFIG_ERR_MAX], host[256], port[16];
	char			 msg[CONFIG_ERR_MAX + 128];
	uint64_t		 ms;
	int64_t			 timeout_ms = -1;
	int			 ch, cmd = -1, json = 0;
	size_t			 i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(name, commands[i].name) == 0)
			cmd = commands[i].cmd;
	/* The flags come after the command word: parse from there. */
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc - 1, argv + 1, "f:h", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'f':
			file = optarg;
			break;
		case 'h':
			usage(0);
		case OPT_HTTP:
			http = optarg;
			break;
		case OPT_UNIX:
			unix_path = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_TO:
			if (cmd != CMD_RELEASE)
				usage_error(name, "--to is for release only");
			to = optarg;
			break;
		case OPT_TIMEOUT:
			if (cmd != CMD_WAIT_LEADER)
				usage_error(name, "--timeout is for "
				    "wait-leader only");
			timeout = optarg;
			break;
		default:
			snprintf(msg, sizeof(msg), "an unknown option, or one "
			    "without its value: \"%s\"", argv[optind]);
			usage_error(name, msg);
		}
	}
	if (optind + 1 < argc) {
		snprintf(msg, sizeof(msg), "unexpected argument \"%s\"",
		    argv[optind + 1]);
		usage_error(name, msg);
	}
	if (http != NULL && unix_path != NULL)
		usage_error(name, "give --unix-socket or --http, not both");
	if (timeout != NULL) {
		if (duration_parse(timeout, &ms, err, sizeof(err)) == -1) {
			snprintf(msg, sizeof(msg), "--timeout: %s", err);
			usage_error(name, msg);
		}
		timeout_ms = (int64_t)ms;
	}

	/* The file, for its listeners and its durations. */
	config_defaults(&conf);
	if (file != NULL && config_load(&conf, file, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s%s", err, err[0] != '\0' &&
		    err[strlen(err) - 1] != '\n' ? "\n" : "");
		return CTL_EXIT_USAGE;
	}
	config_finish(&conf, getenv("LEADERD_SA_DIR"));
	if (http == NULL && unix_path == NULL) {
		if (file == NULL)
			http = CTL_DEFAULT_HTTP;
		else if (conf.listen_unix[0] != '\0')
			unix_path = conf.listen_unix;
		else if (conf.listen_http[0] != '\0')
			http = conf.listen_http;
		else {
			fprintf(stderr, "leaderd: %s: %s has no local API "
			    "listener (listen.unix, listen.http); name one "
			    "with --unix-socket or --http\n", name, file);
			return CTL_EXIT_USAGE;
		}
	}
	err[0] = '\0';
	if (http != NULL && (netaddr_split(http, 0, host, sizeof(host), port,
	    sizeof(port), err, sizeof(err)) == -1 ||
	    netaddr_port(port) <= 0)) {
		snprintf(msg, sizeof(msg), "--http %s: %s", http,
		    err[0] != '\0' ? err : "the port must be a number from 1 "
		    "to 65535");
		usage_error(name, msg);
	}

	memset(&t, 0, sizeof(t));
	t.unix_path = unix_path;
	t.http = http;
	t.json = json;
	/* A step-down is answered within renew_deadline + request_timeout. */
	t.release_ms = conf.renew_deadline_ms + conf.request_timeout_ms +
	    CTL_SLACK_MS;
	switch (cmd) {
	case CMD_STATUS:
		return ctl_status(&t);
	case CMD_RELEASE:
		return ctl_release(&t, to);
	case CMD_PAUSE:
	case CMD_RESUME:
		return ctl_pause(&t, cmd == CMD_PAUSE);
	default:
		return ctl_wait_leader(&t, timeout_ms);
	}
}

int
ctl_doctor(const struct config *c, struct kube_creds *creds)
{
	char		 ns[256] = "", path[512], err[256];
	const char	*env = getenv("POD_NAMESPACE"), *sa_dir;
	char		*s;

	/* This pod's namespace: $POD_NAMESPACE, else its account's file. */
	if (env != NULL)
		snprintf(ns, sizeof(ns), "%s", env);
	else {
		sa_dir = getenv("LEADERD_SA_DIR");
		snprintf(path, sizeof(path), "%s/namespace", sa_dir != NULL ?
		    sa_dir : KUBE_SA_DIR);
		if ((s = creds_read_token(path, err, sizeof(err))) != NULL) {
			snprintf(ns, sizeof(ns), "%s", s);
			free(s);
		}
	}
	return doctor_pod_main(c, creds, ns);
}
