"""Helpers for the end-to-end tests: processes, kubectl, the local API.

Everything here is bounded in time and talks only to 127.0.0.1 (or, for
make e2e-cluster, to the cluster named by KUBECONFIG).
"""

import base64
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

LEADERD = os.environ.get("LEADERD", "")
KASBOX = os.environ.get("KASBOX", "")
KUBECTL = os.environ.get("KUBECTL", "kubectl")
ELECTOR = os.environ.get("CLIENTGO_ELECTOR", "")
REPO = os.environ.get("REPO", os.path.abspath(os.path.join(
    os.path.dirname(__file__), "..", "..")))
# Each pytest-xdist worker has a harness of its own, so a directory of
# its own under E2E_WORK.
WORK = os.path.join(os.environ.get("E2E_WORK")
                    or tempfile.mkdtemp(prefix="leaderd-e2e-"),
                    os.environ.get("PYTEST_XDIST_WORKER", ""))
os.makedirs(WORK, exist_ok=True)

# Timings for every election in these tests (whole seconds for the lease
# duration; client-go's rule LD > RD > 1.2 x RP holds).
LD, RD, RP, REQ_TIMEOUT = 6, 4, 1, 2
SLACK = 3.0
# Bounds from the daemon issue.
KILL_BOUND = LD + 2.2 * RP + SLACK
TERM_BOUND = 2.2 * RP + SLACK

MICROTIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(pred, timeout, interval=0.05, what="condition"):
    """Poll pred() until it returns a true value; that value, or raise."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            raise AssertionError("timed out after %.1fs waiting for %s" %
                                 (timeout, what))
        time.sleep(interval)


class Kubectl:
    """kubectl with one kubeconfig; every call bounded."""

    def __init__(self, kubeconfig, namespace=None):
        self.kubeconfig = kubeconfig
        self.namespace = namespace

    def run(self, *args, input=None, check=True, timeout=60, ns=True):
        cmd = [KUBECTL, "--kubeconfig", self.kubeconfig]
        if ns and self.namespace:
            cmd += ["-n", self.namespace]
        cmd += list(args)
        p = subprocess.run(cmd, input=input, capture_output=True, text=True,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError("%s failed (%d): %s%s" % (
                " ".join(cmd[3:]), p.returncode, p.stdout, p.stderr))
        return p

    def json(self, *args, **kw):
        return json.loads(self.run(*args, "-o", "json", **kw).stdout)

    def apply(self, obj):
        return self.run("apply", "-f", "-", input=json.dumps(obj))

    def get_lease(self, name):
        p = self.run("get", "lease", name, "-o", "json", check=False)
        if p.returncode != 0:
            if "NotFound" in p.stderr or "not found" in p.stderr:
                return None
            raise AssertionError("get lease %s: %s" % (name, p.stderr))
        return json.loads(p.stdout)


def http_get_json(port, path="/leader", timeout=1.0):
    """GET http://127.0.0.1:port/path -> (status, parsed JSON) or (0, None)."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                    timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read())
        except ValueError:
            return e.code, None
    except (OSError, ValueError):
        return 0, None


def write_kubeconfig(path, server, user, ca_file=None, ca_pem=None,
                     token=None, token_file=None, namespace="default"):
    cluster = {"server": server}
    if ca_file:
        cluster["certificate-authority"] = ca_file
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(
            ca_pem.encode()).decode()
    u = {}
    if token:
        u["token"] = token
    if token_file:
        u["tokenFile"] = token_file
    # JSON is YAML: kubectl, client-go and leaderd's libyaml all read it.
    cfg = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": "c", "cluster": cluster}],
           "users": [{"name": user, "user": u}],
           "contexts": [{"name": "ctx", "context": {
               "cluster": "c", "user": user, "namespace": namespace}}],
           "current-context": "ctx"}
    with open(path, "w") as f:
        json.dump(cfg, f, indent=1)
    os.chmod(path, 0o600)
    return path


