/*
 * tmpfile.c -- the parsers of files (config, kubeconfig) read a path, so
 * their fuzz targets write each input to one reused temporary file.
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"

const char *
fuzz_tmpfile(const uint8_t *data, size_t size)
{
	static char	 path[64];
	FILE		*f;

	if (path[0] == '\0')
		snprintf(path, sizeof(path), "/tmp/leaderd-fuzz.%ld.yaml",
		    (long)getpid());
	if ((f = fopen(path, "wb")) == NULL)
		abort();
	if (size > 0 && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	return path;
}
