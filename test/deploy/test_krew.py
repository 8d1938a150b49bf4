"""kubectl leaderd's krew archives and manifest (make plugin).

With $LEADERD_PLUGIN_DIR (make plugin-test), the archives make plugin
built there, for every architecture of $LEADERD_PLUGIN_ARCHS; otherwise
(make deploy-test) an archive of the binary under test ($LEADERD, the
image's amd64 binary) built here by deploy/krew/package.py.  Each must
hold kubectl-leaderd (0755, the binary, stripped), LICENSE
(the repository's) and licenses/, the licences of each component
COMPONENTS lists; SHA256SUMS and the written manifest must carry each
archive's sha256; the written manifest must be deploy/krew/leaderd.yaml
but for those sums; and the archived binary, run as kubectl-leaderd,
must be the plugin."""

import hashlib
import os
import pathlib
import platform
import re
import shutil
import struct
import subprocess
import sys
import tarfile

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "deploy" / "krew" / "leaderd.yaml"
PACKAGE = ROOT / "deploy" / "krew" / "package.py"


def package(out, leaderd, licenses):
    subprocess.run([sys.executable, str(PACKAGE), "--manifest",
                    str(MANIFEST), "--license", str(ROOT / "LICENSE"),
                    "--out", str(out), "--licenses", "amd64=%s" % licenses,
                    "amd64=%s" % leaderd], check=True,
                   env=dict(os.environ, SOURCE_DATE_EPOCH="1700000000"))


@pytest.fixture(scope="module")
def built(leaderd, licenses, tmp_path_factory):
    """(directory, architectures) of the archives under test."""
    given = os.environ.get("LEADERD_PLUGIN_DIR")
    if given:
        return pathlib.Path(given), \
            os.environ.get("LEADERD_PLUGIN_ARCHS", "amd64 arm64").split()
    d = tmp_path_factory.mktemp("plugin")
    package(d, leaderd, licenses)
    return d, ["amd64"]


def version():
    return yaml.safe_load(MANIFEST.read_text())["spec"]["version"][1:]


def archive_name(arch):
    return "kubectl-leaderd-%s-linux-%s.tar.gz" % (version(), arch)


def sha256(p):
    return hashlib.sha256(p.read_bytes()).hexdigest()


def elf(b):
    """(e_machine, has a PT_INTERP, has a .symtab) of a 64-bit
    little-endian ELF file's bytes."""
    assert b[:4] == b"\x7fELF" and b[4] == 2 and b[5] == 1, "not ELF64 LE"
    u16 = lambda o: struct.unpack_from("<H", b, o)[0]  # noqa: E731
    u32 = lambda o: struct.unpack_from("<I", b, o)[0]  # noqa: E731
    u64 = lambda o: struct.unpack_from("<Q", b, o)[0]  # noqa: E731
    phoff, shoff = u64(0x20), u64(0x28)
    phentsize, phnum = u16(0x36), u16(0x38)
    shentsize, shnum = u16(0x3a), u16(0x3c)
    interp = any(u32(phoff + i * phentsize) == 3 for i in range(phnum))
    symtab = any(u32(shoff + i * shentsize + 4) == 2 for i in range(shnum))
    return u16(0x12), interp, symtab


