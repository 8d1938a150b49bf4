"""Election behaviour of real leaderd processes against fakeapi: one
leader, failover after kill -9 and SIGTERM, step-down when the API fails,
recovery from a deleted lease and from an ambiguous write, token
rotation.  Timings (harness.py): lease_duration 3s, renew_deadline 2s,
retry_period 500ms, request_timeout 1s."""

import json
import re
import signal
import socket
import time

import pytest

import fakeapi

from harness import (LEASE_DURATION as LD, RENEW_DEADLINE as RD,
                     RETRY_PERIOD as RP, REQUEST_TIMEOUT as RT,
                     read_http_response, wait_until)

SLACK = 1.5             # process start-up, scheduling, request latency
SAMPLE_SLACK = 0.25     # checker period (~25 ms a round) + scheduling
JITTER = 2.2            # acquire retry is retry_period x [1, 2.2)
MICROTIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
NS = "default"


def three(cluster, **kw):
    ins = cluster.start_n(3, **kw)
    chk = cluster.checker(ins)
    return ins, chk


def test_three_instances_one_leader(cluster):
    t0 = time.monotonic()
    ins, chk = three(cluster)
    leader = cluster.wait_single_leader(JITTER * RP + SLACK + 2.0)
    assert time.monotonic() - t0 < JITTER * RP + SLACK + 2.0
    # Stable: the same single leader for a few renew periods.
    time.sleep(4 * RP)
    assert cluster.wait_single_leader(1.0) is leader
    views = {i.name: i.leader() for i in ins}
    for i in ins:
        v = views[i.name]
        assert v["name"] == leader.identity, views
        assert v["is_leader"] is (i is leader), views
        assert v["state"] == ("leader" if i is leader else "follower"), views
    lease = cluster.lease()
    spec = lease["spec"]
    assert spec["holderIdentity"] == leader.identity
    assert spec["leaseDurationSeconds"] == int(LD)
    assert MICROTIME.match(spec["acquireTime"])
    assert MICROTIME.match(spec["renewTime"])
    assert spec.get("leaseTransitions", 0) == 0
    # The leader renews about every retry_period, keeping acquireTime.
    w = leader.writes()
    assert len(w) >= 4, w
    assert len({x["spec"]["acquireTime"] for x in w}) == 1
    assert len({x["spec"]["renewTime"] for x in w}) == len(w)
    # Followers write nothing while the lease is held.
    for i in ins:
        if i is not leader:
            assert i.writes() == [], i.name
    assert "became leader of lease %s/%s" % (NS, cluster.lock) in leader.log()
    for i in ins:
        if i is not leader:
            assert "new leader of lease %s/%s: %s" % (
                NS, cluster.lock, leader.identity) in i.log(), i.name
    chk.assert_s1()


def test_kill9_leader_fails_over_after_expiry(cluster):
    ins, chk = three(cluster)
    old = cluster.wait_single_leader(JITTER * RP + SLACK + 2.0)
    trans0 = cluster.lease()["spec"].get("leaseTransitions", 0)
    time.sleep(2 * RP)
    t_kill = time.monotonic()
    old.kill9()
    bound = LD + JITTER * RP + SLACK
    s = wait_until(lambda: chk.first_true(since=t_kill, exclude=(old.name,)),
                   bound + 1.0, what="a new leader")
    took = s[1] - t_kill
    assert took <= bound, "new leader after %.2fs > %.2fs" % (took, bound)
    # Not before the old lease could have expired: nobody may take a live
    # lease.  The old leader's last renew reached the server at t_last.
    t_last = max(x["t"] for x in old.writes())
    assert s[1] >= t_last + LD, \
        "took over %.2fs after the last renew (< lease_duration)" % (
            s[1] - t_last)
    rest = [i for i in ins if i is not old]
    new = cluster.wait_single_leader(2.0, rest)
    assert new.name == s[2]
    spec = cluster.lease()["spec"]
    assert spec["holderIdentity"] == new.identity
    assert spec["leaseTransitions"] == trans0 + 1
    time.sleep(2 * RP)
    chk.assert_s1()


