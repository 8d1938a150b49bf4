/*
 * base64.h -- standard base64 (RFC 4648 4, with padding) into bytes.
 */

#ifndef BASE64_H
#define BASE64_H

#include <stddef.h>

/*
 * Decode s as Go's encoding/json decodes a []byte: standard alphabet,
 * padding required, CR and LF skipped, anything else an error.  Returns
 * the data, NUL-terminated (the caller frees it), with its length in
 * *lenp, or NULL if s is not base64.
 */
char	*base64_decode(const char *s, size_t *lenp);

#endif /* BASE64_H */
