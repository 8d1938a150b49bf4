"""kubectl leaderd on a real kube-apiserver, with leaderd, client-go and
coordinated Leases present.

On the harness with Coordinated Leader Election on (cle_cluster: the
API server keeps spec.strategy and spec.preferredHolder, and serves
LeaseCandidates): a plain leaderd pair, a client-go elector and two
coordinated leaderds (each keeps a LeaseCandidate; the election
controller picks the leader).  kubectl-leaderd, with a user bound to a
Role that lets it read Leases and LeaseCandidates and patch Leases,
must show each Lease's exact holder, transitions, preferred holder and
candidates (as kubectl get lease -o json says them), live leases with a
renew age and time left within the election's timings, -A with the API
server's own Leases, -o json field for field, -w one line per renew,
and move: refused for an identity that is not a live candidate, done
with the time printed for a leaderd pair (--force) and for a
coordinated candidate (its LeaseCandidate).  A user without the Role
gets one 403 line naming the verb and the resource; a wrong token, one
401 line."""

import json
import os
import subprocess
import time

import pytest

import e2elib as E
from e2elib import LD, RP
from test_coordinated import CAND_RULE, CoordGo, coord, leader_of

PLUGIN_RULES = [{"apiGroups": ["coordination.k8s.io"],
                 "resources": ["leases"],
                 "verbs": ["get", "list", "watch", "patch"]},
                {"apiGroups": ["coordination.k8s.io"],
                 "resources": ["leasecandidates"],
                 "verbs": ["list"]}]


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    d = tmp_path_factory.mktemp("plugin")
    p = d / "kubectl-leaderd"
    os.symlink(E.LEADERD, p)
    return str(p)


def run(exe, kubeconfig, *args, timeout=30):
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["KUBECONFIG"] = kubeconfig
    return subprocess.run([exe] + list(args), env=env, capture_output=True,
                          text=True, timeout=timeout)


def rows(out):
    ls = out.rstrip("\n").split("\n")
    head = ls[0].split()
    return head, {ln.split()[head.index("NAME")]: dict(zip(head, ln.split()))
                  for ln in ls[1:]}


def seconds(age):
    """An age as kubectl prints it, below 10 minutes, in seconds."""
    if age.endswith("s") and "m" not in age:
        return int(age[:-1])
    m, _, s = age.partition("m")
    return int(m) * 60 + int(s[:-1] or 0)


@pytest.fixture(scope="module")
def scene(cle_cluster, deploy_role):
    """The Leases: a leaderd pair, a client-go elector, two coordinated
    leaderds; and the plugin's user."""
    c = cle_cluster
    tag = time.strftime("%H%M%S")
    plain, cg, co = ("e2e-pl-ld-%s" % tag, "e2e-pl-go-%s" % tag,
                     "e2e-pl-co-%s" % tag)
    kc, subject = c.new_user("plel")
    c.bind("plel-" + tag, E.lease_rules(deploy_role, plain) +
           E.lease_rules(deploy_role, cg) + E.lease_rules(deploy_role, co) +
           [CAND_RULE], subject)
    user, usubj = c.new_user("plugin")
    c.bind("plugin-" + tag, PLUGIN_RULES, usubj)
    E.wait_for(lambda: c.can_i(kc, "list", "leasecandidates", "x") and
               c.can_i(user, "patch", "leases", plain), 15, interval=0.5,
               what="RBAC bindings")
    parts = [E.Leaderd("ld-a", kc, c.namespace, plain),
             E.Leaderd("ld-b", kc, c.namespace, plain),
             E.GoElector("go-a", kc, c.namespace, cg),
             E.Leaderd("co-a", kc, c.namespace, co, extra=coord("1.0.0")),
             E.Leaderd("co-b", kc, c.namespace, co, extra=coord("1.1.0"))]
    parts[0].start().wait_up()
    E.wait_for(parts[0].is_leader, LD + 3, what="ld-a leads")
    for p in parts[1:]:
        p.start().wait_up()
    E.wait_for(lambda: leader_of(parts[2:3]), LD + 3, what="go-a leads")
    E.wait_for(lambda: leader_of(parts[3:]), 60, interval=0.5,
               what="the controller picks a coordinated leader")
    yield {"c": c, "user": user, "plain": plain, "cg": cg, "co": co,
           "parts": parts}
    for p in parts:
        p.stop()