def test_sigterm_leader_releases_and_fails_over_fast(cluster):
    ins, chk = three(cluster)
    old = cluster.wait_single_leader(JITTER * RP + SLACK + 2.0)
    trans0 = cluster.lease()["spec"].get("leaseTransitions", 0)
    time.sleep(2 * RP)
    t_term = time.monotonic()
    old.terminate()
    rc = old.wait(RT + 1.0)
    t_exit = time.monotonic()
    assert rc == 0, "exit status %r after SIGTERM" % rc
    assert t_exit - t_term <= RT + 0.5, "exit took %.2fs" % (t_exit - t_term)
    bound = JITTER * RP + SLACK
    s = wait_until(lambda: chk.first_true(since=t_term, exclude=(old.name,)),
                   bound + 1.0, what="a new leader")
    took = s[1] - t_term
    assert took <= bound, "new leader after %.2fs > %.2fs" % (took, bound)
    # is_leader=false at once: no claim from the old leader after SIGTERM
    # (0.1 s for signal delivery and the sample in flight).
    late = [x for x in chk.of(old.name, since=t_term + 0.1) if x[3]]
    assert late == [], late[:3]
    # The release record, written by the old leader after SIGTERM.
    rel = [w for w in old.writes() if w["t_recv"] >= t_term]
    assert len(rel) == 1, rel
    r = rel[0]
    assert r["method"] == "PUT"
    assert r["spec"]["holderIdentity"] == ""
    assert r["spec"]["leaseDurationSeconds"] == 1
    assert r["spec"].get("leaseTransitions", 0) == trans0
    assert MICROTIME.match(r["spec"]["renewTime"])
    assert "released lease %s/%s" % (NS, cluster.lock) in old.log()
    rest = [i for i in ins if i is not old]
    new = cluster.wait_single_leader(2.0, rest)
    spec = cluster.lease()["spec"]
    assert spec["holderIdentity"] == new.identity
    assert spec["leaseTransitions"] == trans0 + 1
    assert spec["leaseDurationSeconds"] == int(LD)
    # A follower that is told to stop exits 0 and writes nothing.
    f = [i for i in rest if i is not new][0]
    t_f = time.monotonic()
    f.terminate()
    assert f.wait(RT + 1.0) == 0
    assert [w for w in f.writes() if w["t_recv"] >= t_f] == []
    assert cluster.lease()["spec"]["holderIdentity"] == new.identity
    chk.assert_s1()


@pytest.mark.parametrize("kind", ["status503", "blackhole"])
def test_api_failure_leader_steps_down_in_time(cluster, api, kind):
    ins, chk = three(cluster)
    old = cluster.wait_single_leader(JITTER * RP + SLACK + 2.0)
    time.sleep(2 * RP)
    t_fault = time.monotonic()
    if kind == "status503":
        api.fault("status", token=old.token, status=503,
                  message="etcdserver: request timed out")
    else:
        api.fault("blackhole", token=old.token)
    wait_until(lambda: chk.first_true(since=t_fault, exclude=(old.name,)),
               LD + 2 * JITTER * RP + SLACK + 1.0, what="a new leader")
    # The send time of the old leader's last good renew is at most the
    # time its request reached the server.
    ok = [w for w in old.writes() if w["t_recv"] < t_fault]
    assert ok
    t_ok = max(w["t_recv"] for w in ok)
    assert not [w for w in old.writes() if w["t_recv"] >= t_fault]
    after = chk.of(old.name, since=t_fault)
    true_late = [s for s in after if s[3] and s[0] >= t_ok + RD]
    assert true_late == [], (
        "claimed leadership %.3fs after its last good renew was received "
        "(renew_deadline %.1fs)" % (true_late[0][0] - t_ok, RD))
    # The checker must have looked soon after the deadline, or the check
    # above proves nothing.
    past = [s for s in after if s[0] >= t_ok + RD]
    assert past and past[0][0] <= t_ok + RD + SAMPLE_SLACK, \
        "the checker lagged; inconclusive"
    first_false = next((s for s in after if not s[3]), None)
    assert first_false is not None
    assert first_false[0] <= t_ok + RD + SAMPLE_SLACK, (
        "still leader %.3fs after the last good renew" % (
            first_false[0] - t_ok))
    assert old.alive(), "leaderd exited on API failure"
    # Another instance takes over once the lease expires.
    s = chk.first_true(since=t_fault, exclude=(old.name,))
    assert s[1] >= t_ok + LD
    assert s[1] <= t_ok + LD + 2 * JITTER * RP + SLACK
    new = [i for i in ins if i.name == s[2]][0]
    # When the API comes back the old leader follows the new one.
    api.clear_faults(old.token)
    wait_until(lambda: (v := old.leader()) and v["name"] == new.identity
               and v["is_leader"] is False, 2 * JITTER * RP + SLACK,
               what="the old leader to follow the new one")
    assert cluster.wait_single_leader(2.0) is new
    time.sleep(2 * RP)
    chk.assert_s1()
    log = old.log()
    assert "stopped leading lease %s/%s" % (NS, cluster.lock) in log
    if kind == "status503":
        # "lease NS/NAME: API error: <status> <reason>: <message>", logged
        # once per change, not on every retry.
        errs = [ln for ln in log.splitlines() if "API error" in ln]
        want = "lease %s/%s: API error: 503 ServiceUnavailable: etcdserver: " \
            "request timed out" % (NS, cluster.lock)
        n = sum(1 for ln in errs if ln.endswith(want))
        assert 1 <= n <= 2, "wanted 1 or 2 lines ending in %r, got:\n%s" % (
            want, "\n".join(errs))


