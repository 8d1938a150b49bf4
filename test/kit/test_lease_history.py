"""lease_history's checks on made-up histories: each passes a sound one
and fails the fault it is there for (no API server needed)."""

import time

import pytest

import lease_history as H

RD = 4.0
T0 = 1796000000.0       # a wall-clock second in 2026


def mt(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(t))) + \
        ".%06dZ" % round((t % 1) * 1e6)


def ver(rv, holder, acquire, renew, tr, uid="u1", kind="MODIFIED",
        handover=""):
    md = {"name": "l", "resourceVersion": str(rv), "uid": uid}
    if handover:
        md["annotations"] = {H.HANDOVER: handover}
    spec = {"holderIdentity": holder, "leaseDurationSeconds": 6,
            "leaseTransitions": tr}
    if acquire is not None:
        spec["acquireTime"] = mt(T0 + acquire)
    if renew is not None:
        spec["renewTime"] = mt(T0 + renew)
    return H.Version(kind, {"metadata": md, "spec": spec}, 0.0, 0.0)


class Hist:
    def __init__(self, vs):
        self.vs = vs

    def names(self):
        return ["l"]

    def versions(self, name):
        return list(self.vs)


class Stream:
    def __init__(self, ident, events, eof=None):
        self.ident = ident
        self.events = [(0, 0, b) for b in events]
        self.eof_wall = eof

    claims = H.LeaderStream.claims


def ev(lead, at, token="", renew=None):
    return {"is_leader": lead, "lock": "leases/ns/l",
            "changed_at": mt(T0 + at), "fencing_token": token,
            "renew_time": mt(T0 + renew) if renew is not None else None}


# a: acquires at 0, renews every second to 3; b takes over at 9 (a's
# last renew + 6); b releases at 12; a takes it again at 12.5.
GOOD = [ver(1, "a", 0, 0, 0, kind="ADDED"), ver(2, "a", 0, 1, 0),
        ver(3, "a", 0, 2, 0), ver(4, "a", 0, 3, 0),
        ver(5, "b", 9, 9, 1), ver(6, "b", 9, 10, 1),
        ver(7, "", 12, 12, 1), ver(8, "a", 12.5, 12.5, 2)]
TOK = ["%010d-u1" % i for i in range(3)]
STREAMS = [Stream("a", [ev(False, -1), ev(True, 0.001, TOK[0], 0),
                        ev(False, 7.0), ev(True, 12.501, TOK[2], 12.5)],
                  eof=T0 + 14),
           Stream("b", [ev(False, -1), ev(True, 9.001, TOK[1], 9),
                        ev(False, 12.0)])]


def test_a_sound_history_passes():
    fig = H.check(Hist(GOOD), STREAMS, RD)
    assert (fig["terms"], fig["takeovers"], fig["claims"]) == (3, 1, 3)
    assert fig["min_gap"] == pytest.approx(6.0)
    # a's first claim ended at 7.0 = its last renew + RD.
    assert fig["worst_end"] == pytest.approx(0.0, abs=1e-5)
    assert H.check_no_overlap([c for s in STREAMS for c in s.claims()]) == 0


def test_s1_takeover_before_the_deadline():
    bad = GOOD[:4] + [ver(5, "b", 6.5, 6.5, 1)]
    with pytest.raises(AssertionError, match="S1 violated.*3.500s"):
        H.check(Hist(bad), [], RD)
    # A per-holder horizon (client-go: RD + RP) is stricter.
    ok = GOOD[:4] + [ver(5, "b", 7.5, 7.5, 1)]
    H.check(Hist(ok), [], RD)
    with pytest.raises(AssertionError, match="S1 violated"):
        H.check(Hist(ok), [], RD, horizon={"a": RD + 1})


