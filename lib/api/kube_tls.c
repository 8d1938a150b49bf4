/*
 * kube_tls.c -- how an API client reaches its server: the TLS
 * verification, CA and client certificate of its credentials (PEM data
 * in memory or files), tls-server-name by CURLOPT_CONNECT_TO, the proxy
 * by Go's rules (proxy.c), and the kept-alive HTTP/1.1 connection.
 * These options are set once, when the client is made (kube_new).
 *
 * The server's certificate is held to client-go's (Go crypto/x509's)
 * rules, tighter than libcurl's defaults: SHA-256 or better signatures,
 * RSA keys of 2048 bits or more, and the host matched against the
 * subjectAltName only, never the common name.  That needs the TLS
 * library's own calls, through CURLOPT_SSL_CTX_FUNCTION: Mbed TLS for
 * the static build (static.mk defines LEADERD_TLS_MBEDTLS; its name
 * check is patched there), OpenSSL for the shared one.
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(LEADERD_TLS_MBEDTLS)
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#else
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#endif

#include "api/kube_int.h"
#include "api/proxy.h"
#include "base/netaddr.h"
#include "base/xmalloc.h"

/*
 * With tls_server_name, the URL names that host (it is sent as SNI and
 * the certificate is checked against it) and CURLOPT_CONNECT_TO sends
 * the connection to the real server.  The Host header carries the name
 * too, which the API server does not check.
 */
