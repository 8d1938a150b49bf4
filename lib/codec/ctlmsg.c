/*
 * ctlmsg.c -- the local API's JSON answers for leaderd's control client
 * (see ctlmsg.h).  The daemon writes these documents with buf_printf
 * (server/localapi.c, daemon/daemon_http.c); this is their one reader.
 */

#include <stdio.h>
#include <string.h>

#include "codec/codec_int.h"
#include "codec/ctlmsg.h"

/* A boolean field: 1 present, 0 absent (or null), -1 with err. */
static int
get_bool(json_t *obj, const char *key, int *out, char *err, size_t errlen)
{
	json_t	*v;

	if ((v = json_object_get(obj, key)) == NULL || json_is_null(v))
		return 0;
	if (!json_is_boolean(v)) {
		snprintf(err, errlen, "%s: not true or false", key);
		return -1;
	}
	*out = json_is_true(v);
	return 1;
}

/* A whole number field, not negative: 1 present, 0 absent, -1 err. */
static int
get_u64(json_t *obj, const char *key, uint64_t *out, char *err,
    size_t errlen)
{
	json_t	*v;

	if ((v = json_object_get(obj, key)) == NULL || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		snprintf(err, errlen, "%s: not a whole number", key);
		return -1;
	}
	*out = (uint64_t)json_integer_value(v);
	return 1;
}

/* A string field: 1 present, 0 absent, -1 with err. */
static int
get_str(json_t *obj, const char *key, char *buf, size_t len, char *err,
    size_t errlen)
{
	json_t	*v;

	if ((v = json_object_get(obj, key)) == NULL || json_is_null(v))
		return 0;
	if (codec_get_string(obj, key, key, buf, len, err, errlen) == -1)
		return -1;
	return 1;
}

/*
 * The "problem" object of /leader: 1 present, 0 absent or null, -1 with
 * err (not an object, or a field of the wrong type).
 */
static int
get_problem(json_t *root, struct ctlmsg *m, char *err, size_t errlen)
{
	json_t	*p;

	if ((p = json_object_get(root, "problem")) == NULL || json_is_null(p))
		return 0;
	if (!json_is_object(p)) {
		snprintf(err, errlen, "problem: not an object or null");
		return -1;
	}
	if (get_str(p, "code", m->problem_code, sizeof(m->problem_code), err,
	    errlen) == -1 || get_str(p, "severity", m->problem_severity,
	    sizeof(m->problem_severity), err, errlen) == -1 ||
	    get_str(p, "message", m->problem, sizeof(m->problem), err,
	    errlen) == -1 || get_str(p, "since", m->problem_since,
	    sizeof(m->problem_since), err, errlen) == -1)
		return -1;
	return 1;
}

/* Decode one field; on success set its bit if it was present. */
#define FIELD(call, bit) do {						\
	if ((rc = (call)) == -1)					\
		goto bad;						\
	if (rc == 1)							\
		m->has |= (bit);					\
} while (0)

int
ctlmsg_decode(const char *body, size_t len, struct ctlmsg *m, char *err,
    size_t errlen)
{
	json_t		*root;
	json_error_t	 jerr;
	int		 rc;

	memset(m, 0, sizeof(*m));
	codec_json_init();
	if ((root = json_loadb(body, len, 0, &jerr)) == NULL) {
		snprintf(err, errlen, "not JSON: %s", jerr.text);
		return -1;
	}
	if (!json_is_object(root)) {
		snprintf(err, errlen, "not a JSON object");
		json_decref(root);
		return -1;
	}
	FIELD(get_str(root, "name", m->name, sizeof(m->name), err, errlen),
	    CTLMSG_NAME);
	FIELD(get_bool(root, "is_leader", &m->is_leader, err, errlen),
	    CTLMSG_IS_LEADER);
	FIELD(get_str(root, "identity", m->identity, sizeof(m->identity), err,
	    errlen), CTLMSG_IDENTITY);
	FIELD(get_str(root, "lock", m->lock, sizeof(m->lock), err, errlen),
	    CTLMSG_LOCK);
	FIELD(get_str(root, "state", m->state, sizeof(m->state), err, errlen),
	    CTLMSG_STATE);
	FIELD(get_str(root, "fencing_token", m->token, sizeof(m->token), err,
	    errlen), CTLMSG_TOKEN);
	FIELD(get_u64(root, "valid_for_ms", &m->valid_for_ms, err, errlen),
	    CTLMSG_VALID_FOR);
	FIELD(get_u64(root, "index", &m->index, err, errlen), CTLMSG_INDEX);
	FIELD(get_bool(root, "candidate", &m->candidate, err, errlen),
	    CTLMSG_CANDIDATE);
	FIELD(get_str(root, "candidate_reason", m->cand_reason,
	    sizeof(m->cand_reason), err, errlen), CTLMSG_CAND_REASON);
	FIELD(get_bool(root, "released", &m->released, err, errlen),
	    CTLMSG_RELEASED);
	FIELD(get_u64(root, "cooldown_ms", &m->cooldown_ms, err, errlen),
	    CTLMSG_COOLDOWN);
	FIELD(get_bool(root, "paused", &m->paused, err, errlen),
	    CTLMSG_PAUSED);
	FIELD(get_str(root, "error", m->error, sizeof(m->error), err, errlen),
	    CTLMSG_ERROR);
	FIELD(get_str(root, "reason", m->reason, sizeof(m->reason), err,
	    errlen), CTLMSG_REASON);
	FIELD(get_problem(root, m, err, errlen), CTLMSG_PROBLEM);
	FIELD(get_bool(root, "stale", &m->stale, err, errlen), CTLMSG_STALE);
	if (get_str(root, "confirmed_at", m->confirmed_at,
	    sizeof(m->confirmed_at), err, errlen) == -1)
		goto bad;
	json_decref(root);
	return 0;
bad:
	json_decref(root);
	return -1;
}
