/*
 * ctl.c -- leaderd's control client (see ctl.h): one request at a time
 * to the local API, its answer decoded by codec/ctlmsg.c and shown.
 *
 * The Host header is "localhost", which the local API accepts on every
 * TCP listener (http_host_check) and ignores on the unix socket.  Each
 * request has its own connection ("Connection: close"), so an answer
 * ends at Content-Length or at the close, whichever comes first.
 */

#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/duration.h"
#include "base/sock.h"
#include "base/text.h"
#include "codec/ctlmsg.h"
#include "codec/http_parse.h"
#include "daemon/ctl.h"

#define ANSWER_MAX	(1024 * 1024)	/* the local API's are < 4 KiB */
#define WAIT_ROUND_MS	60000		/* one blocking read's wait */
#define WAIT_MIN_GAP_MS	1000		/* between reads that saw no change */

/* One answer of the local API. */
struct answer {
	struct buf		 raw;	/* every byte read */
	struct http_response	 r;	/* status and body, into raw */
	struct ctlmsg		 m;	/* the body, decoded */
};

/* The place asked, for messages: the socket path or host:port. */
static const char *
where(const struct ctl_target *t)
{
	return t->unix_path != NULL ? t->unix_path : t->http;
}

/*
 * s made one safe line for a terminal (text_escape), in one of four
 * rotating buffers: one printf may show up to four.
 */
static const char *
safe(const char *s)
{
	static char	 b[4][CTLMSG_STR_MAX * 4];
	static int	 i;

	i = (i + 1) % 4;
	text_escape(b[i], sizeof(b[i]), s);
	return b[i];
}

static void
sleep_ms(uint64_t ms)
{
	struct timespec	 ts;

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Wait for events on fd until deadline_ms; 1 ready, 0 timed out, -1. */
static int
wait_fd(int fd, short events, uint64_t deadline_ms)
{
	struct pollfd	 pfd;
	uint64_t	 now_ms;
	int		 n;

	for (;;) {
		if ((now_ms = clock_raw_ms()) >= deadline_ms)
			return 0;
		pfd.fd = fd;
		pfd.events = events;
		pfd.revents = 0;
		n = poll(&pfd, 1, deadline_ms - now_ms > 60000 ? 60000 :
		    (int)(deadline_ms - now_ms));
		if (n > 0)
			return 1;
		if (n == -1 && errno != EINTR)
			return -1;
	}
}

/*
 * Send method path and read the whole answer into a, within limit_ms.
 * Returns 0 with a filled (and its body decoded), or -1 with err: the
 * daemon cannot be reached, did not answer in time, or what answered is
 * not the local API.  The caller frees a->raw either way.
 */
static int
request(const struct ctl_target *t, const char *method, const char *path,
    uint64_t limit_ms, struct answer *a, char *err, size_t errlen)
{
	uint64_t	 deadline_ms = clock_raw_ms() + limit_ms;
	char		 why[1024], req[2560], chunk[4096];
	size_t		 off = 0;
	ssize_t		 n;
	int		 fd, len, rc, eof = 0, named;

	memset(a, 0, sizeof(*a));
	if (t->unix_path != NULL)
		fd = sock_connect_unix(t->unix_path, CTL_IO_MS, why,
		    sizeof(why));
	else
		fd = sock_connect_tcp(t->http, CTL_IO_MS, why, sizeof(why));
	if (fd == -1) {
		/*
		 * The unix socket's error names its path already, and an
		 * address's its address (not localhost's: each of its two).
		 */
		named = t->unix_path != NULL ||
		    (strncmp(why, t->http, strlen(t->http)) == 0 &&
		    why[strlen(t->http)] == ':');
		snprintf(err, errlen, "cannot reach leaderd%s%s: %s; is it "
		    "running and listening there? (--unix-socket, --http, -f)",
		    named ? "" : " at ", named ? "" : t->http, why);
		return -1;
	}
	len = snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\n"
	    "Host: localhost\r\nUser-Agent: leaderd/%s\r\n"
	    "Accept: application/json\r\nConnection: close\r\n%s\r\n",
	    method, path, LEADERD_VERSION,
	    strcmp(method, "POST") == 0 ? "Content-Length: 0\r\n" : "");
	if (len < 0 || (size_t)len >= sizeof(req)) {
		snprintf(err, errlen, "the request for %s is too long", path);
		close(fd);
		return -1;
	}
	while (off < (size_t)len) {
		if ((rc = wait_fd(fd, POLLOUT, deadline_ms)) != 1)
			goto io;
		n = send(fd, req + off, (size_t)len - off, MSG_NOSIGNAL);
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			goto io;
		if (n > 0)
			off += (size_t)n;
	}
	for (;;) {
		rc = http_response_parse(a->raw.data, a->raw.len, eof, &a->r,
		    why, sizeof(why));
		if (rc == 1)
			break;
		if (rc == -1) {
			snprintf(err, errlen, "leaderd at %s: %s", where(t),
			    why);
			close(fd);
			return -1;
		}
		if ((rc = wait_fd(fd, POLLIN, deadline_ms)) != 1)
			goto io;
		n = recv(fd, chunk, sizeof(chunk), 0);
		if (n == -1 && errno != EAGAIN && errno != EINTR)
			goto io;
		if (n == 0)
			eof = 1;
		if (n > 0)
			buf_add(&a->raw, chunk, (size_t)n);
		if (a->raw.len > ANSWER_MAX) {
			snprintf(err, errlen, "leaderd at %s: an answer of "
			    "more than %d bytes", where(t), ANSWER_MAX);
			close(fd);
			return -1;
		}
	}
	close(fd);
	if (ctlmsg_decode(a->r.body, a->r.body_len, &a->m, why,
	    sizeof(why)) == -1) {
		snprintf(err, errlen, "%s answered %d with a body that is not "
		    "the local API's: %s", where(t), a->r.status, why);
		return -1;
	}
	return 0;
io:
	if (rc == 0)
		snprintf(err, errlen, "leaderd at %s did not answer %s %s "
		    "within %llu ms", where(t), method, path,
		    (unsigned long long)limit_ms);
	else
		snprintf(err, errlen, "the connection to leaderd at %s "
		    "failed: %s", where(t), strerror(errno));
	close(fd);
	return -1;
}

