/*
 * config_check_run.c -- the rules of what leading does and of who may
 * lead: run.restart, actions.label and actions.endpoints; candidacy's
 * application probe and stream, coordinated election and handover.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/netaddr.h"
#include "codec/epslice.h"
#include "codec/leasecand.h"
#include "config/compat.h"
#include "config/config.h"
#include "config/config_check_int.h"
#include "config/config_int.h"

/* A label name: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, <= 63. */
static int
label_name(const char *s)
{
	size_t	 i, n = strlen(s);

	if (n == 0 || n > 63)
		return 0;
	for (i = 0; i < n; i++) {
		int	 alnum = (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9');

		if (!alnum && ((i == 0 || i == n - 1) ||
		    (s[i] != '-' && s[i] != '_' && s[i] != '.')))
			return 0;
	}
	return 1;
}

/* run.restart, and actions.label when it is enabled. */
void
config_check_actions(const struct config *c, struct config_errs *e)
{
	if (strcmp(c->run_restart, "never") != 0 &&
	    strcmp(c->run_restart, "restart") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_RUN_RESTART), "run.restart "
		    "\"%s\" is not never or restart", c->run_restart);
	config_check_label_key(c, e);
	if (!c->label_enabled)
		return;
	if (c->label_pod[0] == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_LABEL_ENABLED),
		    "actions.label.enabled needs the pod's name: set "
		    "actions.label.pod, or $POD_NAME from the downward API "
		    "(fieldRef metadata.name)");
	else if (!config_dns_subdomain(c->label_pod))
		config_errs_add(e, ORIGIN(c, CONFIG_LABEL_POD),
		    "actions.label.pod \"%s\" is not a valid pod name",
		    c->label_pod);
	if (c->label_namespace[0] != '\0' &&
	    !config_dns_label(c->label_namespace, strlen(c->label_namespace),
	    63))
		config_errs_add(e, ORIGIN(c, CONFIG_LABEL_NAMESPACE),
		    "actions.label.namespace \"%s\" is not a valid "
		    "namespace", c->label_namespace);
}

/* actions.label.key is a label key. */
void
config_check_label_key(const struct config *c, struct config_errs *e)
{
	const char	*k = c->label_key, *slash;
	char		 prefix[CONFIG_STR_MAX];

	if ((slash = strchr(k, '/')) != NULL) {
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(slash - k), k);
		k = slash + 1;
	} else
		prefix[0] = '\0';
	if (!label_name(k) || (slash != NULL && !config_dns_subdomain(prefix)))
		config_errs_add(e, ORIGIN(c, CONFIG_LABEL_KEY),
		    "actions.label.key \"%s\" is not a label key: an "
		    "optional DNS subdomain and '/', then at most 63 letters, "
		    "digits, '-', '_' and '.', starting and ending with a "
		    "letter or digit", c->label_key);
}

/* actions.endpoints when a Service is named. */
void
config_check_endpoints(const struct config *c, struct config_errs *e)
{
	struct netaddr_ip	 ip;
	char			 why[256];

	if (c->ep_service[0] == '\0')
		return;
	/* "<service>-leader" must be a DNS subdomain too. */
	if (!config_dns_label(c->ep_service, strlen(c->ep_service), 63))
		config_errs_add(e, ORIGIN(c, CONFIG_EP_SERVICE),
		    "actions.endpoints.service \"%s\" is not a valid Service "
		    "name (a DNS label: lower-case letters, digits and '-', at "
		    "most 63)", c->ep_service);
	if (c->ep_ip[0] == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_EP_SERVICE),
		    "actions.endpoints.service needs this pod's IP: set "
		    "actions.endpoints.ip, or $POD_IP from the downward API "
		    "(fieldRef status.podIP)");
	else if (netaddr_ip_parse(c->ep_ip, &ip) == -1)
		config_errs_add(e, ORIGIN(c, CONFIG_EP_IP),
		    "actions.endpoints.ip \"%s\" is not an IPv4 or IPv6 "
		    "address", c->ep_ip);
	if (c->ep_namespace[0] != '\0' &&
	    !config_dns_label(c->ep_namespace, strlen(c->ep_namespace), 63))
		config_errs_add(e, ORIGIN(c, CONFIG_EP_NAMESPACE),
		    "actions.endpoints.namespace \"%s\" is not a valid "
		    "namespace", c->ep_namespace);
	if (c->ep_port < 0 || c->ep_port > 65535)
		config_errs_add(e, ORIGIN(c, CONFIG_EP_PORT),
		    "actions.endpoints.port %d is not 0 (no port) or a port "
		    "1-65535", c->ep_port);
	if (c->ep_port_name[0] != '\0' && (c->ep_port == 0 ||
	    !config_dns_label(c->ep_port_name, strlen(c->ep_port_name), 15)))
		config_errs_add(e, ORIGIN(c, CONFIG_EP_PORT_NAME),
		    "actions.endpoints.port_name \"%s\" needs "
		    "actions.endpoints.port and must be the Service port's "
		    "name (a DNS label, at most 15)", c->ep_port_name);
	if (c->ep_ports_json[0] != '\0' &&
	    epslice_ports_check(c->ep_ports_json, why, sizeof(why)) == -1)
		config_errs_add(e, ORIGIN(c, CONFIG_EP_PORTS_JSON),
		    "actions.endpoints.ports_json: %s", why);
	else if (c->ep_ports_json[0] != '\0' && (c->ep_port != 0 ||
	    c->ep_port_name[0] != '\0'))
		config_errs_add(e, ORIGIN(c, config_later(c,
		    CONFIG_EP_PORTS_JSON, c->ep_port != 0 ? CONFIG_EP_PORT :
		    CONFIG_EP_PORT_NAME)),
		    "actions.endpoints.ports_json and actions.endpoints.port "
		    "(or port_name) both name the ports; keep one");
	if (c->ep_node_name[0] != '\0' &&
	    !config_dns_subdomain(c->ep_node_name))
		config_errs_add(e, ORIGIN(c, CONFIG_EP_NODE_NAME),
		    "actions.endpoints.node_name \"%s\" is not a valid node "
		    "name (a DNS subdomain)", c->ep_node_name);
	if (!c->ep_slice && !c->ep_legacy)
		config_errs_add(e, ORIGIN(c, CONFIG_EP_SLICE),
		    "actions.endpoints.slice is false and legacy is not true: "
		    "nothing would be written; set legacy: true to keep the "
		    "core Endpoints object alone");
}

