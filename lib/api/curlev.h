/*
 * curlev.h -- libcurl multi driven by libev: the multi_socket pattern of
 * curl's evhiperfifo.c, with the pitfalls of ref/c-style-anchors.md 3b
 * avoided (CURL_CSELECT_* bits, timeout 0 deferred to the loop,
 * millisecond arithmetic in floating point, info_read after every
 * socket_action, multi cleanup before the watchers go).
 */

#ifndef CURLEV_H
#define CURLEV_H

#include <curl/curl.h>
#include <ev.h>

struct curlev;

/*
 * Called once when a transfer ends, with libcurl's result.  The easy
 * handle has already been removed from the multi handle; the callback
 * owns it again and may clean it up or reuse it.
 */
typedef void (*curlev_done_cb)(CURL *easy, CURLcode result, void *arg);

/* A multi handle bound to loop.  Returns NULL with err on failure. */
struct curlev	*curlev_new(struct ev_loop *loop, char *err, size_t errlen);

/*
 * Start easy on the multi handle; done_cb(easy, result, arg) runs from the
 * loop when it ends.  The easy handle is borrowed until then.  Returns 0
 * or -1 (easy not added).
 */
int	curlev_add(struct curlev *cv, CURL *easy, curlev_done_cb done_cb,
	    void *arg);

/*
 * Abort easy if it is running; done_cb is not called.  Safe for a handle
 * that is not (or no longer) running.
 */
void	curlev_cancel(struct curlev *cv, CURL *easy);

/* Number of transfers running. */
int	curlev_running(const struct curlev *cv);

/*
 * Cancel every transfer (their callbacks are not called) and free cv.
 * The loop must still exist.
 */
void	curlev_free(struct curlev *cv);

#endif /* CURLEV_H */
