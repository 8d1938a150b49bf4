"""The application probe (candidacy.probe) against a hostile application:
a target that accepts and never answers, or whose accept queue is full
so that a connect never completes (F36); one that floods bytes: an
endless body, endless headers, endless bytes that are not HTTP (F37);
one that answers at exactly the timeout, and just within it (F38); an
application that dies (connection refused) and comes back, flapping
(F39).

The probe runs on leaderd's event loop, beside the election's timers
and requests (lib/actions/appprobe.c, lib/api/httpget.c).  In every row
the election keeps its timing: the leader's renews, read from the test
API server's request log (PUT arrival times for its token), come every
retry_period, never later than RP + 0.3 s (F24's bound), whatever the
probe meets; the failures are counted as failures in
leaderd_app_probe_total, each probe exactly once.

In F36 and F37 the leader's failure_threshold is 1000, so that it stays
a candidate while its probes fail and its renews can be watched for the
whole fault; the probe's verdict with the default threshold is the
integration suite's (test/integration/test_candidacy.py).  A target is
healthy when leaderd starts (an instance is no candidate before its
first good probe) and turns hostile once it leads.

Timings: lease_duration 3s, renew_deadline 2s, retry_period 500ms,
request_timeout 1s (faultlib.py)."""

import os
import re
import threading
import time

import pytest

from faultlib import (LD, POLL, RP, START, terms_ok, wait_until)
from fakeapp import FakeApp

RENEW_GAP_MAX = RP + 0.3        # as F24 (test_localapi.py)
WINDOW = 5.0                    # seconds of a hostile target
PERIOD, TIMEOUT = 0.25, 0.2     # F36, F37: a probe every 250 ms


def _probed(cluster, name, url, period, timeout, failures=3,
            cooldown=None):
    inst = cluster.new(name)
    text = ("candidacy:\n  probe:\n    url: %s\n    period: %dms\n"
            "    timeout: %dms\n    failure_threshold: %d\n" % (
                url, round(period * 1000), round(timeout * 1000), failures))
    if cooldown is not None:
        text += "  cooldown: %dms\n" % round(cooldown * 1000)
    with open(inst.config_path, "a") as f:
        f.write(text)
    return inst


def _lead_and_follower(cluster, url, period=PERIOD, timeout=TIMEOUT,
                       failures=1000):
    """lead, probing url, leads; f0 (no probe) follows it; a checker."""
    lead = _probed(cluster, "lead", url, period, timeout, failures).start()
    wait_until(lead.is_leader, POLL + START + 2.0, what="lead to lead")
    f0 = cluster.start("f0")
    wait_until(lambda: (f0.leader() or {}).get("name") == "lead",
               POLL + START, what="f0 to follow lead")
    return lead, f0, cluster.checker([lead, f0])


def _metrics(inst):
    """The probe's counters: success, failure, duration sum and count."""
    st, _, body = inst.request("/metrics", timeout=2.0)
    assert st == 200
    out = {}
    # Every series carries name="ELECTION" (operations.md).
    for key, pat in (("success", r'leaderd_app_probe_total\{result="success"'
                      r',name="[^"]*"\} (\S+)'),
                     ("failure", r'leaderd_app_probe_total\{result="failure"'
                      r',name="[^"]*"\} (\S+)'),
                     ("sum", r'leaderd_app_probe_duration_seconds_sum'
                      r'\{name="[^"]*"\} (\S+)'),
                     ("count", r'leaderd_app_probe_duration_seconds_count'
                      r'\{name="[^"]*"\} (\S+)'),
                     ("candidate", r'leaderd_candidate\{name="[^"]*"\} '
                      r'(\S+)')):
        m = re.search("^" + pat, body.decode(), re.M)
        assert m, "no %s in /metrics" % key
        out[key] = float(m.group(1))
    return out


