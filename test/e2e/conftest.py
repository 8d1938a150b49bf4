"""Fixtures: the kube-apiserver harness (or an existing cluster), users
bound to deploy/'s Role, and participants that are stopped after each test.

make e2e:          KASBOX names the harness binary; it is started once per
                   session and stopped with SIGTERM at the end (exit 0).
make e2e-cluster:  E2E_CLUSTER_KUBECONFIG names an existing cluster; users
                   are ServiceAccounts with TokenRequest tokens.
"""

import base64
import itertools
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
import uuid

import pytest

import e2elib as E

CLUSTER_KUBECONFIG = os.environ.get("E2E_CLUSTER_KUBECONFIG", "")
# One per election the suite starts, with room for new tests: the harness
# reads its token file once, at start.
N_STATIC_USERS = 48


def _need(path, what):
    if not path or not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.exit("e2e: %s not found at %r (run the tests through "
                    "`make e2e`)" % (what, path), returncode=1)


class Cluster:
    def __init__(self):
        self.mode = None
        self.server = None
        self.ca_file = None
        self.ca_pem = None
        self.wrong_ca = None
        self.admin = None         # Kubectl as a superuser, in namespace
        self.namespace = None
        self.static_users = []    # harness: (name, token) not yet used
        self.proc = None
        self.version = None

    def new_user(self, prefix):
        """A fresh identity with no rights yet: (kubeconfig, RBAC subject)."""
        path = os.path.join(E.WORK, "kc-%s-%s" % (prefix, uuid.uuid4().hex[:6]))
        if self.mode == "harness":
            assert self.static_users, "out of static users; raise N_STATIC_USERS"
            name, token = self.static_users.pop(0)
            E.write_kubeconfig(path, self.server, name, ca_pem=self.ca_pem,
                               token=token, namespace=self.namespace)
            return path, {"kind": "User", "name": name,
                          "apiGroup": "rbac.authorization.k8s.io"}
        sa = "%s-%s" % (prefix, uuid.uuid4().hex[:6])
        self.admin.run("create", "serviceaccount", sa)
        token = self.admin.run("create", "token", sa,
                               "--duration=3600s").stdout.strip()
        E.write_kubeconfig(path, self.server, sa, ca_pem=self.ca_pem,
                           token=token, namespace=self.namespace)
        return path, {"kind": "ServiceAccount", "name": sa,
                      "namespace": self.namespace}

    def bind(self, name, rules, subject):
        self.admin.apply({"apiVersion": "rbac.authorization.k8s.io/v1",
                          "kind": "Role", "metadata": {"name": name},
                          "rules": rules})
        self.admin.apply({"apiVersion": "rbac.authorization.k8s.io/v1",
                          "kind": "RoleBinding", "metadata": {"name": name},
                          "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                      "kind": "Role", "name": name},
                          "subjects": [subject]})

    def can_i(self, kubeconfig, verb, resource, name):
        k = E.Kubectl(kubeconfig, self.namespace)
        p = k.run("auth", "can-i", verb, "%s/%s" % (resource, name),
                  check=False)
        return p.stdout.strip() == "yes"


def _start_harness(c, extra=(), name="kasbox"):
    """Start the harness into E.WORK/name; extra: kube-apiserver flags."""
    _need(E.KASBOX, "the harness (kasbox)")
    out = os.path.join(E.WORK, name)
    shutil.rmtree(out, ignore_errors=True)
    users = ",".join("e2e-user-%d" % i for i in range(N_STATIC_USERS))
    log = open(os.path.join(E.WORK, name + ".log"), "wb")
    t0 = time.monotonic()
    # E2E_APISERVER_FLAGS: more kube-apiserver flags, space-separated,
    # e.g. --tls-min-version=VersionTLS13 (docs/building.md).
    flags = []
    for f in list(extra) + os.environ.get("E2E_APISERVER_FLAGS",
                                          "").split():
        flags += ["-apiserver-flag", f]
    p = subprocess.Popen([E.KASBOX, "-out", out, "-users", users] + flags,
                         stdout=subprocess.PIPE, stderr=log,
                         stdin=subprocess.DEVNULL, text=True)
    c.proc = p
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in p.stdout],
                     daemon=True).start()
    ready = None
    end = time.monotonic() + 240
    while ready is None:
        if p.poll() is not None:
            pytest.exit("e2e: kasbox exited with %s before READY; see %s" % (
                p.returncode, log.name), returncode=1)
        if time.monotonic() > end:
            p.kill()
            pytest.exit("e2e: kasbox not READY after 240s; see %s" % log.name,
                        returncode=1)
        try:
            l = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if l.startswith("READY "):
            ready = l.split()[1]
    print("\ne2e: kube-apiserver ready at %s after %.1fs" % (
        ready, time.monotonic() - t0))
    with open(os.path.join(out, "info.json")) as f:
        info = json.load(f)
    c.mode = "harness"
    c.server = info["url"]
    assert c.server == ready
    c.ca_file = info["ca"]
    c.wrong_ca = info["wrong_ca"]
    c.version = info["kubernetes_version"]
    with open(c.ca_file) as f:
        c.ca_pem = f.read()
    c.admin = E.Kubectl(info["users"]["admin"]["kubeconfig"])
    c.static_users = [(n, info["users"][n]["token"])
                      for n in sorted(info["users"]) if n.startswith("e2e-user-")]
    c.namespace = "e2e"
    c.admin.run("create", "namespace", c.namespace)
    c.admin.namespace = c.namespace


