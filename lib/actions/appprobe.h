/*
 * appprobe.h -- the application's health, probed on the event loop the
 * way the kubelet probes a container: an HTTP GET (healthy on a 2xx or
 * 3xx status, redirects not followed) or a TCP connect, every period,
 * each bounded by its timeout.  Never blocks: HTTP goes through the
 * daemon's curl multi handle, a TCP probe is a non-blocking connect
 * watched by libev.  Each result is reported as it comes; thresholds
 * and what the results mean for the election are core/gate.c's.
 */

#ifndef APPPROBE_H
#define APPPROBE_H

#include <stdint.h>

#include <ev.h>

#include "api/curlev.h"

#define APPPROBE_URL_MAX	512

struct appprobe_config {
	char		 url[APPPROBE_URL_MAX];	/* http://HOST:PORT/PATH or
						   tcp://HOST:PORT */
	uint64_t	 period_ms;		/* start to start; > 0 */
	uint64_t	 timeout_ms;		/* one probe's bound; > 0 */
};

/*
 * One probe's result: ok 1 (healthy) or 0, how long it took, and for a
 * failure a short reason ("connection refused", "status 500", "timed out
 * after 1000 ms", ...), static or valid only during the call.  why is
 * never NULL: a success says what was seen ("status 200", "connected").
 */
typedef void (*appprobe_cb)(int ok, uint64_t took_ms, const char *why,
    void *arg);

struct appprobe;

/*
 * Start probing url on loop (HTTP through cv, borrowed): the first probe
 * at once, then one every period_ms after the previous one started (a
 * probe still running when the next is due is abandoned and counts as
 * a failure, as a timeout).  The URL is split by netaddr_url_split;
 * the configuration check has vetted its scheme and host.  Returns NULL
 * with err for a URL it cannot probe (any scheme but http and tcp:
 * https is not needed for an application in the pod, see appprobe.c).
 */
struct appprobe	*appprobe_new(struct ev_loop *loop, struct curlev *cv,
		    const struct appprobe_config *conf, appprobe_cb cb,
		    void *arg, char *err, size_t errlen);

/*
 * Stop probing (a probe running is aborted, cb is not called) and free;
 * p NULL is a no-op.  May be called from cb.
 */
void		 appprobe_free(struct appprobe *p);

#endif /* APPPROBE_H */
