/*
 * gate_test.c -- the candidacy gate (core/gate.c): the kubelet's probe
 * thresholds from the first result on, the client grace, the pause, the
 * order of the reasons, and the cooldown each reason asks for.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/gate.h"

static struct gate_config
conf_probe(unsigned fail, unsigned succ)
{
	struct gate_config	 c;

	memset(&c, 0, sizeof(c));
	c.probe = 1;
	c.failure_threshold = fail;
	c.success_threshold = succ;
	c.cooldown_ms = 15000;
	return c;
}

/* Without probe or client rule, a candidate at once. */
static void
test_plain(void **state)
{
	struct gate		 g;
	struct gate_config	 c;

	(void)state;
	memset(&c, 0, sizeof(c));
	gate_init(&g, &c);
	assert_int_equal(gate_verdict(&g, 0), GATE_OK);
	assert_string_equal(gate_reason_text(GATE_OK), "");
	assert_int_equal(gate_wake(&g, 0), 0);
}

/* The probe's results, as a script: result in, verdict out. */
static void
test_thresholds(void **state)
{
	static const struct {
		unsigned	 fail, succ;
		const char	*results;	/* '+' ok, '-' failed */
		const char	*verdicts;	/* 'c' candidate, 'u' unhealthy */
	} cases[] = {
		/* Healthy at the first success with success_threshold 1. */
		{ 3, 1, "+--+---+", "ccccccuc" },
		/* Failure at once when the threshold is 1. */
		{ 1, 1, "+-+-", "cucu" },
		/* Two successes in a row needed, from the first result on. */
		{ 3, 2, "+-++---+-++", "uuucccuuuuc" },
		/* A first failure: probed, unhealthy (not "not probed"). */
		{ 3, 1, "-", "u" },
		/* Failures interrupted by a success start again. */
		{ 2, 1, "+-+-+--", "ccccccu" },
	};
	struct gate		 g;
	struct gate_config	 c;
	size_t			 i, k;
	enum gate_reason	 v;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = conf_probe(cases[i].fail, cases[i].succ);
		gate_init(&g, &c);
		assert_int_equal(gate_verdict(&g, 0), GATE_NOT_PROBED);
		for (k = 0; cases[i].results[k] != '\0'; k++) {
			gate_probe(&g, cases[i].results[k] == '+');
			v = gate_verdict(&g, 0);
			print_message("case %zu result %zu: %s\n", i, k,
			    gate_reason_text(v));
			assert_int_equal(v, cases[i].verdicts[k] == 'c' ?
			    GATE_OK : GATE_UNHEALTHY);
		}
	}
}

/* Client-bound: a candidate while a client holds a stream, and for the
 * grace after the last one leaves. */
static void
test_clients(void **state)
{
	struct gate		 g;
	struct gate_config	 c;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.require_client = 1;
	c.client_grace_ms = 500;
	c.cooldown_ms = 7000;
	gate_init(&g, &c);
	assert_int_equal(gate_verdict(&g, 0), GATE_NO_CLIENT);
	assert_int_equal(gate_wake(&g, 0), 0);
	gate_clients(&g, 2, 100);
	assert_int_equal(gate_verdict(&g, 100), GATE_OK);
	gate_clients(&g, 1, 200);
	assert_int_equal(gate_verdict(&g, 200), GATE_OK);
	gate_clients(&g, 0, 1000);
	assert_int_equal(gate_verdict(&g, 1000), GATE_OK);
	assert_int_equal(gate_verdict(&g, 1499), GATE_OK);
	assert_int_equal(gate_wake(&g, 1200), 1500);
	assert_int_equal(gate_verdict(&g, 1500), GATE_NO_CLIENT);
	assert_int_equal(gate_wake(&g, 1500), 0);
	assert_string_equal(gate_reason_text(GATE_NO_CLIENT), "no client");
	assert_int_equal(gate_cooldown(&g, GATE_NO_CLIENT), 7000);
	/* Back within the grace: never out. */
	gate_clients(&g, 1, 2000);
	gate_clients(&g, 0, 2100);
	gate_clients(&g, 1, 2300);
	assert_int_equal(gate_verdict(&g, 2700), GATE_OK);
	/* Grace 0: out the moment the last one leaves. */
	c.client_grace_ms = 0;
	gate_init(&g, &c);
	gate_clients(&g, 1, 10);
	gate_clients(&g, 0, 20);
	assert_int_equal(gate_verdict(&g, 20), GATE_NO_CLIENT);
}

/* The pause comes first, needs no cooldown, and is undone by hand. */
static void
test_pause_and_order(void **state)
{
	struct gate		 g;
	struct gate_config	 c = conf_probe(1, 1);

	(void)state;
	c.require_client = 1;
	gate_init(&g, &c);
	gate_pause(&g, 1);
	assert_int_equal(gate_verdict(&g, 0), GATE_PAUSED);
	assert_string_equal(gate_reason_text(GATE_PAUSED), "paused");
	assert_int_equal(gate_cooldown(&g, GATE_PAUSED), 0);
	gate_pause(&g, 0);
	assert_int_equal(gate_verdict(&g, 0), GATE_NOT_PROBED);
	assert_string_equal(gate_reason_text(GATE_NOT_PROBED),
	    "app not yet probed");
	gate_probe(&g, 0);
	assert_int_equal(gate_verdict(&g, 0), GATE_UNHEALTHY);
	assert_string_equal(gate_reason_text(GATE_UNHEALTHY), "app unhealthy");
	assert_int_equal(gate_cooldown(&g, GATE_UNHEALTHY), 15000);
	gate_probe(&g, 1);
	assert_int_equal(gate_verdict(&g, 0), GATE_NO_CLIENT);
	gate_clients(&g, 1, 0);
	assert_int_equal(gate_verdict(&g, 0), GATE_OK);
	gate_pause(&g, 1);
	assert_int_equal(gate_verdict(&g, 0), GATE_PAUSED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_clients),
		cmocka_unit_test(test_pause_and_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
