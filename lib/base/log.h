/*
 * log.h -- logging on stderr, OpenBSD style: log_warn appends strerror,
 * log_warnx does not; fatal/fatalx exit 1.  Text lines by default, JSON
 * lines with log_init(..., LOG_FORMAT_JSON).
 */

#ifndef LOG_H
#define LOG_H

#include <stdarg.h>
#include <stddef.h>

enum log_level { LOG_LEVEL_ERROR, LOG_LEVEL_WARN, LOG_LEVEL_INFO,
    LOG_LEVEL_DEBUG };
enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };

/* Set the level and format; callable again at any time (SIGHUP). */
void	log_init(enum log_level, enum log_format);
/* Parse "error", "warn", "info", "debug"; returns 0 or -1. */
int	log_level_parse(const char *, enum log_level *);
int	log_format_parse(const char *, enum log_format *);
const char *log_level_name(enum log_level);

void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_error(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...) __attribute__((format(printf, 1, 2),
	    noreturn));
void	fatalx(const char *, ...) __attribute__((format(printf, 1, 2),
	    noreturn));

#endif /* LOG_H */
