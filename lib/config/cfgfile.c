/*
 * cfgfile.c -- bounded, non-blocking opening of operator-supplied files,
 * a YAML nesting bound, and the YAML helpers the config and kubeconfig
 * loaders share (see cfgfile.h).
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

int
cfgfile_yaml_null(const yaml_node_t *n)
{
	const char	*v;

	if (n == NULL || n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	v = (const char *)n->data.scalar.value;
	return (v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
	    strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0);
}

/*
 * The byte at line and column (0-based, counting bytes) of f, or -1.
 * Also sets *line and *col from a byte offset when off is not -1.
 */
static int
byte_at(FILE *f, long off, size_t *line, size_t *col)
{
	size_t	 l = 0, c = 0;
	long	 i;
	int	 ch;

	rewind(f);
	for (i = 0; (ch = getc(f)) != EOF; i++) {
		if (off >= 0 ? i == off : (l == *line && c == *col))
			break;
		if (ch == '\n') {
			l++;
			c = 0;
		} else
			c++;
	}
	if (off >= 0) {
		*line = l;
		*col = c;
	}
	return ch;
}

void
cfgfile_yaml_error(const yaml_parser_t *p, FILE *f, int *line, int *col,
    char *msg, size_t msglen)
{
	size_t		 l, c;
	const char	*hint = "";

	l = p->problem_mark.line;
	c = p->problem_mark.column;
	if (p->error == YAML_READER_ERROR) {
		/* The reader knows a byte offset, not a line. */
		byte_at(f, (long)p->problem_offset, &l, &c);
		hint = "; the file must be UTF-8";
	} else if (byte_at(f, -1, &l, &c) == '\t')
		hint = "; YAML is indented with spaces, not tabs";
	*line = (int)l + 1;
	*col = (int)c + 1;
	if (p->context != NULL && p->error != YAML_READER_ERROR)
		snprintf(msg, msglen, "YAML syntax error: %s (%s at line %d)%s",
		    p->problem ? p->problem : "error", p->context,
		    (int)p->context_mark.line + 1, hint);
	else
		snprintf(msg, msglen, "YAML syntax error: %s%s",
		    p->problem ? p->problem : "error", hint);
}
