"""Self-tests of peerpod.py, the in-cluster pod the compat tests start:
its service-account directory, its environment, and the process it
starts (argv[0] as given, the binary $LEADERD), against a stand-in for
the fake API (a token list, a directory with ca.crt, a port)."""

import os
import stat
import sys
import time

import pytest

from peerpod import PeerPod, pods_fixture

# Prints the process's argv (argv[0] included), cwd and two variables to
# stdout and a line to stderr, then sleeps until killed.
PROBE = ("import os, sys, time; "
         "print(open('/proc/self/cmdline').read().split('\\0')[:-1]); "
         "print(os.getcwd()); "
         "print(os.environ.get('LEADERD_SA_DIR'), "
         "os.environ.get('ELECTOR_X')); "
         "print('on stderr', file=sys.stderr, flush=True); "
         "sys.stdout.flush(); time.sleep(60)")


class StubAPI:
    def __init__(self, d):
        self.dir = d
        self.port = 6443
        self.tokens = []
        with open(os.path.join(d, "ca.crt"), "w") as f:
            f.write("not a certificate\n")

    def add_token(self, tok):
        self.tokens.append(tok)


class ProbePod(PeerPod):
    namespace = "team-x"
    unset = PeerPod.unset + ("POD_IP",)
    unset_prefixes = ("ELECTOR_",)

    def __init__(self, api, tmp, name, cwd=None):
        super().__init__(api, tmp, name)
        self.launch(["peer-argv0", "-c", PROBE], self.incluster_env(),
                    cwd=cwd)


@pytest.fixture
def api(tmp_path):
    d = tmp_path / "api"
    d.mkdir()
    return StubAPI(str(d))


@pytest.fixture
def leaderd_is_python(monkeypatch):
    monkeypatch.setenv("LEADERD", sys.executable)


def test_service_account_dir(api, tmp_path, monkeypatch):
    monkeypatch.setattr(PeerPod, "launch", lambda *a, **kw: None)
    p = ProbePod(api, tmp_path, "pod-a")
    assert p.sa == os.path.join(str(tmp_path), "pod-a", "sa")
    assert api.tokens == ["tok-pod-a"] and p.token == "tok-pod-a"
    for fname, want in (("token", "tok-pod-a\n"), ("namespace", "team-x\n"),
                        ("ca.crt", "not a certificate\n")):
        with open(os.path.join(p.sa, fname)) as f:
            assert f.read() == want, fname
    for fname in ("token", "namespace"):
        mode = stat.S_IMODE(os.stat(os.path.join(p.sa, fname)).st_mode)
        assert mode == 0o600, (fname, oct(mode))
    assert p.proc is None
    p.stop()                    # nothing started: nothing to do


def test_incluster_env(api, tmp_path, monkeypatch):
    monkeypatch.setattr(PeerPod, "launch", lambda *a, **kw: None)
    for k in ("POD_NAME", "POD_NAMESPACE", "KUBECONFIG", "POD_IP",
              "ELECTOR_POD_NAME", "ELECTOR_LOG_FORMAT"):
        monkeypatch.setenv(k, "from-the-runner")
    monkeypatch.setenv("KEPT_X", "kept")
    p = ProbePod(api, tmp_path, "pod-b")
    e = p.incluster_env()
    for k in ("POD_NAME", "POD_NAMESPACE", "KUBECONFIG", "POD_IP",
              "ELECTOR_POD_NAME", "ELECTOR_LOG_FORMAT"):
        assert k not in e, k
    assert e["KEPT_X"] == "kept"
    assert e["KUBERNETES_SERVICE_HOST"] == "127.0.0.1"
    assert e["KUBERNETES_SERVICE_PORT"] == "6443"
    assert e["LEADERD_SA_DIR"] == p.sa


def test_launch_stop_text(api, tmp_path, leaderd_is_python, monkeypatch):
    monkeypatch.setenv("ELECTOR_X", "dropped")
    p = ProbePod(api, tmp_path, "pod-c", cwd=str(tmp_path))
    want = ["['peer-argv0', '-c', %r]" % PROBE, str(tmp_path),
            "%s None" % p.sa, "on stderr"]
    end = time.monotonic() + 10
    while time.monotonic() < end and p.text().count("\n") < len(want):
        time.sleep(0.05)
    assert sorted(p.text().splitlines()) == sorted(want), p.text()
    assert p.argv == ["peer-argv0", "-c", PROBE]
    assert p.proc.poll() is None
    p.kill()
    assert p.proc.returncode == -9
    p.stop()                    # already gone: nothing to do


pods = pods_fixture(ProbePod)


@pytest.fixture
def checked_after_pods():
    """Set up before `pods` (the test asks for it first), so torn down
    after it: every pod listed must be dead by then."""
    listed = []
    yield listed
    alive = [p for p in listed if p.proc.poll() is None]
    for p in alive:
        p.proc.kill()
        p.proc.wait(5)
    assert alive == [], "%s outlived the test" % [p.name for p in alive]


def test_pods_fixture(checked_after_pods, pods, tmp_path, leaderd_is_python):
    a = pods("pod-d")
    b = pods("pod-e", cwd=str(tmp_path))
    assert isinstance(a, ProbePod) and a.name == "pod-d"
    assert b.dir == os.path.join(str(tmp_path), "pod-e")
    assert a.proc.poll() is None and b.proc.poll() is None
    checked_after_pods.extend([a, b])
