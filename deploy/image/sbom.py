#!/usr/bin/env python3
"""sbom.py -- the SPDX 2.3 JSON SBOM of leaderd's image.

    sbom.py LICENSES OUT --arch ARCH --binary BIN [--revision REV]
            [--strip STRIP] [--apt-dir DIR] [--host-package NAME=PKG]
            [--ca-certificates]

Reads LICENSES/COMPONENTS, the list of what the static binary is built
from (deploy/image/static.mk writes it: NAME VERSION LICENCE, one a
line), and writes OUT, an SPDX 2.3 document in JSON:

  - leaderd, the root package: the document DESCRIBES it; its version,
    the source revision REV (what `leaderd --version` prints), and the
    SHA-256 and SHA-1 of /leaderd as the image holds it (BIN stripped
    with `STRIP --strip-unneeded`, as deploy/image/mkrootfs.sh does);
  - one package per other component, which leaderd CONTAINS (linked in
    statically): its name, version and licence (an SPDX identifier; one
    the list below does not know becomes a LicenseRef- with the text of
    NAME.txt), the Debian source package it was built from, with the
    source's .dsc as downloadLocation and checksum, the Debian release
    that lists it, the patches of deploy/image/patches applied to it,
    and a purl, pkg:deb/debian/SOURCE@VERSION?arch=source&distro=debian-N;
  - with --ca-certificates, Debian's ca-certificates, whose bundle the
    image holds at /etc/ssl/certs/ca-certificates.crt.

Each component is built from the source package of its name, fetched
with apt through static.mk's private deb-src lists (DIR, by default
build/static/apt): `apt-cache madison` names the releases that list
that version, the oldest of which is the purl's distro, and `apt-get
--print-uris source` its .dsc.  A component named by --host-package
(the C library of a native build) is linked from the build host's
binary package PKG instead: its source package and the host's release
come from dpkg and /etc/os-release.

The purls name Debian *source* packages (arch=source): nothing in the
image is a Debian binary package; each library was compiled here from
Debian's source, and Debian's security tracker, which scanners match
against, is keyed by source package.

Where it goes, and why both places: registries and scanners expect an
image's SBOM beside the image, attached to the digest of the platform
it describes (BuildKit's SBOM attestations, `cosign attest --type
spdxjson`, OCI referrers), and each architecture's SBOM names its own
binary's checksum: `make image` leaves one per architecture beside the
tarball, build/image/leaderd-VERSION-ARCH.spdx.json, to attach when the
image is pushed.  The copy in /licenses, next to the licence texts the
image already carries, travels with the image wherever it is copied,
for whoever holds only the image (no scanner picks it up there by
itself: none reads SBOM files at an arbitrary path in an image).

The document is a function of its inputs: creationInfo.created is
SOURCE_DATE_EPOCH (the Makefile sets it to the commit's time), and the
documentNamespace ends in a UUID derived from the packages, so the same
build writes the same bytes and the image's layer stays reproducible.

Exit 2, with what is wrong and where, on bad input.
"""

import argparse
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
# The Debian releases a pin may come from, by codename.
DEBIAN_RELEASES = {"buster": 10, "bullseye": 11, "bookworm": 12,
                   "trixie": 13, "forky": 14, "duke": 15}
# SPDX licence list identifiers a COMPONENTS line may name as they are.
SPDX_LICENSES = {"0BSD", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause",
                 "curl", "GPL-2.0-only", "GPL-2.0-or-later", "ISC",
                 "LGPL-2.1-only", "LGPL-2.1-or-later", "MIT", "MPL-2.0",
                 "Zlib"}
NAMESPACE = "https://spdx.org/spdxdocs/"
CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


class SbomError(Exception):
    """Bad input: the message says what and where."""


