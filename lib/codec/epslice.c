/*
 * epslice.c -- the leader's EndpointSlice and Endpoints bodies
 * (epslice.h).
 */

#include <arpa/inet.h>

#include <stdio.h>
#include <string.h>

#include "codec/codec_int.h"
#include "codec/epslice.h"

/* 4 or 6 for an IPv4 or IPv6 address in s, 0 for neither. */
static int
family(const char *s)
{
	unsigned char	 buf[16];

	if (inet_pton(AF_INET, s, buf) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, buf) == 1)
		return 6;
	return 0;
}

/* The targetRef to the pod, or NULL when the pod is not known. */
static json_t *
target_ref(const struct epslice *e)
{
	if (e->pod == NULL || e->pod[0] == '\0')
		return NULL;
	return json_pack("{s:s, s:o, s:o}", "kind", "Pod", "namespace",
	    codec_jstring(e->pod_ns), "name", codec_jstring(e->pod));
}

/* The one port, as both kinds spell it, or an empty array. */
static json_t *
ports(const struct epslice *e)
{
	json_t	*a = json_array(), *p;

	if (e->port == 0)
		return a;
	p = json_pack("{s:i, s:s}", "port", e->port, "protocol", "TCP");
	if (e->port_name != NULL && e->port_name[0] != '\0')
		json_object_set_new(p, "name", codec_jstring(e->port_name));
	json_array_append_new(a, p);
	return a;
}

void
epslice_name(const char *service, char *buf, size_t len)
{
	snprintf(buf, len, "%s-leader", service);
}

static json_t *
slice(const struct epslice *e, int fam, int leader)
{
	json_t	*root, *eps, *ep, *ref;
	char	 name[320];

	epslice_name(e->service, name, sizeof(name));
	eps = json_array();
	if (leader) {
		ep = json_pack("{s:[o], s:{s:b}}", "addresses",
		    codec_jstring(e->ip), "conditions", "ready", 1);
		if ((ref = target_ref(e)) != NULL)
			json_object_set_new(ep, "targetRef", ref);
		json_array_append_new(eps, ep);
	}
	root = json_pack("{s:s, s:s, s:{s:o, s:o, s:{s:o, s:s}}, s:s, s:o, "
	    "s:o}", "apiVersion", "discovery.k8s.io/v1", "kind",
	    "EndpointSlice", "metadata", "name", codec_jstring(name),
	    "namespace", codec_jstring(e->ns), "labels",
	    "kubernetes.io/service-name", codec_jstring(e->service),
	    "endpointslice.kubernetes.io/managed-by", "leaderd.io",
	    "addressType", fam == 4 ? "IPv4" : "IPv6", "endpoints", eps,
	    "ports", ports(e));
	return root;
}

static json_t *
endpoints(const struct epslice *e, int leader)
{
	json_t	*subsets, *addr, *ref;

	subsets = json_array();
	if (leader) {
		addr = json_pack("{s:o}", "ip", codec_jstring(e->ip));
		if ((ref = target_ref(e)) != NULL)
			json_object_set_new(addr, "targetRef", ref);
		json_array_append_new(subsets, json_pack("{s:[o], s:o}",
		    "addresses", addr, "ports", ports(e)));
	}
	return json_pack("{s:s, s:s, s:{s:o, s:o, s:{s:s}}, s:o}",
	    "apiVersion", "v1", "kind", "Endpoints", "metadata", "name",
	    codec_jstring(e->service), "namespace", codec_jstring(e->ns),
	    "labels", "endpointslice.kubernetes.io/skip-mirror", "true",
	    "subsets", subsets);
}

char *
epslice_body(const struct epslice *e, int legacy, int leader)
{
	int	 fam;

	if (e->ip == NULL || (fam = family(e->ip)) == 0)
		return NULL;
	codec_json_init();
	return codec_json_dump(legacy ? endpoints(e, leader) :
	    slice(e, fam, leader));
}
