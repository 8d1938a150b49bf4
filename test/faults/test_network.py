"""Network faults through the fault proxy (proxy.py), TLS end to end:
blackhole (F5), latency (F6), drop-after-forward on a renew (F7) and on
the release (F8), API server restart (F9, RST) and freeze (F10,
blackhole for everyone), and a stalled or closed stream (F22).

Timings: lease_duration 3s, renew_deadline 2s, retry_period 500ms,
request_timeout 1s unless a test says otherwise (faultlib.py)."""

import time

import pytest

import fakeapi
from checker import assert_terms
from cluster import FaultCluster
from faultlib import (FAILOVER, LD, POLL, RD, RP, RT, SLACK,
                      assert_waited_ld, last_write, renew_bytes, requests_of,
                      start_group, terms_ok, wait_takeover, wait_until)


def _all_checks(cluster, chk, ins, rd=RD):
    chk.assert_s1()
    terms_ok(cluster)
    for i in ins:
        chk.assert_backed(i, rd)


def test_f05_blackhole_leader_steps_down_by_rd_follower_after_ld(
        cluster, measure):
    """F5: the leader's proxy blackholes (connections accepted, nothing
    forwarded).  Bound: the leader reports false no later than RD after its
    last good renew arrived (+0.25s sampling); a follower leads no sooner
    than LD after that renew and within LD + 2.2*RP + 1s of the fault;
    once healed, the old leader follows within 2.2*RP + RT + 1s."""
    ins, chk, old = start_group(cluster, 3)
    time.sleep(2 * RP)
    t_fault = time.monotonic()
    old.proxy.set("blackhole")
    s = wait_takeover(chk, t_fault, [old.name], FAILOVER + 1.0)
    t_ok, t_false, claimed = chk.assert_s2(old, t_fault, RD)
    assert_waited_ld(s, old)
    took = s[1] - t_fault
    assert took <= FAILOVER
    new = [i for i in ins if i.name == s[2]][0]
    t_heal = time.monotonic()
    old.proxy.clear()
    wait_until(lambda: (v := old.leader()) and v["name"] == new.identity
               and not v["is_leader"], POLL + RT + SLACK,
               what="the old leader to follow")
    healed = time.monotonic() - t_heal
    assert old.alive()
    time.sleep(2 * RP)
    _all_checks(cluster, chk, ins)
    measure("F5", "leader false after its last good renew", t_false - t_ok,
            bound=RD + 0.25)
    measure("F5", "takeover after blackhole", took, bound=FAILOVER)
    measure("F5", "old leader follows after heal", healed,
            bound=POLL + RT + SLACK)


# Request timeout raised to 1.9s (< RD) so that latencies below RD can
# complete at all.
F6_RT = 1.9


