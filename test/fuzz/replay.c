/*
 * replay.c -- a plain main for the fuzz targets: run every file named on
 * the command line (or found in the directories named) through
 * LLVMFuzzerTestOneInput once.  `make test` uses it under gcc to replay
 * the seed corpora and every crash found earlier.
 */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int
replay_file(const char *path)
{
	FILE		*f;
	uint8_t		*data;
	long		 len;

	if ((f = fopen(path, "rb")) == NULL) {
		perror(path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	if ((data = malloc(len > 0 ? (size_t)len : 1)) == NULL ||
	    fread(data, 1, (size_t)len, f) != (size_t)len) {
		perror(path);
		fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, (size_t)len);
	free(data);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	char		 path[4096];
	int		 i, n = 0, bad = 0;

	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) == -1) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad += replay_file(argv[i]) == -1;
			n++;
			continue;
		}
		if ((d = opendir(argv[i])) == NULL) {
			perror(argv[i]);
			return 1;
		}
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i],
			    de->d_name);
			bad += replay_file(path) == -1;
			n++;
		}
		closedir(d);
	}
	if (n == 0) {
		fprintf(stderr, "replay: no inputs\n");
		return 1;
	}
	printf("replay: %d inputs\n", n);
	return bad != 0;
}