def test_get_shows_every_lease_as_the_api_server_has_it(scene, exe):
    c, user = scene["c"], scene["user"]
    r = run(exe, user, "get")
    assert r.returncode == 0, r
    head, got = rows(r.stdout)
    assert head == ["NAME", "HOLDER", "RENEWED", "EXPIRES", "TRANSITIONS",
                    "CANDIDATES", "PREFERRED"]
    for name in (scene["plain"], scene["cg"], scene["co"]):
        spec = c.admin.get_lease(name)["spec"]
        row = got[name]
        assert row["HOLDER"] == spec["holderIdentity"], (name, row, spec)
        assert row["TRANSITIONS"] == str(spec.get("leaseTransitions", 0))
        assert row["PREFERRED"] == spec.get("preferredHolder", "<none>")
        # Renewed within a retry period or two; the time left within the
        # lease duration.
        assert seconds(row["RENEWED"]) <= 2 * RP + 1, row
        assert row["EXPIRES"] != "expired" and \
            LD - 2 * RP - 2 <= seconds(row["EXPIRES"]) <= LD, row
    assert got[scene["plain"]]["HOLDER"] == "ld-a"
    assert got[scene["cg"]]["HOLDER"] == "go-a"
    assert got[scene["plain"]]["CANDIDATES"] == "<none>"
    assert got[scene["co"]]["CANDIDATES"] == "2"
    # kubectl itself finds the plugin on PATH: `kubectl leaderd get`.
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env.update(KUBECONFIG=user, PATH="%s:%s" % (os.path.dirname(exe),
                                                env.get("PATH", "")))
    k = subprocess.run([E.KUBECTL, "plugin", "list"], env=env,
                       capture_output=True, text=True, timeout=30)
    assert exe in k.stdout, k
    k = subprocess.run([E.KUBECTL, "leaderd", "get", scene["cg"]], env=env,
                       capture_output=True, text=True, timeout=30)
    assert k.returncode == 0, k
    head, got = rows(k.stdout)
    assert head[0] == "NAME" and got[scene["cg"]]["HOLDER"] == "go-a", k
    # -o wide: the coordinated Lease's strategy.
    r = run(exe, user, "get", scene["co"], "-o", "wide")
    head, got = rows(r.stdout)
    assert head[-3:] == ["ACQUIRED", "STRATEGY", "GROUP"]
    assert got[scene["co"]]["STRATEGY"] == "OldestEmulationVersion"
    # -A (the admin may list every namespace): the API server's own
    # identity Leases in kube-system beside ours.
    r = run(exe, c.admin.kubeconfig, "get", "-A")
    assert r.returncode == 0, r
    ls = [ln.split() for ln in r.stdout.rstrip("\n").split("\n")]
    assert ls[0][:2] == ["NAMESPACE", "NAME"]
    assert any(ln[0] == "kube-system" and ln[1].startswith("apiserver-")
               for ln in ls[1:]), r.stdout
    assert [c.namespace, scene["cg"], "go-a"] in [ln[:3] for ln in ls[1:]]