@pytest.mark.parametrize("factor", [0.5, 0.9, 1.2, 1.5])
def test_f06_latency_on_leader_safe_no_fast_flapping(cluster, measure,
                                                    factor):
    """F6: the leader's answers are delayed by factor x RD (1.0s, 1.8s,
    2.4s, 3.0s; request_timeout 1.9s).  Bound: S1 and S2 hold throughout
    (every claim of the slow leader lies within RD of the arrival of one
    of its writes); it never starts a new claim sooner than RP after the
    last one started (no flapping faster than RP); at 0.5 x RD it keeps
    the lease (a renew is waited for past the end of the claim it extends,
    and counts from its send time), with no new term; at 1.2 and 1.5 x RD
    (past request_timeout) it reports false by RD after its last good
    renew and a follower leads within LD + 2.2*RP + 1s; after the latency
    is removed a single leader settles within LD + 2.2*RP + 1s."""

    ins, chk, old = start_group(cluster, 3, request_timeout=F6_RT)
    time.sleep(2 * RP)
    trans0 = cluster.transitions()
    lat = factor * RD
    t_fault = time.monotonic()
    old.proxy.set("latency", down_ms=lat * 1000.0)
    window = 6.0
    if factor >= 1.0:
        s = wait_takeover(chk, t_fault, [old.name], FAILOVER + 1.0)
        t_ok, t_false, _ = chk.assert_s2(old, t_fault, RD)
        assert s[1] - t_fault <= FAILOVER
        measure("F6", "latency %.1fs: leader false after last good renew"
                % lat, t_false - t_ok, bound=RD + 0.25)
        measure("F6", "latency %.1fs: takeover" % lat, s[1] - t_fault,
                bound=FAILOVER)
    time.sleep(max(0.0, t_fault + window - time.monotonic()))
    t_clear = time.monotonic()
    old.proxy.clear()
    starts = chk.claim_starts(old.name, since=t_fault)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert all(g >= RP for g in gaps), \
        "claims of the slow leader restart faster than RP: %s" % gaps
    mine = chk.window(old.name, since=t_fault, until=t_clear)
    frac = sum(1 for x in mine if x[3]) / max(1, len(mine))
    kept = cluster.lease()["spec"]["holderIdentity"] == old.identity
    if factor == 0.5:
        assert kept and cluster.transitions() == trans0, \
            "at 0.5 x RD latency the leader lost the lease"
        assert not [x for x in chk.window(since=t_fault, until=t_clear)
                    if x[3] and x[2] != old.name], \
            "another instance claimed while the slow leader kept the lease"
    cluster.wait_single_leader(FAILOVER)
    time.sleep(2 * RP)
    _all_checks(cluster, chk, ins)
    measure("F6", "latency %.1fs: share of samples the slow leader "
            "claimed" % lat, frac, unit="")
    measure("F6", "latency %.1fs: slow leader's claim starts in %.0fs"
            % (lat, window), len(starts), unit="")
    measure("F6", "latency %.1fs: slow leader kept the lease" % lat,
            1.0 if kept else 0.0, unit="")
    if gaps:
        measure("F6", "latency %.1fs: shortest time between claim starts"
                % lat, min(gaps), bound=RP, cmp=">=")


def test_f07_ambiguous_renew_409_get_keeps_leading(cluster, api, measure):
    """F7: the proxy forwards the leader's renew PUT to the server and drops
    the answer (the write lands, the leader never hears), 3 times.  Bound:
    the next PUT gets 409, the leader GETs, finds its own record and goes
    on leading: no false sample, no transition, no loss logged, no one
    else claims; it renews again within 2*RP + 1s of the drop."""
    ins, chk, old = start_group(cluster, 3)
    trans0 = cluster.transitions()
    time.sleep(2 * RP)
    t0 = time.monotonic()
    recover = []
    for trial in range(3):
        n = len(old.proxy.events_of("drop_answer"))
        old.proxy.set("drop_after_forward", min_req_bytes=renew_bytes(old),
                      count=1)
        wait_until(lambda: len(old.proxy.events_of("drop_answer")) > n,
                   2 * RP + 1.0, what="a dropped renew answer")
        t_drop = old.proxy.events_of("drop_answer")[-1][0]
        landed = [w for w in old.writes() if w["t_recv"] <= t_drop]
        assert landed and t_drop - landed[-1]["t"] < 0.2, \
            "the dropped request did not land"
        w = wait_until(lambda: [x for x in old.writes()
                                if x["t_recv"] > t_drop], 2 * RP + 1.0,
                       what="a renew after the ambiguous write")
        recover.append(w[0]["t"] - t_drop)
        codes = [r["code"] for r in requests_of(api, old, since=t_drop)]
        assert 409 in codes, "no 409 after the ambiguous write: %s" % codes
        time.sleep(2 * RP)
    assert all(x[3] for x in chk.window(old.name, since=t0)), \
        "the leader stopped leading after an ambiguous write"
    assert chk.takeover(t0, [old.name]) is None
    assert cluster.transitions() == trans0
    assert "stopped leading" not in old.log()
    _all_checks(cluster, chk, ins)
    measure("F7", "next good renew after a dropped answer, worst of 3",
            max(recover), bound=2 * RP + 1.0)


