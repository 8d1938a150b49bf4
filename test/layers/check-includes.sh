#!/bin/sh
# check-includes.sh -- the include half of lib/'s layer rule
# (lib/layers.mk).  Called by `make check-layers` with one argument per
# folder: "folder|layers it may include|third-party headers it may
# include|restricted third-party headers".  A private header (*_int.h)
# may be included only from its own folder; the files of cmd/leaderd/
# include the headers beside them by their bare name.  Prints one line per
# violation, as file:line: what and the rule, and exits 1 if any.
#
#   LIB=dir  the tree to check (default: lib), for the self-test.

lib=${LIB:-lib}
bad=0

say() {
	echo "$1" >&2
	bad=1
}

in_list() {
	for x in $2; do
		[ "$x" = "$1" ] && return 0
	done
	return 1
}

layers=
for spec in "$@"; do
	layers="$layers ${spec%%|*}"
done

# No source directly in lib/, and no folder the rule does not name.
for f in "$lib"/*.c "$lib"/*.h; do
	[ -e "$f" ] && say "$f: a source directly in $lib/; put it in its layer's folder (lib/layers.mk)"
done
for d in "$lib"/*/; do
	d=${d%/}
	in_list "${d##*/}" "$layers" ||
	    say "$d: a folder with no layer in lib/layers.mk; add it there, with what it may include"
done

for spec in "$@"; do
	folder=${spec%%|*}
	rest=${spec#*|}
	allowed=${rest%%|*}
	rest=${rest#*|}
	ext=${rest%%|*}
	restricted=${rest#*|}
	if [ "$folder" = cmd ]; then
		dir=cmd/leaderd
	else
		dir=$lib/$folder
	fi
	for f in "$dir"/*.c "$dir"/*.h; do
		[ -e "$f" ] || continue
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$f" |
		while IFS= read -r line; do
			n=${line%%:*}
			inc=$(echo "$line" | sed 's/^[^"<]*["<]\([^">]*\)[">].*/\1/')
			case $line in
			*'"'*)
				case $inc in
				*/*)	;;
				*)
					# cmd/leaderd's own headers, beside it.
					[ "$folder" = cmd ] && [ -e "$dir/$inc" ] &&
					    continue
					echo "$f:$n: #include \"$inc\" does not spell its folder; write \"<layer>/$inc\"" ;;
				esac
				to=${inc%%/*}
				[ "$to" = "$folder" ] && continue
				case $inc in
				*_int.h)
					echo "$f:$n: #include \"$inc\" is private to $to/; only the files of $to/ may include it"
					continue ;;
				esac
				in_list "$to" "$allowed" && continue
				echo "$f:$n: #include \"$inc\" goes from $folder up or across to $to; $folder may include only: ${allowed:-itself}"
				;;
			*)
				for r in $restricted; do
					case $inc in
					"$r"*)
						in_list "$r" "$ext" ||
						    echo "$f:$n: #include <$inc>: layer $folder may not include it (EXT_$folder in lib/layers.mk: ${ext:-none}); call a layer that may"
						;;
					esac
				done
				;;
			esac
		done
	done
done >"${TMPDIR:-/tmp}/check-includes.$$"
if [ -s "${TMPDIR:-/tmp}/check-includes.$$" ]; then
	cat "${TMPDIR:-/tmp}/check-includes.$$" >&2
	bad=1
fi
rm -f "${TMPDIR:-/tmp}/check-includes.$$"
exit $bad