def test_lease_deleted_by_admin_is_recreated(cluster, api):
    ins, chk = three(cluster)
    old = cluster.wait_single_leader(JITTER * RP + SLACK + 2.0)
    uid0 = cluster.lease()["metadata"]["uid"]
    time.sleep(2 * RP)
    t_del = time.monotonic()
    assert api.delete_lease(NS, cluster.lock)
    lease = wait_until(cluster.lease, JITTER * RP + SLACK,
                       what="the lease to be recreated")
    assert lease["metadata"]["uid"] != uid0
    creates = [w for w in api.history(ns=NS, name=cluster.lock)
               if w["t"] > t_del and w["created"]]
    assert len(creates) == 1, creates
    assert creates[0]["token"] in {i.token for i in ins}
    # Past the old leader's renew deadline, one leader must settle.
    time.sleep(max(0.0, t_del + RD + RP - time.monotonic()))
    new = cluster.wait_single_leader(LD + JITTER * RP + SLACK)
    time.sleep(3 * RP)
    assert cluster.wait_single_leader(1.0) is new
    assert cluster.lease()["spec"]["holderIdentity"] == new.identity
    # S1 holds across the deletion too: a follower that saw a holder
    # waits renew_deadline after its 404 before creating the lease
    # (client-go creates at once and can overlap the old leader).
    print("leader before %s, after %s; claims: %s"
          % (old.name, new.name, chk.claims()))
    chk.assert_s1()
    t_settled = time.monotonic()
    time.sleep(2 * RP)
    assert [s for s in chk.snapshot() if s[0] >= t_settled and s[3]
            and s[2] != new.name] == []


def test_ambiguous_write_then_409_keeps_leading(cluster, api):
    ins, chk = three(cluster)
    old = cluster.wait_single_leader(JITTER * RP + SLACK + 2.0)
    trans0 = cluster.lease()["spec"].get("leaseTransitions", 0)
    time.sleep(2 * RP)
    t_f = time.monotonic()
    f = api.fault("apply_then_close", token=old.token, methods=["PUT"],
                  count=1)
    wait_until(lambda: f.hits == 1, 2 * RP + 1.0,
               what="the leader's next renew")
    amb = [w for w in old.writes() if w["unanswered"]]
    assert len(amb) == 1
    # It must go on renewing after the ambiguous write, without a gap
    # long enough to step down and without anyone else taking over.
    time.sleep(RD + LD)
    later = [w for w in old.writes() if w["t"] > amb[0]["t"]]
    assert len(later) >= 3, later
    gaps = [b["t"] - a["t"] for a, b in zip([amb[0]] + later, later)]
    assert max(gaps) < RD, gaps
    mine = chk.of(old.name, since=t_f)
    assert mine and all(s[3] for s in mine), \
        "the leader stopped leading after an ambiguous write"
    assert chk.first_true(since=t_f, exclude=(old.name,)) is None
    spec = cluster.lease()["spec"]
    assert spec["holderIdentity"] == old.identity
    assert spec.get("leaseTransitions", 0) == trans0
    assert len({w["spec"]["acquireTime"] for w in old.writes()}) == 1
    codes = [e["code"] for e in api.requests(token=old.token, since=t_f)]
    print("requests after the ambiguous write:", codes[:12])
    chk.assert_s1()


