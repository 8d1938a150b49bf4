/*
 * tool.c -- what the operator's tools share: the kubeconfig read as
 * kubectl reads it, the API client on its own loop, one request at a
 * time waited for, a stream's lines, and the one place where a failed
 * request becomes one line.  Never a retry: a tool asks once.
 */

#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "api/curlev.h"
#include "api/kube.h"
#include "api/token.h"
#include "base/text.h"
#include "base/xmalloc.h"
#include "config/creds.h"
#include "config/kubeconfig.h"
#include "tool/tool.h"

#define KUBECONFIG_PATHS_MAX	16

void
tool_err(struct tool *t, const char *fmt, ...)
{
	char	 msg[1024], safe[1200];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* API text (a holder, a Status message) prints on one line. */
	text_escape(safe, sizeof(safe), msg);
	fprintf(stderr, "%s: %s\n", t->prog, safe);
}

/*
 * The credentials as kubectl finds them: --kubeconfig (that file); else
 * $KUBECONFIG, a colon-separated list merged (missing files skipped);
 * else ~/.kube/config when it exists; else the in-cluster service
 * account.  Returns 0, or -1 after one line.
 */
static int
load_creds(struct tool *t)
{
	const char	*paths[KUBECONFIG_PATHS_MAX], *env, *home;
	char		*list = NULL, *p, *home_cfg = NULL, err[1024];
	char		 warn[512];
	size_t		 n = 0;
	struct stat	 st;
	int		 rc, is_list = 0;

	warn[0] = '\0';
	env = getenv("KUBECONFIG");
	home = getenv("HOME");
	if (t->o.kubeconfig != NULL)
		paths[n++] = t->o.kubeconfig;
	else if (env != NULL && env[0] != '\0') {
		list = xstrdup(env);
		is_list = 1;
		for (p = strtok(list, ":"); p != NULL &&
		    n < KUBECONFIG_PATHS_MAX; p = strtok(NULL, ":"))
			paths[n++] = p;
	} else if (home != NULL) {
		xasprintf(&home_cfg, "%s/.kube/config", home);
		if (stat(home_cfg, &st) == 0)
			paths[n++] = home_cfg;
	}
	if (n == 0 && !is_list) {
		if (t->o.context != NULL) {
			tool_err(t, "context \"%s\" does not exist: there is "
			    "no kubeconfig (set KUBECONFIG or --kubeconfig)",
			    t->o.context);
			free(home_cfg);
			return -1;
		}
		if (creds_incluster(&t->creds, NULL, err, sizeof(err)) == -1) {
			tool_err(t, "no kubeconfig (%s/.kube/config does not "
			    "exist; set KUBECONFIG or --kubeconfig) and not in "
			    "a cluster: %s", home != NULL ? home : "~", err);
			free(home_cfg);
			return -1;
		}
		snprintf(t->where, sizeof(t->where), "the in-cluster service "
		    "account");
		free(home_cfg);
		return 0;
	}
	rc = kubeconfig_load_merged(&t->creds, paths, n, is_list,
	    t->o.context, err, sizeof(err), warn, sizeof(warn));
	if (rc == -1)
		tool_err(t, "%s", err);
	else if (t->o.context != NULL)
		snprintf(t->where, sizeof(t->where), "context \"%s\"",
		    t->o.context);
	else
		snprintf(t->where, sizeof(t->where), "the current context");
	free(list);
	free(home_cfg);
	return rc;
}

static int	tool_connect(struct tool *);

int
tool_open(struct tool *t, const char *prog, const struct tool_opts *o)
{
	memset(t, 0, sizeof(*t));
	t->prog = prog;
	t->o = *o;
	if (t->o.request_timeout_ms == 0)
		t->o.request_timeout_ms = TOOL_REQUEST_TIMEOUT_MS;
	if (load_creds(t) == -1)
		return -1;
	t->ns = t->o.namespace != NULL ? t->o.namespace :
	    t->creds.namespace != NULL ? t->creds.namespace : "default";
	return tool_connect(t);
}

int
tool_open_creds(struct tool *t, const char *prog, struct kube_creds *creds,
    const char *ns, uint64_t request_timeout_ms)
{
	memset(t, 0, sizeof(*t));
	t->prog = prog;
	t->o.request_timeout_ms = request_timeout_ms != 0 ?
	    request_timeout_ms : TOOL_REQUEST_TIMEOUT_MS;
	t->creds = *creds;
	memset(creds, 0, sizeof(*creds));
	t->ns = ns;
	snprintf(t->where, sizeof(t->where), "this pod's credentials");
	return tool_connect(t);
}

