/*
 * kubeconfig_fuzz.c -- kubeconfig_load on arbitrary files.
 */

#include "fuzz.h"
#include "config/creds.h"
#include "config/kubeconfig.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kube_creds	 c;
	char			 err[1024], warn[256];

	if (kubeconfig_load(&c, fuzz_tmpfile(data, size), err, sizeof(err),
	    warn, sizeof(warn)) == 0)
		creds_clear(&c);
	return 0;
}
