"""Check the Dockerfile without a docker engine.

What can be checked here:
  - its shape: a Debian bookworm build stage that runs `make
    image-rootfs` (the static binary and its file set, as `make image`),
    a scratch runtime stage with no RUN (it has no shell), USER 65532,
    ENTRYPOINT ["/leaderd"], a --version smoke step;
  - every file it COPYs from the context exists and is not excluded by
    .dockerignore, and the build stage's make step succeeds in a context
    holding only those files;
  - every apt package it installs exists in Debian bookworm
    (`apt-cache show`), and covers the Makefile's STATIC_DEB_PKGS;
  - the runtime file set: deploy/image/mkrootfs.sh (the script `make
    image-rootfs` runs) is run on the real binary ($LEADERD, the static
    build) with its licences ($LEADERD_LICENSES), and the binary is
    started from its output alone, in a chroot as uid 65532 when root,
    and from outside it with an empty environment.  That is what the
    runtime stage holds: it is scratch plus that output.
"""

import fnmatch
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time

import pytest

from deploy_helpers import ROOT, need_tool

DOCKERFILE = ROOT / "Dockerfile"
MKROOTFS = ROOT / "deploy" / "image" / "mkrootfs.sh"
# What the file set may weigh (bytes): the static binary (about 1 MB
# with musl, 2 MB with glibc), the CA bundle (200 kB) and the licences.
# docs/performance.md states the expected image size; this catches a
# dependency that doubles it.
MAX_ROOTFS = 4 * 2**20


def parse_dockerfile(text):
    """Stages as dicts: base, name, and a list of (INSTRUCTION, args)."""
    lines, cur = [], ""
    for raw in text.splitlines():
        s = raw.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        if cur and s.startswith("#"):
            continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        cur += s
        lines.append(cur)
        cur = ""
    assert not cur, "Dockerfile ends in a line continuation"
    stages = []
    for line in lines:
        instr, _, args = line.partition(" ")
        instr, args = instr.upper(), args.strip()
        if instr == "FROM":
            parts = args.split()
            parts = [p for p in parts if not p.startswith("--platform")]
            stage = {"base": parts[0], "name": None, "steps": []}
            if len(parts) == 3 and parts[1].upper() == "AS":
                stage["name"] = parts[2]
            stages.append(stage)
        elif instr == "ARG" and not stages:
            continue
        else:
            assert stages, f"{instr} before the first FROM"
            stages[-1]["steps"].append((instr, args))
    return stages


@pytest.fixture(scope="module")
def stages():
    return parse_dockerfile(DOCKERFILE.read_text())


def steps(stage, instr):
    return [a for i, a in stage["steps"] if i == instr]


def apt_packages(stage):
    pkgs = []
    for run in steps(stage, "RUN"):
        for cmd in re.split(r"&&|;|\|\|", run):
            words = shlex.split(cmd)
            if "apt-get" in words and "install" in words:
                rest = words[words.index("install") + 1:]
                pkgs += [w for w in rest if not w.startswith("-")]
    return pkgs


PEERS = ["classic", "nais", "vapor", "await"]


def test_stages(stages):
    assert len(stages) == 3 + len(PEERS), \
        "expected a build stage, a runtime stage, one per peer, the default"
    build, run = stages[:2]
    assert build["base"].split("@")[0] == "debian:bookworm"
    assert build["name"] == "build"
    # scratch: the image holds mkrootfs.sh's file set and nothing else,
    # which test_image.py compares with `make image`'s.
    assert run["base"] == "scratch", run["base"]
    assert run["name"] == "leaderd"
    # The last stage, what `docker build` builds by default, is the
    # runtime stage itself.
    assert stages[-1]["base"] == "leaderd" and not stages[-1]["steps"]


def test_peer_stages(stages):
    """Each peer's target is the runtime stage with only its entrypoint
    changed, as `make image` writes TAG-PEER (oci.py VARIANTS)."""
    for st, peer in zip(stages[2:-1], PEERS):
        assert st["base"] == "leaderd" and st["name"] == peer, st
        assert [i for i, _ in st["steps"]] == ["ENTRYPOINT"], st
        assert json.loads(steps(st, "ENTRYPOINT")[0]) == [
            "/leaderd", "--compat=" + peer]


