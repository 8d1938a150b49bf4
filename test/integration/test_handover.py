"""Directed handover (POST /leader/release?to=IDENTITY) and
spec.preferredHolder.

The leader stops claiming and writes the lease over to the successor in
one compare-and-swap: holderIdentity the successor, acquireTime =
renewTime = now, leaseTransitions + 1, and the annotation
leaderd.io/handover-to.  A leaderd successor takes it at once, as a renew
(its claim counted from its own send time), which removes the mark; an
absent successor lets the lease expire after lease_duration, with no
write from anyone before.  A record's preferredHolder (with a strategy)
naming another identity makes the leader hand over to it."""

import json
import os
import signal
import sys
import time

from harness import LEASE_DURATION as LD, RETRY_PERIOD as RP, wait_until

SLACK = 1.5
JITTER = 2.2
MARK = "leaderd.io/handover-to"


def post(inst, path, timeout=6.0):
    st, _, body = inst.request(path, method="POST", timeout=timeout)
    return st, json.loads(body) if body else None


def pair(cluster, a_name, b_name, **kw):
    a = cluster.new(a_name, **kw)
    b = cluster.new(b_name)
    a.start()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    b.start()
    wait_until(lambda: (b.leader() or {}).get("name") == a_name, 3.0,
               what="b follows a")
    return a, b


def test_handover_to_a_follower(cluster):
    a, b = pair(cluster, "ho-a", "ho-b")
    c = cluster.start("ho-c")
    wait_until(lambda: (c.leader() or {}).get("name") == "ho-a", 3.0,
               what="c follows a")
    chk = cluster.checker()
    before = cluster.lease()["spec"]
    t0 = time.monotonic()
    st, body = post(a, "/leader/release?to=ho-b")
    assert st == 200 and body["released"] is True, body
    wait_until(b.is_leader, 1.0, interval=0.002, what="b leads")
    took = time.monotonic() - t0
    print("directed handover: call to the successor's is_leader %.1f ms"
          % (took * 1000))
    assert not a.is_leader() and not c.is_leader()
    # The handover record, then b's renew over it (the mark removed).
    writes = [h for h in cluster.api.history(ns="default",
                                             name=cluster.lock)
              if h["method"] == "PUT"]
    handed = [h for h in writes if h["spec"].get("holderIdentity") ==
              "ho-b"]
    assert handed, writes
    first = handed[0]["spec"]
    assert first["leaseTransitions"] == before["leaseTransitions"] + 1
    assert first["acquireTime"] == first["renewTime"]
    assert first["leaseDurationSeconds"] == before["leaseDurationSeconds"]
    wait_until(lambda: MARK not in (cluster.lease()["metadata"]
                                    .get("annotations") or {}), 2.0,
               what="b's renew removes the mark")
    spec = cluster.lease()["spec"]
    assert spec["holderIdentity"] == "ho-b"
    assert spec["acquireTime"] == first["acquireTime"]
    assert spec["leaseTransitions"] == first["leaseTransitions"]
    # The fencing token moved on with the term.
    assert b.leader()["fencing_token"] > \
        "%010d" % before["leaseTransitions"]
    # a follows through its cooldown; c never took it.
    time.sleep(3 * RP)
    assert b.is_leader() and not a.is_leader() and not c.is_leader()
    assert a.log_count("handed lease") >= 1
    chk.assert_s1()


def test_handover_to_nobody_expires(cluster):
    """To an identity no instance has (or a successor killed just
    before): nobody writes the lease until it expires, then another
    takes it."""
    a, b = pair(cluster, "hn-a", "hn-b")
    chk = cluster.checker()
    st, body = post(a, "/leader/release?to=hn-ghost")
    assert st == 200, body
    t0 = time.monotonic()
    assert cluster.lease()["spec"]["holderIdentity"] == "hn-ghost"
    n0 = len(cluster.api.history(ns="default", name=cluster.lock))
    wait_until(lambda: a.is_leader() or b.is_leader(),
               LD + JITTER * RP + SLACK, what="a leader after expiry")
    took = time.monotonic() - t0
    assert took >= LD - 0.2, took
    # The first write after the handover is a takeover after LD (by b,
    # or by a, whose cooldown is as long).
    later = cluster.api.history(ns="default", name=cluster.lock)[n0:]
    assert later and later[0]["spec"]["holderIdentity"] in ("hn-a", "hn-b")
    assert later[0]["t"] - t0 >= LD - 0.2
    chk.assert_s1()