def test_f08_ambiguous_release_never_two_leaders(cluster, measure):
    """F8: SIGTERM the leader while the proxy drops the answer to its next
    PUT, which is the release (checked; retried if a renew raced it).
    Bound: the leader exits 0 within RT + 0.5s, never claims after the
    signal, the lease ends released (holderIdentity "") or taken over, and
    a follower leads within 2.2*RP + 1s (the release landed)."""
    ins, chk, old = start_group(cluster, 4)
    done = False
    for attempt in range(3):
        time.sleep(2 * RP)
        old.proxy.set("drop_after_forward", min_req_bytes=renew_bytes(old),
                      count=1)
        t_term = time.monotonic()
        old.terminate()
        rc = old.wait(RT + 1.0)
        t_exit = time.monotonic() - t_term
        assert rc == 0 and t_exit <= RT + 0.5, (rc, t_exit)
        drops = old.proxy.events_of("drop_answer")
        assert drops, "no answer was dropped"
        t_drop = drops[-1][0]
        before = [w for w in old.writes() if w["t_recv"] <= t_drop]
        if before[-1]["spec"]["holderIdentity"] != "":
            # A renew raced the signal and was the one dropped.
            old.proxy.clear()
            old = cluster.wait_single_leader(FAILOVER, [i for i in ins
                                                        if i.alive()])
            continue
        s = wait_takeover(chk, t_term, [old.name], POLL + SLACK + 1.0)
        took = s[1] - t_term
        assert took <= POLL + SLACK
        late = [x for x in chk.window(old.name, since=t_term + 0.05)
                if x[3]]
        assert late == []
        after = [w for w in old.writes() if w["t_recv"] > t_drop]
        measure("F8", "takeover after SIGTERM with the release answer "
                "dropped", took, bound=POLL + SLACK)
        measure("F8", "exit after SIGTERM with the release answer dropped",
                t_exit, bound=RT + 0.5)
        measure("F8", "writes after the dropped release", len(after), unit="")
        done = True
        break
    assert done, "the release answer was never the one dropped"
    time.sleep(2 * RP)
    _all_checks(cluster, chk, ins)


def test_f09_api_restart_rst_short_kept_long_steps_down(cluster, measure):
    """F9: every proxy resets all connections and every new one (the API
    server killed and restarted).  A 0.6s outage (< RD - RP = 1.5s, with a
    retry every RP): the leader keeps the lease, no transition, no false
    sample.  A 3s outage: the leader reports false by RD after its last
    good renew; after the outage exactly one leader within 2.2*RP + 1s."""
    ins, chk, old = start_group(cluster, 3)
    trans0 = cluster.transitions()
    time.sleep(2 * RP)
    t0 = time.monotonic()
    for i in ins:
        i.proxy.set("reset")
    time.sleep(0.6)
    for i in ins:
        i.proxy.clear()
    time.sleep(3 * RP)
    assert all(x[3] for x in chk.window(old.name, since=t0)), \
        "lost leadership over a 0.6s outage"
    assert chk.takeover(t0, [old.name]) is None
    assert cluster.transitions() == trans0
    lw = last_write(old)["t"]
    t_fault = time.monotonic()
    for i in ins:
        i.proxy.set("reset")
    time.sleep(3.0)
    t_end = time.monotonic()
    for i in ins:
        i.proxy.clear()
    t_ok, t_false, _ = chk.assert_s2(old, t_fault, RD)
    assert lw <= t_ok + 0.1
    cluster.wait_single_leader(POLL + SLACK + 1.0)
    back = wait_until(lambda: chk.first_true(since=t_end), 1.0,
                      what="a claim after the outage")
    after = back[1] - t_end
    assert after <= POLL + SLACK
    time.sleep(2 * RP)
    _all_checks(cluster, chk, ins)
    measure("F9", "0.6s RST outage: leadership kept", 1.0, unit="")
    measure("F9", "3s RST outage: leader false after last good renew",
            t_false - t_ok, bound=RD + 0.25)
    measure("F9", "3s RST outage: a leader after the outage", after,
            bound=POLL + SLACK)


