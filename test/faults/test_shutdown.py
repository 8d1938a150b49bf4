"""Shutdown faults: SIGTERM while the leader's renew is held by the server
longer than request_timeout (F30), while a renew the server applied is
answered late (F31), while the leader's watch reconnects (F32), while its
token is rotated (F33), with the API blackholed for the whole shutdown
budget (F34), and on a MultiLock whose secondary renew is answered late
(F35).

In each of F30-F33 the stopping leader abandons the renew in flight and
writes the release (holderIdentity "") on a fresh connection, over the
last resourceVersion it knew; it exits 0 within the budget; another
instance leads within 1 s of the signal.  In F34 no release can be
written: it exits within the budget, logs that the release was not
written, and a follower takes over only at LD.

Timings: lease_duration 3s, renew_deadline 2s, retry_period 500ms,
request_timeout 1s (faultlib.py); shutdown_timeout 3s (BUDGET)."""

import json
import re
import subprocess
import time

from faultlib import (FAILOVER, POLL, RP, SLACK, START, assert_waited_ld,
                      start_group, terms_ok, wait_takeover, wait_until)

BUDGET = 3.0            # --shutdown-timeout
HOLD_MS = 3000          # a held renew: longer than request_timeout (1 s)
TAKEOVER = 1.0          # another instance leads within this of SIGTERM
EXIT_SLACK = 0.5        # process exit, scheduling


def _group(cluster):
    return start_group(cluster, 3, args=["--shutdown-timeout", "%gs"
                                         % BUDGET])


def _hold_renew(api, leader, kind):
    """The leader's next PUT (a renew) meets fault kind, held HOLD_MS;
    returns when that renew has reached the server."""
    f = api.fault(kind, token=leader.token, methods=["PUT"], count=1,
                  delay_ms=HOLD_MS if kind == "delay" else 0,
                  hold_ms=HOLD_MS)
    wait_until(lambda: f.hits >= 1, 2 * RP + 1.0,
               what="the leader's next renew to reach the server")
    return f


def _sigterm(leader):
    t_term = time.monotonic()
    leader.terminate()
    rc = leader.wait(BUDGET + 2.0)
    t_exit = time.monotonic()
    assert rc == 0, "exit status %r after SIGTERM" % rc
    assert t_exit - t_term <= BUDGET + EXIT_SLACK, \
        "exit %.2fs after SIGTERM > budget %.1fs" % (t_exit - t_term, BUDGET)
    return t_term, t_exit


def _released(api, cluster, token, t_term, t_exit):
    """The release written with token after SIGTERM, before the exit."""
    rel = [w for w in api.history(ns="default", name=cluster.lock,
                                  token=token)
           if w["t_recv"] >= t_term and w["spec"]["holderIdentity"] == ""]
    assert len(rel) == 1, "releases after SIGTERM: %s" % rel
    assert rel[0]["spec"]["leaseDurationSeconds"] == 1
    assert rel[0]["t"] <= t_exit
    return rel[0]


def _handover(cluster, api, chk, ins, leader, token, t_term, t_exit, row,
              measure):
    rel = _released(api, cluster, token, t_term, t_exit)
    s = wait_takeover(chk, t_term, [leader.name], TAKEOVER + 1.0)
    assert s[1] - t_term <= TAKEOVER, "new leader %.2fs after SIGTERM" % (
        s[1] - t_term)
    time.sleep(2 * RP)
    chk.assert_s1()
    terms_ok(cluster)
    measure(row, "release written after SIGTERM", rel["t"] - t_term)
    measure(row, "takeover after SIGTERM", s[1] - t_term, bound=TAKEOVER)
    measure(row, "exit after SIGTERM", t_exit - t_term, bound=BUDGET)
    return rel


def test_f30_sigterm_during_held_renew_releases_at_once(cluster, api,
                                                        measure):
    """F30: the server holds the leader's renew for 3s (> request_timeout)
    and then applies it; SIGTERM while it is held.  Bound: the renew is
    abandoned, the release is written at once over the version the renew
    went over, the renew applied afterwards is refused (409), exit 0
    within the budget, another leader within 1s."""
    ins, chk, leader = _group(cluster)
    time.sleep(2 * RP)
    f = _hold_renew(api, leader, "delay")
    time.sleep(0.1)
    t_term, t_exit = _sigterm(leader)
    _handover(cluster, api, chk, ins, leader, leader.token, t_term, t_exit,
              "F30", measure)
    # The held renew lands after the release: the CAS refuses it.
    wait_until(lambda: [r for r in api.requests(token=leader.token,
                                                method="PUT", since=t_term - 1)
                        if r["fault"] == "delay" and r["code"] is not None],
               HOLD_MS / 1000.0 + 1.0, what="the held renew to be applied")
    held = [r for r in api.requests(token=leader.token, method="PUT")
            if r["fault"] == "delay"]
    assert [r["code"] for r in held] == [409], held
    api.clear_fault(f)