def test_get_json_field_for_field(scene, exe):
    c, user, name = scene["c"], scene["user"], scene["co"]
    for _ in range(20):
        lease = c.admin.get_lease(name)
        doc = json.loads(run(exe, user, "get", name, "-o", "json").stdout)
        item, = doc["items"]
        if item["resourceVersion"] == lease["metadata"]["resourceVersion"]:
            break
    else:
        pytest.fail("the Lease changed between every two reads")
    spec = lease["spec"]
    assert doc["kind"] == "LeaseStatusList"
    assert {k: item[k] for k in ("namespace", "name", "holder",
                                 "acquireTime", "renewTime",
                                 "leaseDurationSeconds", "transitions",
                                 "strategy", "preferredHolder",
                                 "candidates")} == {
        "namespace": c.namespace, "name": name,
        "holder": spec["holderIdentity"],
        "acquireTime": spec["acquireTime"], "renewTime": spec["renewTime"],
        "leaseDurationSeconds": spec["leaseDurationSeconds"],
        "transitions": spec.get("leaseTransitions", 0),
        "strategy": spec["strategy"],
        "preferredHolder": spec.get("preferredHolder"), "candidates": 2}
    assert item["expired"] is False


def test_watch_prints_each_renew(scene, exe):
    user, name = scene["user"], scene["plain"]
    env = dict(os.environ, KUBECONFIG=user)
    p = subprocess.Popen([exe, "get", name, "-w"], env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        t0 = time.monotonic()
        got = [p.stdout.readline().split() for _ in range(4)]
        took = time.monotonic() - t0
        assert got[0][0] == "NAME", got
        # The initial row, then one row per renew, each a new version.
        assert all(g[:2] == [name, "ld-a"] for g in got[1:]), got
        assert took <= 3 * RP + 2, took
    finally:
        p.kill()
        p.wait()


def test_move(scene, exe):
    c, user = scene["c"], scene["user"]
    plain, co = scene["plain"], scene["co"]
    # No LeaseCandidate names ld-b: refused, nothing written.
    r = run(exe, user, "move", plain, "--to", "ld-b")
    assert r.returncode == 1 and r.stdout == "" and \
        r.stderr.count("\n") == 1 and "ld-b is not a live candidate" in \
        r.stderr, r
    assert c.admin.get_lease(plain)["spec"]["holderIdentity"] == "ld-a"
    r = run(exe, user, "move", plain, "--to", "ld-b", "--force")
    assert r.returncode == 0, r
    out = r.stdout.split()
    assert out[:7] == ["lease", '"%s"' % plain, "moved", "from", "ld-a",
                       "to", "ld-b"], r.stdout
    print("e2e move, leaderd pair: %s" % out[-1])
    E.wait_for(scene["parts"][1].is_leader, 2, what="ld-b leads")
    # The coordinated pair: the other one is a live candidate by its
    # LeaseCandidate, so no --force.
    holder = c.admin.get_lease(co)["spec"]["holderIdentity"]
    other = "co-b" if holder == "co-a" else "co-a"
    r = run(exe, user, "move", co, "--to", other, "--timeout", "20s")
    assert r.returncode == 0, r
    assert r.stdout.split()[:7] == ["lease", '"%s"' % co, "moved", "from",
                                    holder, "to", other], r.stdout
    print("e2e move, coordinated: %s" % r.stdout.split()[-1])


def test_refused_is_one_line(scene, exe):
    c = scene["c"]
    kc, _ = c.new_user("nobody")
    r = run(exe, kc, "get")
    assert r.returncode == 1 and r.stdout == "" and \
        r.stderr.count("\n") == 1, r
    assert r.stderr.startswith(
        "kubectl leaderd: Forbidden: not allowed to list leases in "
        "namespace %s (403); grant the verb \"list\" on \"leases\" in a "
        "Role: " % c.namespace), r
    bad = E.write_kubeconfig(os.path.join(E.WORK, "kc-badtoken"), c.server,
                             "nobody", ca_pem=c.ca_pem, token="not-a-token",
                             namespace=c.namespace)
    r = run(exe, bad, "get")
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and \
        r.stderr.startswith("kubectl leaderd: Unauthorized: the API server "
                            "at %s refused the credentials" % c.server), r
