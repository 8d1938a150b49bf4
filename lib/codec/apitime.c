/*
 * apitime.c -- the Kubernetes API's times: MicroTime and RFC 3339
 * (ref/clientgo-leaderelection.md 4.3), on a proleptic Gregorian
 * calendar of our own, so no result depends on TZ or on timegm.
 */

#include <stdint.h>
#include <string.h>

#include "codec/apitime.h"

#define US_PER_S		INT64_C(1000000)
#define S_PER_DAY		INT64_C(86400)

/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z in Unix seconds. */
#define SECS_MIN		INT64_C(-62167219200)
#define SECS_MAX		INT64_C(253402300799)

static int	 floor_div(int64_t, int64_t, int64_t *);
static int64_t	 days_from_civil(int64_t, unsigned, unsigned);
static void	 civil_from_days(int64_t, int64_t *, unsigned *, unsigned *);
static void	 put_digits(char *, unsigned, int);
static int	 digits(const char *, int, int *);

/* Floor division; returns the remainder in [0, b). */
static int
floor_div(int64_t a, int64_t b, int64_t *q)
{
	int64_t r;

	*q = a / b;
	r = a % b;
	if (r < 0) {
		r += b;
		(*q)--;
	}
	return (int)r;
}

/*
 * Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil).
 */
static int64_t
days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era, yoe, doy, doe;

	if (m <= 2)
		y--;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The inverse of days_from_civil. */
static void
civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

void
apitime_format_micro(int64_t us, char *buf)
{
	int64_t secs, days, y;
	unsigned m, d;
	int frac, sod;

	/*
	 * Go would format years outside 0000..9999 with more or fewer
	 * digits; such times do not fit the buffer or RFC 3339, so they are
	 * clamped to the representable range.
	 */
	frac = floor_div(us, US_PER_S, &secs);
	if (secs < SECS_MIN) {
		secs = SECS_MIN;
		frac = 0;
	} else if (secs > SECS_MAX) {
		secs = SECS_MAX;
		frac = 999999;
	}
	sod = floor_div(secs, S_PER_DAY, &days);
	civil_from_days(days, &y, &m, &d);
	put_digits(buf, (unsigned)y, 4);
	buf[4] = '-';
	put_digits(buf + 5, m, 2);
	buf[7] = '-';
	put_digits(buf + 8, d, 2);
	buf[10] = 'T';
	put_digits(buf + 11, (unsigned)sod / 3600, 2);
	buf[13] = ':';
	put_digits(buf + 14, (unsigned)sod / 60 % 60, 2);
	buf[16] = ':';
	put_digits(buf + 17, (unsigned)sod % 60, 2);
	buf[19] = '.';
	put_digits(buf + 20, (unsigned)frac, 6);
	memcpy(buf + 26, "Z", 2);
}

/* Write v as exactly n decimal digits, zero-padded. */
static void
put_digits(char *buf, unsigned v, int n)
{
	while (n-- > 0) {
		buf[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

/* Read exactly n decimal digits at s into *v. */
static int
digits(const char *s, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

int
apitime_parse(const char *s, int64_t *us)
{
	static const unsigned char mdays[] =
	    { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, sec, oh, om, n, leap;
	int64_t frac = 0, scale = 100000, secs, off = 0;

	/* YYYY-MM-DDTHH:MM:SS, with the separators Go's RFC3339 demands. */
	if (digits(s, 4, &y) == -1 || s[4] != '-' ||
	    digits(s + 5, 2, &mo) == -1 || s[7] != '-' ||
	    digits(s + 8, 2, &d) == -1 || s[10] != 'T' ||
	    digits(s + 11, 2, &h) == -1 || s[13] != ':' ||
	    digits(s + 14, 2, &mi) == -1 || s[16] != ':' ||
	    digits(s + 17, 2, &sec) == -1)
		return -1;
	s += 19;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] ||
	    h > 23 || mi > 59 || sec > 59)
		return -1;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo == 2 && d == 29 && !leap)
		return -1;

	/* One to nine fractional digits; beyond µs they are truncated. */
	if (*s == '.') {
		s++;
		for (n = 0; s[n] >= '0' && s[n] <= '9'; n++) {
			if (n >= 9)
				return -1;
			frac += (s[n] - '0') * scale;
			scale /= 10;
		}
		if (n == 0)
			return -1;
		s += n;
	}

	if (*s == 'Z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		if (digits(s + 1, 2, &oh) == -1 || s[3] != ':' ||
		    digits(s + 4, 2, &om) == -1 || oh > 23 || om > 59)
			return -1;
		off = (int64_t)oh * 3600 + om * 60;
		if (*s == '-')
			off = -off;
		s += 6;
	} else
		return -1;
	if (*s != '\0')
		return -1;

	secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * S_PER_DAY +
	    h * 3600 + mi * 60 + sec - off;
	/*
	 * An offset can carry a time out of 0000..9999 UTC, which no
	 * MicroTime can write back (Go refuses to marshal it too).
	 */
	if (secs < SECS_MIN || secs > SECS_MAX)
		return -1;
	*us = secs * US_PER_S + frac;
	return 0;
}

int64_t
apitime_seconds(int64_t us)
{
	int64_t s;

	floor_div(us, US_PER_S, &s);
	return s;
}
