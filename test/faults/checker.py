"""checker -- the leadership checker of the fault suite.

It extends the integration suite's LeadershipChecker (harness.py: one
thread samples every instance's /leader in turn, about every 20 ms, and
records (t0, t1, name, is_leader, answer) with time.monotonic(), the clock
leaderd and fakeapi share) with the invariants of the fault matrix
(ref/reliability-performance.md a.5):

S1  no two instances claim leadership at overlapping times
    (LeadershipChecker.assert_s1, on the sampled claim intervals), and,
    from the server side, no new term starts less than lease_duration
    after the previous live term was last written (assert_terms);
S2  a leader that cannot renew reports false before renew_deadline after
    the send time of its last good renew (assert_s2).  fakeapi stamps
    each write with t_recv, when its request arrived; the send time is
    earlier, so "first false <= t_recv(last ok) + RD + sampling slack" is
    a valid bound.  assert_backed checks the same everywhere: every
    sampled "true" lies within RD of the arrival of a write that
    instance made;
L1  a new leader appears within the row's bound (takeover).

Python 3.11 standard library only.
"""

import time

import harness  # test/kit, on the path (conftest.py, soak.py)

SAMPLE_SLACK = 0.25     # checker round (~20 ms + requests) plus scheduling
MS_SLACK = 0.005        # leaderd truncates its clock to whole milliseconds


class Checker(harness.LeadershipChecker):
    """harness.LeadershipChecker, plus: instances marked paused (SIGSTOPped
    by the test) are not sampled, so one frozen process does not slow the
    sampling of the others to its request timeout."""

    def __init__(self, instances, interval=0.02):
        super().__init__(instances, interval)
        self.paused = set()

    def pause(self, name):
        with self._lock:
            self.paused.add(name)

    def resume(self, name):
        with self._lock:
            self.paused.discard(name)

    def _targets(self):
        return [i for i in self.instances if i.name not in self.paused]

    def window(self, name=None, since=None, until=None):
        return [s for s in self.snapshot()
                if (name is None or s[2] == name)
                and (since is None or s[0] >= since)
                and (until is None or s[0] <= until)]

    def first_false(self, name, since):
        return next((s for s in self.window(name, since) if not s[3]),
                    None)

    def last_true(self, name, since=None):
        t = [s for s in self.window(name, since) if s[3]]
        return t[-1] if t else None

    def trues(self, name, since=None, until=None):
        return [s for s in self.window(name, since, until) if s[3]]

    def claim_starts(self, name, since=None):
        """t0 of each false->true edge of name (its claims' starts)."""
        out, prev = [], False
        for s in self.window(name):
            if s[3] and not prev and (since is None or s[0] >= since):
                out.append(s[0])
            prev = s[3]
        return out

    def takeover(self, since, exclude=()):
        """The first claim after since by an instance not in exclude."""
        return self.first_true(since=since, exclude=tuple(exclude))

    def leaderless_gaps(self, since, until):
        """Longest stretches in [since, until] with no sampled claim, as
        (start, end) pairs, longest first."""
        ts = sorted(s[0] for s in self.window(since=since, until=until)
                    if s[3])
        edges = [since] + ts + [until]
        gaps = [(a, b) for a, b in zip(edges, edges[1:])]
        return sorted(gaps, key=lambda g: g[0] - g[1])

    # -- S2 --------------------------------------------------------------

    def assert_s2(self, inst, t_fault, rd, slack=SAMPLE_SLACK):
        """inst can renew no more from t_fault on.  Returns (t_ok, first
        false sample time, how long it claimed after t_ok)."""
        ok = [w for w in good_writes(inst) if w["t_recv"] < t_fault]
        assert ok, "%s made no write before the fault" % inst.name
        t_ok = max(w["t_recv"] for w in ok)
        after = self.window(inst.name, since=t_fault)
        late = [s for s in after if s[3] and s[0] >= t_ok + rd + MS_SLACK]
        assert late == [], (
            "S2 violated: %s claimed leadership %.3fs after its last good "
            "renew arrived (renew_deadline %.1fs)"
            % (inst.name, late[0][0] - t_ok, rd))
        past = [s for s in after if s[0] >= t_ok + rd]
        assert past and past[0][0] <= t_ok + rd + slack, \
            "the checker lagged past the deadline; inconclusive"
        ff = next((s for s in after if not s[3]), None)
        assert ff is not None and ff[0] <= t_ok + rd + slack, (
            "S2 violated: %s still leader %.3fs after its last good renew"
            % (inst.name, (ff[0] if ff else after[-1][0]) - t_ok))
        lt = self.last_true(inst.name, since=t_fault)
        return t_ok, ff[0], (lt[1] - t_ok) if lt else 0.0

    def assert_backed(self, inst, rd, since=None):
        """Every sampled claim of inst lies within rd of the arrival of a
        write of inst's that names it (S2 over the whole run)."""
        ws = sorted(good_writes(inst), key=lambda w: w["t_recv"])
        bad = []
        for s in self.trues(inst.name, since=since):
            if not any(w["t_recv"] > s[0] - rd - MS_SLACK and
                       w["t"] <= s[1] for w in ws):
                bad.append(s)
        assert bad == [], (
            "S2 violated: %d claims of %s not backed by a write received "
            "within %.1fs before (first at t=%.3f; last writes received at "
            "%s)" % (len(bad), inst.name, rd, bad[0][0],
                     ["%.3f" % w["t_recv"] for w in ws
                      if w["t_recv"] < bad[0][0]][-3:]))


def good_writes(inst):
    """inst's successful writes that name it as holder (no releases)."""
    return [w for w in inst.writes()
            if w["spec"].get("holderIdentity") == inst.identity]


def terms(api, ns, lock):
    """The lease's history split into terms: a list of dicts with holder,
    acquire, first (first write), last (last write), admin, and the write
    that ended it ("released", "deleted" or None)."""
    out = []
    for w in api.history(ns=ns, name=lock):
        if w["method"] == "DELETE":
            if out:
                out[-1]["end"] = "deleted"
            out.append(None)
            continue
        spec = w["spec"]
        holder = spec.get("holderIdentity") or ""
        key = (holder, spec.get("acquireTime"))
        cur = out[-1] if out else None
        if holder == "":
            if cur:
                cur["end"] = "released"
            out.append(None)
            continue
        if cur and (cur["holder"], cur["acquire"]) == key:
            cur["last"] = w
            continue
        out.append({"holder": holder, "acquire": spec.get("acquireTime"),
                    "first": w, "last": w, "admin": w["admin"],
                    "token": w["token"], "end": None,
                    "after": cur})
    return [t for t in out if t is not None]


def assert_terms(api, ns, lock, ld, allow_admin=True):
    """Server-side S1: a new term taken over a live one (not released,
    not deleted) starts no sooner than ld after that term's last write.
    Admin writes (the test acting as another client) are exempt when
    allow_admin.  Returns the list of (previous holder, new holder, gap)."""
    out, bad = [], []
    for t in terms(api, ns, lock):
        prev = t["after"]
        if prev is None or prev["end"] is not None:
            continue
        gap = t["first"]["t_recv"] - prev["last"]["t"]
        out.append((prev["holder"], t["holder"], gap))
        if allow_admin and (t["admin"] or prev["admin"]):
            continue
        if gap < ld - MS_SLACK:
            bad.append((prev["holder"], t["holder"], gap))
    assert bad == [], ("S1 violated (server side): a live term was taken "
                       "over too soon (holder, new holder, seconds after "
                       "its last write): %s" % bad)
    return out
