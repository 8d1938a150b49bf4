#!/bin/sh
# selftest.sh -- shows that every part of `make check-layers` can fail:
# an upward include planted in a copy of lib/ must be reported, and an
# object of the base layer that calls the daemon layer must fail to link
# against base's archive alone; a 601-line .c and a tracked *.orig must
# be refused by check-tree.sh.  Called by the Makefile with the layers'
# build directory and the same layer specs as check-includes.sh.
set -u
dir=$1
shift
here=$(dirname "$0")
copy=$dir/selftest/lib

rm -rf "$dir/selftest"
mkdir -p "$dir/selftest"
cp -R lib "$copy"
printf '#include "daemon/daemon.h"\n' >>"$copy/base/log.h"
printf '#include <curl/curl.h>\n' >>"$copy/codec/lease.h"
printf '#include "codec/codec_int.h"\n' >>"$copy/api/kube.h"
if out=$(LIB=$copy sh "$here/check-includes.sh" "$@" 2>&1); then
	echo "check-layers self-test: the include check passed a planted violation" >&2
	exit 1
fi
for want in 'base/log.h:.*goes from base up' 'codec/lease.h:.*<curl/curl.h>' \
    'api/kube.h:.*codec_int.h" is private to codec/'; do
	echo "$out" | grep -q "$want" || {
		echo "check-layers self-test: no report matching '$want' in:" >&2
		echo "$out" >&2
		exit 1
	}
done

cat >"$dir/selftest/up.c" <<'EOC'
int	base_planted(void);
int	daemon_run(void);

int
base_planted(void)
{
	return daemon_run();
}
EOC
$CC $CFLAGS -c -o "$dir/selftest/up.o" "$dir/selftest/up.c" || exit 1
if $CC $LDFLAGS -o "$dir/selftest/up" "$dir/stub_main.o" "$dir/selftest/up.o" \
    "${dir%/layers}/lib/libbase.a" >/dev/null 2>&1; then
	echo "check-layers self-test: an upward call linked against base alone" >&2
	exit 1
fi

# The tree's rules: a 601-line .c and a patch's leftover are refused, a
# 600-line .c and the tree as it is pass.
tree=$dir/selftest/tree
mkdir -p "$tree/lib/base" "$tree/cmd/leaderd" "$tree/docs"
awk 'BEGIN { for (i = 0; i < 600; i++) print "/* line */" }' \
    >"$tree/lib/base/full.c"
awk 'BEGIN { for (i = 0; i < 601; i++) print "/* line */" }' \
    >"$tree/cmd/leaderd/long.c"
: >"$tree/docs/page.md.orig"
if out=$(ROOT=$tree sh "$here/check-tree.sh" 2>&1); then
	echo "check-layers self-test: the tree check passed a planted 601-line file" >&2
	exit 1
fi
for want in '^cmd/leaderd/long.c: 601 lines' '^docs/page.md.orig: a stray file'; do
	echo "$out" | grep -q "$want" || {
		echo "check-layers self-test: no report matching '$want' in:" >&2
		echo "$out" >&2
		exit 1
	}
done
if echo "$out" | grep -q 'full.c'; then
	echo "check-layers self-test: the tree check refused a 600-line file" >&2
	exit 1
fi
rm -rf "$dir/selftest"
