"""What leaderd does because it leads, against a real kube-apiserver:

- the run mode (`leaderd run -- CMD`): two instances in run mode through
  a SIGTERM and a kill -9 failover; the commands' own records (marker
  files with CLOCK_MONOTONIC times, test/kit/runchild.py) never
  overlap, and each command carries the term's fencing token;
- the leader pod label (actions.label): Pod objects made for the test
  (the harness has no kubelet, so they stay Pending, which is all a
  label needs), the RBAC rule of deploy/leader-service; the leader's pod
  says leaderd.io/role=leader, the other standby, and they swap on a
  failover.
"""

import json
import os
import subprocess
import sys
import time

import e2elib as E
from e2elib import LD, RD, RP, KILL_BOUND, TERM_BOUND

CHILD = os.path.join(E.REPO, "test", "kit", "runchild.py")
GRACE = 1.5             # <= LD - RD = 2s: the run mode's guarantee holds
KEY = "leaderd.io/role"


def records(marker):
    out = []
    try:
        with open(marker) as f:
            for ln in f:
                p = ln.rstrip("\n").split(" ", 3)
                if len(p) >= 3:
                    out.append((int(p[0]), p[1], float(p[2]),
                                p[3] if len(p) > 3 else ""))
    except FileNotFoundError:
        pass
    return out


def spans(marker):
    """Per process of the marker: (pid, first t, last t)."""
    by = {}
    for pid, _, t, _ in records(marker):
        a, b = by.get(pid, (t, t))
        by[pid] = (min(a, t), max(b, t))
    return [(pid, a, b) for pid, (a, b) in by.items()]


def starts(marker):
    return [r for r in records(marker) if r[1] == "start"]


def never_two(markers):
    s = [(name, pid, a, b) for name, m in markers.items()
         for pid, a, b in spans(m)]
    s.sort(key=lambda x: x[2])
    for i, x in enumerate(s):
        for y in s[i + 1:]:
            assert not (x[0] != y[0] and x[2] < y[3] and y[2] < x[3]), \
                "commands overlap: %r and %r" % (x, y)
    return s


def run_leaderd(el, ident, marker):
    return el.leaderd(ident, extra=[
        "run", "--grace", "%dms" % int(GRACE * 1000), "--",
        sys.executable, CHILD, marker, "--ignore-term"])


def wait_leader(parts, timeout):
    def one():
        ls = [p for p in parts if p.proc.alive() and p.is_leader()]
        return ls[0] if len(ls) == 1 else None
    return E.wait_for(one, timeout, what="one leader")


def test_run_mode_one_command_at_a_time(election, cluster):
    el = election(prefix="run")
    marks = {n: os.path.join(E.WORK, "%s-%s.marks" % (el.lease, n))
             for n in ("c-run-a", "c-run-b")}
    ps = {n: run_leaderd(el, n, marks[n]).start().wait_up() for n in marks}
    parts = list(ps.values())
    lead = wait_leader(parts, 2.2 * RP + 10)
    E.wait_for(lambda: starts(marks[lead.ident]), 5,
               what="the leader's command")
    body = lead.leader()
    assert "LEADERD_FENCING_TOKEN=%s" % body["fencing_token"] in \
        starts(marks[lead.ident])[0][3]
    lease = el.get_lease()
    assert body["fencing_token"] == "%010d-%s" % (
        lease["spec"]["leaseTransitions"], lease["metadata"]["uid"])
    tokens = [body["fencing_token"]]

    for how in ("sigterm", "kill9"):
        other = [p for p in parts if p is not lead][0]
        n0 = len(starts(marks[other.ident]))
        t0 = time.monotonic()
        if how == "sigterm":
            rc, dt = lead.proc.term(timeout=GRACE + 10)
            assert rc == 0, lead.proc.text()[-2000:]
            bound = TERM_BOUND + GRACE
        else:
            lead.proc.kill9()
            bound = KILL_BOUND
        E.wait_for(lambda: len(starts(marks[other.ident])) > n0, bound,
                   what="the other command after %s" % how)
        print("run mode, %s: next command after %.2fs" % (
            how, time.monotonic() - t0))
        assert other.is_leader()
        tokens.append(other.leader()["fencing_token"])
        lead.start().wait_up()      # back as a follower
        lead = other
    assert tokens == sorted(tokens) and len(set(tokens)) == 3, tokens
    s = never_two(marks)
    gaps = [b[2] - a[3] for a, b in zip(s, s[1:]) if a[0] != b[0]]
    print("run mode: %d commands, smallest gap %.3fs" % (len(s), min(gaps)))
    rc, _ = lead.proc.term(timeout=GRACE + 10)
    assert rc == 0


