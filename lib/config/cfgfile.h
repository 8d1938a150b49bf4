/*
 * cfgfile.h -- opening the files an operator hands leaderd (the config,
 * the kubeconfig, credential files) so that a wrong kind of file cannot
 * hang or slow the daemon: a FIFO, a device or a huge file is refused
 * before it is read, and YAML nesting is bounded before libyaml builds
 * a document (its scanner is quadratic in flow nesting depth).
 *
 * Pure apart from the file system: never logs; errors go into the
 * caller's buffer.
 */

#ifndef CFGFILE_H
#define CFGFILE_H

#include <stddef.h>
#include <stdio.h>

#include <yaml.h>

#define CFGFILE_MAX		(1024 * 1024)	/* config and kubeconfig size cap */
#define CFGFILE_YAML_DEPTH	64		/* deepest YAML nesting accepted */

/*
 * Open path for reading without blocking on it: O_NONBLOCK so a FIFO or
 * a device cannot stall open(), then fstat, then require a regular file
 * of at most max bytes, then clear O_NONBLOCK.  what names the file in
 * errors ("token file"); err gets "what path: reason" (or, when what is
 * NULL, just the reason).  Returns the descriptor (close-on-exec), or -1.
 */
int	cfgfile_open(const char *path, size_t max, const char *what, char *err,
	    size_t errlen);

/*
 * Walk the YAML stream in f with libyaml's event parser and refuse
 * nesting (mappings and sequences, block or flow) deeper than max
 * levels.  The walk stops at the first node that is too deep, so the
 * cost stays linear.  On a too-deep node returns -1 with *mark set to
 * where it starts (0-based line and column); otherwise 0 (a syntax
 * error is left for the real load to report).  f is rewound either way.
 */
int	cfgfile_yaml_depth(FILE *f, int max, yaml_mark_t *mark);

/*
 * Whether n is a YAML null: a plain scalar "", "~", "null", "Null" or
 * "NULL".  A NULL n is not.
 */
int	cfgfile_yaml_null(const yaml_node_t *n);

/*
 * Describe the failure of parser p, which read the open file f: sets
 * *line and *col (1-based; a reader error, which libyaml gives as a byte
 * offset, is turned into a line and column) and writes "YAML syntax
 * error: PROBLEM (CONTEXT at line N)" into msg, with a hint when the
 * file is not UTF-8 or is indented with a tab.  f is rewound and read.
 */
void	cfgfile_yaml_error(const yaml_parser_t *p, FILE *f, int *line,
	    int *col, char *msg, size_t msglen);

#endif /* CFGFILE_H */
