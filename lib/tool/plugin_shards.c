/*
 * plugin_shards.c -- `kubectl leaderd shards GROUP`: a shard group as
 * docs/shards.md lays it out in Leases labelled leaderd.io/shard-group:
 * GROUP.  Each shard Lease (GROUP-0 .. GROUP-(N-1)) with its owner and
 * time left; each member (its Lease GROUP-member-IDENTITY, live while
 * held by IDENTITY and not expired) with the shards it holds and its
 * quota (floor or ceil of N over the live members); and one line on the
 * balance.
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

struct shards {
	const char		*group;
	struct leaseview	*shard;		/* GROUP-N, by N */
	size_t			 nshard;
	struct leaseview	*member;	/* GROUP-member-ID */
	size_t			 nmember;
	int64_t			 now_us;
};

/* N of a shard Lease's name GROUP-N, or -1. */
static long
shard_index(const char *group, const char *name)
{
	size_t		 n = strlen(group);
	const char	*p;
	char		*end;
	long		 i;

	if (strncmp(name, group, n) != 0 || name[n] != '-')
		return -1;
	p = name + n + 1;
	if (*p < '0' || *p > '9' || (*p == '0' && p[1] != '\0'))
		return -1;
	i = strtol(p, &end, 10);
	return *end == '\0' ? i : -1;
}

/* The identity of a member Lease GROUP-member-ID, or NULL. */
static const char *
member_id(const char *group, const struct leaseview *v)
{
	size_t	 n = strlen(group);

	if (strncmp(v->name, group, n) != 0 ||
	    strncmp(v->name + n, "-member-", 8) != 0)
		return NULL;
	return v->name + n + 8;
}

static void
collect_cb(const struct leaseview *v, void *arg)
{
	struct shards	*s = arg;

	if (shard_index(s->group, v->name) >= 0) {
		s->shard = xrealloc(s->shard, (s->nshard + 1) *
		    sizeof(*s->shard));
		s->shard[s->nshard++] = *v;
	} else if (member_id(s->group, v) != NULL) {
		s->member = xrealloc(s->member, (s->nmember + 1) *
		    sizeof(*s->member));
		s->member[s->nmember++] = *v;
	}
}

static const char	*sort_group;

static int
shard_cmp(const void *a, const void *b)
{
	const struct leaseview	*x = a, *y = b;
	long			 i = shard_index(sort_group, x->name);
	long			 j = shard_index(sort_group, y->name);

	return i < j ? -1 : i > j;
}

/* Whether v is held now: a holder, and not expired. */
static int
held(const struct leaseview *v, int64_t now_us)
{
	const struct lease	*r = &v->rec;

	return r->holder[0] != '\0' && r->renew_us != 0 && r->duration_s > 0 &&
	    r->renew_us + (int64_t)r->duration_s * 1000000 > now_us;
}

/* Whether the member Lease m shows a live member (docs/shards.md). */
static int
live(const struct shards *s, const struct leaseview *m)
{
	return held(m, s->now_us) &&
	    strcmp(m->rec.holder, member_id(s->group, m)) == 0;
}

/* How many shards id holds now. */
static unsigned
count_of(const struct shards *s, const char *id)
{
	size_t		 i;
	unsigned	 n = 0;

	for (i = 0; i < s->nshard; i++)
		if (held(&s->shard[i], s->now_us) &&
		    strcmp(s->shard[i].rec.holder, id) == 0)
			n++;
	return n;
}

static void
print_shards(struct shards *s)
{
	static const char *const names[] = { "SHARD", "OWNER", "RENEWED",
	    "EXPIRES", "TRANSITIONS" };
	struct tool_table	 tb;
	const struct lease	*r;
	const char		*cells[5];
	char			 renewed[32], expires[32], trans[16];
	size_t			 i;

	tool_table_init(&tb, 5, names);
	for (i = 0; i < s->nshard; i++) {
		r = &s->shard[i].rec;
		renewed[0] = '\0';
		if (r->renew_us != 0)
			tool_age(s->now_us - r->renew_us, renewed,
			    sizeof(renewed));
		tool_expiry(r, s->now_us, expires, sizeof(expires));
		snprintf(trans, sizeof(trans), "%d", (int)r->transitions);
		cells[0] = s->shard[i].name;
		cells[1] = held(&s->shard[i], s->now_us) ? r->holder : "";
		cells[2] = renewed;
		cells[3] = expires;
		cells[4] = trans;
		tool_table_add(&tb, cells);
	}
	tool_table_flush(&tb, stdout, 1);
	tool_table_free(&tb);
}

/*
 * The members' table and the balance line.  Returns whether the group
 * is balanced: every shard held by a live member, each within its quota.
 */
static int
print_members(struct shards *s)
{
	static const char *const names[] = { "MEMBER", "LIVE", "SHARDS",
	    "QUOTA" };
	struct tool_table	 tb;
	const char		*cells[4], *id;
	char			 count[16], quota[32];
	size_t			 i, nlive = 0, lo = 0, hi = 0;
	unsigned		 n, held_by_live = 0;
	int			 ok = 1;

	for (i = 0; i < s->nmember; i++)
		nlive += live(s, &s->member[i]);
	if (nlive > 0) {
		lo = s->nshard / nlive;
		hi = lo + (s->nshard % nlive != 0);
	}
	tool_table_init(&tb, 4, names);
	for (i = 0; i < s->nmember; i++) {
		id = member_id(s->group, &s->member[i]);
		n = count_of(s, id);
		snprintf(count, sizeof(count), "%u", n);
		if (live(s, &s->member[i])) {
			held_by_live += n;
			if (lo == hi)
				snprintf(quota, sizeof(quota), "%zu", lo);
			else
				snprintf(quota, sizeof(quota), "%zu-%zu", lo,
				    hi);
			if (n < lo || n > hi)
				ok = 0;
		} else
			quota[0] = '\0';
		cells[0] = id;
		cells[1] = live(s, &s->member[i]) ? "yes" : "no";
		cells[2] = count;
		cells[3] = quota;
		tool_table_add(&tb, cells);
	}
	printf("\n");
	tool_table_flush(&tb, stdout, 1);
	tool_table_free(&tb);
	if (held_by_live < s->nshard)
		ok = 0;
	printf("\n%zu shard%s, %zu live member%s, %u held by live members: "
	    "%s\n", s->nshard, s->nshard == 1 ? "" : "s", nlive,
	    nlive == 1 ? "" : "s", held_by_live, ok ? "balanced" :
	    "not balanced");
	return ok;
}

int
plugin_shards(struct tool *t)
{
	struct shards	 s;
	char		*sel;
	int		 rc = TOOL_EXIT_OK;

	memset(&s, 0, sizeof(s));
	s.group = t->o.args[0];
	xasprintf(&sel, "%s=%s", LEASEVIEW_GROUP_LABEL, s.group);
	if (tool_list_leases(t, t->ns, sel, collect_cb, &s, NULL, 0) == -1) {
		free(sel);
		return TOOL_EXIT_FAIL;
	}
	free(sel);
	s.now_us = clock_wall_us();
	if (s.nshard == 0 && s.nmember == 0) {
		tool_err(t, "no shard group \"%s\" in namespace %s: no Lease "
		    "is labelled %s=%s", s.group, t->ns,
		    LEASEVIEW_GROUP_LABEL, s.group);
		rc = TOOL_EXIT_FAIL;
		goto out;
	}
	sort_group = s.group;
	qsort(s.shard, s.nshard, sizeof(*s.shard), shard_cmp);
	print_shards(&s);
	print_members(&s);
out:
	free(s.shard);
	free(s.member);
	return rc;
}
