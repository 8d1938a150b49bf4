/*
 * config_check_shards.c -- the shards: rules: the group's name and
 * count, what cannot run beside a group, the member Lease's name, and
 * the group's write rate against the API server.
 */

#include <stdint.h>
#include <string.h>

#include "base/duration.h"
#include "config/config.h"
#include "config/config_check_int.h"
#include "config/config_int.h"

/*
 * shards: the group's name (a DNS label: it names the Leases NAME-0 ..
 * NAME-(N-1) and NAME-member-IDENTITY and is the value of the label
 * leaderd.io/shard-group, at most 63), its count, the identity as part
 * of a Lease name, and the steady-state write rate (config.h).
 */
void
config_check_shards(const struct config *c, struct config_errs *e)
{
	static const struct {
		uint64_t	 lease, renew, retry;
	} ladder[] = {
		{ 15000, 10000, 2000 }, { 30000, 20000, 5000 },
		{ 60000, 40000, 10000 }, { 120000, 80000, 20000 },
		{ 240000, 160000, 40000 },
	};
	const char	*g = c->shards_group;
	char		 rp[32], ld[32], rd[32], rr[32];
	size_t		 i, len;
	unsigned	 n;
	double		 rate;

	if (!config_shards_on(c))
		return;
	if (*g == '\0') {
		config_errs_add(e, ORIGIN(c, CONFIG_SHARDS_COUNT),
		    "shards.count needs shards.group, the group's name (its "
		    "Leases are NAME-0 .. NAME-(count-1))");
		return;
	}
	if (!config_dns_label(g, strlen(g), 63)) {
		config_errs_add(e, ORIGIN(c, CONFIG_SHARDS_GROUP),
		    "shards.group \"%s\" is not a valid group name: use at "
		    "most 63 lowercase letters, digits and '-', starting and "
		    "ending with a letter or digit (it names the Leases "
		    "NAME-0 .. and NAME-member-IDENTITY)", g);
		return;
	}
	if (!c->set[CONFIG_SHARDS_COUNT]) {
		config_errs_add(e, ORIGIN(c, CONFIG_SHARDS_GROUP),
		    "shards.group needs shards.count, the number of shards "
		    "(1 to %d)", CONFIG_SHARDS_MAX);
		return;
	}
	if (c->shards_count < 1 || c->shards_count > CONFIG_SHARDS_MAX) {
		config_errs_add(e, ORIGIN(c, CONFIG_SHARDS_COUNT),
		    "shards.count %d is not from 1 to %d", c->shards_count,
		    CONFIG_SHARDS_MAX);
		return;
	}
	n = (unsigned)c->shards_count;
	if (strcmp(c->shards_on_change, "restart") != 0 &&
	    strcmp(c->shards_on_change, "sighup") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_SHARDS_ON_CHANGE),
		    "shards.on_change \"%s\" is not restart or sighup (what "
		    "run mode does to the command when its shards change)",
		    c->shards_on_change);
	/*
	 * The group is the whole of the daemon's work: its first election
	 * is the member Lease, in lock.namespace; nothing else fits beside.
	 */
	if (c->set[CONFIG_LOCK_NAME])
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_NAME), "lock.name "
		    "cannot be given with shards: a shard group's first "
		    "election is its member Lease %s-member-IDENTITY; remove "
		    "lock.name (and --election), or run the other election "
		    "in a leaderd of its own", g);
	if (c->nelections > 0)
		config_errs_add(e, &c->elections[0].at, "elections: cannot be "
		    "given with shards: a leaderd runs one shard group and "
		    "nothing beside it; remove elections: or run them in a "
		    "leaderd of their own");
	if (strcmp(c->lock_type, "leases") != 0)
		config_errs_add(e, ORIGIN(c, CONFIG_LOCK_TYPE), "lock.type %s "
		    "cannot be used with shards: a shard group's locks are "
		    "Leases; remove lock.type or set it to leases",
		    c->lock_type);
	if (c->compat[0] != '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_COMPAT), "compat %s "
		    "cannot be used with shards: the peer sidecars have no "
		    "shard groups; remove compat (or --compat)", c->compat);
	if (c->label_enabled)
		config_errs_add(e, ORIGIN(c, CONFIG_LABEL_ENABLED),
		    "actions.label cannot be used with shards: a pod owns "
		    "several shards, not one leadership; remove "
		    "actions.label and read GET /shards");
	if (c->ep_service[0] != '\0')
		config_errs_add(e, ORIGIN(c, CONFIG_EP_SERVICE),
		    "actions.endpoints cannot be used with shards: there is "
		    "no one leader to point a Service at; remove "
		    "actions.endpoints");
	if (c->coordinated)
		config_errs_add(e, ORIGIN(c, CONFIG_COORDINATED),
		    "candidacy.coordinated cannot be used with shards: the "
		    "shards are balanced by the group's planner, not by the "
		    "API server's election controller; remove "
		    "candidacy.coordinated (and --coordinated)");
	if (strcmp(c->handover, "auto") == 0)
		config_errs_add(e, ORIGIN(c, CONFIG_HANDOVER),
		    "handover: auto cannot be used with shards: on SIGTERM "
		    "each shard is released and the planner of the members "
		    "left takes it at once; remove handover");
	len = strlen(g) + strlen("-member-") + strlen(c->identity);
	if (c->identity[0] != '\0' && !config_dns_subdomain(c->identity))
		config_errs_add(e, ORIGIN(c, CONFIG_IDENTITY), "identity \"%s\" "
		    "cannot be part of the member Lease's name %s-member-%s: "
		    "in a shard group the identity must be lowercase letters, "
		    "digits, '-' and '.', as a pod name is (fix identity, --id "
		    "or $POD_NAME)", c->identity, g, c->identity);
	else if (len > 253)
		config_errs_add(e, ORIGIN(c, config_later(c,
		    CONFIG_SHARDS_GROUP, CONFIG_IDENTITY)),
		    "the member Lease's name %s-member-%s "
		    "is %zu bytes, more than a Lease name's 253; shorten "
		    "shards.group or the identity", g, c->identity, len);
	rate = config_shards_rate(n, n, c->retry_period_ms);
	if (c->shards_force || rate <= CONFIG_SHARDS_RATE_MAX ||
	    c->retry_period_ms == 0)
		return;
	for (i = 0; i < sizeof(ladder) / sizeof(ladder[0]) - 1; i++)
		if (ladder[i].retry > c->retry_period_ms &&
		    config_shards_rate(n, n, ladder[i].retry) <=
		    CONFIG_SHARDS_RATE_MAX)
			break;
	duration_format(c->retry_period_ms, rp, sizeof(rp));
	duration_format(ladder[i].lease, ld, sizeof(ld));
	duration_format(ladder[i].renew, rd, sizeof(rd));
	duration_format(ladder[i].retry, rr, sizeof(rr));
	config_errs_add(e, ORIGIN(c, config_later(c,
	    CONFIG_SHARDS_COUNT, CONFIG_RETRY_PERIOD)),
	    "a group of %u shards writes %.1f/s to the "
	    "API server with retry_period %s and %u members (each shard Lease "
	    "and each member Lease renewed once per retry_period), more than "
	    "the limit of %d/s: use lease_duration %s, renew_deadline %s, "
	    "retry_period %s (%.1f/s), fewer shards, or shards.force: true",
	    n, rate, rp, n, CONFIG_SHARDS_RATE_MAX, ld, rd, rr,
	    config_shards_rate(n, n, ladder[i].retry));
}
