#!/bin/sh
# stages.sh -- run make targets one after the other and print the wall
# time of each at the end (make check, make test, make sanitize).
#
#   sh test/stages.sh TITLE MAKE [MAKE-ARGS] -- TARGET...
#
# The targets run in the order given, each as its own make, so they never
# run concurrently under make -j (the timing tests would suffer); -j still
# applies inside each target.  The first failing target stops the run, as
# make does: the table then shows it as FAILED and the targets after it
# as not run, and the exit status is 1.
#
# A run inside another one (make test runs make sanitize) adds its lines,
# named "TITLE/TARGET", to the outer run's table instead of printing its
# own: the outer run exports STAGES_FILE.

set -u
title=$1
shift
mk=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	mk="$mk $1"
	shift
done
[ $# -gt 0 ] && shift

if [ -n "${STAGES_FILE:-}" ]; then
	file=$STAGES_FILE
	prefix="$title/"
	outer=no
else
	file=$(mktemp "${TMPDIR:-/tmp}/stages.XXXXXX") || exit 1
	prefix=
	outer=yes
	STAGES_FILE=$file
	export STAGES_FILE
fi

status=0
start=$(date +%s)
for t in "$@"; do
	shift
	t0=$(date +%s)
	# $mk is the make command and its arguments, split on purpose.
	# shellcheck disable=SC2086
	if $mk "$t"; then
		echo "$prefix$t $(( $(date +%s) - t0 ))" >>"$file"
	else
		echo "$prefix$t $(( $(date +%s) - t0 )) FAILED" >>"$file"
		for n in "$@"; do
			echo "$prefix$n - not run" >>"$file"
		done
		status=1
		break
	fi
done

if [ "$outer" = yes ]; then
	echo "== $title: wall time of each stage (seconds)"
	while read -r name secs rest; do
		printf '%-28s %6s%s\n' "$name" "$secs" "${rest:+ $rest}"
	done <"$file"
	printf '%-28s %6s\n' total $(( $(date +%s) - start ))
	rm -f "$file"
fi
exit $status