def _use_cluster(c):
    c.mode = "cluster"
    kc = E.Kubectl(CLUSTER_KUBECONFIG)
    view = kc.json("config", "view", "--raw", "--minify", ns=False)
    cl = view["clusters"][0]["cluster"]
    c.server = cl["server"]
    if "certificate-authority-data" in cl:
        c.ca_pem = base64.b64decode(cl["certificate-authority-data"]).decode()
    elif "certificate-authority" in cl:
        with open(cl["certificate-authority"]) as f:
            c.ca_pem = f.read()
    else:
        pytest.exit("e2e-cluster: the kubeconfig's cluster has no CA",
                    returncode=1)
    c.ca_file = os.path.join(E.WORK, "cluster-ca.crt")
    with open(c.ca_file, "w") as f:
        f.write(c.ca_pem)
    ctx = view["contexts"][0]["context"]
    c.namespace = os.environ.get("E2E_NAMESPACE") or ctx.get("namespace") \
        or "default"
    c.admin = E.Kubectl(CLUSTER_KUBECONFIG, c.namespace)
    c.wrong_ca = os.path.join(E.WORK, "wrong-ca.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec",
                    "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", os.path.join(E.WORK, "wrong-ca.key"),
                    "-out", c.wrong_ca, "-subj", "/CN=wrong-ca", "-days", "2"],
                   check=True, capture_output=True, timeout=30)
    c.version = kc.json("version", ns=False).get(
        "serverVersion", {}).get("gitVersion")


@pytest.fixture(scope="session")
def cluster():
    _need(E.LEADERD, "leaderd")
    _need(E.ELECTOR, "clientgo-elector")
    os.makedirs(E.WORK, exist_ok=True)
    c = Cluster()
    if CLUSTER_KUBECONFIG:
        _use_cluster(c)
    else:
        _start_harness(c)
    yield c
    if c.proc is not None:
        t0 = time.monotonic()
        c.proc.send_signal(signal.SIGTERM)
        try:
            rc = c.proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            c.proc.kill()
            rc = None
        dt = time.monotonic() - t0
        print("e2e: kasbox stopped in %.1fs, status %s" % (dt, rc))
        assert rc == 0, "kasbox did not stop cleanly on SIGTERM (%s)" % rc


def _stop_harness(c):
    if c.proc is None:
        return
    t0 = time.monotonic()
    c.proc.send_signal(signal.SIGTERM)
    try:
        rc = c.proc.wait(timeout=90)
    except subprocess.TimeoutExpired:
        c.proc.kill()
        rc = None
    print("e2e: kasbox stopped in %.1fs, status %s" % (
        time.monotonic() - t0, rc))
    assert rc == 0, "kasbox did not stop cleanly on SIGTERM (%s)" % rc


@pytest.fixture(scope="module")
def cle_cluster():
    """A second harness with Coordinated Leader Election on
    (--feature-gates=CoordinatedLeaderElection=true and the v1beta1
    coordination API), for the tests that need the Lease's strategy and
    preferredHolder kept: with the gate off, the API server drops them."""
    if CLUSTER_KUBECONFIG:
        pytest.skip("needs the harness (make e2e)")
    c = Cluster()
    _start_harness(c, extra=(
        "--feature-gates=CoordinatedLeaderElection=true",
        "--runtime-config=coordination.k8s.io/v1beta1=true"),
        name="kasbox-cle")
    yield c
    _stop_harness(c)


@pytest.fixture(scope="session")
def deploy_role(cluster):
    """The rules of the Role in deploy/ (kubectl kustomize deploy/)."""
    p = subprocess.run([E.KUBECTL, "kustomize",
                        os.path.join(E.REPO, "deploy")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, "kubectl kustomize deploy/: " + p.stderr
    # kubectl turns the YAML into JSON for us: one object after another.
    q = cluster.admin.run("create", "--dry-run=client", "-o", "json",
                          "-f", "-", input=p.stdout)
    items, dec, s, i = [], json.JSONDecoder(), q.stdout, 0
    while s[i:].strip():
        obj, j = dec.raw_decode(s[i:].lstrip())
        i = len(s) - len(s[i:].lstrip()) + j
        items.extend(obj.get("items", [obj]))
    roles = [i for i in items if i.get("kind") == "Role"]
    assert len(roles) == 1, "expected one Role in deploy/, got %d" % len(roles)
    return roles[0]["rules"]


_seq = itertools.count()


@pytest.fixture
def election(cluster, deploy_role):
    """Factory: a fresh Lease name and a user bound only to deploy/'s Role
    for it (or that Role without update).  Participants made through it are
    stopped after the test."""
    made = []

    class Election:
        def __init__(self, update=True, prefix="le"):
            self.lease = "e2e-%s-%d-%s" % (prefix, next(_seq),
                                           uuid.uuid4().hex[:4])
            self.namespace = cluster.namespace
            self.kubeconfig, self.subject = cluster.new_user(prefix)
            self.rules = E.lease_rules(deploy_role, self.lease, update=update)
            cluster.bind(self.lease, self.rules, self.subject)
            # RBAC takes effect at once on one apiserver; check anyway.
            E.wait_for(lambda: cluster.can_i(self.kubeconfig, "get",
                                             "leases", self.lease),
                       15, interval=0.5, what="RBAC binding")

        def leaderd(self, ident, kubeconfig=None, extra=()):
            p = E.Leaderd(ident, kubeconfig or self.kubeconfig,
                          self.namespace, self.lease, extra=extra)
            made.append(p)
            return p

        def goelector(self, ident, kubeconfig=None):
            p = E.GoElector(ident, kubeconfig or self.kubeconfig,
                            self.namespace, self.lease)
            made.append(p)
            return p

        def get_lease(self):
            return cluster.admin.get_lease(self.lease)

    yield Election
    for p in made:
        p.stop()
