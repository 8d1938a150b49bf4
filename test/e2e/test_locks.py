"""Legacy locks against a real kube-apiserver, with client-go v0.23's
resourcelock as the peer (test/e2e/clientgo-elector-v023):

 - leaderd on endpoints vs client-go v0.23 on endpoints, and the same on
   configmaps: takeovers both ways after a release and after expiry;
 - the rolling migration off the classic lock: 3 v0.23 electors on
   endpoints replaced one by one by leaderd on endpointsleases, then each
   of those by leaderd on leases.

Every participant's claim is sampled all along: no two claims overlap,
and the live participants name the same holder within 2.2 x retry_period
+ 1.5 s of a change.
"""

import json
import os
import re
import time

import pytest

import e2elib as E
from e2elib import LD, RP, KILL_BOUND, TERM_BOUND
from test_interop import Sampler, check_agreement, check_no_overlap

V023 = os.environ.get("CLIENTGO_ELECTOR_V023", "")
ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
AGREE = 2.2 * RP + 1.5
# A MultiLock participant whose lock names itself though this process
# never wrote it (it was killed and restarted under the same identity)
# reports the unknown leader, as client-go does, while the others name
# that holder, until the stale claim expires and someone takes over:
# within KILL_BOUND.
UNKNOWN_LEADER = "leaderelection.k8s.io/unknown"
EXPIRY_MIN = LD - 2.2 * RP - 0.5
# client-go v0.23's json.Marshal(LeaderElectionRecord).
RECORD_RE = re.compile(
    r'^\{"holderIdentity":"[^"]*","leaseDurationSeconds":\d+,'
    r'"acquireTime":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",'
    r'"renewTime":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",'
    r'"leaderTransitions":\d+\}$')
RESOURCES = {"leases": [("coordination.k8s.io", "leases")],
             "endpoints": [("", "endpoints")],
             "configmaps": [("", "configmaps")],
             "endpointsleases": [("", "endpoints"),
                                 ("coordination.k8s.io", "leases")],
             "configmapsleases": [("", "configmaps"),
                                  ("coordination.k8s.io", "leases")]}


def lock_rules(types, name):
    """Least privilege for these lock types on name, as deploy/ grants."""
    rules, seen = [], set()
    for t in types:
        for group, res in RESOURCES[t]:
            if res in seen:
                continue
            seen.add(res)
            rules.append({"apiGroups": [group], "resources": [res],
                          "resourceNames": [name],
                          "verbs": ["get", "update"]})
            rules.append({"apiGroups": [group], "resources": [res],
                          "verbs": ["create"]})
    rules.append({"apiGroups": [""], "resources": ["events"],
                  "verbs": ["create"]})
    return rules


class LegacyLeaderd(E.Leaderd):
    """leaderd with lock.type from a small config file (flags set the
    rest)."""

    def __init__(self, *a, lock_type="leases", **kw):
        super().__init__(*a, **kw)
        self.lock_type = lock_type
        self.kind = "c-" + lock_type
        cfg = os.path.join(E.WORK, "locktype-%s.yaml" % lock_type)
        with open(cfg, "w") as f:
            f.write("lock:\n  type: %s\n" % lock_type)
        self.extra = ["-f", cfg] + self.extra


class V023Elector(E.GoElector):
    def __init__(self, *a, lock_type="endpoints", **kw):
        super().__init__(*a, **kw)
        self.lock_type = lock_type
        self.kind = "go023-" + lock_type

    def argv(self):
        return [V023, "-lock-type", self.lock_type] + super().argv()[1:]


@pytest.fixture
def locks(cluster):
    """Factory: a fresh lock name and a user allowed the given lock types
    on it.  Participants made through it are stopped after the test."""
    if not V023 or not os.access(V023, os.X_OK):
        pytest.fail("clientgo-elector-v023 not found at %r (run through "
                    "make e2e)" % V023)
    made = []

    class Locks:
        def __init__(self, types, prefix="lk"):
            self.name = "e2e-%s-%s" % (prefix, os.urandom(3).hex())
            self.namespace = cluster.namespace
            self.kubeconfig, subject = cluster.new_user(prefix)
            cluster.bind(self.name, lock_rules(types, self.name), subject)
            E.wait_for(lambda: cluster.can_i(self.kubeconfig, "get",
                                             RESOURCES[types[0]][0][1],
                                             self.name),
                       15, interval=0.5, what="RBAC binding")

        def leaderd(self, ident, lock_type):
            p = LegacyLeaderd(ident, self.kubeconfig, self.namespace,
                              self.name, lock_type=lock_type)
            made.append(p)
            return p

        def v023(self, ident, lock_type):
            p = V023Elector(ident, self.kubeconfig, self.namespace,
                            self.name, lock_type=lock_type)
            made.append(p)
            return p

        def get(self, resource):
            p = cluster.admin.run("get", resource, self.name, "-o", "json",
                                  check=False)
            if p.returncode != 0:
                assert "NotFound" in p.stderr or "not found" in p.stderr, \
                    p.stderr
                return None
            return json.loads(p.stdout)

        def record(self, resource):
            obj = self.get(resource)
            if obj is None:
                return None, None
            raw = (obj["metadata"].get("annotations") or {}).get(ANNOTATION)
            return raw, json.loads(raw) if raw else None

    yield Locks
    for p in made:
        p.stop()


