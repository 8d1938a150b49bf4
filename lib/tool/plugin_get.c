/*
 * plugin_get.c -- `kubectl leaderd get`.
 */

#include "tool/tool.h"

int
plugin_get(struct tool *t)
{
	tool_err(t, "get: not built yet");
	return TOOL_EXIT_FAIL;
}
