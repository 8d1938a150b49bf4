"""The image's SBOM: /licenses/sbom.spdx.json, which `make image-bin`
writes beside the licences with deploy/image/sbom.py and mkrootfs.sh
puts in the image, and which `make image` also leaves beside the
tarball, one per architecture.

The SBOM under test is $LEADERD_LICENSES/sbom.spdx.json; with
$LEADERD_IMAGE (make image-test) also each architecture's copy in the
image and beside the tarball.  Checked, with Python's standard library
only (spdx_problems below is the part of the SPDX 2.3 JSON schema and
of the specification's rules that a document of packages and
relationships meets):
  - valid JSON; spdxVersion SPDX-2.3, dataLicense CC0-1.0, SPDXID,
    name, documentNamespace (an absolute URI, no "#"), creationInfo
    (created in UTC, creators); no field the schema does not have;
  - every package: SPDXID, name, downloadLocation; checksums,
    purposes, suppliers, external references and licence expressions
    of the forms the specification allows; filesAnalyzed false unless
    a verification code is given;
  - SPDX ids unique; every relationship of a known type between known
    elements; the document DESCRIBES one package;
  - that package is leaderd, with the version and revision `leaderd
    --version` prints and the SHA-256 of /leaderd as the image holds
    it; every component of COMPONENTS is a package with its version,
    its licence and a pkg:deb/debian purl of that version, and leaderd
    CONTAINS it;
  - a planted mistake of each kind (a required field gone, an id used
    twice, a version changed, a component dropped, ...) is refused, and
    so is a document that is not JSON;
  - sbom.py writes the same bytes twice from the same inputs, and
    refuses a bad COMPONENTS line and a version the apt lists lack
    (exit 2, naming it).
"""

import copy
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys
import urllib.parse

import pytest

from deploy_helpers import ROOT, need_tool
from test_image import mkrootfs

sys.path.insert(0, str(ROOT / "deploy" / "image"))
import oci  # noqa: E402

SBOM_PY = ROOT / "deploy" / "image" / "sbom.py"
SBOM = "sbom.spdx.json"

# The SPDX 2.3 JSON schema's fields (spdx-spec, schemas/spdx-schema-2-3).
DOC_REQUIRED = {"spdxVersion", "dataLicense", "SPDXID", "name",
                "documentNamespace", "creationInfo"}
DOC_FIELDS = DOC_REQUIRED | {
    "annotations", "comment", "externalDocumentRefs",
    "hasExtractedLicensingInfos", "revieweds", "documentDescribes",
    "packages", "files", "snippets", "relationships"}
CREATION_FIELDS = {"created", "creators", "comment", "licenseListVersion"}
PKG_REQUIRED = {"SPDXID", "name", "downloadLocation"}
PKG_FIELDS = PKG_REQUIRED | {
    "annotations", "attributionTexts", "builtDate", "checksums",
    "comment", "copyrightText", "description", "externalRefs",
    "filesAnalyzed", "hasFiles", "homepage", "licenseComments",
    "licenseConcluded", "licenseDeclared", "licenseInfoFromFiles",
    "originator", "packageFileName", "packageVerificationCode",
    "primaryPackagePurpose", "releaseDate", "sourceInfo", "summary",
    "supplier", "validUntilDate", "versionInfo"}
PKG_STRINGS = PKG_FIELDS - {"annotations", "attributionTexts",
                            "checksums", "externalRefs", "filesAnalyzed",
                            "hasFiles", "licenseInfoFromFiles",
                            "packageVerificationCode"}
PURPOSES = {"OTHER", "INSTALL", "ARCHIVE", "FIRMWARE", "APPLICATION",
            "FRAMEWORK", "LIBRARY", "CONTAINER", "SOURCE", "DEVICE",
            "OPERATING_SYSTEM", "FILE"}
DIGEST_LEN = {"SHA1": 40, "SHA224": 56, "SHA256": 64, "SHA384": 96,
              "SHA512": 128, "MD5": 32}
REF_CATEGORIES = {"OTHER", "PERSISTENT-ID", "SECURITY", "PACKAGE-MANAGER"}
REL_FIELDS = {"spdxElementId", "relatedSpdxElement", "relationshipType",
              "comment"}
