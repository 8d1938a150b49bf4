/*
 * config_fuzz.c -- config_load and config_validate on arbitrary files.
 */

#include "config/config.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct config	 c;
	char			 err[CONFIG_ERR_MAX], dump[8192];

	config_defaults(&c);
	if (config_load(&c, fuzz_tmpfile(data, size), err, sizeof(err)) == 0) {
		config_validate(&c, err, sizeof(err));
		config_dump(&c, 0, dump, sizeof(dump));
		config_dump(&c, 1, dump, sizeof(dump));
	}
	return 0;
}
