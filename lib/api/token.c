/*
 * token.c -- one bearer token for every API client of the daemon, re-read
 * from its file like client-go's cached file token source
 * (ref/clientgo-leaderelection.md 6.1): a minute after the last read, or
 * after a 401, whichever client met it.  One object rather than one copy
 * per client, so that a kubelet rotation reaches the lock, the Events,
 * the watch and the label together, and a 401 on one of them refreshes
 * them all.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/token.h"
#include "base/clock.h"
#include "base/xmalloc.h"
#include "codec/apitime.h"
#include "codec/review.h"

#define TOKEN_MAX_AGE_MS	60000	/* re-read the token file this often */

struct token {
	char		*file;		/* re-read from this file, or NULL */
	char		*token;		/* current bearer token, or NULL */
	uint64_t	 token_ms;	/* when it was read, clock_raw_ms */
	int		 token_stale;	/* re-read before next request */
};

void
token_wipe_free(char *s)
{
	if (s != NULL) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

struct token *
token_new(const struct kube_creds *creds, char *err, size_t errlen)
{
	struct token	*t;

	t = xcalloc(1, sizeof(*t));
	if (creds->token_file != NULL) {
		t->file = xstrdup(creds->token_file);
		if ((t->token = creds_read_token(t->file, err,
		    errlen)) == NULL) {
			token_free(t);
			return NULL;
		}
		t->token_ms = clock_raw_ms();
	} else if (creds->token != NULL)
		t->token = xstrdup(creds->token);
	return t;
}

/*
 * Re-read the token file when it is a minute old or after a 401, as
 * client-go does; if that fails, keep the token we have ("Unable to
 * rotate token") and try again next time.
 */
static void
refresh_token(struct token *t)
{
	char		 err[256];
	char		*tok;
	uint64_t	 now_ms = clock_raw_ms();

	if (t->file == NULL)
		return;
	if (!t->token_stale && now_ms - t->token_ms < TOKEN_MAX_AGE_MS)
		return;
	if ((tok = creds_read_token(t->file, err, sizeof(err))) == NULL)
		return;
	token_wipe_free(t->token);
	t->token = tok;
	t->token_ms = now_ms;
	t->token_stale = 0;
}

const char *
token_get(struct token *t)
{
	refresh_token(t);
	return t->token;
}

void
token_stale(struct token *t)
{
	t->token_stale = 1;
}

void
token_describe(struct token *t, char *buf, size_t len)
{
	char		 when[APITIME_MICRO_LEN], src[600];
	int64_t		 exp, now_s = clock_wall_us() / 1000000;

	if (t->file != NULL)
		snprintf(src, sizeof(src), "the token file %s (read %llus ago)",
		    t->file, (unsigned long long)((clock_raw_ms() -
		    t->token_ms) / 1000));
	else if (t->token != NULL)
		snprintf(src, sizeof(src), "the kubeconfig's static token");
	else {
		snprintf(buf, len, "no bearer token is configured");
		return;
	}
	if (t->token == NULL || review_jwt_exp(t->token, &exp) == -1) {
		snprintf(buf, len, "%s, not a JWT with an expiry", src);
		return;
	}
	apitime_format_micro(exp * 1000000, when);
	memcpy(when + 19, "Z", 2);
	if (exp <= now_s)
		snprintf(buf, len, "%s, a JWT that expired at %s", src, when);
	else
		snprintf(buf, len, "%s, a JWT valid until %s: not expired, so "
		    "revoked, or its pod or secret is gone", src, when);
}

void
token_free(struct token *t)
{
	if (t == NULL)
		return;
	token_wipe_free(t->token);
	free(t->file);
	free(t);
}