/* The loop, the token and the client, for t->creds. */
static int
tool_connect(struct tool *t)
{
	char	 err[512], ua[64];

	if ((t->loop = ev_loop_new(EVFLAG_AUTO)) == NULL) {
		tool_err(t, "cannot create an event loop");
		return -1;
	}
	snprintf(ua, sizeof(ua), "kubectl-leaderd/%s", LEADERD_VERSION);
	if ((t->cv = curlev_new(t->loop, err, sizeof(err))) == NULL ||
	    (t->token = token_new(&t->creds, err, sizeof(err))) == NULL ||
	    (t->kube = kube_new(t->cv, &t->creds, t->token, ua, err,
	    sizeof(err))) == NULL) {
		tool_err(t, "%s", err);
		return -1;
	}
	return 0;
}

void
tool_close(struct tool *t)
{
	kube_free(t->kube);
	t->kube = NULL;
	if (t->cv != NULL)
		curlev_free(t->cv);
	t->cv = NULL;
	token_free(t->token);
	t->token = NULL;
	if (t->loop != NULL)
		ev_loop_destroy(t->loop);
	t->loop = NULL;
	creds_clear(&t->creds);
}

/* A request waited for. */
struct wait {
	struct tool_answer	*a;
	int			 done;
	tool_line_cb		 line_cb;	/* a stream's */
	void			*line_arg;
	int			 line_rc;	/* what line_cb ended with */
	int			 opened;	/* the stream answered 200 */
};

static void
wait_done_cb(const struct kube_result *res, void *arg)
{
	struct wait		*w = arg;
	struct tool_answer	*a = w->a;

	a->res = *res;
	a->len = res->len;
	a->body = xmalloc(res->len + 1);
	memcpy(a->body, res->body, res->len);
	a->body[res->len] = '\0';
	a->res.body = a->body;
	w->done = 1;
}

static void
wait_for(struct tool *t, struct wait *w)
{
	while (!w->done)
		ev_run(t->loop, EVRUN_ONCE);
}

int
tool_call(struct tool *t, const char *method, const char *path,
    const char *body, const char *ctype, const char *verb,
    struct tool_answer *a)
{
	struct wait	 w;

	memset(a, 0, sizeof(*a));
	memset(&w, 0, sizeof(w));
	w.a = a;
	if (kube_call(t->kube, method, path, body, ctype, verb,
	    t->o.request_timeout_ms, wait_done_cb, &w) == -1) {
		tool_err(t, "%s %s: the request could not be started", verb,
		    path);
		return -1;
	}
	wait_for(t, &w);
	return 0;
}

void
tool_answer_free(struct tool_answer *a)
{
	free(a->body);
	memset(a, 0, sizeof(*a));
}

void
tool_fail(struct tool *t, const struct kube_result *res, const char *verb,
    const char *resource, const char *ns, const char *name)
{
	char	 what[512];

	snprintf(what, sizeof(what), "%s %s%s%s%s%s%s", verb, resource,
	    name != NULL ? " \"" : "", name != NULL ? name : "",
	    name != NULL ? "\"" : "", ns[0] != '\0' ? " in namespace " :
	    " in all namespaces", ns);
	if (res->status == 0 && res->timed_out)
		tool_err(t, "the API server at %s (%s) did not answer within "
		    "%llu ms: %s", t->creds.server, t->where,
		    (unsigned long long)t->o.request_timeout_ms, res->message);
	else if (res->status == 0)
		tool_err(t, "cannot reach the API server at %s (%s): %s",
		    t->creds.server, t->where, res->message);
	else if (res->status == 401)
		tool_err(t, "Unauthorized: the API server at %s refused the "
		    "credentials of %s (401): %s", t->creds.server, t->where,
		    res->message);
	else if (res->status == 403)
		tool_err(t, "Forbidden: not allowed to %s (403); grant the "
		    "verb \"%s\" on \"%s\" in a %s: %s", what, verb, resource,
		    ns[0] != '\0' ? "Role" : "ClusterRole", res->message);
	else if (res->status == 404)
		tool_err(t, "NotFound: %s: %s", what, res->message);
	else
		tool_err(t, "%s: %ld %s: %s", what, res->status, res->reason,
		    res->message);
}