/* With json, the answer's body on stdout, as the daemon sent it. */
static void
print_body(const struct ctl_target *t, const struct answer *a)
{
	if (!t->json)
		return;
	fwrite(a->r.body, 1, a->r.body_len, stdout);
	if (a->r.body_len == 0 || a->r.body[a->r.body_len - 1] != '\n')
		fputc('\n', stdout);
	fflush(stdout);
}

/*
 * A refusal on stderr: what the daemon said, and what to do about the
 * answers a user can act on.  Returns CTL_EXIT_REFUSED.
 */
static int
refused(const char *cmd, const char *method, const char *path,
    const struct answer *a, const char *hint)
{
	const char	*why = a->m.has & CTLMSG_ERROR ? a->m.error :
			    a->m.has & CTLMSG_REASON ? a->m.reason : "";

	fprintf(stderr, "leaderd: %s: %s %s: refused (%d)%s%s%s%s\n", cmd,
	    method, path, a->r.status, why[0] != '\0' ? ": " : "",
	    safe(why), hint != NULL ? "; " : "", hint != NULL ? hint : "");
	return CTL_EXIT_REFUSED;
}

/* The hint for a refusal a user can act on, or NULL. */
static const char *
hint_for(int status, const char *path)
{
	if (status == 403)
		return "what counts is the address the listener is bound "
		    "to, not the client's: give leaderd listen.unix and use "
		    "--unix-socket PATH (or -f with that file), or bind "
		    "listen.http to localhost";
	if (status == 404 && strncmp(path, "/leader/", 8) == 0)
		return "this leaderd does not serve it (an older version), or "
		    "this is its probes listener";
	if (status == 404)
		return "this is its probes listener, which serves /healthz, "
		    "/readyz and /metrics only: ask listen.http or "
		    "listen.unix";
	return NULL;
}

/* Print the /leader answer m as text. */
static void
print_status(const struct ctlmsg *m)
{
	char	 d[32];

	if (m->has & CTLMSG_PROBLEM)
		printf("problem:        %s (%s since %s): %s\n",
		    safe(m->problem_code), safe(m->problem_severity),
		    safe(m->problem_since), safe(m->problem));
	printf("holder:         %s\n", m->name[0] != '\0' ? safe(m->name) :
	    "(none: the lease is free or not read yet)");
	printf("leader:         %s\n", m->is_leader ? "yes (this instance)" :
	    "no");
	if (m->has & CTLMSG_IDENTITY)
		printf("identity:       %s\n", safe(m->identity));
	if (m->has & CTLMSG_LOCK)
		printf("lock:           %s\n", safe(m->lock));
	if (m->has & CTLMSG_STATE)
		printf("state:          %s\n", safe(m->state));
	if (m->has & CTLMSG_TOKEN)
		printf("fencing token:  %s\n", m->token[0] != '\0' ?
		    safe(m->token) : "(none: the lease is free)");
	if (m->has & CTLMSG_VALID_FOR) {
		duration_format(m->valid_for_ms, d, sizeof(d));
		printf("valid for:      %s\n", m->is_leader ? d :
		    "- (not leading)");
	}
	if (m->has & CTLMSG_CANDIDATE) {
		if (m->candidate || m->cand_reason[0] == '\0')
			printf("candidate:      %s\n", m->candidate ? "yes" :
			    "no");
		else
			printf("candidate:      no (%s)\n",
			    safe(m->cand_reason));
	}
	if ((m->has & CTLMSG_STALE) && m->stale)
		printf("confirmed:      %s (stale: older than "
		    "lease_duration)\n", m->confirmed_at[0] != '\0' ?
		    safe(m->confirmed_at) : "never");
}