def test_build_stage(stages):
    build = stages[0]
    runs = " && ".join(steps(build, "RUN"))
    assert re.search(r"\bmake image-rootfs\b[^&]*\bROOTFS=/rootfs\b", runs), \
        "the build stage does not make the image's file set in /rootfs"
    assert "/rootfs/leaderd --version" in runs, "no --version smoke step"
    assert re.search(r"chroot --userspec=65532:65532 /rootfs /leaderd "
        r"--version", runs), "the file set is not smoke-tested as 65532"


def test_runtime_stage(stages):
    run = stages[1]
    instrs = [i for i, _ in run["steps"]]
    # distroless has no shell: RUN and shell-form commands cannot work.
    assert "RUN" not in instrs
    assert steps(run, "COPY") == ["--from=build /rootfs/ /"]
    assert steps(run, "USER") == ["65532:65532"] or \
        steps(run, "USER") == ["65532"]
    entry = steps(run, "ENTRYPOINT")
    assert len(entry) == 1 and json.loads(entry[0]) == ["/leaderd"], \
        "ENTRYPOINT must be the exec form [\"/leaderd\"]"
    for cmd in steps(run, "CMD"):
        json.loads(cmd)  # exec form only


def dockerignore_excludes(path, patterns):
    """Docker's rule: the last matching pattern wins; a pattern matching
    a parent directory matches the path too."""
    excluded = False
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    for pat in patterns:
        neg = pat.startswith("!")
        pat = pat[1:] if neg else pat
        pat = pat.strip("/")
        if any(fnmatch.fnmatchcase(p, pat) and p.count("/") ==
                pat.count("/") for p in prefixes):
            excluded = not neg
    return excluded


def test_copied_sources_exist_and_are_sent(stages):
    patterns = [l.strip() for l in
        (ROOT / ".dockerignore").read_text().splitlines()
        if l.strip() and not l.strip().startswith("#")]
    sources = []
    for args in steps(stages[0], "COPY"):
        words = [w for w in args.split() if not w.startswith("--")]
        assert len(words) >= 2
        sources += words[:-1]
    assert sources, "the build stage copies nothing"
    for src in sources:
        p = ROOT / src
        assert p.exists(), f"COPY {src}: no such file in the repository"
        files = [p] if p.is_file() else [f for f in p.rglob("*")
            if f.is_file()]
        for f in files:
            rel = str(f.relative_to(ROOT))
            assert not dockerignore_excludes(rel, patterns), \
                f"{rel} is copied but excluded by .dockerignore"
    # And what the build needs is among them.
    for needed in ("Makefile", "LICENSE", "cmd/", "lib/", "deploy/image/"):
        assert needed in sources, f"the build stage does not copy {needed}"
    assert dockerignore_excludes("build/lib/x.o", patterns)
    assert dockerignore_excludes("leaderd", patterns)
    assert dockerignore_excludes(".git/HEAD", patterns)


def test_dockerignore_rule():
    pats = ["*", "!cmd/", "!deploy/image/mkrootfs.sh"]
    assert not dockerignore_excludes("cmd/leaderd/main.c", pats)
    assert not dockerignore_excludes("deploy/image/mkrootfs.sh", pats)
    assert dockerignore_excludes("deploy/base/role.yaml", pats)
    assert dockerignore_excludes("README.md", pats)


