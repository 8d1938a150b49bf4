/*
 * plugin_get.c -- `kubectl leaderd get [LEASE]`: every Lease of the
 * namespace (or of all, -A), leaderd's or not, as kubectl prints a
 * table: NAME, HOLDER, RENEWED (the age of renewTime), EXPIRES (the time
 * left, or "expired"), TRANSITIONS, CANDIDATES (LeaseCandidates naming
 * it), PREFERRED; -o wide adds ACQUIRED, STRATEGY and GROUP (the shard
 * group).  -o json|yaml prints the document of docs/operations.md
 * ("kubectl leaderd"); -w then follows a watch, one line per new
 * version.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/xmalloc.h"
#include "codec/leaseview.h"
#include "tool/tool.h"
#include "tool/tool_fmt.h"
#include "tool/tool_lease.h"

#define WATCH_TIMEOUT_S	1800	/* the server ends a watch after this */

/* The LeaseCandidates of one Lease. */
struct cand_count {
	char		 ns[LEASEVIEW_NS_MAX];
	char		 lease[LEASE_HOLDER_MAX];
	unsigned	 n;
};

struct get {
	struct tool		*t;
	int			 wide;
	int			 doc;		/* -o json or yaml */
	struct leaseview	*items;
	size_t			 n;
	struct cand_count	*cands;
	size_t			 ncands;
	int			 cands_served;	/* the API answered */
	int			 cands_unknown;	/* the list was refused */
	struct tool_table	 tb;
	struct tool_doc		 d;
	char			 rv[LEASE_RV_MAX]; /* where -w goes on */
	int			 gone;		/* the watch's version expired */
};

static void
collect_cb(const struct leaseview *v, void *arg)
{
	struct get	*g = arg;

	g->items = xrealloc(g->items, (g->n + 1) * sizeof(*g->items));
	g->items[g->n++] = *v;
}

static void
cand_cb(const char *ns, const struct lease_cand *c, void *arg)
{
	struct get	*g = arg;
	size_t		 i;

	for (i = 0; i < g->ncands; i++)
		if (strcmp(g->cands[i].ns, ns) == 0 &&
		    strcmp(g->cands[i].lease, c->lease_name) == 0) {
			g->cands[i].n++;
			return;
		}
	g->cands = xrealloc(g->cands, (g->ncands + 1) * sizeof(*g->cands));
	memset(&g->cands[g->ncands], 0, sizeof(*g->cands));
	snprintf(g->cands[g->ncands].ns, sizeof(g->cands[0].ns), "%s", ns);
	snprintf(g->cands[g->ncands].lease, sizeof(g->cands[0].lease), "%s",
	    c->lease_name);
	g->cands[g->ncands++].n = 1;
}

/* How many LeaseCandidates name v; -1 when the API is not served. */
static int
cands_of(const struct get *g, const struct leaseview *v)
{
	size_t	 i;

	if (!g->cands_served)
		return -1;
	for (i = 0; i < g->ncands; i++)
		if (strcmp(g->cands[i].ns, v->ns) == 0 &&
		    strcmp(g->cands[i].lease, v->name) == 0)
			return (int)g->cands[i].n;
	return 0;
}

static void
table_init(struct get *g)
{
	const char	*names[TOOL_COLS_MAX];
	size_t		 n = 0;

	if (g->t->o.all_ns)
		names[n++] = "NAMESPACE";
	names[n++] = "NAME";
	names[n++] = "HOLDER";
	names[n++] = "RENEWED";
	names[n++] = "EXPIRES";
	names[n++] = "TRANSITIONS";
	names[n++] = "CANDIDATES";
	names[n++] = "PREFERRED";
	if (g->wide) {
		names[n++] = "ACQUIRED";
		names[n++] = "STRATEGY";
		names[n++] = "GROUP";
	}
	tool_table_init(&g->tb, n, names);
}