def test_a_release_or_a_handover_is_no_takeover():
    rel = GOOD[:4] + [ver(5, "", 3.1, 3.1, 0), ver(6, "b", 3.2, 3.2, 1)]
    assert H.check(Hist(rel), [], RD)["takeovers"] == 0
    ho = GOOD[:4] + [ver(5, "b", 3.1, 3.1, 1, handover="b"),
                     ver(6, "b", 3.1, 3.2, 1)]
    fig = H.check(Hist(ho), [], RD)
    assert (fig["terms"], fig["takeovers"]) == (2, 0)
    # The successor leads from its own renew, not from the handover.
    early = Stream("b", [ev(True, 3.15, TOK[1], 3.1)])
    with pytest.raises(AssertionError, match="no term of b began"):
        H.check(Hist(ho), [early], RD)


def test_token_back_or_still():
    back = GOOD[:6] + [ver(7, "b", 9, 11, 0)]
    with pytest.raises(AssertionError, match="leaseTransitions went back"):
        H.check(Hist(back), [], RD)
    still = GOOD[:4] + [ver(5, "b", 9, 9, 0)]
    with pytest.raises(AssertionError, match="without a greater"):
        H.check(Hist(still), [], RD)
    # A new uid (deleted, created again) starts over at 0.
    again = GOOD[:4] + [ver(5, "a", 0, 3, 0, kind="DELETED"),
                        ver(6, "b", 9, 9, 0, uid="u2", kind="ADDED")]
    H.check(Hist(again), [], RD)


def test_renew_time_not_unique():
    dup = GOOD[:5] + [ver(6, "b", 9, 9.0, 1), ver(7, "b", 9, 8.5, 1)]
    with pytest.raises(AssertionError, match="went back"):
        H.check(Hist(dup), [], RD)
    # a's restart takes its own lease over with a stamp a's term used.
    two = GOOD[:4] + [ver(5, "a", 3, 3, 1)]
    with pytest.raises(AssertionError, match="in two terms"):
        H.check_renew_times(H.terms(two))


def test_streams_outside_their_terms():
    # b says it leads before its takeover was written.
    s = Stream("b", [ev(True, 8.9, TOK[1], 9), ev(False, 12.0)])
    with pytest.raises(AssertionError, match="no term of b began"):
        H.check(Hist(GOOD), [s], RD)
    # a keeps saying it leads past its last renew + RD (+ slack).
    s = Stream("a", [ev(True, 0.001, TOK[0], 0), ev(False, 7.3)])
    with pytest.raises(AssertionError, match="ends 0.300s after"):
        H.check(Hist(GOOD), [s], RD)
    H.check(Hist(GOOD), [s], RD, slack=0.35)
    # A claim resting on a write that never landed (its renewTime is no
    # committed version's).
    s = Stream("b", [ev(True, 9.001, TOK[1], 9.0004), ev(False, 12.0)])
    with pytest.raises(AssertionError, match="no committed version"):
        H.check(Hist(GOOD), [s], RD)
    # The wrong token.
    s = Stream("b", [ev(True, 9.001, TOK[0], 9), ev(False, 12.0)])
    with pytest.raises(AssertionError, match="not its term"):
        H.check(Hist(GOOD), [s], RD)
    # Two claims at once.
    a = Stream("a", [ev(True, 0.001, TOK[0], 0), ev(False, 9.5)])
    b = Stream("b", [ev(True, 9.001, TOK[1], 9), ev(False, 12.0)])
    with pytest.raises(AssertionError, match="overlapping claims"):
        H.check_no_overlap(a.claims() + b.claims())


def test_microtime():
    assert H.microtime("2026-12-05T06:40:00.000001Z") - \
        H.microtime("2026-12-05T06:40:00Z") == pytest.approx(1e-6, abs=5e-7)
    assert H.microtime(None) is None


