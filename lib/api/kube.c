/*
 * kube.c -- the request engine of the Kubernetes API client: one reused
 * libcurl easy handle per client (so the connection, TLS session
 * included, is kept alive between requests), the safety rules of
 * ref/reliability-performance.md a.3 (every request bounded by its own
 * timeout, and no reuse of a connection after a timeout or a transport
 * error, so a half-open socket cannot eat the next renew), the bearer
 * token of the shared struct token (token.c), and the mapping of an
 * answer to a struct kube_result.  The verbs and their URLs are in
 * kube_rest.c, TLS and the proxy in kube_tls.c.
 */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/kube_int.h"
#include "api/token.h"
#include "base/clock.h"
#include "base/xmalloc.h"
#include "codec/apiobj.h"

#define CONNECT_TIMEOUT_MS	5000	/* upper bound of the connect phase */

static char *
dup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

/*
 * The text of a failed transfer: curl's, without the line end some TLS
 * libraries close theirs with.  A certificate that fails verification
 * gets the URL it was checked for: OpenSSL names the host in its
 * message, Mbed TLS does not, and a wrong tls-server-name or server
 * address is what the reader has to find.
 */
static void
fail_message(const struct kube *k, CURLcode rc, char *buf, size_t len)
{
	size_t	 n;

	snprintf(buf, len, "%s", k->errbuf[0] != '\0' ? k->errbuf :
	    curl_easy_strerror(rc));
	n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
	    buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (rc == CURLE_PEER_FAILED_VERIFICATION)
		snprintf(buf + n, len - n, " (certificate checked for %s)",
		    k->server);
}

/* The names of the curl errors a Lease request can meet. */
static const char *
curl_code_name(CURLcode rc)
{
	static char	 other[32];

	switch (rc) {
	case CURLE_UNSUPPORTED_PROTOCOL: return "CURLE_UNSUPPORTED_PROTOCOL";
	case CURLE_URL_MALFORMAT:	return "CURLE_URL_MALFORMAT";
	case CURLE_COULDNT_RESOLVE_PROXY: return "CURLE_COULDNT_RESOLVE_PROXY";
	case CURLE_COULDNT_RESOLVE_HOST: return "CURLE_COULDNT_RESOLVE_HOST";
	case CURLE_COULDNT_CONNECT:	return "CURLE_COULDNT_CONNECT";
	case CURLE_WEIRD_SERVER_REPLY:	return "CURLE_WEIRD_SERVER_REPLY";
	case CURLE_HTTP2:		return "CURLE_HTTP2";
	case CURLE_PARTIAL_FILE:	return "CURLE_PARTIAL_FILE";
	case CURLE_WRITE_ERROR:		return "CURLE_WRITE_ERROR";
	case CURLE_READ_ERROR:		return "CURLE_READ_ERROR";
	case CURLE_OUT_OF_MEMORY:	return "CURLE_OUT_OF_MEMORY";
	case CURLE_OPERATION_TIMEDOUT:	return "CURLE_OPERATION_TIMEDOUT";
	case CURLE_SSL_CONNECT_ERROR:	return "CURLE_SSL_CONNECT_ERROR";
	case CURLE_ABORTED_BY_CALLBACK:	return "CURLE_ABORTED_BY_CALLBACK";
	case CURLE_GOT_NOTHING:		return "CURLE_GOT_NOTHING";
	case CURLE_SSL_ENGINE_NOTFOUND:	return "CURLE_SSL_ENGINE_NOTFOUND";
	case CURLE_SEND_ERROR:		return "CURLE_SEND_ERROR";
	case CURLE_RECV_ERROR:		return "CURLE_RECV_ERROR";
	case CURLE_SSL_CERTPROBLEM:	return "CURLE_SSL_CERTPROBLEM";
	case CURLE_SSL_CIPHER:		return "CURLE_SSL_CIPHER";
	case CURLE_PEER_FAILED_VERIFICATION:
		return "CURLE_PEER_FAILED_VERIFICATION";
	case CURLE_SSL_CACERT_BADFILE:	return "CURLE_SSL_CACERT_BADFILE";
	case CURLE_SSL_SHUTDOWN_FAILED:	return "CURLE_SSL_SHUTDOWN_FAILED";
	case CURLE_SSL_CRL_BADFILE:	return "CURLE_SSL_CRL_BADFILE";
	case CURLE_SSL_ISSUER_ERROR:	return "CURLE_SSL_ISSUER_ERROR";
	case CURLE_HTTP2_STREAM:	return "CURLE_HTTP2_STREAM";
	case CURLE_SSL_CLIENTCERT:	return "CURLE_SSL_CLIENTCERT";
	default:
		snprintf(other, sizeof(other), "CURLE_%d", (int)rc);
		return other;
	}
}

