/*
 * testutil.h -- small helpers shared by the unit tests: read a file,
 * compare output with a golden file, list the cases in a directory.
 *
 * Everything is static inline so that a test includes what it uses and
 * nothing more.  Set UPDATE_GOLDEN=1 in the environment to rewrite the
 * golden files from the actual output instead of comparing (review the
 * result with git diff before committing it).
 */

#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Read the whole file at path.  Returns a NUL-terminated buffer the
 * caller frees, with its length (without the NUL) in *len if len is not
 * NULL; or NULL if the file cannot be read.
 */
static inline char *
read_file(const char *path, size_t *len)
{
	FILE	*f;
	char	*buf = NULL, *nbuf;
	size_t	 n = 0, cap = 0, r;

	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 8192;
			if ((nbuf = realloc(buf, cap + 1)) == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nbuf;
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len != NULL)
		*len = n;
	return buf;
}

/* Print line number ln of s (1-based) on stderr, marked with tag. */
static inline void
testutil_print_line(const char *tag, const char *s, int ln)
{
	const char	*end;

	for (; ln > 1 && s != NULL; ln--)
		if ((s = strchr(s, '\n')) != NULL)
			s++;
	if (s == NULL || *s == '\0') {
		fprintf(stderr, "  %s (end of text)\n", tag);
		return;
	}
	end = strchr(s, '\n');
	fprintf(stderr, "  %s %.*s\n", tag, end ? (int)(end - s) :
	    (int)strlen(s), s);
}

/*
 * Compare actual with the contents of the golden file at path.  Returns
 * 0 if they are the same; otherwise prints the first differing line of
 * each and the whole actual text on stderr and returns -1.  With
 * UPDATE_GOLDEN set, writes actual to path and returns 0.
 */
static inline int
expect_golden(const char *actual, const char *path)
{
	const char	*a, *e;
	char		*expected;
	FILE		*f;
	int		 ln = 1;

	if (getenv("UPDATE_GOLDEN") != NULL) {
		if ((f = fopen(path, "wb")) == NULL ||
		    fputs(actual, f) == EOF || fclose(f) == EOF) {
			fprintf(stderr, "%s: cannot write\n", path);
			return -1;
		}
		fprintf(stderr, "%s: updated\n", path);
		return 0;
	}
	if ((expected = read_file(path, NULL)) == NULL) {
		fprintf(stderr, "%s: cannot read the golden file; actual "
		    "output:\n%s\n", path, actual);
		return -1;
	}
	if (strcmp(expected, actual) == 0) {
		free(expected);
		return 0;
	}
	for (a = actual, e = expected; *a != '\0' && *a == *e; a++, e++)
		if (*a == '\n')
			ln++;
	fprintf(stderr, "%s: output differs at line %d\n", path, ln);
	testutil_print_line("-expected:", expected, ln);
	testutil_print_line("+actual:  ", actual, ln);
	fprintf(stderr, "  whole actual output:\n%s%s", actual,
	    *actual != '\0' && actual[strlen(actual) - 1] == '\n' ? "" :
	    "\n(no newline at end)\n");
	free(expected);
	return -1;
}

static inline int
testutil_cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The names in dir that end in suffix, without it, sorted.  Returns
 * their number (-1 if dir cannot be read) and a NULL-terminated array in
 * *names; free it with free_names.
 */
static inline int
list_cases(const char *dir, const char *suffix, char ***names)
{
	DIR		*d;
	struct dirent	*de;
	char		**v = NULL, **nv;
	size_t		 n = 0, len, slen = strlen(suffix);

	*names = NULL;
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len <= slen || de->d_name[0] == '.' ||
		    strcmp(de->d_name + len - slen, suffix) != 0)
			continue;
		if ((nv = realloc(v, (n + 2) * sizeof(*v))) == NULL)
			break;
		v = nv;
		if ((v[n] = malloc(len - slen + 1)) == NULL)
			break;
		memcpy(v[n], de->d_name, len - slen);
		v[n][len - slen] = '\0';
		v[++n] = NULL;
	}
	closedir(d);
	if (v != NULL)
		qsort(v, n, sizeof(*v), testutil_cmp_names);
	*names = v;
	return (int)n;
}

static inline void
free_names(char **names)
{
	char	**p;

	for (p = names; p != NULL && *p != NULL; p++)
		free(*p);
	free(names);
}

#endif /* TESTUTIL_H */
