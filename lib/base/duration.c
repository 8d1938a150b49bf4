/*
 * duration.c -- Go-syntax durations to and from milliseconds.
 *
 * The grammar is Go's time.ParseDuration without the sign: one or more
 * "number unit" pairs, where a number is decimal digits with an
 * optional fraction ("1.5", ".5", "5.") and a unit is ns, us, µs, ms,
 * s, m or h.  "0" alone is zero.  Values are computed exactly in
 * nanoseconds (fractions of a nanosecond are dropped, as Go drops them),
 * bounded by Go's limit of 2^63 - 1 ns; duration_parse also wants a
 * whole number of milliseconds.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/duration.h"

#define NS_PER_MS	UINT64_C(1000000)
#define NS_MAX		UINT64_C(9223372036854775807)	/* Go's int64 limit */
#define FRAC_DIGITS	17	/* fraction digits kept; the rest are dropped */

/* A unit: its spelling and its length as m * 10^e nanoseconds. */
struct unit {
	const char	*name;
	uint64_t	 ns;
	uint64_t	 m;
	int		 e;
};

static const struct unit units[] = {
	{ "ns", 1, 1, 0 },
	{ "us", 1000, 1, 3 },
	{ "\xc2\xb5s", 1000, 1, 3 },	/* U+00B5 micro sign */
	{ "\xce\xbcs", 1000, 1, 3 },	/* U+03BC Greek small mu */
	{ "ms", 1000000, 1, 6 },
	{ "s", UINT64_C(1000000000), 1, 9 },
	{ "m", UINT64_C(60000000000), 6, 10 },
	{ "h", UINT64_C(3600000000000), 36, 11 },
};

static const uint64_t pow10_tab[] = {
	UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000),
	UINT64_C(10000), UINT64_C(100000), UINT64_C(1000000),
	UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000),
	UINT64_C(10000000000), UINT64_C(100000000000),
	UINT64_C(1000000000000), UINT64_C(10000000000000),
	UINT64_C(100000000000000), UINT64_C(1000000000000000),
	UINT64_C(10000000000000000), UINT64_C(100000000000000000),
};

static int
isdigit_c(char ch)
{
	return ch >= '0' && ch <= '9';
}

/*
 * The nanoseconds in f / 10^n units of u (0 <= f < 10^n, n <= 17),
 * rounded down.  With u = m * 10^e this is exact in 64 bits.
 */
static uint64_t
frac_ns(uint64_t f, int n, const struct unit *u)
{
	uint64_t	 hi, lo, d;

	if (n == 0)
		return 0;
	if (u->e >= n)
		return f * u->m * pow10_tab[u->e - n];
	d = pow10_tab[n - u->e];
	hi = f / d;
	lo = f % d;
	return hi * u->m + lo * u->m / d;
}

int
duration_parse_ns(const char *s, uint64_t *ns, char *err, size_t errlen)
{
	const struct unit	*u;
	const char		*p, *q;
	uint64_t		 total = 0, v, f, add;
	size_t			 i, ulen;
	int			 n, digits;

	if (s == NULL || *s == '\0') {
		snprintf(err, errlen, "empty duration; write a value with a "
		    "unit, such as 15s");
		return -1;
	}
	if (*s == '-' || *s == '+') {
		snprintf(err, errlen, "invalid duration \"%s\": a sign is not "
		    "allowed; write a positive value such as 15s", s);
		return -1;
	}
	if (strcmp(s, "0") == 0) {
		*ns = 0;
		return 0;
	}
	p = s;
	while (*p != '\0') {
		/* The integer part. */
		v = 0;
		digits = 0;
		for (; isdigit_c(*p); p++, digits++) {
			if (v > (NS_MAX - (uint64_t)(*p - '0')) / 10)
				goto range;
			v = v * 10 + (uint64_t)(*p - '0');
		}
		/* The fraction, of which FRAC_DIGITS digits are kept. */
		f = 0;
		n = 0;
		if (*p == '.') {
			for (p++; isdigit_c(*p); p++, digits++) {
				if (n < FRAC_DIGITS) {
					f = f * 10 + (uint64_t)(*p - '0');
					n++;
				}
			}
		}
		if (digits == 0) {
			snprintf(err, errlen, "invalid duration \"%s\": "
			    "expected a number at \"%s\"", s, p);
			return -1;
		}
		/* The unit runs to the next digit or '.'. */
		for (q = p; *q != '\0' && *q != '.' && !isdigit_c(*q); q++)
			;
		ulen = (size_t)(q - p);
		if (ulen == 0) {
			snprintf(err, errlen, "invalid duration \"%s\": "
			    "missing unit; add a unit such as s or ms", s);
			return -1;
		}
		u = NULL;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (strlen(units[i].name) == ulen &&
			    memcmp(units[i].name, p, ulen) == 0) {
				u = &units[i];
				break;
			}
		}
		if (u == NULL) {
			snprintf(err, errlen, "invalid duration \"%s\": "
			    "unknown unit \"%.*s\"; use h, m, s, ms, us or ns",
			    s, (int)ulen, p);
			return -1;
		}
		p = q;
		if (v > NS_MAX / u->ns)
			goto range;
		add = v * u->ns;
		if (add > NS_MAX - frac_ns(f, n, u))
			goto range;
		add += frac_ns(f, n, u);
		if (total > NS_MAX - add)
			goto range;
		total += add;
	}
	*ns = total;
	return 0;
range:
	snprintf(err, errlen, "invalid duration \"%s\": out of range "
	    "(at most 2562047h)", s);
	return -1;
}

int
duration_parse(const char *s, uint64_t *ms, char *err, size_t errlen)
{
	uint64_t	 ns;

	if (duration_parse_ns(s, &ns, err, errlen) == -1)
		return -1;
	if (ns % NS_PER_MS != 0) {
		snprintf(err, errlen, "invalid duration \"%s\": not a whole "
		    "number of milliseconds", s);
		return -1;
	}
	*ms = ns / NS_PER_MS;
	return 0;
}

void
duration_format(uint64_t ms, char *buf, size_t len)
{
	uint64_t	 h, m, s, frac;
	char		 fbuf[8];
	int		 digits, off = 0;

	if (len == 0)
		return;
	if (ms < 1000) {
		snprintf(buf, len, "%" PRIu64 "%s", ms, ms == 0 ? "s" : "ms");
		return;
	}
	h = ms / 3600000;
	m = ms / 60000 % 60;
	s = ms / 1000 % 60;
	frac = ms % 1000;
	fbuf[0] = '\0';
	if (frac != 0) {
		/* Go drops the fraction's trailing zeros. */
		for (digits = 3; frac % 10 == 0; digits--)
			frac /= 10;
		snprintf(fbuf, sizeof(fbuf), ".%0*" PRIu64, digits, frac);
	}
	if (h > 0)
		off = snprintf(buf, len, "%" PRIu64 "h", h);
	if (h > 0 || m > 0) {
		if (off >= 0 && (size_t)off < len)
			off += snprintf(buf + off, len - (size_t)off,
			    "%" PRIu64 "m", m);
	}
	if (off >= 0 && (size_t)off < len)
		snprintf(buf + off, len - (size_t)off, "%" PRIu64 "%ss", s,
		    fbuf);
}