def test_token_rotation_keeps_working(cluster, api):
    ins, chk = three(cluster)
    old = cluster.wait_single_leader(JITTER * RP + SLACK + 2.0)
    time.sleep(2 * RP)
    newtok = {}
    t_rot = time.monotonic()
    for i in ins:
        newtok[i.name] = i.token + "-rotated"
        api.add_token(newtok[i.name])
        i.write_token(newtok[i.name])
        api.revoke_token(i.token)
    # A watching follower sends nothing while its stream is open: end the
    # streams, as the API server does at their timeout, so the next ones
    # are opened after the rotation.
    api.watch_end_open()
    # Every instance switches to its new token (after a 401 at most).
    for i in ins:
        wait_until(lambda: [e for e in api.requests(token=newtok[i.name],
                                                     since=t_rot)
                            if e["code"] in (200, 201)],
                   RD + JITTER * RP + SLACK, what="%s to use its new token"
                   % i.name)
    time.sleep(RD)
    t_end = time.monotonic()
    # The leader kept leading throughout and renews with the new token.
    mine = chk.of(old.name, since=t_rot)
    assert mine and all(s[3] for s in mine), "leadership lost on rotation"
    assert chk.first_true(since=t_rot, exclude=(old.name,)) is None
    assert [w for w in api.history(ns=NS, name=cluster.lock,
                                   token=newtok[old.name])
            if w["t"] > t_end - RD]
    # Nothing is sent with a revoked token once the new one is in use.
    for i in ins:
        first_new = min(e["t_recv"] for e in api.requests(
            token=newtok[i.name], since=t_rot))
        stale = [e for e in api.requests(token=i.token, since=first_new)]
        assert stale == [], (i.name, stale[:3])
        assert i.token not in i.log() and newtok[i.name] not in i.log(), \
            "a token appears in the log"
    chk.assert_s1()


def test_restart_with_same_identity_waits_out_old_lease(cluster):
    a = cluster.start("solo")
    chk = cluster.checker()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="solo to lead")
    time.sleep(2 * RP)
    a.kill9()
    t_last = max(w["t"] for w in a.writes())
    # A new process with the same identity must not treat the record as
    # its own: it waits the lease out like any other candidate.
    b = cluster.start("solo-again", identity=a.identity)
    chk.add(b)
    s = wait_until(lambda: chk.first_true(name=b.name), LD + JITTER * RP
                   + SLACK + 1.0, what="the restarted instance to lead")
    assert s[1] >= b.t_start + LD, (
        "led %.2fs after start, %.2fs after the old renew" % (
            s[1] - b.t_start, s[1] - t_last))
    assert s[1] - max(b.t_start, t_last) <= LD + JITTER * RP + SLACK
    chk.assert_s1()


def test_sigterm_without_release_on_cancel(cluster):
    a = cluster.start("a", release_on_cancel=False)
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a to lead")
    b = cluster.start("b")
    chk = cluster.checker([a, b])
    wait_until(lambda: (v := b.leader()) and v["name"] == a.identity,
               JITTER * RP + SLACK, what="b to follow a")
    t_term = time.monotonic()
    a.terminate()
    assert a.wait(RT + 1.0) == 0
    assert [w for w in a.writes() if w["t_recv"] >= t_term] == [], \
        "released although release_on_cancel is false"
    assert cluster.lease()["spec"]["holderIdentity"] == a.identity
    t_last = max(w["t"] for w in a.writes())
    s = wait_until(lambda: chk.first_true(name="b"), LD + JITTER * RP + SLACK,
                   what="b to take over after expiry")
    assert s[1] >= t_last + LD
    chk.assert_s1()


