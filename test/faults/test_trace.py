"""Trace validation: the daemon drives the elector as the simulators
model it.  Three instances of build/leaderd-testhooks write every
elector step they take ($LEADERD_TEST_ELECTOR_TRACE, lib/daemon/daemon.c)
through the F3 fault (the leader SIGSTOPped beyond the lease, then
resumed) and F2 (the new leader stopped with SIGTERM, its release
written); build/test/elector_replay then replays every step through the
pure elector: the same actions, nothing changing the elector between two
steps, and only the inputs elector_sim and elector_explore feed (answers
to requests in flight and of their kind, watched records only when
taken, time never back).  Then it must refuse a trace with one step
taken out, and one with an action altered.

Timings: lease_duration 3s, renew_deadline 2s, retry_period 500ms,
request_timeout 1s (faultlib.py)."""

import glob
import os
import signal
import subprocess
import time

import harness
from faultlib import (FAILOVER, LD, POLL, RP, SLACK, start_group,
                      wait_takeover, wait_until)

REPLAY = os.path.join(harness.ROOT, "build", "test", "elector_replay")


def _replay(paths):
    return subprocess.run([REPLAY] + paths, capture_output=True, text=True,
                          timeout=60)


def test_trace_replays_through_the_elector(cluster, measure):
    assert os.path.exists(REPLAY), "%s not found (make unit)" % REPLAY
    base = os.path.join(cluster.workdir, "elector-trace")
    env = {"LEADERD_TEST_ELECTOR_TRACE": base}
    ins, chk, old = start_group(cluster, 3, testhooks=True, env=env)
    time.sleep(2 * RP)
    chk.pause(old.name)
    t_stop = time.monotonic()
    old.signal(signal.SIGSTOP)
    s = wait_takeover(chk, t_stop, [old.name], FAILOVER + 1.0)
    time.sleep(max(0.0, t_stop + LD + 1.5 - time.monotonic()))
    old.signal(signal.SIGCONT)
    chk.resume(old.name)
    new = [i for i in ins if i.name == s[2]][0]
    wait_until(lambda: (v := old.leader()) and v["name"] == new.identity,
               POLL + SLACK, what="the resumed leader to follow")
    t_term = time.monotonic()
    new.terminate()
    wait_takeover(chk, t_term, [new.name], POLL + SLACK + 1.0)
    chk.assert_s1()
    for i in ins:
        i.terminate()
    for i in ins:
        assert i.wait(10) is not None
    paths = sorted(glob.glob(base + ".*"))
    assert len(paths) == 3, paths
    r = _replay(paths)
    assert r.returncode == 0, r.stdout + r.stderr
    steps = int(r.stdout.split(" steps replayed")[0].split()[-1])
    assert steps >= 20, r.stdout

    # The checker must catch a step the daemon took that is not in the
    # trace, and an action other than the elector's.
    size, off, esize = map(int, subprocess.run(
        [REPLAY, "-size"], capture_output=True, text=True,
        check=True).stdout.split())
    data = open(paths[0], "rb").read()
    n = len(data) // size
    assert n >= 4 and len(data) % size == 0

    def pre(i):
        return data[i * size + off:i * size + off + esize]

    # A step in the middle that changed the elector.
    k = min((i for i in range(1, n - 1) if pre(i) != pre(i + 1)),
            key=lambda i: abs(i - n // 2))
    cut = os.path.join(cluster.workdir, "cut")
    with open(cut, "wb") as f:
        f.write(data[:k * size] + data[(k + 1) * size:])
    r = _replay([cut])
    assert r.returncode == 1 and "changed between two steps" in r.stderr, \
        r.stdout + r.stderr
    bent = os.path.join(cluster.workdir, "bent")
    b = bytearray(data)
    b[(k + 1) * size - 16] ^= 0x01     # inside the last step's action
    with open(bent, "wb") as f:
        f.write(bytes(b))
    r = _replay([bent])
    assert r.returncode == 1 and "another action" in r.stderr, \
        r.stdout + r.stderr
    measure("T1", "elector steps replayed from 3 daemons (F3, F2)", steps,
            unit="steps")
