/*
 * compat_int.h -- what compat.c shares with each peer's compat_PEER.c:
 * the peer's row of the table, and the helpers every peer grammar uses.
 * Private to lib/config.
 */

#ifndef COMPAT_INT_H
#define COMPAT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "config/compat.h"
#include "config/config.h"

/* Set key to the peer's default unless a flag or the file set it. */
void	compat_default(struct config *c, const char *peer,
	    enum config_key key, const char *value);

/*
 * Set key from one of the peer's flags (flag names it in errors and in
 * the origin).  Returns 0, or -1 with "flag: reason" in err.
 */
int	compat_set(struct config *c, const char *key, const char *value,
	    const char *flag, char *err, size_t errlen);

/*
 * vapor-ware/k8s-elector (compat_vapor.c): its Go flags into c, its
 * usage (flag.PrintDefaults, without the "Usage of ARGV0:" line), and
 * its defaults for what is unset.
 */
int	compat_vapor_args(struct config *c, int argc, char *argv[],
	    struct compat_cmdline *out, char *err, size_t errlen);
extern const char compat_vapor_usage[];
void	compat_vapor_finish(struct config *c);

/*
 * await (LINBIT k8s-await-election, compat_await.c): no flags, argv[1..]
 * the command, K8S_AWAIT_ELECTION_* the rest; its defaults.
 */
int	compat_await_args(struct config *c, int argc, char *argv[],
	    struct compat_cmdline *out, char *err, size_t errlen);
void	compat_await_finish(struct config *c);

/*
 * Whether argv[*i] is a --compat flag (compat_detect's spellings); if
 * its value is the next argument, *i is moved onto it.  A peer's
 * grammar skips it.
 */
int	compat_skip(int argc, char *const argv[], int *i);

/*
 * Go's value grammar (compat_go.c), for the peers written in Go.
 */

/* How a flag's value is read: its flag.Value type. */
enum gf_type {
	GF_STRING,	/* flag.StringVar */
	GF_DURATION,	/* flag.DurationVar: time.ParseDuration */
	GF_BOOL,	/* flag.BoolVar: strconv.ParseBool */
	GF_UINT64,	/* flag.Uint64Var: strconv.ParseUint(s, 0, 64) */
	GF_LEVEL,	/* klog.Level: strconv.ParseInt(s, 10, 32) */
	GF_SEVERITY,	/* klog's severity: a name or ParseInt(s, 10, 32) */
	GF_VMODULE,	/* klog's moduleSpec: pattern=N,... */
	GF_TRACE	/* klog's traceLocation: file.go:N */
};

/* A strconv error: none, ErrSyntax or ErrRange. */
enum numerr { NUM_OK, NUM_SYNTAX, NUM_RANGE };

/* s as Go's %q writes it, into buf (len bytes, cut short); buf. */
const char *compat_go_quote(const char *s, char *buf, size_t len);

/* strconv.ParseBool into *b: 0, or -1 if s is not one of its words. */
int	compat_go_parse_bool(const char *s, int *b);

/* strconv.ParseInt(s, 10, bits) into *out. */
enum numerr compat_go_parse_int(const char *s, int bits, int64_t *out);

/* time.ParseDuration, with its sign, into *ns: 0 or -1. */
int	compat_go_parse_duration(const char *s, int64_t *ns);

/*
 * Set: check v as a flag.Value of type would (GF_STRING and GF_BOOL
 * are not checked here).  Returns 0, or -1 with what Set returned (the
 * text after "for flag -NAME: ") in why.
 */
int	compat_go_check(enum gf_type type, const char *v, char *why,
	    size_t len);

/* nais/elector (compat_nais.c): its pflag and viper command line. */
int	compat_nais_args(struct config *c, int argc, char *argv[],
	    struct compat_cmdline *out, char *err, size_t errlen);
void	compat_nais_finish(struct config *c);
extern const char compat_nais_usage[];

#endif /* COMPAT_INT_H */