REL_TYPES = {
    "VARIANT_OF", "COPY_OF", "PATCH_FOR", "TEST_DEPENDENCY_OF",
    "CONTAINED_BY", "DATA_FILE_OF", "OPTIONAL_COMPONENT_OF", "ANCESTOR_OF",
    "GENERATES", "CONTAINS", "OPTIONAL_DEPENDENCY_OF", "FILE_ADDED",
    "REQUIREMENT_DESCRIPTION_FOR", "DEV_DEPENDENCY_OF", "DEPENDENCY_OF",
    "BUILD_DEPENDENCY_OF", "DESCRIBES", "PREREQUISITE_FOR",
    "HAS_PREREQUISITE", "PROVIDED_DEPENDENCY_OF", "DYNAMIC_LINK",
    "DESCRIBED_BY", "METAFILE_OF", "DEPENDENCY_MANIFEST_OF",
    "PATCH_APPLIED", "RUNTIME_DEPENDENCY_OF", "TEST_OF", "TEST_TOOL_OF",
    "DEPENDS_ON", "SPECIFICATION_FOR", "FILE_MODIFIED",
    "DISTRIBUTION_ARTIFACT", "AMENDS", "DOCUMENTATION_OF",
    "GENERATED_FROM", "STATIC_LINK", "OTHER", "BUILD_TOOL_OF",
    "TEST_CASE_OF", "PACKAGE_OF", "DESCENDANT_OF", "FILE_DELETED",
    "EXPANDED_FROM_ARCHIVE", "DEV_TOOL_OF", "EXAMPLE_OF"}
# SPDX licence list identifiers this image's components may carry.
LICENSE_IDS = {"0BSD", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause",
               "curl", "GPL-2.0-only", "GPL-2.0-or-later", "ISC",
               "LGPL-2.1-only", "LGPL-2.1-or-later", "MIT", "MPL-2.0",
               "Zlib"}
SPDX_ID = re.compile(r"^SPDXRef-[A-Za-z0-9.-]+$")
CREATED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
AGENT = re.compile(r"^(Person|Organization|Tool): \S")
PURL = re.compile(r"^pkg:[a-z][a-z0-9.+-]*/[^\s?#@]+(@[^\s?#]+)?"
                  r"(\?[^\s#]+)?(#\S+)?$")