def test_json_logs_and_sighup_ignored(cluster):
    a = cluster.start("a", log_format="json", log_level="info")
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a to lead")
    a.signal(signal.SIGHUP)
    time.sleep(3 * RP)
    assert a.alive(), "SIGHUP ended the daemon"
    assert a.is_leader()
    lines = [ln for ln in a.log().splitlines() if ln.strip()]
    assert lines
    recs = [json.loads(ln) for ln in lines]
    for r in recs:
        assert {"ts", "level", "msg"} <= set(r), r
        assert MICROTIME.match(r["ts"]) or re.match(
            r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", r["ts"]), r
        assert r["level"] in ("error", "warn", "info", "debug"), r
    assert any(r["msg"].startswith("became leader of lease %s/%s"
                                   % (NS, cluster.lock)) for r in recs), recs
    assert not any(r["level"] == "debug" for r in recs)


def test_paused_leader_does_not_claim_after_resume(cluster):
    """A leader paused (SIGSTOP: think GC pause, CPU starvation) past its
    renew deadline must not answer "I lead" when it resumes, even to a
    request that was waiting for it, and must follow whoever took over."""
    ins, chk = three(cluster)
    old = cluster.wait_single_leader(JITTER * RP + SLACK + 2.0)
    time.sleep(2 * RP)
    s = socket.create_connection(("127.0.0.1", old.port), timeout=5)
    try:
        s.sendall(b"GET /leader HTTP/1.1\r\nHost: localhost\r\n\r\n")
        st, _, body, _ = read_http_response(s)
        assert st == 200 and json.loads(body)["is_leader"] is True
        t_stop = time.monotonic()
        old.signal(signal.SIGSTOP)
        try:
            time.sleep(0.05)
            s.sendall(b"GET /leader HTTP/1.1\r\nHost: localhost\r\n\r\n")
            wait_until(lambda: chk.first_true(since=t_stop,
                                              exclude=(old.name,)),
                       LD + 2 * JITTER * RP + SLACK, what="a new leader")
        finally:
            old.signal(signal.SIGCONT)
        st, _, body, _ = read_http_response(s, timeout=3)
        v = json.loads(body)
        assert st == 200 and v["is_leader"] is False, v
    finally:
        s.close()
    new = [i for i in ins if i.name == chk.first_true(
        since=t_stop, exclude=(old.name,))[2]][0]
    wait_until(lambda: (v := old.leader()) and v["name"] == new.identity
               and v["is_leader"] is False, 2 * JITTER * RP + SLACK,
               what="the resumed leader to follow the new one")
    assert cluster.wait_single_leader(2.0) is new
    assert cluster.lease()["spec"]["holderIdentity"] == new.identity
    chk.assert_s1()


def test_tls_is_verified(cluster, api, tmp_path):
    """A server certificate from an unknown CA is refused; the name
    localhost (a SAN of the test certificate) is accepted."""
    other = fakeapi.make_certs(str(tmp_path / "other-ca"))[0]
    bad = cluster.new("wrong-ca")
    api.write_kubeconfig(bad.kubeconfig, token_file=bad.token_path,
                         user=bad.name, ca_file=other)
    good = cluster.new("by-name")
    api.write_kubeconfig(good.kubeconfig, token_file=good.token_path,
                         user=good.name,
                         server="https://localhost:%d" % api.port)
    bad.start()
    time.sleep(JITTER * RP * 2 + 0.5)
    v = bad.leader()
    assert v is not None and v["is_leader"] is False and v["name"] == "", v
    assert bad.get_status("/readyz") == 503
    assert api.requests(token=bad.token) == [], "request sent despite TLS"
    assert "API error" in bad.log()
    good.start()
    wait_until(good.is_leader, JITTER * RP + SLACK + 2.0,
               what="the instance using https://localhost to lead")
    assert bad.alive()


def test_leadership_events_recorded_on_the_lease(cluster, api):
    """Like client-go, the leader records "<id> became leader" and, when
    it loses the lease, "<id> stopped leading" as core/v1 Events whose
    involvedObject is the Lease."""
    a = cluster.start("a")
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a to lead")
    uid = cluster.lease()["metadata"]["uid"]

    def mine(what):
        # "stopped leading" goes on with why: "stopped leading: ...".
        return [e for e in api.events()
                if e.get("message") == "%s %s" % (a.identity, what) or
                e.get("message", "").startswith("%s %s: " % (a.identity,
                                                             what))]
    ev = wait_until(lambda: mine("became leader"), 2.0,
                    what="the became-leader Event")[0]
    assert ev["reason"] == "LeaderElection" and ev["type"] == "Normal"
    obj = ev["involvedObject"]
    assert (obj["kind"], obj["apiVersion"], obj["name"], obj["namespace"],
            obj["uid"]) == ("Lease", "coordination.k8s.io/v1", cluster.lock,
                            NS, uid)
    assert ev["metadata"]["name"].startswith(cluster.lock + ".")
    assert ev["source"]["component"] == "leaderd"
    # Losing it to the deadline (API failures) records the other Event;
    # only the Lease requests fail, the Event goes through.
    f = api.fault("status", token=a.token, status=503,
                  path_prefix="/apis/coordination.k8s.io/")
    wait_until(lambda: not a.is_leader(), RD + RP + SLACK,
               what="a to step down")
    stopped = wait_until(lambda: mine("stopped leading"), 2.0,
                         what="the stopped-leading Event")[0]
    assert stopped["message"].startswith(
        "a stopped leading: no renew succeeded within renew_deadline "
        "(update leases/%s in namespace %s: the API server answers 503"
        % (cluster.lock, NS)), stopped["message"]
    api.clear_fault(f)
