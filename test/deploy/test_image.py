"""The OCI image `make image` builds (deploy/image/oci.py), without a
docker engine.

The image under test is $LEADERD_IMAGE (a layout tarball or directory,
as `make image-test` passes it), else one built here from $LEADERD the
way `make image` does.  Checked:
  - the layout by the OCI image spec: oci-layout, index.json, every
    blob's size and sha256 digest, the layer's diff_id; a corrupted blob
    is refused;
  - the config: user 65532:65532, entrypoint ["/leaderd"] (exec form), no
    Cmd; no shell anywhere in the file system;
  - the layer: deterministic headers (sorted, mtime 0, uid/gid 0), and the
    same digest when built again from its own file set;
  - its file set is the Dockerfile's runtime stage's: that stage is
    scratch plus the build stage's /rootfs, which `make image-rootfs`
    assembles with mkrootfs.sh, so the image must hold exactly
    mkrootfs.sh's output for this binary (same paths, modes and bytes):
    the static binary, etc/passwd, etc/group, the CA bundle and
    /licenses;
  - /licenses: COMPONENTS lists every component linked in (leaderd,
    curl, mbedtls, libev, jansson, libyaml, the C library) with its
    version and licence, and each has its licence text beside it, and
    the SBOM made from it (test_sbom.py checks its contents);
  - the compressed layer is at most 2 MB;
  - every architecture of the image ($LEADERD_IMAGE_ARCHS, as `make
    image-test` passes it: amd64 and arm64) has its own static binary of
    that architecture, which runs --version and -n from the unpacked
    rootfs (arm64's under qemu-user, Debian's qemu-user-static);
  - leaderd runs from the unpacked rootfs as uid 65532 (chroot, then
    setuid): --version, and -n on a configuration inside the image;
    `leaderd status` is found by the config's PATH, as `kubectl exec POD
    -c leaderd -- leaderd status` finds it.
"""

import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from deploy_helpers import ROOT, need_tool
from test_dockerfile import (interpreter, ldd_paths, parse_dockerfile,
                             steps)

sys.path.insert(0, str(ROOT / "deploy" / "image"))
import oci  # noqa: E402

MKROOTFS = ROOT / "deploy" / "image" / "mkrootfs.sh"
# Files mkrootfs.sh adds besides the binary and what ldd lists.
EXTRAS = {"etc/passwd", "etc/group", "etc/ssl/certs/ca-certificates.crt"}
SHELLS = {"sh", "bash", "dash", "ash", "busybox", "zsh", "ksh", "csh"}


# The compressed layer's limit (bytes), per architecture.
MAX_LAYER = 2_000_000
# What COMPONENTS must list: everything the static binary links.
COMPONENTS = {"leaderd", "curl", "mbedtls", "libev", "jansson", "libyaml"}
LIBCS = {"musl", "glibc"}


