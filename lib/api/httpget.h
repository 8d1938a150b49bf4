/*
 * httpget.h -- one bounded HTTP GET on the daemon's curl multi handle,
 * for a health probe (actions/appprobe.c): only the status matters.  As
 * the kubelet's prober does: a new connection each time, no proxy, no
 * redirect followed, at most HTTPGET_BODY_MAX bytes of the body read and
 * then dropped.  Never blocks, never logs.
 */

#ifndef HTTPGET_H
#define HTTPGET_H

#include <stdint.h>

#include "api/curlev.h"

#define HTTPGET_BODY_MAX	(10 * 1024)	/* the kubelet's body limit */
#define HTTPGET_HEAD_MAX	(64 * 1024)	/* response header bytes */

/* The outcome of one GET, valid only during the callback. */
struct httpget_result {
	long		 status;	/* the status code; 0 if none came */
	int		 timed_out;	/* the timeout ended it */
	const char	*why;		/* what went wrong; NULL when status */
};

typedef void (*httpget_cb)(const struct httpget_result *res, void *arg);

struct httpget;

/*
 * GET url ("http://HOST:PORT/PATH") through cv (borrowed), the whole
 * exchange bounded by timeout_ms, with user_agent (copied).  cb(res, arg)
 * runs once from the loop, never from here; the request is freed before
 * it runs.  Returns NULL with err if the request cannot start.
 */
struct httpget	*httpget_start(struct curlev *cv, const char *url,
		    uint64_t timeout_ms, const char *user_agent, httpget_cb cb,
		    void *arg, char *err, size_t errlen);

/* Abort g (its callback does not run) and free it; g NULL is a no-op. */
void		 httpget_cancel(struct httpget *g);

#endif /* HTTPGET_H */
