"""API faults through fakeapi's fault switches and admin access: etcd
trouble (F11), another writer (F12), a deleted lease (F13), scripted
429/5xx (F14), a bad token (F15), RBAC (F16) and admission (F17) denials,
and malformed or incomplete answers (F23, through mangle.py).

F16 and F17 need a real API server to be exact (a RoleBinding deleted, a
ValidatingAdmissionPolicy); here they are emulated with fakeapi status
faults carrying the real 403 Forbidden Status messages.

Timings: lease_duration 3s, renew_deadline 2s, retry_period 500ms,
request_timeout 1s (faultlib.py)."""

import datetime
import time

from faultlib import (FAILOVER, LD, NS, POLL, RD, RP, RT, SLACK, START,
                      assert_waited_ld, requests_of, start_group, terms_ok,
                      wait_takeover, wait_until)
from mangle import MangleRelay


def _microtime(offset_s=0.0):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(
        seconds=offset_s)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _checks(cluster, chk, ins, allow_admin=True):
    chk.assert_s1()
    terms_ok(cluster, allow_admin=allow_admin)
    for i in ins:
        chk.assert_backed(i, RD)


def _lose_and_recover(cluster, api, chk, ins, old, fault_kw, measure, row,
                      label, follow_bound=POLL + RT + SLACK):
    """Apply a fault to old (the leader); check S2 and the takeover; clear
    it and check old follows.  Returns the new leader."""
    t_fault = time.monotonic()
    f = api.fault(token=old.token, **fault_kw)
    s = wait_takeover(chk, t_fault, [old.name], FAILOVER + 1.0)
    t_ok, t_false, _ = chk.assert_s2(old, t_fault, RD)
    took = s[1] - t_fault
    assert took <= FAILOVER, "%s: takeover after %.2fs" % (label, took)
    assert_waited_ld(s, old)
    new = [i for i in ins if i.name == s[2]][0]
    t_clear = time.monotonic()
    api.clear_fault(f)
    wait_until(lambda: (v := old.leader()) and v["name"] == new.identity
               and not v["is_leader"], follow_bound,
               what="%s to follow %s" % (old.name, new.name))
    back = time.monotonic() - t_clear
    assert old.alive()
    measure(row, "%s: leader false after its last good renew" % label,
            t_false - t_ok, bound=RD + 0.25)
    measure(row, "%s: takeover" % label, took, bound=FAILOVER)
    measure(row, "%s: old leader follows after the fault" % label, back,
            bound=follow_bound)
    return new, t_fault


def test_f11_etcd_down_500_504_deadline_step_down(cluster, api, measure):
    """F11: etcd stopped, emulated for every instance: 500 "etcdserver:
    leader changed" for 2.5s, then 504 Timeout after 0.8s of waiting for
    1.5s.  Bound: the leader reports false by RD after its last good
    renew; nobody claims after that until the API heals; then one leader
    within 2.2*RP + RT + 1s."""
    ins, chk, old = start_group(cluster, 3)
    time.sleep(2 * RP)
    t_fault = time.monotonic()
    f1 = api.fault("status", status=500,
                   message="etcdserver: leader changed")
    time.sleep(2.5)
    api.clear_fault(f1)
    f2 = api.fault("status", status=504, message="Timeout: request did "
                   "not complete within requested timeout - context "
                   "deadline exceeded")
    f3 = api.fault("delay", delay_ms=800)
    time.sleep(1.5)
    t_end = time.monotonic()
    t_ok, t_false, _ = chk.assert_s2(old, t_fault, RD)
    during = [x for x in chk.window(since=t_ok + RD, until=t_end) if x[3]]
    assert during == [], during[:2]
    api.clear_fault(f2)
    api.clear_fault(f3)
    s = wait_until(lambda: chk.first_true(since=t_end),
                   POLL + RT + SLACK + 1.0, what="a leader after")
    assert s[1] - t_end <= POLL + RT + SLACK
    cluster.wait_single_leader(2.0)
    assert "API error: 500 InternalError: etcdserver: leader changed" in \
        old.log()
    time.sleep(2 * RP)
    _checks(cluster, chk, ins)
    measure("F11", "500/504: leader false after its last good renew",
            t_false - t_ok, bound=RD + 0.25)
    measure("F11", "500/504: a leader after the API heals", s[1] - t_end,
            bound=POLL + RT + SLACK)


