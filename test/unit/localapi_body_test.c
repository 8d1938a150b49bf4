/*
 * localapi_body_test.c -- the /leader answer (localapi.c) byte for byte
 * against the printf formatting it had before its numbers and strings
 * were written without printf: the reference below is that code, kept
 * here.  Over many states drawn from a fixed seed (holders with quotes,
 * controls, UTF-8 and bytes that are not; transitions, durations and
 * times at their bounds; every elector state and a few past them;
 * stopping, cooldown, the gate's reason, coordinated election, a claim
 * for life, the index up to 2^64 - 1), the body (as /leader/watch's
 * event, as GET /leader's), the X-Leaderd-Index and
 * X-Leaderd-Fencing-Token headers and the fencing token must be the
 * reference's.  A field added to /leader goes into both.  (The JSON
 * string escape both share is text_test.c's; the numbers' formatter is
 * checked against printf there too.)
 */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "base/buf.h"
#include "codec/apitime.h"
#include "codec/http_parse.h"
#include "config/config.h"
#include "core/elector.h"
#include "server/localapi.h"
#include "server/localapi_int.h"	/* localapi_problem_json */

#define ROUNDS	20000

/* The reference: localapi.c's formatting before, through printf. */

static void
ref_token(const struct lease *rec, char *buf, size_t len)
{
	if (rec->holder[0] == '\0' || rec->transitions < 0) {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, len, "%010" PRId32 "-%s", rec->transitions, rec->uid);
}

static void
ref_time(struct buf *b, const char *key, int64_t us)
{
	char	 t[APITIME_MICRO_LEN];

	buf_printf(b, ",\"%s\":", key);
	if (us == 0) {
		buf_add(b, "null", 4);
		return;
	}
	apitime_format_micro(us, t);
	buf_json_str(b, t);
}

static const char *
ref_reason(const struct localapi_state *d, uint64_t now_ms)
{
	if (d->not_candidate != NULL)
		return d->not_candidate;
	if (elector_cooling_down(d->el, now_ms))
		return "cooldown";
	return "";
}

static void
ref_leader_json(const struct localapi_state *d, uint64_t now_ms,
    struct buf *b)
{
	const struct lease	*o = &d->el->observed;
	int			 leading = !d->stopping &&
				    elector_is_leader(d->el, now_ms);
	char			 token[LEASE_TOKEN_MAX] = "";

	if (d->el->have_observed)
		ref_token(o, token, sizeof(token));
	buf_add(b, "{\"name\":", 8);
	buf_json_str(b, elector_holder(d->el));
	buf_printf(b, ",\"is_leader\":%s,\"identity\":",
	    leading ? "true" : "false");
	buf_json_str(b, d->conf->identity);
	buf_printf(b, ",\"lock\":\"%s/%s/%s\",\"state\":\"%s\"",
	    d->conf->lock_type, d->conf->lock_namespace, d->conf->lock_name,
	    d->stopping && d->el->state != ELECTOR_STOPPED ? "stopping" :
	    elector_state_name(d->el->state));
	buf_printf(b, ",\"transitions\":%d,\"fencing_token\":",
	    o->transitions);
	buf_json_str(b, token);
	ref_time(b, "acquire_time", o->acquire_us);
	ref_time(b, "renew_time", o->renew_us);
	buf_printf(b, ",\"lease_duration_seconds\":%d,\"valid_for_ms\":%llu",
	    o->duration_s, leading &&
	    d->el->lead_until_ms != ELECTOR_FOR_LIFE_MS ?
	    (unsigned long long)(d->el->lead_until_ms - now_ms) : 0ULL);
	buf_printf(b, ",\"candidate\":%s,\"candidate_reason\":",
	    *ref_reason(d, now_ms) == '\0' ? "true" : "false");
	buf_json_str(b, ref_reason(d, now_ms));
	if (d->coordinated != LOCALAPI_COORD_NONE) {
		buf_printf(b, ",\"coordinated\":%s,\"coordinated_reason\":",
		    d->coordinated == LOCALAPI_COORD_ON ? "true" : "false");
		buf_json_str(b, d->coordinated_reason != NULL ?
		    d->coordinated_reason : "");
	}
	buf_printf(b, ",\"index\":%llu", (unsigned long long)d->index);
	ref_time(b, "changed_at", d->changed_us);
	buf_add(b, ",\"election\":", 12);
	buf_json_str(b, d->election != NULL ? d->election :
	    d->conf->lock_name);
	/* The problems came after the printf formatter: no old text to
	   compare them with, so both bodies end with the same call. */
	localapi_problem_json(d, now_ms, b);
	buf_add(b, "}", 1);
}