/* require_client beside a listen.http off the loopback (review L2). */
int
config_check_client_listen(const struct config *c, char *err, size_t errlen)
{
	struct config_errs	 e = { err, errlen, 0, 0 };
	char			 host[CONFIG_STR_MAX], port[16], why[64];

	if (!c->require_client || c->listen_http[0] == '\0')
		return 0;
	if (netaddr_split(c->listen_http, 0, host, sizeof(host), port,
	    sizeof(port), why, sizeof(why)) == -1)
		snprintf(port, sizeof(port), "PORT");
	else if (strcasecmp(host, "localhost") == 0 ||
	    netaddr_is_loopback(host))
		return 0;
	err[0] = '\0';
	config_errs_add(&e, ORIGIN(c, CONFIG_LISTEN_HTTP), "listen.http \"%s\" "
	    "is reachable from off the pod and candidacy.require_client is "
	    "on: only streams from this pod (the unix socket, a loopback "
	    "address) keep this instance a candidate, and peers off the pod "
	    "hold at most half of listen.max_streams; to serve this pod "
	    "only, set listen.http to localhost:%s (and listen.probes for "
	    "the kubelet's probes)", c->listen_http, port);
	return -1;
}

/*
 * candidacy: the application probe's URL, by default only to this pod
 * (loopback, localhost, or $POD_IP): a probe is the application's
 * health, and a host elsewhere would make another pod's health decide
 * this one's candidacy.
 */