def test_f31_sigterm_during_late_answer_release_conflicts_then_retries(
        cluster, api, measure):
    """F31: the server applies the leader's renew at once and answers it
    3s late; SIGTERM while the answer is awaited.  Bound: the release goes
    over the version before the renew, gets 409, re-reads our own renew
    and releases again: released before exit, another leader within
    1s."""
    ins, chk, leader = _group(cluster)
    time.sleep(2 * RP)
    n0 = len(leader.writes())
    f = _hold_renew(api, leader, "answer_late")
    wait_until(lambda: len(leader.writes()) > n0, 1.0,
               what="the renew to be applied")
    time.sleep(0.05)
    t_term, t_exit = _sigterm(leader)
    _handover(cluster, api, chk, ins, leader, leader.token, t_term, t_exit,
              "F31", measure)
    puts = [r["code"] for r in api.requests(token=leader.token,
                                             method="PUT", since=t_term)]
    gets = [r for r in api.requests(token=leader.token, method="GET",
                                    since=t_term)]
    assert puts[:2] == [409, 200] and gets, (puts, gets)
    api.clear_fault(f)


def test_f32_sigterm_during_watch_reconnect_releases(cluster, api, measure):
    """F32: the leader's watch ends and its reconnection is blackholed, a
    renew is held as in F30; SIGTERM then.  Bound: the release is written
    before exit, exit within the budget, another leader within 1s."""
    ins, chk, leader = _group(cluster)
    time.sleep(2 * RP)
    w = api.fault("blackhole", token=leader.token, methods=["WATCH"])
    api.watch_end_open()
    wait_until(lambda: w.hits >= 1, 2.0,
               what="the leader's watch to reconnect")
    f = _hold_renew(api, leader, "delay")
    time.sleep(0.1)
    t_term, t_exit = _sigterm(leader)
    _handover(cluster, api, chk, ins, leader, leader.token, t_term, t_exit,
              "F32", measure)
    api.clear_fault(f)
    api.clear_fault(w)


def test_f33_sigterm_during_token_rotation_releases(cluster, api, measure):
    """F33: a renew is held as in F30; the token file is rotated and the
    old token revoked at the moment of SIGTERM.  Bound: the release (401
    with the old token, then the new token read again) is written before
    exit, within the budget; another leader within 1s."""
    ins, chk, leader = _group(cluster)
    time.sleep(2 * RP)
    f = _hold_renew(api, leader, "delay")
    time.sleep(0.1)
    new = leader.token + "-rotated"
    api.add_token(new)
    leader.write_token(new)
    api.revoke_token(leader.token)
    t_term, t_exit = _sigterm(leader)
    _handover(cluster, api, chk, ins, leader, new, t_term, t_exit, "F33",
              measure)
    api.clear_fault(f)


def test_f34_sigterm_with_api_blackholed_exits_within_budget(
        cluster, api, measure):
    """F34: every request of the leader is blackholed, then SIGTERM.
    Bound: no release can be written; exit 0 within the budget, with the
    log saying the release was not written; a follower takes over only
    LD after the last renew (never a live lease), within LD + 2.2*RP +
    1s; no two leaders."""
    ins, chk, leader = _group(cluster)
    time.sleep(2 * RP)
    f = api.fault("blackhole", token=leader.token)
    time.sleep(0.1)
    t_term, t_exit = _sigterm(leader)
    assert t_exit - t_term >= BUDGET - 0.1, \
        "exit %.2fs after SIGTERM, before the budget" % (t_exit - t_term)
    # Said once, and without promising a takeover nobody may be able to
    # make (a refused release is the same line).
    assert leader.log().count("the release was not written") == 1, \
        leader.log()
    assert "followers take over" not in leader.log()
    assert not [w for w in leader.writes() if w["t_recv"] >= t_term]
    s = wait_takeover(chk, t_term, [leader.name], FAILOVER + 1.0)
    assert s[1] - t_term <= FAILOVER
    assert_waited_ld(s, leader)
    api.clear_fault(f)
    time.sleep(2 * RP)
    chk.assert_s1()
    terms_ok(cluster)
    measure("F34", "exit after SIGTERM, API blackholed", t_exit - t_term,
            bound=BUDGET + EXIT_SLACK)
    measure("F34", "takeover after SIGTERM, API blackholed", s[1] - t_term,
            bound=FAILOVER)