def read_components(path):
    """[(name, version, licence)] from COMPONENTS, leaderd first."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise SbomError("%s: %s (make image-bin writes it)"
                        % (path, e.strerror))
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        w = line.split()
        if len(w) != 3:
            raise SbomError("%s:%d: %r has %d fields; a component is "
                            "NAME VERSION LICENCE" % (path, n, line, len(w)))
        if w[0] in (c[0] for c in out):
            raise SbomError("%s:%d: %s is listed twice" % (path, n, w[0]))
        out.append(tuple(w))
    if not out or out[0][0] != "leaderd":
        raise SbomError("%s: the first component must be leaderd" % path)
    return out


def run(argv, what):
    try:
        p = subprocess.run(argv, capture_output=True, text=True,
                           timeout=120)
    except OSError as e:
        raise SbomError("%s: %s: %s" % (what, argv[0], e.strerror))
    if p.returncode != 0:
        raise SbomError("%s: %s exited %d: %s" % (
            what, " ".join(argv), p.returncode, p.stderr.strip()))
    return p.stdout


def apt_opts(apt_dir):
    """static.mk's STATIC_APT: its deb-src lists, not the machine's."""
    d = os.path.abspath(apt_dir)
    return ["-o", "Dir::Etc::SourceList=/dev/null",
            "-o", "Dir::Etc::SourceParts=" + os.path.join(d, "sources.d"),
            "-o", "Dir::State::Lists=" + os.path.join(d, "lists"),
            "-o", "Dir::Cache=" + os.path.join(d, "cache")]


def debian_release(suite, what):
    """12 for "bookworm", "bookworm-security" and "bookworm-updates"."""
    code = suite.split("-")[0]
    if code not in DEBIAN_RELEASES:
        raise SbomError("%s: Debian release %r is not one sbom.py knows "
                        "(%s): add it to DEBIAN_RELEASES" % (
                            what, code, ", ".join(DEBIAN_RELEASES)))
    return DEBIAN_RELEASES[code]


def source_origin(apt_dir, name, version):
    """(suites, .dsc URL, .dsc file name, .dsc SHA-256) of the Debian
    source package name=version in static.mk's lists."""
    what = "%s=%s" % (name, version)
    if not os.path.isdir(os.path.join(apt_dir, "lists")):
        raise SbomError("%s: no apt lists under %s (make image-bin fetches "
                        "them; or pass --apt-dir)" % (what, apt_dir))
    out = run(["apt-cache"] + apt_opts(apt_dir) + ["madison", name], what)
    suites = []
    for line in out.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) == 3 and f[0] == name and f[1] == version and \
                f[2].endswith(" Sources"):
            suites.append(f[2].split()[1].split("/")[0])
    if not suites:
        raise SbomError("%s is not in the source lists under %s: a "
                        "COMPONENTS version that static.mk did not fetch, "
                        "or lists read since (make image-bin again)"
                        % (what, apt_dir))
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            ["apt-get", "-qq", "--print-uris"] + apt_opts(apt_dir) +
            ["source", what], capture_output=True, text=True, cwd=tmp,
            timeout=120)
    m = re.search(r"^'(\S+\.dsc)' (\S+) \d+ SHA256:([0-9a-f]{64})$",
                  out.stdout, re.M)
    if out.returncode != 0 or not m:
        raise SbomError("%s: apt-get --print-uris source names no .dsc: %s"
                        % (what, (out.stderr or out.stdout).strip()))
    return suites, m.group(1), m.group(2), m.group(3)


def host_origin(component, pkg):
    """(source package, its version, binary version, arch, release) of
    the build host's package pkg."""
    out = run(["dpkg-query", "-W", "-f",
               "${source:Package} ${source:Version} ${Version} "
               "${Architecture}", pkg], "--host-package %s=%s"
              % (component, pkg))
    w = out.split()
    if len(w) != 4:
        raise SbomError("--host-package %s=%s: dpkg-query said %r"
                        % (component, pkg, out))
    rel = None
    try:
        with open("/etc/os-release", encoding="utf-8") as f:
            osr = dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l)
        if osr.get("ID") == "debian":
            rel = osr.get("VERSION_CODENAME", "").strip('"')
    except OSError:
        pass
    if not rel:
        raise SbomError("--host-package %s=%s: the build host is not a "
                        "Debian release (/etc/os-release)" % (component, pkg))
    return w[0], w[1], w[2], w[3], rel


def purl_deb(name, version, distro, arch="source"):
    """pkg:deb/debian/NAME@VERSION?arch=...&distro=debian-N (purl-spec:
    the version percent-encoded, "+" as %2B, ":" kept)."""
    return "pkg:deb/debian/%s@%s?arch=%s&distro=debian-%d" % (
        name, urllib.parse.quote(version, safe=":~"), arch, distro)


def spdx_id(name):
    return "SPDXRef-Package-" + re.sub(r"[^A-Za-z0-9.-]", "-", name)


def licence(lic, name, licenses_dir, extracted):
    """lic as an SPDX licence expression: itself when the list knows it,
    else a LicenseRef- carrying NAME.txt's text."""
    if lic in SPDX_LICENSES:
        return lic
    ref = "LicenseRef-" + re.sub(r"[^A-Za-z0-9.-]", "-", lic)
    if ref not in {e["licenseId"] for e in extracted}:
        path = os.path.join(licenses_dir, name + ".txt")
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            raise SbomError("%s: %s (the licence %s is not an SPDX "
                            "identifier sbom.py knows, so its text is "
                            "needed)" % (path, e.strerror, lic))
        extracted.append({"licenseId": ref, "name": lic,
                          "extractedText": text})
    return ref