def test_f10_api_frozen_everyone_steps_down_one_leader_after(cluster,
                                                            measure):
    """F10: every proxy blackholes for 3.5s (the API server SIGSTOPped:
    connections accepted, nothing answered).  Bound: the leader reports
    false by RD after its last good renew; no one claims from then until
    the API is back; afterwards exactly one leader within 2.2*RP + RT +
    1s."""
    ins, chk, old = start_group(cluster, 3)
    time.sleep(2 * RP)
    t_fault = time.monotonic()
    for i in ins:
        i.proxy.set("blackhole")
    time.sleep(3.5)
    t_end = time.monotonic()
    t_ok, t_false, _ = chk.assert_s2(old, t_fault, RD)
    during = [x for x in chk.window(since=t_ok + RD, until=t_end) if x[3]]
    assert during == [], "claimed while the API was frozen: %s" % during[:2]
    for i in ins:
        i.proxy.clear()
    back = wait_until(lambda: chk.first_true(since=t_end),
                      POLL + RT + SLACK + 1.0, what="a leader after")
    after = back[1] - t_end
    assert after <= POLL + RT + SLACK
    cluster.wait_single_leader(2.0)
    time.sleep(2 * RP)
    _all_checks(cluster, chk, ins)
    measure("F10", "frozen API: leader false after last good renew",
            t_false - t_ok, bound=RD + 0.25)
    measure("F10", "frozen API: a leader after it thaws", after,
            bound=POLL + RT + SLACK)


def test_f22_stalled_or_closed_stream_polling_expiry_right(
        certdir, hub, tmp_path, lock_name, request, measure):
    """F22, polling (watch: false; the watch's own F22 rows are in
    test/integration/test_watch.py): the row's faults applied to polls: the follower's open connection goes
    half-open (it stalls: the socket stays open, nothing comes back),
    then its GETs get 410 Gone three times, and the server closes idle
    connections after 0.3s throughout (as an API server closes watches
    at min-request-timeout).  Bound: the follower abandons the stalled
    connection within RT + 0.5s of sending into it and polls on a new
    one; when the leader is then killed -9 the follower leads no sooner
    than LD after the last renew and within LD + 2.2*RP + RT + 1s of the
    kill."""
    api = fakeapi.FakeAPI(certdir=certdir, idle_timeout=0.3).start()
    cl = FaultCluster(api, hub, str(tmp_path), lock_name, request.node)
    try:
        lead = cl.start("lead", args=("--watch", "false"))
        chk = cl.checker()
        wait_until(lead.is_leader, POLL + 2.0, what="lead to lead")
        f = cl.start("follow", args=("--watch", "false"))
        chk.add(f)
        wait_until(lambda: (v := f.leader()) and v["name"] == "lead",
                   POLL + 2.0, what="follow to follow")
        # Catch a connection while it is open: poll until one is.
        wait_until(lambda: f.proxy.stats()["open"] > 0, 3.0,
                   what="an open connection of the follower")
        f.proxy.set("half_open")
        wait_until(lambda: [h for h in f.proxy.stats()["history"]
                            if h["frozen"] and h["closed_by"] == "client"],
                   RT + 2.0, what="the follower to drop the stalled "
                   "connection")
        h = [h for h in f.proxy.stats()["history"] if h["frozen"]][0]
        sent = [e[0] for e in f.proxy.events_of("frozen_data")
                if e[2] == h["id"]]
        assert sent, "the follower closed the connection without using it"
        abandon = h["t_close"] - sent[0]
        f.proxy.clear()
        wait_until(lambda: [r for r in api.requests(token=f.token,
                                                    method="GET")
                            if r["t_recv"] > h["t_close"] and
                            r["code"] == 200], POLL + 1.0,
                   what="a poll on a new connection")
        gone = api.fault("status", token=f.token, status=410, count=3,
                         methods=["GET"], message="too old resource version")
        wait_until(lambda: gone.count == 0, 4 * POLL, what="three 410s")
        time.sleep(RP)
        assert f.alive() and not f.is_leader()
        t_kill = time.monotonic()
        lead.kill9()
        s = wait_until(lambda: chk.first_true(name="follow", since=t_kill),
                       FAILOVER + RT + 1.0, what="follow to take over")
        took = s[1] - t_kill
        assert_waited_ld(s, lead)
        assert took <= FAILOVER + RT
        chk.assert_s1()
        assert_terms(api, "default", cl.lock, LD)
        reconnects = f.proxy.stats()["accepted"]
        measure("F22", "stalled connection abandoned after a request",
                abandon,
                bound=RT + 0.5)
        measure("F22", "takeover after kill -9 with stalls/410/closes",
                took, bound=FAILOVER + RT)
        measure("F22", "follower connections opened (server closes idle "
                "ones)", reconnects, unit="")
        assert abandon <= RT + 0.5
    finally:
        cl.close()
        api.stop()