static void
table_row(struct get *g, const struct leaseview *v, int64_t now_us)
{
	const char	*cells[TOOL_COLS_MAX];
	char		 renewed[32] = "", expires[32], trans[16];
	char		 cands[16] = "", acquired[32] = "";
	size_t		 n = 0;
	int		 c;

	if (v->rec.renew_us != 0)
		tool_age(now_us - v->rec.renew_us, renewed, sizeof(renewed));
	if (v->rec.acquire_us != 0)
		tool_age(now_us - v->rec.acquire_us, acquired,
		    sizeof(acquired));
	tool_expiry(&v->rec, now_us, expires, sizeof(expires));
	snprintf(trans, sizeof(trans), "%d", (int)v->rec.transitions);
	if ((c = cands_of(g, v)) > 0)
		snprintf(cands, sizeof(cands), "%d", c);
	else if (g->cands_unknown)
		snprintf(cands, sizeof(cands), "?");
	if (g->t->o.all_ns)
		cells[n++] = v->ns;
	cells[n++] = v->name;
	cells[n++] = v->rec.holder;
	cells[n++] = renewed;
	cells[n++] = expires;
	cells[n++] = trans;
	cells[n++] = cands;
	cells[n++] = v->rec.preferred;
	if (g->wide) {
		cells[n++] = acquired;
		cells[n++] = v->rec.strategy;
		cells[n++] = v->group;
	}
	tool_table_add(&g->tb, cells);
}

/* One item of the document (docs/operations.md gives its schema). */
static void
doc_item(struct get *g, const struct leaseview *v, int64_t now_us)
{
	struct tool_doc		*d = &g->d;
	const struct lease	*r = &v->rec;
	int			 c = cands_of(g, v), timed;
	int64_t			 left = 0;

	timed = r->renew_us != 0 && r->duration_s > 0;
	if (timed)
		left = r->renew_us + (int64_t)r->duration_s * 1000000 -
		    now_us;
	tool_doc_item(d);
	tool_doc_str(d, "namespace", v->ns);
	tool_doc_str(d, "name", v->name);
	tool_doc_str(d, "holder", r->holder[0] != '\0' ? r->holder : NULL);
	tool_doc_time(d, "acquireTime", r->acquire_us);
	tool_doc_time(d, "renewTime", r->renew_us);
	tool_doc_int(d, "leaseDurationSeconds", r->duration_s,
	    r->duration_s > 0);
	tool_doc_int(d, "renewedSecondsAgo", (now_us - r->renew_us) / 1000000,
	    r->renew_us != 0);
	tool_doc_int(d, "expiresInSeconds", left / 1000000, timed);
	tool_doc_bool(d, "expired", left <= 0, timed);
	tool_doc_int(d, "transitions", r->transitions, 1);
	tool_doc_int(d, "candidates", c, c >= 0);
	tool_doc_str(d, "preferredHolder", r->preferred[0] != '\0' ?
	    r->preferred : NULL);
	tool_doc_str(d, "strategy", r->strategy[0] != '\0' ? r->strategy :
	    NULL);
	tool_doc_str(d, "shardGroup", v->group[0] != '\0' ? v->group : NULL);
	tool_doc_bool(d, "shardMember", v->member, 1);
	tool_doc_str(d, "owner", v->owner[0] != '\0' ? v->owner : NULL);
	tool_doc_str(d, "resourceVersion", r->rv);
	tool_doc_item_end(d);
}

/* The leases and their candidates read; 0 or -1. */
static int
read_all(struct get *g)
{
	struct tool	*t = g->t;
	const char	*ns = t->o.all_ns ? NULL : t->ns;
	struct leaseview v;
	int		 rc;

	if (t->o.nargs == 1) {
		if (tool_get_lease(t, t->ns, t->o.args[0], &v) == -1)
			return -1;
		collect_cb(&v, g);
		snprintf(g->rv, sizeof(g->rv), "%s", v.rec.rv);
	} else if (tool_list_leases(t, ns, t->o.selector, collect_cb, g,
	    g->rv, sizeof(g->rv)) == -1)
		return -1;
	if ((rc = tool_list_cands(t, ns, 1, cand_cb, g)) == -1)
		return -1;
	g->cands_served = rc == 0;
	g->cands_unknown = rc == 2;
	return 0;
}

/* One line of -w: a row of the table, or a JSON object. */
static void
watch_row(struct get *g, const struct leaseview *v)
{
	if (g->doc) {
		tool_doc_begin(&g->d, 0, NULL);
		doc_item(g, v, clock_wall_us());
		tool_doc_end(&g->d, stdout);
	} else {
		table_row(g, v, clock_wall_us());
		tool_table_flush(&g->tb, stdout, 0);
	}
}

