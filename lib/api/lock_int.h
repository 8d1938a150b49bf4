/*
 * lock_int.h -- what lock.c and lock_event.c share: the lock and its
 * objects.  Private to api/.
 */

#ifndef LOCK_INT_H
#define LOCK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "api/kube.h"
#include "api/lock.h"
#include "codec/lease.h"

enum obj_kind {
	OBJ_LEASE,
	OBJ_ENDPOINTS,
	OBJ_CONFIGMAP
};

enum lock_op {
	OP_NONE,
	OP_GET,
	OP_CREATE,
	OP_UPDATE,
	OP_OWNER		/* lock_owner_get's read of the pod */
};

struct lock_obj {
	enum obj_kind	 kind;
	char		*body;		/* last body the server returned */
	size_t		 len;		/* its length */
	struct lease	 last;		/* its record, rv and uid */
	int		 missing;	/* the last read found no object */
	uint64_t	 changed_ms;	/* when its resourceVersion last changed */
};

struct lock {
	struct kube	*k;		/* borrowed */
	char		 type[32];	/* "leases", "endpointsleases", ... */
	char		*ns;		/* the lock's namespace */
	char		*name;		/* the name of its object(s) */
	char		*describe;	/* "type/ns/name" */
	char		*identity;	/* ours, never reported as a holder */
	struct lock_obj	 obj[2];	/* primary, then secondary */
	int		 nobj;		/* 1, or 2 for a MultiLock */
	enum lock_op	 op;		/* running operation */
	int		 stage;		/* request of it in flight */
	int		 cur;		/* the object that request is on */
	struct lease	 rec;		/* the record being written */
	struct lease	 prim;		/* primary's record, this operation */
	struct lease	 sec_term;	/* secondary before a release's 409 */
	uint64_t	 deadline_ms;	/* monotonic end of the operation */
	lock_done_cb	 cb;		/* the operation's callback */
	void		*arg;		/* its argument */
	char		 warning[256];	/* first Warning header seen */
	struct kube	*event_kube;	/* Events client, borrowed */
	char		*event_next;	/* the Event about the secondary, due */
	uint64_t	 event_timeout_ms; /* bound of each Event */
	kube_done_cb	 event_done;	/* called for each Event */
	void		*event_arg;	/* its argument */
	int		 for_life;	/* create only (lock_owner_get) */
	struct lease_owner owner;	/* the Lease's owner; uid "" unread */
	kube_done_cb	 owner_cb;	/* lock_owner_get's callback */
	const char *const *labels;	/* a create's labels (borrowed),
					   or NULL */
};

/* The kind of object o as the API names it: "Lease", "Endpoints", ... */
const char	*lock_kind_name(enum obj_kind kind);

#endif /* LOCK_INT_H */
