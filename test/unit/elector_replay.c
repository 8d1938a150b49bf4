/*
 * elector_replay.c -- trace validation: a daemon built with
 * LEADERD_TEST_HOOKS and run with $LEADERD_TEST_ELECTOR_TRACE writes
 * every elector step it takes (lib/daemon/daemon.c, trace_step): the
 * elector before it, the input, the action.  This replays each step
 * through the pure elector and checks:
 *
 *  - the action is the one the daemon got, and the elector after the
 *    step is the one the daemon's next step of that lock starts from
 *    (nothing but elector_step changed it in between);
 *  - the inputs are the ones the simulators (elector_sim,
 *    elector_explore) feed, as they model daemon_api.c: an answer only
 *    while a request is in flight, GOT or NOTFOUND to a GET and WRITTEN
 *    to a write; a watched record only when the elector takes it (else
 *    the daemon keeps it for after the answer); time never going back.
 *
 *   elector_replay TRACE.PID...
 *   elector_replay -size		the bytes of one step in a trace, then
 *					where its elector starts and its size
 *
 * Prints the steps and inputs checked, and how late past its timeout
 * the latest answer came; exits 1 on the first difference.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/elector.h"

#define MAXLOCKS	64

struct step {
	char			 lock[64];
	struct elector		 pre;
	struct elector_input	 in;
	int			 has;
	struct lease		 rec;
	char			 to[LEASE_HOLDER_MAX];
	struct elector_action	 act;
};

struct lockstate {
	char			 lock[64];
	struct elector		 post;		/* after its last step */
	uint64_t		 now_ms;
	uint64_t		 timeout_ms;	/* of the request in flight */
};

static int
read_step(FILE *f, struct step *s)
{
	return fread(s->lock, sizeof(s->lock), 1, f) == 1 &&
	    fread(&s->pre, sizeof(s->pre), 1, f) == 1 &&
	    fread(&s->in, sizeof(s->in), 1, f) == 1 &&
	    fread(&s->has, sizeof(s->has), 1, f) == 1 &&
	    fread(&s->rec, sizeof(s->rec), 1, f) == 1 &&
	    fread(s->to, sizeof(s->to), 1, f) == 1 &&
	    fread(&s->act, sizeof(s->act), 1, f) == 1;
}

/* The two electors are the same but for `why` (a static string). */
static int
same(const struct elector *a, const struct elector *b)
{
	struct elector	 x = *a, y = *b;

	x.why = y.why = NULL;
	return memcmp(&x, &y, sizeof(x)) == 0;
}

static int
is_answer(enum elector_input_kind k)
{
	return k == ELECTOR_IN_GOT || k == ELECTOR_IN_NOTFOUND ||
	    k == ELECTOR_IN_WRITTEN || k == ELECTOR_IN_CONFLICT ||
	    k == ELECTOR_IN_FAILED;
}

static int
fail(const char *file, unsigned long n, const struct step *s,
    const char *what)
{
	fprintf(stderr, "elector_replay: %s: step %lu (lock %s, input %d at "
	    "%" PRIu64 " ms): %s\n", file, n, s->lock, s->in.kind,
	    s->in.now_ms, what);
	return 1;
}

static int
replay(const char *file, unsigned long *steps, unsigned long *answers,
    unsigned long *watched, int64_t *late_ms)
{
	static struct lockstate	 locks[MAXLOCKS];
	static struct step	 s;
	struct lockstate	*l;
	struct elector		 e;
	struct elector_input	 in;
	struct elector_action	 act;
	FILE			*f;
	unsigned long		 n = 0;
	int			 nlocks = 0, k;
	enum elector_action_kind req;

	if ((f = fopen(file, "rb")) == NULL) {
		perror(file);
		return 1;
	}
	while (read_step(f, &s)) {
		n++;
		for (k = 0; k < nlocks; k++)
			if (strcmp(locks[k].lock, s.lock) == 0)
				break;
		l = &locks[k];
		if (k == nlocks) {
			if (nlocks == MAXLOCKS)
				return fail(file, n, &s, "too many locks");
			nlocks++;
			memcpy(l->lock, s.lock, sizeof(l->lock));
		} else if (!same(&l->post, &s.pre))
			return fail(file, n, &s, "the elector changed "
			    "between two steps");
		else if (s.in.now_ms < l->now_ms)
			return fail(file, n, &s, "time went back");
		req = s.pre.inflight;
		if (is_answer(s.in.kind)) {
			if (req == ELECTOR_DO_NOTHING)
				return fail(file, n, &s, "an answer with no "
				    "request in flight");
			if ((s.in.kind == ELECTOR_IN_GOT ||
			    s.in.kind == ELECTOR_IN_NOTFOUND) !=
			    (req == ELECTOR_DO_GET) &&
			    s.in.kind != ELECTOR_IN_CONFLICT &&
			    s.in.kind != ELECTOR_IN_FAILED)
				return fail(file, n, &s, "an answer of "
				    "another kind than its request");
			if ((int64_t)(s.in.now_ms - s.pre.sent_ms -
			    l->timeout_ms) > *late_ms)
				*late_ms = (int64_t)(s.in.now_ms -
				    s.pre.sent_ms - l->timeout_ms);
			(*answers)++;
		}
		if (s.in.kind == ELECTOR_IN_WATCHED) {
			if (!s.has || !elector_takes_watched(&s.pre))
				return fail(file, n, &s, "a watched record "
				    "fed that the elector does not take");
			(*watched)++;
		}
		e = s.pre;
		in = s.in;
		in.record = s.has ? &s.rec : NULL;
		in.to = in.kind == ELECTOR_IN_HANDOVER ? s.to : NULL;
		elector_step(&e, &in, &act);
		if (memcmp(&act, &s.act, sizeof(act)) != 0)
			return fail(file, n, &s, "another action than the "
			    "daemon's");
		if (act.kind != ELECTOR_DO_NOTHING)
			l->timeout_ms = act.timeout_ms;
		l->post = e;
		l->now_ms = s.in.now_ms;
	}
	fclose(f);
	*steps += n;
	return 0;
}

int
main(int argc, char *argv[])
{
	struct step	 s;
	unsigned long	 steps = 0, answers = 0, watched = 0;
	int64_t		 late_ms = INT64_MIN;
	int		 i;

	if (argc == 2 && strcmp(argv[1], "-size") == 0) {
		printf("%zu %zu %zu\n", sizeof(s.lock) + sizeof(s.pre) +
		    sizeof(s.in) + sizeof(s.has) + sizeof(s.rec) +
		    sizeof(s.to) + sizeof(s.act), sizeof(s.lock),
		    sizeof(s.pre));
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: elector_replay TRACE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++)
		if (replay(argv[i], &steps, &answers, &watched, &late_ms))
			return 1;
	if (steps == 0) {
		fprintf(stderr, "elector_replay: no step in the traces\n");
		return 1;
	}
	printf("elector_replay: %d traces, %lu steps replayed with the same "
	    "actions, %lu answers and %lu watched records as the simulators "
	    "model them; the latest answer came %" PRId64 " ms past its "
	    "request's timeout\n", argc - 1, steps, answers, watched,
	    late_ms);
	return 0;
}
