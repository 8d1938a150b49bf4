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

/*
 * The length of the well-formed UTF-8 sequence at s (1 to 4), or 0 if
 * the byte at s does not start one (a stray continuation byte, an
 * overlong form, a surrogate, past U+10FFFF, or cut short).
 */
static size_t
utf8_len(const unsigned char *s)
{
	size_t	 n, i;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* also stops at the NUL */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Append s to the buffer as the body of a JSON string: quote, backslash,
 * control characters and DEL escaped, bytes that are not well-formed
 * UTF-8 replaced by U+FFFD, one each.
 */
static size_t
json_escape(char *dst, size_t len, size_t off, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t		 n;

	while (*p != '\0' && off + 7 < len) {
		if (*p == '"' || *p == '\\') {
			dst[off++] = '\\';
			dst[off++] = (char)*p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			dst[off++] = '\\';
			dst[off++] = 'u';
			dst[off++] = '0';
			dst[off++] = '0';
			dst[off++] = hex[*p >> 4];
			dst[off++] = hex[*p & 0xf];
			p++;
		} else if ((n = utf8_len(p)) == 0) {
			memcpy(dst + off, "\xef\xbf\xbd", 3);
			off += 3;
			p++;
		} else {
			memcpy(dst + off, p, n);
			off += n;
			p += n;
		}
	}
	dst[off] = '\0';
	return off;
}

size_t
log_text_escape(char *dst, size_t len, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t		 off = 0, n, i;

	if (len == 0)
		return 0;
	while (*p != '\0' && off + 5 < len) {
		n = utf8_len(p);
		/* C1 controls (U+0080 to U+009F) are escaped like C0. */
		if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
			n = 0;
		if (n == 1 && *p >= 0x20 && *p != 0x7f && *p != '\\') {
			dst[off++] = (char)*p++;
			continue;
		}
		if (n > 1) {
			for (i = 0; i < n; i++)
				dst[off++] = (char)*p++;
			continue;
		}
		if (*p == '\\') {
			dst[off++] = '\\';
			dst[off++] = '\\';
			p++;
			continue;
		}
		dst[off++] = '\\';
		dst[off++] = 'x';
		dst[off++] = hex[*p >> 4];
		dst[off++] = hex[*p & 0xf];
		p++;
	}
	dst[off] = '\0';
	return off;
}

static void
vlog(enum log_level level, const char *errstr, const char *fmt, va_list ap)
{
	char		 msg[2048], line[8256], ts[40];
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
		n = json_escape(line, sizeof(line), n, msg);
		fprintf(stderr, "%s\"}\n", line);
	} else {
		/* Lease and API text must not forge lines or drive a tty. */
		log_text_escape(line, sizeof(line), msg);
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
