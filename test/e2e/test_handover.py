"""Directed handover and preferredHolder on a real kube-apiserver.

leaderd hands the Lease to a named leaderd (which takes it at once), and
to a named client-go elector (which treats the record naming it as its
own and renews it at its next poll); `kubectl patch lease --type merge`
setting strategy and preferredHolder moves leadership to that holder.
The API server's history of the Lease is recorded (e2ehist): the terms
it shows hold server-side S1, a growing fencing token, unique
renewTimes, and every claim on a leaderd's stream or the client-go
elector's /leader lies in a term of its own; no two claims overlap."""

import json
import time
import urllib.error
import urllib.request

import e2elib as E
from e2elib import LD, RD, RP
from e2ehist import Oracle
import lease_history as H
from test_interop import Sampler, check_no_overlap


def release_to(p, to):
    req = urllib.request.Request(
        "http://127.0.0.1:%d/leader/release?to=%s" % (p.port, to),
        data=b"", method="POST")
    try:
        with urllib.request.urlopen(req, timeout=LD + 5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_handover_to_leaderd_then_clientgo(election, cluster):
    el = election(prefix="ho")
    oracle = Oracle(cluster, match=lambda n: n == el.lease).start()
    a = oracle.follow(el.leaderd("c-ho-a").start().wait_up())
    E.wait_for(a.is_leader, 2.2 * RP + 10, what="a to lead")
    b = oracle.follow(el.leaderd("c-ho-b").start().wait_up())
    go = oracle.follow(el.goelector("go-ho").start().wait_up())
    E.wait_for(lambda: (b.leader() or {}).get("name") == "c-ho-a" and
               (go.leader() or {}).get("name") == "c-ho-a", 10,
               what="b and go to follow a")
    try:
        t0 = time.monotonic()
        st, body = release_to(a, "c-ho-b")
        assert st == 200 and body["released"] is True, body
        E.wait_for(b.is_leader, 2.0, interval=0.002, what="b to lead")
        took = time.monotonic() - t0
        print("leaderd -> leaderd handover: %.1f ms" % (took * 1000))
        lease = el.get_lease()
        assert "leaderd.io/handover-to" not in \
            (lease["metadata"].get("annotations") or {})
        time.sleep(2 * RP)
        t0 = time.monotonic()
        st, body = release_to(b, "go-ho")
        assert st == 200, body
        E.wait_for(go.is_leader, 2.2 * RP + 3, interval=0.005,
                   what="client-go to lead")
        took = time.monotonic() - t0
        print("leaderd -> client-go handover: %.3f s (its next poll)"
              % took)
        # client-go renews it as its own: holder and term unchanged.
        time.sleep(2 * RP)
        spec = el.get_lease()["spec"]
        assert spec["holderIdentity"] == "go-ho"
        assert go.is_leader() and not a.is_leader() and not b.is_leader()
    finally:
        fig = oracle.check(RD, RP)
    print(H.summary(fig))
    assert fig["terms"] == 3, fig


def patch_preferred(kubectl, lease, holder):
    kubectl.run("patch", "lease", lease, "--type", "merge", "-p",
                json.dumps({"spec": {"strategy": "OldestEmulationVersion",
                                     "preferredHolder": holder}}))


def test_preferred_holder_patch(cle_cluster, deploy_role):
    """With Coordinated Leader Election on (the API server keeps the
    fields), `kubectl patch lease` setting strategy and preferredHolder
    moves leadership to that holder at once; the strategy stays, the
    preferredHolder is cleared once served."""
    c = cle_cluster
    lease = "e2e-pf-%s" % time.strftime("%H%M%S")
    kubeconfig, subject = c.new_user("pf")
    c.bind(lease, E.lease_rules(deploy_role, lease), subject)
    E.wait_for(lambda: c.can_i(kubeconfig, "get", "leases", lease), 15,
               interval=0.5, what="RBAC binding")
    a = E.Leaderd("c-pf-a", kubeconfig, c.namespace, lease).start().wait_up()
    b = E.Leaderd("c-pf-b", kubeconfig, c.namespace, lease)
    try:
        E.wait_for(a.is_leader, 2.2 * RP + 10, what="a to lead")
        b.start().wait_up()
        E.wait_for(lambda: (b.leader() or {}).get("name") == "c-pf-a", 10,
                   what="b to follow a")
        sampler = Sampler([a, b])
        sampler.start()
        try:
            t0 = time.monotonic()
            patch_preferred(c.admin, lease, "c-pf-b")
            E.wait_for(b.is_leader, 2.2 * RP + 3, interval=0.005,
                       what="b to lead")
            print("preferredHolder patch -> new leader: %.3f s"
                  % (time.monotonic() - t0))
            time.sleep(2 * RP)
            spec = c.admin.get_lease(lease)["spec"]
            # Served: cleared, as the controller clears it.
            assert not spec.get("preferredHolder"), spec
            assert spec["strategy"] == "OldestEmulationVersion", spec
            assert b.is_leader() and not a.is_leader()
        finally:
            sampler.stop()
        check_no_overlap(sampler.samples)
    finally:
        a.stop()
        b.stop()


def test_preferred_holder_gate_off(election, cluster):
    """On the default API server (the gate off) the patch's fields are
    dropped: nothing moves, and leaderd goes on as before."""
    el = election(prefix="pg")
    a = el.leaderd("c-pg-a").start().wait_up()
    E.wait_for(a.is_leader, 2.2 * RP + 10, what="a to lead")
    b = el.leaderd("c-pg-b").start().wait_up()
    E.wait_for(lambda: (b.leader() or {}).get("name") == "c-pg-a", 10,
               what="b to follow a")
    patch_preferred(cluster.admin, el.lease, "c-pg-b")
    spec = el.get_lease()["spec"]
    if spec.get("preferredHolder"):
        # A server with the gate on keeps them: then leadership moves.
        E.wait_for(b.is_leader, 2.2 * RP + 3, what="b to lead")
        return
    time.sleep(3 * RP)
    assert a.is_leader() and not b.is_leader()
