/*
 * tool.h -- the operator's tools (the kubectl plugin, `kubectl leaderd`,
 * and the doctor): the command line they share, the API client set up
 * from a kubeconfig as kubectl reads one, and one request at a time,
 * waited for, with one place that turns a failure into one line.
 *
 * Nothing here retries: a tool asks once and says what it got.  Exit
 * statuses: TOOL_EXIT_OK, TOOL_EXIT_FAIL (the API refused or could not be
 * reached, a move timed out, the doctor found something), TOOL_EXIT_USAGE
 * (a bad command line, with where and the fix).
 */

#ifndef TOOL_H
#define TOOL_H

#include <stddef.h>
#include <stdint.h>

#include "api/kube.h"
#include "config/creds.h"

#define TOOL_EXIT_OK	0
#define TOOL_EXIT_FAIL	1
#define TOOL_EXIT_USAGE	2

#define TOOL_REQUEST_TIMEOUT_MS	10000	/* --request-timeout's default */
#define TOOL_MOVE_TIMEOUT_MS	30000	/* move --timeout's default */
#define TOOL_PAGE		500	/* Leases per page of a list */

struct ev_loop;
struct curlev;
struct token;

/* What the command line says (plugin.c fills it). */
struct tool_opts {
	const char	*kubeconfig;	/* --kubeconfig FILE, or NULL */
	const char	*context;	/* --context NAME, or NULL */
	const char	*namespace;	/* -n/--namespace NS, or NULL */
	int		 all_ns;	/* -A/--all-namespaces */
	const char	*output;	/* -o: "", "wide", "json" or "yaml" */
	const char	*selector;	/* -l/--selector, or NULL */
	int		 watch;		/* -w/--watch */
	const char	*to;		/* move --to ID, or NULL */
	uint64_t	 timeout_ms;	/* move --timeout */
	int		 force;		/* move --force */
	uint64_t	 request_timeout_ms; /* --request-timeout */
	char		**args;		/* the words after the subcommand */
	int		 nargs;
};

/* A tool's connection to the API server. */
struct tool {
	const char		*prog;	/* "kubectl leaderd": messages */
	struct tool_opts	 o;
	struct ev_loop		*loop;
	struct curlev		*cv;
	struct token		*token;
	struct kube		*kube;
	struct kube_creds	 creds;
	const char		*ns;	/* -n, else the context's, else
					   "default" */
	char			 where[300]; /* 'context "NAME"' or the
					   in-cluster account, for
					   messages */
};

/* An answer, its body copied (tool_answer_free). */
struct tool_answer {
	struct kube_result	 res;	/* res.body points at body */
	char			*body;	/* NUL-terminated */
	size_t			 len;
};

/*
 * Read the kubeconfig as kubectl does (--kubeconfig; else the KUBECONFIG
 * list, merged; else ~/.kube/config; else the in-cluster service
 * account), take the context (--context, else current-context) and its
 * namespace, and set up the client.  Returns 0, or -1 after printing one
 * line (a kubeconfig error, a context that does not exist).
 */
int	tool_open(struct tool *t, const char *prog, const struct tool_opts *o);

/*
 * The same over credentials already loaded (the daemon's, for `leaderd
 * doctor`), which t takes over (creds is zeroed): ns the namespace,
 * request_timeout_ms each request's bound (0: the default).  Returns 0,
 * or -1 after printing one line.
 */
int	tool_open_creds(struct tool *t, const char *prog,
	    struct kube_creds *creds, const char *ns,
	    uint64_t request_timeout_ms);

/* Free what tool_open set up. */
void	tool_close(struct tool *t);

/*
 * Send one request (kube_call) and wait for its answer, whatever it is.
 * Returns 0 with *a filled (tool_answer_free), or -1 after printing one
 * line when the request could not be started.
 */
int	tool_call(struct tool *t, const char *method, const char *path,
	    const char *body, const char *ctype, const char *verb,
	    struct tool_answer *a);

/*
 * tool_call, then: a 200 or 201 returns 0; anything else prints one line
 * (tool_fail) and returns -1, or 1 for a 404 when notfound_ok.  verb and
 * resource ("list", "leases") name what was refused; ns ("" for all
 * namespaces) and name (or NULL) where.
 */
int	tool_request(struct tool *t, const char *method, const char *path,
	    const char *body, const char *ctype, const char *verb,
	    const char *resource, const char *ns, const char *name,
	    int notfound_ok, struct tool_answer *a);

/*
 * The one line for a failed request: 401 (the credentials refused), 403
 * (the verb and resource refused, and where), 404, an API server that
 * cannot be reached or did not answer in time, any other status.
 */
void	tool_fail(struct tool *t, const struct kube_result *res,
	    const char *verb, const char *resource, const char *ns,
	    const char *name);

/* Print "PROG: message" on stderr, one line. */
void	tool_err(struct tool *t, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));

/*
 * Called with each line of a stream (NULL once when it opens); return 0
 * to go on, 1 to end the stream as done, -1 to end it as failed.
 */
typedef int (*tool_line_cb)(const char *line, size_t len, void *arg);

/*
 * Open a stream (a watch) on path and hand its lines to line_cb until
 * line_cb ends it, the server ends it, or limit_ms passes.  Returns 0
 * when line_cb ended it with 1 or the server ended it cleanly, 2 when
 * limit_ms passed, -1 after printing one line (the stream refused or
 * cut, or line_cb's -1; what line_cb printed stays its own).
 */
int	tool_stream(struct tool *t, const char *path, uint64_t limit_ms,
	    const char *resource, const char *ns, tool_line_cb line_cb,
	    void *arg);

void	tool_answer_free(struct tool_answer *a);

/*
 * A path segment or query value escaped (letters, digits, "-._~" kept),
 * into a string the caller frees.
 */
char	*tool_escape(const char *s);

/*
 * An age as kubectl prints one (k8s.io/apimachinery duration.HumanDuration):
 * "0s".."119s", "2m".."9m59s" as "3m2s", "10m".."2h59m", "3h".."7h59m"
 * as "5h3m", then "8h".."47h", "2d".."7d23h", "8d".. "729d", "2y"...
 * A negative duration is "<invalid>".
 */
void	tool_age(int64_t us, char *buf, size_t len);

/*
 * The subcommands of `kubectl leaderd` (plugin.c's table); each returns
 * an exit status.  t is open.
 */
int	plugin_get(struct tool *t);
int	plugin_shards(struct tool *t);
int	plugin_move(struct tool *t);
int	plugin_doctor(struct tool *t);

/*
 * `kubectl leaderd` (argv[0] kubectl-leaderd) with its arguments: the
 * subcommand and flags.  Returns the exit status.
 */
int	plugin_main(int argc, char *argv[]);

/*
 * The same under another name: prog ("leaderd") in messages and the
 * usage, argv[1] the subcommand ("doctor") or a flag.
 */
int	tool_main(const char *prog, int argc, char *argv[]);

#endif /* TOOL_H */