def link_or_copy(src, dst):
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def seed_third_party(ctx):
    """Copy this tree's build of the static binary's libraries (Mbed TLS,
    curl, libev, jansson, libyaml: deploy/image/static.mk), if there is
    one, and the apt lists its sources were fetched with, into the
    context's build directory, times kept, as a docker build cache
    would hold it: the make step then builds leaderd itself
    from the context and reuses them (a fresh context builds them too,
    about 3 minutes)."""
    top = ROOT / "build" / "static"
    if not (top / "apt" / "updated").is_file():
        return
    dst = ctx / "build" / "static"
    (dst / "apt" / "sources.d").mkdir(parents=True)
    for f in ("updated", "sources.d/src.sources"):
        shutil.copy2(top / "apt" / f, dst / "apt" / f)
    # The lists that step read, which the SBOM's rule reads again
    # (deploy/image/sbom.py); linked where the file system allows.
    shutil.copytree(top / "apt" / "lists", dst / "apt" / "lists",
                    copy_function=link_or_copy)
    (dst / "src").mkdir()
    for v in (top / "src").glob("*.version"):
        shutil.copy2(v, dst / "src" / v.name)
    for variant in ("", "musl"):
        third = top / variant / "third"
        if (third / "prefix").is_dir():
            shutil.copytree(third / "prefix", dst / variant / "third" /
                            "prefix", symlinks=True)
            for cfg in third.glob("*.cfg"):
                shutil.copy2(cfg, dst / variant / "third" / cfg.name)
            if (top / variant / "licenses").is_dir():
                shutil.copytree(top / variant / "licenses",
                                dst / variant / "licenses")


