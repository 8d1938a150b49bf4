"""shards -- a shard group's figures (bench.py --only-shards), printed,
never asserted.

For N shards over M leaderd on the test API server, at short durations
(lease 4s, renew 2500ms, retry 1s): the time from the start to balance,
then for one member joining (M -> M+1), one leaving by SIGTERM and one
killed -9 (back to M, then M-1): the time from the change to balance
(every shard owned by exactly one live member, each floor..ceil of N/M,
every member seeing the others, by their GET /shards), the shards whose
owner changed against the minimum (the joiner's or the leaver's share),
and the group's API requests per second at steady state (writes: shard
and member renews; reads: the group's list).  A ShardChecker samples
every /shards throughout; its overlaps (none expected) are printed, and
the time from one owner's last claim of a shard to the next owner's
first, as those samples saw it.
"""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit"))

from fakeapi import FakeAPI  # noqa: E402
from harness import Leaderd, wait_until  # noqa: E402
from shardkit import (ShardChecker, member_config, quota_ok,  # noqa: E402
                      views_of)

LD, RD, RP = 4.0, 2.5, 1.0
CASES = [(16, 3), (16, 8), (64, 3), (64, 8)]


def owners(views):
    return {s: name for name, v in views.items() for s in v["owned"]}


def balance(insts, n, timeout=60.0):
    """(seconds to balance, the views then), polling every 20 ms."""
    t0 = time.monotonic()
    live = [i for i in insts if i.alive()]
    v = wait_until(lambda: quota_ok(views_of(live), n) and views_of(live),
                   timeout, interval=0.02, what="balance")
    return time.monotonic() - t0, v


def moved(before, after):
    a, b = owners(before), owners(after)
    return sum(1 for s in b if a.get(s) != b[s])


def one_case(work, n, m):
    api = FakeAPI(certdir=os.path.join(work, "certs-%d-%d" % (n, m)))
    api.start()
    made, chk = [], ShardChecker([], interval=0.05)
    group = "b%d-%d" % (n, m)

    def add():
        inst = Leaderd(api, work, "%s-m%d" % (group, len(made)), "unused",
                       lease_duration=LD, renew_deadline=RD,
                       retry_period=RP, request_timeout=1.0,
                       log_level="info")
        member_config(inst, group, n)
        made.append(inst)
        inst.start()
        chk.add(inst)
        return inst
    out = {}
    try:
        chk.start()
        t0 = time.monotonic()
        for _ in range(m):
            add()
        dt, v = balance(made, n)
        out["start"] = (time.monotonic() - t0, None, None)
        # Steady state: the group's requests over 3 retry periods.
        t1 = time.monotonic()
        time.sleep(3 * RP)
        reqs = api.requests(since=t1)
        span = time.monotonic() - t1
        writes = sum(1 for r in reqs if r["method"] in ("PUT", "POST",
                                                       "DELETE"))
        lists = sum(1 for r in reqs if r["method"] == "GET" and
                    "labelSelector" in (r.get("query") or ""))
        gets = sum(1 for r in reqs if r["method"] == "GET") - lists
        out["rate"] = (writes / span, lists / span, gets / span)
        # A member joins.
        before = v
        add()
        dt, v = balance(made, n)
        out["join"] = (dt, moved(before, v), n / (m + 1))
        # One leaves by SIGTERM.
        before = v
        gone = made[0]
        t0 = time.monotonic()
        gone.terminate()
        gone.wait(10)
        dt, v = balance(made, n)
        out["SIGTERM"] = (time.monotonic() - t0, moved(before, v),
                          len(before[gone.name]["owned"]))
        # One is killed.
        before = v
        dead = made[1]
        t0 = time.monotonic()
        dead.kill9()
        dt, v = balance(made, n)
        out["kill -9"] = (time.monotonic() - t0, moved(before, v),
                          len(before[dead.name]["owned"]))
    finally:
        chk.stop()
        for i in made:
            i.cleanup(grace=8.0)
        api.stop()
    out["overlaps"] = len(chk.violations())
    out["gaps"] = sorted(chk.gaps())
    out["samples"] = len(chk.snapshot())
    return out


def shard_figures(args, work):
    print("shard groups on fakeapi, lease %gs / renew %gs / retry %gs "
          "(time to balance; moved: shards whose owner changed; min: the "
          "joiner's share N/(M+1) or the leaver's shards)" % (LD, RD, RP))
    print("  shards members  change          s   moved  min   "
          "writes/s lists/s gets/s overlaps")
    for n, m in CASES:
        try:
            r = one_case(work, n, m)
        except AssertionError as e:
            print("  %6d %7d  failed: %s" % (n, m, e))
            continue
        w, ls, g = r["rate"]
        print("  %6d %7d  start     %7.2f      -    -   %7.1f %7.1f "
              "%6.1f %d/%d" % (n, m, r["start"][0], w, ls, g,
                               r["overlaps"], r["samples"]))
        for k, lbl in (("join", "%d -> %d" % (m, m + 1)),
                       ("SIGTERM", "%d -> %d" % (m + 1, m)),
                       ("kill -9", "%d -> %d" % (m, m - 1))):
            dt, mv, mn = r[k]
            print("  %6d %7s  %-8s %7.2f %6d %5.1f" % (
                n, lbl, k, dt, mv, mn))
        g = r["gaps"]
        if g:
            print("  %6d %7d  a claim lost to another owner's claim, as "
                  "/shards showed them: min %.0f ms, p50 %.0f ms, max %.0f "
                  "ms over %d moves (below 0: an overlap)" % (
                      n, m, g[0] * 1000, g[len(g) // 2] * 1000,
                      g[-1] * 1000, len(g)))
        sys.stdout.flush()
