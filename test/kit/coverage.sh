#!/bin/sh
# coverage.sh -- the lines of each C module (lib/*.c) that a selection of
# the tests runs, from gcov.
#
#   sh test/kit/coverage.sh [PYTEST-ARGS...]
#
# Builds leaderd, the unit tests and the fuzz-replay programs with
# --coverage in build/cov, runs the unit tests and the fuzz replay (not
# with COV_UNIT=0), then `pytest PYTEST-ARGS` in test/integration (the
# whole suite when there are none) against that leaderd, and prints one
# line per module.  Used to choose the sanitizer pass's integration
# subset: compare `sh test/kit/coverage.sh $(SAN_INTEGRATION)` with
# `COV_UNIT=0 sh test/kit/coverage.sh` (see SAN_INTEGRATION in the
# Makefile).  Needs gcc and gcov; about as long as the tests it runs.

set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cov=build/cov
make=${MAKE:-make}
export CFLAGS="-O0 -g --coverage" LDFLAGS=--coverage

$make -s --no-print-directory -j2 BUILD=$cov $cov/leaderd
find $cov -name '*.gcda' -exec rm -f {} +
if [ "${COV_UNIT:-1}" != 0 ]; then
	$make -s --no-print-directory -j2 BUILD=$cov unit fuzz-replay \
		>$cov/unit.log 2>&1 || { cat $cov/unit.log; exit 1; }
fi
status=0
(cd test/integration && LEADERD="$root/$cov/leaderd" \
	${PYTHON:-python3} -m pytest -q -p no:cacheprovider -n 2 "$@") ||
	status=$?

echo "== lines of lib/*.c run (gcov)"
for f in $(find lib -name '*.c' | sort); do
	gcov -n -o "$cov/${f%/*}" "$f" 2>/dev/null
done | awk '
/^File / {
	f = substr($2, 2, length($2) - 2)
}
/^Lines executed:/ && f ~ /^lib\/.*\.c$/ {
	pct = substr($2, 10)
	sub(/%$/, "", pct)
	n = $4
	printf "%-22s %6.1f%% of %5d\n", f, pct, n
	run += pct * n / 100
	all += n
	if (pct == 0)
		none = none " " f
	f = ""
}
END {
	printf "%-22s %6.1f%% of %5d\n", "total", 100 * run / all, all
	if (none != "")
		print "not run at all:" none
}'
exit $status
