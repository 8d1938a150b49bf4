/*
 * codec_int.h -- what the files of codec/ share, and nothing outside
 * codec/ may include: jansson (no json_t leaves the folder), its set-up,
 * the JSON helpers of lease.c that apiobj.c and legacy.c use too, and
 * the head of a watch event that apiobj.c and leaseview.c both read.
 */

#ifndef CODEC_INT_H
#define CODEC_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "codec/apiobj.h"

#define LEASE_API_VERSION	"coordination.k8s.io/v1"

/*
 * Make jansson allocate through xmalloc; call it before building or
 * parsing a document.  Idempotent.
 */
void	 codec_json_init(void);

/*
 * Serialise root compactly, in insertion order, and free it.  Returns a
 * string the caller frees; never NULL.
 */
char	*codec_json_dump(json_t *root);

/*
 * A JSON string of s (new reference).  Invalid UTF-8 is replaced by
 * U+FFFD, as Go's encoding/json does, so that encoding never fails.
 */
json_t	*codec_jstring(const char *s);

/* A MicroTime of us (wall clock, µs), or null for 0 (new reference). */
json_t	*codec_jtime(int64_t us);

/*
 * The string obj.key: 1 with *s and its length *n (jansson's, valid while
 * obj is), 0 when absent or null, -1 with err when not a string (path
 * names it: "spec.binaryVersion").
 */
int	 codec_string_at(json_t *obj, const char *key, const char *path,
	    const char **s, size_t *n, char *err, size_t errlen);

/*
 * Copy the string obj.key into buf of size len; path names it in err
 * ("metadata.uid").  Absent or null leaves buf untouched.  A value that
 * is not a string or does not fit is an error: -1 with err.
 */
int	 codec_get_string(json_t *obj, const char *key, const char *path,
	    char *buf, size_t len, char *err, size_t errlen);

/*
 * Parse the API server's answer buf as JSON, duplicate keys refused: at
 * most max bytes (0: no bound), no NUL byte.  Returns the root (new
 * reference), or NULL with err.
 */
json_t	*codec_load(const char *buf, size_t len, size_t max, char *err,
	    size_t errlen);

/*
 * An optional RFC 3339 time obj.key into *out (wall clock, µs); absent
 * or null reads as 0.  Anything else is an error: -1 with err naming
 * path.
 */
int	 codec_get_time(json_t *obj, const char *key, const char *path,
	    int64_t *out, char *err, size_t errlen);

/*
 * A watch event's head (apiobj.c): its type into *type and its object,
 * borrowed from root, into *obj.  Returns 0, or -1 with err when either
 * is missing or the type is none of the API's five.
 */
int	 codec_watch_head(json_t *root, enum apiobj_watch_type *type,
	    json_t **obj, char *err, size_t errlen);

#endif /* CODEC_INT_H */