def _delta(m0, m1):
    d = {k: m1[k] - m0[k] for k in ("success", "failure", "sum", "count")}
    d["mean"] = d["sum"] / d["count"] if d["count"] else 0.0
    return d


def _cpu_s(inst):
    with open("/proc/%d/stat" % inst.pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _renews(api, inst, t0, t1):
    """Arrival times of inst's Lease writes (the create, takeovers,
    renews) in [t0 - RP, t1]."""
    return [r["t_recv"] for r in api.requests(token=inst.token)
            if r["method"] in ("PUT", "POST") and "/leases" in r["path"]
            and t0 - RP <= r["t_recv"] <= t1]


def _renew_gaps_ok(api, inst, t0, t1, what, tail=True):
    """inst's renews from t0 to t1 (and, with tail, the first after t1)
    came every RP, none later than RENEW_GAP_MAX after the one before.
    Returns the longest gap and the number of gaps."""
    if tail:
        wait_until(lambda: [t for t in _renews(api, inst, t1, t1 + 10.0)
                            if t > t1], RENEW_GAP_MAX + 1.0,
                   what="%s: a renew after the fault" % what)
        ts = _renews(api, inst, t0, t1 + 10.0)
        ts = [t for t in ts if t <= t1] + [t for t in ts if t > t1][:1]
    else:
        ts = _renews(api, inst, t0, t1)
    gaps = [b - a for a, b in zip(ts, ts[1:])]
    assert len(ts) >= (t1 - t0) / RP - 1, \
        "%s: %d renews in %.1fs" % (what, len(ts), t1 - t0)
    assert max(gaps) <= RENEW_GAP_MAX, (
        "%s: a renew %.3fs after the one before (> %.2fs); gaps %s" % (
            what, max(gaps), RENEW_GAP_MAX,
            ["%.3f" % g for g in gaps]))
    return max(gaps), len(gaps)


def _kept(cluster, lead, chk, t0):
    assert chk.takeover(t0, ["lead"]) is None, "another instance claimed"
    assert cluster.lease()["spec"]["holderIdentity"] == "lead"
    assert "stopped leading" not in lead.log()
    chk.assert_s1()
    terms_ok(cluster)


def _hostile(cluster, api, measure, row, app, mode, what, counted,
             window=WINDOW, url=None, fill=False):
    """lead probes app; app turns to mode for window seconds.  Bound:
    renews every RP (gaps <= RP + 0.3 s), the lease kept, no claim by
    f0; every probe counted, as `counted` (success or failure).  Returns
    the probe counters' delta."""
    lead, f0, chk = _lead_and_follower(cluster, url or app.url())
    m0 = _metrics(lead)
    cpu0 = _cpu_s(lead)
    t0 = time.monotonic()
    app.mode = mode
    filler = app.fill() if fill else None
    try:
        time.sleep(window)
        t1 = time.monotonic()
        m1 = _metrics(lead)
        cpu1 = _cpu_s(lead)
    finally:
        if filler is not None:
            filler.close()
        app.mode = "ok"
    d = _delta(m0, m1)
    gap, n = _renew_gaps_ok(api, lead, t0, t1, what)
    _kept(cluster, lead, chk, t0)
    probes = d["success"] + d["failure"]
    # One probe every PERIOD, each counted once, as `counted`.
    assert probes >= window / PERIOD - 2, "%s: %d probes in %.1fs" % (
        what, probes, window)
    assert d[counted] >= probes - 1, (
        "%s: %d successes, %d failures; expected %ss" % (
            what, d["success"], d["failure"], counted))
    assert _metrics(lead)["candidate"] == 1.0
    measure(row, "%s: longest renew gap (%d renews)" % (what, n), gap,
            bound=RENEW_GAP_MAX)
    measure(row, "%s: probes counted %s" % (what, counted), d[counted],
            unit="")
    measure(row, "%s: probes counted otherwise" % what,
            probes - d[counted], unit="", bound=1)
    measure(row, "%s: mean probe duration" % what, d["mean"])
    measure(row, "%s: leaderd CPU over %.0f s" % (what, window),
            cpu1 - cpu0)
    if mode != "full":
        measure(row, "%s: connections the app accepted" % what,
                app.count(since=t0, until=t1), unit="")
    return d, lead


def test_f36_target_accepts_and_never_answers(cluster, api, measure):
    """F36a: the probe's target accepts the connection, reads the request
    and never answers.  Bound: renews keep their timing, the lease is
    kept; every probe ends at its timeout, as a failure ("timed out"),
    and leaderd closes its connection (none left open on the app's
    side)."""
    app = FakeApp()
    try:
        d, lead = _hostile(cluster, api, measure, "F36", app, "silent",
                           "accepts, never answers", "failure")
        assert TIMEOUT - 0.01 <= d["mean"] <= TIMEOUT + 0.1, d
        assert lead.log_count("probe failed: timed out after 200 ms") >= 1
        time.sleep(TIMEOUT + 0.1)
        with app._lock:
            still = len(app._conns)
        assert still <= 1, "%d probe connections left open" % still
    finally:
        app.close()


def test_f36_tcp_target_never_completes_the_connect(cluster, api, measure):
    """F36b: a tcp:// probe whose target's accept queue is full, so the
    kernel drops the SYNs and the connect never completes.  Bound: as
    F36a; every probe ends at its timeout, as a failure."""
    app = FakeApp()
    try:
        d, lead = _hostile(cluster, api, measure, "F36", app, "full",
                           "tcp: accept queue full", "failure",
                           url=app.tcp(), fill=True)
        assert TIMEOUT - 0.01 <= d["mean"] <= TIMEOUT + 0.1, d
        assert lead.log_count("probe failed: timed out after 200 ms") >= 1
    finally:
        app.close()


@pytest.mark.parametrize("mode,counted,why", [
    ("flood_body", "success", None),
    ("flood_head", "failure", "response headers over 64 KiB"),
    ("flood_raw", "failure", None),
])
def test_f37_target_floods_bytes(cluster, api, measure, mode, counted, why):
    """F37: the probe's target floods bytes as fast as loopback takes
    them: a 200 with an endless body, a 200 with endless header lines,
    endless bytes that are not HTTP.  Bound: renews keep their timing,
    the lease is kept; each probe ends long before its timeout, cut by
    leaderd's caps (10 KiB of body, as the kubelet reads: the status
    decides, so the endless 200 is a success; 64 KiB of headers: a
    failure) or by curl refusing what is not HTTP (a failure); each is
    counted once, as such."""
    app = FakeApp()
    try:
        d, lead = _hostile(cluster, api, measure, "F37", app, mode,
                           mode.replace("_", " "), counted)
        assert d["mean"] < TIMEOUT / 2, (
            "%s: probes lasted %.3fs on average: ended by the timeout, "
            "not the cap" % (mode, d["mean"]))
        if why:
            assert lead.log_count("probe failed: " + why) >= 1, why
    finally:
        app.close()


def test_f38_target_answers_at_the_timeout(cluster, api, measure):
    """F38: the leader's application answers its probe healthy but slow:
    100 ms within the timeout, then at exactly the timeout (400 ms from
    the accept, period 500 ms, the default failure_threshold 3).  Bound:
    within the timeout the leader keeps leading, every probe a success;
    at the timeout each probe is counted once, as a success or as a
    failure ("timed out"), never both, never lost; the renews keep their
    timing throughout, and if the leader steps down, that is the gate
    (three timed-out probes in a row), not a late renew: f0 takes over
    with no two leaders."""
    period, timeout = 0.5, 0.4
    app = FakeApp(mode="slow", delay=timeout - 0.1)
    try:
        lead, f0, chk = _lead_and_follower(cluster, app.url(), period,
                                           timeout, failures=3)
        # Within the timeout: healthy, and leading.
        m0 = _metrics(lead)
        t0 = time.monotonic()
        time.sleep(WINDOW)
        t1 = time.monotonic()
        d = _delta(m0, _metrics(lead))
        gap, _ = _renew_gaps_ok(api, lead, t0, t1, "within the timeout")
        _kept(cluster, lead, chk, t0)
        assert d["failure"] == 0 and d["success"] >= WINDOW / period - 2, d
        assert timeout - 0.1 - 0.01 <= d["mean"] < timeout, d
        measure("F38", "100 ms within the timeout: longest renew gap",
                gap, bound=RENEW_GAP_MAX)
        measure("F38", "100 ms within the timeout: successes",
                d["success"], unit="")
        measure("F38", "100 ms within the timeout: failures",
                d["failure"], unit="", bound=0)
        measure("F38", "100 ms within the timeout: mean probe duration",
                d["mean"])
        # At exactly the timeout.
        m0 = _metrics(lead)
        app.delay = timeout
        t0 = time.monotonic()
        time.sleep(WINDOW)
        t1 = time.monotonic()
        app.mode = "ok"
        time.sleep(period + 0.1)
        d = _delta(m0, _metrics(lead))
        accepted = app.count(since=t0 - 0.05)
        probes = d["success"] + d["failure"]
        assert abs(probes - accepted) <= 2, (probes, accepted)
        kept = chk.takeover(t0, ["lead"]) is None
        if kept:
            _renew_gaps_ok(api, lead, t0, t1, "at the timeout")
        else:
            # Stepped down for ill health: its renews up to the release
            # kept their timing; the release came from the gate.
            rel = [w for w in lead.writes() if w["t_recv"] >= t0 and
                   w["spec"]["holderIdentity"] == ""]
            assert rel, "lead lost the lease without releasing it"
            _renew_gaps_ok(api, lead, t0, rel[0]["t_recv"],
                           "at the timeout, until the release", tail=False)
            assert lead.log_count("not a candidate: app unhealthy") >= 1
            assert d["failure"] >= 3, d
            wait_until(f0.is_leader, POLL + 1.0, what="f0 to lead")
            measure("F38", "at the timeout: released after",
                    rel[0]["t"] - t0)
        chk.assert_s1()
        terms_ok(cluster)
        measure("F38", "at the timeout: successes", d["success"], unit="")
        measure("F38", "at the timeout: failures", d["failure"], unit="")
        measure("F38", "at the timeout: probes not counted",
                abs(probes - accepted), unit="", bound=2)
        measure("F38", "at the timeout: the leader kept the lease",
                1 if kept else 0, unit="")
    finally:
        app.close()


# -- F39: an application that dies and comes back ------------------------

COOLDOWN = LD                   # candidacy.cooldown's default
FLAP_UP, FLAP_DOWN = 0.7, 0.5   # each app: up 0.7 s, refused 0.5 s
FLAPS = 12.0                    # seconds of flapping, 4 cooldowns


def _flap(app, offset, t_end, deaths):
    """app up FLAP_UP, down FLAP_DOWN, in turn, from offset to t_end;
    each death appended to deaths."""
    time.sleep(offset)
    while time.monotonic() < t_end:
        app.die()
        deaths.append(time.monotonic())
        time.sleep(FLAP_DOWN)
        app.up()
        time.sleep(FLAP_UP)


def _moves(history, idents):
    """From the server's write history: takes (t_recv, who), releases
    (t, who) and terms' write times, in order."""
    takes, releases, holder = [], [], ""
    for w in sorted(history, key=lambda w: w["t"]):
        h = w["spec"].get("holderIdentity") or ""
        if h and h != holder:
            takes.append((w["t_recv"], h))
        if not h and holder and idents.get(w["token"]) == holder:
            releases.append((w["t"], holder))
        holder = h
    return takes, releases


def test_f39_flapping_app_moves_leadership_once_per_cooldown(
        cluster, api, measure):
    """F39: two instances, each beside an application that dies
    (connection refused: its listener closed) for 0.5 s and comes back
    for 0.7 s, in turn, out of phase, for 12 s (4 cooldowns); probes
    every 200 ms, failure_threshold 1, candidacy.cooldown = LD = 3 s.
    Bound: an instance that released for ill health takes the lease
    again no sooner than the cooldown after its release (so leadership
    moves at most once per cooldown per application: at most twice in
    any cooldown here); the failures are counted ("connection
    refused"); renews keep their timing within each term; no two
    leaders."""
    apps = [FakeApp(), FakeApp()]
    try:
        ins = [_probed(cluster, "fl-%d" % i, apps[i].url(), 0.2, 0.1,
                       failures=1, cooldown=COOLDOWN) for i in range(2)]
        ins[0].start()
        wait_until(ins[0].is_leader, POLL + START + 2.0,
                   what="fl-0 to lead")
        ins[1].start()
        wait_until(lambda: (ins[1].leader() or {}).get("name") == "fl-0",
                   POLL + START, what="fl-1 to follow")
        chk = cluster.checker(ins)
        t0 = time.monotonic()
        t_end = t0 + FLAPS
        deaths = []
        ts = [threading.Thread(target=_flap, args=(a, k * 0.6, t_end,
                                                   deaths),
                               daemon=True) for k, a in enumerate(apps)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(FLAPS + 5)
        t1 = time.monotonic()
        # Both up now: someone leads once the cooldowns have run out.
        wait_until(lambda: any(i.is_leader() for i in ins),
                   COOLDOWN + POLL + 1.0, what="a leader after the flapping")
        chk.assert_s1()
        terms_ok(cluster)
        idents = {i.token: i.identity for i in ins}
        takes, releases = _moves(api.history(ns="default",
                                             name=cluster.lock), idents)
        takes = [x for x in takes if x[0] >= t0]
        releases = [x for x in releases if x[0] >= t0]
        # Each release, and the same instance's next take.
        retakes = []
        for t_rel, who in releases:
            nxt = [t for t, w in takes if w == who and t > t_rel]
            if nxt:
                retakes.append(nxt[0] - t_rel)
        assert len(retakes) >= 2, (
            "the flapping made no instance take the lease back (takes %s, "
            "releases %s): the schedule tests nothing" % (takes, releases))
        assert min(retakes) >= COOLDOWN - 0.01, (
            "an instance took the lease %.3fs after its release for ill "
            "health (< cooldown %.1fs)" % (min(retakes), COOLDOWN))
        most = max(sum(1 for u, _ in takes if t <= u < t + COOLDOWN)
                   for t, _ in takes)
        assert most <= len(ins), "%d moves within one cooldown" % most
        for i in ins:
            m = _metrics(i)
            assert m["failure"] >= 2, (i.name, m)
            assert i.log_count("probe failed: connection refused") >= 1
        # Renews within each term: every RP.
        worst = 0.0
        for i in ins:
            ws = [w for w in i.writes() if t0 <= w["t_recv"] <= t1]
            for a, b in zip(ws, ws[1:]):
                if a["spec"]["holderIdentity"] == i.identity:
                    worst = max(worst, b["t_recv"] - a["t_recv"])
        assert worst <= RENEW_GAP_MAX, worst
        measure("F39", "app deaths over %.0f s (both apps)" % FLAPS,
                len(deaths), unit="")
        measure("F39", "leadership moves over %.0f s" % FLAPS, len(takes),
                unit="")
        measure("F39", "most moves within one cooldown", most, unit="",
                bound=len(ins))
        measure("F39", "shortest release -> retake by the same instance",
                min(retakes), bound=COOLDOWN, cmp=">=")
        measure("F39", "longest renew gap within a term", worst,
                bound=RENEW_GAP_MAX)
    finally:
        for a in apps:
            a.close()