def test_f12_other_writer_takes_lease_409_immediate_step_down(
        cluster, api, measure):
    """F12: an admin writes a new holder ("intruder") over the live lease.
    Bound: the leader's next renew gets 409, its GET shows the intruder,
    and it reports false within RP + 0.5s of the admin write (the
    unavoidable overlap: a lease cannot fence); nobody else claims until
    the intruder's lease has expired (>= LD after the write), then one
    instance leads within LD + 2.2*RP + 1s of the write."""
    ins, chk, old = start_group(cluster, 3)
    time.sleep(2 * RP)

    def steal(o):
        o["spec"].update(holderIdentity="intruder", acquireTime=_microtime(),
                         renewTime=_microtime(),
                         leaseTransitions=o["spec"].get(
                             "leaseTransitions", 0) + 1)
    t_admin = time.monotonic()
    api.modify_lease(NS, cluster.lock, steal)
    ff = wait_until(lambda: chk.first_false(old.name, t_admin),
                    RP + 1.0, what="the leader to step down")
    stepped = ff[0] - t_admin
    assert stepped <= RP + 0.5
    # The leader learns of the intruder from its watch, or from a 409 on
    # its next renew; either way it never writes over the intruder's
    # live lease.
    assert not [r for r in requests_of(api, old, since=t_admin)
                if r["method"] == "PUT" and r["code"] == 200
                and r["t_recv"] < t_admin + LD]
    assert "another holder took the lease" in old.log()
    s = wait_takeover(chk, ff[0], [], FAILOVER + 1.0)
    assert s[1] >= t_admin + LD, "took the intruder's live lease"
    assert s[1] - t_admin <= FAILOVER
    time.sleep(2 * RP)
    chk.assert_s1()
    terms_ok(cluster)
    measure("F12", "leader false after another writer took the lease",
            stepped, bound=RP + 0.5)
    measure("F12", "an instance leads after the intruder's lease expires",
            s[1] - t_admin, bound=FAILOVER)


def test_f13_lease_deleted_recreated_racing_post_409_then_get(
        cluster, api, measure):
    """F13: the lease is deleted by an admin.  (a) Natural: it is
    recreated by exactly one write within 2.2*RP + 1s (the leader, whose
    PUT fails on the uid, reads 404 and creates at once; followers wait
    RD after a 404 before creating), one leader settles within LD +
    2.2*RP + 1s, and S1 holds across the deletion.  (b) Forced race: the
    leader cannot write (503), a follower's POST (RD after its 404) is
    held 600 ms while an admin creates the lease for "squatter": the POST
    gets 409 AlreadyExists, the follower GETs and follows the squatter,
    nobody claims before the squatter's lease expires (LD), then one
    instance leads within LD + 2.2*RP + 1s; S1 holds throughout."""
    ins, chk, old = start_group(cluster, 3)
    time.sleep(2 * RP)
    uid0 = cluster.lease()["metadata"]["uid"]
    t_del = time.monotonic()
    assert api.delete_lease(NS, cluster.lock)
    lease = wait_until(cluster.lease, POLL + SLACK, what="re-creation")
    recreated = time.monotonic() - t_del
    assert lease["metadata"]["uid"] != uid0
    creates = [w for w in api.history(ns=NS, name=cluster.lock)
               if w["t"] > t_del and w["created"]]
    assert len(creates) == 1, creates
    cluster.wait_single_leader(FAILOVER)
    time.sleep(2 * RP)
    overlap = chk.violations()
    measure("F13", "(a) lease recreated after deletion", recreated,
            bound=POLL + SLACK)
    measure("F13", "(a) overlapping claims across the deletion",
            len(overlap), unit="", bound=0)
    chk.assert_s1()

    # (b) the forced race.
    old = cluster.wait_single_leader(2.0)
    followers = [i for i in ins if i is not old]
    block = api.fault("status", token=old.token, status=503,
                      methods=["PUT", "POST"])
    hold = [api.fault("delay", token=f.token, methods=["POST"],
                      delay_ms=600) for f in followers]
    t_del2 = time.monotonic()
    assert api.delete_lease(NS, cluster.lock)
    try:
        wait_until(lambda: any(h.hits for h in hold), RD + POLL + 1.0,
                   what="a follower's POST")
    except AssertionError:
        raise AssertionError("no follower POST after the deletion; their "
                             "requests: %s" % [
                                 (f.name, r["method"], r["code"],
                                  round(r["t_recv"] - t_del2, 3))
                                 for f in followers
                                 for r in requests_of(api, f,
                                                      since=t_del2)])
    poster = [f for f, h in zip(followers, hold) if h.hits][0]
    t_squat = time.monotonic()
    api.create_lease(NS, cluster.lock, {
        "holderIdentity": "squatter", "leaseDurationSeconds": int(LD),
        "acquireTime": _microtime(), "renewTime": _microtime(),
        "leaseTransitions": 7})
    wait_until(lambda: [r for r in requests_of(api, poster, since=t_del2,
                                               method="POST")
                        if r["code"] == 409], 2.0,
               what="the racing POST to get 409")
    post409 = [r for r in requests_of(api, poster, since=t_del2,
                                      method="POST") if r["code"] == 409][0]
    # The follower learns the squatter's record by a GET after the 409,
    # or from its watch, which delivered the create while the POST was
    # out and is taken right after the 409: either way it follows.
    assert post409
    wait_until(lambda: (v := poster.leader()) and v["name"] == "squatter",
               1.0, what="the follower to follow the squatter")
    for h in hold:
        api.clear_fault(h)
    api.clear_fault(block)
    s = wait_takeover(chk, t_squat, [], FAILOVER + 1.0)
    assert s[1] >= t_squat + LD, "took the squatter's live lease"
    assert s[1] - t_squat <= FAILOVER
    time.sleep(2 * RP)
    chk.assert_s1()
    assert "squatter" in poster.log()
    measure("F13", "(b) takeover after the squatter's create",
            s[1] - t_squat, bound=FAILOVER)


