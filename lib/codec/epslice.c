/*
 * epslice.c -- the leader's EndpointSlice and Endpoints bodies
 * (epslice.h).
 */

#include <arpa/inet.h>

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

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
one_port(const struct epslice *e)
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

/* How Go's encoding/json names a JSON value's kind in its errors. */
static const char *
go_kind(json_t *v, char *buf, size_t len)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		snprintf(buf, len, "number %" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		return buf;
	case JSON_REAL:
		snprintf(buf, len, "number %g", json_real_value(v));
		return buf;
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	default:
		return "null";
	}
}

/*
 * One EndpointPort from the object o, as Go decodes it and writes it
 * back: keys matched without regard to case, the last one winning,
 * null the zero value, unknown keys dropped; name, protocol and an
 * absent appProtocol left out when empty, port always written.
 */
static json_t *
port_decode(json_t *o, char *err, size_t errlen)
{
	static const char *const fields[] = { "name", "port", "protocol",
	    "appProtocol" };
	json_t		*v, *got[4] = { NULL, NULL, NULL, NULL }, *p;
	const char	*key;
	char		 kind[64];
	size_t		 i;

	json_object_foreach(o, key, v) {
		for (i = 0; i < 4; i++)
			if (strcasecmp(key, fields[i]) == 0)
				break;
		if (i == 4)
			continue;
		if (json_is_null(v)) {
			got[i] = NULL;
			continue;
		}
		if (i == 1 ? !json_is_integer(v) || json_integer_value(v) <
		    INT32_MIN || json_integer_value(v) > INT32_MAX :
		    !json_is_string(v)) {
			snprintf(err, errlen, "json: cannot unmarshal %s into "
			    "Go struct field EndpointPort.%s of type %s",
			    go_kind(v, kind, sizeof(kind)), fields[i],
			    i == 1 ? "int32" : i == 2 ? "v1.Protocol" :
			    "string");
			return NULL;
		}
		got[i] = v;
	}
	p = json_object();
	if (got[0] != NULL && json_string_length(got[0]) > 0)
		json_object_set(p, "name", got[0]);
	json_object_set_new(p, "port", json_integer(got[1] != NULL ?
	    json_integer_value(got[1]) : 0));
	if (got[2] != NULL && json_string_length(got[2]) > 0)
		json_object_set(p, "protocol", got[2]);
	if (got[3] != NULL)
		json_object_set(p, "appProtocol", got[3]);
	return p;
}

/*
 * The ports of json as Go reads them into []corev1.EndpointPort and
 * writes them back (epslice_ports_parse), as a new array; NULL with err
 * when Go would refuse them.
 */
static json_t *
ports_decode(const char *json, char *err, size_t errlen)
{
	json_t		*root, *out, *v, *p;
	json_error_t	 jerr;
	char		 kind[64];
	size_t		 i;

	codec_json_init();
	if (json[strspn(json, " \t\r\n")] == '\0') {
		snprintf(err, errlen, "unexpected end of JSON input");
		return NULL;
	}
	if ((root = json_loads(json, JSON_DECODE_ANY, &jerr)) == NULL) {
		snprintf(err, errlen, "%s (at offset %d)", jerr.text,
		    jerr.position);
		return NULL;
	}
	out = json_array();
	if (json_is_null(root)) {
		json_decref(root);
		return out;
	}
	if (!json_is_array(root)) {
		snprintf(err, errlen, "json: cannot unmarshal %s into Go "
		    "value of type []v1.EndpointPort",
		    go_kind(root, kind, sizeof(kind)));
		goto fail;
	}
	json_array_foreach(root, i, v) {
		if (json_is_null(v))
			p = json_pack("{s:i}", "port", 0);
		else if (!json_is_object(v)) {
			snprintf(err, errlen, "json: cannot unmarshal %s into "
			    "Go value of type v1.EndpointPort",
			    go_kind(v, kind, sizeof(kind)));
			goto fail;
		} else if ((p = port_decode(v, err, errlen)) == NULL)
			goto fail;
		json_array_append_new(out, p);
	}
	json_decref(root);
	return out;
fail:
	json_decref(root);
	json_decref(out);
	return NULL;
}

int
epslice_ports_parse(const char *json, char *err, size_t errlen)
{
	json_t	*a;

	if ((a = ports_decode(json, err, errlen)) == NULL)
		return -1;
	json_decref(a);
	return 0;
}

/* A DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most max. */
static int
dns_label(const char *s, size_t n, size_t max)
{
	size_t	 i;

	if (n == 0 || n > max || s[0] == '-' || s[n - 1] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) ||
		    isdigit((unsigned char)s[i]) || s[i] == '-'))
			return 0;
	return 1;
}

/*
 * A qualified name, as appProtocol must be: an optional DNS subdomain
 * prefix and "/", then 1-63 letters, digits, '-', '_' and '.', starting
 * and ending with a letter or digit.
 */
static int
qualified_name(const char *s)
{
	const char	*name = s, *slash, *p, *dot;
	size_t		 n;

	if ((slash = strchr(s, '/')) != NULL) {
		if (slash == s || slash - s > 253)
			return 0;
		for (p = s; p < slash; p = dot + 1) {
			if ((dot = memchr(p, '.', slash - p)) == NULL)
				dot = slash;
			if (!dns_label(p, dot - p, 63))
				return 0;
			if (dot == slash)
				break;
		}
		name = slash + 1;
	}
	n = strlen(name);
	if (n == 0 || n > 63 || !isalnum((unsigned char)name[0]) ||
	    !isalnum((unsigned char)name[n - 1]))
		return 0;
	for (p = name; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_' &&
		    *p != '.')
			return 0;
	return 1;
}