def leader_of(parts):
    ls = [p for p in parts if p.proc and p.proc.alive() and p.is_leader()]
    return ls[0] if len(ls) == 1 else None


def wait_leader(parts, timeout):
    return E.wait_for(lambda: leader_of(parts), timeout, interval=0.02,
                      what="a leader")


def report(sampler):
    ts = check_no_overlap(sampler.samples)
    worst = check_agreement(sampler.rounds, AGREE, unknown=UNKNOWN_LEADER,
                            unknown_bound=KILL_BOUND)
    print("samples %d, leadership terms %d, worst disagreement %.2fs" % (
        len(sampler.samples), len(ts), worst))
    return ts


@pytest.mark.parametrize("lock_type", ["endpoints", "configmaps"])
def test_legacy_lock_with_clientgo_v023(cluster, locks, lock_type):
    """leaderd and client-go v0.23 share an Endpoints or ConfigMap lock:
    takeovers each way after a release and after expiry."""
    lk = locks([lock_type], prefix=lock_type[:2])
    cs = [lk.leaderd("c-%d" % i, lock_type) for i in (1, 2)]
    gos = [lk.v023("go-%d" % i, lock_type) for i in (1, 2)]
    parts = cs + gos
    for p in parts:
        p.start()
    for p in parts:
        p.wait_up()
    sampler = Sampler(parts)
    sampler.start()
    takeovers = []
    try:
        for frm, to, mode in [("c", "go", "release"), ("go", "c", "release"),
                              ("c", "go", "expiry"), ("go", "c", "expiry")]:
            ldr = wait_leader(parts, KILL_BOUND + 5)
            if not ldr.ident.startswith(frm + "-"):
                # Hand the lock to kind frm: stop the others of the wrong
                # kind, release the leader, restart them afterwards.
                for p in parts:
                    if p is not ldr and p.proc.alive() and \
                            not p.ident.startswith(frm + "-"):
                        assert p.proc.term()[0] == 0
                assert ldr.proc.term()[0] == 0
                ldr = wait_leader(parts, TERM_BOUND + 5)
                assert ldr.ident.startswith(frm + "-"), ldr.ident
                for p in parts:
                    if not p.proc.alive():
                        p.start().wait_up()
            # Only kind `to` may follow.
            for p in parts:
                if p is not ldr and p.proc.alive() and \
                        not p.ident.startswith(to + "-"):
                    assert p.proc.term()[0] == 0
            time.sleep(2 * RP)
            t0 = time.monotonic()
            if mode == "expiry":
                ldr.proc.kill9()
            else:
                assert ldr.proc.term()[0] == 0
            new = wait_leader(parts, (KILL_BOUND if mode == "expiry"
                                      else TERM_BOUND) + 5)
            dt = time.monotonic() - t0
            takeovers.append((ldr.ident, new.ident, mode, dt))
            assert new.ident.startswith(to + "-"), (ldr.ident, new.ident)
            assert dt <= (KILL_BOUND if mode == "expiry" else TERM_BOUND), \
                takeovers[-1]
            if mode == "expiry":
                assert dt >= EXPIRY_MIN, takeovers[-1]
            for p in parts:
                if not p.proc.alive():
                    p.start().wait_up()
        ldr = wait_leader(parts, KILL_BOUND + 5)
        time.sleep(3 * RP)
        # The record as client-go writes it, whoever wrote it last.
        raw, rec = lk.record(lock_type)
        assert RECORD_RE.match(raw), raw
        assert rec["holderIdentity"] == ldr.ident
        assert rec["leaseDurationSeconds"] == LD
        assert lk.get("leases") is None
        for p in parts:
            assert p.leader()["name"] == ldr.ident, p.ident
        # leaderd reports the lock by its type.
        assert cs[0].leader()["lock"] == "%s/%s/%s" % (
            lock_type, lk.namespace, lk.name)
    finally:
        sampler.stop()
    for t in takeovers:
        print("takeover %s -> %s after %s: %.2fs" % t)
    report(sampler)
    # Kubernetes 1.33+ warns about v1 Endpoints: leaderd says it once per
    # process (each start of c-1 has its own log).
    m = re.match(r"v1\.(\d+)", cluster.version or "")
    warns = lock_type == "endpoints" and m and int(m.group(1)) >= 33
    for p in cs:
        text = p.proc.text()
        assert text.count("the API server warns") == (1 if warns else 0), \
            (cluster.version, text[-3000:])


