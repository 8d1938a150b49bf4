/*
 * elector_int.h -- what elector.c (the transition table) and
 * elector_send.c (set-up, random draws, our recent writes, the request
 * due) share; private to core/.
 */

#ifndef ELECTOR_INT_H
#define ELECTOR_INT_H

#include <stdint.h>

#include "codec/lease.h"
#include "core/elector.h"

#define MS_PER_S	1000ULL
#define US_PER_S	1000000LL

/* The acquire retry interval, retry_period x [1, 2.2) (2.2); draws. */
uint64_t elector_jitter(struct elector *e);

/* A write's spread over 0-20 ms while watching, 0 otherwise; draws. */
uint64_t elector_spread(struct elector *e);

/* Whether rec names our identity, whoever wrote it. */
int	 elector_is_self(const struct elector *e, const struct lease *rec);

/* Whether rec belongs to the term this process took. */
int	 elector_is_ours(const struct elector *e, const struct lease *rec);

/*
 * Until when our write that carried renew_us, sent at sent_ms, keeps us
 * leading.
 */
uint64_t elector_lead_until(const struct elector *e, int64_t renew_us,
	    uint64_t sent_ms);

/* The send time of our write that carried renew_us, or 0 if unknown. */
uint64_t elector_send_time(const struct elector *e, int64_t renew_us);

/* Whether rec is a takeover or a create that this process sent. */
int	 elector_sent_by_us(const struct elector *e, const struct lease *rec);

/*
 * Send the request scheduled (e->next_kind, now due and nothing in
 * flight): fill *act with it, remember a write in the ring, and mark it
 * in flight.
 */
void	 elector_send_due(struct elector *e, const struct elector_input *in,
	    struct elector_action *act);

#endif /* ELECTOR_INT_H */