def mkrootfs(leaderd, licenses, root):
    need_tool("strip", "install binutils (build-essential)")
    proc = subprocess.run(["sh", str(MKROOTFS), str(leaderd), str(root),
        str(licenses)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"mkrootfs.sh failed:\n{proc.stderr}"
    return root


@pytest.fixture(scope="module")
def reference_rootfs(leaderd, licenses, tmp_path_factory):
    """What the Dockerfile's build stage puts in /rootfs for this
    binary."""
    return mkrootfs(leaderd, licenses,
                    tmp_path_factory.mktemp("ref") / "rootfs")


@pytest.fixture(scope="module")
def image(leaderd, reference_rootfs, tmp_path_factory):
    given = os.environ.get("LEADERD_IMAGE")
    if given:
        assert os.path.exists(given), f"LEADERD_IMAGE={given}: no such file"
        return pathlib.Path(given)
    d = tmp_path_factory.mktemp("image")
    oci.build([("amd64", str(reference_rootfs))], str(d / "oci"),
              str(d / "image.tar"), "test", "test")
    return d / "image.tar"


@pytest.fixture(scope="module")
def archs(image):
    """The architectures the image must have: $LEADERD_IMAGE_ARCHS for
    the image `make image` built, amd64 for one built here."""
    want = os.environ.get("LEADERD_IMAGE_ARCHS", "amd64").split() \
        if os.environ.get("LEADERD_IMAGE") else ["amd64"]
    assert oci.platforms(str(image)) == want, \
        f"the image has {oci.platforms(str(image))}, not {want}"
    return want


@pytest.fixture(scope="module")
def unpacked(image):
    config, layers = oci.read_image(str(image))
    size = sum(len(b) for n, b in oci.Layout(str(image)).files.items()
               if n.startswith("blobs/"))
    print(f"image {image}: {size} bytes of blobs ({size / 1e6:.2f} MB "
          f"compressed), file set {sum(len(l) for l in layers)} bytes "
          f"uncompressed")
    return config, layers


@pytest.fixture(scope="module")
def image_root(unpacked, tmp_path_factory):
    root = tmp_path_factory.mktemp("unpacked") / "rootfs"
    oci.extract(unpacked[1], str(root))
    return root


def file_set(root):
    """{relative path: (mode, sha256)} of the regular files under root."""
    out = {}
    for p in sorted(pathlib.Path(root).rglob("*")):
        if p.is_symlink() or not p.is_file():
            continue
        out[str(p.relative_to(root))] = (p.stat().st_mode & 0o7777,
            hashlib.sha256(p.read_bytes()).hexdigest())
    return out


def test_layout_and_digests(image, unpacked):
    config, layers = unpacked
    assert len(layers) == 1, "one layer: the file set"
    lay = oci.Layout(str(image))
    assert lay.json("oci-layout") == {"imageLayoutVersion": "1.0.0"}
    index = lay.json("index.json")
    assert index["mediaType"] == oci.MT_INDEX
    m = index["manifests"][0]
    assert m["mediaType"] == oci.MT_INDEX, "a tag names an image index"
    assert m["annotations"]["org.opencontainers.image.ref.name"]
    nested = json.loads(lay.blob(m, oci.MT_INDEX))
    assert [d["platform"] for d in nested["manifests"]] == [
        {"architecture": a, "os": "linux"} for a in oci.platforms(str(image))]
    assert config["os"] == "linux" and config["architecture"] == "amd64"


def test_corrupt_blob_is_refused(image, tmp_path):
    """The digest check can fail: flip one byte of the layer blob."""
    lay = oci.Layout(str(image))
    d = tmp_path / "layout"
    for name, data in lay.files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data)
    oci.read_image(str(d))
    layer = max((n for n in lay.files if n.startswith("blobs/")),
                key=lambda n: len(lay.files[n]))
    data = bytearray(lay.files[layer])
    data[len(data) // 2] ^= 0xff
    (d / layer).write_bytes(bytes(data))
    with pytest.raises(oci.ImageError, match="hashes to"):
        oci.read_image(str(d))


def test_config_user_and_entrypoint(unpacked):
    cfg = unpacked[0]["config"]
    assert cfg["User"] == "65532:65532"
    assert cfg["Entrypoint"] == ["/leaderd"]
    assert "Cmd" not in cfg
    assert not any(e.startswith("SHELL") for e in cfg.get("Env", []))
    # "/" on PATH, the same as the Dockerfile's runtime stage says.
    assert cfg["Env"] == oci.ENV
    assert "/" in cfg["Env"][0].partition("=")[2].split(":")
    run = parse_dockerfile((ROOT / "Dockerfile").read_text())[1]
    assert steps(run, "ENV") == cfg["Env"]


def test_control_command_found_on_path(unpacked, image_root):
    """`kubectl exec POD -c leaderd -- leaderd status` runs `leaderd` by
    the image's PATH: found, it runs from the file set, and with no
    daemon in the chroot it says so (3).  Its usage errors are 2."""
    env = dict(e.partition("=")[::2] for e in unpacked[0]["config"]["Env"])
    proc = run_as_nonroot(image_root, "leaderd", "status", env=env)
    assert proc.returncode == 3, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith("leaderd: status: cannot reach leaderd "
                                  "at localhost:4040: 127.0.0.1:4040: "), \
        proc.stderr
    proc = run_as_nonroot(image_root, "leaderd", "wait-leader",
                          "--timeout", "soon", env=env)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    # Without "/" on PATH, as with the runtimes' default, it is not found.
    proc = run_as_nonroot(image_root, "leaderd", "status",
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 127, (proc.returncode, proc.stderr)


def test_peer_variants(image, unpacked, image_root):
    """One image per peer sidecar on the same layer: tag T-PEER runs
    /leaderd --compat=PEER, so that a peer's pod spec (its args, its env)
    runs unchanged when only its image is changed.  The classic's
    variant with the classic's own arguments locks what the classic did:
    Endpoints in the namespace "default"."""
    index = oci.Layout(str(image)).json("index.json")
    tags = [m["annotations"]["org.opencontainers.image.ref.name"]
            for m in index["manifests"]]
    base = tags[0]
    assert tags == [base + sfx for sfx, _ in oci.VARIANTS], tags
    assert [sfx for sfx, _ in oci.VARIANTS] == [
        "", "-classic", "-nais", "-vapor", "-await"]
    layer = unpacked[1]
    for sfx, entrypoint in oci.VARIANTS[1:]:
        config, layers = oci.read_image(str(image), base + sfx)
        assert layers == layer, "one layer for every variant"
        assert config["config"]["Entrypoint"] == [
            "/leaderd", "--compat=" + sfx[1:]]
        assert config["config"]["User"] == "65532:65532"
    with pytest.raises(oci.ImageError, match="no image tagged"):
        oci.read_image(str(image), base + "-zookeeper")
    cfg, _ = oci.read_image(str(image), base + "-classic")
    proc = run_as_nonroot(image_root, *cfg["config"]["Entrypoint"],
                          "--id=p", "--election=example", "-n")
    assert proc.returncode == 0, proc.stderr
    assert "lock endpoints/default/example" in proc.stdout, proc.stdout


def test_no_shell(image_root):
    for p in pathlib.Path(image_root).rglob("*"):
        assert p.name not in SHELLS, f"{p.relative_to(image_root)}: a shell"
    assert not (image_root / "bin").exists()
    passwd = (image_root / "etc" / "passwd").read_text().splitlines()
    nonroot = [l for l in passwd if l.split(":")[2] == "65532"]
    assert len(nonroot) == 1 and nonroot[0].split(":")[3] == "65532"
    assert not (image_root / nonroot[0].split(":")[6].lstrip("/")).exists()


def test_layer_is_deterministic(unpacked, image_root, tmp_path):
    layer = unpacked[1][0]
    members = oci.layer_members(layer)
    names = list(members)
    assert names == sorted(names), "layer entries are not sorted"
    for name, (kind, _, uid, gid, mtime) in members.items():
        assert kind in ("dir", "file"), name
        assert (uid, gid, mtime) == (0, 0, 0), name
    # Built again from its own file set: the same bytes.
    again = oci.deterministic_tar(oci.rootfs_entries(str(image_root)))
    assert oci.sha256(again) == oci.sha256(layer)


def test_file_set_is_the_dockerfiles(leaderd, reference_rootfs, image_root):
    """The Dockerfile's runtime stage is scratch + the build stage's
    /rootfs (mkrootfs.sh's output); the image must hold the same files,
    and those are ldd's list, the loader, the binary and EXTRAS."""
    stages = parse_dockerfile((ROOT / "Dockerfile").read_text())
    build, run = stages[0], stages[1]
    assert run["base"] == "scratch", \
        f"the runtime stage is {run['base']}: its base's files would be " \
        "in the image too; this comparison assumes scratch"
    assert steps(run, "COPY") == ["--from=build /rootfs/ /"]
    assert any("make image-rootfs" in r and "ROOTFS=/rootfs" in r
               for r in steps(build, "RUN"))
    want = file_set(reference_rootfs)
    have = file_set(image_root)
    assert sorted(have) == sorted(want), \
        f"only in the image: {sorted(set(have) - set(want))}; only in " \
        f"the Dockerfile's: {sorted(set(want) - set(have))}"
    assert have == want, "same paths, different modes or contents"
    loader = interpreter(leaderd)  # None when static, as shipped
    by_ldd = {p.lstrip("/") for p in ldd_paths(leaderd)} | \
        ({loader.lstrip("/")} if loader else set()) | {"leaderd"} | EXTRAS
    assert {p for p in have if not p.startswith("licenses/")} == by_ldd


def run_as_nonroot(root, *argv, env=None):
    if os.geteuid() != 0:
        pytest.skip("chroot needs root (test_dockerfile.py's "
                    "test_runs_from_rootfs_with_its_own_loader runs the same "
                    "file set without it)")
    chroot = need_tool("chroot", "install coreutils")
    return subprocess.run([chroot, "--userspec=65532:65532", str(root)] +
        list(argv), env=env or {"PATH": "/"}, capture_output=True,
        text=True, timeout=10)


def test_version_as_65532(leaderd, image_root):
    host = subprocess.run([str(leaderd), "--version"], capture_output=True,
        text=True, timeout=10).stdout
    proc = run_as_nonroot(image_root, "/leaderd", "--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == host and host.strip()


def test_check_config_as_65532(image_root):
    cfg = image_root / "leaderd.yaml"
    cfg.write_text("identity: image-test\nlock:\n  namespace: default\n"
                   "  name: image-test\n")
    try:
        os.chmod(cfg, 0o644)
        proc = run_as_nonroot(image_root, "/leaderd", "-n", "-f",
                              "/leaderd.yaml")
        assert proc.returncode == 0, proc.stderr
        assert "configuration OK" in proc.stdout + proc.stderr
        # And it is not root: a file only root may read is refused.
        os.chmod(cfg, 0o600)
        proc = run_as_nonroot(image_root, "/leaderd", "-n", "-f",
                              "/leaderd.yaml")
        assert proc.returncode != 0
        assert "leaderd.yaml" in proc.stderr
    finally:
        cfg.unlink()


def test_oci_cli_unpack(image, tmp_path):
    """`oci.py unpack` (what a user runs) checks and extracts too."""
    proc = subprocess.run([sys.executable, str(ROOT / "deploy" / "image" /
        "oci.py"), "unpack", str(image), str(tmp_path)], capture_output=True,
        text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert '"User": "65532:65532"' in proc.stdout
    assert (tmp_path / "rootfs" / "leaderd").is_file()
    shutil.rmtree(tmp_path / "rootfs")


def test_licenses(image_root, licenses, leaderd):
    """Every component linked in is listed with its version and licence,
    and its licence text is in the image beside the list; leaderd's own
    is the repository's LICENSE."""
    d = image_root / "licenses"
    lines = [l.split() for l in (d / "COMPONENTS").read_text().splitlines()
             if l.strip() and not l.startswith("#")]
    assert all(len(w) == 3 for w in lines), lines
    names = [w[0] for w in lines]
    assert len(names) == len(set(names)), names
    assert COMPONENTS <= set(names), COMPONENTS - set(names)
    libc = set(names) & LIBCS
    assert len(libc) == 1, f"COMPONENTS names no C library, or two: {libc}"
    assert set(names) <= COMPONENTS | LIBCS, set(names) - COMPONENTS - LIBCS
    for name in names:
        text = d / (name + ".txt")
        assert text.is_file(), f"no licence text for {name}"
        assert len(text.read_text(errors="replace").strip()) > 200, \
            f"{name}.txt is too short to be a licence"
    assert (d / "leaderd.txt").read_bytes() == (ROOT / "LICENSE").read_bytes()
    # Beside them, the SBOM made from COMPONENTS (test_sbom.py).
    have = {p.name for p in d.iterdir()}
    assert have == {"COMPONENTS", "sbom.spdx.json", "ca-certificates.txt"} | \
        {n + ".txt" for n in names}, have
    # The CA bundle is not linked in, but shipped: its licence is there.
    ca = (d / "ca-certificates.txt").read_text()
    assert "Mozilla Public License" in ca and "ca-certificates.crt" in ca
    # "leaderd 0.1.0 (revision ...)": the version is the second word.
    out = subprocess.run([str(leaderd), "--version"],
        capture_output=True, text=True, timeout=10).stdout
    m = re.match(r"leaderd (\S+) \(revision \S+\)$", out.strip())
    assert m, out
    assert ["leaderd", m.group(1), "Apache-2.0"] in lines
    # The versions listed are the ones static.mk pins and builds.
    mk = (ROOT / "deploy" / "image" / "static.mk").read_text()
    pins = dict(re.findall(r"^(\w+)_DEB\s*=\s*(\S+)$", mk, re.M))
    for name, pin in (("curl", "CURL"), ("mbedtls", "MBEDTLS"),
                      ("libev", "LIBEV"), ("jansson", "JANSSON"),
                      ("libyaml", "YAML")):
        assert [name, pins[pin]] == [w for w in lines if w[0] == name][0][:2]


def test_layer_size(image, archs):
    lay = oci.Layout(str(image))
    for top in lay.json("index.json")["manifests"]:
        for m in json.loads(lay.blob(top, oci.MT_INDEX))["manifests"]:
            manifest = json.loads(lay.blob(m, oci.MT_MANIFEST))
            for desc in manifest["layers"]:
                print(f"{m['platform']['architecture']}: layer "
                      f"{desc['size']} bytes compressed")
                assert desc["size"] <= MAX_LAYER, \
                    f"the {m['platform']['architecture']} layer is " \
                    f"{desc['size']} bytes compressed; the image's budget " \
                    f"is {MAX_LAYER} per architecture (docs/performance.md)"


ELF_MACHINE = {"amd64": "Advanced Micro Devices X86-64",
               "arm64": "AArch64"}
QEMU = {"arm64": "qemu-aarch64-static"}


def test_each_architecture_runs(image, archs, image_root, tmp_path):
    """Each platform's image holds a static binary of its architecture,
    with the same file set otherwise, and it runs: --version, and -n on
    a configuration inside its rootfs (a foreign architecture under
    qemu-user)."""
    host = subprocess.run(["dpkg", "--print-architecture"],
        capture_output=True, text=True, timeout=10).stdout.strip()
    names = None
    for arch in archs:
        config, layers = oci.read_image(str(image), None, arch)
        assert config["architecture"] == arch
        root = tmp_path / arch / "rootfs"
        oci.extract(layers, str(root))
        files = sorted(str(p.relative_to(root)) for p in root.rglob("*")
                       if p.is_file())
        assert names is None or files == names, (arch, files, names)
        names = files
        head = subprocess.run(["readelf", "-h", "-l", str(root / "leaderd")],
            capture_output=True, text=True, timeout=30).stdout
        assert ELF_MACHINE[arch] in head, f"{arch}: {head}"
        assert "Requesting program interpreter" not in head, \
            f"{arch}: the binary is not static"
        if arch == host:
            run = []
        else:
            run = [need_tool(QEMU[arch], "install qemu-user-static (make "
                             "deps): the %s binary runs under it" % arch)]
        cfg = root / "leaderd.yaml"
        cfg.write_text("identity: image-test\nlock:\n  namespace: default\n"
                       "  name: image-test\n")
        v = subprocess.run(run + [str(root / "leaderd"), "--version"],
            env={}, capture_output=True, text=True, timeout=60)
        assert v.returncode == 0 and v.stdout.startswith("leaderd "), \
            (arch, v.stdout, v.stderr)
        n = subprocess.run(run + [str(root / "leaderd"), "-n", "-f",
            str(cfg)], env={}, capture_output=True, text=True, timeout=60)
        assert n.returncode == 0, (arch, n.stderr)
        assert "configuration OK" in n.stdout + n.stderr
        # The same components and versions on every architecture.
        assert (root / "licenses" / "COMPONENTS").read_text() == \
            (image_root / "licenses" / "COMPONENTS").read_text()

