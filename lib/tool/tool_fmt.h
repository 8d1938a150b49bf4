/*
 * tool_fmt.h -- how the tools print: kubectl's tables (columns padded
 * by three spaces, "<none>" for an empty cell, text from the API made
 * safe for a terminal) and the JSON or YAML documents of -o json|yaml.
 */

#ifndef TOOL_FMT_H
#define TOOL_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/buf.h"

#define TOOL_COLS_MAX	16

/* A table being filled; each cell a copy, escaped for the terminal. */
struct tool_table {
	size_t		 ncols;
	size_t		 nrows;		/* the header is row 0 */
	char		**cells;	/* nrows * ncols */
	size_t		 width[TOOL_COLS_MAX]; /* the widest cell of each */
};

/* A table with the header of ncols cells, names. */
void	tool_table_init(struct tool_table *tb, size_t ncols,
	    const char *const *names);
/* Add a row of ncols cells; NULL or "" prints as "<none>". */
void	tool_table_add(struct tool_table *tb, const char *const *cells);
/* Print every row to f, then drop them (the widths stay, for -w). */
void	tool_table_flush(struct tool_table *tb, FILE *f, int header);
void	tool_table_free(struct tool_table *tb);

/* A document being written, JSON or YAML. */
struct tool_doc {
	struct buf	 b;
	int		 yaml;		/* YAML, else JSON */
	int		 depth;		/* objects open */
	int		 first;		/* no member written yet at depth */
	int		 in_list;	/* the next object is an item */
};

/*
 * Start a document of kind with an items list (-o json|yaml), or, with
 * kind NULL, a lone object (one line of JSON, -w -o json).
 */
void	tool_doc_begin(struct tool_doc *d, int yaml, const char *kind);
/* Open and close one item of the items list (or the lone object). */
void	tool_doc_item(struct tool_doc *d);
void	tool_doc_item_end(struct tool_doc *d);
/* A member of the open item: a string (NULL: null), a number, a bool. */
void	tool_doc_str(struct tool_doc *d, const char *key, const char *v);
void	tool_doc_int(struct tool_doc *d, const char *key, int64_t v,
	    int present);
void	tool_doc_bool(struct tool_doc *d, const char *key, int v,
	    int present);
/* A time (wall clock µs) as RFC 3339 with microseconds; 0 is null. */
void	tool_doc_time(struct tool_doc *d, const char *key, int64_t us);
/* Close the document and print it to f. */
void	tool_doc_end(struct tool_doc *d, FILE *f);

#define TOOL_API_VERSION	"leaderd.io/v1"	/* of the documents */

#endif /* TOOL_FMT_H */
