/*
 * plugin_move.c -- `kubectl leaderd move LEASE --to ID`: the directed
 * handover of docs/api.md ("preferredHolder").  It sets spec.strategy
 * (the Lease's own, else OldestEmulationVersion) and
 * spec.preferredHolder by a merge PATCH, which a leaderd leader honours
 * at once, then watches the Lease until ID holds it and prints how long
 * that took from the PATCH.  ID must be a live candidate: a live
 * LeaseCandidate named ID for the Lease (lease_cand_live, what
 * coordinated election and handover: auto count), or, for a shard
 * Lease, a live member ID of its group; --force moves it anyway.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/duration.h"
#include "codec/leaseview.h"
#include "tool/tool.h"
#include "tool/tool_lease.h"

#define DEFAULT_STRATEGY	"OldestEmulationVersion"

struct move {
	struct tool	*t;
	const char	*lease;
	const char	*to;
	int		 live;		/* ID found live */
	int		 cand_seen;	/* a LeaseCandidate named ID exists */
	char		 holder[LEASE_HOLDER_MAX];	/* the last seen */
	char		 rv[LEASE_RV_MAX];	/* the last version seen */
	char		 from[LEASE_HOLDER_MAX];	/* the holder before */
	int		 done;
};

static void
cand_cb(const char *ns, const struct lease_cand *c, void *arg)
{
	struct move	*m = arg;

	(void)ns;
	if (strcmp(c->lease_name, m->lease) != 0 ||
	    strcmp(c->name, m->to) != 0)
		return;
	m->cand_seen = 1;
	if (lease_cand_live(c, clock_wall_us()))
		m->live = 1;
}

/*
 * Whether ID is a live candidate; 0 or -1 (a request failed).  Says why
 * not when it is not.
 */
static int
check_live(struct move *m, const struct leaseview *v)
{
	struct tool		*t = m->t;
	struct leaseview	 mv;
	struct tool_answer	 a;
	char			 name[LEASE_HOLDER_MAX * 2], *path;
	int			 rc;

	if (tool_list_cands(t, t->ns, 0, cand_cb, m) == -1)
		return -1;
	if (!m->live && v->group[0] != '\0') {
		snprintf(name, sizeof(name), "%s-member-%s", v->group, m->to);
		path = tool_lease_path(t->ns, name);
		rc = tool_request(t, "GET", path, NULL, NULL, "get", "leases",
		    t->ns, name, 1, &a);
		free(path);
		if (rc == -1)
			return -1;
		if (rc == 0 && leaseview_one(a.body, a.len, &mv, NULL,
		    0) == 0 && strcmp(mv.rec.holder, m->to) == 0 &&
		    mv.rec.renew_us != 0 && mv.rec.renew_us +
		    (int64_t)mv.rec.duration_s * 1000000 > clock_wall_us())
			m->live = 1;
		tool_answer_free(&a);
	}
	if (!m->live)
		tool_err(t, "%s is not a live candidate of Lease \"%s\": "
		    "%s%s%s (--force moves it anyway)", m->to, m->lease,
		    m->cand_seen ? "its LeaseCandidate is not renewed" :
		    "no LeaseCandidate of that name names the Lease "
		    "(leaderd keeps one with candidacy.coordinated)",
		    v->group[0] != '\0' ? ", nor is it a live member of shard "
		    "group " : "", v->group);
	return 0;
}

static int
watch_line_cb(const char *line, size_t len, void *arg)
{
	struct move		*m = arg;
	struct leaseview_event	 ev;
	char			 err[256];

	if (line == NULL)
		return 0;
	if (leaseview_event(line, len, &ev, err, sizeof(err)) == -1) {
		tool_err(m->t, "watch leases: an event that cannot be read: "
		    "%s", err);
		return -1;
	}
	if (ev.type == APIOBJ_WATCH_ERROR) {
		tool_err(m->t, "watch leases: %ld: %s", ev.code, ev.message);
		return -1;
	}
	if (ev.rv[0] != '\0')
		snprintf(m->rv, sizeof(m->rv), "%s", ev.rv);
	if (ev.type == APIOBJ_WATCH_DELETED) {
		tool_err(m->t, "Lease \"%s\" was deleted", m->lease);
		return -1;
	}
	if (ev.type == APIOBJ_WATCH_BOOKMARK)
		return 0;
	snprintf(m->holder, sizeof(m->holder), "%s", ev.v.rec.holder);
	if (strcmp(ev.v.rec.holder, m->to) == 0) {
		m->done = 1;
		return 1;
	}
	return 0;
}