static int
setup_server_name(struct kube *k, char *err, size_t errlen)
{
	const char	*s = k->creds.server, *auth, *rest;
	const char	*name = k->creds.tls_server_name;
	char		 authority[256], host[256], port[8], why[64];
	int		 has_port, v6;

	if (name == NULL || name[0] == '\0') {
		k->server = xstrdup(s);
		return 0;
	}
	if (strncmp(s, "https://", 8) != 0) {
		snprintf(err, errlen, "tls-server-name needs an https server, "
		    "not %s", s);
		return -1;
	}
	/* The authority is up to the path; the host keeps no brackets. */
	auth = s + 8;
	rest = auth + strcspn(auth, "/");
	if ((size_t)(rest - auth) >= sizeof(authority))
		goto bad;
	memcpy(authority, auth, (size_t)(rest - auth));
	authority[rest - auth] = '\0';
	if ((has_port = netaddr_split(authority, NETADDR_PORT_OPTIONAL, host,
	    sizeof(host), port, sizeof(port), why, sizeof(why))) == -1 ||
	    host[0] == '\0' || (has_port && netaddr_port(port) == -1))
		goto bad;
	if (!has_port)
		snprintf(port, sizeof(port), "443");
	xasprintf(&k->server, "https://%s:%s%s", name, port, rest);
	v6 = strchr(host, ':') != NULL;
	xasprintf(&k->connect_to, "%s:%s:%s%s%s:%s", name, port,
	    v6 ? "[" : "", host, v6 ? "]" : "", port);
	k->connect_list = curl_slist_append(NULL, k->connect_to);
	if (k->connect_list == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
bad:
	snprintf(err, errlen, "cannot parse server URL %s", s);
	return -1;
}

#if defined(LEADERD_TLS_MBEDTLS)
#define TLS_LIBRARY	"mbedTLS/"

/*
 * Mbed TLS's default profile is client-go's: SHA-256 and up, RSA 2048
 * and up (libcurl sets one that takes SHA-1 and RSA 1024).  Names: the
 * static build's Mbed TLS matches subjectAltNames only (the patch
 * deploy/image/patches/mbedtls-names-match-san-only.patch), and
 * libcurl's verify callback, which logs the reason, stays in place.
 */
static CURLcode
tls_ctx_cb(CURL *easy, void *ssl_ctx, void *arg)
{
	(void)easy;
	(void)arg;
	mbedtls_ssl_conf_cert_profile((mbedtls_ssl_config *)ssl_ctx,
	    &mbedtls_x509_crt_profile_default);
	return CURLE_OK;
}
#else
#define TLS_LIBRARY	"OpenSSL/"

/*
 * OpenSSL verifies the chain; libcurl then checks the name, and falls
 * back to the common name when the certificate has no dNSName and no
 * iPAddress entry.  So a leaf without either fails here, in the chain
 * check, with the reason OpenSSL would give for a wrong name.
 */
static int
tls_verify_cb(int ok, X509_STORE_CTX *sc)
{
	GENERAL_NAMES	*names;
	GENERAL_NAME	*g;
	int		 i, found = 0;

	if (!ok || X509_STORE_CTX_get_error_depth(sc) != 0)
		return ok;
	names = X509_get_ext_d2i(X509_STORE_CTX_get_current_cert(sc),
	    NID_subject_alt_name, NULL, NULL);
	for (i = 0; names != NULL && i < sk_GENERAL_NAME_num(names); i++) {
		g = sk_GENERAL_NAME_value(names, i);
		if (g->type == GEN_DNS || g->type == GEN_IPADD)
			found = 1;
	}
	GENERAL_NAMES_free(names);
	if (!found) {
		X509_STORE_CTX_set_error(sc, X509_V_ERR_HOSTNAME_MISMATCH);
		return 0;
	}
	return 1;
}

/*
 * Security level 2 at least (SHA-1 signatures and RSA keys under 2048
 * bits refused: Debian's default, kept whatever the system's
 * openssl.cnf says), and the SAN rule above.  libcurl has set
 * SSL_VERIFY_PEER with no callback; only set when verifying.
 */
static CURLcode
tls_ctx_cb(CURL *easy, void *ssl_ctx, void *arg)
{
	SSL_CTX	*ctx = ssl_ctx;

	(void)easy;
	(void)arg;
	if (SSL_CTX_get_security_level(ctx) < 2)
		SSL_CTX_set_security_level(ctx, 2);
	SSL_CTX_set_verify(ctx, SSL_CTX_get_verify_mode(ctx), tls_verify_cb);
	return CURLE_OK;
}
#endif

/*
 * The certificate rules above, when the server is verified.  leaderd is
 * built for one TLS library under libcurl; a libcurl over another one
 * (another Debian flavour, say) would get a callback it cannot use.
 */
static int
setup_cert_rules(struct kube *k, char *err, size_t errlen)
{
	const curl_version_info_data	*v = curl_version_info(CURLVERSION_NOW);
	const char			*lib = v->ssl_version;
	CURL				*e = k->easy;

	if (lib == NULL || strncmp(lib, TLS_LIBRARY,
	    strlen(TLS_LIBRARY)) != 0) {
		snprintf(err, errlen, "this leaderd is built for libcurl over "
		    "%.*s, but its libcurl uses %s: rebuild leaderd against "
		    "this libcurl's TLS library", (int)strlen(TLS_LIBRARY) - 1,
		    TLS_LIBRARY, lib != NULL ? lib : "no TLS library");
		return -1;
	}
	if (curl_easy_setopt(e, CURLOPT_SSL_CTX_FUNCTION, tls_ctx_cb) !=
	    CURLE_OK) {
		snprintf(err, errlen, "libcurl (%s) takes no "
		    "CURLOPT_SSL_CTX_FUNCTION: the server certificate rules "
		    "cannot be set", lib);
		return -1;
	}
	curl_easy_setopt(e, CURLOPT_SSL_CTX_DATA, k);
	return 0;
}

static int
set_blob(CURL *easy, CURLoption opt, const char *pem)
{
	struct curl_blob	 blob;

	blob.data = (void *)(uintptr_t)pem;
	blob.len = strlen(pem);
	blob.flags = CURL_BLOB_COPY;
	return curl_easy_setopt(easy, opt, &blob) == CURLE_OK ? 0 : -1;
}

int
kube_tls_setup(struct kube *k, char *err, size_t errlen)
{
	CURL			*e = k->easy;
	const struct kube_creds	*c = &k->creds;
	char			 px[1024];

	if (setup_server_name(k, err, errlen) == -1)
		return -1;
	/* One request at a time on one kept-alive connection. */
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 15L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 5L);
	curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	if (c->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	} else {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
		if (setup_cert_rules(k, err, errlen) == -1)
			return -1;
	}
	if (c->ca_pem != NULL) {
		if (set_blob(e, CURLOPT_CAINFO_BLOB, c->ca_pem) == -1)
			goto blob;
	} else if (c->ca_file != NULL)
		curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
	if (c->cert_pem != NULL) {
		if (set_blob(e, CURLOPT_SSLCERT_BLOB, c->cert_pem) == -1)
			goto blob;
	} else if (c->cert_file != NULL)
		curl_easy_setopt(e, CURLOPT_SSLCERT, c->cert_file);
	if (c->cert_pem != NULL || c->cert_file != NULL)
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
	if (c->key_pem != NULL) {
		if (set_blob(e, CURLOPT_SSLKEY_BLOB, c->key_pem) == -1)
			goto blob;
	} else if (c->key_file != NULL)
		curl_easy_setopt(e, CURLOPT_SSLKEY, c->key_file);
	if (c->key_pem != NULL || c->key_file != NULL)
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	if (k->connect_list != NULL)
		curl_easy_setopt(e, CURLOPT_CONNECT_TO, k->connect_list);
	/*
	 * The proxy is chosen here by Go's rules (proxy.h), never by
	 * libcurl from the environment: it would honour ALL_PROXY and its
	 * own NO_PROXY syntax.  "" means a direct connection.
	 */
	if (proxy_for(c->server, px, sizeof(px), err, errlen) == -1)
		return -1;
	curl_easy_setopt(e, CURLOPT_PROXY, px);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "");
	return 0;
blob:
	snprintf(err, errlen, "this libcurl cannot take PEM data in memory "
	    "(needs 7.77 or later with OpenSSL)");
	return -1;
}