def test_rolling_migration_v023_to_multilock_to_leases(locks):
    """Three client-go v0.23 electors on endpoints; a rolling update
    replaces them one by one with leaderd on endpointsleases, then a
    second one replaces those with leaderd on leases.  Each replacement
    is a SIGTERM (release) then a start, as a Deployment rolls pods; in
    each rollout, once old and new kinds run side by side, the leader is
    killed -9 as a node failure would."""
    lk = locks(["endpointsleases"], prefix="mig")
    old = [lk.v023("go-%d" % i, "endpoints") for i in range(3)]
    for p in old:
        p.start()
    for p in old:
        p.wait_up()
    parts = list(old)
    sampler = Sampler(parts)
    sampler.start()
    steps, kills = [], []
    try:
        wait_leader(parts, KILL_BOUND + 5)
        # Pods are rolled oldest first, whoever leads.
        for stage, lock_type in (("multi", "endpointsleases"),
                                 ("lease", "leases")):
            current = [p for p in parts if p.proc.alive()]
            for i, p in enumerate(current):
                new = lk.leaderd("%s-%d" % (stage, i), lock_type)
                t0 = time.monotonic()
                was_leader = p.proc.alive() and p.is_leader()
                if p.proc.alive():
                    rc = p.proc.term()[0]
                    assert rc == 0, "%s exited %s" % (p.ident, rc)
                new.start()
                parts.append(new)
                new.wait_up()
                ldr = wait_leader(parts, KILL_BOUND + 5)
                steps.append((p.ident, new.ident, was_leader, ldr.ident,
                              time.monotonic() - t0))
                # Let the fleet settle before the next pod rolls.
                time.sleep(3 * RP)
                if i != 0:
                    continue
                # A node dies mid-rollout, old and new kinds side by
                # side: the leader goes without releasing, the others
                # wait for expiry and one of them takes over.
                victim = wait_leader(parts, KILL_BOUND + 5)
                t0 = time.monotonic()
                victim.proc.kill9()
                ldr = wait_leader([x for x in parts if x is not victim],
                                  KILL_BOUND + 5)
                dt = time.monotonic() - t0
                kills.append((victim.ident, ldr.ident, dt))
                assert EXPIRY_MIN <= dt <= KILL_BOUND, kills[-1]
                if victim.ident.startswith(stage):
                    # Recreated from the new template; an old-kind pod
                    # is replaced by the rollout when its turn comes.
                    victim.start().wait_up()
                time.sleep(3 * RP)
            if stage == "multi":
                # Both objects name the leader now.
                ldr = wait_leader(parts, KILL_BOUND + 5)
                E.wait_for(lambda: (lk.get("leases") or {}).get("spec", {})
                           .get("holderIdentity") == ldr.ident, 3 * RP + 3,
                           what="the Lease written by the MultiLock")
                raw, rec = lk.record("endpoints")
                assert RECORD_RE.match(raw) and \
                    rec["holderIdentity"] == ldr.ident, raw
        ldr = wait_leader(parts, KILL_BOUND + 5)
        time.sleep(3 * RP)
        assert lk.get("leases")["spec"]["holderIdentity"] == ldr.ident
        assert ldr.ident.startswith("lease-")
        assert all(p.ident.startswith("lease-") for p in parts
                   if p.proc.alive())
    finally:
        sampler.stop()
    for s in steps:
        print("rolled %s -> %s (was leader: %s), leader %s after %.2fs" % s)
    for k in kills:
        print("killed leader %s -> %s after %.2fs" % k)
    report(sampler)


# The classic sidecar's --ttl split (lease ttl, renew ttl/2, retry ttl/4),
# at the suite's lease duration.
C_LD, C_RD, C_RP = LD, LD / 2, LD / 4
C_KILL_BOUND = C_LD + 2.2 * C_RP + E.SLACK


class ClassicPeer(V023Elector):
    """The classic leader-elector as its pods run: the Endpoints lock in
    the namespace "default" (its --election-namespace default), its --ttl
    split, no release on SIGTERM.  client-go v0.23's endpoints lock is
    the classic's algorithm on today's client (the 2016 sidecar cannot be
    fetched here): both take over after their own lease duration from
    the last change they saw."""

    def argv(self):
        return [V023, "-lock-type", "endpoints",
                "-kubeconfig", self.kubeconfig, "-namespace", "default",
                "-name", self.lease, "-id", self.ident,
                "-http", "127.0.0.1:%d" % self.port,
                "-lease-duration", "%gs" % C_LD,
                "-renew-deadline", "%gs" % C_RD,
                "-retry-period", "%gs" % C_RP,
                "-release-on-cancel=false"]


