/*
 * gate.c -- the candidacy gate: probe thresholds, clients and the pause
 * (gate.h).  The kubelet's probe rules: a result changes the verdict
 * only after its threshold of results in a row like it.
 */

#include <string.h>

#include "core/gate.h"

void
gate_init(struct gate *g, const struct gate_config *conf)
{
	memset(g, 0, sizeof(*g));
	g->conf = *conf;
	if (g->conf.failure_threshold == 0)
		g->conf.failure_threshold = 1;
	if (g->conf.success_threshold == 0)
		g->conf.success_threshold = 1;
}

void
gate_probe(struct gate *g, int ok)
{
	ok = ok != 0;
	if (g->probed && ok == g->last_ok)
		g->run++;
	else
		g->run = 1;
	g->probed = 1;
	g->last_ok = ok;
	if (ok && g->run >= g->conf.success_threshold)
		g->healthy = 1;
	else if (!ok && g->run >= g->conf.failure_threshold)
		g->healthy = 0;
}

void
gate_clients(struct gate *g, unsigned n, uint64_t now_ms)
{
	if (n == 0 && g->clients > 0)
		g->client_gone_ms = now_ms;
	g->clients = n;
}

void
gate_pause(struct gate *g, int paused)
{
	g->paused = paused != 0;
}

/* Whether a client holds candidacy at now_ms (or did within the grace). */
static int
has_client(const struct gate *g, uint64_t now_ms)
{
	if (g->clients > 0)
		return 1;
	return g->client_gone_ms != 0 &&
	    now_ms < g->client_gone_ms + g->conf.client_grace_ms;
}

enum gate_reason
gate_verdict(const struct gate *g, uint64_t now_ms)
{
	if (g->paused)
		return GATE_PAUSED;
	if (g->conf.probe && !g->probed)
		return GATE_NOT_PROBED;
	if (g->conf.probe && !g->healthy)
		return GATE_UNHEALTHY;
	if (g->conf.require_client && !has_client(g, now_ms))
		return GATE_NO_CLIENT;
	return GATE_OK;
}

uint64_t
gate_wake(const struct gate *g, uint64_t now_ms)
{
	uint64_t	 end;

	if (!g->conf.require_client || g->clients > 0 ||
	    g->client_gone_ms == 0)
		return 0;
	end = g->client_gone_ms + g->conf.client_grace_ms;
	return now_ms < end ? end : 0;
}

uint64_t
gate_cooldown(const struct gate *g, enum gate_reason reason)
{
	return reason == GATE_PAUSED || reason == GATE_OK ? 0 :
	    g->conf.cooldown_ms;
}

const char *
gate_reason_text(enum gate_reason reason)
{
	switch (reason) {
	case GATE_OK:
		return "";
	case GATE_PAUSED:
		return "paused";
	case GATE_NOT_PROBED:
		return "app not yet probed";
	case GATE_UNHEALTHY:
		return "app unhealthy";
	case GATE_NO_CLIENT:
		return "no client";
	}
	return "";
}