def load_sbom(text):
    """The document, or ValueError saying why it is not one."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise ValueError("the SBOM is not valid JSON: %s" % e)
    if not isinstance(doc, dict):
        raise ValueError("the SBOM is a JSON %s, not an object"
                         % type(doc).__name__)
    return doc


def licence_problems(expr, refs):
    """Why expr is not an SPDX licence expression of known identifiers
    (or a LicenseRef- the document defines), or []."""
    if expr in ("NONE", "NOASSERTION"):
        return []
    toks = re.findall(r"\(|\)|[^\s()]+", expr)
    out, depth, want_id = [], 0, True
    for t in toks:
        if t == "(" and want_id:
            depth += 1
        elif t == ")" and not want_id and depth:
            depth -= 1
        elif t in ("AND", "OR", "WITH") and not want_id:
            want_id = True
        elif want_id and t not in ("(", ")", "AND", "OR", "WITH"):
            if t not in LICENSE_IDS and t not in refs:
                out.append("licence %r is neither a known SPDX identifier "
                           "nor a LicenseRef- of the document" % t)
            want_id = False
        else:
            return ["licence expression %r: %r out of place" % (expr, t)]
    if want_id or depth:
        out.append("licence expression %r is incomplete" % expr)
    return out


def spdx_problems(doc):
    """What in doc breaks SPDX 2.3 (the JSON schema and the rules of
    the specification this document's kind of content falls under)."""
    p = []
    for k in sorted(DOC_REQUIRED - set(doc)):
        p.append("document: %s is missing" % k)
    for k in sorted(set(doc) - DOC_FIELDS):
        p.append("document: %s is no SPDX 2.3 field" % k)
    if doc.get("spdxVersion") != "SPDX-2.3":
        p.append("spdxVersion is %r, not SPDX-2.3" % doc.get("spdxVersion"))
    if doc.get("dataLicense") != "CC0-1.0":
        p.append("dataLicense is %r, not CC0-1.0" % doc.get("dataLicense"))
    if doc.get("SPDXID") != "SPDXRef-DOCUMENT":
        p.append("the document's SPDXID is %r" % doc.get("SPDXID"))
    if not isinstance(doc.get("name"), str) or not doc.get("name"):
        p.append("document: name is empty")
    ns = doc.get("documentNamespace", "")
    u = urllib.parse.urlsplit(ns if isinstance(ns, str) else "")
    if not u.scheme or not u.netloc or "#" in ns:
        p.append("documentNamespace %r is not an absolute URI without #"
                 % ns)
    ci = doc.get("creationInfo")
    if isinstance(ci, dict):
        for k in sorted(set(ci) - CREATION_FIELDS):
            p.append("creationInfo: %s is no SPDX 2.3 field" % k)
        if not CREATED.match(str(ci.get("created", ""))):
            p.append("creationInfo.created %r is not YYYY-MM-DDThh:mm:ssZ"
                     % ci.get("created"))
        cr = ci.get("creators")
        if not isinstance(cr, list) or not cr:
            p.append("creationInfo.creators is missing or empty")
        else:
            p += ["creator %r is not Person:, Organization: or Tool:" % c
                  for c in cr if not AGENT.match(str(c))]
    elif "creationInfo" in doc:
        p.append("creationInfo is not an object")
    refs = {e.get("licenseId") for e in doc.get("hasExtractedLicensingInfos",
                                                 [])}
    for e in doc.get("hasExtractedLicensingInfos", []):
        if not str(e.get("licenseId", "")).startswith("LicenseRef-") or \
                not e.get("extractedText"):
            p.append("hasExtractedLicensingInfos: %r needs a LicenseRef- "
                     "id and its text" % e.get("licenseId"))
    ids = ["SPDXRef-DOCUMENT"]
    pkgs = doc.get("packages", [])
    if not isinstance(pkgs, list) or not pkgs:
        p.append("packages: none")
        pkgs = []
    for i, pkg in enumerate(pkgs):
        where = "packages[%d] (%s)" % (i, pkg.get("name", "?"))
        for k in sorted(PKG_REQUIRED - set(pkg)):
            p.append("%s: %s is missing" % (where, k))
        for k in sorted(set(pkg) - PKG_FIELDS):
            p.append("%s: %s is no SPDX 2.3 package field" % (where, k))
        for k in sorted(PKG_STRINGS & set(pkg)):
            if not isinstance(pkg[k], str) or not pkg[k]:
                p.append("%s: %s is not a non-empty string" % (where, k))
        sid = pkg.get("SPDXID", "")
        ids.append(sid)
        if not SPDX_ID.match(str(sid)):
            p.append("%s: SPDXID %r is not SPDXRef-[A-Za-z0-9.-]+"
                     % (where, sid))
        dl = pkg.get("downloadLocation", "NONE")
        if dl not in ("NONE", "NOASSERTION") and \
                not re.match(r"^[a-z][a-z0-9+.-]*(\+[a-z]+)?://\S+$", str(dl)):
            p.append("%s: downloadLocation %r is not NONE, NOASSERTION or "
                     "a URL" % (where, dl))
        fa = pkg.get("filesAnalyzed", True)
        if not isinstance(fa, bool):
            p.append("%s: filesAnalyzed is not a boolean" % where)
        elif fa and "packageVerificationCode" not in pkg:
            p.append("%s: filesAnalyzed is true (or left out, which means "
                     "true) without a packageVerificationCode" % where)
        elif not fa and ("hasFiles" in pkg or
                         "packageVerificationCode" in pkg):
            p.append("%s: filesAnalyzed false with files" % where)
        for k in ("supplier", "originator"):
            if k in pkg and pkg[k] != "NOASSERTION" and \
                    not re.match(r"^(Person|Organization): \S", str(pkg[k])):
                p.append("%s: %s %r" % (where, k, pkg[k]))
        if "primaryPackagePurpose" in pkg and \
                pkg["primaryPackagePurpose"] not in PURPOSES:
            p.append("%s: primaryPackagePurpose %r"
                     % (where, pkg["primaryPackagePurpose"]))
        for c in pkg.get("checksums", []):
            n = DIGEST_LEN.get(c.get("algorithm"))
            if n is None or not re.match("^[0-9a-f]{%d}$" % n,
                                         str(c.get("checksumValue"))):
                p.append("%s: checksum %r" % (where, c))
        for r in pkg.get("externalRefs", []):
            if set(r) - {"referenceCategory", "referenceType",
                         "referenceLocator", "comment"} or \
                    r.get("referenceCategory") not in REF_CATEGORIES or \
                    not r.get("referenceType") or \
                    re.search(r"\s", str(r.get("referenceLocator", " "))):
                p.append("%s: external reference %r" % (where, r))
            elif r["referenceType"] == "purl" and \
                    not PURL.match(r["referenceLocator"]):
                p.append("%s: purl %r" % (where, r["referenceLocator"]))
        for k in ("licenseConcluded", "licenseDeclared"):
            if k in pkg:
                p += ["%s: %s: %s" % (where, k, x)
                      for x in licence_problems(str(pkg[k]), refs)]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        p.append("SPDX ids used more than once: %s" % ", ".join(map(str, dup)))
    described = set(doc.get("documentDescribes", []))
    for i, r in enumerate(doc.get("relationships", [])):
        where = "relationships[%d]" % i
        for k in sorted({"spdxElementId", "relatedSpdxElement",
                         "relationshipType"} - set(r)):
            p.append("%s: %s is missing" % (where, k))
        for k in sorted(set(r) - REL_FIELDS):
            p.append("%s: %s is no SPDX 2.3 field" % (where, k))
        if r.get("relationshipType") not in REL_TYPES:
            p.append("%s: type %r" % (where, r.get("relationshipType")))
        for k in ("spdxElementId", "relatedSpdxElement"):
            if k in r and r[k] not in ids and \
                    r[k] not in ("NONE", "NOASSERTION"):
                p.append("%s: %s %r names no element of the document"
                         % (where, k, r[k]))
        if r.get("spdxElementId") == "SPDXRef-DOCUMENT" and \
                r.get("relationshipType") == "DESCRIBES":
            described.add(r.get("relatedSpdxElement"))
    p += ["documentDescribes: %r names no element" % d
          for d in described if d not in ids]
    if not described:
        p.append("the document DESCRIBES nothing")
    return p


def read_components(licenses):
    return [l.split() for l in (licenses / "COMPONENTS").read_text()
            .splitlines() if l.strip() and not l.startswith("#")]


def leaderd_problems(doc, components, version_line, leaderd_sha256):
    """What in doc disagrees with COMPONENTS, `leaderd --version` and
    the image's /leaderd."""
    p = []
    m = re.match(r"leaderd (\S+) \(revision (\S+)\)$", version_line.strip())
    assert m, version_line
    version, revision = m.groups()
    pkgs = {x.get("SPDXID"): x for x in doc.get("packages", [])}
    by_name = {x.get("name"): x for x in doc.get("packages", [])}
    rels = doc.get("relationships", [])
    roots = [r.get("relatedSpdxElement") for r in rels
             if r.get("spdxElementId") == "SPDXRef-DOCUMENT" and
             r.get("relationshipType") == "DESCRIBES"]
    if len(roots) != 1 or pkgs.get(roots[0], {}).get("name") != "leaderd":
        return p + ["the document DESCRIBES %r, not leaderd alone" % roots]
    root = pkgs[roots[0]]
    if root.get("versionInfo") != version:
        p.append("leaderd's versionInfo is %r; leaderd --version says %s"
                 % (root.get("versionInfo"), version))
    if "revision %s" % revision not in root.get("sourceInfo", ""):
        p.append("leaderd's sourceInfo %r does not name the revision %s"
                 % (root.get("sourceInfo"), revision))
    sums = {c["algorithm"]: c["checksumValue"]
            for c in root.get("checksums", [])}
    if sums.get("SHA256") != leaderd_sha256:
        p.append("leaderd's SHA256 is %r; the image's /leaderd hashes to "
                 "%s" % (sums.get("SHA256"), leaderd_sha256))
    contained = {r.get("relatedSpdxElement") for r in rels
                 if r.get("spdxElementId") == root["SPDXID"] and
                 r.get("relationshipType") == "CONTAINS"}
    names = set()
    for name, ver, lic in components:
        names.add(name)
        if name == "leaderd":
            if (ver, lic) != (version, root.get("licenseDeclared")):
                p.append("COMPONENTS has leaderd %s %s; the SBOM %s %s" % (
                    ver, lic, version, root.get("licenseDeclared")))
            continue
        pkg = by_name.get(name)
        if pkg is None:
            p.append("COMPONENTS lists %s %s; the SBOM has no such package"
                     % (name, ver))
            continue
        if pkg.get("versionInfo") != ver:
            p.append("%s: versionInfo %r; COMPONENTS says %s"
                     % (name, pkg.get("versionInfo"), ver))
        if pkg.get("licenseDeclared") != lic and not (
                lic not in LICENSE_IDS and
                pkg.get("licenseDeclared", "").startswith("LicenseRef-")):
            p.append("%s: licenseDeclared %r; COMPONENTS says %s"
                     % (name, pkg.get("licenseDeclared"), lic))
        purls = [r["referenceLocator"] for r in pkg.get("externalRefs", [])
                 if r.get("referenceType") == "purl"]
        if len(purls) != 1:
            p.append("%s: %d purls, not one" % (name, len(purls)))
            continue
        m = re.match(r"^pkg:deb/debian/([a-z0-9.+-]+)@([^?]+)\?(.*)$",
                     purls[0])
        q = dict(x.partition("=")[::2] for x in m.group(3).split("&")) \
            if m else {}
        if not m or urllib.parse.unquote(m.group(2)) != ver or \
                not q.get("arch") or \
                not re.match(r"^debian-\d+$", q.get("distro", "")):
            p.append("%s: purl %r is not pkg:deb/debian/SOURCE@%s?arch=..."
                     "&distro=debian-N" % (name, purls[0], ver))
        if name not in pkg.get("sourceInfo", "") or \
                "Debian" not in pkg.get("sourceInfo", "") + \
                pkg.get("supplier", ""):
            p.append("%s: sourceInfo %r names no Debian source package"
                     % (name, pkg.get("sourceInfo")))
        if pkg["SPDXID"] not in contained:
            p.append("%s: leaderd does not CONTAIN it" % name)
    extra = set(by_name) - names - {"ca-certificates"}
    if extra:
        p.append("packages COMPONENTS does not list: %s"
                 % ", ".join(sorted(map(str, extra))))
    return p


@pytest.fixture(scope="module")
def sbom_text(licenses):
    path = licenses / SBOM
    assert path.is_file(), f"{path}: no SBOM (make image-bin writes it)"
    return path.read_text()


@pytest.fixture(scope="module")
def doc(sbom_text):
    return load_sbom(sbom_text)


@pytest.fixture(scope="module")
def version_line(leaderd):
    return subprocess.run([str(leaderd), "--version"], capture_output=True,
                          text=True, timeout=10).stdout


@pytest.fixture(scope="module")
def rootfs(leaderd, licenses, tmp_path_factory):
    """What mkrootfs.sh (the Dockerfile's build stage, make
    image-rootfs) makes of this binary and these licences."""
    return mkrootfs(leaderd, licenses,
                    tmp_path_factory.mktemp("sbom") / "rootfs")


def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def test_valid_spdx_2_3(doc):
    assert spdx_problems(doc) == []


def test_components_versions_and_binary(doc, licenses, version_line,
                                        rootfs):
    """Every component with its version, leaderd with --version's
    version and revision and the SHA-256 of the image's /leaderd."""
    assert leaderd_problems(doc, read_components(licenses), version_line,
                            sha256(rootfs / "leaderd")) == []
    # The image holds this SBOM.
    assert (rootfs / "licenses" / SBOM).read_bytes() == \
        (licenses / SBOM).read_bytes()
    print("SBOM: %d packages: %s" % (len(doc["packages"]), ", ".join(
        "%s %s" % (x["name"], x["versionInfo"]) for x in doc["packages"])))


def drop_component(d, name):
    sid = [x["SPDXID"] for x in d["packages"] if x["name"] == name][0]
    d["packages"] = [x for x in d["packages"] if x["SPDXID"] != sid]
    d["relationships"] = [r for r in d["relationships"]
                          if sid not in (r["spdxElementId"],
                                         r["relatedSpdxElement"])]


def pkg(d, name):
    return [x for x in d["packages"] if x["name"] == name][0]


# (what is planted, the edit, a word of the problem it must raise).
PLANTS = [
    ("spdxVersion gone", lambda d: d.pop("spdxVersion"), "spdxVersion"),
    ("creationInfo gone", lambda d: d.pop("creationInfo"), "creationInfo"),
    ("documentNamespace gone", lambda d: d.pop("documentNamespace"),
     "documentNamespace"),
    ("a package's downloadLocation gone",
     lambda d: pkg(d, "curl").pop("downloadLocation"), "downloadLocation"),
    ("a package's name gone", lambda d: d["packages"][1].pop("name"),
     "name is missing"),
    ("created not in UTC",
     lambda d: d["creationInfo"].update(created="2026-12-05 04:00"),
     "created"),
    ("an id used twice",
     lambda d: pkg(d, "libev").update(SPDXID=pkg(d, "curl")["SPDXID"]),
     "more than once"),
    ("a misspelt field", lambda d: pkg(d, "jansson").update(
        licence="MIT"), "no SPDX 2.3 package field"),
    ("filesAnalyzed left out", lambda d: pkg(d, "mbedtls").pop(
        "filesAnalyzed"), "packageVerificationCode"),
    ("a licence that is no identifier", lambda d: pkg(d, "libyaml").update(
        licenseDeclared="MIT License"), "licence"),
    ("a relationship to nothing", lambda d: d["relationships"].append(
        {"spdxElementId": d["packages"][0]["SPDXID"],
         "relationshipType": "CONTAINS",
         "relatedSpdxElement": "SPDXRef-Package-zlib"}), "names no element"),
    ("an unknown relationship", lambda d: d["relationships"][1].update(
        relationshipType="LINKS"), "type"),
    ("a purl with a space", lambda d: pkg(d, "curl")["externalRefs"][0]
     .update(referenceLocator="pkg:deb/debian/curl 8"), "external reference"),
    ("a component's version changed", lambda d: pkg(d, "curl").update(
        versionInfo="8.14.1-2+deb13u4"), "versionInfo"),
    ("a component's purl version changed", lambda d: pkg(d, "mbedtls")
     ["externalRefs"][0].update(referenceLocator="pkg:deb/debian/mbedtls@"
                                "3.6.6-1?arch=source&distro=debian-14"),
     "purl"),
    ("a component dropped", lambda d: drop_component(d, "libyaml"),
     "libyaml"),
    ("a component not contained", lambda d: d.update(relationships=[
        r for r in d["relationships"]
        if r["relatedSpdxElement"] != pkg(d, "jansson")["SPDXID"]]),
     "CONTAIN"),
    ("leaderd's version changed", lambda d: d["packages"][0].update(
        versionInfo="0.0.9"), "versionInfo"),
    ("leaderd's revision changed", lambda d: d["packages"][0].update(
        sourceInfo="built from leaderd's source at revision 0000000"),
     "revision"),
    ("leaderd's checksum changed", lambda d: d["packages"][0]["checksums"]
     [0].update(checksumValue="0" * 64), "hashes to"),
]


@pytest.mark.parametrize("what,edit,word", PLANTS,
                         ids=[p[0] for p in PLANTS])
def test_planted_mistake_is_refused(doc, licenses, version_line, rootfs,
                                    what, edit, word):
    """The checks can fail: each planted mistake is named."""
    d = copy.deepcopy(doc)
    edit(d)
    got = spdx_problems(d) + leaderd_problems(
        d, read_components(licenses), version_line,
        sha256(rootfs / "leaderd"))
    assert any(word in g for g in got), (what, got)


def test_not_json_is_refused(sbom_text):
    with pytest.raises(ValueError, match="not valid JSON"):
        load_sbom(sbom_text[:-20])
    with pytest.raises(ValueError, match="not an object"):
        load_sbom("[]")


def run_sbom_py(licenses, leaderd, out, *extra, epoch="1764907200"):
    need_tool("strip", "install binutils (build-essential)")
    env = dict(os.environ, SOURCE_DATE_EPOCH=epoch)
    return subprocess.run(
        [sys.executable, str(SBOM_PY), str(licenses), str(out), "--arch",
         "amd64", "--binary", str(leaderd), "--revision", "test",
         "--apt-dir", str(ROOT / "build" / "static" / "apt")] + list(extra),
        capture_output=True, text=True, timeout=120, env=env)


def host_libc(licenses):
    """--host-package for this build's C library, as the Makefile
    passes it for a native build."""
    names = {w[0] for w in read_components(licenses)}
    return [] if not names & {"musl", "glibc"} else [
        "--host-package", "musl=musl-dev" if "musl" in names
        else "glibc=libc6-dev"]


def test_generator_is_deterministic(licenses, leaderd, tmp_path):
    """The same inputs give the same bytes (the image's layer stays
    reproducible), dated SOURCE_DATE_EPOCH."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for out in (a, b):
        proc = run_sbom_py(licenses, leaderd, out, *host_libc(licenses))
        assert proc.returncode == 0, proc.stderr
    assert a.read_bytes() == b.read_bytes()
    d = load_sbom(a.read_text())
    assert d["creationInfo"]["created"] == "2025-12-05T04:00:00Z"
    assert spdx_problems(d) == []


def test_generator_refuses_bad_input(licenses, leaderd, tmp_path):
    """A COMPONENTS line short of a field, and a version the apt lists
    do not hold: exit 2, saying where and what."""
    bad = tmp_path / "licenses"
    bad.mkdir()
    lines = (licenses / "COMPONENTS").read_text().splitlines()
    (bad / "COMPONENTS").write_text("\n".join(
        l if not l.startswith("curl ") else "curl 8.14.1" for l in lines)
        + "\n")
    proc = run_sbom_py(bad, leaderd, tmp_path / "out.json")
    assert proc.returncode == 2, proc
    n = [l.startswith("curl ") for l in lines].index(True) + 1
    assert f"COMPONENTS:{n}: 'curl 8.14.1' has 2 fields" in proc.stderr
    (bad / "COMPONENTS").write_text("\n".join(
        l if not l.startswith("curl ") else "curl 0.0-1 curl"
        for l in lines) + "\n")
    proc = run_sbom_py(bad, leaderd, tmp_path / "out.json",
                       *host_libc(licenses))
    assert proc.returncode == 2, proc
    assert "curl=0.0-1" in proc.stderr, proc.stderr
    assert not (tmp_path / "out.json").exists()


def test_image_and_beside_the_tarball(image_archs, tmp_path):
    """make image: each architecture's image holds its SBOM in
    /licenses, valid, with that architecture's /leaderd checksum and
    components, and the same file is beside the tarball,
    leaderd-VERSION-ARCH.spdx.json."""
    image, archs = image_archs
    for arch in archs:
        _, layers = oci.read_image(str(image), None, arch)
        root = tmp_path / arch / "rootfs"
        oci.extract(layers, str(root))
        text = (root / "licenses" / SBOM).read_text()
        d = load_sbom(text)
        assert spdx_problems(d) == [], arch
        version = d["packages"][0]["versionInfo"]
        revision = re.search(r"revision (\S+)",
                             d["packages"][0]["sourceInfo"]).group(1)
        assert leaderd_problems(
            d, read_components(root / "licenses"),
            "leaderd %s (revision %s)" % (version, revision),
            sha256(root / "leaderd")) == [], arch
        assert d["name"].endswith("-" + arch)
        beside = image.parent / ("leaderd-%s-%s.spdx.json" % (version, arch))
        assert beside.is_file(), f"{beside}: not written by make image"
        assert beside.read_text() == text, arch


@pytest.fixture(scope="module")
def image_archs():
    """The image `make image` built ($LEADERD_IMAGE, as make image-test
    passes it) and its architectures; without one this test has nothing
    to check, and says so."""
    given = os.environ.get("LEADERD_IMAGE")
    if not given:
        pytest.skip("no $LEADERD_IMAGE: make image-test checks the image "
                    "make image built, and the SBOMs beside it")
    archs = os.environ.get("LEADERD_IMAGE_ARCHS", "amd64").split()
    return pathlib.Path(given), archs