int
ctl_status(const struct ctl_target *t)
{
	struct answer	 a;
	char		 err[2048];
	int		 ret = CTL_EXIT_OK;

	if (request(t, "GET", "/leader", CTL_IO_MS, &a, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "leaderd: status: %s\n", err);
		buf_free(&a.raw);
		return CTL_EXIT_UNREACHABLE;
	}
	print_body(t, &a);
	if (a.r.status != 200)
		ret = refused("status", "GET", "/leader", &a,
		    hint_for(a.r.status, "/leader"));
	else if (!(a.m.has & CTLMSG_IS_LEADER)) {
		fprintf(stderr, "leaderd: status: %s answered without "
		    "is_leader: not leaderd's local API\n", where(t));
		ret = CTL_EXIT_UNREACHABLE;
	} else {
		if (!t->json)
			print_status(&a.m);
		if (a.m.has & CTLMSG_PROBLEM)
			ret = strcmp(a.m.problem_severity, "warning") == 0 ?
			    CTL_EXIT_WARNING : CTL_EXIT_PROBLEM;
	}
	buf_free(&a.raw);
	return ret;
}

int
ctl_release(const struct ctl_target *t, const char *to)
{
	struct answer	 a;
	char		 path[HTTP_PARSE_LINE_MAX], v[1024];	/* 253 * 3 */
	char		 err[2048], d[32];
	const char	*hint;
	int		 ret = CTL_EXIT_OK;

	snprintf(path, sizeof(path), "/leader/release");
	if (to != NULL) {
		if (to[0] == '\0' || strlen(to) > 253 ||
		    http_query_escape(to, v, sizeof(v)) == -1) {
			fprintf(stderr, "leaderd: release: --to must name an "
			    "identity of 1 to 253 bytes\n");
			return CTL_EXIT_USAGE;
		}
		snprintf(path, sizeof(path), "/leader/release?to=%s", v);
	}
	if (request(t, "POST", path, t->release_ms, &a, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "leaderd: release: %s\n", err);
		buf_free(&a.raw);
		return CTL_EXIT_UNREACHABLE;
	}
	print_body(t, &a);
	duration_format(a.m.cooldown_ms, d, sizeof(d));
	if (a.r.status == 200 && a.m.released) {
		if (!t->json)
			printf("released: this instance no longer leads%s%s, "
			    "and stays out of the election for %s\n",
			    to != NULL ? "; the lease goes to " : "",
			    to != NULL ? safe(to) : "", d);
	} else if (a.r.status == 200) {
		if (!t->json)
			printf("not released: another holder wrote the lease "
			    "first; this instance no longer leads\n");
	} else if (a.r.status == 202) {
		if (!t->json)
			printf("this instance no longer leads; the release is "
			    "not written yet: leaderd keeps trying, and the "
			    "lease expires anyway\n");
	} else {
		hint = hint_for(a.r.status, "/leader/release");
		/* A leaderd without directed handover takes no ?to. */
		if (to != NULL && a.r.status == 400 &&
		    (strstr(a.m.error, "no parameters") != NULL ||
		    strstr(a.m.error, "not supported") != NULL))
			hint = "this leaderd does not support release --to "
			    "(directed handover); upgrade it, or release "
			    "without --to";
		ret = refused("release", "POST", path, &a, hint);
	}
	buf_free(&a.raw);
	return ret;
}

int
ctl_pause(const struct ctl_target *t, int pause)
{
	struct answer	 a;
	const char	*cmd = pause ? "pause" : "resume";
	const char	*path = pause ? "/leader/pause" : "/leader/resume";
	char		 err[2048];
	int		 ret = CTL_EXIT_OK;

	if (request(t, "POST", path, t->release_ms, &a, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "leaderd: %s: %s\n", cmd, err);
		buf_free(&a.raw);
		return CTL_EXIT_UNREACHABLE;
	}
	print_body(t, &a);
	if (a.r.status != 200)
		ret = refused(cmd, "POST", path, &a,
		    a.r.status == 404 ? "this leaderd does not serve it (a "
		    "version without pause and resume), or this is its "
		    "probes listener" : hint_for(a.r.status, path));
	else if (t->json)
		;
	else if (pause)
		printf("paused: this instance is not a candidate and does not "
		    "lead\n");
	else if (!(a.m.has & CTLMSG_CANDIDATE) || a.m.candidate)
		printf("resumed\n");
	else
		printf("resumed: not a candidate yet (%s)\n",
		    safe(a.m.cand_reason));
	buf_free(&a.raw);
	return ret;
}

