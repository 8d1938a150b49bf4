"""Several elections in one leaderd under faults (F40).

F40: one leaderd leads three elections (the top-level lock and two
elections: items, each its own Lease); two more instances follow in
all three.  The server holds the leader's renew of one election's Lease
for 3 s (> request_timeout), then applies it; SIGTERM while it is held.
Each election has its own request client, so the abandoned renew
blocks no other release: every election's release (holder "") is
written at once, the stalled one's too (on a fresh connection), the
held renew is refused (409) when it lands, leaderd exits 0 within the
budget, and each election has another leader within 1 s, never two.

Timings: lease_duration 3s, renew_deadline 2s, retry_period 500ms,
request_timeout 1s (faultlib.py); shutdown_timeout 3s (BUDGET)."""

import time

from faultlib import (NS, POLL, RP, START, LD, assert_terms, wait_until)
from harness import ElectionView

BUDGET = 3.0            # --shutdown-timeout
HOLD_MS = 3000          # the held renew: longer than request_timeout (1 s)
RELEASE = 0.5           # every release written within this of SIGTERM
TAKEOVER = 1.0          # another leader of each election within this
EXIT_SLACK = 0.5        # process exit, scheduling
LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/default/leases/"


def _leases(lock):
    """Election name -> its Lease."""
    return {lock: lock, "b": "b-" + lock, "c": "c-" + lock}


def _add_elections(inst, lock):
    with open(inst.config_path, "a") as f:
        f.write("elections:\n"
                "  - name: b\n"
                "    lock: {name: b-%s}\n"
                "  - name: c\n"
                "    lock: {name: c-%s}\n" % (lock, lock))


def _start(cluster, name):
    inst = cluster.new(name, args=["--shutdown-timeout", "%gs" % BUDGET])
    _add_elections(inst, cluster.lock)
    return inst.start()


def _leads_all(inst, names):
    st, body = inst.get_json("/leaders")
    return st == 200 and all(body[n]["is_leader"] for n in names)


def test_f40_elections_sigterm_with_one_renew_held_releases_all(
        cluster, api, measure):
    """F40: see the module's docstring."""
    leases = _leases(cluster.lock)
    names = list(leases)
    # The first instance alone, so that it leads all three.
    a = _start(cluster, "el-0")
    wait_until(lambda: _leads_all(a, names), POLL + START + 2.0,
               what="el-0 to lead the three elections")
    ins = [a] + [_start(cluster, "el-%d" % i) for i in (1, 2)]
    chks = {n: cluster.checker([ElectionView(i, n) for i in ins]) for n in names}
    time.sleep(2 * RP)
    assert _leads_all(a, names)
    # Hold the next renew of election b's Lease only.
    f = api.fault("delay", token=a.token, methods=["PUT"], count=1,
                  delay_ms=HOLD_MS, path_prefix=LEASE_PATH + leases["b"])
    wait_until(lambda: f.hits >= 1, 2 * RP + 1.0,
               what="el-0's renew of b to reach the server")
    time.sleep(0.1)
    t_term = time.monotonic()
    a.terminate()
    rc = a.wait(BUDGET + 2.0)
    t_exit = time.monotonic()
    assert rc == 0, "exit status %r after SIGTERM" % rc
    assert t_exit - t_term <= BUDGET + EXIT_SLACK, \
        "exit %.2fs after SIGTERM > budget %.1fs" % (t_exit - t_term, BUDGET)
    rel = {}
    for n, lease in leases.items():
        ws = [w for w in api.history(ns=NS, name=lease, token=a.token)
              if w["t_recv"] >= t_term and w["spec"]["holderIdentity"] == ""]
        assert len(ws) == 1, "%s: releases after SIGTERM: %s" % (n, ws)
        assert ws[0]["t"] <= t_exit
        rel[n] = ws[0]["t"] - t_term
        assert rel[n] <= RELEASE, "%s released %.2fs after SIGTERM" % (
            n, rel[n])
    assert a.log_count("released lease") == 3
    assert "request in flight abandoned" in a.log()
    takeover = {}
    for n in names:
        s = wait_until(lambda: chks[n].takeover(t_term, [a.name]),
                       TAKEOVER + 1.0, what="a new leader of %s" % n)
        takeover[n] = s[1] - t_term
        assert takeover[n] <= TAKEOVER, "%s: new leader %.2fs after " \
            "SIGTERM" % (n, takeover[n])
    # The held renew lands after the release: the CAS refuses it.
    wait_until(lambda: [r for r in api.requests(token=a.token, method="PUT",
                                                since=t_term - 1)
                        if r["fault"] == "delay" and r["code"] is not None],
               HOLD_MS / 1000.0 + 1.0, what="the held renew to be applied")
    held = [r for r in api.requests(token=a.token, method="PUT")
            if r["fault"] == "delay"]
    assert [r["code"] for r in held] == [409], held
    time.sleep(2 * RP)
    for n, lease in leases.items():
        chks[n].assert_s1()
        assert_terms(api, NS, lease, LD)
    others = max(v for n, v in rel.items() if n != "b")
    measure("F40", "other elections released after SIGTERM", others,
            bound=RELEASE)
    measure("F40", "held election released after SIGTERM", rel["b"],
            bound=RELEASE)
    measure("F40", "last takeover after SIGTERM", max(takeover.values()),
            bound=TAKEOVER)
    measure("F40", "exit after SIGTERM", t_exit - t_term, bound=BUDGET)