def test_manifest_is_a_krew_plugin():
    m = yaml.safe_load(MANIFEST.read_text())
    assert m["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert m["kind"] == "Plugin" and m["metadata"]["name"] == "leaderd"
    assert re.fullmatch(r"v\d+\.\d+\.\d+", m["spec"]["version"])
    assert m["spec"]["shortDescription"] and m["spec"]["homepage"]
    # The version is the build's (Makefile VERSION).
    mk = (ROOT / "Makefile").read_text()
    assert re.search(r"^VERSION\s*\?=\s*%s$" % re.escape(version()), mk,
                     re.M), "deploy/krew/leaderd.yaml's version is not " \
        "the Makefile's VERSION"
    plats = m["spec"]["platforms"]
    assert [p["selector"]["matchLabels"] for p in plats] == [
        {"os": "linux", "arch": "amd64"}, {"os": "linux", "arch": "arm64"}]
    for p in plats:
        arch = p["selector"]["matchLabels"]["arch"]
        assert p["uri"].endswith("/v%s/%s" % (version(), archive_name(arch)))
        assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"])
        assert p["bin"] == "kubectl-leaderd"
        assert p["files"] == [{"from": "kubectl-leaderd", "to": "."},
                              {"from": "LICENSE", "to": "."},
                              {"from": "licenses", "to": "."}]


def test_archives_hold_the_binary_and_license(built, tmp_path):
    d, archs = built
    for arch in archs:
        a = d / archive_name(arch)
        with tarfile.open(a) as tar:
            members = tar.getmembers()
            assert [(t.name, t.mode, t.uid, t.gid) for t in members[:3]] \
                == [("kubectl-leaderd", 0o755, 0, 0),
                    ("LICENSE", 0o644, 0, 0), ("licenses", 0o755, 0, 0)]
            assert tar.extractfile("LICENSE").read() == \
                (ROOT / "LICENSE").read_bytes()
            # The licences of every component COMPONENTS lists.
            comps = tar.extractfile("licenses/COMPONENTS").read().decode()
            names = sorted(ln.split()[0] for ln in comps.splitlines()
                           if ln and not ln.startswith("#"))
            assert "curl" in names and "mbedtls" in names and \
                "musl" in names, names
            assert sorted(t.name for t in members[3:]) == sorted(
                ["licenses/COMPONENTS"] + ["licenses/%s.txt" % n
                                           for n in names])
            exe = tmp_path / arch / "kubectl-leaderd"
            exe.parent.mkdir()
            exe.write_bytes(tar.extractfile("kubectl-leaderd").read())
            exe.chmod(0o755)
        machine, interp, symtab = elf(exe.read_bytes())
        assert machine == {"amd64": 62, "arm64": 183}[arch], machine
        assert not interp, "%s: not a static binary" % arch
        assert not symtab, "%s: not stripped" % arch
        # Run as kubectl-leaderd: here, or under qemu-user (make image
        # installs it) for the other architecture.
        argv = [str(exe), "--help"]
        if arch != {"x86_64": "amd64", "aarch64": "arm64"}.get(
                platform.machine()):
            qemu = shutil.which("qemu-%s-static" % {
                "amd64": "x86_64", "arm64": "aarch64"}[arch])
            assert qemu, "qemu-user-static is missing (make image-deps)"
            argv = [qemu] + argv
        r = subprocess.run(argv, capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.startswith(
            "usage: kubectl leaderd COMMAND"), r


def test_sums_match_the_archives(built):
    d, archs = built
    sums = {a: sha256(d / archive_name(a)) for a in archs}
    assert (d / "SHA256SUMS").read_text() == "".join(
        "%s  %s\n" % (sums[a], archive_name(a))
        for a in sorted(archs, key=archive_name))
    written = yaml.safe_load((d / "leaderd.yaml").read_text())
    for p in written["spec"]["platforms"]:
        arch = p["selector"]["matchLabels"]["arch"]
        if arch in sums:
            assert p["sha256"] == sums[arch], arch
    # The written manifest is the committed one but for those sums.
    strip = re.compile(r'^(\s*sha256:).*$', re.M)
    assert strip.sub(r"\1", (d / "leaderd.yaml").read_text()) == \
        strip.sub(r"\1", MANIFEST.read_text())


def test_archives_are_reproducible(built, leaderd, licenses, tmp_path):
    """The same binary and date give the same archive bytes."""
    d, archs = built
    if os.environ.get("LEADERD_PLUGIN_DIR"):
        return
    package(tmp_path, leaderd, licenses)
    assert sha256(tmp_path / archive_name("amd64")) == \
        sha256(d / archive_name("amd64"))
