"""Interop: 2 leaderd + 2 client-go electors (tools/leaderelection,
LeaseLock) on one Lease, with the same durations, random kills (-9 and
SIGTERM) and restarts.  The API server's history of the Lease is
recorded, every leaderd's event stream and the client-go electors'
/leader followed (e2ehist).

Asserted: the server's terms hold S1 (a live term taken over no sooner
than renew_deadline after its last renew, renew_deadline + retry_period
for a client-go holder), the fencing token grows, renewTimes are unique;
every claim lies in a term of its own and no two overlap; every
participant names the server's holder within 2.2 x retry_period (+
slack) of a change; takeovers C -> Go and Go -> C happen both after a
release (SIGTERM) and after expiry (kill -9), each within its bound.
The Sampler and checks below are the legacy locks' (test_locks.py),
whose objects are no Leases.
"""

import os
import random
import threading
import time

import pytest

import e2elib as E
from e2elib import LD, RD, RP, KILL_BOUND, TERM_BOUND
from e2ehist import H, Oracle, true_runs

RANDOM_PHASE = float(os.environ.get("E2E_INTEROP_SECONDS", "45"))
SAMPLE_EVERY = 0.05
# A follower judges expiry from its last observation of a change, at most
# 2.2 x retry_period before the kill.
EXPIRY_MIN = LD - 2.2 * RP - 0.5


class Sampler(threading.Thread):
    """Polls every participant's /leader; keeps (t0, t1, ident, gen,
    is_leader, name) with t0/t1 the monotonic times around the request."""

    def __init__(self, parts):
        super().__init__(daemon=True)
        self.parts = parts
        self.samples = []
        self.rounds = []
        self.stop_ev = threading.Event()

    def run(self):
        while not self.stop_ev.is_set():
            rnd = []
            for p in self.parts:
                if p.proc is None or not p.proc.alive():
                    continue
                port, gen = p.port, p.generation
                t0 = time.monotonic()
                st, b = E.http_get_json(port, "/leader", timeout=0.5)
                t1 = time.monotonic()
                if st != 200 or b is None:
                    continue
                s = (t0, t1, p.ident, gen, b.get("is_leader") is True,
                     b.get("name", ""))
                self.samples.append(s)
                rnd.append(s)
            self.rounds.append(rnd)
            self.stop_ev.wait(SAMPLE_EVERY)

    def stop(self):
        self.stop_ev.set()
        self.join(timeout=10)


def terms(samples):
    """Per (ident, generation): runs of consecutive true samples, as the
    interval during which the claim certainly held (e2ehist.true_runs),
    with the ident."""
    return [(a, b, s[2]) for a, b, s in true_runs(samples)]


def check_no_overlap(samples):
    ts = sorted(terms(samples))
    for i, (a1, b1, who1) in enumerate(ts):
        for a2, b2, who2 in ts[i + 1:]:
            if a2 > b1:
                break
            assert who1 == who2, \
                "overlapping claims: %s [%.3f, %.3f] and %s [%.3f, %.3f]" % (
                    who1, a1, b1, who2, a2, b2)
    return ts


def check_agreement(rounds, bound, unknown=None, unknown_bound=None):
    """Live participants' names disagree for at most bound seconds.  A
    participant naming unknown (a MultiLock whose lock names itself,
    left by an earlier process of the same identity) names nobody: it is not
    counted against the others, but may say so for at most
    unknown_bound seconds in a row."""
    worst, since, start = 0.0, None, None
    unknown_since = {}
    for rnd in rounds:
        t = rnd[0][0] if rnd else None
        if t is None:
            continue
        names = set()
        for s in rnd:
            if unknown is None or s[5] != unknown:
                names.add(s[5])
                unknown_since.pop(s[2], None)
                continue
            t0 = unknown_since.setdefault(s[2], t)
            assert t - t0 <= unknown_bound, \
                "%s names %s for %.2fs > %.2fs" % (s[2], unknown, t - t0,
                                                   unknown_bound)
        if len(names) > 1:
            if since is None:
                since, start = t, rnd
            if t - since > worst:
                worst = t - since
                check_agreement.worst = (start, rnd)
            assert t - since <= bound, \
                "participants disagree on the holder for %.2fs > %.2fs: %s" % (
                    t - since, bound, [(s[2], s[5]) for s in rnd])
        else:
            since = None
    return worst


class Game:
    def __init__(self, el, oracle=None):
        self.parts = [el.leaderd("c-%d" % i) for i in (1, 2)] + \
                     [el.goelector("go-%d" % i) for i in (1, 2)]
        self.takeovers = []     # (from_kind, to_kind, mode, seconds)
        self.oracle = oracle

    def alive(self):
        return [p for p in self.parts if p.proc and p.proc.alive()]

    def leader(self):
        # Sequential polls are not simultaneous: the sampler's intervals
        # decide about overlaps; here two answers only mean "not settled".
        ls = [p for p in self.alive() if p.is_leader()]
        return ls[0] if len(ls) == 1 else None

    def wait_leader(self, timeout):
        return E.wait_for(self.leader, timeout, interval=0.02,
                          what="a leader")

    def start_all(self):
        started = []
        for p in self.parts:
            if p.proc is None or not p.proc.alive():
                started.append(p.start())
        for p in self.parts:
            p.wait_up()
        for p in started:
            self.follow(p)

    def follow(self, p):
        if self.oracle is not None:
            self.oracle.follow(p)
        return p

    def stop(self, p, mode):
        if mode == "expiry":
            p.proc.kill9()
        else:
            rc, _ = p.proc.term(timeout=10)
            assert rc == 0, "%s: exit status %s after SIGTERM" % (p.ident, rc)

    def takeover(self, old, mode, bound=None):
        """Stop the leader old by mode; wait for the next leader."""
        t0 = time.monotonic()
        self.stop(old, mode)
        new = self.wait_leader(KILL_BOUND + 5 if mode == "expiry"
                               else TERM_BOUND + 5)
        dt = time.monotonic() - t0
        self.takeovers.append((old.kind, new.kind, mode, dt))
        if bound is not None:
            assert dt <= bound, "%s %s -> %s took %.2fs > %.2fs" % (
                mode, old.ident, new.ident, dt, bound)
        return new


