"""The static build's pinned sources (deploy/image/static.mk) against the
Debian archive: each pin must be the newest version of its Debian
release (the suite it is taken from, and that release's -updates and
-security suites), so that a security update of Mbed TLS, curl or the
others is never left unnoticed behind a pin.

The archive's lists are read afresh with apt, through the same deb-src
list static.mk builds from (its STATIC_SOURCES), into build/pins-apt
(kept, so that a second run fetches only what changed).  If the archive
cannot be read, every pin fails, saying so: an unchecked pin is not a
current one.

A newer version that the archive lists but whose files its mirror does
not serve cannot be built from; static.mk's PINS_UNSERVED names such
versions (NAME=VERSION).  This test checks that each of them is still
unserved, and fails as soon as one is served, or when it is stale.
"""

import os
import re
import subprocess
import urllib.error
import urllib.request

import pytest

from deploy_helpers import ROOT, need_tool

STATIC_MK = ROOT / "deploy" / "image" / "static.mk"
APT_DIR = ROOT / "build" / "pins-apt"


def read_static_mk():
    """(pins {source package: version}, unserved {(name, version)},
    the deb-src list text) from static.mk."""
    text = STATIC_MK.read_text()
    var = dict(re.findall(r"^([A-Z_]+)\t* *=[ \t]*(\S.*?)\s*$", text, re.M))
    pins = {}
    for name, ref in re.findall(r"^src_deb_(\w+)\s*=\s*\$\((\w+)\)\s*$",
                                text, re.M):
        pins[name] = var[ref]
    unserved = set()
    for w in var.get("PINS_UNSERVED", "").split():
        name, _, version = w.partition("=")
        unserved.add((name, version))
    m = re.search(r"^define STATIC_SOURCES\n(.*?)^endef", text, re.M | re.S)
    assert m, "static.mk has no STATIC_SOURCES list"
    return pins, unserved, m.group(1)


PINS, UNSERVED, SOURCES = read_static_mk()


def apt_opts():
    return ["-o", "Dir::Etc::SourceList=/dev/null",
            "-o", "Dir::Etc::SourceParts=%s" % (APT_DIR / "sources.d"),
            "-o", "Dir::State::Lists=%s" % (APT_DIR / "lists"),
            "-o", "Dir::Cache=%s" % (APT_DIR / "cache")]


def run(args, timeout=300):
    return subprocess.run(args, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def archive():
    """{source package: [(version, suite)]} for every pinned package,
    from freshly updated lists; fails (every row) if the archive cannot
    be read."""
    need_tool("apt-get", "the pin check reads the Debian archive with apt")
    for d in ("sources.d", "lists/partial", "cache/archives/partial"):
        (APT_DIR / d).mkdir(parents=True, exist_ok=True)
    (APT_DIR / "sources.d" / "src.sources").write_text(SOURCES)
    p = run(["apt-get", "-q", "--error-on=any"] + apt_opts() + ["update"])
    if p.returncode != 0:
        pytest.fail("cannot read the Debian archive's lists, so the pins "
                    "of %s are NOT checked (apt-get update exited %d):\n%s"
                    % (STATIC_MK.relative_to(ROOT), p.returncode, p.stdout))
    p = run(["apt-cache"] + apt_opts() + ["madison"] + sorted(PINS))
    if p.returncode != 0:
        pytest.fail("apt-cache madison failed:\n%s" % p.stdout)
    rows = {}
    for line in p.stdout.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) != 3 or not f[2].endswith(" Sources"):
            continue
        suite = f[2].split()[1].split("/")[0]
        rows.setdefault(f[0], []).append((f[1], suite))
    return rows


def newer(a, b):
    return subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).\
        returncode == 0


def release_suites(rows, pin):
    """The suites of the Debian releases that list pin: for a pin from
    trixie (or trixie-security), trixie, trixie-updates and
    trixie-security."""
    rels = {s.split("-")[0] for v, s in rows if v == pin}
    return {r + x for r in rels for x in ("", "-updates", "-security")}


def served(name, version):
    """Whether the mirror serves the files of name=version that are its
    own (the .dsc and Debian's part; the upstream tarball may be
    shared); None with why if that cannot be told."""
    p = run(["apt-get", "--print-uris"] + apt_opts() +
            ["source", "%s=%s" % (name, version)])
    uris = [u for u in re.findall(r"^'(\S+)'", p.stdout, re.M)
            if ".orig." not in u]
    if p.returncode != 0 or not uris:
        return None, "apt-get --print-uris source failed:\n" + p.stdout
    for u in uris:
        req = urllib.request.Request(u, method="HEAD")
        try:
            with urllib.request.urlopen(req, timeout=30):
                pass
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return False, "%s: 404" % u
            return None, "%s: HTTP %d" % (u, e.code)
        except OSError as e:
            return None, "%s: %s" % (u, e)
    return True, "served: " + ", ".join(uris)


@pytest.mark.parametrize("name", sorted(PINS))
def test_pin_is_its_releases_newest(archive, name):
    """name's pin is in the archive, and no suite of its release has a
    newer version that the mirror serves."""
    pin = PINS[name]
    rows = archive.get(name, [])
    suites = release_suites(rows, pin)
    assert suites, ("%s=%s is not in the archive's lists %s: the build "
                    "cannot fetch it; bump its pin in %s"
                    % (name, pin, sorted({s for _, s in rows}),
                       STATIC_MK.relative_to(ROOT)))
    ahead = sorted({(v, s) for v, s in rows
                    if s in suites and newer(v, pin)})
    behind = []
    for v in sorted({v for v, _ in ahead}):
        s = " ".join(x for y, x in ahead if y == v)
        if (name, v) not in UNSERVED:
            behind.append("%s in %s" % (v, s))
            continue
        ok, why = served(name, v)
        if ok is None:
            pytest.fail("cannot tell whether %s=%s (in %s, listed in "
                        "PINS_UNSERVED) is served: %s" % (name, v, s, why))
        if ok:
            behind.append("%s in %s (PINS_UNSERVED lists it, but the "
                          "mirror serves it now)" % (v, s))
        else:
            print("%s=%s in %s: listed but not served (%s); pinned at %s "
                  "until it is" % (name, v, s, why, pin))
    assert not behind, ("%s is pinned at %s, behind %s: bump its pin in %s "
                        "(and drop it from PINS_UNSERVED)"
                        % (name, pin, ", ".join(behind),
                           STATIC_MK.relative_to(ROOT)))
    stale = [v for n, v in UNSERVED
             if n == name and v not in {x for x, _ in ahead}]
    assert not stale, ("PINS_UNSERVED lists %s=%s, which is not newer than "
                       "the pin %s in its release: remove it from %s"
                       % (name, ", ".join(stale), pin,
                          STATIC_MK.relative_to(ROOT)))
