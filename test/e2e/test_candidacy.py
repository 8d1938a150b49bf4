"""Leadership follows the application, on a real kube-apiserver.

Two leaderd bound to their applications (--require-client: each has an
application process holding /leader/watch) and a client-go elector on
the same Lease.  The leader's application is killed -9: its leaderd
releases at once and another participant leads well before
lease_duration, with no overlap of claims; the client-go elector keeps
working beside them.  Then the same with an HTTP probe: the leader's
application turns unhealthy."""

import os
import sys
import time

import e2elib as E
from e2elib import LD, RP, KILL_BOUND
from test_interop import Sampler, check_agreement, check_no_overlap

sys.path.insert(0, os.path.join(E.REPO, "test", "kit"))
from fakeapp import FakeApp, holding  # noqa: E402

def leader_of(parts):
    ls = [p for p in parts if p.proc and p.proc.alive() and p.is_leader()]
    return ls[0] if len(ls) == 1 else None


def test_client_bound_handover_beside_clientgo(election):
    el = election(prefix="cand")
    a = el.leaderd("c-cb-a", extra=["--require-client"]).start().wait_up()
    b = el.leaderd("c-cb-b", extra=["--require-client"]).start().wait_up()
    apps = {a.ident: holding(a.port)}
    E.wait_for(a.is_leader, 2.2 * RP + 10, what="a to lead")
    apps[b.ident] = holding(b.port)
    go = el.goelector("go-cb").start().wait_up()
    parts = [a, b, go]
    sampler = Sampler(parts)
    sampler.start()
    try:
        E.wait_for(lambda: (go.leader() or {}).get("name") == "c-cb-a", 10,
                   what="client-go to see a")
        t0 = time.monotonic()
        apps[a.ident].kill()
        apps[a.ident].wait()
        new = E.wait_for(lambda: leader_of(parts) not in (None, a) and
                         leader_of(parts), LD, interval=0.005,
                         what="another participant to lead")
        took = time.monotonic() - t0
        print("application killed -9 -> %s leads after %.3f s "
              "(lease_duration %d s)" % (new.ident, took, LD))
        # A release, not an expiry: well before lease_duration.
        assert took < LD / 2, took
        la = a.leader()
        assert la["candidate"] is False and la["candidate_reason"] == \
            "no client"
        # The client-go elector keeps working: it names the new leader.
        E.wait_for(lambda: (go.leader() or {}).get("name") == new.ident,
                   2.2 * RP + 3, what="client-go to name the new leader")
    finally:
        sampler.stop()
        for p in apps.values():
            if p.poll() is None:
                p.kill()
    ts = check_no_overlap(sampler.samples)
    worst = check_agreement(sampler.rounds, 2.2 * RP + 1.5)
    print("samples %d, terms %d, worst disagreement %.2fs" % (
        len(sampler.samples), len(ts), worst))


def test_probe_handover(election):
    el = election(prefix="prb")
    apps = [FakeApp(), FakeApp()]
    try:
        ps = [el.leaderd("c-pr-%d" % i, extra=[
            "--app-probe", "http://127.0.0.1:%d/ready" % apps[i].port])
            for i in range(2)]
        ps[0].start().wait_up()
        E.wait_for(ps[0].is_leader, 2.2 * RP + 10, what="p0 to lead")
        ps[1].start().wait_up()
        E.wait_for(lambda: (ps[1].leader() or {}).get("name") == "c-pr-0",
                   10, what="p1 to follow")
        sampler = Sampler(ps)
        sampler.start()
        t0 = time.monotonic()
        apps[0].mode = "fail"
        E.wait_for(ps[1].is_leader, KILL_BOUND, interval=0.005,
                   what="p1 to lead")
        took = time.monotonic() - t0
        sampler.stop()
        # The default probe: every 2 s, 3 failures.
        print("application unhealthy -> new leader after %.3f s" % took)
        assert took < 3 * 2 + 1 + 2.2 * RP + 1, took
        check_no_overlap(sampler.samples)
        assert ps[0].leader()["candidate_reason"] == "app unhealthy"
    finally:
        for x in apps:
            x.close()