def test_f14_429_retry_after_and_5xx_step_down_in_deadline(
        cluster, api, measure):
    """F14: scripted answers to the leader.  Transient (one 429 with
    Retry-After 30, then one 503, on consecutive renews): leadership is
    kept.  Persistent, one round each for 429 (Retry-After: 30), 500, 503
    (Retry-After: 20) and 504: a Retry-After longer than the deadline does
    not extend leadership: the leader reports false by RD after its last
    good renew, keeps retrying every RP in the meantime, a follower leads
    within LD + 2.2*RP + 1s, and the old leader follows once healed."""
    ins, chk, old = start_group(cluster, 3)
    time.sleep(2 * RP)
    trans0 = cluster.transitions()
    t0 = time.monotonic()
    api.fault("status", token=old.token, status=429, retry_after=30,
              count=1, methods=["PUT"], message="too many requests")
    api.fault("status", token=old.token, status=503, count=1,
              methods=["PUT"])
    time.sleep(2.0)
    assert all(x[3] for x in chk.window(old.name, since=t0)), \
        "lost the lease over two transient errors"
    assert cluster.transitions() == trans0
    cur = old
    for code, ra in ((429, 30), (500, None), (503, 20), (504, None)):
        time.sleep(RP)
        new, t_fault = _lose_and_recover(
            cluster, api, chk, ins, cur,
            dict(kind="status", status=code, retry_after=ra,
                 message="scripted %d" % code),
            measure, "F14", "%d%s" % (code, " Retry-After %d" % ra
                                      if ra else ""))
        reqs = [r["t_recv"] for r in requests_of(api, cur, since=t_fault)
                if r["fault"] == "status"]
        gaps = [b - a for a, b in zip(reqs, reqs[1:])]
        deadline_reqs = [r for r in reqs if r < t_fault + RD]
        assert len(deadline_reqs) >= 2, \
            "%d: the leader did not retry within its deadline: %s" % (
                code, reqs)
        assert gaps and max(gaps) <= POLL + RT + 0.3, \
            "%d: a retry gap of %.2fs (Retry-After honoured?)" % (
                code, max(gaps))
        cur = new
    time.sleep(2 * RP)
    _checks(cluster, chk, ins)


def test_f15_invalid_token_then_valid_recovers_without_restart(
        cluster, api, measure):
    """F15: the leader's token is revoked and its token file replaced with
    an invalid token; later a new valid token is written.  Bound: 401s,
    the leader reports false by RD after its last good renew, a follower
    leads within LD + 2.2*RP + 1s; after the valid token is written the
    same process recovers (requests succeed, it follows the new leader)
    within 2.2*RP + RT + 1s, no restart."""
    ins, chk, old = start_group(cluster, 3)
    time.sleep(2 * RP)
    pid = old.pid
    t_fault = time.monotonic()
    api.revoke_token(old.token)
    old.write_token("not-a-valid-token")
    s = wait_takeover(chk, t_fault, [old.name], FAILOVER + 1.0)
    t_ok, t_false, _ = chk.assert_s2(old, t_fault, RD)
    assert s[1] - t_fault <= FAILOVER
    assert [r for r in api.requests(token="not-a-valid-token")
            if r["code"] == 401], "the invalid token was never sent"
    new = [i for i in ins if i.name == s[2]][0]
    good = old.token + "-new"
    api.add_token(good)
    t_fix = time.monotonic()
    old.write_token(good)
    # A watch opened with the revoked token may stay open until its
    # timeout; end the open streams, as the API server does then, so the
    # follower's next request comes now and not at its next poll.
    api.watch_end_open()
    wait_until(lambda: [r for r in api.requests(token=good, since=t_fix)
                        if r["code"] == 200], POLL + RT + SLACK,
               what="a request with the new token")
    wait_until(lambda: (v := old.leader()) and v["name"] == new.identity,
               POLL + RT + SLACK, what="the old leader to follow")
    back = time.monotonic() - t_fix
    assert old.pid == pid and old.alive()
    assert "API error: 401 Unauthorized" in old.log()
    assert good not in old.log() and "not-a-valid-token" not in old.log()
    time.sleep(2 * RP)
    _checks(cluster, chk, ins)
    measure("F15", "401: leader false after its last good renew",
            t_false - t_ok, bound=RD + 0.25)
    measure("F15", "401: takeover", s[1] - t_fault, bound=FAILOVER)
    measure("F15", "recovered after a valid token was written", back,
            bound=POLL + RT + SLACK)


