"""Coordinated Leader Election (KEP-4355) on a real kube-apiserver.

On the harness started with the CoordinatedLeaderElection gate and
coordination.k8s.io/v1beta1 (the cle_cluster fixture), leaderd in
coordinated mode and client-go v0.36.3's coordinated electors (its own
NewCandidate and LeaderElectionConfig.Coordinated) each keep a
LeaseCandidate, and the API server's election controller picks the
leader: the oldest version.  A rolling "upgrade" from 1.0 to 1.1 keeps
the lease on a 1.0 until none is left, with no two claims overlapping.
On the default API server (gate off) the same configuration falls back
to the usual election, and says so in /leader."""

import time

import e2elib as E
from e2elib import RD, RP
from e2ehist import H, Oracle

CAND_RULE = {"apiGroups": ["coordination.k8s.io"],
             "resources": ["leasecandidates"],
             "verbs": ["get", "list", "watch", "create", "update",
                       "delete"]}


class CoordGo(E.GoElector):
    def __init__(self, *a, version="1.0.0", **kw):
        super().__init__(*a, **kw)
        self.version = version

    def argv(self):
        return super().argv() + ["-coordinated", "-binary-version",
                                  self.version]


def coord(version):
    return ["--coordinated", "--binary-version", version]


def leader_of(parts):
    return [p for p in parts if p.proc is not None and p.proc.alive() and
            p.is_leader()]


def test_rolling_upgrade_keeps_the_old_version(cle_cluster, deploy_role):
    c = cle_cluster
    lease = "e2e-cle-%s" % time.strftime("%H%M%S")
    kubeconfig, subject = c.new_user("cle")
    c.bind(lease, E.lease_rules(deploy_role, lease) + [CAND_RULE], subject)
    E.wait_for(lambda: c.can_i(kubeconfig, "list", "leasecandidates", "x"),
               15, interval=0.5, what="RBAC binding")
    version = {}

    def ld(ident, v):
        p = E.Leaderd(ident, kubeconfig, c.namespace, lease, extra=coord(v))
        version[ident] = v
        return p

    def go(ident, v):
        p = CoordGo(ident, kubeconfig, c.namespace, lease, version=v)
        version[ident] = v
        return p

    old = [ld("c-cle-a", "1.0.0"), ld("c-cle-b", "1.0.0"),
           go("go-cle-g", "1.0.0")]
    new = [ld("c-cle-c", "1.1.0")]
    parts = old + new
    oracle = Oracle(c, match=lambda n: n == lease).start()
    try:
        # One second apart: the controller breaks a tie of versions by
        # creationTimestamp, whole seconds; equal ones flip its choice.
        for p in parts:
            oracle.follow(p.start().wait_up())
            time.sleep(1.1)
        t0 = time.monotonic()
        E.wait_for(lambda: len(leader_of(parts)) == 1, 40, interval=0.1,
                   what="the controller to pick a leader")
        first = leader_of(parts)[0]
        print("coordinated: first leader %s (%s) after %.1f s"
              % (first.ident, version[first.ident], time.monotonic() - t0))
        assert version[first.ident].startswith("1.0.0"), first.ident
        body = parts[0].leader()
        assert body["coordinated"] is True, body
        cands = c.admin.run("get", "leasecandidates", "-o",
                            "jsonpath={.items[*].metadata.name}").stdout
        assert set(cands.split()) >= {p.ident for p in parts}, cands
        # Roll: each old one replaced by a new pod at 1.1, the followers
        # first; the lease stays on a 1.0 while one is left.
        order = [p for p in old if p is not first] + [first]
        n = 0
        for p in order:
            p.stop()
            n += 1
            q = (ld if isinstance(p, E.Leaderd) else go)(
                "%s-v11" % p.ident, "1.1.0" if isinstance(p, E.Leaderd)
                else "1.1.0")
            parts.append(q)
            oracle.follow(q.start().wait_up())
            left = [o for o in old if o.proc.alive()]
            if left:
                time.sleep(2 * RP)
                lead = leader_of(parts)
                assert len(lead) == 1 and lead[0] is first, \
                    [x.ident for x in lead]
                assert c.admin.get_lease(lease)["spec"]["holderIdentity"] \
                    == first.ident
            else:
                t1 = time.monotonic()
                E.wait_for(lambda: len(leader_of(parts)) == 1, 40,
                           interval=0.05, what="a 1.1 leader")
                last = leader_of(parts)[0]
                print("coordinated: old leader gone -> %s (%s) in %.1f s"
                      % (last.ident, version[last.ident],
                         time.monotonic() - t1))
                assert version[last.ident].startswith("1.1.0")
        time.sleep(2 * RP)
        assert len(leader_of(parts)) == 1
    finally:
        oracle.stop()
        for p in parts:
            p.stop()
    print(H.summary(oracle.check(RD, RP)))
    # Our LeaseCandidates went with their leaderd.
    cands = c.admin.run("get", "leasecandidates", "-o",
                        "jsonpath={.items[*].metadata.name}").stdout
    assert not any(p.ident in cands.split() for p in parts
                   if isinstance(p, E.Leaderd)), cands


