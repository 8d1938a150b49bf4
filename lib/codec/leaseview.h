/*
 * leaseview.h -- Leases and LeaseCandidates as the operator's tools
 * (lib/tool/) show them: every Lease of a list or a watch, whoever
 * writes it, with its namespace and the labels of a shard group beside
 * the record.  Pure, like lease.h.
 */

#ifndef LEASEVIEW_H
#define LEASEVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "codec/apiobj.h"
#include "codec/lease.h"
#include "codec/leasecand.h"

#define LEASEVIEW_GROUP_LABEL	"leaderd.io/shard-group"
#define LEASEVIEW_MEMBER_LABEL	"leaderd.io/shard-member"
#define LEASEVIEW_NS_MAX	64	/* a namespace incl. NUL (DNS label) */
#define LEASEVIEW_OWNER_MAX	(32 + 1 + LEASE_HOLDER_MAX) /* Kind/name */

/* One Lease as shown. */
struct leaseview {
	char		 ns[LEASEVIEW_NS_MAX];		/* metadata.namespace */
	char		 name[LEASE_HOLDER_MAX];	/* metadata.name */
	char		 group[64];	/* label leaderd.io/shard-group */
	int		 member;	/* label leaderd.io/shard-member */
	char		 owner[LEASEVIEW_OWNER_MAX]; /* the first owner
					   reference, "Kind/name", or "" */
	int64_t		 created_us;	/* metadata.creationTimestamp */
	struct lease	 rec;		/* the spec, resourceVersion, uid */
};

/*
 * Decode one page of a LeaseList (of one namespace or of all) item by
 * item: item_cb(v, arg) for each Lease that decodes; the others are
 * counted in out->skipped, the first one's name and error in out->why.
 * out->rv and out->cont receive the list's resourceVersion and continue
 * token ("" on the last page).  Returns -1 with err only when the page
 * is not a list.
 */
int	leaseview_list(const char *buf, size_t len,
	    void (*item_cb)(const struct leaseview *v, void *arg), void *arg,
	    struct lease_list *out, char *err, size_t errlen);

/* Decode one Lease object (a GET's answer) into v; -1 with err. */
int	leaseview_one(const char *buf, size_t len, struct leaseview *v,
	    char *err, size_t errlen);

/* One event of a watch of Leases. */
struct leaseview_event {
	enum apiobj_watch_type	 type;
	struct leaseview	 v;	/* ADDED, MODIFIED, DELETED */
	char			 rv[LEASE_RV_MAX]; /* the event's version */
	long			 code;	/* ERROR: the Status code */
	char			 message[256];	/* ERROR: its message */
};

/*
 * Decode one line of a watch of Leases (any namespace).  A line that is
 * not an event, or whose object is not a Lease that decodes, is an
 * error: -1 with err.
 */
int	leaseview_event(const char *buf, size_t len,
	    struct leaseview_event *ev, char *err, size_t errlen);

/*
 * Decode a LeaseCandidateList (of one namespace or of all): item_cb(ns,
 * c, arg) for each candidate that decodes, the others counted in
 * *skipped.  Returns -1 with err only when the body is not a list.
 */
int	leaseview_cands(const char *buf, size_t len,
	    void (*item_cb)(const char *ns, const struct lease_cand *c,
	    void *arg), void *arg, unsigned *skipped, char *err,
	    size_t errlen);

#endif /* LEASEVIEW_H */
