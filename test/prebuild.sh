#!/bin/sh
# prebuild.sh -- make test's background builds: start a make target at
# nice 19 while the C suites run (they mostly wait on timers and
# sockets), and wait for it just before the stage that needs it.
#
#   sh test/prebuild.sh start DIR WHAT MAKE TARGET...
#   sh test/prebuild.sh wait DIR WHAT SECONDS
#
# start runs `MAKE TARGET...` in the background, its output in
# DIR/prebuild.log; DIR/prebuild.rc is empty while it runs and holds its
# exit status once it is done.  Nothing starts when the targets are up
# to date (make -q).  wait returns at once when no build was started,
# else waits up to SECONDS, prints how long it waited and the build's
# log, and exits with the build's status.  WHAT names the build in the
# lines printed ("the e2e harness").  A make test that stops early
# leaves the build to finish on its own.

set -u
verb=$1 dir=$2 what=$3
shift 3

case $verb in
start)
	mk=$1
	shift
	mkdir -p "$dir" || exit 1
	# $mk is the make command, split on purpose.
	# shellcheck disable=SC2086
	if MAKEFLAGS= $mk --no-print-directory -q "$@" 2>/dev/null; then
		rm -f "$dir/prebuild.rc"
		exit 0
	fi
	: >"$dir/prebuild.rc"
	echo "prebuild: $what in the background (log: $dir/prebuild.log)"
	# shellcheck disable=SC2086
	(MAKEFLAGS= nice -n 19 $mk --no-print-directory "$@" \
		>"$dir/prebuild.log" 2>&1
	 echo $? >"$dir/prebuild.rc") </dev/null >/dev/null 2>&1 &
	;;
wait)
	limit=$1
	[ -f "$dir/prebuild.rc" ] || exit 0
	t0=$(date +%s)
	while [ ! -s "$dir/prebuild.rc" ]; do
		if [ $(( $(date +%s) - t0 )) -ge "$limit" ]; then
			echo "prebuild: $what is not built after ${limit}s"
			cat "$dir/prebuild.log"
			exit 1
		fi
		sleep 2
	done
	echo "prebuild: waited $(( $(date +%s) - t0 ))s for $what"
	cat "$dir/prebuild.log"
	rc=$(cat "$dir/prebuild.rc")
	rm -f "$dir/prebuild.rc"
	exit "$rc"
	;;
*)
	echo "usage: prebuild.sh start|wait DIR WHAT ..." >&2
	exit 2
	;;
esac