class Proc:
    """A child process with its log in a file, stopped at teardown."""

    def __init__(self, name, argv, env=None):
        self.name = name
        self.argv = argv
        self.logpath = os.path.join(WORK, "%s-%d.log" % (name, time.time_ns()))
        self.log = open(self.logpath, "wb")
        self.p = subprocess.Popen(argv, stdout=self.log,
                                  stderr=subprocess.STDOUT, env=env,
                                  stdin=subprocess.DEVNULL)

    def alive(self):
        return self.p.poll() is None

    def text(self):
        with open(self.logpath, errors="replace") as f:
            return f.read()

    def kill9(self):
        if self.alive():
            self.p.send_signal(signal.SIGKILL)
        self.p.wait(timeout=10)

    def term(self, timeout=10):
        """SIGTERM; returns (exit status, seconds it took)."""
        t0 = time.monotonic()
        if self.alive():
            self.p.send_signal(signal.SIGTERM)
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(timeout=10)
            rc = None
        return rc, time.monotonic() - t0

    def stop(self):
        if self.alive():
            self.term(timeout=10)
        self.log.close()


class Participant:
    """One elector (leaderd or the client-go peer) with a local API."""

    kind = "?"

    def __init__(self, ident, kubeconfig, namespace, lease):
        self.ident = ident
        self.kubeconfig = kubeconfig
        self.namespace = namespace
        self.lease = lease
        self.port = None
        self.proc = None
        self.generation = 0

    def start(self):
        self.port = free_port()
        self.generation += 1
        self.proc = Proc("%s-%s" % (self.kind, self.ident), self.argv())
        return self

    def leader(self, timeout=1.0):
        st, body = http_get_json(self.port, "/leader", timeout=timeout)
        return body if st == 200 else None

    def is_leader(self):
        b = self.leader()
        return bool(b and b.get("is_leader") is True)

    def wait_up(self, timeout=15):
        wait_for(lambda: self.leader() is not None or not self.proc.alive(),
                 timeout, what="%s to answer on /leader" % self.ident)
        assert self.proc.alive(), "%s exited: %s" % (self.ident,
                                                     self.proc.text()[-2000:])
        return self

    def stop(self):
        if self.proc:
            self.proc.stop()


class Leaderd(Participant):
    kind = "c"

    def __init__(self, *a, extra=(), **kw):
        super().__init__(*a, **kw)
        self.extra = list(extra)

    def argv(self):
        return [LEADERD, "--kubeconfig", self.kubeconfig,
                "--election", self.lease,
                "--election-namespace", self.namespace,
                "--id", self.ident,
                "--http", "127.0.0.1:%d" % self.port,
                "--lease-duration", "%ds" % LD,
                "--renew-deadline", "%ds" % RD,
                "--retry-period", "%ds" % RP,
                "--request-timeout", "%ds" % REQ_TIMEOUT,
                "--release-on-cancel", "true"] + self.extra


class GoElector(Participant):
    kind = "go"

    def argv(self):
        return [ELECTOR, "-kubeconfig", self.kubeconfig,
                "-namespace", self.namespace, "-name", self.lease,
                "-id", self.ident, "-http", "127.0.0.1:%d" % self.port,
                "-lease-duration", "%ds" % LD,
                "-renew-deadline", "%ds" % RD,
                "-retry-period", "%ds" % RP,
                "-release-on-cancel=true"]


def lease_rules(deploy_role_rules, lease, update=True):
    """The Role rules of deploy/ with its lock's name replaced by ours
    (the Lease's rule and the split-lock check's read of the Endpoints
    and the ConfigMap: every rule that names an object), optionally
    without the update verb."""
    rules = []
    for r in json.loads(json.dumps(deploy_role_rules)):
        if "resourceNames" in r:
            r["resourceNames"] = [lease]
        if not update:
            r["verbs"] = [v for v in r["verbs"] if v not in ("update", "*")]
            if not r["verbs"]:
                continue
        rules.append(r)
    return rules
