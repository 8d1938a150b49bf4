#!/bin/sh
# sanscan.sh DIR... -- fail if a file under any DIR holds a sanitizer
# report (AddressSanitizer, LeakSanitizer, UndefinedBehaviorSanitizer).
# Run after a test suite whose daemons wrote their stderr under DIR, so a
# report is a failure even where a test did not look at the exit status.
pat='==[0-9]+==ERROR: (Address|Leak)Sanitizer|SUMMARY: (Address|Leak|UndefinedBehavior)Sanitizer|: runtime error: '
found=$(grep -rIlE "$pat" "$@" 2>/dev/null)
if [ -n "$found" ]; then
	for f in $found; do
		echo "== sanitizer report in $f"
		grep -E -A40 "$pat" "$f" | head -120
	done
	echo "sanscan: sanitizer reports in $(echo "$found" | wc -l) file(s)"
	exit 1
fi
echo "sanscan: no sanitizer reports under $*"
