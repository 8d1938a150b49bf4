/*
 * compat_await.c -- LINBIT k8s-await-election (main.go and
 * pkg/consts/consts.go, v0.4.x and HEAD; test/compat/peers.md section 4):
 * no flags, argv[1..] is the command that runs only while this instance
 * leads, and the election is configured by K8S_AWAIT_ELECTION_*.  Read
 * here into leaderd's run mode, in the order and with the messages and
 * exit status (1) of its main and NewAwaitElectionConfig.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/duration.h"
#include "codec/epslice.h"
#include "config/compat.h"
#include "config/compat_int.h"
#include "config/config.h"

#define PEER		"await"
#define ENV		"K8S_AWAIT_ELECTION_"
#define EXIT_FATAL	1	/* logrus Fatal */

/* The environment variables that must be set and not empty, in order. */
static const struct {
	const char	*var;
	const char	*key;		/* NULL: only checked */
} required[] = {
	{ ENV "NAME",		NULL },
	{ ENV "LOCK_NAME",	"lock.name" },
	{ ENV "LOCK_NAMESPACE",	"lock.namespace" },
	{ ENV "IDENTITY",	"identity" },
};

/* The durations, whole seconds by strconv.Atoi. */
static const struct {
	const char	*var;
	const char	*key;
} seconds[] = {
	{ ENV "LEASE_DURATION",	"lease_duration" },
	{ ENV "RENEW_DEADLINE",	"renew_deadline" },
	{ ENV "RETRY_PERIOD",	"retry_period" },
};

/*
 * Go's strconv.Atoi: an optional sign and decimal digits that fit an
 * int64, nothing else (no spaces, no '_').  Returns 0 or -1.
 */
static int
go_atoi(const char *s, long long *v)
{
	const char	*p = s;
	char		*end;

	if (*p == '+' || *p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	*v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	return 0;
}

/* An error the peer ends on: message in err, exit status 1. */
static int
fatal(struct compat_cmdline *out, char *err, size_t errlen,
    const char *msg)
{
	snprintf(err, errlen, "%s", msg);
	out->exit_status = EXIT_FATAL;
	return -1;
}

/* Set key from variable var; a value leaderd refuses is fatal. */
static int
set_env(struct config *c, const char *key, const char *var,
    const char *value, struct compat_cmdline *out, char *err,
    size_t errlen)
{
	if (compat_set(c, key, value, var, err, errlen) == -1) {
		out->exit_status = EXIT_FATAL;
		return -1;
	}
	return 0;
}

/*
 * The Service's endpoints (setServiceEndpoint): only with SERVICE_NAME,
 * when the ports must parse.  What the API server would refuse only once
 * this pod leads (no namespace, no IP, an empty nodeName) is refused here.
 */
static int
service(struct config *c, struct compat_cmdline *out, char *err,
    size_t errlen)
{
	const char	*name, *ns, *ports, *ip, *node;
	char		 why[512], msg[768];

	name = getenv(ENV "SERVICE_NAME");
	ports = getenv(ENV "SERVICE_PORTS_JSON");
	if (name == NULL || name[0] == '\0')
		return 0;
	if (epslice_ports_parse(ports != NULL ? ports : "", why,
	    sizeof(why)) == -1) {
		snprintf(msg, sizeof(msg), "failed to create runner: failed "
		    "to parse ports from env: %s (" ENV "SERVICE_PORTS_JSON: "
		    "a JSON array of EndpointPort, e.g. "
		    "'[{\"name\":\"http\",\"port\":80}]')", why);
		return fatal(out, err, errlen, msg);
	}
	ns = getenv(ENV "SERVICE_NAMESPACE");
	if (ns == NULL || ns[0] == '\0')
		return fatal(out, err, errlen, ENV "SERVICE_NAMESPACE is "
		    "empty: k8s-await-election would write the Endpoints "
		    "object without a namespace, which the API server "
		    "refuses; set it to the Service's namespace");
	ip = getenv(ENV "POD_IP");
	if (ip == NULL || ip[0] == '\0')
		return fatal(out, err, errlen, ENV "POD_IP is empty: the "
		    "Endpoints object would name no address; set it from the "
		    "downward API (fieldRef status.podIP)");
	node = getenv(ENV "NODE_NAME");
	if (node != NULL && node[0] == '\0')
		return fatal(out, err, errlen, ENV "NODE_NAME is set but "
		    "empty: k8s-await-election writes nodeName \"\", which "
		    "the API server refuses; set it from the downward API "
		    "(fieldRef spec.nodeName) or unset it");
	if (set_env(c, "actions.endpoints.service", ENV "SERVICE_NAME", name,
	    out, err, errlen) == -1 ||
	    set_env(c, "actions.endpoints.namespace", ENV "SERVICE_NAMESPACE",
	    ns, out, err, errlen) == -1 ||
	    set_env(c, "actions.endpoints.ip", ENV "POD_IP", ip, out, err,
	    errlen) == -1 ||
	    set_env(c, "actions.endpoints.ports_json",
	    ENV "SERVICE_PORTS_JSON", ports, out, err, errlen) == -1)
		return -1;
	if (node != NULL && set_env(c, "actions.endpoints.node_name",
	    ENV "NODE_NAME", node, out, err, errlen) == -1)
		return -1;
	return 0;
}

int
compat_await_args(struct config *c, int argc, char *argv[],
    struct compat_cmdline *out, char *err, size_t errlen)
{
	const char	*v, *a;
	char		 msg[256], dur[32];
	long long	 n;
	size_t		 i;
	int		 first = 1;

	/* leaderd --compat=await CMD...: the flag is ours, not CMD's. */
	if (argc > 1) {
		a = argv[1] + (strncmp(argv[1], "--", 2) == 0 ? 2 :
		    argv[1][0] == '-' ? 1 : 0);
		if (a != argv[1] && strncmp(a, "compat=", 7) == 0)
			first = 2;
		else if (a != argv[1] && strcmp(a, "compat") == 0)
			first = 3;
	}
	if (first >= argc)
		return fatal(out, err, errlen,
		    "Need at least one argument to run");
	out->cmd = argv + first;
	/* Since v0.4.0: without ENABLED, execve the command, no election. */
	if ((v = getenv(ENV "ENABLED")) == NULL || v[0] == '\0') {
		out->exec_direct = 1;
		return 0;
	}
	/* From here on a configuration refused later exits 1 too. */
	out->config_status = EXIT_FATAL;
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		if ((v = getenv(required[i].var)) == NULL || v[0] == '\0') {
			snprintf(msg, sizeof(msg), "failed to create runner: "
			    "config: missing required environment variable: "
			    "'%s'", required[i].var);
			return fatal(out, err, errlen, msg);
		}
		if (required[i].key != NULL && set_env(c, required[i].key,
		    required[i].var, v, out, err, errlen) == -1)
			return -1;
	}
	if ((v = getenv(ENV "STATUS_ENDPOINT")) != NULL && v[0] != '\0' &&
	    set_env(c, "listen.http", ENV "STATUS_ENDPOINT", v, out, err,
	    errlen) == -1)
		return -1;
	if (service(c, out, err, errlen) == -1)
		return -1;
	/* An unset or unreadable number keeps the default, silently. */
	for (i = 0; i < sizeof(seconds) / sizeof(seconds[0]); i++) {
		if ((v = getenv(seconds[i].var)) == NULL ||
		    go_atoi(v, &n) == -1)
			continue;
		if (n <= 0 || n > INT32_MAX) {
			snprintf(msg, sizeof(msg), "failed to run: failed to "
			    "create leader elector: %s=%s: give a whole "
			    "number of seconds greater than zero",
			    seconds[i].var, v);
			return fatal(out, err, errlen, msg);
		}
		duration_format((uint64_t)n * 1000, dur, sizeof(dur));
		if (set_env(c, seconds[i].key, seconds[i].var, dur, out, err,
		    errlen) == -1)
			return -1;
	}
	return 0;
}

