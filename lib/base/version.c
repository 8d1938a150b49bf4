/*
 * version.c -- the source revision (version.h).  The build passes
 * LEADERD_REVISION to this file alone, and rebuilds it when the revision
 * changes, so a new commit recompiles one file, not the tree.
 */

#include "base/version.h"

#ifndef LEADERD_REVISION
#define LEADERD_REVISION	"unknown"
#endif

const char *
version_revision(void)
{
	return LEADERD_REVISION;
}
