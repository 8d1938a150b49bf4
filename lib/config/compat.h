/*
 * compat.h -- the peer sidecars leaderd stands in for (docs/migrating.md;
 * their facts, read from their sources, in test/compat/peers.md): which
 * one a command line selects, and each one's command line, environment
 * and defaults read into a struct config as that peer reads them.
 *
 * classic (the kubernetes/contrib leader-elector) takes leaderd's own
 * flags, a subset of ours; nais (nais/elector), vapor
 * (vapor-ware/k8s-elector) and await (LINBIT k8s-await-election) have
 * grammars of their own, read by compat_args.  await reads no flags:
 * its argv[1..] is the run mode's command and K8S_AWAIT_ELECTION_* its
 * configuration (compat_await.c).
 */

#ifndef COMPAT_H
#define COMPAT_H

#include "config/config.h"

/* Whether peer names a peer leaderd stands in for ("" is none: 0). */
int		 compat_known(const char *peer);

/* The peers' names, for messages: "classic, nais, ...". */
const char	*compat_names(void);

/*
 * Whether peer holds its lock for life (core/elector.h): nais, whose
 * Lease is created once, owned by the pod, and never written again.
 */
int		 compat_for_life(const char *peer);

/* Whether peer's command line is read by compat_args (not leaderd's). */
int		 compat_own_args(const char *peer);

/*
 * The peer a command line selects, or NULL for none: --compat=PEER (or
 * --compat PEER, -compat[=]PEER) before any "--"; else argv[0] (the
 * peer's binary name, compat.c's table); else the peer's environment
 * or a flag only that peer has.  An explicit --compat="" gives "".
 */
const char	*compat_detect(int argc, char *const argv[]);

/*
 * compat_detect, with what selected the peer written to why ("--compat",
 * "argv[0] NAME", "VAR in the environment", "the flag -F"; "" for
 * none).  A peer's environment selects it only when argv is not
 * leaderd's own: ctl_word (argv[1] is a control command), "run", -f,
 * --config, -n or -v (for await, whose argv[1..] is its command, only
 * argv[1]: a control word or a flag); then NULL is returned and why
 * says which variable was ignored.  *by_env (if not NULL) is 1 when
 * the environment selected the peer or was ignored, for a note.
 */
const char	*compat_select(int argc, char *const argv[], int ctl_word,
		    char *why, size_t whylen, int *by_env);

/* What a peer's command line asks main to do besides configure. */
struct compat_cmdline {
	int		 exit_status;	/* >= 0: exit with it now */
	char		**cmd;		/* run mode: the command, else NULL */
	int		 exec_direct;	/* exec cmd with no election at all */
	int		 config_status;	/* exit status for a configuration
					   or credentials refused later;
					   0: leaderd's 2 */
};

/*
 * Read argv (argv[0] included) and the environment of a peer with a
 * grammar of its own into c, as the peer reads them (a --compat flag
 * is skipped).  Returns 0 with *out filled (exit_status -1 to go on),
 * or -1 with the message in err and out->exit_status the status the
 * peer exits with for it (its usage: 0 or 2 as the peer does).
 */
int		 compat_args(struct config *c, const char *peer, int argc,
		    char *argv[], struct compat_cmdline *out, char *err,
		    size_t errlen);

/* The usage text of a peer with a grammar of its own, for its --help. */
const char	*compat_usage(const char *peer);

/*
 * Give what is still unset the selected peer's defaults (config_finish
 * calls it first).  A no-op without compat.
 */
void		 compat_finish(struct config *c);

#endif /* COMPAT_H */