/* Kubernetes' StatusReason for a status whose body is not a Status. */
static const char *
status_reason(long status)
{
	switch (status) {
	case 400: return "BadRequest";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "NotFound";
	case 405: return "MethodNotAllowed";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 413: return "RequestEntityTooLarge";
	case 415: return "UnsupportedMediaType";
	case 422: return "Invalid";
	case 429: return "TooManyRequests";
	case 500: return "InternalError";
	case 503: return "ServiceUnavailable";
	case 504: return "Timeout";
	default:  return status >= 500 ? "InternalError" : "Unknown";
	}
}

/*
 * A watch answered 200: hand every complete line to line_cb and keep the
 * rest for the next chunk.  A line longer than LEASE_BODY_MAX aborts.
 */
static size_t
stream_lines(struct kube *k, size_t n)
{
	char	*p, *nl, *end = k->body + k->len;

	p = k->body;
	while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (nl > p && k->line_cb(p, (size_t)(nl - p), k->arg) == -1) {
			k->line_abort = 1;
			return 0;
		}
		p = nl + 1;
	}
	k->len = (size_t)(end - p);
	memmove(k->body, p, k->len);
	k->body[k->len] = '\0';
	return n;
}

static size_t
write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct kube	*k = arg;
	size_t		 n = size * nmemb;
	long		 status = 0;

	if (k->line_cb != NULL && !k->streaming) {
		curl_easy_getinfo(k->easy, CURLINFO_RESPONSE_CODE, &status);
		k->streaming = status == 200;
	}
	if (n > LEASE_BODY_MAX - k->len) {
		k->too_large = 1;
		return 0;	/* aborts the transfer: CURLE_WRITE_ERROR */
	}
	if (k->len + n + 1 > k->cap) {
		while (k->len + n + 1 > k->cap)
			k->cap = k->cap == 0 ? 4096 : k->cap * 2;
		k->body = xrealloc(k->body, k->cap);
	}
	memcpy(k->body + k->len, data, n);
	k->len += n;
	k->body[k->len] = '\0';
	if (k->streaming)
		return stream_lines(k, n);
	return n;
}

/*
 * The end of a watch's headers: a 200 opens the stream, which line_cb
 * hears as a NULL line before any event.  Returns 0 or -1 (abort).
 */
static int
watch_opened(struct kube *k)
{
	long	 status = 0;

	curl_easy_getinfo(k->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status == 200) {
		k->streaming = 1;
		if (k->line_cb(NULL, 0, k->arg) == -1) {
			k->line_abort = 1;
			return -1;
		}
	}
	return 0;
}

/*
 * Keep the first "Warning:" header of an answer (RFC 7234 5.5, which the
 * API server sends for deprecated APIs such as v1 Endpoints), and tell a
 * watch that its stream opened.
 */
