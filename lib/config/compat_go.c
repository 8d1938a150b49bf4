/*
 * compat_go.c -- Go's value grammar, as the peers written in Go read
 * their flags' values: strconv's ParseBool, ParseInt and ParseUint with
 * their errors and %q, time.ParseDuration with its sign, and the checks
 * of klog's flag.Values (its level, severity, vmodule and
 * log_backtrace_at).  The peer's own flag set, usage and defaults stay
 * in its compat_PEER.c (compat_int.h).
 */

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/duration.h"
#include "base/text.h"
#include "config/compat_int.h"

/*
 * s as Go's %q (strconv.Quote) writes it, into buf: quotes around,
 * \" and \\, \a \b \f \n \r \t \v, other ASCII controls and bytes that
 * are not UTF-8 as \xNN, UTF-8 kept (Go escapes the few non-printable
 * code points above U+007F too).  Cut short rather than overflow.
 */
const char *
compat_go_quote(const char *s, char *buf, size_t len)
{
	static const char	 ctl[] = "\a\b\f\n\r\t\v";
	static const char	 ctl_esc[] = "abfnrtv";
	const unsigned char	*p = (const unsigned char *)s;
	const char		*e;
	char			 piece[8];
	size_t			 o = 0, n;

	if (len < 3) {
		buf[0] = '\0';
		return buf;
	}
	buf[o++] = '"';
	for (; *p != '\0'; p += n) {
		n = 1;
		if (*p == '"' || *p == '\\')
			snprintf(piece, sizeof(piece), "\\%c", *p);
		else if (*p >= 0x20 && *p < 0x7f)
			snprintf(piece, sizeof(piece), "%c", *p);
		else if (*p < 0x80 && (e = strchr(ctl, *p)) != NULL)
			snprintf(piece, sizeof(piece), "\\%c",
			    ctl_esc[e - ctl]);
		else if (*p >= 0x80 && (n = text_utf8_len(p)) > 0) {
			memcpy(piece, p, n);
			piece[n] = '\0';
		} else {
			n = 1;
			snprintf(piece, sizeof(piece), "\\x%02x", *p);
		}
		if (o + strlen(piece) + 2 > len)
			break;
		memcpy(buf + o, piece, strlen(piece));
		o += strlen(piece);
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

/* strconv.ParseBool. */
int
compat_go_parse_bool(const char *s, int *b)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true",
	    "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false",
	    "False" };
	size_t	 i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*b = 1;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*b = 0;
			return 0;
		}
	}
	return -1;
}

static int
lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* strconv's underscoreOK: "_" only between digits (base 0). */
static int
underscore_ok(const char *s)
{
	int	 saw = '^', hex = 0;
	size_t	 i = 0, n;

	if (s[0] == '-' || s[0] == '+')
		s++;
	n = strlen(s);
	if (n >= 2 && s[0] == '0' && (lower(s[1]) == 'b' ||
	    lower(s[1]) == 'o' || lower(s[1]) == 'x')) {
		i = 2;
		saw = '0';
		hex = lower(s[1]) == 'x';
	}
	for (; i < n; i++) {
		if ((s[i] >= '0' && s[i] <= '9') ||
		    (hex && lower(s[i]) >= 'a' && lower(s[i]) <= 'f')) {
			saw = '0';
			continue;
		}
		if (s[i] == '_') {
			if (saw != '0')
				return 0;
			saw = '_';
			continue;
		}
		if (saw == '_')
			return 0;
		saw = '!';
	}
	return saw != '_';
}

/*
 * strconv.ParseUint(s, base, bits) for base 10, or 0 (a 0b, 0o, 0x or
 * 0 prefix, and "_" between digits).  Errors in the order Go finds
 * them: a digit that is not one, or a value that overflows, whichever
 * comes first.
 */
static enum numerr
parse_uint(const char *s, int base, int bits, uint64_t *out)
{
	const char	*p = s;
	uint64_t	 n = 0, n1, max, cutoff;
	int		 base0 = base == 0, under = 0, d;

	if (*s == '\0')
		return NUM_SYNTAX;
	if (base0) {
		base = 10;
		if (p[0] == '0') {
			if (strlen(p) >= 3 && lower(p[1]) == 'b') {
				base = 2;
				p += 2;
			} else if (strlen(p) >= 3 && lower(p[1]) == 'o') {
				base = 8;
				p += 2;
			} else if (strlen(p) >= 3 && lower(p[1]) == 'x') {
				base = 16;
				p += 2;
			} else {
				base = 8;
				p++;
			}
		}
	}
	max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
	cutoff = UINT64_MAX / (uint64_t)base + 1;
	for (; *p != '\0'; p++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base0 && *p == '_') {
			under = 1;
			continue;
		} else if (lower(*p) >= 'a' && lower(*p) <= 'z')
			d = lower(*p) - 'a' + 10;
		else
			return NUM_SYNTAX;
		if (d >= base)
			return NUM_SYNTAX;
		if (n >= cutoff)
			return NUM_RANGE;
		n *= (uint64_t)base;
		n1 = n + (uint64_t)d;
		if (n1 < n || n1 > max)
			return NUM_RANGE;
		n = n1;
	}
	if (under && !underscore_ok(s))
		return NUM_SYNTAX;
	*out = n;
	return NUM_OK;
}

