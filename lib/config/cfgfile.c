/*
 * cfgfile.c -- bounded, non-blocking opening of operator-supplied files
 * and a YAML nesting bound (see cfgfile.h).
 */

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "config/cfgfile.h"

/* Write "what path: reason" into err. */
static void
open_err(char *err, size_t errlen, const char *what, const char *path,
    const char *reason)
{
	if (errlen == 0)
		return;
	if (what != NULL)
		snprintf(err, errlen, "%s %s: %s", what, path, reason);
	else
		snprintf(err, errlen, "%s", reason);
}

int
cfgfile_open(const char *path, size_t max, const char *what, char *err,
    size_t errlen)
{
	struct stat	 st;
	char		 why[64];
	int		 fd, fl;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC)) == -1) {
		open_err(err, errlen, what, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1) {
		open_err(err, errlen, what, path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		open_err(err, errlen, what, path, "not a regular file");
		close(fd);
		return -1;
	}
	if ((unsigned long long)st.st_size > (unsigned long long)max) {
		if (what != NULL && errlen > 0)
			snprintf(err, errlen, "%s %s is larger than %zu bytes",
			    what, path, max);
		else {
			snprintf(why, sizeof(why), "file too large (over %zu "
			    "bytes)", max);
			open_err(err, errlen, what, path, why);
		}
		close(fd);
		return -1;
	}
	if ((fl = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1) {
		open_err(err, errlen, what, path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int
cfgfile_yaml_depth(FILE *f, int max, yaml_mark_t *mark)
{
	yaml_parser_t	 p;
	yaml_event_t	 ev;
	int		 depth = 0, rc = 0, done = 0;

	if (!yaml_parser_initialize(&p)) {
		rewind(f);
		return 0;
	}
	yaml_parser_set_input_file(&p, f);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev))
			break;
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (++depth > max) {
				*mark = ev.start_mark;
				rc = -1;
				done = 1;
			}
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	rewind(f);
	return rc;
}
