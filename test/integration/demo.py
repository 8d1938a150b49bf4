#!/usr/bin/env python3
"""A local demo of leaderd: a test Kubernetes API server (fakeapi.py, in
this process) and three leaderd instances competing for one Lease.

Once a second it prints who leads as each instance sees it.  After about
8 s it stops the leader politely (SIGTERM: it hands the lease back, so
another instance takes over within a couple of seconds); later it kills
the next leader outright (SIGKILL: nothing is handed back, so the others
wait until the lease expires).  It ends after about 30 s and removes
everything it started.

    python3 test/integration/demo.py --leaderd ./leaderd
"""

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kit"))

import fakeapi  # noqa: E402
import harness  # noqa: E402

# Demo timings: slower than the tests so a person can follow them.
LEASE = 5.0
RENEW = 3.0
RETRY = 1.0
TIMEOUT = 2.0
NAMES = ("alpha", "bravo", "charlie")
LOCK = "demo-app"
COL = 20


def view(inst):
    """What one instance says, in a few words."""
    if not inst.alive():
        return "(stopped)"
    v = inst.leader(timeout=0.5)
    if v is None:
        return "(no answer)"
    if v.get("is_leader"):
        return "LEADER"
    if v.get("state") in ("stopping", "stopped"):
        return "stopping"
    if not v.get("name"):
        return "no leader yet"
    return "follows " + v["name"]


def current_leader(insts):
    for i in insts:
        if i.alive() and i.is_leader():
            return i
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--leaderd", default=harness.leaderd_binary(),
                    help="the leaderd binary (default: %(default)s)")
    ap.add_argument("--duration", type=float, default=30.0,
                    help="seconds to run (default: %(default)s)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the working directory (configs and logs)")
    args = ap.parse_args(argv)
    binary = os.path.abspath(args.leaderd)
    if not os.path.exists(binary):
        print("demo: no leaderd binary at %s; build it with `make`"
              % binary, file=sys.stderr)
        return 1

    work = tempfile.mkdtemp(prefix="leaderd-demo-")
    api = fakeapi.FakeAPI(certdir=os.path.join(work, "certs")).start()
    insts = []
    stop = {"now": False}

    def on_signal(*_):
        stop["now"] = True
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    ok = True
    try:
        for n in NAMES:
            insts.append(harness.Leaderd(
                api, work, n, LOCK, lease_duration=LEASE,
                renew_deadline=RENEW, retry_period=RETRY,
                request_timeout=TIMEOUT, log_level="info", binary=binary))
        print("leaderd demo")
        print("  test API server: %s (a stand-in for Kubernetes)" % api.url)
        print("  lease: default/%s   lease_duration %gs, renew_deadline "
              "%gs, retry_period %gs" % (LOCK, LEASE, RENEW, RETRY))
        for i in insts:
            print("  %-8s asks: curl -s http://127.0.0.1:%d/leader"
                  % (i.name, i.port))
        print()
        print("Each column is what that instance's local API (GET /leader) "
              "answers; the last\ncolumn is the holder recorded in the Lease "
              "on the API server.\n")
        for i in insts:
            i.start()
        t0 = time.monotonic()
        header = "%6s  " % "time" + "".join("%-*s" % (COL, n) for n in NAMES) \
            + "lease holder (API server)"
        print(header)
        print("-" * len(header))

        phase = "start"          # start -> term -> kill -> done
        t_action = None
        victim = None
        last_holder = None
        next_row = t0
        deadline = t0 + args.duration
        while not stop["now"]:
            now = time.monotonic()
            lease = api.get_lease("default", LOCK)
            holder = lease["spec"].get("holderIdentity") if lease else None
            leader = current_leader(insts)
            if holder != last_holder:
                if holder:
                    print("   ... the lease now names %s as holder" % holder)
                elif holder == "":
                    print("   ... the lease is free (holder \"\"): it was "
                          "released")
                last_holder = holder
            if phase in ("term", "kill") and leader is not None and \
                    leader is not victim:
                print("   >>> %s took over %.1f s after %s was %s"
                      % (leader.name, now - t_action, victim.name,
                         "stopped" if phase == "term" else "killed"))
                phase = "term-done" if phase == "term" else "done"
                t_action = now
            if phase == "start" and leader is not None and now - t0 >= 8:
                victim = leader
                print("\n   >>> SIGTERM to %s, the leader. It stops saying "
                      "\"I lead\" at once and hands the lease back\n"
                      "       (holder \"\"), so another instance can take "
                      "it at its next try, within ~%g s.\n"
                      % (victim.name, 2.2 * RETRY))
                victim.terminate()
                phase, t_action = "term", now
            elif phase == "term-done" and now - t_action >= 5:
                victim = leader
                if victim is None:
                    print("demo: no leader to kill", file=sys.stderr)
                    ok = False
                    break
                print("\n   >>> SIGKILL to %s, the new leader. It cannot "
                      "hand anything back; the others\n"
                      "       wait until the lease expires (%g s after they "
                      "last saw it renewed).\n" % (victim.name, LEASE))
                victim.kill9()
                phase, t_action = "kill", now
            if now >= next_row:
                print("%5.0fs  " % (now - t0) +
                      "".join("%-*s" % (COL, view(i)) for i in insts) +
                      (holder if holder else ("(free)" if holder == ""
                                              else "(no lease)")))
                next_row += 1.0
            if now >= deadline and (phase == "done" or
                                    now >= deadline + 10):
                break
            time.sleep(0.1)
        if phase != "done" and not stop["now"]:
            print("demo: the failover did not complete (phase %s)" % phase,
                  file=sys.stderr)
            ok = False
        print()
        if ok and not stop["now"]:
            print("Done: one leader at a time, a quick handover on SIGTERM, "
                  "and a takeover after expiry on SIGKILL.")
    finally:
        for i in insts:
            i.cleanup()
        api.stop()
        if args.keep:
            print("configs and logs kept in %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
