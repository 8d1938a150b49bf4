/*
 * base64.c -- standard base64 decoding, for the *-data keys of a
 * kubeconfig file.
 */

#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/xmalloc.h"

static int	 b64_value(int);

static int
b64_value(int ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

/*
 * Standard base64 with padding, as Go's encoding/json decodes []byte:
 * CR and LF are skipped, anything else is an error.
 */
char *
base64_decode(const char *s, size_t *lenp)
{
	unsigned char *out, q[4];
	size_t n = 0, nq = 0;
	int pad = 0, done = 0, v;

	out = xmalloc(strlen(s) / 4 * 3 + 4);
	for (; *s != '\0'; s++) {
		if (*s == '\r' || *s == '\n')
			continue;
		if (done)
			goto bad;
		if (*s == '=') {
			if (nq < 2)
				goto bad;
			pad++;
			v = 0;
		} else if (pad > 0 || (v = b64_value((unsigned char)*s)) == -1)
			goto bad;
		q[nq++] = (unsigned char)v;
		if (nq < 4)
			continue;
		out[n++] = (unsigned char)(q[0] << 2 | q[1] >> 4);
		if (pad < 2)
			out[n++] = (unsigned char)(q[1] << 4 | q[2] >> 2);
		if (pad < 1)
			out[n++] = (unsigned char)(q[2] << 6 | q[3]);
		nq = 0;
		done = pad > 0;
	}
	if (nq != 0)
		goto bad;
	out[n] = '\0';
	*lenp = n;
	return (char *)out;
 bad:
	free(out);
	return NULL;
}
