/*
 * daemon.h -- the driver: wires the elector to the API client, the local
 * HTTP server, timers and signals on one libev loop.  The only module
 * that sees libev, kube and the elector together.
 */

#ifndef DAEMON_H
#define DAEMON_H

#include "config/config.h"
#include "config/creds.h"

/*
 * Run the election described by conf against the API server in creds
 * until SIGTERM or SIGINT, then release the lease if leading and
 * release_on_cancel is set.  cmd (NULL-ended, borrowed) is the run
 * mode's command, run while leading, or NULL.  Listener set-up failures
 * are reported before the election starts.  Returns the process exit
 * status: 0 after a signal, 1 if the daemon could not start, the
 * command's exit code when it ended leaderd (run.restart never).
 */
int	daemon_run(const struct config *conf, const struct kube_creds *creds,
	    char *const *cmd);

#endif /* DAEMON_H */