RBAC_MSG = ('leases.coordination.k8s.io "%s" is forbidden: User '
            '"system:serviceaccount:default:leaderd" cannot %s resource '
            '"leases" in API group "coordination.k8s.io" in the namespace '
            '"default"')


def test_f16_rbac_403_step_down_recover_after_restore(cluster, api,
                                                     measure):
    """F16 (emulated: a real RoleBinding deletion needs a real API server;
    here every request of the leader gets the 403 Forbidden Status an
    apiserver sends when RBAC denies it).  Bound: the leader reports
    false by RD after its last good renew, logs the RBAC hint, a follower
    leads within LD + 2.2*RP + 1s; after the "RoleBinding is restored"
    the old leader follows within 2.2*RP + RT + 1s."""
    ins, chk, old = start_group(cluster, 3)
    time.sleep(2 * RP)
    _lose_and_recover(cluster, api, chk, ins, old,
                      dict(kind="status", status=403,
                           message=RBAC_MSG % (cluster.lock, "update")),
                      measure, "F16", "403 RBAC")
    assert "needs get, update and create on leases" in old.log()
    time.sleep(2 * RP)
    _checks(cluster, chk, ins)


VAP_MSG = ('leases.coordination.k8s.io "%s" is forbidden: '
           'ValidatingAdmissionPolicy \'deny-renew\' with binding '
           '\'deny-renew\' denied request: renewals by the current holder '
           'are denied')


def test_f17_vap_denies_holder_renewals_other_node_wins(cluster, api,
                                                       measure):
    """F17 (emulated: the upstream test uses a ValidatingAdmissionPolicy;
    here the leader's PUTs get the 403 an apiserver sends for a VAP
    denial, its GETs pass).  Bound: the leader loses at its deadline (RD
    after its last good renew), a different node wins within LD + 2.2*RP
    + 1s, and the denied node follows it."""
    ins, chk, old = start_group(cluster, 3)
    time.sleep(2 * RP)
    new, _ = _lose_and_recover(
        cluster, api, chk, ins, old,
        dict(kind="status", status=403, methods=["PUT"],
             message=VAP_MSG % cluster.lock),
        measure, "F17", "403 VAP on PUT")
    assert new is not old
    assert cluster.lease()["spec"]["holderIdentity"] == new.identity
    time.sleep(2 * RP)
    _checks(cluster, chk, ins)


def _mangled_follower(cluster, api):
    relay = MangleRelay(api)
    lead = cluster.start("lead")
    chk = cluster.checker()
    wait_until(lead.is_leader, POLL + START, what="lead to lead")
    f = cluster.new("follow", proxied=False)
    api.write_kubeconfig(f.kubeconfig, token_file=f.token_path,
                         user="follow", server=relay.url)
    f.start()
    chk.add(f)
    wait_until(lambda: (v := f.leader()) and v["name"] == "lead",
               POLL + SLACK, what="follow to follow")
    return relay, lead, f, chk