int
tool_request(struct tool *t, const char *method, const char *path,
    const char *body, const char *ctype, const char *verb,
    const char *resource, const char *ns, const char *name,
    int notfound_ok, struct tool_answer *a)
{
	if (tool_call(t, method, path, body, ctype, verb, a) == -1)
		return -1;
	if (a->res.outcome == KUBE_OK)
		return 0;
	if (a->res.status == 404 && notfound_ok)
		return 1;
	tool_fail(t, &a->res, verb, resource, ns, name);
	tool_answer_free(a);
	return -1;
}

static int
stream_line_cb(const char *line, size_t len, void *arg)
{
	struct wait	*w = arg;
	int		 rc;

	if (line == NULL)
		w->opened = 1;
	if ((rc = w->line_cb(line, len, w->line_arg)) != 0) {
		w->line_rc = rc;
		return -1;
	}
	return 0;
}

int
tool_stream(struct tool *t, const char *path, uint64_t limit_ms,
    const char *resource, const char *ns, tool_line_cb line_cb, void *arg)
{
	struct tool_answer	 a;
	struct wait		 w;
	int			 rc;

	memset(&a, 0, sizeof(a));
	memset(&w, 0, sizeof(w));
	w.a = &a;
	w.line_cb = line_cb;
	w.line_arg = arg;
	if (kube_call_stream(t->kube, path, limit_ms, stream_line_cb,
	    wait_done_cb, &w) == -1) {
		tool_err(t, "watch %s: the request could not be started",
		    resource);
		return -1;
	}
	wait_for(t, &w);
	if (w.line_rc == 1)
		rc = 0;
	else if (w.line_rc == -1)
		rc = -1;
	else if (a.res.outcome == KUBE_OK)
		rc = 0;
	else if (a.res.timed_out && w.opened)
		rc = 2;
	else {
		if (w.opened)
			tool_err(t, "the watch of %s was cut: %s", resource,
			    a.res.message);
		else
			tool_fail(t, &a.res, "watch", resource, ns, NULL);
		rc = -1;
	}
	tool_answer_free(&a);
	return rc;
}

char *
tool_escape(const char *s)
{
	static const char	 hex[] = "0123456789ABCDEF";
	char			*out, *p;
	unsigned char		 c;

	p = out = xmalloc(strlen(s) * 3 + 1);
	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~')
			*p++ = (char)c;
		else {
			*p++ = '%';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		}
	}
	*p = '\0';
	return out;
}

void
tool_age(int64_t us, char *buf, size_t len)
{
	int64_t	 s = us / 1000000, m, h, d;

	if (s < -1) {
		snprintf(buf, len, "<invalid>");
		return;
	}
	if (s < 0)
		s = 0;
	if (s < 120) {
		snprintf(buf, len, "%llds", (long long)s);
		return;
	}
	m = s / 60;
	if (m < 10) {
		if (s % 60 == 0)
			snprintf(buf, len, "%lldm", (long long)m);
		else
			snprintf(buf, len, "%lldm%llds", (long long)m,
			    (long long)(s % 60));
		return;
	}
	if (m < 180) {
		snprintf(buf, len, "%lldm", (long long)m);
		return;
	}
	h = s / 3600;
	if (h < 8) {
		if (m % 60 == 0)
			snprintf(buf, len, "%lldh", (long long)h);
		else
			snprintf(buf, len, "%lldh%lldm", (long long)h,
			    (long long)(m % 60));
		return;
	}
	if (h < 48) {
		snprintf(buf, len, "%lldh", (long long)h);
		return;
	}
	d = h / 24;
	if (h < 24 * 8) {
		if (h % 24 == 0)
			snprintf(buf, len, "%lldd", (long long)d);
		else
			snprintf(buf, len, "%lldd%lldh", (long long)d,
			    (long long)(h % 24));
		return;
	}
	if (h < 24 * 365 * 2) {
		snprintf(buf, len, "%lldd", (long long)d);
		return;
	}
	if (h < 24 * 365 * 8) {
		if (d % 365 == 0)
			snprintf(buf, len, "%lldy", (long long)(d / 365));
		else
			snprintf(buf, len, "%lldy%lldd", (long long)(d / 365),
			    (long long)(d % 365));
		return;
	}
	snprintf(buf, len, "%lldy", (long long)(d / 365));
}