/* The states drawn. */

static uint64_t	 rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
draw(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t
pick(const uint64_t *v, size_t n)
{
	return v[draw() % n];
}

#define PICK(a)	pick((a), sizeof(a) / sizeof((a)[0]))

static const char *const texts[] = {
	"", "a", "pod-7f9c", "me", "other-pod-0", "a\"b\\c", "tab\there",
	"nl\nand\rcr", "\x01\x1f\x7f", "caf\xc3\xa9", "\xe2\x82\xac euro",
	"\xf0\x9f\x98\x80", "bad \xff byte", "cut \xe2\x82", "\xc0\xaf",
	"\xed\xa0\x80 surrogate", "</script>", "{\"json\":1}",
	"long-name-0123456789-0123456789-0123456789-0123456789-0123456789-"
	"0123456789-0123456789-0123456789-0123456789-0123456789-0123456789",
};

static const uint64_t ints32[] = {
	0, 1, 7, 9, 10, 99, 999999999, 1000000000, 2147483647,
	(uint64_t)-1, (uint64_t)-2147483647 - 1, (uint64_t)-42,
};

static const uint64_t times_us[] = {
	0, 1, 1700000000000000ULL, 1700000000123456ULL, (uint64_t)-1,
	(uint64_t)-1000001, 253402300799999999ULL, 253402300800000000ULL,
	(uint64_t)INT64_MAX, (uint64_t)INT64_MIN,
};

static const uint64_t bigs[] = {
	0, 1, 2, 10, 999, 1000, 4294967295ULL, 4294967296ULL,
	UINT64_MAX - 1, UINT64_MAX, 12345678901234567890ULL,
};

static const char *const reasons[] = {
	NULL, "probe failed", "no client", "paused", "a \"quoted\" reason",
};

static void
draw_text(char *dst, size_t len)
{
	snprintf(dst, len, "%s", texts[draw() % (sizeof(texts) /
	    sizeof(texts[0]))]);
}

struct world {
	struct config		 conf;
	struct elector		 el;
	struct localapi_state	 st;
};

static uint64_t
draw_world(struct world *w)
{
	static const char *const types[] = { "leases", "endpoints",
		"configmaps", "endpointsleases" };
	uint64_t	 now_ms = 1000 + draw() % 100000;

	memset(w, 0, sizeof(*w));
	w->st.conf = &w->conf;
	w->st.el = &w->el;
	draw_text(w->conf.identity, sizeof(w->conf.identity));
	snprintf(w->conf.lock_type, sizeof(w->conf.lock_type), "%s",
	    types[draw() % 4]);
	snprintf(w->conf.lock_namespace, sizeof(w->conf.lock_namespace),
	    "ns-%u", (unsigned)(draw() % 100));
	snprintf(w->conf.lock_name, sizeof(w->conf.lock_name), "lock-%u",
	    (unsigned)(draw() % 100));
	w->el.state = (enum elector_state)(draw() % 7);
	w->el.have_observed = draw() % 5 != 0;
	draw_text(w->el.observed.holder, sizeof(w->el.observed.holder));
	snprintf(w->el.observed.uid, sizeof(w->el.observed.uid),
	    draw() % 4 ? "6f1c2a9e-0d4b-4b8e-9a57-%012llu" : "",
	    (unsigned long long)(draw() % 1000000000000ULL));
	w->el.observed.transitions = (int32_t)PICK(ints32);
	w->el.observed.duration_s = (int32_t)PICK(ints32);
	w->el.observed.acquire_us = (int64_t)PICK(times_us);
	w->el.observed.renew_us = (int64_t)PICK(times_us);
	switch (draw() % 4) {
	case 0:
		w->el.lead_until_ms = 0;
		break;
	case 1:
		w->el.lead_until_ms = ELECTOR_FOR_LIFE_MS;
		break;
	default:
		w->el.lead_until_ms = now_ms + draw() % 20000 - 5000;
	}
	w->el.passive = draw() % 4 == 0;
	w->el.cooldown_until_ms = draw() % 2 ? now_ms + draw() % 5000 : 0;
	w->st.stopping = draw() % 5 == 0;
	w->st.not_candidate = reasons[draw() % 5];
	w->st.coordinated = (int)(draw() % 3);
	w->st.coordinated_reason = draw() % 2 ? NULL : "LeaseCandidate "
	    "API not served";
	w->st.index = PICK(bigs);
	w->st.changed_us = (int64_t)PICK(times_us);
	w->st.election = draw() % 2 ? NULL : "reports";
	return now_ms;
}

static void
test_body_as_before(void **state)
{
	struct world	 w;
	struct buf	 ref = { 0 };
	char		*ev;
	size_t		 len, k;
	uint64_t	 now_ms;

	(void)state;
	for (k = 0; k < ROUNDS; k++) {
		now_ms = draw_world(&w);
		buf_add(&ref, "data: ", 6);
		ref_leader_json(&w.st, now_ms, &ref);
		buf_add(&ref, "\n\n", 2);
		ev = localapi_event(&w.st, now_ms, &len);
		if (len != ref.len || strcmp(ev, ref.data) != 0)
			fail_msg("round %zu:\nwant %s\ngot  %s", k, ref.data,
			    ev);
		free(ev);
		buf_free(&ref);
	}
}

/* GET /leader's headers and body, against the reference's. */
static void
test_reply_as_before(void **state)
{
	const struct httpd_route	*routes, *route;
	struct world			 w;
	struct http_request		 req;
	struct httpd_reply		 r;
	struct buf			 ref = { 0 };
	char				 token[LEASE_TOKEN_MAX] = "";
	char				 want[HTTPD_HEADERS_MAX], why[256];
	const char			*allow;
	size_t				 k;

	(void)state;
	memset(&req, 0, sizeof(req));
	snprintf(req.method, sizeof(req.method), "GET");
	snprintf(req.path, sizeof(req.path), "/leader");
	req.accept_json = 1;
	for (k = 0; k < ROUNDS / 10; k++) {
		memset(&r, 0, sizeof(r));
		r.now_ms = draw_world(&w);
		r.local = 1;
		routes = localapi_routes(&w.st, NULL, NULL, NULL, NULL);
		assert_int_equal(httpd_route_match(routes, req.method,
		    req.path, 0, 1, &route, &allow, why, sizeof(why)), 0);
		route->handler(&req, &r, route->arg);
		token[0] = '\0';
		if (w.el.have_observed)
			ref_token(&w.el.observed, token, sizeof(token));
		snprintf(want, sizeof(want),
		    "X-Leaderd-Index: %llu\r\n%s%s%s",
		    (unsigned long long)w.st.index,
		    token[0] != '\0' ? "X-Leaderd-Fencing-Token: " : "",
		    token, token[0] != '\0' ? "\r\n" : "");
		ref_leader_json(&w.st, r.now_ms, &ref);
		buf_add(&ref, "\n", 1);
		assert_int_equal(r.status, 200);
		assert_string_equal(r.headers, want);
		assert_int_equal(r.len, ref.len);
		assert_string_equal(r.body, ref.data);
		free(r.body);
		buf_free(&ref);
	}
}

/* The fencing token, without printf now, against the reference's. */
static void
test_token_as_before(void **state)
{
	struct lease	 rec;
	char		 got[LEASE_TOKEN_MAX], want[LEASE_TOKEN_MAX];
	size_t		 k;

	(void)state;
	for (k = 0; k < ROUNDS; k++) {
		memset(&rec, 0, sizeof(rec));
		draw_text(rec.holder, sizeof(rec.holder));
		rec.transitions = (int32_t)(k < 12 ? ints32[k] :
		    (uint64_t)draw());
		snprintf(rec.uid, sizeof(rec.uid), "%0*llu", (int)(draw() %
		    (LEASE_RV_MAX - 1)), (unsigned long long)draw());
		lease_fencing_token(&rec, got, sizeof(got));
		ref_token(&rec, want, sizeof(want));
		assert_string_equal(got, want);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body_as_before),
		cmocka_unit_test(test_reply_as_before),
		cmocka_unit_test(test_token_as_before),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