/* The merge PATCH setting strategy and preferredHolder. */
static char *
patch_body(const struct leaseview *v, const char *to)
{
	struct buf	 b;

	memset(&b, 0, sizeof(b));
	buf_printf(&b, "{\"spec\":{\"strategy\":");
	buf_json_str(&b, v->rec.strategy[0] != '\0' ? v->rec.strategy :
	    DEFAULT_STRATEGY);
	buf_printf(&b, ",\"preferredHolder\":");
	buf_json_str(&b, to);
	buf_printf(&b, "}}");
	return buf_steal(&b, NULL);
}

int
plugin_move(struct tool *t)
{
	struct move		 m;
	struct leaseview	 v;
	struct tool_answer	 a;
	uint64_t		 start_ms, end_ms, now_ms;
	char			*body, *path, *ename, query[512], took[32];
	int			 rc;

	memset(&m, 0, sizeof(m));
	m.t = t;
	m.lease = t->o.args[0];
	m.to = t->o.to;
	if (tool_get_lease(t, t->ns, m.lease, &v) == -1)
		return TOOL_EXIT_FAIL;
	snprintf(m.from, sizeof(m.from), "%s", v.rec.holder);
	if (strcmp(v.rec.holder, m.to) == 0) {
		printf("lease \"%s\" is held by %s already\n", m.lease, m.to);
		return TOOL_EXIT_OK;
	}
	if (!t->o.force) {
		if (check_live(&m, &v) == -1 || !m.live)
			return TOOL_EXIT_FAIL;
	}

	start_ms = clock_mono_ms();
	end_ms = start_ms + t->o.timeout_ms;
	body = patch_body(&v, m.to);
	path = tool_lease_path(t->ns, m.lease);
	rc = tool_request(t, "PATCH", path, body,
	    "application/merge-patch+json", "patch", "leases", t->ns, m.lease,
	    0, &a);
	free(body);
	free(path);
	if (rc == -1)
		return TOOL_EXIT_FAIL;
	if (leaseview_one(a.body, a.len, &v, NULL, 0) == 0) {
		snprintf(m.rv, sizeof(m.rv), "%s", v.rec.rv);
		snprintf(m.holder, sizeof(m.holder), "%s", v.rec.holder);
		m.done = strcmp(v.rec.holder, m.to) == 0;
	}
	tool_answer_free(&a);

	ename = tool_escape(m.lease);
	while (!m.done && (now_ms = clock_mono_ms()) < end_ms) {
		snprintf(query, sizeof(query), "watch=1&allowWatchBookmarks="
		    "true&fieldSelector=metadata.name%%3D%s&timeoutSeconds="
		    "%llu&resourceVersion=%s", ename,
		    (unsigned long long)((end_ms - now_ms) / 1000 + 1), m.rv);
		path = tool_leases_path(t->ns, query);
		rc = tool_stream(t, path, end_ms - now_ms, "leases", t->ns,
		    watch_line_cb, &m);
		free(path);
		if (rc == -1) {
			free(ename);
			return TOOL_EXIT_FAIL;
		}
		if (rc == 2)
			break;
	}
	free(ename);
	duration_format(clock_mono_ms() - start_ms, took, sizeof(took));
	if (!m.done) {
		tool_err(t, "lease \"%s\": %s does not hold it after %s "
		    "(holder %s); spec.preferredHolder stays %s", m.lease,
		    m.to, took, m.holder[0] != '\0' ? m.holder : "none", m.to);
		return TOOL_EXIT_FAIL;
	}
	printf("lease \"%s\" moved from %s to %s in %s\n", m.lease,
	    m.from[0] != '\0' ? m.from : "nobody", m.to, took);
	return TOOL_EXIT_OK;
}
