/*
 * fuzz.h -- what every fuzz target defines.  Built with clang
 * -fsanitize=fuzzer by `make fuzz`, or linked with replay.c under gcc by
 * `make test` to run the seed corpora.
 */

#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write data to a fresh temporary file; returns its path (static). */
const char *fuzz_tmpfile(const uint8_t *data, size_t size);

#endif /* FUZZ_H */