def stripped_digests(binary, strip):
    """(SHA-256, SHA-1) of binary as mkrootfs.sh puts it in the image."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "leaderd")
        run([strip, "--strip-unneeded", "-o", out, binary],
            "--binary %s" % binary)
        with open(out, "rb") as f:
            data = f.read()
    return hashlib.sha256(data).hexdigest(), hashlib.sha1(data).hexdigest()


def created_time():
    """SOURCE_DATE_EPOCH (reproducible-builds.org), else now, as SPDX
    wants it: YYYY-MM-DDThh:mm:ssZ."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        if not epoch.isdigit():
            raise SbomError("SOURCE_DATE_EPOCH=%r: not a number of seconds"
                            % epoch)
        t = datetime.datetime.fromtimestamp(int(epoch),
                                            datetime.timezone.utc)
    else:
        t = datetime.datetime.now(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def patches_of(name, patches_dir):
    """The patches static.mk applies to name: patches/NAME-*.patch."""
    if not os.path.isdir(patches_dir):
        return []
    return sorted(f for f in os.listdir(patches_dir)
                  if f.startswith(name + "-") and f.endswith(".patch"))


def build(args):
    comps = read_components(os.path.join(args.licenses, "COMPONENTS"))
    hosts = {}
    for h in args.host_package:
        c, _, pkg = h.partition("=")
        if not pkg:
            raise SbomError("--host-package %r: want NAME=PACKAGE" % h)
        hosts[c] = pkg
    unknown = set(hosts) - {c[0] for c in comps}
    if unknown:
        raise SbomError("--host-package names %s, which COMPONENTS does "
                        "not list" % ", ".join(sorted(unknown)))
    extracted = []
    name, version, lic = comps[0]
    sha256, sha1 = stripped_digests(args.binary, args.strip)
    root = {
        "SPDXID": spdx_id("leaderd"),
        "name": "leaderd",
        "versionInfo": version,
        "packageFileName": "leaderd",
        "primaryPackagePurpose": "APPLICATION",
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False,
        "checksums": [{"algorithm": "SHA256", "checksumValue": sha256},
                      {"algorithm": "SHA1", "checksumValue": sha1}],
        "licenseConcluded": licence(lic, name, args.licenses, extracted),
        "licenseDeclared": licence(lic, name, args.licenses, extracted),
        "copyrightText": "NOASSERTION",
        "sourceInfo": "built from leaderd's source at revision %s"
                      % args.revision,
        "summary": "leaderd %s (revision %s), the image's /leaderd for "
                   "linux/%s: one static binary" % (version, args.revision,
                                                    args.arch),
        "externalRefs": [{
            "referenceCategory": "PACKAGE-MANAGER",
            "referenceType": "purl",
            "referenceLocator": "pkg:generic/leaderd@%s?arch=%s" % (
                urllib.parse.quote(version, safe=""), args.arch)}],
    }
    packages, rels = [root], []
    for name, version, lic in comps[1:]:
        expr = licence(lic, name, args.licenses, extracted)
        pkg = {
            "SPDXID": spdx_id(name),
            "name": name,
            "versionInfo": version,
            "supplier": "Organization: Debian",
            "primaryPackagePurpose": "LIBRARY",
            "filesAnalyzed": False,
            "licenseConcluded": expr,
            "licenseDeclared": expr,
            "copyrightText": "NOASSERTION",
        }
        if name in hosts:
            src, src_version, bin_version, arch, rel = \
                host_origin(name, hosts[name])
            if bin_version != version:
                raise SbomError("COMPONENTS lists %s %s, but the build "
                                "host has %s %s" % (name, version,
                                                    hosts[name], bin_version))
            distro = debian_release(rel, name)
            pkg["downloadLocation"] = "NOASSERTION"
            pkg["sourceInfo"] = (
                "linked statically from the build host's Debian binary "
                "package %s %s (%s, Debian %d %s), built from the source "
                "package %s %s" % (hosts[name], bin_version, arch, distro,
                                   rel, src, src_version))
            purl = purl_deb(src, src_version, distro)
        else:
            suites, url, dsc, dsc_sha = source_origin(args.apt_dir, name,
                                                      version)
            distro = min(debian_release(s, name) for s in suites)
            pkg["downloadLocation"] = url
            pkg["packageFileName"] = dsc
            pkg["checksums"] = [{"algorithm": "SHA256",
                                 "checksumValue": dsc_sha}]
            patches = patches_of(name, args.patches)
            pkg["sourceInfo"] = (
                "built from the Debian source package %s %s (%s)%s, "
                "linked statically into /leaderd" % (
                    name, version, ", ".join(sorted(set(suites))),
                    ", with deploy/image/patches/" +
                    ", deploy/image/patches/".join(patches) + " applied"
                    if patches else ""))
            purl = purl_deb(name, version, distro)
        pkg["externalRefs"] = [{"referenceCategory": "PACKAGE-MANAGER",
                                "referenceType": "purl",
                                "referenceLocator": purl}]
        packages.append(pkg)
        rels.append({"spdxElementId": root["SPDXID"],
                     "relationshipType": "CONTAINS",
                     "relatedSpdxElement": pkg["SPDXID"],
                     "comment": "linked statically into /leaderd"})
    if args.ca_certificates:
        src, src_version, bin_version, _, rel = \
            host_origin("ca-certificates", "ca-certificates")
        distro = debian_release(rel, "ca-certificates")
        pkg = {
            "SPDXID": spdx_id("ca-certificates"),
            "name": "ca-certificates",
            "versionInfo": bin_version,
            "supplier": "Organization: Debian",
            "primaryPackagePurpose": "FILE",
            "downloadLocation": "NOASSERTION",
            "filesAnalyzed": False,
            # The bundle is made from Mozilla's certdata.txt (MPL-2.0);
            # Debian's scripts around it (GPL-2+) are not in the image.
            "licenseConcluded": "MPL-2.0",
            "licenseDeclared": "MPL-2.0",
            "copyrightText": "NOASSERTION",
            "sourceInfo": "the build host's Debian package ca-certificates "
                          "%s (Debian %d %s): its bundle, %s" % (
                              bin_version, distro, rel, CA_BUNDLE),
            "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER",
                              "referenceType": "purl",
                              "referenceLocator": purl_deb(
                                  src, src_version, distro)}],
        }
        packages.append(pkg)
        rels.append({"spdxElementId": root["SPDXID"],
                     "relationshipType": "CONTAINS",
                     "relatedSpdxElement": pkg["SPDXID"],
                     "comment": "the image's " + CA_BUNDLE})
    rels.insert(0, {"spdxElementId": "SPDXRef-DOCUMENT",
                    "relationshipType": "DESCRIBES",
                    "relatedSpdxElement": root["SPDXID"]})
    body = json.dumps([packages, rels, extracted], sort_keys=True)
    doc_name = "leaderd-%s-linux-%s" % (comps[0][1], args.arch)
    doc = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": doc_name,
        "documentNamespace": NAMESPACE + doc_name + "-" +
                             str(uuid.uuid5(uuid.NAMESPACE_URL,
                                            NAMESPACE + body)),
        "creationInfo": {
            "created": created_time(),
            "creators": ["Tool: leaderd-deploy-image-sbom.py",
                         "Organization: leaderd"],
            "comment": "the image's components, from /licenses/COMPONENTS "
                       "(deploy/image/static.mk's pins)",
        },
        "documentDescribes": [root["SPDXID"]],
        "packages": packages,
        "relationships": rels,
    }
    if extracted:
        doc["hasExtractedLicensingInfos"] = extracted
    return doc


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="sbom.py", description="Write the SPDX 2.3 JSON SBOM of "
        "leaderd's image from its /licenses/COMPONENTS.")
    ap.add_argument("licenses", help="the licence directory (COMPONENTS)")
    ap.add_argument("out", help="the SBOM to write (- for stdout)")
    ap.add_argument("--arch", required=True, help="amd64, arm64")
    ap.add_argument("--binary", required=True,
                    help="the static leaderd, before mkrootfs.sh strips it")
    ap.add_argument("--revision", default="unknown",
                    help="the source revision (leaderd --version)")
    ap.add_argument("--strip", default="strip",
                    help="the strip of the binary's architecture")
    ap.add_argument("--apt-dir", default="build/static/apt",
                    help="static.mk's apt directory (its deb-src lists)")
    ap.add_argument("--patches", default=os.path.join(HERE, "patches"),
                    help="the directory of the patches static.mk applies")
    ap.add_argument("--host-package", action="append", default=[],
                    metavar="NAME=PACKAGE",
                    help="component NAME is linked from the build host's "
                    "Debian package PACKAGE, not built from source here")
    ap.add_argument("--ca-certificates", action="store_true",
                    help="list Debian's ca-certificates (the image's CA "
                    "bundle)")
    args = ap.parse_args(argv)
    try:
        doc = build(args)
    except SbomError as e:
        print("sbom.py: %s" % e, file=sys.stderr)
        return 2
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        tmp = args.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