def test_stop_budget_is_what_check_prints(cluster, api, measure):
    """The budget a stop gets is the shutdown_timeout `leaderd -n -v`
    prints for the same arguments: unset, in run mode 5s + run.grace +
    1s (here 7s).  With a command that ignores SIGTERM and the API
    blackholed, the stop takes all of it, and no more."""
    args = ["run", "--grace", "1s", "--", "sh", "-c",
            "trap '' TERM; while :; do sleep 1; done"]
    inst = cluster.new("budget", args=args)
    p = subprocess.run([inst.binary, "-n", "-v", "-f", inst.config_path] +
                       args, capture_output=True, text=True, timeout=10)
    m = re.search(r"^shutdown_timeout: (\d+)s  # 5s \+ run\.grace \+ 1s",
                  p.stdout, re.M)
    assert m, p.stdout + p.stderr
    budget = float(m.group(1))
    assert budget == 7.0
    inst.start()
    wait_until(inst.is_leader, START + 2 * RP + SLACK, what="it leads")
    f = api.fault("blackhole", token=inst.token)
    time.sleep(0.1)
    t_term = time.monotonic()
    inst.terminate()
    rc = inst.wait(budget + 3.0)
    took = time.monotonic() - t_term
    api.clear_fault(f)
    assert rc == 0, "exit status %r after SIGTERM" % rc
    assert budget - 0.2 <= took <= budget + EXIT_SLACK, \
        "the stop took %.2fs; -n -v printed %gs" % (took, budget)
    measure("F34b", "run-mode stop, API blackholed, -n -v says 7s", took,
            bound=budget + EXIT_SLACK)


def _start_multilock(cluster, name):
    """A leaderd on the MultiLock endpointsleases (the harness writes
    leases)."""
    inst = cluster.new(name, args=["--shutdown-timeout", "%gs" % BUDGET])
    with open(inst.config_path) as f:
        text = f.read()
    with open(inst.config_path, "w") as f:
        f.write(text.replace("  type: leases\n", "  type: endpointsleases\n"))
    return inst.start()


def test_f35_multilock_sigterm_during_late_secondary_answer_releases_both(
        cluster, api, measure):
    """F35: MultiLock (endpointsleases): the server applies the leader's
    renew of the secondary (the Lease) at once and answers it 3s late;
    SIGTERM while the answer is awaited.  Bound: the primary (Endpoints)
    is released first, over its renewed version; the secondary's release
    meets the landed renew (409), the lock reads the Lease again, finds
    our term and releases it: both objects say holder "" (written by the
    leader) before exit, within the budget; another leader within
    2.2*RP + 1s (a MultiLock is polled, not watched)."""
    ins = [_start_multilock(cluster, "ml-%d" % i) for i in range(3)]
    chk = cluster.checker(ins)
    leader = cluster.wait_single_leader(POLL + START + 2.0, ins)
    time.sleep(2 * RP)
    n0 = len(leader.writes())
    f = api.fault("answer_late", token=leader.token, methods=["PUT"],
                  count=1, hold_ms=HOLD_MS,
                  path_prefix="/apis/coordination.k8s.io/")
    wait_until(lambda: f.hits >= 1 and len(leader.writes()) > n0,
               2 * RP + 1.0, what="the leader's Lease renew to be applied")
    time.sleep(0.05)
    t_term, t_exit = _sigterm(leader)
    lease_rel = _released(api, cluster, leader.token, t_term, t_exit)
    ep_rel = [h for h in api.core_history("endpoints", "default",
                                          cluster.lock)
              if h["token"] == leader.token and h["t"] >= t_term and
              json.loads(h["annotation"])["holderIdentity"] == ""]
    assert len(ep_rel) == 1, ep_rel
    assert ep_rel[0]["t"] <= lease_rel["t"], "primary after secondary"
    s = wait_takeover(chk, t_term, [leader.name], POLL + SLACK + 1.0)
    assert s[1] - t_term <= POLL + SLACK
    api.clear_fault(f)
    time.sleep(2 * RP)
    chk.assert_s1()
    measure("F35", "MultiLock: both released after SIGTERM",
            lease_rel["t"] - t_term)
    measure("F35", "MultiLock: takeover after SIGTERM", s[1] - t_term,
            bound=POLL + SLACK)