def test_build_stage_builds_from_its_context(stages, tmp_path):
    """Lay out the build context as docker would send it (.dockerignore
    applied) with only what the build stage COPYs, then run the stage's
    make step there: every file the build needs must be copied."""
    need_tool("make", "install make (build-essential)")
    patterns = [l.strip() for l in
        (ROOT / ".dockerignore").read_text().splitlines()
        if l.strip() and not l.strip().startswith("#")]
    build = stages[0]
    ctx = tmp_path / "src"
    ctx.mkdir()
    for args in steps(build, "COPY"):
        words = [w for w in args.split() if not w.startswith("--")]
        for src in words[:-1]:
            p = ROOT / src
            files = [p] if p.is_file() else [f for f in p.rglob("*")
                if f.is_file()]
            for f in files:
                rel = str(f.relative_to(ROOT))
                if dockerignore_excludes(rel, patterns) or \
                        "__pycache__" in rel:
                    continue
                (ctx / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, ctx / rel)
    seed_third_party(ctx)
    env = dict(os.environ)
    for arg in steps(build, "ARG"):
        name, _, default = arg.partition("=")
        env[name] = default
    makes = [r for r in steps(build, "RUN") if re.match(r"make\b", r)]
    assert makes, "no RUN make ... in the build stage"
    for cmd in makes:
        # The file set goes to the context, not to the host's /rootfs.
        cmd = cmd.replace("ROOTFS=/rootfs", "ROOTFS=%s" % (ctx / "rootfs"))
        proc = subprocess.run(["nice", "sh", "-c", cmd], cwd=ctx, env=env,
            capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, \
            f"`{cmd}` fails in the build stage's context (a file the " \
            f"build needs is not copied?):\n{proc.stdout}{proc.stderr}"
    out = subprocess.run([str(ctx / "rootfs" / "leaderd"), "--version"],
        capture_output=True, text=True, timeout=10)
    assert out.returncode == 0 and env.get("VERSION", "") in out.stdout
    assert (ctx / "rootfs" / "licenses" / "COMPONENTS").is_file()
    # The SBOM too (test_sbom.py checks its contents).
    sbom = json.loads((ctx / "rootfs" / "licenses" / "sbom.spdx.json")
                      .read_text())
    assert sbom["spdxVersion"] == "SPDX-2.3"


@pytest.fixture(scope="module")
def apt_cache():
    tool = need_tool("apt-cache", "these checks need a Debian host "
        "(apt-cache looks the Dockerfile's packages up)")
    probe = subprocess.run([tool, "show", "libc6"], capture_output=True,
        text=True, timeout=60)
    if probe.returncode != 0 or "Package: libc6" not in probe.stdout:
        pytest.fail("apt-cache knows no packages at all (it cannot even "
            "show libc6): run `apt-get update` once, then re-run")
    policy = subprocess.run([tool, "policy"], capture_output=True,
        text=True, timeout=60).stdout
    if not re.search(r"\bn=bookworm\b|\bbookworm\b", policy):
        pytest.fail("apt has no Debian bookworm package lists, so the "
            "Dockerfile's package names cannot be checked against them: "
            "run this on bookworm (after `apt-get update`)")
    return tool


def test_apt_packages_exist_in_bookworm(stages, apt_cache):
    pkgs = apt_packages(stages[0])
    assert pkgs, "no apt-get install in the build stage"
    missing = []
    for name in pkgs:
        show = subprocess.run([apt_cache, "show", name], capture_output=True,
            text=True, timeout=60)
        if show.returncode != 0 or f"Package: {name}\n" not in show.stdout:
            missing.append(name)
            continue
        policy = subprocess.run([apt_cache, "policy", name],
            capture_output=True, text=True, timeout=60).stdout
        if "bookworm" not in policy:
            missing.append(f"{name} (not from bookworm)")
    assert not missing, f"not in Debian bookworm: {missing}"
    for stage in stages[1:]:
        assert not apt_packages(stage)


def test_apt_packages_cover_the_makefile(stages):
    """The packages `make deps` installs for the static build
    (STATIC_DEB_PKGS) must be in the build stage too."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    m = re.search(r"^STATIC_DEB_PKGS\s*=(.*)$", text, re.M)
    assert m, "no STATIC_DEB_PKGS in the Makefile"
    build_pkgs = m.group(1).split()
    assert "build-essential" in build_pkgs
    assert re.search(r"^DEB_PKGS\s*=\s*\$\(STATIC_DEB_PKGS\)", text, re.M), \
        "make deps does not install STATIC_DEB_PKGS"
    missing = set(build_pkgs) - set(apt_packages(stages[0]))
    assert not missing, f"the Dockerfile does not install {sorted(missing)}"


# --- the runtime file set --------------------------------------------------

def ldd_paths(binary):
    """The shared objects ldd resolves for binary; none for a static one
    (make STATIC=1), which ldd refuses."""
    if interpreter(binary) is None:
        return []
    out = subprocess.run(["ldd", str(binary)], capture_output=True,
        text=True, timeout=30)
    assert out.returncode == 0, f"ldd {binary}: {out.stdout}{out.stderr}"
    paths = []
    for line in out.stdout.splitlines():
        w = line.split()
        if len(w) >= 3 and w[1] == "=>" and w[2].startswith("/"):
            paths.append(w[2])
        elif w and w[0].startswith("/"):
            paths.append(w[0])
    return paths


def interpreter(binary):
    """binary's program interpreter, None when it is static."""
    proc = subprocess.run(["readelf", "-l", str(binary)],
        capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0 and "Program Headers" in proc.stdout, \
        f"readelf -l {binary}: {proc.stderr}"
    m = re.search(r"Requesting program interpreter: (\S+)\]", proc.stdout)
    return m.group(1) if m else None


@pytest.fixture(scope="module")
def rootfs(leaderd, licenses, tmp_path_factory):
    need_tool("ldd", "install libc-bin")
    need_tool("strip", "install binutils (build-essential)")
    root = tmp_path_factory.mktemp("rootfs") / "root"
    proc = subprocess.run(["sh", str(MKROOTFS), str(leaderd), str(root),
        str(licenses)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"mkrootfs.sh failed:\n{proc.stderr}"
    return root


@pytest.fixture(scope="module")
def host_version(leaderd):
    proc = subprocess.run([str(leaderd), "--version"], capture_output=True,
        text=True, timeout=10)
    assert proc.returncode == 0, f"leaderd --version: exit {proc.returncode}"
    assert proc.stdout.strip(), "leaderd --version printed nothing"
    return proc.stdout


def test_rootfs_holds_the_static_binary(leaderd, licenses, rootfs):
    assert interpreter(leaderd) is None, "the shipped build is static: " \
        "the Dockerfile builds it so (make image-rootfs)"
    assert (rootfs / "leaderd").is_file()
    others = {str(p.relative_to(rootfs)) for p in rootfs.rglob("*")
        if p.is_file()}
    # Besides the binary: nonroot's passwd and group entries, the CA
    # bundle, and the licences (the bundle's among them).
    wanted = {"leaderd", "etc/passwd", "etc/group",
              "etc/ssl/certs/ca-certificates.crt",
              "licenses/ca-certificates.txt"} | \
        {"licenses/" + p.name for p in licenses.iterdir()}
    assert others == wanted, "the file set holds other files"


def test_rootfs_size(rootfs):
    total = sum(p.stat().st_size for p in rootfs.rglob("*") if p.is_file())
    print(f"runtime file set: {total} bytes ({total / 2**20:.1f} MiB)")
    assert total <= MAX_ROOTFS, \
        f"the runtime file set is {total / 2**20:.1f} MiB; update the " \
        "image size in docs/performance.md and MAX_ROOTFS if that is " \
        "intended"


def test_runs_from_rootfs_without_root(rootfs, host_version):
    """Works without root: the stripped binary of the file set, an empty
    environment, no loader (readelf: no program interpreter, no dynamic
    section) and so nothing that could come from outside the file set."""
    binary = rootfs / "leaderd"
    assert interpreter(binary) is None
    dyn = subprocess.run(["readelf", "-d", str(binary)],
        capture_output=True, text=True, timeout=30)
    assert "NEEDED" not in dyn.stdout, dyn.stdout
    proc = subprocess.run([str(binary), "--version"], env={},
        capture_output=True, text=True, timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == host_version


def need_root():
    if os.geteuid() != 0:
        pytest.skip("chroot needs root; test_runs_from_rootfs_without_root "
            "checks the same file set without it")
    return need_tool("chroot", "install coreutils")


def test_runs_in_chroot_as_nonroot(rootfs, host_version):
    chroot = need_root()
    proc = subprocess.run([chroot, "--userspec=65532:65532", str(rootfs),
        "/leaderd", "--version"], env={"PATH": "/"}, capture_output=True,
        text=True, timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == host_version


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path, timeout=2.0):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close"
            "\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return data.decode(errors="replace")


def test_daemon_runs_in_chroot(rootfs, tmp_path):
    """The daemon itself, not only --version, from the file set alone: it
    starts its loop, TLS client and listener, answers /healthz, and exits
    0 on SIGTERM.  The API server is a closed port, so it only fails to
    reach it."""
    chroot = need_root()
    api_port, port = free_port(), free_port()
    (rootfs / "kubeconfig").write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:{api_port}
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: not-a-real-token
contexts:
- name: x
  context: {{cluster: c, user: u}}
current-context: x
""")
    os.chmod(rootfs / "kubeconfig", 0o644)
    log = open(tmp_path / "leaderd.log", "w+")
    proc = subprocess.Popen([chroot, "--userspec=65532:65532", str(rootfs),
        "/leaderd", "--kubeconfig", "/kubeconfig", "--election", "rootfs",
        "--election-namespace", "default", "--id", "chroot-test", "--http",
        f"127.0.0.1:{port}", "--retry-period", "1s", "--request-timeout",
        "1s"], env={"PATH": "/"}, stdout=log, stderr=subprocess.STDOUT)
    try:
        answer, deadline = None, time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                answer = http_get(port, "/healthz")
                break
            except OSError:
                time.sleep(0.1)
        log.seek(0)
        assert answer is not None, \
            f"no answer on /healthz (exit {proc.poll()}):\n{log.read()}"
        assert re.match(r"HTTP/1\.1 (200|503) ", answer), answer
        assert '"status"' in answer
        # The control command from the same file set, by the runtime
        # stage's PATH (kubectl exec POD -c leaderd -- leaderd status).
        path = steps(parse_dockerfile(DOCKERFILE.read_text())[1], "ENV")
        assert len(path) == 1 and path[0].startswith("PATH="), path
        # The API server is a closed port: once the first request has
        # failed, status names that problem first and exits 5.
        deadline = time.monotonic() + 10
        while True:
            st = subprocess.run([chroot, "--userspec=65532:65532",
                str(rootfs), "leaderd", "status", "--http",
                f"127.0.0.1:{port}"], env={"PATH": path[0][5:]},
                capture_output=True, text=True, timeout=10)
            if st.returncode != 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert st.returncode == 5, (st.returncode, st.stdout, st.stderr)
        assert st.stdout.startswith("problem:        unreachable "), st.stdout
        assert "identity:       chroot-test\n" in st.stdout, st.stdout
        assert "lock:           leases/default/rootfs\n" in st.stdout
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
        (rootfs / "kubeconfig").unlink()
