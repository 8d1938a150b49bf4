/*
 * ctl.h -- the control commands' command line (ctl.c): `leaderd status`,
 * `release`, `pause`, `resume` and `wait-leader`, for main.c.
 */

#ifndef CMD_CTL_H
#define CMD_CTL_H

/* Whether word (argv[1]) names a control command. */
int	ctl_is_command(const char *word);

/*
 * Run the control command argv[1] with the flags after it, and return
 * its exit status (daemon/ctl.h CTL_EXIT_*).
 */
int	ctl_command(int argc, char *argv[]);

struct config;
struct kube_creds;

/*
 * `leaderd doctor`: the in-pod checks (tool/doctor_pod.c) over the
 * daemon's configuration c, checked, and its credentials, which it takes
 * over.  Returns the exit status (tool/doctor.h DOCTOR_EXIT_*).
 */
int	ctl_doctor(const struct config *c, struct kube_creds *creds);

#endif /* CMD_CTL_H */
