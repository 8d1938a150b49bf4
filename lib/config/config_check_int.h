/*
 * config_check_int.h -- config_validate's rule families, one file each
 * (config_check*.c), and what they share (config_rules.c); private to
 * lib/config.  Each family adds its errors to e, each with the origin
 * of the value it names.
 */

#ifndef CONFIG_CHECK_INT_H
#define CONFIG_CHECK_INT_H

#include <stddef.h>

#include "config/config.h"
#include "config/config_int.h"

/* Where key k of c came from, for config_errs_add. */
#define ORIGIN(c, k)	(&(c)->origin[(k)])

/*
 * Of two keys in conflict, the one to blame: the one given later (a
 * flag over the file, a later line over an earlier one), else a.
 */
enum config_key config_later(const struct config *c, enum config_key a,
	    enum config_key b);

/* Whether s[0..len) is a DNS-1123 label of at most max bytes. */
int	config_dns_label(const char *s, size_t len, size_t max);

/* Whether s is a DNS-1123 subdomain: labels joined by '.', <= 253. */
int	config_dns_subdomain(const char *s);

/*
 * config_check_time.c: lease_duration > renew_deadline > 1.2 x
 * retry_period, all > 0, the lease in whole seconds; the API request
 * timeout below renew_deadline; the watch timeout from 1s to 30m.
 */
void	config_check_timing(const struct config *c, struct config_errs *e);
void	config_check_request_timeout(const struct config *c,
	    struct config_errs *e);
void	config_check_watch_timeout(const struct config *c,
	    struct config_errs *e);

/* config_check_listen.c: listen.http, probes, metrics, unix, streams. */
void	config_check_listen(const struct config *c, struct config_errs *e);

/*
 * config_check_run.c: run.restart and actions.label (its key alone by
 * config_check_label_key, also for an elections: item); actions.endpoints
 * when a Service is named; candidacy's probe and require_client;
 * candidacy.coordinated and handover.
 */
void	config_check_actions(const struct config *c, struct config_errs *e);
void	config_check_label_key(const struct config *c,
	    struct config_errs *e);
void	config_check_endpoints(const struct config *c, struct config_errs *e);
void	config_check_candidacy(const struct config *c, struct config_errs *e);
void	config_check_coordinated(const struct config *c,
	    struct config_errs *e);

/* config_check_shards.c: shards: when a group is configured. */
void	config_check_shards(const struct config *c, struct config_errs *e);

#endif /* CONFIG_CHECK_INT_H */