static size_t
header_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct kube	*k = arg;
	size_t		 n = size * nmemb, len;

	if (k->line_cb != NULL && !k->streaming &&
	    ((n == 2 && data[0] == '\r') || (n == 1 && data[0] == '\n')))
		return watch_opened(k) == -1 ? 0 : n;

	if (k->warning[0] == '\0' && n > 8 &&
	    strncasecmp(data, "Warning:", 8) == 0) {
		data += 8;
		len = n - 8;
		while (len > 0 && (*data == ' ' || *data == '\t'))
			data++, len--;
		while (len > 0 && (data[len - 1] == '\r' ||
		    data[len - 1] == '\n' || data[len - 1] == ' '))
			len--;
		if (len >= sizeof(k->warning))
			len = sizeof(k->warning) - 1;
		memcpy(k->warning, data, len);
		k->warning[len] = '\0';
	} else if (n > 5 && n - 5 < sizeof(k->date) &&
	    strncasecmp(data, "Date:", 5) == 0) {
		/* For the clock offset from the API server (curl_getdate). */
		for (len = n - 5; len > 0 && (data[4 + len] == '\r' ||
		    data[4 + len] == '\n'); len--)
			;
		memcpy(k->date, data + 5, len);
		k->date[len] = '\0';
	}
	return n;
}

/*
 * The options that stay the same for every request, but for the server's
 * (kube_tls.c).
 */
static void
setup_easy(struct kube *k, const char *user_agent)
{
	CURL			*e = k->easy;

	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, k->errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, k);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, k);
	curl_easy_setopt(e, CURLOPT_USERAGENT, user_agent);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
}

struct kube *
kube_new(struct curlev *cv, const struct kube_creds *creds,
    struct token *token, const char *user_agent, char *err, size_t errlen)
{
	struct kube		*k;
	struct kube_creds	*c;

	if (creds->server == NULL || creds->server[0] == '\0') {
		snprintf(err, errlen, "no API server address");
		return NULL;
	}
	k = xcalloc(1, sizeof(*k));
	k->cv = cv;
	k->token = token;
	c = &k->creds;
	c->server = xstrdup(creds->server);
	/* "https://host/" would give "//apis/..." paths. */
	while (strlen(c->server) > 1 &&
	    c->server[strlen(c->server) - 1] == '/')
		c->server[strlen(c->server) - 1] = '\0';
	c->ca_file = dup_or_null(creds->ca_file);
	c->ca_pem = dup_or_null(creds->ca_pem);
	c->cert_file = dup_or_null(creds->cert_file);
	c->cert_pem = dup_or_null(creds->cert_pem);
	c->key_file = dup_or_null(creds->key_file);
	c->key_pem = dup_or_null(creds->key_pem);
	c->tls_server_name = dup_or_null(creds->tls_server_name);
	c->namespace = dup_or_null(creds->namespace);
	c->insecure = creds->insecure;

	if ((k->easy = curl_easy_init()) == NULL) {
		snprintf(err, errlen, "curl_easy_init failed");
		goto fail;
	}
	setup_easy(k, user_agent);
	if (kube_tls_setup(k, err, errlen) == -1)
		goto fail;
	return k;
fail:
	kube_free(k);
	return NULL;
}

static struct curl_slist *
add_header(struct curl_slist *list, const char *h)
{
	struct curl_slist	*n;

	if ((n = curl_slist_append(list, h)) == NULL) {
		curl_slist_free_all(list);
		return NULL;
	}
	return n;
}

static struct curl_slist *
make_headers(struct kube *k, int with_body)
{
	struct curl_slist	*h;
	const char		*tok;
	char			*auth;

	if ((h = add_header(NULL, "Accept: application/json")) == NULL)
		return NULL;
	if (with_body) {
		if ((h = add_header(h, k->ctype != NULL ? k->ctype :
		    "Content-Type: application/json")) == NULL)
			return NULL;
	}
	/* No 100-continue round trip (curl asks for it on big bodies). */
	if ((h = add_header(h, "Expect:")) == NULL)
		return NULL;
	tok = token_get(k->token);
	if (tok != NULL && tok[0] != '\0') {
		xasprintf(&auth, "Authorization: Bearer %s", tok);
		h = add_header(h, auth);
		token_wipe_free(auth);
	}
	return h;
}

