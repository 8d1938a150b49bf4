/*
 * epslice.h -- the bodies of the leader's endpoints (actions.endpoints):
 * the discovery.k8s.io/v1 EndpointSlice "<service>-leader" and, for old
 * clusters, the core/v1 Endpoints object of the Service, each naming one
 * address (the leader's) or none (written by a leader that steps down).
 */

#ifndef EPSLICE_H
#define EPSLICE_H

/* What the objects say; every string borrowed. */
struct epslice {
	const char	*service;	/* the selectorless Service */
	const char	*ns;		/* its namespace */
	const char	*ip;		/* the leader's IPv4 or IPv6 address */
	int		 port;		/* 0: no ports */
	const char	*port_name;	/* "" or the Service port's name */
	const char	*pod;		/* targetRef; "" = none */
	const char	*pod_ns;	/* the pod's namespace */
};

/*
 * The EndpointSlice (legacy 0) or Endpoints object (legacy 1) for e, with
 * e->ip as its one ready endpoint when leader is 1 and no endpoint when
 * it is 0, as a NUL-terminated JSON string to free(3); NULL on an invalid
 * e->ip.  The slice is named "<service>-leader", labelled with the
 * Service's name and managed-by leaderd.io; its addressType follows the
 * family of e->ip.  The Endpoints object carries skip-mirror so the
 * mirroring controller does not copy it into a second slice.
 */
char	*epslice_body(const struct epslice *e, int legacy, int leader);

/* The EndpointSlice's name for service into buf: "<service>-leader". */
void	 epslice_name(const char *service, char *buf, size_t len);

#endif /* EPSLICE_H */
