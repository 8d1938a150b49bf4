/*
 * tool_fmt.c -- kubectl's tables and the tools' JSON and YAML
 * documents.  The documents are written here, by hand, from plain
 * values: JSON strings escaped by buf_json_str, YAML as block mappings
 * whose strings are JSON's double-quoted scalars (valid YAML), so both
 * parse to the same values.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/text.h"
#include "base/xmalloc.h"
#include "codec/apitime.h"
#include "tool/tool_fmt.h"

#define NONE	"<none>"

void
tool_table_init(struct tool_table *tb, size_t ncols, const char *const *names)
{
	memset(tb, 0, sizeof(*tb));
	tb->ncols = ncols < TOOL_COLS_MAX ? ncols : TOOL_COLS_MAX;
	tool_table_add(tb, names);
}

void
tool_table_add(struct tool_table *tb, const char *const *cells)
{
	char	 safe[1200];
	size_t	 i, n;

	tb->cells = xrealloc(tb->cells, (tb->nrows + 1) * tb->ncols *
	    sizeof(char *));
	for (i = 0; i < tb->ncols; i++) {
		text_escape(safe, sizeof(safe), cells[i] != NULL &&
		    cells[i][0] != '\0' ? cells[i] : NONE);
		tb->cells[tb->nrows * tb->ncols + i] = xstrdup(safe);
		if ((n = strlen(safe)) > tb->width[i])
			tb->width[i] = n;
	}
	tb->nrows++;
}

void
tool_table_flush(struct tool_table *tb, FILE *f, int header)
{
	size_t	 r, i;
	char	*c;

	for (r = header ? 0 : 1; r < tb->nrows; r++) {
		for (i = 0; i < tb->ncols; i++) {
			c = tb->cells[r * tb->ncols + i];
			if (i + 1 < tb->ncols)
				fprintf(f, "%-*s   ", (int)tb->width[i], c);
			else
				fprintf(f, "%s\n", c);
		}
	}
	fflush(f);
	/* Keep the header (row 0) for the widths; drop the rest. */
	for (r = 1; r < tb->nrows; r++)
		for (i = 0; i < tb->ncols; i++)
			free(tb->cells[r * tb->ncols + i]);
	tb->nrows = tb->nrows > 0 ? 1 : 0;
}

void
tool_table_free(struct tool_table *tb)
{
	size_t	 i;

	for (i = 0; i < tb->nrows * tb->ncols; i++)
		free(tb->cells[i]);
	free(tb->cells);
	memset(tb, 0, sizeof(*tb));
}

void
tool_doc_begin(struct tool_doc *d, int yaml, const char *kind)
{
	memset(d, 0, sizeof(*d));
	d->yaml = yaml;
	if (kind == NULL)
		return;
	if (yaml)
		buf_printf(&d->b, "apiVersion: %s\nkind: %s\nitems:\n",
		    TOOL_API_VERSION, kind);
	else
		buf_printf(&d->b, "{\n  \"apiVersion\": \"%s\",\n  \"kind\": "
		    "\"%s\",\n  \"items\": [", TOOL_API_VERSION, kind);
	d->in_list = 1;
	d->first = 1;
}

void
tool_doc_item(struct tool_doc *d)
{
	if (!d->yaml) {
		if (d->in_list)
			buf_printf(&d->b, "%s\n    {", d->first ? "" : ",");
		else
			buf_printf(&d->b, "{");
	}
	d->first = 1;
	d->depth = 1;
}

void
tool_doc_item_end(struct tool_doc *d)
{
	if (!d->yaml)
		buf_printf(&d->b, d->in_list ? "\n    }" : "}");
	d->depth = 0;
	d->first = 0;
}

/* The key of the next member, in either syntax. */
static void
doc_key(struct tool_doc *d, const char *key)
{
	if (d->yaml)
		buf_printf(&d->b, "%s%s: ", !d->in_list ? "" :
		    d->first ? "- " : "  ", key);
	else if (d->in_list)
		buf_printf(&d->b, "%s\n      \"%s\": ", d->first ? "" : ",",
		    key);
	else
		buf_printf(&d->b, "%s\"%s\":", d->first ? "" : ",", key);
	d->first = 0;
}

static void
doc_end_member(struct tool_doc *d)
{
	if (d->yaml)
		buf_printf(&d->b, "\n");
}

void
tool_doc_str(struct tool_doc *d, const char *key, const char *v)
{
	doc_key(d, key);
	if (v == NULL)
		buf_printf(&d->b, "null");
	else
		buf_json_str(&d->b, v);
	doc_end_member(d);
}

void
tool_doc_int(struct tool_doc *d, const char *key, int64_t v, int present)
{
	doc_key(d, key);
	if (present)
		buf_printf(&d->b, "%lld", (long long)v);
	else
		buf_printf(&d->b, "null");
	doc_end_member(d);
}

void
tool_doc_bool(struct tool_doc *d, const char *key, int v, int present)
{
	doc_key(d, key);
	buf_printf(&d->b, "%s", !present ? "null" : v ? "true" : "false");
	doc_end_member(d);
}

void
tool_doc_time(struct tool_doc *d, const char *key, int64_t us)
{
	char	 t[40];

	if (us == 0) {
		tool_doc_str(d, key, NULL);
		return;
	}
	apitime_format_micro(us, t);
	tool_doc_str(d, key, t);
}

void
tool_doc_end(struct tool_doc *d, FILE *f)
{
	if (d->in_list) {
		if (d->yaml && d->b.len > 0 &&
		    d->b.data[d->b.len - 1] == '\n' &&
		    strcmp(d->b.data + d->b.len - 7, "items:\n") == 0) {
			d->b.len -= 1;
			buf_printf(&d->b, " []\n");
		} else if (!d->yaml)
			buf_printf(&d->b, "%s]\n}\n", d->first ? "" : "\n  ");
	} else if (!d->yaml)
		buf_printf(&d->b, "\n");
	if (d->b.data != NULL)
		fwrite(d->b.data, 1, d->b.len, f);
	fflush(f);
	buf_free(&d->b);
}
