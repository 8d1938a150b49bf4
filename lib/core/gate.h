/*
 * gate.h -- whether this instance is a candidate: the application's
 * health (probe results with the kubelet's thresholds), its clients
 * (client-bound leadership), and a pause by hand.  Pure: no I/O, no
 * clock; every input carries its monotonic time.  The daemon feeds the
 * verdict to the elector as ELECTOR_IN_CANDIDACY, with gate_cooldown's
 * cooldown; the elector does the rest (core/elector.h).
 */

#ifndef GATE_H
#define GATE_H

#include <stdint.h>

struct gate_config {
	int		 probe;			/* an application probe runs */
	unsigned	 failure_threshold;	/* failures in a row: unhealthy */
	unsigned	 success_threshold;	/* successes in a row: healthy */
	int		 require_client;	/* a candidate only with a client */
	uint64_t	 client_grace_ms;	/* after the last client leaves */
	uint64_t	 cooldown_ms;		/* no takeover after a release for
						   ill health or no client */
};

/* Why an instance is not a candidate; GATE_OK when it is one. */
enum gate_reason {
	GATE_OK,
	GATE_PAUSED,		/* "paused" */
	GATE_NOT_PROBED,	/* "app not yet probed" */
	GATE_UNHEALTHY,		/* "app unhealthy" */
	GATE_NO_CLIENT		/* "no client" */
};

struct gate {
	struct gate_config	 conf;
	int			 probed;	/* a probe result came */
	int			 healthy;	/* by the thresholds */
	unsigned		 run;		/* results in a row like the last */
	int			 last_ok;	/* the last result */
	unsigned		 clients;	/* streams open now */
	uint64_t		 client_gone_ms; /* when the last one closed;
						   0 = never had one */
	int			 paused;
};

/* Initialise g: not probed yet, no client, not paused. */
void		 gate_init(struct gate *g, const struct gate_config *conf);

/*
 * A probe result.  Healthy after success_threshold successes in a row
 * (from the first result on: an application is not healthy before it
 * has answered), unhealthy after failure_threshold failures in a row.
 */
void		 gate_probe(struct gate *g, int ok);

/* The number of clients now (open /leader/watch and /sse streams). */
void		 gate_clients(struct gate *g, unsigned n, uint64_t now_ms);

/* Paused by hand (POST /leader/pause), or resumed. */
void		 gate_pause(struct gate *g, int paused);

/*
 * Why g is not a candidate at now_ms, GATE_OK if it is one.  The reasons
 * are checked in the order of enum gate_reason.  A client that left less
 * than client_grace_ms ago still counts.
 */
enum gate_reason gate_verdict(const struct gate *g, uint64_t now_ms);

/*
 * The monotonic time at which gate_verdict may change without an input
 * (the client grace running out), or 0 if none.
 */
uint64_t	 gate_wake(const struct gate *g, uint64_t now_ms);

/*
 * The cooldown to give the elector when candidacy ends for reason: the
 * configured one for ill health and for no client (against flapping),
 * none for a pause (an operator's hand, undone by hand).
 */
uint64_t	 gate_cooldown(const struct gate *g, enum gate_reason reason);

/* The reason as the local API says it: "", "paused", "app unhealthy"... */
const char	*gate_reason_text(enum gate_reason reason);

#endif /* GATE_H */