int
epslice_ports_check(const char *json, char *err, size_t errlen)
{
	json_t		*a, *p, *v;
	const char	*s;
	size_t		 i, n;
	json_int_t	 port;
	int		 rv = -1;

	if ((a = ports_decode(json, err, errlen)) == NULL)
		return -1;
	n = json_array_size(a);
	json_array_foreach(a, i, p) {
		v = json_object_get(p, "name");
		s = v != NULL ? json_string_value(v) : "";
		if (s[0] == '\0' && n > 1) {
			snprintf(err, errlen, "ports[%zu].name is required "
			    "when there are several ports", i);
			goto out;
		}
		if (s[0] != '\0' && !dns_label(s, strlen(s), 63)) {
			snprintf(err, errlen, "ports[%zu].name \"%s\" must be "
			    "a DNS label (lower-case letters, digits and '-', "
			    "at most 63)", i, s);
			goto out;
		}
		port = json_integer_value(json_object_get(p, "port"));
		if (port < 1 || port > 65535) {
			snprintf(err, errlen, "ports[%zu].port %"
			    JSON_INTEGER_FORMAT " must be between 1 and 65535",
			    i, port);
			goto out;
		}
		v = json_object_get(p, "protocol");
		s = v != NULL ? json_string_value(v) : "TCP";
		if (strcmp(s, "TCP") != 0 && strcmp(s, "UDP") != 0 &&
		    strcmp(s, "SCTP") != 0) {
			snprintf(err, errlen, "ports[%zu].protocol \"%s\" must "
			    "be TCP, UDP or SCTP", i, s);
			goto out;
		}
		v = json_object_get(p, "appProtocol");
		if (v != NULL && !qualified_name(json_string_value(v))) {
			snprintf(err, errlen, "ports[%zu].appProtocol \"%s\" "
			    "must be a qualified name (\"http\", "
			    "\"kubernetes.io/h2c\")", i, json_string_value(v));
			goto out;
		}
	}
	rv = 0;
out:
	json_decref(a);
	return rv;
}

/* The ports of e: its JSON ones, or the one port; NULL if invalid. */
static json_t *
ports(const struct epslice *e)
{
	char	 err[256];

	if (e->ports_json != NULL && e->ports_json[0] != '\0')
		return ports_decode(e->ports_json, err, sizeof(err));
	return one_port(e);
}

void
epslice_name(const char *service, char *buf, size_t len)
{
	snprintf(buf, len, "%s-leader", service);
}

/* The leader's nodeName, when known. */
static json_t *
node_name(const struct epslice *e)
{
	if (e->node_name == NULL || e->node_name[0] == '\0')
		return NULL;
	return codec_jstring(e->node_name);
}

static json_t *
slice(const struct epslice *e, int fam, int leader, json_t *pts)
{
	json_t	*root, *eps, *ep, *ref, *node;
	char	 name[320];

	epslice_name(e->service, name, sizeof(name));
	eps = json_array();
	if (leader) {
		ep = json_pack("{s:[o], s:{s:b}}", "addresses",
		    codec_jstring(e->ip), "conditions", "ready", 1);
		if ((ref = target_ref(e)) != NULL)
			json_object_set_new(ep, "targetRef", ref);
		if ((node = node_name(e)) != NULL)
			json_object_set_new(ep, "nodeName", node);
		json_array_append_new(eps, ep);
	}
	root = json_pack("{s:s, s:s, s:{s:o, s:o, s:{s:o, s:s}}, s:s, s:o, "
	    "s:o}", "apiVersion", "discovery.k8s.io/v1", "kind",
	    "EndpointSlice", "metadata", "name", codec_jstring(name),
	    "namespace", codec_jstring(e->ns), "labels",
	    "kubernetes.io/service-name", codec_jstring(e->service),
	    "endpointslice.kubernetes.io/managed-by", "leaderd.io",
	    "addressType", fam == 4 ? "IPv4" : "IPv6", "endpoints", eps,
	    "ports", pts);
	return root;
}

/*
 * The Endpoints object; its address in Go's field order (ip, nodeName,
 * targetRef), as k8s-await-election's corev1.Endpoints is written.
 */
static json_t *
endpoints(const struct epslice *e, int leader, json_t *pts)
{
	json_t	*subsets, *addr, *ref, *node, *meta, *subset;

	subsets = json_array();
	if (leader) {
		addr = json_pack("{s:o}", "ip", codec_jstring(e->ip));
		if ((node = node_name(e)) != NULL)
			json_object_set_new(addr, "nodeName", node);
		if ((ref = target_ref(e)) != NULL)
			json_object_set_new(addr, "targetRef", ref);
		subset = json_pack("{s:[o]}", "addresses", addr);
		/* Go leaves out an empty list of ports (omitempty). */
		if (json_array_size(pts) > 0 || e->ports_json == NULL ||
		    e->ports_json[0] == '\0')
			json_object_set(subset, "ports", pts);
		json_array_append_new(subsets, subset);
	}
	json_decref(pts);
	meta = json_pack("{s:o, s:o}", "name", codec_jstring(e->service),
	    "namespace", codec_jstring(e->ns));
	if (!e->mirror)
		json_object_set_new(meta, "labels", json_pack("{s:s}",
		    "endpointslice.kubernetes.io/skip-mirror", "true"));
	return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind",
	    "Endpoints", "metadata", meta, "subsets", subsets);
}

char *
epslice_body(const struct epslice *e, int legacy, int leader)
{
	json_t	*pts;
	int	 fam;

	if (e->ip == NULL || (fam = family(e->ip)) == 0)
		return NULL;
	codec_json_init();
	if ((pts = ports(e)) == NULL)
		return NULL;
	return codec_json_dump(legacy ? endpoints(e, leader, pts) :
	    slice(e, fam, leader, pts));
}
