/*
 * kube_int.h -- what kube.c (the request engine), kube_rest.c (the
 * verbs and their URLs) and kube_tls.c (TLS, client certificate, proxy)
 * share; not for other modules.
 */

#ifndef KUBE_INT_H
#define KUBE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "api/curlev.h"
#include "api/kube.h"
#include "config/creds.h"

struct kube {
	struct curlev		*cv;
	CURL			*easy;		/* reused for every request */
	struct kube_creds	 creds;		/* our copy, but the token */
	char			*server;	/* URL prefix to use */
	char			*connect_to;	/* tls_server_name mapping */
	struct curl_slist	*connect_list;	/* CURLOPT_CONNECT_TO */
	struct token		*token;		/* borrowed, shared */
	struct curl_slist	*headers;	/* of the running request */
	char			*url;		/* of the running request */
	char			*body;		/* response body; NUL-terminated */
	size_t			 len;
	size_t			 cap;
	int			 too_large;	/* body passed LEASE_BODY_MAX */
	kube_line_cb		 line_cb;	/* a watch: lines go here */
	int			 streaming;	/* the watch answered 200 */
	int			 line_abort;	/* line_cb asked to stop */
	int			 fresh;		/* next request on a new connection */
	int			 one_shot;	/* a new connection per request */
	int			 busy;
	kube_done_cb		 done_cb;
	void			*arg;
	int			 in_cb;		/* inside done_cb */
	int			 dead;		/* kube_free ran inside done_cb */
	const char		*ctype;		/* body type; NULL: JSON */
	char			 ctype_hdr[128]; /* kube_call's, for ctype */
	const char		*verb;		/* of the running request */
	uint64_t		 start_us;	/* when it started, clock_raw_us */
	kube_observe_cb		 obs_cb;	/* metrics hook, or NULL */
	void			*obs_arg;	/* its argument */
	char			 errbuf[CURL_ERROR_SIZE];
	char			 warning[256];	/* first Warning header */
	char			 date[64];	/* the Date header's value */
};

/*
 * Start method on url (steals it; NULL fails) with body (NULL: none),
 * bounded by timeout_ms; cb(arg) runs from the loop when it ends.  The
 * verb for metrics is k->verb when the caller set it, else the method's;
 * k->ctype, when set, is the body's Content-Type header.  Returns 0, or
 * -1 if k is busy or the request could not be started (cb will not run).
 */
int	kube_request(struct kube *k, const char *method, char *url,
	    const char *body, uint64_t timeout_ms, kube_done_cb cb, void *arg);

/*
 * The server half of k's set-up, from k->creds: k->server (the URL
 * prefix, rewritten for tls_server_name) and the options of k->easy that
 * stay the same for every request: TLS verification, CA, client
 * certificate and key, CONNECT_TO, keepalive, and the proxy by Go's
 * rules.  Returns 0, or -1 with err.
 */
int	kube_tls_setup(struct kube *k, char *err, size_t errlen);

/*
 * What the request url (one of kube_rest.c's) is on, for an error that
 * names it: "leases/NAME in namespace NS", "events in namespace NS", in
 * buf (len bytes); "" for a URL without a namespace.
 */
void	kube_url_target(const char *url, char *buf, size_t len);

#endif /* KUBE_INT_H */
