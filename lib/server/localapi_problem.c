/*
 * localapi_problem.c -- what /leader says of what is wrong: the problem
 * the daemon found (daemon_problem.c keeps st->problems), the time the
 * record was last confirmed from the API server and whether that is
 * older than lease_duration (docs/api.md "Problems").  Apart from
 * localapi.c so that the /leader body gains these fields through one
 * call.
 */

#include <stdint.h>
#include <string.h>

#include "base/buf.h"
#include "codec/apitime.h"
#include "server/localapi.h"
#include "server/localapi_int.h"

const struct localapi_problem *
localapi_problem_top(const struct localapi_state *st)
{
	int	 i;

	for (i = 0; i < LOCALAPI_PROBLEMS; i++)
		if (st->problems[i].code != NULL)
			return &st->problems[i];
	return NULL;
}

/* One problem as a JSON object. */
static void
problem_json(const struct localapi_problem *p, struct buf *b)
{
	char	 t[APITIME_MICRO_LEN];

	buf_add(b, "{\"code\":", 8);
	buf_json_str(b, p->code);
	buf_add(b, ",\"severity\":", 12);
	buf_json_str(b, p->severity);
	buf_add(b, ",\"message\":", 11);
	buf_json_str(b, p->message);
	apitime_format_micro(p->since_us, t);
	buf_add(b, ",\"since\":", 9);
	buf_json_str(b, t);
	buf_add(b, "}", 1);
}

void
localapi_problem_json(const struct localapi_state *st, uint64_t now_ms,
    struct buf *b)
{
	const struct localapi_problem	*top = localapi_problem_top(st);
	char				 t[APITIME_MICRO_LEN];
	int				 i, n = 0;

	buf_add(b, ",\"problem\":", 11);
	if (top == NULL)
		buf_add(b, "null", 4);
	else
		problem_json(top, b);
	buf_add(b, ",\"problems\":[", 13);
	for (i = 0; i < LOCALAPI_PROBLEMS; i++) {
		if (st->problems[i].code == NULL)
			continue;
		if (n++ > 0)
			buf_add(b, ",", 1);
		problem_json(&st->problems[i], b);
	}
	buf_add(b, "],\"confirmed_at\":", 17);
	if (st->confirmed_us == 0)
		buf_add(b, "null", 4);
	else {
		apitime_format_micro(st->confirmed_us, t);
		buf_json_str(b, t);
	}
	buf_add_str(b, st->confirmed_ms == 0 ||
	    now_ms - st->confirmed_ms > st->conf->lease_duration_ms ?
	    ",\"stale\":true" : ",\"stale\":false");
}