def test_follow_the_holder():
    vs = [ver(1, "a", 0, 0, 0, kind="ADDED"), ver(2, "b", 9, 9, 1)]
    for v, t in zip(vs, (0.01, 9.01)):
        v.recv_wall = T0 + t
    s = Stream("c", [dict(ev(False, -1), name=""), dict(ev(False, 0.02),
                                                        name="a"),
                     dict(ev(False, 9.5), name="b")], eof=T0 + 12)
    assert H.check_follow(Hist(vs), [s], 1.0) == pytest.approx(0.49,
                                                               abs=1e-3)
    with pytest.raises(AssertionError, match="did not follow"):
        H.check_follow(Hist(vs), [s], 0.4)


def test_a_controller_assignment_is_no_term():
    """Coordinated election: the controller names b (no acquireTime);
    b's own write begins its term, judged against a's last renew."""
    ok = GOOD[:4] + [ver(5, "", 3.5, 3.5, 0), ver(6, "b", None, 3.6, 0),
                     ver(7, "b", 3.7, 3.7, 1)]
    fig = H.check(Hist(ok), [], RD)
    assert (fig["terms"], fig["takeovers"]) == (2, 0)
    early = GOOD[:4] + [ver(5, "b", None, 3.6, 0), ver(6, "b", 3.7, 3.7, 1)]
    with pytest.raises(AssertionError, match="S1 violated.*0.700s"):
        H.check(Hist(early), [], RD)


# The coordinated election: a leads; the controller names b (no
# acquireTime, leaseTransitions kept); b, client-go's coordinated
# elector, renews that record as it is from 9.5; c is named at 20 and
# writes its own term at 20.5 (leaderd: acquireTime, transitions + 1).
COORD = [ver(1, "a", 0, 0, 0, kind="ADDED"), ver(2, "a", 0, 1, 0),
         ver(3, "b", None, 9, 0), ver(4, "b", None, 9.5, 0),
         ver(5, "b", None, 10.5, 0), ver(6, "c", None, 20, 0),
         ver(7, "c", 20.5, 20.5, 1), ver(8, "c", 20.5, 21.5, 1)]


def test_an_assigned_holder_renewing_without_acquire_time_is_a_term():
    ts = H.terms(COORD)
    assert [(t.holder, t.assigned) for t in ts] == \
        [("a", False), ("b", True), ("c", False)]
    assert ts[1].acquire == pytest.approx(T0 + 9.5)
    assert ts[1].end == "taken" and ts[2].prev is ts[1]
    fig = H.check(Hist(COORD), [], RD)
    assert (fig["terms"], fig["takeovers"]) == (3, 2)
    # c judged against b's last renew (10.5), not a's (1).
    assert fig["min_gap"] == pytest.approx(8.5)


def test_a_take_over_an_assigned_live_term_fails():
    bad = COORD[:5] + [ver(6, "c", 12, 12, 1)]
    with pytest.raises(AssertionError, match="c took l over 1.500s after "
                       "b's last renew"):
        H.check(Hist(bad), [], RD)


def test_a_stream_claim_ended_by_an_assigned_term():
    # a claims to 1 + RD; its term is taken by b's renew at 9.5 (the
    # version ending it has no acquireTime).
    s = Stream("a", [ev(False, -1), ev(True, 0.001, TOK[0], 0),
                     ev(False, 1 + RD)], eof=T0 + 30)
    fig = H.check(Hist(COORD), [s], RD)
    assert fig["claims"] == 1


# a's client-go elector writes a new acquireTime over its own live term.
REACQ = [ver(1, "a", 0, 0, 0, kind="ADDED"), ver(2, "a", 0, 1, 0),
         ver(3, "a", 1.5, 1.5, 1), ver(4, "a", 1.5, 2.5, 1)]


def test_one_process_re_acquiring_its_own_term_goes_on_in_it():
    h = Hist(REACQ)
    h.one_process = True
    fig = H.check(h, [], RD)
    assert (fig["terms"], fig["takeovers"]) == (1, 0)


def test_a_second_process_of_one_identity_is_judged_by_s1():
    with pytest.raises(AssertionError, match="a took l over 0.500s after "
                       "a's last renew"):
        H.check(Hist(REACQ), [], RD)