def test_f23_malformed_huge_wrongtype_missing_rejected_safely(
        cluster, api, measure):
    """F23: the follower's lease reads come back truncated, not JSON, with
    a NUL byte, 2 MiB large (over leaderd's 1 MiB cap), with wrong-typed
    fields, and with renewTime and leaseDurationSeconds missing, each for
    1.5-2s (< LD) while the leader renews.  Bound: the follower rejects
    each (logs an API error, stays up, /healthz 200), writes nothing and
    never claims (a missing field is not "expired"), and follows the
    leader again within 2.2*RP + RT + 1s of each fault's end."""
    relay, lead, f, chk = _mangled_follower(cluster, api)
    t0 = time.monotonic()
    worst = 0.0
    try:
        for mode, dur in (("truncate", 1.5), ("garbage", 1.5), ("nul", 1.5),
                          ("huge", 1.5), ("wrongtype", 1.5),
                          ("missing", 2.0)):
            t_m = time.monotonic()
            relay.set(mode)
            wait_until(lambda: relay.hits.get(mode, 0) >= 1, POLL + 1.0,
                       what="a %s answer" % mode)
            time.sleep(max(0.0, t_m + dur - time.monotonic()))
            assert f.alive(), "follower died on %s" % mode
            assert f.get_status("/healthz") == 200, mode
            relay.set(None)
            t_c = time.monotonic()
            wait_until(lambda: [r for r in api.requests(token=f.token,
                                                        method="GET")
                                if r["t_recv"] > t_c and r["code"] == 200],
                       POLL + RT + SLACK, what="a clean read after %s"
                       % mode)
            worst = max(worst, time.monotonic() - t_c)
    finally:
        relay.set(None)
    log = f.log()
    for want in ("BadLease", "BodyTooLarge"):
        assert want in log, "no %s error logged" % want
    assert f.writes() == [], "the follower wrote on a bad answer: %s" % \
        f.writes()[:2]
    assert not [x for x in chk.window("follow", since=t0) if x[3]]
    assert all(x[3] for x in chk.window("lead", since=t0))
    chk.assert_s1()
    terms_ok(cluster)
    relay.stop()
    measure("F23", "bad answers: worst time to a clean read after each",
            worst, bound=POLL + RT + SLACK)
    measure("F23", "bad answers: follower writes / claims", 0, unit="")


def test_f23_missing_renewtime_persistently_live_holder_kept(
        cluster, api, measure):
    """F23 (continued): the follower's reads lack renewTime for 2 x LD
    while the leader keeps renewing (every write changes the lease's
    resourceVersion).  Bound: the follower never takes the live lease:
    no write, no claim; the leader leads throughout."""
    relay, lead, f, chk = _mangled_follower(cluster, api)
    t0 = time.monotonic()
    try:
        relay.set("norenew")
        time.sleep(2 * LD)
    finally:
        relay.set(None)
    time.sleep(RP)
    took = [w for w in f.writes() if w["t_recv"] > t0]
    claims = [x for x in chk.window("follow", since=t0) if x[3]]
    relay.stop()
    measure("F23", "renewTime missing for 2 x LD: follower writes over "
            "the live lease", len(took), unit="", bound=0)
    assert took == [], ("the follower took a live lease whose renewTime it "
                        "could not see, %.2fs after the strip began"
                        % (took[0]["t_recv"] - t0))
    assert claims == []
    chk.assert_s1()


def test_f11_api_down_lone_leaderd_retries_every_rp_back_within_rp(
        cluster, api, measure):
    """F11, one leaderd: every request fails (503) for LD + 2s, then the
    API is back.  A lone leaderd retries at least once per retry_period
    while it fails (jittered, so a herd still spreads), so it leads again
    within RP (+ 0.3s for the request and the checker) of the recovery:
    the issue's bound for the whole control plane down and back."""
    ins, chk, old = start_group(cluster, 1)
    time.sleep(2 * RP)
    t_fault = time.monotonic()
    f = api.fault("status", token=old.token, status=503,
                  message="scripted: the API server is down")
    time.sleep(LD + 2.0)
    t_end = time.monotonic()
    api.clear_fault(f)
    back = wait_until(lambda: chk.first_true(since=t_end), POLL + RT + 1.0,
                      what="a leader after the API is back")
    after = back[1] - t_end
    reqs = [r["t_recv"] for r in requests_of(api, old, since=t_fault)
            if "/leases/" in r["path"] and r["t_recv"] < t_end]
    gaps = [b - a for a, b in zip(reqs, reqs[1:])]
    chk.assert_s1()
    measure("F11", "lone leaderd: longest gap between failed requests",
            max(gaps), bound=RP + 0.15)
    measure("F11", "lone leaderd: a leader after the API is back", after,
            bound=RP + 0.3)
    assert max(gaps) <= RP + 0.15, \
        "a retry gap of %.2fs while the API was down: %s" % (
            max(gaps), ["%.2f" % g for g in gaps])
    assert after <= RP + 0.3, "leading again %.2fs after the API was " \
        "back (bound %.2fs)" % (after, RP + 0.3)