/*
 * What k8s-await-election has and leaderd's run mode gets by default
 * otherwise: a Lease, 15s / 10s / 2s, the release on exit, no listener
 * without STATUS_ENDPOINT, the command never restarted, the Endpoints
 * object alone (mirrored into a slice by the control plane) without a
 * targetRef.  run.grace is kept within lease_duration - renew_deadline,
 * so that a command stopped at the end of the claim is gone before
 * another instance may take the Lease (config_check_grace).
 */
void
compat_await_finish(struct config *c)
{
	uint64_t	 grace;
	char		 buf[32];

	compat_default(c, PEER, CONFIG_LOCK_TYPE, "leases");
	compat_default(c, PEER, CONFIG_LEASE_DURATION, "15s");
	compat_default(c, PEER, CONFIG_RENEW_DEADLINE, "10s");
	compat_default(c, PEER, CONFIG_RETRY_PERIOD, "2s");
	compat_default(c, PEER, CONFIG_RELEASE_ON_CANCEL, "true");
	compat_default(c, PEER, CONFIG_LISTEN_HTTP, "");
	compat_default(c, PEER, CONFIG_RUN_RESTART, "never");
	compat_default(c, PEER, CONFIG_LABEL_POD, "");
	compat_default(c, PEER, CONFIG_EP_SLICE, "false");
	compat_default(c, PEER, CONFIG_EP_LEGACY, "true");
	if (c->lease_duration_ms > c->renew_deadline_ms) {
		grace = c->lease_duration_ms - c->renew_deadline_ms;
		if (grace > c->run_grace_ms)
			grace = c->run_grace_ms;
		duration_format(grace, buf, sizeof(buf));
		compat_default(c, PEER, CONFIG_RUN_GRACE, buf);
	}
}
