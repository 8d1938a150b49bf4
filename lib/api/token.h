/*
 * token.h -- the bearer token of one daemon, shared by all its API
 * clients (the lock's, the Events', the watch's and the label's), so
 * that a rotated token reaches every one of them at once.
 *
 * The token comes from the credentials' token file, re-read like
 * client-go's cached file token source (ref/clientgo-leaderelection.md
 * 6.1): when the copy is a minute old, or before the next request after
 * a 401 marked it stale.  A static token (the kubeconfig's token:) never
 * changes.  token.c never logs; the token never appears in an error.
 *
 * Ownership: the daemon makes the one struct token and frees it after
 * every client; clients borrow it (kube_new).
 */

#ifndef TOKEN_H
#define TOKEN_H

#include <stddef.h>

#include "config/creds.h"

struct token;

/*
 * The token of creds (borrowed): its token file, read now, else its
 * static token, else none.  Returns NULL with err when the token file
 * cannot be read.
 */
struct token	*token_new(const struct kube_creds *creds, char *err,
		    size_t errlen);

/*
 * The token to send now, NULL or "" for none.  Re-reads the token file
 * first when the copy is a minute old or stale; if that fails, the token
 * we have is kept ("Unable to rotate token") and the next call tries
 * again.  Borrowed until the next token_get or token_free.
 */
const char	*token_get(struct token *t);

/* Re-read the token file at the next token_get (after a 401). */
void		 token_stale(struct token *t);

/*
 * Where the token comes from and, for a JWT, its expiry (the "exp"
 * claim, read without verifying the token), for a 401's message: "the
 * token file PATH (read 12s ago), a JWT valid until
 * 2026-12-05T08:00:00Z: not expired, so revoked, ...".  Never the token.
 */
void		 token_describe(struct token *t, char *buf, size_t len);

/* Scrub and free t (NULL: nothing).  Every client of t must be gone. */
void		 token_free(struct token *t);

/* Scrub the secret string s (a token, a key) and free it; NULL is fine. */
void		 token_wipe_free(char *s);

#endif /* TOKEN_H */
