/*
 * localapi.h -- the local API's routes, answered from the daemon's state.
 * No I/O: httpd parses and sends, daemon keeps the state current.
 */

#ifndef LOCALAPI_H
#define LOCALAPI_H

#include <stdint.h>

#include "config.h"
#include "elector.h"
#include "httpd.h"

/* What the daemon shows the local API; fields kept current by daemon.c. */
struct localapi_state {
	const struct config	*conf;		/* borrowed */
	const struct elector	*el;		/* borrowed */
	int			 ready;		/* the lock was read once */
	uint64_t		 wake_ms;	/* armed elector wake, 0 = none */
	uint64_t		 req_deadline_ms; /* in-flight request's end, 0 = none */
	uint64_t		 written_ms;	/* last successful write, 0 = none */
	int			 stopping;	/* shutdown began: never "I lead" */
};

/*
 * Answer req at monotonic time now_ms: GET /leader, /, /healthz, /readyz;
 * 404 for other paths and 405 for other methods, with JSON error bodies.
 */
void	localapi_reply(const struct localapi_state *st,
	    const struct http_request *req, uint64_t now_ms,
	    struct httpd_reply *reply);

#endif /* LOCALAPI_H */
