#!/bin/sh
#
# mkrootfs.sh BINARY ROOT [LICENSES] -- assemble the runtime file set of
# the leaderd image under ROOT: the binary as ROOT/leaderd (stripped) and
# every shared object `ldd BINARY` resolves, the dynamic loader included,
# each copied (symlinks followed) to the same path under ROOT (none for
# the static build the image ships); then etc/passwd and etc/group naming
# root and nonroot (65532), the CA bundle ($CA_BUNDLE, by default
# Debian's /etc/ssl/certs/ca-certificates.crt) at the path libcurl looks
# for it when a kubeconfig names no CA, and the files of the directory
# LICENSES (the licence texts of what the binary links, their list,
# COMPONENTS: deploy/image/static.mk, and the SBOM made from it,
# sbom.spdx.json: deploy/image/sbom.py) as ROOT/licenses/, with the
# default CA bundle's licence, ca-certificates.txt.
#
# The Dockerfile runs this in its build stage and copies ROOT onto
# scratch; `make image` (deploy/image/oci.py) packs it as the image's
# only layer; test/deploy runs it too and starts the binary from ROOT.
# So what this script collects is exactly what the image holds.  Libraries that a program dlopen()s are
# invisible to ldd; leaderd loads none (glibc 2.36 has the "files" and
# "dns" NSS modules built in).

set -eu

if [ $# -ne 2 ] && [ $# -ne 3 ]; then
	echo "usage: mkrootfs.sh BINARY ROOT [LICENSES]" >&2
	exit 2
fi
bin=$1
root=$2
licenses=${3:-}
if [ -n "$licenses" ] && [ ! -f "$licenses/COMPONENTS" ]; then
	echo "mkrootfs.sh: $licenses/COMPONENTS: no list of components" >&2
	exit 1
fi

if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
	echo "mkrootfs.sh: $bin: not an executable file" >&2
	exit 1
fi
# A static binary (make STATIC=1) has no program interpreter: it needs
# no libraries, and ldd refuses it.
if ! readelf -l "$bin" 2>/dev/null | grep -q 'Requesting program interpreter'
then
	deps=
elif ! deps=$(ldd "$bin" 2>&1); then
	echo "mkrootfs.sh: ldd $bin failed: $deps" >&2
	exit 1
fi
if printf '%s\n' "$deps" | grep -q 'not found'; then
	echo "mkrootfs.sh: $bin needs libraries that are not installed:" >&2
	printf '%s\n' "$deps" | grep 'not found' >&2
	exit 1
fi

mkdir -p "$root"
# "libfoo.so.1 => /lib/x86_64-linux-gnu/libfoo.so.1 (0x...)" gives the
# path after "=>"; the loader's line "/lib64/ld-linux-x86-64.so.2 (0x...)"
# starts with it; linux-vdso.so.1 has no file and is skipped.
printf '%s\n' "$deps" | awk '
	$2 == "=>" && $3 ~ /^\// { print $3; next }
	$1 ~ /^\// { print $1 }' | sort -u | while read -r lib; do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
	chmod 0755 "$root$lib"
done

cp "$bin" "$root/leaderd"
${STRIP:-strip} --strip-unneeded "$root/leaderd"
chmod 0755 "$root/leaderd"

# No shell and no home: nonroot's shell is a path that does not exist.
mkdir -p "$root/etc/ssl/certs"
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
	'nonroot:x:65532:65532:nonroot:/:/sbin/nologin' >"$root/etc/passwd"
printf '%s\n' 'root:x:0:' 'nonroot:x:65532:' >"$root/etc/group"
ca=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
if [ ! -f "$ca" ]; then
	echo "mkrootfs.sh: $ca: no CA bundle (apt-get install" \
	    "ca-certificates, or set CA_BUNDLE)" >&2
	exit 1
fi
cp -L "$ca" "$root/etc/ssl/certs/ca-certificates.crt"
chmod 0644 "$root/etc/passwd" "$root/etc/group" \
	"$root/etc/ssl/certs/ca-certificates.crt"
if [ -n "$licenses" ]; then
	mkdir -p "$root/licenses"
	for f in "$licenses"/*; do
		cp -L "$f" "$root/licenses/"
		chmod 0644 "$root/licenses/$(basename "$f")"
	done
	# Debian's bundle is made from Mozilla's certdata.txt, under the
	# MPL-2.0 (the SBOM says so): its text goes beside the others.  A
	# bundle of the builder's own ($CA_BUNDLE) brings its own terms.
	if [ -z "${CA_BUNDLE:-}" ]; then
		mpl=/usr/share/common-licenses/MPL-2.0
		if [ ! -f "$mpl" ]; then
			echo "mkrootfs.sh: $mpl: no MPL-2.0 text for the" \
			    "CA bundle (apt-get install base-files)" >&2
			exit 1
		fi
		{ echo "/etc/ssl/certs/ca-certificates.crt: Debian's" \
		    "ca-certificates, made from Mozilla's CA list," \
		    "under the Mozilla Public License 2.0:"; echo
		  cat "$mpl"; } >"$root/licenses/ca-certificates.txt"
		chmod 0644 "$root/licenses/ca-certificates.txt"
	fi
fi
