/*
 * daemon_setup.c -- the set-up before the loop runs: the parts the
 * elections share (the curl multi handle, the token, the Events client,
 * the local API's route table and listeners) and each election's own
 * (its elector, client, lock, watch and actions), the LeaseCandidate, a
 * shard group's list, and candidacy last.  Every failure is logged and
 * returned as -1: leaderd does not start.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "actions/actions.h"
#include "api/curlev.h"
#include "api/kube.h"
#include "api/lock.h"
#include "api/token.h"
#include "api/watch.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "config/compat.h"
#include "config/config.h"
#include "core/elector.h"
#include "daemon/daemon_int.h"
#include "server/httpd.h"
#include "server/localapi.h"

/* Set up election e's elector, its client, lock, watch and label. */
static int
election_setup(struct election *e, const struct kube_creds *creds,
    const char *ua)
{
	struct daemon		*d = e->d;
	const struct config	*c = e->conf;
	struct elector_config	 ec;
	char			 err[512];

	memset(&ec, 0, sizeof(ec));
	snprintf(ec.identity, sizeof(ec.identity), "%s", c->identity);
	ec.lease_duration_ms = c->lease_duration_ms;
	ec.renew_deadline_ms = c->renew_deadline_ms;
	ec.retry_period_ms = c->retry_period_ms;
	ec.request_timeout_ms = c->request_timeout_ms;
	ec.release_on_cancel = c->release_on_cancel;
	ec.cooldown_ms = c->step_down_cooldown_ms;
	ec.for_life = e->idx == 0 && d->for_life;
	ec.coordinated = e->idx == 0 && c->coordinated;
	ec.seed = (uint64_t)clock_wall_us() ^ ((uint64_t)getpid() << 32) ^
	    ((uint64_t)e->idx << 16);
	if (elector_init(&e->el, &ec, clock_mono_ms(), err, sizeof(err)) == -1) {
		log_warnx("%s", err);
		return -1;
	}
	if ((e->kube = kube_new(d->cv, creds, d->token, ua, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	kube_set_observer(e->kube, daemon_api_observe_cb, d);
	if ((e->lk = lock_new(e->kube, c->lock_type, c->lock_namespace,
	    c->lock_name, c->identity, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	if (d->sh != NULL)
		daemon_shards_labels(e);
	/*
	 * Only a Lease can be watched: the legacy locks are polled.  A shard
	 * group's Leases are followed by the group's list instead.
	 */
	if (c->watch && strcmp(c->lock_type, "leases") == 0 && d->sh == NULL) {
		struct watch_cbs	 cbs = { daemon_watch_record_cb,
					    daemon_watch_reread_cb,
					    daemon_watch_health_cb, NULL };
		struct kube		*wk;

		if ((wk = kube_new(d->cv, creds, d->token, ua, err,
		    sizeof(err))) == NULL) {
			log_warnx("%s", err);
			return -1;
		}
		kube_set_observer(wk, daemon_api_observe_cb, d);
		e->watch = watch_new(d->loop, wk, c->lock_namespace,
		    c->lock_name, c->watch_timeout_ms, c->request_timeout_ms,
		    &cbs, e);
	}
	/* The command and the endpoints are the first election's. */
	if (((e->idx == 0 && (d->cmd != NULL || c->ep_service[0] != '\0')) ||
	    c->label_enabled) &&
	    (e->act = actions_new(
	    d->loop, d->cv, creds, d->token, ua, c, e->idx == 0 ? d->cmd :
	    NULL, daemon_command_quit_cb, d, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	if (e->act != NULL)
		actions_set_observer(e->act, daemon_api_observe_cb, d);
	return 0;
}

int
daemon_setup(struct daemon *d, const struct config *c,
    const struct kube_creds *creds)
{
	struct localapi_state	**sts;
	void			**args;
	char			 err[512], ua[64];
	int			 i;

	d->for_life = compat_for_life(c->compat);
	if ((d->cv = curlev_new(d->loop, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	snprintf(ua, sizeof(ua), "leaderd/%s", LEADERD_VERSION);
	/* One token for every client: a rotation reaches them all. */
	if ((d->token = token_new(creds, err, sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	if ((d->events = kube_new(d->cv, creds, d->token, ua, err,
	    sizeof(err))) == NULL) {
		log_warnx("%s", err);
		return -1;
	}
	kube_set_observer(d->events, daemon_api_observe_cb, d);
	fifo_init(&d->evq, d->evq_slots, DAEMON_EVENTS_MAX,
	    sizeof(d->evq_slots[0]));
	for (i = 0; i < d->nel; i++)
		if (election_setup(&d->el[i], creds, ua) == -1)
			return -1;
	if (daemon_cand_setup(d, creds, ua) == -1)
		return -1;
	if (d->sh != NULL && daemon_shards_setup(d, creds, ua) == -1)
		return -1;
	localapi_routes(&d->el[0].st, daemon_metrics_reply,
	    daemon_release_reply, daemon_pause_reply, d);
	sts = xcalloc((size_t)d->nel, sizeof(*sts));
	args = xcalloc((size_t)d->nel, sizeof(*args));
	for (i = 0; i < d->nel; i++) {
		sts[i] = &d->el[i].st;
		args[i] = &d->el[i];
	}
	/* /leader/release is the first election's. */
	for (i = 0; d->el[0].st.routes[i].path != NULL; i++)
		if (d->el[0].st.routes[i].handler == daemon_release_reply)
			d->el[0].st.routes[i].arg = &d->el[0];
	d->routes = localapi_routes_elections(sts, (size_t)d->nel,
	    daemon_release_reply, args);
	free(args);
	d->sts = sts;	/* the states keep pointing at it (GET /leaders) */
	d->routes = daemon_shards_routes(d, d->routes);
	d->httpd = httpd_new(d->loop, d->routes);
	httpd_set_max_streams(d->httpd, c->listen_max_streams);
	if (c->listen_http[0] != '\0' &&
	    httpd_listen_tcp(d->httpd, c->listen_http, err, sizeof(err)) ==
	    -1) {
		log_warnx("%s", err);
		return -1;
	}
	if (c->listen_unix[0] != '\0' &&
	    httpd_listen_unix(d->httpd, c->listen_unix, err, sizeof(err)) ==
	    -1) {
		log_warnx("%s", err);
		return -1;
	}
	if (c->listen_probes[0] != '\0' &&
	    httpd_listen_probes(d->httpd, c->listen_probes, err,
	    sizeof(err)) == -1) {
		log_warnx("%s", err);
		return -1;
	}
	if (c->listen_metrics[0] != '\0' &&
	    httpd_listen_metrics(d->httpd, c->listen_metrics, err,
	    sizeof(err)) == -1) {
		log_warnx("%s", err);
		return -1;
	}
	if (daemon_gate_setup(d) == -1)
		return -1;
	return daemon_problem_setup(d, creds, ua);
}