static void
request_end(struct kube *k)
{
	curl_slist_free_all(k->headers);
	k->headers = NULL;
	free(k->url);
	k->url = NULL;
	k->busy = 0;
	k->done_cb = NULL;
	k->arg = NULL;
	k->line_cb = NULL;
	k->streaming = 0;
	k->verb = NULL;
}

static void
fill_result(struct kube *k, CURLcode rc, struct kube_result *res)
{
	memset(res, 0, sizeof(*res));
	/* write_cb NUL-terminates; an empty answer leaves old bytes. */
	res->body = k->len > 0 ? k->body : "";
	res->len = k->len;
	memcpy(res->warning, k->warning, sizeof(res->warning));
	res->verb = k->verb == NULL ? "" : strcmp(k->verb, "event") == 0 ?
	    "create" : k->verb;
	if (k->url != NULL)
		kube_url_target(k->url, res->target, sizeof(res->target));
	if (k->date[0] != '\0' && (res->date_s = curl_getdate(k->date,
	    NULL)) < 0)
		res->date_s = 0;
	if (rc != CURLE_OK) {
		res->outcome = KUBE_FAILED;
		res->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
		if (k->line_abort) {
			snprintf(res->reason, sizeof(res->reason),
			    "BadWatchEvent");
			snprintf(res->message, sizeof(res->message),
			    "the watch stream carried an event leaderd cannot "
			    "read");
		} else if (k->too_large) {
			snprintf(res->reason, sizeof(res->reason),
			    "BodyTooLarge");
			snprintf(res->message, sizeof(res->message),
			    "the API server's answer is larger than %d bytes",
			    LEASE_BODY_MAX);
		} else {
			snprintf(res->reason, sizeof(res->reason), "%s",
			    curl_code_name(rc));
			fail_message(k, rc, res->message,
			    sizeof(res->message));
		}
		return;
	}
	curl_easy_getinfo(k->easy, CURLINFO_RESPONSE_CODE, &res->status);
	switch (res->status) {
	case 200:
	case 201:
		res->outcome = KUBE_OK;
		return;
	case 404:
		res->outcome = KUBE_NOTFOUND;
		break;
	case 409:
		res->outcome = KUBE_CONFLICT;
		break;
	default:
		res->outcome = KUBE_FAILED;
		break;
	}
	if (apiobj_status(res->body, res->len, res->reason, sizeof(res->reason),
	    res->message, sizeof(res->message)) == 0 && res->reason[0] != '\0')
		return;
	snprintf(res->reason, sizeof(res->reason), "%s",
	    status_reason(res->status));
	if (res->message[0] == '\0') {
		size_t	 i, n = 0;

		/* The start of whatever came back, printable bytes only. */
		for (i = 0; i < res->len && n < 200; i++) {
			unsigned char ch = (unsigned char)res->body[i];
			if (ch >= 0x20 && ch < 0x7f)
				res->message[n++] = (char)ch;
			else if (n > 0 && res->message[n - 1] != ' ')
				res->message[n++] = ' ';
		}
		res->message[n] = '\0';
		if (n == 0)
			snprintf(res->message, sizeof(res->message),
			    "HTTP status %ld", res->status);
	}
}

static void
done_cb(CURL *easy, CURLcode rc, void *arg)
{
	struct kube		*k = arg;
	struct kube_result	 res;
	kube_done_cb		 cb = k->done_cb;
	void			*cbarg = k->arg;

	(void)easy;
	fill_result(k, rc, &res);
	if (k->obs_cb != NULL && k->verb != NULL)
		k->obs_cb(k->verb, res.status,
		    (double)(clock_raw_us() - k->start_us) / 1e6, k->obs_arg);
	/*
	 * After a timeout or any transport error, the connection is not
	 * trusted again (a.3 item 9); a 401 means the token may have been
	 * rotated under us.
	 */
	if (rc != CURLE_OK)
		k->fresh = 1;
	if (res.status == 401)
		kube_token_stale(k);
	request_end(k);
	/* cb may start the next request (the body stays readable). */
	k->in_cb++;
	cb(&res, cbarg);
	k->in_cb--;
	if (k->dead && k->in_cb == 0)
		kube_free(k);
}

