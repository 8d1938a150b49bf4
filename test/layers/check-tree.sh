#!/bin/sh
# check-tree.sh -- the house's rules for the tree itself, checked beside
# the layer rule by `make check-layers`:
#   - no .c under lib/ or cmd/ is over 600 lines: a file that
#     outgrows it is split along its seams, each new file with its line
#     in lib/README.md;
#   - no stray file is tracked: patch leftovers (*.orig, *.rej) and
#     editor backups (*~, *.bak, .*.swp, .*.swo, #*#).
# Prints one line per offence and exits 1 if any.
#
#   ROOT=dir  the tree to check (default: .), for the self-test; the
#             tracked files are git's list in a checkout, every file
#             otherwise.

root=${ROOT:-.}
max=600
bad=0

for f in $(find "$root/lib" "$root/cmd" -name '*.c' -type f | sort); do
	n=$(wc -l <"$f")
	if [ "$n" -gt "$max" ]; then
		echo "${f#"$root"/}: $n lines, over the $max-line bound: split it along its seams (lib/README.md)" >&2
		bad=1
	fi
done

if git -C "$root" rev-parse --show-prefix >/dev/null 2>&1 &&
    [ -z "$(git -C "$root" rev-parse --show-prefix)" ]; then
	files=$(git -C "$root" ls-files)
else
	files=$(cd "$root" && find . -type f | sed 's|^\./||')
fi
stray=$(printf '%s\n' "$files" |
    grep -E '(^|/)(\.[^/]*\.sw[op]|#[^/]*#|[^/]*\.(orig|rej|bak)|[^/]*~)$')
for f in $stray; do
	echo "$f: a stray file (a patch's leftover or an editor's backup) is tracked: git rm it" >&2
	bad=1
done
exit $bad
