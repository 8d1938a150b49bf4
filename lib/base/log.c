/*
 * log.c -- one line per event on stderr, as text
 * ("2026-12-02T13:52:01.123Z info became leader ...") or as JSON lines
 * ({"ts":"...","level":"info","msg":"..."}).  OpenBSD naming: the *_warn
 * forms append strerror(errno), the *x forms do not.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/text.h"

static enum log_level	 log_level = LOG_LEVEL_INFO;
static enum log_format	 log_format = LOG_FORMAT_TEXT;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void
log_init(enum log_level level, enum log_format format)
{
	log_level = level;
	log_format = format;
}

int
log_level_parse(const char *s, enum log_level *level)
{
	size_t	 i;

	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (strcmp(s, level_names[i]) == 0) {
			*level = (enum log_level)i;
			return 0;
		}
	return -1;
}

int
log_format_parse(const char *s, enum log_format *format)
{
	if (strcmp(s, "text") == 0)
		*format = LOG_FORMAT_TEXT;
	else if (strcmp(s, "json") == 0)
		*format = LOG_FORMAT_JSON;
	else
		return -1;
	return 0;
}

const char *
log_level_name(enum log_level level)
{
	return level_names[level];
}

static void
vlog(enum log_level level, const char *errstr, const char *fmt, va_list ap)
{
	char		 msg[2048], line[8256], ts[40];
	const char	*p;
	struct timespec	 tv;
	struct tm	 tm;
	size_t		 n;
	int		 saved = errno;

	if (level > log_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (errstr != NULL) {
		n = strlen(msg);
		snprintf(msg + n, sizeof(msg) - n, ": %s", errstr);
	}
	clock_gettime(CLOCK_REALTIME, &tv);
	gmtime_r(&tv.tv_sec, &tm);
	n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + n, sizeof(ts) - n, ".%03ldZ", tv.tv_nsec / 1000000);

	if (log_format == LOG_FORMAT_JSON) {
		n = (size_t)snprintf(line, sizeof(line),
		    "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"", ts,
		    level_names[level]);
		p = msg;
		text_json_escape(line + n, sizeof(line) - n, &p);
		fprintf(stderr, "%s\"}\n", line);
	} else {
		/* Lease and API text must not forge lines or drive a tty. */
		text_escape(line, sizeof(line), msg);
		fprintf(stderr, "%s %s %s\n", ts, level_names[level], line);
	}
	fflush(stderr);
	errno = saved;
}

#define LOG_BODY(level, errstr) do {			\
	va_list	 ap;					\
	va_start(ap, fmt);				\
	vlog((level), (errstr), fmt, ap);		\
	va_end(ap);					\
} while (0)

void
log_warn(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_WARN, strerror(errno));
}

void
log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_WARN, NULL);
}

void
log_error(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_ERROR, NULL);
}

void
log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_INFO, NULL);
}

void
log_debug(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_DEBUG, NULL);
}

void
fatal(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_ERROR, strerror(errno));
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_LEVEL_ERROR, NULL);
	exit(1);
}
