/*
 * httpget.c -- one bounded HTTP GET for a health probe (httpget.h).
 *
 * The kubelet's prober (pkg/probe/http) disables keep-alives, follows no
 * redirect it could not check and reads at most 10 KiB of the body; the
 * same here: a fresh connection that is closed afterwards, no
 * CURLOPT_FOLLOWLOCATION, and a write callback that drops the body and
 * ends the transfer once the cap is read, so an endless body costs
 * neither memory nor the rest of the timeout.  The headers are bounded
 * too: curl does not keep them, but an endless stream of them would
 * otherwise run until the timeout.
 */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "api/httpget.h"
#include "base/xmalloc.h"

struct httpget {
	struct curlev	*cv;			/* borrowed */
	CURL		*easy;			/* ours */
	httpget_cb	 cb;
	void		*arg;			/* for cb */
	size_t		 body;			/* body bytes read */
	size_t		 head;			/* header bytes read */
	int		 capped;		/* the body cap ended it */
	int		 head_over;		/* the header cap ended it */
	char		 errbuf[CURL_ERROR_SIZE]; /* curl's text */
};

/* CURLOPT_WRITEFUNCTION: count and drop; 0 ends the transfer. */
static size_t
body_cb(char *data, size_t size, size_t nmemb, void *userp)
{
	struct httpget	*g = userp;
	size_t		 n = size * nmemb;

	(void)data;
	g->body += n;
	if (g->body >= HTTPGET_BODY_MAX) {
		g->capped = 1;
		return 0;
	}
	return n;
}

/* CURLOPT_HEADERFUNCTION: count; 0 ends the transfer. */
static size_t
head_cb(char *data, size_t size, size_t nmemb, void *userp)
{
	struct httpget	*g = userp;
	size_t		 n = size * nmemb;

	(void)data;
	g->head += n;
	if (g->head > HTTPGET_HEAD_MAX) {
		g->head_over = 1;
		return 0;
	}
	return n;
}

static void
done_cb(CURL *easy, CURLcode rc, void *arg)
{
	struct httpget		*g = arg;
	struct httpget_result	 res;
	httpget_cb		 cb = g->cb;
	void			*cbarg = g->arg;
	char			 why[CURL_ERROR_SIZE + 64];
	long			 status = 0, oserr = 0;

	memset(&res, 0, sizeof(res));
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(easy, CURLINFO_OS_ERRNO, &oserr);
	if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && g->capped &&
	    status > 0))
		res.status = status;
	else if (rc == CURLE_OPERATION_TIMEDOUT) {
		res.timed_out = 1;
		snprintf(why, sizeof(why), "timed out");
	} else if (g->head_over)
		snprintf(why, sizeof(why), "response headers over %d KiB",
		    HTTPGET_HEAD_MAX / 1024);
	else if (rc == CURLE_COULDNT_CONNECT && oserr == ECONNREFUSED)
		snprintf(why, sizeof(why), "connection refused");
	else
		snprintf(why, sizeof(why), "%s", g->errbuf[0] != '\0' ?
		    g->errbuf : curl_easy_strerror(rc));
	if (res.status == 0)
		res.why = why;
	/* Freed first, so that cb may do anything, even start another. */
	curl_easy_cleanup(easy);
	free(g);
	cb(&res, cbarg);
}

struct httpget *
httpget_start(struct curlev *cv, const char *url, uint64_t timeout_ms,
    const char *user_agent, httpget_cb cb, void *arg, char *err,
    size_t errlen)
{
	struct httpget	*g;
	CURL		*e;
	long		 t;

	if ((e = curl_easy_init()) == NULL) {
		snprintf(err, errlen, "curl_easy_init failed");
		return NULL;
	}
	g = xcalloc(1, sizeof(*g));
	g->cv = cv;
	g->easy = e;
	g->cb = cb;
	g->arg = arg;
	t = timeout_ms > (uint64_t)LONG_MAX ? LONG_MAX : (long)timeout_ms;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(e, CURLOPT_USERAGENT, user_agent);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, t);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, t);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, g->errbuf);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, g);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, head_cb);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, g);
	if (curlev_add(cv, e, done_cb, g) == -1) {
		snprintf(err, errlen, "the HTTP request could not start");
		curl_easy_cleanup(e);
		free(g);
		return NULL;
	}
	return g;
}

void
httpget_cancel(struct httpget *g)
{
	if (g == NULL)
		return;
	curlev_cancel(g->cv, g->easy);
	curl_easy_cleanup(g->easy);
	free(g);
}
