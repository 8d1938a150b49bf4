/*
 * version.h -- which build this is: the source revision leaderd was
 * built from, beside its version (LEADERD_VERSION, set by the build for
 * every file).
 */

#ifndef VERSION_H
#define VERSION_H

/*
 * The git commit the binary was built from (12 hex digits), with
 * "-dirty" when the work tree differed from it; "unknown" when it was
 * built outside a checkout (the Dockerfile's build sees no .git).
 */
const char	*version_revision(void);

#endif
