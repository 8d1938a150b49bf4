#!/usr/bin/env python3
"""package.py -- kubectl leaderd's krew archives (make plugin).

    package.py --manifest deploy/krew/leaderd.yaml --license LICENSE \\
        --out DIR [--strip ARCH=TOOL ...] [--licenses ARCH=DIR ...] \\
        ARCH=BINARY ...

For each ARCH=BINARY: DIR/kubectl-leaderd-VERSION-linux-ARCH.tar.gz
holding the binary, stripped (--strip names the tool for that arch; the
default is strip), as kubectl-leaderd (0755), LICENSE (0644), and the
licences of what the static binary links (--licenses: the static
build's licenses/ directory, its COMPONENTS and NAME.txt files, as the
image's /licenses) under licenses/; owned by root, dated
SOURCE_DATE_EPOCH (else 0), so the same binary gives the same bytes.  Then DIR/SHA256SUMS, and DIR/leaderd.yaml: the manifest
with the sha256 of each archive built put in its platform (VERSION is
the manifest's spec.version without its "v", and each platform's uri
must end with its archive's name).  Python 3 standard library only.
"""

import argparse
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile


def entry(name, mode, mtime, size=0, kind=tarfile.REGTYPE):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    info.mode = mode
    info.mtime = mtime
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def archive(binary, license_file, licenses, out, strip, mtime):
    files = [("kubectl-leaderd", None, 0o755), ("LICENSE", license_file,
                                                0o644)]
    if licenses is not None:
        files.append(("licenses/", None, 0o755))
        files += [("licenses/" + n, os.path.join(licenses, n), 0o644)
                  for n in sorted(os.listdir(licenses))
                  if n == "COMPONENTS" or n.endswith(".txt")]
    with tempfile.TemporaryDirectory() as d:
        exe = os.path.join(d, "kubectl-leaderd")
        shutil.copyfile(binary, exe)
        subprocess.run([strip, exe], check=True)
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) \
                as tar:
            for name, path, mode in files:
                if name.endswith("/"):
                    tar.addfile(entry(name.rstrip("/"), mode, mtime,
                                      kind=tarfile.DIRTYPE))
                    continue
                path = path or exe
                with open(path, "rb") as f:
                    tar.addfile(entry(name, mode, mtime,
                                      os.path.getsize(path)), f)
    with open(out, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0,
                           compresslevel=9) as gz:
            gz.write(raw.getvalue())
    with open(out, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def fill(manifest, sums):
    """The manifest's text with each built platform's sha256 set: the
    first sha256 line after the uri naming that archive."""
    out, want = [], None
    for line in manifest.split("\n"):
        m = re.match(r"^\s*uri:\s*(\S+)\s*$", line)
        if m:
            want = sums.get(m.group(1).rsplit("/", 1)[-1])
        m = re.match(r"^(\s*sha256:\s*).*$", line)
        if m and want is not None:
            line = '%s"%s"' % (m.group(1), want)
            want = None
        out.append(line)
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--license", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--strip", action="append", default=[])
    ap.add_argument("--licenses", action="append", default=[])
    ap.add_argument("binaries", nargs="+", metavar="ARCH=BINARY")
    a = ap.parse_args()
    with open(a.manifest) as f:
        manifest = f.read()
    m = re.search(r"^\s*version:\s*v(\S+)\s*$", manifest, re.M)
    if m is None:
        sys.exit("package.py: %s: no spec.version vX.Y.Z" % a.manifest)
    version = m.group(1)
    strip = dict(s.split("=", 1) for s in a.strip)
    licenses = dict(s.split("=", 1) for s in a.licenses)
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH") or 0)
    os.makedirs(a.out, exist_ok=True)
    sums = {}
    for spec in a.binaries:
        arch, binary = spec.split("=", 1)
        name = "kubectl-leaderd-%s-linux-%s.tar.gz" % (version, arch)
        if "/" + name not in manifest:
            sys.exit("package.py: %s: no platform's uri names %s"
                     % (a.manifest, name))
        sums[name] = archive(binary, a.license, licenses.get(arch),
                             os.path.join(a.out, name),
                             strip.get(arch, "strip"), mtime)
        print("plugin: %s/%s %s" % (a.out, name, sums[name]))
    with open(os.path.join(a.out, "SHA256SUMS"), "w") as f:
        for name in sorted(sums):
            f.write("%s  %s\n" % (sums[name], name))
    with open(os.path.join(a.out, "leaderd.yaml"), "w") as f:
        f.write(fill(manifest, sums))
    print("plugin: %s/leaderd.yaml" % a.out)


if __name__ == "__main__":
    main()
