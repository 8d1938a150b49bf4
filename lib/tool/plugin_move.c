/*
 * plugin_move.c -- `kubectl leaderd move`.
 */

#include "tool/tool.h"

int
plugin_move(struct tool *t)
{
	tool_err(t, "move: not built yet");
	return TOOL_EXIT_FAIL;
}
