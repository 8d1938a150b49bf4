/*
 * doctor.c -- the doctors' report: findings kept in order, printed in
 * one format, and the exit status they call for (doctor.h).
 */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"
#include "tool/doctor.h"

void
doctor_init(struct doctor_report *r)
{
	memset(r, 0, sizeof(*r));
}

struct doctor_finding *
doctor_add(struct doctor_report *r, enum doctor_sev sev, const char *check,
    const char *fmt, ...)
{
	static struct doctor_finding	 scratch;
	struct doctor_finding		*f;
	va_list				 ap;

	r->count[sev]++;
	if (r->n == DOCTOR_FINDINGS_MAX) {
		r->dropped++;
		f = &scratch;
	} else
		f = &r->f[r->n++];
	memset(f, 0, sizeof(*f));
	f->sev = sev;
	snprintf(f->check, sizeof(f->check), "%s", check);
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	va_end(ap);
	return f;
}

void
doctor_fix(struct doctor_finding *f, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(f->fix, sizeof(f->fix), fmt, ap);
	va_end(ap);
}

const char *
doctor_sev_word(enum doctor_sev sev)
{
	switch (sev) {
	case DOCTOR_OK:
		return "ok";
	case DOCTOR_SKIP:
		return "skip";
	case DOCTOR_WARN:
		return "warn";
	default:
		return "FAIL";
	}
}

void
doctor_print(const struct doctor_report *r, const char *about, FILE *fp)
{
	static const enum doctor_sev	 order[] = { DOCTOR_FAIL, DOCTOR_WARN,
	    DOCTOR_OK, DOCTOR_SKIP };
	/* text_escape may write up to 6 bytes per input byte. */
	char				 what[DOCTOR_LINE_MAX * 6];
	char				 fix[DOCTOR_LINE_MAX * 6];
	size_t				 i, k;

	for (k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (i = 0; i < r->n; i++) {
			const struct doctor_finding	*f = &r->f[i];

			if (f->sev != order[k])
				continue;
			text_escape(what, sizeof(what), f->what);
			fprintf(fp, "%-4s  %s: %s\n", doctor_sev_word(f->sev),
			    f->check, what);
			if (f->fix[0] != '\0') {
				text_escape(fix, sizeof(fix), f->fix);
				fprintf(fp, "      fix: %s\n", fix);
			}
		}
	if (r->dropped > 0)
		fprintf(fp, "(%zu more findings not shown)\n", r->dropped);
	text_escape(what, sizeof(what), about);
	fprintf(fp, "doctor: %u problem%s, %u warning%s (%s)\n",
	    r->count[DOCTOR_FAIL], r->count[DOCTOR_FAIL] == 1 ? "" : "s",
	    r->count[DOCTOR_WARN], r->count[DOCTOR_WARN] == 1 ? "" : "s",
	    what);
}

int
doctor_exit(const struct doctor_report *r)
{
	return r->count[DOCTOR_FAIL] > 0 ? DOCTOR_EXIT_PROBLEM :
	    DOCTOR_EXIT_OK;
}
