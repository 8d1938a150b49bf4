/*
 * kubeconfig_auth.c -- what a kubeconfig's cluster and user entries say
 * (ref/clientgo-leaderelection.md 6.2): the server, its CA and TLS
 * settings; the one authentication method of the user, the methods
 * leaderd does not support refused by name.  kubeconfig.c finds the
 * entries.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/xmalloc.h"
#include "config/creds.h"
#include "config/kubeconfig_int.h"

#define UNSUPPORTED	"which leaderd does not support; use a token, " \
			"tokenFile or client certificate"

/* The readable file named by map.key, resolved, or NULL when absent. */
static int
get_file(struct kc *kc, yaml_node_t *map, const char *key, char **out)
{
	yaml_node_t *n;
	const char *s;
	char *p, why[1024];

	*out = NULL;
	if (kc_get_str(kc, map, key, &s, &n) == -1)
		return -1;
	if (s == NULL || *s == '\0')
		return 0;
	p = kc_resolve(kc, s);
	if (creds_check_file(p, key, why, sizeof(why)) == -1) {
		kc_err(kc, n, "%s", why);
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

/* The PEM text in the base64 value map.key, or NULL when absent. */
static int
get_pem(struct kc *kc, yaml_node_t *map, const char *key, char **out)
{
	yaml_node_t *n;
	const char *s;
	char *pem;
	size_t len;

	*out = NULL;
	if (kc_get_str(kc, map, key, &s, &n) == -1)
		return -1;
	if (s == NULL || *s == '\0')
		return 0;
	if ((pem = base64_decode(s, &len)) == NULL)
		return kc_err(kc, n, "%s is not valid base64", key);
	/* PEM is text; DER or other binary data is refused here. */
	if (memchr(pem, '\0', len) != NULL ||
	    strstr(pem, "-----BEGIN ") == NULL) {
		explicit_bzero(pem, len);
		free(pem);
		return kc_err(kc, n, "%s does not decode to PEM", key);
	}
	*out = pem;
	return 0;
}

/*
 * The file named by map.key into *out, unless its "-data" twin gave the
 * PEM already (pem != NULL): then a non-empty map.key is left with a
 * warning that names what ("cluster" or "user") and name, as kubectl's
 * "-data overrides".
 */
static int
get_file_unless_pem(struct kc *kc, yaml_node_t *map, const char *what,
    const char *name, const char *key, const char *pem, char **out)
{
	const char *s;

	if (kc_get_str(kc, map, key, &s, NULL) == -1)
		return -1;
	if (pem != NULL && s != NULL && *s != '\0') {
		kc_warn(kc, "%s \"%s\": %s-data overrides %s", what, name, key,
		    key);
		return 0;
	}
	return get_file(kc, map, key, out);
}

int
kc_load_cluster(struct kc *kc, const char *name, yaml_node_t *cl,
    struct kube_creds *c)
{
	yaml_node_t *n, *insecure_n;
	const char *s;
	size_t len;

	if (kc_get_str(kc, cl, "server", &s, &n) == -1)
		return -1;
	if (s == NULL || *s == '\0')
		return kc_err(kc, cl, "no server found for cluster \"%s\"",
		    name);
	if ((strncmp(s, "https://", 8) != 0 || s[8] == '\0') &&
	    (strncmp(s, "http://", 7) != 0 || s[7] == '\0'))
		return kc_err(kc, n, "server \"%s\" must be an https:// or "
		    "http:// URL", s);
	len = strlen(s);
	while (len > 0 && s[len - 1] == '/')
		len--;
	c->server = xstrndup(s, len);

	if (get_pem(kc, cl, "certificate-authority-data", &c->ca_pem) == -1)
		return -1;
	if (get_file_unless_pem(kc, cl, "cluster", name,
	    "certificate-authority", c->ca_pem, &c->ca_file) == -1)
		return -1;

	if (kc_get_bool(kc, cl, "insecure-skip-tls-verify", &c->insecure,
	    &insecure_n) == -1)
		return -1;
	if (c->insecure && (c->ca_pem != NULL || c->ca_file != NULL))
		return kc_err(kc, insecure_n, "specifying a root certificates "
		    "file with the insecure flag is not allowed");
	if (c->insecure)
		kc_warn(kc, "cluster \"%s\": insecure-skip-tls-verify is "
		    "true: the API server's certificate is not verified",
		    name);

	if (kc_get_str(kc, cl, "tls-server-name", &s, NULL) == -1)
		return -1;
	if (s != NULL && *s != '\0')
		c->tls_server_name = xstrdup(s);
	return 0;
}

int
kc_load_user(struct kc *kc, const char *name, yaml_node_t *u,
    struct kube_creds *c)
{
	static const struct {
		const char	*key;
		const char	*method;
	} unsupported[] = {
		{ "exec", "an exec plugin (exec)" },
		{ "auth-provider", "an auth-provider" },
		{ "username", "basic authentication (username/password)" },
		{ "password", "basic authentication (username/password)" },
		{ "as", "impersonation (as)" },
		{ "as-uid", "impersonation (as-uid)" },
		{ "as-groups", "impersonation (as-groups)" },
		{ "as-user-extra", "impersonation (as-user-extra)" },
	};
	yaml_node_t *k, *v, *tok_n, *file_n;
	char *tok, terr[512];
	const char *s;
	size_t i;

	for (i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		if (kc_map_get(kc, u, unsupported[i].key, &k, &v) == -1)
			return -1;
		if (v != NULL && (v->type != YAML_SCALAR_NODE ||
		    v->data.scalar.length > 0))
			return kc_err(kc, k, "user \"%s\" uses %s, "
			    UNSUPPORTED, name, unsupported[i].method);
	}

	if (kc_get_str(kc, u, "token", &s, &tok_n) == -1)
		return -1;
	if (s != NULL && *s != '\0') {
		if (!creds_token_ok(s))
			return kc_err(kc, tok_n, "token contains characters "
			    "that are not allowed in a bearer token");
		c->token = xstrdup(s);
	}
	if (kc_get_str(kc, u, "tokenFile", &s, &file_n) == -1)
		return -1;
	if (s != NULL && *s != '\0') {
		/* Read now so a bad file fails at start; token.c re-reads. */
		c->token_file = kc_resolve(kc, s);
		if ((tok = creds_read_token(c->token_file, terr,
		    sizeof(terr))) == NULL)
			return kc_err(kc, file_n, "tokenFile: %s", terr);
		explicit_bzero(tok, strlen(tok));
		free(tok);
	}

	if (get_pem(kc, u, "client-certificate-data", &c->cert_pem) == -1 ||
	    get_pem(kc, u, "client-key-data", &c->key_pem) == -1)
		return -1;
	if (get_file_unless_pem(kc, u, "user", name, "client-certificate",
	    c->cert_pem, &c->cert_file) == -1 ||
	    get_file_unless_pem(kc, u, "user", name, "client-key",
	    c->key_pem, &c->key_file) == -1)
		return -1;

	if ((c->cert_pem != NULL || c->cert_file != NULL) &&
	    c->key_pem == NULL && c->key_file == NULL)
		return kc_err(kc, u, "user \"%s\" has a client certificate "
		    "but no client-key or client-key-data", name);
	if ((c->key_pem != NULL || c->key_file != NULL) &&
	    c->cert_pem == NULL && c->cert_file == NULL)
		return kc_err(kc, u, "user \"%s\" has a client key but no "
		    "client-certificate or client-certificate-data", name);
	if ((c->token != NULL || c->token_file != NULL) &&
	    (c->cert_pem != NULL || c->cert_file != NULL))
		return kc_err(kc, u, "user \"%s\" has more than one "
		    "authentication method (a token and a client "
		    "certificate); keep one", name);
	return 0;
}