static int
watch_line_cb(const char *line, size_t len, void *arg)
{
	struct get		*g = arg;
	struct leaseview_event	 ev;
	char			 err[256];

	if (line == NULL)
		return 0;
	if (leaseview_event(line, len, &ev, err, sizeof(err)) == -1) {
		tool_err(g->t, "watch leases: an event that cannot be read: "
		    "%s", err);
		return -1;
	}
	if (ev.type == APIOBJ_WATCH_ERROR && ev.code == 410) {
		g->gone = 1;
		return -1;
	}
	if (ev.type == APIOBJ_WATCH_ERROR) {
		tool_err(g->t, "watch leases: %ld: %s", ev.code, ev.message);
		return -1;
	}
	if (ev.rv[0] != '\0')
		snprintf(g->rv, sizeof(g->rv), "%s", ev.rv);
	if (ev.type == APIOBJ_WATCH_BOOKMARK)
		return 0;
	watch_row(g, &ev.v);
	return 0;
}

/*
 * -w: a watch from the list's version, again after each clean end.  A
 * version the server no longer has (410 Expired) is listed again, as
 * client-go's reflector does, each Lease printed as it is now.
 */
static int
watch(struct get *g)
{
	struct tool	*t = g->t;
	char		 query[1024], *sel = NULL, *path;
	size_t		 i;
	int		 rc;

	for (;;) {
		if (t->o.nargs == 1)
			sel = tool_escape(t->o.args[0]);
		else if (t->o.selector != NULL)
			sel = tool_escape(t->o.selector);
		snprintf(query, sizeof(query), "watch=1&allowWatchBookmarks="
		    "true&timeoutSeconds=%d&resourceVersion=%s%s%s",
		    WATCH_TIMEOUT_S, g->rv, sel == NULL ? "" :
		    t->o.nargs == 1 ? "&fieldSelector=metadata.name%3D" :
		    "&labelSelector=", sel != NULL ? sel : "");
		free(sel);
		sel = NULL;
		path = tool_leases_path(t->o.all_ns ? NULL : t->ns, query);
		rc = tool_stream(t, path, (WATCH_TIMEOUT_S + 30) * 1000ULL,
		    "leases", t->o.all_ns ? "" : t->ns, watch_line_cb, g);
		free(path);
		/* A stream past its bound (2) is opened again, like one
		 * the server ended. */
		if (rc == -1 && !g->gone)
			return TOOL_EXIT_FAIL;
		if (g->gone) {
			g->gone = 0;
			g->n = g->ncands = 0;
			if (read_all(g) == -1)
				return TOOL_EXIT_FAIL;
			for (i = 0; i < g->n; i++)
				watch_row(g, &g->items[i]);
		}
	}
}

int
plugin_get(struct tool *t)
{
	struct get	 g;
	size_t		 i;
	int64_t		 now_us;
	int		 rc = TOOL_EXIT_OK;

	memset(&g, 0, sizeof(g));
	g.t = t;
	g.wide = strcmp(t->o.output, "wide") == 0;
	g.doc = strcmp(t->o.output, "json") == 0 ||
	    strcmp(t->o.output, "yaml") == 0;
	if (t->o.watch && strcmp(t->o.output, "yaml") == 0) {
		tool_err(t, "-w prints one line per version: -o json, not "
		    "yaml");
		return TOOL_EXIT_USAGE;
	}
	if (read_all(&g) == -1) {
		rc = TOOL_EXIT_FAIL;
		goto out;
	}
	now_us = clock_wall_us();
	if (g.doc && t->o.watch) {
		for (i = 0; i < g.n; i++) {
			tool_doc_begin(&g.d, 0, NULL);
			doc_item(&g, &g.items[i], now_us);
			tool_doc_end(&g.d, stdout);
		}
	} else if (g.doc) {
		tool_doc_begin(&g.d, strcmp(t->o.output, "yaml") == 0,
		    "LeaseStatusList");
		for (i = 0; i < g.n; i++)
			doc_item(&g, &g.items[i], now_us);
		tool_doc_end(&g.d, stdout);
	} else {
		table_init(&g);
		for (i = 0; i < g.n; i++)
			table_row(&g, &g.items[i], now_us);
		if (g.n == 0 && !t->o.watch)
			fprintf(stderr, "No resources found%s%s%s.\n",
			    t->o.all_ns ? "" : " in ", t->o.all_ns ? "" :
			    t->ns, t->o.all_ns ? "" : " namespace");
		else
			tool_table_flush(&g.tb, stdout, 1);
	}
	if (t->o.watch)
		rc = watch(&g);
out:
	if (!g.doc)
		tool_table_free(&g.tb);
	free(g.items);
	free(g.cands);
	return rc;
}
