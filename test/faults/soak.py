#!/usr/bin/env python3
"""soak -- random kills of 3-5 leaderd instances for DURATION seconds
(F26 at length; `make soak DURATION=300`).

Starts fakeapi and N instances (each behind its own pass-through proxy),
then every 0.5-2 s kills (-9 or SIGTERM) the leader or a follower, or
restarts a dead instance, while a checker samples every /leader about
every 20 ms.  Instance c-0 is never killed, so its file descriptors can be
followed over the whole run.  Prints the transitions, the longest
leaderless gap and the S1/S2/L1/fd results (soaklib.py); exits 1 on any
violation, 2 on bad usage.

Every instance runs the fencing oracle's worker (test/kit/fencing.py) as
its `leaderd run` command (run.grace 800 ms), acting every 20 ms with
$LEADERD_FENCING_TOKEN on a fenced store and an unfenced shadow log.
The report adds the store's checks, (a) no lower token accepted after a
higher one and (b) linearizable as a max-token register, and the worst
exposure window (old-token actions landing after a new term's first);
run mode with leaderd never paused must keep it at 0.  --no-fencing
runs plain leaderd instances instead.

    LEADERD=./leaderd python3 test/faults/soak.py --duration 300 [-n 4]
"""

import argparse
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kit"))

import fakeapi  # noqa: E402
import fencing  # noqa: E402
import soaklib  # noqa: E402
from cluster import FaultCluster  # noqa: E402
from proxy import ProxyHub  # noqa: E402


class _Node:
    pass


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=300.0)
    ap.add_argument("-n", "--instances", type=int, default=None,
                    help="3-5 (default: chosen at random by the seed)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory (logs)")
    ap.add_argument("--no-fencing", action="store_true",
                    help="no fencing workers (run mode) beside leaderd")
    a = ap.parse_args(argv)
    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    n = a.instances if a.instances is not None else rng.randint(3, 5)
    if not 3 <= n <= 5 or a.duration <= 0:
        ap.error("--instances must be 3-5 and --duration positive")
    work = tempfile.mkdtemp(prefix="leaderd-soak-")
    print("soak: %d instances, %.0fs, seed %d, logs in %s" % (
        n, a.duration, seed, work), flush=True)
    api = fakeapi.FakeAPI(certdir=os.path.join(work, "certs")).start()
    hub = ProxyHub()
    cl = FaultCluster(api, hub, work, "soak", _Node())
    oracle = None if a.no_fencing else fencing.Oracle().start()
    args = [] if oracle is None else [
        "run", "--grace", "800ms", "--", sys.executable, fencing.__file__,
        "worker", "--store", str(oracle.port), "--mode", "run"]
    try:
        rep = soaklib.run(cl, n=n, duration=a.duration, rng=rng,
                          keep_one=True, args=args,
                          progress=lambda s: print("soak: " + s, flush=True))
    finally:
        cl.close()
        hub.close()
        api.stop()
    if oracle is not None:
        time.sleep(0.2)
        oracle.stop()
        rep["violations"] += fencing_report(oracle)
    print(soaklib.format_report(rep), flush=True)
    if rep["fds"]:
        for pid, (name, first, mx, last) in sorted(rep["fds"].items()):
            if name == "c-0":
                print("soak: c-0 (never killed, pid %d): %d fds after "
                      "warm-up, at most %d, %d at the end" % (
                          pid, first, mx, last))
    if not a.keep and not rep["violations"]:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 1 if rep["violations"] else 0


def fencing_report(oracle):
    """Print the fencing oracle's figures; return its violations."""
    v = []
    h = list(oracle.store.history)
    for what, check in (("(a) no lower token accepted after a higher",
                         fencing.check_fenced),
                        ("(b) linearizable as a max-token register",
                         fencing.check_linearizable)):
        try:
            check(h)
        except AssertionError as e:
            v.append("fencing %s: %s" % (what, e))
    ex = fencing.exposure(oracle.shadow.entries)
    worst = max(ex, key=lambda t: t["window"]) if ex else None
    ref = sum(1 for r in h if not r["ok"])
    print("soak: fencing: %d actions accepted, %d refused, %d terms acted "
          "on; (a) %s, (b) %s; worst exposure window %.3fs" % (
              sum(1 for r in h if r["ok"]), ref, len(ex),
              "VIOLATED" if any(x.startswith("fencing (a)") for x in v)
              else "held",
              "VIOLATED" if any(x.startswith("fencing (b)") for x in v)
              else "held", worst["window"] if worst else 0.0), flush=True)
    if worst and worst["window"] > 0:
        v.append("fencing: old-token actions (by %s) landed %.3fs after the "
                 "first action of term %s" % (", ".join(worst["by"]),
                                              worst["window"],
                                              worst["token"]))
    return v


if __name__ == "__main__":
    sys.exit(main())