def test_coordinated_falls_back_when_gate_off(cluster, deploy_role):
    """With deploy/coordinated's rules (without them RBAC answers 403
    before the API server finds the resource missing)."""
    c = cluster
    lease = "e2e-clf-%s" % time.strftime("%H%M%S")
    kubeconfig, subject = c.new_user("clf")
    c.bind(lease, E.lease_rules(deploy_role, lease) + [CAND_RULE], subject)
    E.wait_for(lambda: c.can_i(kubeconfig, "get", "leases", lease), 15,
               interval=0.5, what="RBAC binding")
    a = E.Leaderd("c-clf-a", kubeconfig, c.namespace, lease,
                  extra=coord("1.0.0"))
    try:
        a.start().wait_up()
        E.wait_for(a.is_leader, 2.2 * RP + 10, what="a to lead")
        body = a.leader()
        assert body["coordinated"] is False, body
        assert "not served" in body["coordinated_reason"], body
        assert a.proc.text().count("coordinated election off") == 1
    finally:
        a.stop()


def test_foreign_candidates_do_not_stop_the_election(cle_cluster,
                                                     deploy_role):
    """Security review M3 on the real API: it takes a candidate of
    another Lease with 70 bytes of build metadata and one with a
    138-byte custom strategy; with both in the namespace the controller
    still gets leaderd's acks: when the leader leaves, it assigns the
    lease to the other, and leaderd logs no failed list or read."""
    c = cle_cluster
    lease = "e2e-clp-%s" % time.strftime("%H%M%S")
    kubeconfig, subject = c.new_user("clp")
    c.bind(lease, E.lease_rules(deploy_role, lease) + [CAND_RULE], subject)
    E.wait_for(lambda: c.can_i(kubeconfig, "get", "leasecandidates", "x"),
               15, interval=0.5, what="RBAC binding")
    poison = [("clp-meta", {"binaryVersion": "1.2.3+" + "b" * 70,
                            "emulationVersion": "1.2.3",
                            "strategy": "OldestEmulationVersion"}),
              ("clp-strategy", {"binaryVersion": "1.2.3",
                                "strategy": "a" * 63 + "." + "b" * 60 +
                                ".example.com/x"})]
    for name, spec in poison:
        spec["leaseName"] = lease + "-other"
        # Renewed (else the API server's collector deletes it at once).
        spec["renewTime"] = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z",
                                          time.gmtime())
        c.admin.apply({"apiVersion": "coordination.k8s.io/v1beta1",
                       "kind": "LeaseCandidate",
                       "metadata": {"name": name,
                                    "namespace": c.namespace},
                       "spec": spec})
    parts = [E.Leaderd("c-clp-a", kubeconfig, c.namespace, lease,
                       extra=coord("1.0.0")),
             E.Leaderd("c-clp-b", kubeconfig, c.namespace, lease,
                       extra=coord("1.0.0"))]
    try:
        for p in parts:
            p.start().wait_up()
            time.sleep(1.1)
        E.wait_for(lambda: len(leader_of(parts)) == 1, 40, interval=0.1,
                   what="the controller to pick a leader")
        first = leader_of(parts)[0]
        other = [p for p in parts if p is not first][0]
        # Past the controller's 5 s, the other's renewTime is stale: the
        # next election pings it and elects it only once it acks
        # (before the fix it never did, and nobody led again).
        time.sleep(6.0)
        first.stop()
        t0 = time.monotonic()
        E.wait_for(other.is_leader, 40, interval=0.1,
                   what="the controller to pick the other")
        print("coordinated: %s leads %.1f s after %s left"
              % (other.ident, time.monotonic() - t0, first.ident))
        assert other.leader()["coordinated"] is True
        for p in parts:
            assert "LeaseCandidate list" not in p.proc.text()
            assert "LeaseCandidate read" not in p.proc.text()
    finally:
        for p in parts:
            p.stop()
        for name, _ in poison:
            c.admin.run("delete", "leasecandidate", name, check=False)