int
ctl_wait_leader(const struct ctl_target *t, int64_t timeout_ms)
{
	struct answer	 a;
	uint64_t	 start_ms = clock_raw_ms(), round_ms, took_ms;
	uint64_t	 wait_ms = 0, left_ms, gap_ms, spent_ms, index = 0;
	char		 path[128], err[2048], d[32];
	int		 blocking = 0, no_wait = 0, ret;

	for (;;) {
		if (blocking)
			snprintf(path, sizeof(path), "/leader?wait=%llums&"
			    "index=%llu", (unsigned long long)wait_ms,
			    (unsigned long long)index);
		else {
			snprintf(path, sizeof(path), "/leader");
			wait_ms = 0;
		}
		round_ms = clock_raw_ms();
		if (request(t, "GET", path, wait_ms + CTL_IO_MS, &a, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "leaderd: wait-leader: %s\n", err);
			buf_free(&a.raw);
			return CTL_EXIT_UNREACHABLE;
		}
		if (a.r.status == 503 && blocking) {
			/* Too many waiting requests: plain reads, slowly. */
			buf_free(&a.raw);
			blocking = 0;
			no_wait = 1;
			continue;
		}
		if (a.r.status != 200) {
			print_body(t, &a);
			ret = refused("wait-leader", "GET", path, &a,
			    hint_for(a.r.status, path));
			buf_free(&a.raw);
			return ret;
		}
		if (!(a.m.has & CTLMSG_IS_LEADER)) {
			fprintf(stderr, "leaderd: wait-leader: %s answered "
			    "without is_leader: not leaderd's local API\n",
			    where(t));
			buf_free(&a.raw);
			return CTL_EXIT_UNREACHABLE;
		}
		if (a.m.is_leader) {
			print_body(t, &a);
			if (!t->json)
				printf("leading: %s leads %s, fencing token "
				    "%s\n", safe(a.m.identity),
				    safe(a.m.lock), safe(a.m.token));
			buf_free(&a.raw);
			return CTL_EXIT_OK;
		}
		if (timeout_ms >= 0 &&
		    clock_raw_ms() - start_ms >= (uint64_t)timeout_ms) {
			print_body(t, &a);
			duration_format((uint64_t)timeout_ms, d, sizeof(d));
			fprintf(stderr, "leaderd: wait-leader: not the leader "
			    "after %s (holder: %s, state: %s)\n", d,
			    a.m.name[0] != '\0' ? safe(a.m.name) : "none",
			    safe(a.m.state));
			buf_free(&a.raw);
			return CTL_EXIT_TIMEOUT;
		}
		/*
		 * Never a tight loop: a plain read is followed by a blocking
		 * one, and an answer that came back early with nothing
		 * changed (a daemon that lets nothing wait), or a plain
		 * read after a refused wait, by a pause first.
		 */
		took_ms = clock_raw_ms() - round_ms;
		if (((blocking && a.m.index == index) || no_wait ||
		    !(a.m.has & CTLMSG_INDEX)) && took_ms < WAIT_MIN_GAP_MS) {
			gap_ms = WAIT_MIN_GAP_MS - took_ms;
			/* Not past the time limit, though. */
			spent_ms = clock_raw_ms() - start_ms;
			if (timeout_ms >= 0 && spent_ms + gap_ms >
			    (uint64_t)timeout_ms)
				gap_ms = (uint64_t)timeout_ms > spent_ms ?
				    (uint64_t)timeout_ms - spent_ms : 0;
			sleep_ms(gap_ms);
		}
		blocking = !no_wait && (a.m.has & CTLMSG_INDEX) != 0;
		index = a.m.index;
		buf_free(&a.raw);
		left_ms = WAIT_ROUND_MS;
		if (timeout_ms >= 0) {
			spent_ms = clock_raw_ms() - start_ms;
			left_ms = spent_ms < (uint64_t)timeout_ms ?
			    (uint64_t)timeout_ms - spent_ms : 1;
		}
		wait_ms = left_ms < WAIT_ROUND_MS ? left_ms : WAIT_ROUND_MS;
	}
}
