/*
 * doctor.c -- `kubectl leaderd doctor [LEASE]` and `leaderd doctor`: the
 * checks an operator runs by hand when nobody leads, each finding with
 * its one-line fix.
 */

#include "tool/tool.h"

int
plugin_doctor(struct tool *t)
{
	tool_err(t, "doctor: not built yet");
	return TOOL_EXIT_FAIL;
}