def test_interop_random_kills(election, cluster):
    seed = int(os.environ.get("E2E_SEED", str(int(time.time()))))
    rng = random.Random(seed)
    print("interop seed %d (E2E_SEED=%d to repeat)" % (seed, seed))
    el = election(prefix="interop")
    oracle = Oracle(cluster, match=lambda n: n == el.lease).start()
    g = Game(el, oracle)
    try:
        g.start_all()
        g.wait_leader(2.2 * RP + 10)
        # Phase 1: random kills and restarts.
        end = time.monotonic() + RANDOM_PHASE
        while time.monotonic() < end:
            time.sleep(rng.uniform(1.0, 4.0))
            alive = g.alive()
            dead = [p for p in g.parts if p not in alive]
            if dead and (rng.random() < 0.6 or len(alive) <= 2):
                p = rng.choice(dead)
                g.follow(p.start().wait_up())
                continue
            ldr = g.leader()
            victim = ldr if ldr and rng.random() < 0.7 else rng.choice(alive)
            mode = rng.choice(["release", "expiry"])
            if victim is ldr:
                g.takeover(victim, mode)
            else:
                g.stop(victim, mode)

        # Phase 2: make sure each direction happened both ways, with its bound.
        want = [("c", "go", "release"), ("go", "c", "release"),
                ("c", "go", "expiry"), ("go", "c", "expiry")]
        rng.shuffle(want)
        for frm, to, mode in want:
            if any(t[:3] == (frm, to, mode) for t in g.takeovers):
                continue
            g.start_all()
            ldr = g.wait_leader(KILL_BOUND + 5)
            if ldr.kind != frm:
                # Leave only kind frm running, so one of them takes over.
                for p in g.alive():
                    if p.kind != frm and p is not ldr:
                        g.stop(p, "release")
                ldr = g.takeover(ldr, "release")
                assert ldr.kind == frm
                g.start_all()
            # Now only the leader and kind `to` may compete.
            for p in g.alive():
                if p is not ldr and p.kind != to:
                    g.stop(p, "release")
            time.sleep(2 * RP)      # the followers have seen the leader
            bound = KILL_BOUND if mode == "expiry" else TERM_BOUND
            new = g.takeover(ldr, mode, bound=bound)
            assert new.kind == to, "%s -> %s, want %s" % (ldr.ident,
                                                          new.ident, to)
            if mode == "expiry":
                assert g.takeovers[-1][3] >= EXPIRY_MIN, \
                    "took over before the lease could expire"
        g.start_all()
        g.wait_leader(KILL_BOUND + 5)
        time.sleep(3 * RP)
    finally:
        oracle.stop()
    fig = oracle.check(RD, RP, follow=2.2 * RP + 1.5)
    print(H.summary(fig))
    print("worst lag behind the server's holder %.2fs" % fig["follow"])
    for t in g.takeovers:
        print("takeover %s -> %s after %s: %.2fs" % t)
    done = {t[:3] for t in g.takeovers}
    for combo in [("c", "go", "release"), ("go", "c", "release"),
                  ("c", "go", "expiry"), ("go", "c", "expiry")]:
        assert combo in done, "no takeover %s -> %s after %s" % combo
    holders = {t.holder for t in H.terms(oracle.hist.versions(el.lease))}
    assert {"c-1", "c-2"} & holders and {"go-1", "go-2"} & holders
    spec = el.get_lease()["spec"]
    assert E.MICROTIME.match(spec["renewTime"]), spec


def test_checkers_catch_overlap_and_disagreement():
    """The checks above can fail (no cluster needed)."""
    ok = [(0.0, 0.01, "a", 1, True, "a"), (1.0, 1.01, "a", 1, True, "a"),
          (1.1, 1.11, "a", 1, False, "a"), (1.2, 1.21, "b", 1, True, "b"),
          (2.0, 2.01, "b", 1, True, "b")]
    assert len(check_no_overlap(ok)) == 2
    bad = ok[:2] + [(0.5, 0.51, "b", 1, True, "b")]
    with pytest.raises(AssertionError, match="overlapping claims"):
        check_no_overlap(bad)
    # A restart (new generation) is a new term of the same participant.
    assert len(check_no_overlap(ok[:2] + [(0.5, 0.51, "a", 2, True, "a")])) == 2
    rounds = [[(t, t, "a", 1, False, "x"), (t, t, "b", 1, False,
                                            "y" if 1 <= t < 6 else "x")]
              for t in range(8)]
    with pytest.raises(AssertionError, match="disagree"):
        check_agreement(rounds, 3.0)
    assert check_agreement(rounds, 4.0) == 4
    # "unknown" names nobody, but only for unknown_bound in a row.
    rounds = [[(t, t, "a", 1, False, "x"), (t, t, "b", 1, False,
                                            "?" if 1 <= t < 6 else "x")]
              for t in range(8)]
    assert check_agreement(rounds, 1.0, unknown="?", unknown_bound=4.0) == 0
    with pytest.raises(AssertionError, match="names \\? for"):
        check_agreement(rounds, 1.0, unknown="?", unknown_bound=3.0)
    with pytest.raises(AssertionError, match="disagree"):
        check_agreement(rounds, 1.0)
