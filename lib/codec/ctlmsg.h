/*
 * ctlmsg.h -- the local API's JSON answers as leaderd's control client
 * reads them (`leaderd status`, `release`, `pause`, `resume`,
 * `wait-leader`): the /leader document, a step-down's and a pause's
 * answer, an error.  One decoder for all of them; each field says
 * whether the answer carried it, so a field a newer or older daemon
 * lacks is simply absent.
 *
 * Pure, as lease.h: no I/O, no clock, no logging; errors are written
 * into the caller's buffer.
 */

#ifndef CTLMSG_H
#define CTLMSG_H

#include <stddef.h>
#include <stdint.h>

#define CTLMSG_STR_MAX	1024	/* a holder of 256 bytes, escaped */

/* Which fields an answer carried (struct ctlmsg's has). */
#define CTLMSG_NAME		0x0001
#define CTLMSG_IS_LEADER	0x0002
#define CTLMSG_IDENTITY		0x0004
#define CTLMSG_LOCK		0x0008
#define CTLMSG_STATE		0x0010
#define CTLMSG_TOKEN		0x0020
#define CTLMSG_VALID_FOR	0x0040
#define CTLMSG_INDEX		0x0080
#define CTLMSG_CANDIDATE	0x0100
#define CTLMSG_CAND_REASON	0x0200
#define CTLMSG_RELEASED		0x0400
#define CTLMSG_COOLDOWN		0x0800
#define CTLMSG_PAUSED		0x1000
#define CTLMSG_ERROR		0x2000
#define CTLMSG_REASON		0x4000
#define CTLMSG_PROBLEM		0x8000	/* a problem object (not null) */
#define CTLMSG_STALE		0x10000

/* One answer of the local API; a field is valid when its bit is in has. */
struct ctlmsg {
	unsigned	 has;			/* CTLMSG_* bits */
	char		 name[CTLMSG_STR_MAX];	/* the holder; "" = none */
	int		 is_leader;		/* this instance leads now */
	char		 identity[CTLMSG_STR_MAX]; /* this instance's */
	char		 lock[CTLMSG_STR_MAX];	/* "leases/NS/NAME" */
	char		 state[64];		/* "leader", "follower", ... */
	char		 token[CTLMSG_STR_MAX];	/* fencing_token; "" = free */
	uint64_t	 valid_for_ms;		/* leadership left */
	uint64_t	 index;			/* the change counter */
	int		 candidate;		/* competes for the lease now */
	char		 cand_reason[CTLMSG_STR_MAX]; /* why not; "" if one */
	int		 released;		/* a step-down was written */
	uint64_t	 cooldown_ms;		/* a step-down's cooldown */
	int		 paused;		/* out of candidacy by hand */
	char		 error[CTLMSG_STR_MAX];	/* an error answer's text */
	char		 reason[CTLMSG_STR_MAX]; /* a 202's or 503's why */
	char		 problem_code[64];	/* /leader's problem.code */
	char		 problem_severity[16];	/* "error" or "warning" */
	char		 problem[CTLMSG_STR_MAX]; /* its message */
	char		 problem_since[64];	/* its since, RFC 3339 */
	int		 stale;			/* the record is not confirmed */
	char		 confirmed_at[64];	/* since then; "" = never */
};

/*
 * Decode the JSON answer body (len bytes) into m.  Unknown fields are
 * ignored; a known field of the wrong type, or a body that is not a
 * JSON object, is an error: -1 with err.
 */
int	ctlmsg_decode(const char *body, size_t len, struct ctlmsg *m,
	    char *err, size_t errlen);

#endif /* CTLMSG_H */