/* strconv.ParseInt(s, 10, bits). */
enum numerr
compat_go_parse_int(const char *s, int bits, int64_t *out)
{
	uint64_t	 u, lim = UINT64_C(1) << (bits - 1);
	enum numerr	 r;
	int		 neg = 0;

	if (*s == '\0')
		return NUM_SYNTAX;
	if (*s == '+' || *s == '-') {
		neg = *s == '-';
		s++;
	}
	if ((r = parse_uint(s, 10, bits, &u)) != NUM_OK)
		return r;
	if ((!neg && u >= lim) || (neg && u > lim))
		return NUM_RANGE;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return NUM_OK;
}

/* The text of a strconv error, as Go's NumError prints it. */
static void
num_error(enum numerr r, const char *fn, const char *s, char *why,
    size_t len)
{
	char	 q[512];

	snprintf(why, len, "strconv.%s: parsing %s: %s", fn,
	    compat_go_quote(s, q, sizeof(q)), r == NUM_RANGE ?
	    "value out of range" : "invalid syntax");
}

/*
 * time.ParseDuration into signed nanoseconds.  leaderd's parser has the
 * grammar without the sign.
 */
int
compat_go_parse_duration(const char *s, int64_t *ns)
{
	uint64_t	 v;
	char		 why[256];
	int		 neg = 0;

	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	if (*s == '\0')
		return -1;
	if (duration_parse_ns(s, &v, why, sizeof(why)) == -1)
		return -1;
	*ns = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/*
 * Set: check v as flag f's Value would.  Returns 0, or -1 with what
 * Set returned (the text after "for flag -NAME: ") in why.
 */
int
compat_go_check(enum gf_type type, const char *v, char *why, size_t len)
{
	const char	*p, *comma, *eq, *colon;
	char		 num[64];
	uint64_t	 u;
	int64_t		 i;
	enum numerr	 r;
	size_t		 n;
	static const char *const sev[] = { "INFO", "WARNING", "ERROR",
	    "FATAL" };

	switch (type) {
	case GF_STRING:
	case GF_BOOL:		/* checked by the caller */
		return 0;
	case GF_DURATION:
		if (compat_go_parse_duration(v, &i) == -1) {
			snprintf(why, len, "parse error");
			return -1;
		}
		return 0;
	case GF_UINT64:
		if ((r = parse_uint(v, 0, 64, &u)) != NUM_OK) {
			snprintf(why, len, "%s", r == NUM_RANGE ?
			    "value out of range" : "parse error");
			return -1;
		}
		return 0;
	case GF_LEVEL:
		if ((r = compat_go_parse_int(v, 32, &i)) != NUM_OK) {
			num_error(r, "ParseInt", v, why, len);
			return -1;
		}
		return 0;
	case GF_SEVERITY:
		for (n = 0; n < sizeof(sev) / sizeof(sev[0]); n++)
			if (strlen(v) == strlen(sev[n]) &&
			    strncasecmp(v, sev[n], strlen(v)) == 0)
				return 0;
		if ((r = compat_go_parse_int(v, 32, &i)) != NUM_OK) {
			num_error(r, "ParseInt", v, why, len);
			return -1;
		}
		return 0;
	case GF_VMODULE:
		for (p = v; *p != '\0'; p = *comma == ',' ? comma + 1 : comma) {
			comma = p + strcspn(p, ",");
			if (comma == p)
				continue;	/* "a=1,,b=2", a trailing "," */
			eq = memchr(p, '=', (size_t)(comma - p));
			if (eq == NULL || eq == p || eq + 1 == comma ||
			    memchr(eq + 1, '=', (size_t)(comma - eq - 1)) !=
			    NULL || (size_t)(comma - eq) > sizeof(num)) {
				snprintf(why, len, "syntax error: expect "
				    "comma-separated list of filename=N");
				return -1;
			}
			snprintf(num, sizeof(num), "%.*s",
			    (int)(comma - eq - 1), eq + 1);
			if (compat_go_parse_int(num, 32, &i) != NUM_OK) {
				snprintf(why, len, "syntax error: expect "
				    "comma-separated list of filename=N");
				return -1;
			}
			if (i < 0) {
				snprintf(why, len, "negative value for vmodule "
				    "level");
				return -1;
			}
		}
		return 0;
	case GF_TRACE:
		colon = strchr(v, ':');
		if (colon == NULL || strchr(colon + 1, ':') != NULL ||
		    memchr(v, '.', (size_t)(colon - v)) == NULL ||
		    compat_go_parse_int(colon + 1, 64, &i) != NUM_OK) {
			snprintf(why, len, "syntax error: expect file.go:234");
			return -1;
		}
		if (i <= 0) {
			snprintf(why, len, "negative or zero value for level");
			return -1;
		}
		return 0;
	}
	return 0;
}
