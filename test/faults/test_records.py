"""A property of the records a leader writes that the fault rows (F14, F18,
F26) depend on: followers, leaderd's and client-go's alike, compare lease
records at one-second granularity (ref/clientgo-leaderelection.md 2.4)
and restart their lease_duration wait only when the record changes.  If a
leader's renewTime seconds ever go back to a second it wrote before (the
A-B-A pattern 19.000000 -> 20.000000 -> 19.85), a follower that read the
first and then the third sees "no change" and takes the lease over up to
2 x RP early; with LD < RD + 2 x RP that overlaps the old leader's claim."""

import time

from faultlib import POLL, START, wait_until


def _sec(mt):
    return mt[:19]


def test_renewtime_seconds_never_go_back_within_a_term(cluster, measure):
    """Bound: within one term the renewTime a leader writes never moves to
    an earlier second than one it has written (7s of renews at RP 500ms,
    plus renews right after failures)."""
    a = cluster.start("a")
    wait_until(a.is_leader, POLL + START, what="a to lead")
    api = cluster.api
    t0 = time.monotonic()
    # Two failures mid-way, so some renews follow a retry.
    api.fault("status", token=a.token, status=503, count=1, methods=["PUT"])
    time.sleep(3.5)
    api.fault("status", token=a.token, status=500, count=1, methods=["PUT"])
    time.sleep(3.5)
    ws = [w for w in a.writes() if w["t"] >= t0 and
          w["spec"]["acquireTime"] == a.writes()[0]["spec"]["acquireTime"]]
    secs = [_sec(w["spec"]["renewTime"]) for w in ws]
    back = [(secs[i - 1], secs[i]) for i in range(1, len(secs))
            if secs[i] < max(secs[:i])]
    measure("records", "renewTime going back a second", len(back), unit="",
            bound=0)
    measure("records", "renews looked at", len(secs), unit="")
    assert len(secs) >= 10
    assert back == [], ("renewTime went back to an earlier second %d times "
                        "in %d renews, e.g. %s (all: %s)" % (
                            len(back), len(secs), back[0],
                            [w["spec"]["renewTime"] for w in ws][:12]))