def leader_service_pod_rules():
    """The rules of deploy/leader-service's Role that are about pods."""
    p = subprocess.run([E.KUBECTL, "kustomize",
                        os.path.join(E.REPO, "deploy", "leader-service")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    import yaml
    docs = [d for d in yaml.safe_load_all(p.stdout) if d]
    role = [d for d in docs if d["kind"] == "Role"][0]
    rules = [r for r in role["rules"] if "pods" in r.get("resources", [])]
    assert rules
    return rules


def role_of(cluster, pod):
    o = cluster.admin.json("get", "pod", pod)
    return o["metadata"].get("labels", {}).get(KEY)


def test_leader_pod_label(election, cluster):
    el = election(prefix="lbl")
    cluster.bind(el.lease + "-pods", leader_service_pod_rules(), el.subject)
    E.wait_for(lambda: cluster.can_i(el.kubeconfig, "patch", "pods", "x"),
               15, interval=0.5, what="RBAC on pods")
    # No controller manager here: the pods' service account must be made.
    cluster.admin.apply({"apiVersion": "v1", "kind": "ServiceAccount",
                         "metadata": {"name": "e2e-label-pods"}})
    pods = {}
    parts = []
    for n in ("a", "b"):
        pod = "%s-pod-%s" % (el.lease, n)
        cluster.admin.apply({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod, "labels": {"app": "e2e-label"}},
            "spec": {"serviceAccountName": "e2e-label-pods",
                     "automountServiceAccountToken": False,
                     "containers": [{"name": "app",
                                     "image": "registry.invalid/app:1"}]}})
        cfg = os.path.join(E.WORK, "%s.yaml" % pod)
        with open(cfg, "w") as f:
            f.write("actions:\n  label:\n    enabled: true\n    pod: %s\n"
                    % pod)
        p = el.leaderd("c-lbl-" + n, extra=["-f", cfg]).start().wait_up()
        pods[p.ident] = pod
        parts.append(p)
    try:
        lead = wait_leader(parts, 2.2 * RP + 10)
        other = [p for p in parts if p is not lead][0]
        E.wait_for(lambda: role_of(cluster, pods[lead.ident]) == "leader" and
                   role_of(cluster, pods[other.ident]) == "standby", 10,
                   interval=0.2, what="leader and standby labels")
        # The Service's selector finds exactly the leader's pod.
        sel = cluster.admin.json("get", "pods", "-l",
                                 "app=e2e-label,%s=leader" % KEY)["items"]
        assert [o["metadata"]["name"] for o in sel] == [pods[lead.ident]]
        assert "label" not in "".join(
            l for l in lead.proc.text().splitlines() if "failed" in l)

        t0 = time.monotonic()
        rc, _ = lead.proc.term(timeout=10)
        assert rc == 0
        # Standby was written before the release, so at once.
        assert role_of(cluster, pods[lead.ident]) == "standby"
        E.wait_for(lambda: role_of(cluster, pods[other.ident]) == "leader",
                   TERM_BOUND + 5, interval=0.2, what="the new leader's label")
        print("label: new leader's pod labelled %.2fs after SIGTERM"
              % (time.monotonic() - t0))
        sel = cluster.admin.json("get", "pods", "-l",
                                 "app=e2e-label,%s=leader" % KEY)["items"]
        assert [o["metadata"]["name"] for o in sel] == [pods[other.ident]]
    finally:
        for pod in pods.values():
            cluster.admin.run("delete", "pod", pod, "--wait=false",
                              check=False)