int
kube_request(struct kube *k, const char *method, char *url, const char *body,
    uint64_t timeout_ms, kube_done_cb cb, void *arg)
{
	CURL	*e = k->easy;
	long	 t, ct;

	if (url == NULL)
		return -1;
	if (k->busy || k->dead) {
		free(url);
		return -1;
	}
	/* The verb for metrics; callers may have named it already. */
	if (k->verb == NULL)
		k->verb = strcmp(method, "GET") == 0 ? "get" :
		    strcmp(method, "POST") == 0 ? "create" :
		    strcmp(method, "PUT") == 0 ? "update" :
		    strcmp(method, "PATCH") == 0 ? "patch" :
		    strcmp(method, "DELETE") == 0 ? "delete" : "other";
	k->start_us = clock_raw_us();
	k->url = url;
	if ((k->headers = make_headers(k, body != NULL)) == NULL) {
		request_end(k);
		return -1;
	}

	t = timeout_ms == 0 ? 1 : timeout_ms > LONG_MAX ? LONG_MAX :
	    (long)timeout_ms;
	ct = t < CONNECT_TIMEOUT_MS ? t : CONNECT_TIMEOUT_MS;
	curl_easy_setopt(e, CURLOPT_URL, k->url);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, k->headers);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, t);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, ct);
	curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, k->fresh || k->one_shot ?
	    1L : 0L);
	curl_easy_setopt(e, CURLOPT_FORBID_REUSE, k->one_shot ? 1L : 0L);
	if (body == NULL) {
		/* A DELETE has no body either. */
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST,
		    strcmp(method, "GET") == 0 ? NULL : method);
	} else {
		curl_easy_setopt(e, CURLOPT_POST, 1L);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)strlen(body));
		curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, body);
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST,
		    strcmp(method, "POST") == 0 ? NULL : method);
	}
	/*
	 * The last body stays as it is until the transfer writes: a done
	 * callback that starts this request may still be reading it.
	 */
	k->len = 0;
	k->too_large = 0;
	k->line_abort = 0;
	k->streaming = 0;
	k->errbuf[0] = '\0';
	k->warning[0] = '\0';
	k->date[0] = '\0';
	k->done_cb = cb;
	k->arg = arg;
	k->busy = 1;
	if (curlev_add(k->cv, e, done_cb, k) == -1) {
		request_end(k);
		return -1;
	}
	k->fresh = 0;
	return 0;
}

int
kube_unanswered(const struct kube_result *res)
{
	return res->status == 0 || res->status >= 500 || res->status == 429;
}

void
kube_set_observer(struct kube *k, kube_observe_cb cb, void *arg)
{
	k->obs_cb = cb;
	k->obs_arg = arg;
}

void
kube_set_one_shot(struct kube *k)
{
	k->one_shot = 1;
}

void
kube_cancel(struct kube *k)
{
	if (!k->busy)
		return;
	curlev_cancel(k->cv, k->easy);
	/* An aborted transfer leaves its connection in an unknown state. */
	k->fresh = 1;
	request_end(k);
}

int
kube_busy(const struct kube *k)
{
	return k->busy;
}

void
kube_token_stale(struct kube *k)
{
	token_stale(k->token);
}

void
kube_free(struct kube *k)
{
	if (k == NULL)
		return;
	kube_cancel(k);
	if (k->in_cb > 0) {
		/* Called from our own done_cb: finish when it returns. */
		k->dead = 1;
		return;
	}
	if (k->easy != NULL)
		curl_easy_cleanup(k->easy);
	curl_slist_free_all(k->connect_list);
	free(k->connect_to);
	free(k->server);
	free(k->body);
	/* Scrub the secret in our copy of the credentials. */
	token_wipe_free(k->creds.key_pem);
	k->creds.key_pem = NULL;
	creds_clear(&k->creds);
	free(k);
}
