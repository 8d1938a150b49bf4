/*
 * plugin_shards.c -- `kubectl leaderd shards`.
 */

#include "tool/tool.h"

int
plugin_shards(struct tool *t)
{
	tool_err(t, "shards: not built yet");
	return TOOL_EXIT_FAIL;
}