void
config_check_candidacy(const struct config *c, struct config_errs *e)
{
	char		 scheme[16], host[256], why[256];
	const char	*path, *pod_ip;
	int		 port;

	if (c->probe_period_ms == 0 || c->probe_timeout_ms == 0)
		config_errs_add(e, ORIGIN(c, c->probe_period_ms == 0 ?
		    CONFIG_PROBE_PERIOD : CONFIG_PROBE_TIMEOUT),
		    "candidacy.probe.period and timeout must be greater "
		    "than zero (defaults 2s and 1s)");
	else if (c->probe_timeout_ms > c->probe_period_ms)
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_TIMEOUT),
		    "candidacy.probe.timeout (%llums) is longer than its "
		    "period (%llums): a probe must end before the next "
		    "starts; lower the timeout or lengthen the period",
		    (unsigned long long)c->probe_timeout_ms,
		    (unsigned long long)c->probe_period_ms);
	if (c->probe_failures < 1 || c->probe_failures > 1000)
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_FAILURES),
		    "candidacy.probe.failure_threshold %d is not from 1 to "
		    "1000 (default 3)", c->probe_failures);
	if (c->probe_successes < 1 || c->probe_successes > 1000)
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_SUCCESSES),
		    "candidacy.probe.success_threshold %d is not from 1 to "
		    "1000 (default 1)", c->probe_successes);
	if (c->require_client && c->listen_http[0] == '\0' &&
	    c->listen_unix[0] == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_REQUIRE_CLIENT),
		    "candidacy.require_client needs a listener for the "
		    "client's stream: set listen.http or listen.unix");
	if (c->probe_url[0] == '\0')
		return;
	if (netaddr_url_split(c->probe_url, scheme, sizeof(scheme), host,
	    sizeof(host), &port, &path, why, sizeof(why)) == -1) {
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_URL),
		    "candidacy.probe.url \"%s\": %s", c->probe_url, why);
		return;
	}
	if (strcmp(scheme, "http") != 0 && strcmp(scheme, "tcp") != 0) {
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_URL),
		    "candidacy.probe.url \"%s\": the scheme must be http "
		    "(a GET, healthy on 200-399) or tcp (a connect)",
		    c->probe_url);
		return;
	}
	if (strcmp(scheme, "tcp") == 0 && strcmp(path, "/") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_URL),
		    "candidacy.probe.url \"%s\": a tcp probe has no path; "
		    "write tcp://HOST:PORT", c->probe_url);
	pod_ip = getenv("POD_IP");
	if (!c->probe_any_host && strcasecmp(host, "localhost") != 0 &&
	    !netaddr_is_loopback(host) &&
	    (pod_ip == NULL || strcmp(host, pod_ip) != 0))
		config_errs_add(e, ORIGIN(c, CONFIG_PROBE_URL),
		    "candidacy.probe.url \"%s\": host %s is not this pod "
		    "(loopback, localhost or $POD_IP); probe the application "
		    "beside leaderd, or set candidacy.probe.any_host: true",
		    c->probe_url, host);
}

/*
 * Coordinated election (candidacy.coordinated) and handover: a Lease
 * lock, versions the API server takes, a strategy it knows, and an
 * identity that can name a LeaseCandidate.
 */
void
config_check_coordinated(const struct config *c, struct config_errs *e)
{
	const char	*p, *slash;

	if (strcmp(c->handover, "none") != 0 &&
	    strcmp(c->handover, "auto") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_HANDOVER),
		    "handover \"%s\" is not none or auto", c->handover);
	if (!c->coordinated)
		return;
	if (strcmp(c->lock_type, "leases") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_COORDINATED),
		    "candidacy.coordinated needs lock.type leases, not %s",
		    c->lock_type);
	if (c->compat[0] != '\0' && compat_for_life(c->compat))
		config_errs_add(e, ORIGIN(c, CONFIG_COORDINATED),
		    "candidacy.coordinated cannot be used with compat %s "
		    "(a lease held for life)", c->compat);
	if (c->binary_version[0] == '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_COORDINATED),
		    "candidacy.coordinated needs candidacy.binary_version, "
		    "the version of this binary as MAJOR.MINOR.PATCH "
		    "(e.g. 1.4.0)");
	else if (!lease_cand_version_ok(c->binary_version))
		config_errs_add(e, ORIGIN(c, CONFIG_BINARY_VERSION),
		    "candidacy.binary_version \"%s\" is not semver, "
		    "MAJOR.MINOR.PATCH (digits, no leading v)", c->binary_version);
	if (c->emulation_version[0] != '\0' &&
	    !lease_cand_version_ok(c->emulation_version))
		config_errs_add(e, ORIGIN(c, CONFIG_EMULATION_VERSION),
		    "candidacy.emulation_version \"%s\" is not semver, "
		    "MAJOR.MINOR.PATCH (digits, no leading v)", c->emulation_version);
	else if (c->emulation_version[0] != '\0' &&
	    lease_cand_version_ok(c->binary_version) &&
	    lease_cand_version_cmp(c->emulation_version,
	    c->binary_version) > 0)
		config_errs_add(e, ORIGIN(c, CONFIG_EMULATION_VERSION),
		    "candidacy.emulation_version %s is newer than "
		    "binary_version %s; it must not be", c->emulation_version,
		    c->binary_version);
	slash = strchr(c->cle_strategy, '/');
	if (strcmp(c->cle_strategy, "OldestEmulationVersion") != 0 &&
	    (slash == NULL || slash == c->cle_strategy || slash[1] == '\0' ||
	    strchr(slash + 1, '/') != NULL))
		config_errs_add(e, ORIGIN(c, CONFIG_CLE_STRATEGY),
		    "candidacy.strategy \"%s\" is neither "
		    "OldestEmulationVersion nor a qualified name "
		    "(example.com/name)", c->cle_strategy);
	for (p = c->identity; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		    *p == '-' || *p == '.')) {
			config_errs_add(e, ORIGIN(c, CONFIG_IDENTITY),
			    "identity \"%s\" cannot name a LeaseCandidate "
			    "(candidacy.coordinated): use lower-case letters, "
			    "digits, '-' and '.' only", c->identity);
			break;
		}
}
