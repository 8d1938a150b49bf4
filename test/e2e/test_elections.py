"""Two elections in each of three leaderd (elections: in the config), on a
real kube-apiserver: each election gets one leader; kill -9 of the leader
of one election moves it (and whatever else that process led) after its
Lease expires, and no election ever has two instances that say they lead
at overlapping moments (sampled over each instance's GET /leaders)."""

import json
import os
import threading
import time
import urllib.request

import e2elib as E
from e2elib import KILL_BOUND, RP


class Sampler:
    """Polls every instance's /leaders in turn: (t0, t1, ident, election,
    is_leader); one after the other, so windows never overlap."""

    def __init__(self, parts, names):
        self.parts = parts
        self.names = names
        self.samples = []
        self.stop_ev = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop_ev.is_set():
            for p in self.parts:
                t0 = time.monotonic()
                body = None
                if p.proc.alive():
                    try:
                        with urllib.request.urlopen(
                                "http://127.0.0.1:%d/leaders" % p.port,
                                timeout=0.5) as r:
                            body = json.loads(r.read())
                    except (OSError, ValueError):
                        body = None
                t1 = time.monotonic()
                for name, v in (body or {}).items():
                    self.samples.append((t0, t1, p.ident, name,
                                         v.get("is_leader") is True))
                if body is None:
                    # Unreachable or dead: leads nothing.
                    for name in self.names:
                        self.samples.append((t0, t1, p.ident, name, False))
            self.stop_ev.wait(0.03)

    def leaders(self, election):
        """The instances whose latest sample of election says leader."""
        last = {}
        for t0, t1, ident, name, lead in self.samples:
            if name == election:
                last[ident] = lead
        return [i for i, lead in last.items() if lead]

    def overlaps(self, election):
        claims, open_ = [], {}
        for t0, t1, ident, name, lead in self.samples:
            if name != election:
                continue
            if lead:
                open_.setdefault(ident, [ident, t0, t1])[2] = t1
            elif ident in open_:
                claims.append(open_.pop(ident))
        claims += list(open_.values())
        return [(a, b) for i, a in enumerate(claims) for b in claims[i + 1:]
                if a[0] != b[0] and a[1] < b[2] and b[1] < a[2]]


def test_two_elections_kill9_no_overlap(election, cluster, deploy_role):
    el = election(prefix="multi")
    lease_b = el.lease + "-b"
    cluster.bind(lease_b, E.lease_rules(deploy_role, lease_b), el.subject)
    E.wait_for(lambda: cluster.can_i(el.kubeconfig, "update", "leases",
                                     lease_b), 15, interval=0.5,
               what="RBAC binding of the second Lease")
    cfg = os.path.join(E.WORK, "elections-%s.yaml" % el.lease)
    with open(cfg, "w") as f:
        f.write("elections:\n  - name: b\n    lock: {name: %s}\n" % lease_b)
    ps = [el.leaderd("c-multi-%d" % i, extra=["-f", cfg]).start()
          for i in range(3)]
    for p in ps:
        p.wait_up()
    first = el.lease
    s = Sampler(ps, (first, "b"))
    s.t.start()
    try:
        E.wait_for(lambda: len(s.leaders(first)) == 1 and
                   len(s.leaders("b")) == 1, 2.2 * RP + 15,
                   what="one leader in each election")
        old = s.leaders("b")[0]
        victim = next(p for p in ps if p.ident == old)
        assert cluster.admin.get_lease(lease_b)["spec"][
            "holderIdentity"] == old
        time.sleep(2 * RP)
        t0 = time.monotonic()
        victim.proc.kill9()
        E.wait_for(lambda: s.leaders("b") and s.leaders("b")[0] != old,
                   KILL_BOUND + 2, interval=0.05,
                   what="b taken over after kill -9")
        print("b: takeover after %.2fs (bound %.1fs)"
              % (time.monotonic() - t0, KILL_BOUND))
        E.wait_for(lambda: len(s.leaders(first)) == 1 and
                   s.leaders(first)[0] != old, KILL_BOUND + 2,
                   what="the first election led by a live instance")
        spec = cluster.admin.get_lease(lease_b)["spec"]
        assert spec["holderIdentity"] == s.leaders("b")[0]
        assert spec["leaseTransitions"] >= 1
    finally:
        s.stop_ev.set()
        s.t.join(5)
    for name in (first, "b"):
        assert not s.overlaps(name), (name, s.overlaps(name))
