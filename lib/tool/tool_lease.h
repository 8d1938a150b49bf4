/*
 * tool_lease.h -- the Leases and LeaseCandidates the tools read
 * (tool_lease.c).  Each function prints one line on a failure.
 */

#ifndef TOOL_LEASE_H
#define TOOL_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/leaseview.h"
#include "tool/tool.h"

/*
 * The path of a collection: group ("/apis/coordination.k8s.io/v1"), ns
 * (NULL: every namespace) and resource.  The caller frees it.
 */
char	*tool_collection(const char *group, const char *ns,
	    const char *resource);
/* The path of the Lease ns/name; of the Leases of ns with a query. */
char	*tool_lease_path(const char *ns, const char *name);
char	*tool_leases_path(const char *ns, const char *query);

/*
 * Every Lease of ns (NULL: of all namespaces) matching selector (NULL:
 * all), page by page, each to cb(v, arg); the first page's
 * resourceVersion into rv (may be NULL), where a watch starts.  Leases
 * that cannot be read are left out with one line.  Returns 0 or -1.
 */
int	tool_list_leases(struct tool *t, const char *ns, const char *selector,
	    void (*cb)(const struct leaseview *, void *), void *arg, char *rv,
	    size_t rvlen);

/* The Lease ns/name into v.  Returns 0, or -1 (404 included). */
int	tool_get_lease(struct tool *t, const char *ns, const char *name,
	    struct leaseview *v);

/*
 * Every LeaseCandidate of ns (NULL: all) to cb(ns, c, arg).  Returns 0,
 * 1 when the API is not served (404: nothing to count), 2 when the list
 * is refused (403) and warn_forbidden (a warning line printed, not an
 * error), or -1.
 */
int	tool_list_cands(struct tool *t, const char *ns, int warn_forbidden,
	    void (*cb)(const char *, const struct lease_cand *, void *),
	    void *arg);

/*
 * EXPIRES: "expired", the time left from renewTime +
 * leaseDurationSeconds as an age, or "" when the record has neither (a
 * Lease held for life).
 */
void	tool_expiry(const struct lease *rec, int64_t now_us, char *buf,
	    size_t len);

#endif /* TOOL_LEASE_H */