class ClassicLeaderd(E.Leaderd):
    """leaderd in the classic's pod: the classic's own command line
    (README, with --ttl), under --compat=classic as its image variant
    runs it, in a pod whose namespace is not "default" (the kubeconfig's
    context and $POD_NAMESPACE say the test namespace)."""

    kind = "c-classic"

    def argv(self):
        return [E.LEADERD, "--compat=classic", "--kubeconfig",
                self.kubeconfig, "--id=%s" % self.ident,
                "--election=%s" % self.lease,
                "--http=127.0.0.1:%d" % self.port, "--ttl=%gs" % C_LD]

    def start(self):
        self.port = E.free_port()
        self.generation += 1
        self.proc = E.Proc("%s-%s" % (self.kind, self.ident), self.argv(),
                           env=dict(os.environ,
                                    POD_NAMESPACE=self.namespace))
        return self


def test_rolling_migration_classic_namespace_default(cluster, locks):
    """Three classic sidecars on Endpoints default/NAME (no
    --election-namespace: its default is the literal "default"), replaced
    one by one by leaderd with the same command line: leaderd locks the
    same object, never the pod's namespace, and no two claims overlap;
    the leader is killed -9 once mid-rollout."""
    lk = locks(["endpoints"], prefix="cls")
    # The lock is in "default": the same rules there.
    for kind, obj in (("Role", {"rules": lock_rules(["endpoints"],
                                                      lk.name)}),
                      ("RoleBinding", {"roleRef": {
                          "apiGroup": "rbac.authorization.k8s.io",
                          "kind": "Role", "name": lk.name}})):
        obj.update({"apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": kind, "metadata": {"name": lk.name,
                                               "namespace": "default"}})
        if kind == "RoleBinding":
            obj["subjects"] = cluster.admin.json(
                "get", "rolebinding", lk.name)["subjects"]
        cluster.admin.run("apply", "-f", "-", input=json.dumps(obj),
                          ns=False)
    old = [ClassicPeer("classic-%d" % i, lk.kubeconfig, lk.namespace,
                       lk.name) for i in range(3)]
    new_made = []
    for p in old:
        p.start()
    for p in old:
        p.wait_up()
    parts = list(old)
    sampler = Sampler(parts)
    sampler.start()
    kills = []
    try:
        wait_leader(parts, C_KILL_BOUND + 5)
        for i, p in enumerate(old):
            new = ClassicLeaderd("leaderd-%d" % i, lk.kubeconfig,
                                 lk.namespace, lk.name)
            new_made.append(new)
            if p.proc.alive():
                assert p.proc.term()[0] == 0, p.ident
            new.start()
            parts.append(new)
            new.wait_up()
            wait_leader(parts, C_KILL_BOUND + 5)
            time.sleep(3 * C_RP)
            if i != 0:
                continue
            victim = wait_leader(parts, C_KILL_BOUND + 5)
            t0 = time.monotonic()
            victim.proc.kill9()
            ldr = wait_leader([x for x in parts if x is not victim],
                              C_KILL_BOUND + 5)
            kills.append((victim.ident, ldr.ident, time.monotonic() - t0))
            if victim in new_made:
                victim.start().wait_up()
            time.sleep(3 * C_RP)
        ldr = wait_leader(parts, C_KILL_BOUND + 5)
        assert ldr.ident.startswith("leaderd-"), ldr.ident
        assert ldr.leader()["lock"] == "endpoints/default/%s" % lk.name
        raw = (cluster.admin.json("get", "endpoints", lk.name, "-n",
                                  "default", ns=False)["metadata"]
               ["annotations"][ANNOTATION])
        assert RECORD_RE.match(raw) and \
            json.loads(raw)["holderIdentity"] == ldr.ident, raw
        # Nothing in the pods' own namespace: not the Endpoints, not a
        # Lease.
        assert lk.get("endpoints") is None
        assert lk.get("leases") is None
    finally:
        sampler.stop()
        for p in new_made:
            p.stop()
        cluster.admin.run("delete", "endpoints,role,rolebinding", lk.name,
                          "-n", "default", "--ignore-not-found", ns=False,
                          check=False)
    for k in kills:
        print("killed leader %s -> %s after %.2fs" % k)
    ts = check_no_overlap(sampler.samples)
    worst = check_agreement(sampler.rounds, 2.2 * C_RP + 1.5)
    print("samples %d, leadership terms %d, worst disagreement %.2fs" % (
        len(sampler.samples), len(ts), worst))
