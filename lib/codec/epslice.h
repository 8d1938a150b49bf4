/*
 * epslice.h -- the bodies of the leader's endpoints (actions.endpoints):
 * the discovery.k8s.io/v1 EndpointSlice "<service>-leader" and, for old
 * clusters, the core/v1 Endpoints object of the Service, each naming one
 * address (the leader's) or none (written by a leader that steps down).
 */

#ifndef EPSLICE_H
#define EPSLICE_H

#include <stddef.h>

/* What the objects say; every string borrowed. */
struct epslice {
	const char	*service;	/* the selectorless Service */
	const char	*ns;		/* its namespace */
	const char	*ip;		/* the leader's IPv4 or IPv6 address */
	int		 port;		/* 0: no ports */
	const char	*port_name;	/* "" or the Service port's name */
	const char	*pod;		/* targetRef; "" = none */
	const char	*pod_ns;	/* the pod's namespace */
	const char	*ports_json;	/* NULL or "": port and port_name;
					   else the ports, epslice_ports_check */
	const char	*node_name;	/* the address's nodeName; NULL or ""
					   = none */
	int		 mirror;	/* Endpoints: no skip-mirror label, so
					   the control plane mirrors it (when
					   no slice of ours is kept) */
};

/*
 * Whether json is what Go's encoding/json reads into a
 * []corev1.EndpointPort without error (k8s-await-election's
 * K8S_AWAIT_ELECTION_SERVICE_PORTS_JSON): null, or an array of null or
 * objects whose keys, matched without regard to case, name "name",
 * "protocol" and "appProtocol" (strings or null) and "port" (an integer
 * that fits int32, or null); other keys are ignored.  Returns 0, or -1
 * with the reason in err.
 */
int	 epslice_ports_parse(const char *json, char *err, size_t errlen);

/*
 * epslice_ports_parse, and what the API server's validation of an
 * Endpoints object's ports then requires: each port 1-65535, each name
 * a DNS label (required when there are several), the protocol TCP,
 * UDP or SCTP when given (the server defaults it to TCP), appProtocol
 * a qualified name when given.  Returns 0, or -1 with the first
 * problem in err ("ports[1].port 0: ...").
 */
int	 epslice_ports_check(const char *json, char *err, size_t errlen);

/*
 * The EndpointSlice (legacy 0) or Endpoints object (legacy 1) for e, with
 * e->ip as its one ready endpoint when leader is 1 and no endpoint when
 * it is 0, as a NUL-terminated JSON string to free(3); NULL on an invalid
 * e->ip or e->ports_json.  The slice is named "<service>-leader",
 * labelled with the Service's name and managed-by leaderd.io; its
 * addressType follows the family of e->ip.  The Endpoints object carries
 * skip-mirror so the mirroring controller does not copy it into a second
 * slice, unless e->mirror.  With e->ports_json, the ports are those, as
 * Go writes them back (name, port, protocol, appProtocol; empty ones
 * left out, and no "ports" at all in an Endpoints subset without any).
 */
char	*epslice_body(const struct epslice *e, int legacy, int leader);

/* The EndpointSlice's name for service into buf: "<service>-leader". */
void	 epslice_name(const char *service, char *buf, size_t len);

#endif /* EPSLICE_H */
