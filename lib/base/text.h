/*
 * text.h -- bytes from outside (a Lease holderIdentity, an API Status
 * message, a configured name) made safe to print: UTF-8 sequence
 * lengths, the body of a JSON string, and one-line terminal-safe text.
 * Pure and libc only: no allocation, no logging.
 */

#ifndef TEXT_H
#define TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Length of the well-formed UTF-8 sequence at s (1 to 4), or 0 if the
 * byte at s does not start one: a stray continuation byte, an overlong
 * form, a surrogate, past U+10FFFF, or cut short (as Go's
 * utf8.DecodeRuneInString).  s must hold at least one byte; a NUL ends
 * any sequence and is itself a sequence of length 1.
 */
size_t	text_utf8_len(const unsigned char *s);

/*
 * Write the body of a JSON string (no quotes) for the text at *s into
 * dst (len bytes, always NUL-terminated when len > 0): quote and
 * backslash escaped, control characters and DEL as \u00XX, bytes that
 * are not well-formed UTF-8 replaced by U+FFFD, one each, so the result
 * is valid JSON and valid UTF-8 whatever the input.  Stops at the end
 * of *s or when the next piece might not fit (a piece needs 7 bytes of
 * room); *s is advanced past what was written, so a caller can continue
 * into a fresh buffer.  Returns the length written.
 */
size_t	text_json_escape(char *dst, size_t len, const char **s);

/*
 * Copy s into dst (len bytes, always NUL-terminated when len > 0) so
 * that it prints on one line and sends a terminal nothing it would act
 * on: bytes below 0x20, DEL, C1 controls and bytes that are not
 * well-formed UTF-8 become "\xNN", a backslash becomes "\\", and the
 * characters that print as nothing or reorder the text (bidi controls,
 * zero-width and other invisible format characters) become "\uXXXX";
 * other well-formed UTF-8 is kept.  Stops at a character that would not
 * fit.  Returns the
 * length written.  Text log lines go through it; so does any text/plain
 * answer that carries data from the API (holderIdentity).
 */
size_t	text_escape(char *dst, size_t len, const char *s);

#define TEXT_INT_LEN	21	/* a 64-bit integer in decimal, sign and NUL */

/*
 * Write v in decimal into dst (TEXT_INT_LEN bytes), NUL-terminated, with
 * zeros in front to at least width digits (0 or 1: none; at most 20),
 * as printf's "%0*llu".  Returns the length, the NUL excluded.  The
 * numbers of the local API's answers are written with these, not with
 * printf: a musl printf costs a few microseconds per answer.
 */
size_t	text_u64(char *dst, uint64_t v, int width);
/* The same for a signed v, "-" first when negative (printf's "%lld"). */
size_t	text_i64(char *dst, int64_t v);

/*
 * Append printf-style text to the NUL-terminated string in buf (len
 * bytes, of which *used hold text), cut at the end of buf: *used never
 * reaches len, and buf stays NUL-terminated.  Nothing happens when len
 * is 0.  For messages built in a caller's fixed buffer (config errors,
 * the config dump, kubeconfig warnings).
 */
void	text_appendf(char *buf, size_t len, size_t *used, const char *fmt,
	    ...) __attribute__((format(printf, 4, 5)));
/*
 * The same for the plain string s, without printf (the local API's
 * headers, on every answer).
 */
void	text_append(char *buf, size_t len, size_t *used, const char *s);
void	text_vappendf(char *buf, size_t len, size_t *used, const char *fmt,
	    va_list ap) __attribute__((format(printf, 4, 0)));

#endif /* TEXT_H */