def test_handover_refusals(cluster):
    a, b = pair(cluster, "hr-a", "hr-b")
    for q, st_want in (("to=hr-a", 400), ("to=a%20b", 400),
                       ("to=hr-b&to=hr-c", 400), ("from=hr-b", 400)):
        st, body = post(a, "/leader/release?" + q)
        assert st == st_want, (q, st, body)
    assert a.is_leader()
    st, body = post(b, "/leader/release?to=hr-a")
    assert st == 409 and body["error"] == "not the leader"


def test_preferred_holder_moves_leadership(cluster):
    """A coordinated controller (or kubectl patch) sets strategy and
    preferredHolder on the Lease: the leader hands over to that holder
    at once; the strategy is kept by every write, the preferredHolder
    cleared once served (as the controller clears it: client-go's
    coordinated elector would not renew a lease naming one)."""
    a, b = pair(cluster, "pf-a", "pf-b")
    chk = cluster.checker()

    def prefer(obj):
        obj["spec"]["strategy"] = "OldestEmulationVersion"
        obj["spec"]["preferredHolder"] = "pf-b"
    cluster.api.modify_lease("default", cluster.lock, prefer)
    wait_until(b.is_leader, JITTER * RP + SLACK, what="b leads")
    spec = cluster.lease()["spec"]
    assert "preferredHolder" not in spec, spec
    assert spec["strategy"] == "OldestEmulationVersion"
    time.sleep(3 * RP)
    assert b.is_leader()
    chk.assert_s1()


CHILD = r"""
import signal, sys, time
def term(*a):
    open(sys.argv[1], "a").write("term %f\n" % time.monotonic())
    sys.exit(0)
signal.signal(signal.SIGTERM, term)
open(sys.argv[1], "a").write("start %f\n" % time.monotonic())
while True:
    time.sleep(0.05)
"""


def test_run_mode_handover_stops_the_command_first(cluster, tmp_path):
    marker = str(tmp_path / "child.log")
    script = str(tmp_path / "child.py")
    with open(script, "w") as f:
        f.write(CHILD)
    a = cluster.new("hrun-a", args=["run", "--grace", "1s", "--",
                                    sys.executable, script, marker])
    a.start()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    wait_until(lambda: os.path.exists(marker), 3.0, what="command starts")
    b = cluster.start("hrun-b")
    wait_until(lambda: (b.leader() or {}).get("name") == "hrun-a", 3.0,
               what="b follows")
    st, body = post(a, "/leader/release?to=hrun-b", timeout=8.0)
    assert st == 200 and body["released"] is True, body
    wait_until(b.is_leader, 2.0, what="b leads")
    with open(marker) as f:
        lines = f.read().split()
    t_term = float(lines[lines.index("term") + 1])
    handed = [h for h in cluster.api.history(ns="default",
                                             name=cluster.lock)
              if h["spec"].get("holderIdentity") == "hrun-b"]
    assert handed and handed[0]["t"] > t_term, (handed[:1], t_term)
    assert a.alive(), "leaderd goes on after a handover in run mode"


def test_handover_and_sigterm_together(cluster):
    a, b = pair(cluster, "hs-a", "hs-b")
    chk = cluster.checker()
    st, body = post(a, "/leader/release?to=hs-b")
    a.signal(signal.SIGTERM)
    assert a.wait(5.0) == 0
    wait_until(b.is_leader, JITTER * RP + SLACK, what="b leads")
    chk.assert_s1()


def test_handover_to_a_killed_successor(cluster):
    """The successor dies between the choice and the handover: the lease
    names it, nobody writes until it expires, then a live one takes it."""
    a, b = pair(cluster, "hk-a", "hk-b")
    c = cluster.start("hk-c")
    wait_until(lambda: (c.leader() or {}).get("name") == "hk-a", 3.0,
               what="c follows a")
    chk = cluster.checker()
    b.kill9()
    st, body = post(a, "/leader/release?to=hk-b")
    assert st == 200 and body["released"] is True, body
    t0 = time.monotonic()
    assert cluster.lease()["spec"]["holderIdentity"] == "hk-b"
    n0 = len(cluster.api.history(ns="default", name=cluster.lock))
    wait_until(lambda: a.is_leader() or c.is_leader(),
               LD + JITTER * RP + SLACK, what="a leader after expiry")
    later = cluster.api.history(ns="default", name=cluster.lock)[n0:]
    assert later and later[0]["spec"]["holderIdentity"] in ("hk-a", "hk-c")
    assert later[0]["t"] - t0 >= LD - 0.2, (later[0]["t"] - t0)
    chk.assert_s1()
