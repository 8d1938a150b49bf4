"""leaderd's watch on the Lease (issue 8), against fakeapi's Lease watch.

The daemon's behaviour under test: with `watch: true` (the default) every
instance keeps one watch on its Lease (GET .../leases?watch=1&
fieldSelector=metadata.name=LOCK&resourceVersion=RV&allowWatchBookmarks=
true&timeoutSeconds=<kubernetes.watch_timeout>); a release or an expiry
seen through it makes a follower try at once (0-20 ms spread), while the
watch is healthy a follower GETs only every 60 s; a stream silent for
watch_timeout + request_timeout is dead; 410 -> GET, then watch from the
new resourceVersion; 403 -> one "watch forbidden" warning and polling at
retry_period; `watch: false` -> no watch requests at all.

The retry periods here are long (5-10 s) so that "seen through the watch"
(milliseconds) and "seen by a poll" (retry_period x [1, 2.2)) cannot be
mistaken for each other.  Every test also checks S1 (never two leaders)
with the leadership checker."""

import re
import time
import urllib.parse

from harness import REQUEST_TIMEOUT as RT, fmt_duration, wait_until

NS = "default"
# Slow polling: a takeover within WATCH_BOUND can only come from a watch.
SLOW = dict(lease_duration=30.0, renew_deadline=20.0, retry_period=10.0)
WATCH_BOUND = 2.0       # release seen -> another instance leads (/leader)
RECONNECT_BOUND = 5.0   # a broken watch -> the next watch request
START_BOUND = 5.0       # start -> leader elected / follower watching


def configure(inst, watch=None, watch_timeout=None):
    """Add the watch settings to an instance's config file (before
    start): top-level `watch:` and `kubernetes.watch_timeout`."""
    with open(inst.config_path) as f:
        lines = f.read().splitlines()
    out = []
    for ln in lines:
        out.append(ln)
        if ln.startswith("  request_timeout:") and watch_timeout is not None:
            out.append("  watch_timeout: %s" % fmt_duration(watch_timeout))
    if watch is not None:
        out.append("watch: %s" % ("true" if watch else "false"))
    with open(inst.config_path, "w") as f:
        f.write("\n".join(out) + "\n")
    return inst


def start(cluster, name, watch=None, watch_timeout=None, **kw):
    inst = cluster.new(name, **kw)
    configure(inst, watch, watch_timeout)
    return inst.start()


def qs(entry):
    """The query parameters of a logged request, one value each."""
    return {k: v[-1] for k, v in urllib.parse.parse_qs(
        entry["query"], keep_blank_values=True).items()}


def watching(api, inst):
    """The instance's open watch requests on its lock."""
    return [e for e in api.watches(token=inst.token)
            if qs(e).get("fieldSelector") == "metadata.name=" + inst.lock]


def wait_watching(api, inst, timeout=START_BOUND, since=None):
    return wait_until(lambda: [e for e in watching(api, inst)
                               if since is None or e["t_recv"] >= since],
                      timeout, what="%s to watch its lease" % inst.name)


def api_requests(api, inst, since, until=None):
    return [e for e in api.requests(token=inst.token, since=since)
            if until is None or e["t_recv"] < until]


def leader_and_followers(cluster, api, n, **kw):
    """n instances (the first one leads), every one watching."""
    opts = dict(SLOW)
    opts.update(kw)
    first = start(cluster, "ld-0", **opts)
    wait_until(first.is_leader, START_BOUND, what="ld-0 to lead")
    rest = [start(cluster, "ld-%d" % i, **opts) for i in range(1, n)]
    ins = [first] + rest
    chk = cluster.checker(ins)
    for f in rest:
        wait_until(lambda: (v := f.leader()) and v["name"] == first.identity,
                   START_BOUND, what="%s to follow" % f.name)
    for i in ins:
        wait_watching(api, i)
    return first, rest, chk


def test_watch_request_is_well_formed(cluster, api):
    """The watch names the lock by field selector, asks for bookmarks,
    sends kubernetes.watch_timeout as timeoutSeconds and starts from a
    resourceVersion the daemon has seen (the first instance may have
    started before the Lease existed: "" or "0" there)."""
    lead, (f,), chk = leader_and_followers(cluster, api, 2)
    for inst in (lead, f):
        (e,) = watching(api, inst)
        q = qs(e)
        assert e["path"] == \
            "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NS
        assert q.get("watch") in ("1", "true"), q
        assert q.get("allowWatchBookmarks") == "true", q
        assert q.get("timeoutSeconds") == "300", q      # the 5m default
        hist = [h["rv"] for h in api.history(ns=NS, name=cluster.lock)]
        if inst is lead and q.get("resourceVersion") in ("", "0"):
            continue    # it may have started watching before the create
        assert re.fullmatch(r"[1-9]\d*", q.get("resourceVersion", "")), q
        assert q["resourceVersion"] in hist, (q, hist)
    chk.assert_s1()


def test_sigterm_handover_through_the_watch(cluster, api):
    """(a) A release is seen at once: another instance leads within
    WATCH_BOUND, while a poll could not come before retry_period (10 s).
    Both followers try within milliseconds; the 409 loser keeps
    watching."""
    old, rest, chk = leader_and_followers(cluster, api, 3)
    time.sleep(1.0)
    t_term = time.monotonic()
    old.terminate()
    s = wait_until(lambda: chk.first_true(since=t_term, exclude=(old.name,)),
                   SLOW["retry_period"] * 2.2 + 2.0, what="a new leader")
    took = s[1] - t_term
    print("SIGTERM handover seen on /leader after %.3f s" % took)
    assert took <= WATCH_BOUND, \
        "handover took %.2fs: not through the watch" % took
    assert old.wait(RT + 2.0) == 0
    rel = [w for w in old.writes() if w["t_recv"] >= t_term]
    assert len(rel) == 1 and rel[0]["spec"]["holderIdentity"] == ""
    t_rel = rel[0]["t"]
    new = cluster.wait_single_leader(2.0, rest)
    loser = [i for i in rest if i is not new][0]
    # The winner's PUT came right after the release (no poll in between).
    puts = [e for e in api.requests(token=new.token, method="PUT",
                                    since=t_term)]
    assert puts and puts[0]["t_recv"] - t_rel <= 0.5, \
        (puts[:1], t_rel)
    gets = [e for e in api.requests(token=new.token, method="GET",
                                    since=t_term) if e["t_recv"] < t_rel]
    print("winner: first PUT %.1f ms after the release was applied"
          % ((puts[0]["t_recv"] - t_rel) * 1000))
    assert gets == [], "the winner polled before taking over"
    # The loser tried once at most and is still watching, not polling.
    lp = api.requests(token=loser.token, method="PUT", since=t_term)
    assert len(lp) <= 1, lp
    time.sleep(1.0)
    assert watching(api, loser), "the 409 loser stopped watching"
    v = loser.leader()
    assert v["name"] == new.identity and v["is_leader"] is False
    chk.assert_s1()


def test_follower_requests_while_watch_is_healthy(cluster, api):
    """(b) A follower with a healthy watch makes almost no requests: over
    20 s at retry_period 2 s polling would be 9-10 GETs; with the watch,
    one open WATCH and at most one safety-net GET (every 60 s)."""
    lead, (f,), chk = leader_and_followers(
        cluster, api, 2, lease_duration=10.0, renew_deadline=7.0,
        retry_period=2.0)
    t0 = time.monotonic()
    time.sleep(20.0)
    reqs = api_requests(api, f, since=t0)
    gets = [e for e in reqs if e["method"] == "GET"]
    watches = [e for e in reqs if e["method"] == "WATCH"]
    print("follower requests in 20 s: %d GET, %d WATCH, %d other"
          % (len(gets), len(watches), len(reqs) - len(gets) - len(watches)))
    assert len(reqs) - len(gets) - len(watches) == 0, reqs
    assert len(gets) <= 1, gets
    assert len(watches) <= 1, watches
    # The watch opened before t0 is still the one in use.
    assert watching(api, f), "no open watch"
    # The leader renewed meanwhile, so there were events to follow.
    assert len([w for w in lead.writes() if w["t"] >= t0]) >= 5
    v = f.leader()
    assert v["name"] == lead.identity and v["is_leader"] is False
    # The leader keeps a watch too.
    assert watching(api, lead), "the leader does not watch"
    chk.assert_s1()


def test_kill9_takeover_at_expiry_seen_through_the_watch(cluster, api):
    """(c) kill -9 of the leader: the follower saw every renew through the
    watch, so it takes over at about lease_duration after the last renew
    (a poll at 5-11 s would see the last renew late and take over up to
    that much later); never before the lease expired (S1)."""
    LD = 10.0
    old, (f,), chk = leader_and_followers(
        cluster, api, 2, lease_duration=LD, renew_deadline=7.0,
        retry_period=5.0)
    time.sleep(6.0)     # at least one renew seen through the watch
    t_kill = time.monotonic()
    old.kill9()
    t_last = max(w["t"] for w in old.writes())
    s = wait_until(lambda: chk.first_true(name=f.name, since=t_kill),
                   LD + 2.2 * 5.0 + 3.0, what="the follower to take over")
    after = s[1] - t_last
    print("kill -9 takeover %.3f s after the last renew (lease %.0f s)"
          % (after, LD))
    assert s[1] >= t_last + LD, \
        "took over %.2fs after the last renew: before expiry" % after
    assert s[1] <= t_last + LD + 1.0, \
        "took over %.2fs after the last renew: the watch was not used" % after
    first_put = [e for e in api.requests(token=f.token, method="PUT",
                                         since=t_kill)][0]
    assert first_put["t_recv"] >= t_last + LD
    chk.assert_s1()


def test_leader_sees_a_foreign_write_at_once(cluster, api):
    """The leader watches too: an admin write naming another holder makes
    it stop claiming at once, not at its next renew (10 s away)."""
    lead, (f,), chk = leader_and_followers(cluster, api, 2)
    time.sleep(0.5)
    t_w = time.monotonic()
    api.modify_lease(NS, cluster.lock, lambda o: o["spec"].update(
        holderIdentity="intruder"))
    wait_until(lambda: (v := lead.leader()) and v["is_leader"] is False,
               WATCH_BOUND, what="the leader to see the foreign write")
    t_down = time.monotonic()
    print("leader stopped claiming %.3f s after the foreign write"
          % (t_down - t_w))
    wait_until(lambda: (v := f.leader()) and v["name"] == "intruder",
               WATCH_BOUND, what="the follower to see the foreign write")
    time.sleep(1.0)
    # Nobody claims afterwards: the intruder's lease is live.
    assert [x for x in chk.snapshot() if x[0] >= t_down and x[3]] == []
    assert lead.writes()[-1]["t"] < t_w, "the leader wrote over the intruder"
    chk.assert_s1()


def test_f22_stream_cut_reconnects_and_still_hands_over(cluster, api):
    """(d) F22 stream cut: the follower's stream is closed without the
    terminating chunk; a new watch follows, and the next release is still
    seen at once.  Cut on every attempt for a while: the reconnects back
    off (no tight loop)."""
    old, (f,), chk = leader_and_followers(cluster, api, 2)
    t_cut = time.monotonic()
    assert api.watch_cut_open(token=f.token) == 1
    wait_watching(api, f, RECONNECT_BOUND, since=t_cut)
    # Every new watch is cut at once for 6 s.
    flt = api.watch_fault("cut", token=f.token, after=0)
    t_f = time.monotonic()
    assert api.watch_cut_open(token=f.token) == 1
    time.sleep(6.0)
    api.clear_fault(flt)
    n = len([e for e in api.requests(token=f.token, method="WATCH",
                                     since=t_f)])
    print("watch requests in 6 s of cut streams: %d" % n)
    assert 2 <= n <= 15, "%d watch requests in 6 s of cuts" % n
    # The backoff may have grown; it stays below about retry_period.
    wait_until(lambda: [e for e in watching(api, f) if e["fault"] is None],
               2.2 * SLOW["retry_period"] + 2.0, what="a healthy watch again")
    time.sleep(0.5)
    t_term = time.monotonic()
    old.terminate()
    s = wait_until(lambda: chk.first_true(name=f.name, since=t_term),
                   SLOW["retry_period"] * 2.2 + 2.0, what="f to take over")
    assert s[1] - t_term <= WATCH_BOUND, \
        "takeover after %.2fs: the watch was lost" % (s[1] - t_term)
    chk.assert_s1()


def test_f22_410_relists_then_watches_from_the_new_rv(cluster, api):
    """(d) F22 410 Gone: the next watch gets 410 Expired; the follower
    GETs the Lease and watches from the resourceVersion that GET
    returned, and follows the next release at once."""
    old, (f,), chk = leader_and_followers(cluster, api, 2)
    gone = api.watch_fault("gone", token=f.token, count=1)
    t_cut = time.monotonic()
    api.watch_cut_open(token=f.token)
    wait_until(lambda: gone.hits == 1, RECONNECT_BOUND,
               what="a watch that gets 410")
    w2 = wait_until(lambda: [e for e in watching(api, f)
                             if e["t_recv"] >= t_cut and e["fault"] is None],
                    RECONNECT_BOUND, what="a watch after the 410")[0]
    reqs = api.requests(token=f.token, since=t_cut)
    seq = [(e["method"], e.get("end")) for e in reqs]
    i410 = next(i for i, e in enumerate(reqs) if e["fault"] == "watch_gone")
    assert reqs[i410]["end"] == "expired", seq
    after = reqs[i410 + 1:]
    gets = [e for e in after if e["method"] == "GET" and e["code"] == 200
            and e["t_recv"] < w2["t_recv"]]
    assert gets, "no GET between the 410 and the next watch: %s" % seq
    g = gets[-1]
    # The RV the GET answered: the last write applied before it arrived
    # (the leader renews every 10 s, so none falls inside the GET).
    writes = api.history(ns=NS, name=cluster.lock)
    assert not [h for h in writes if g["t_recv"] <= h["t"] <= g["t_done"]]
    rv_get = [h["rv"] for h in writes if h["t"] < g["t_recv"]][-1]
    assert qs(w2)["resourceVersion"] == rv_get, (qs(w2), rv_get)
    time.sleep(0.5)
    t_term = time.monotonic()
    old.terminate()
    s = wait_until(lambda: chk.first_true(name=f.name, since=t_term),
                   SLOW["retry_period"] * 2.2 + 2.0, what="f to take over")
    assert s[1] - t_term <= WATCH_BOUND
    chk.assert_s1()


def test_f22_silent_stream_is_dead_after_its_timeout(cluster, api):
    """(d) F22 silent stream: headers, then nothing (no event, no
    bookmark).  With watch_timeout 2 s and request_timeout 1 s the
    follower gives it up after about 3 s and watches again."""
    WT = 2.0
    old, (f,), chk = leader_and_followers(cluster, api, 2, watch_timeout=WT)
    assert qs(wait_watching(api, f)[0])["timeoutSeconds"] == "2"
    silent = api.watch_fault("silent", token=f.token, count=1)
    t_cut = time.monotonic()
    api.watch_cut_open(token=f.token)
    wait_until(lambda: [x for x in api.requests(token=f.token,
                                                method="WATCH", since=t_cut)
                        if x["fault"] == "watch_silent"],
               RECONNECT_BOUND + WT, what="a silent watch")
    wait_until(lambda: not [x for x in api.watches(token=f.token)
                            if x["fault"] == "watch_silent"],
               WT + RT + 3.0, what="the follower to drop the silent watch")
    (e,) = [x for x in api.requests(token=f.token, method="WATCH",
                                    since=t_cut)
            if x["fault"] == "watch_silent"]
    held = e["t_done"] - e["t_recv"]
    print("silent watch dropped after %.2f s (watch_timeout %.0f s + "
          "request_timeout %.0f s)" % (held, WT, RT))
    assert e["end"] == "client"
    assert WT + RT - 0.5 <= held <= WT + RT + 1.5, held
    wait_watching(api, f, RECONNECT_BOUND, since=e["t_done"])
    t_term = time.monotonic()
    old.terminate()
    s = wait_until(lambda: chk.first_true(name=f.name, since=t_term),
                   SLOW["retry_period"] * 2.2 + 2.0, what="f to take over")
    assert s[1] - t_term <= WATCH_BOUND
    chk.assert_s1()


def test_f22_watch_forbidden_falls_back_to_polling_once(cluster, api):
    """(d) F22 403 on watch: one warning line containing "watch
    forbidden", never a second one, and polling at retry_period from then
    on (GETs every 2-4.4 s), with the lease still followed."""
    RP = 2.0
    lead = start(cluster, "ld-0", lease_duration=10.0, renew_deadline=7.0,
                 retry_period=RP)
    wait_until(lead.is_leader, START_BOUND, what="ld-0 to lead")
    f = cluster.new("ld-1", lease_duration=10.0, renew_deadline=7.0,
                    retry_period=RP)
    api.watch_fault("forbidden", token=f.token)
    f.start()
    chk = cluster.checker([lead, f])
    wait_until(lambda: f.log_count("watch forbidden") >= 1, START_BOUND,
               what="the watch forbidden warning")
    t0 = time.monotonic()
    time.sleep(12.0)
    assert f.log_count("watch forbidden") == 1, \
        [ln for ln in f.log().splitlines() if "watch forbidden" in ln]
    line = [ln for ln in f.log().splitlines() if "watch forbidden" in ln][0]
    assert " warn" in line or '"warn"' in line, line
    gets = [e for e in api.requests(token=f.token, method="GET", since=t0)]
    watches = [e for e in api.requests(token=f.token, method="WATCH",
                                       since=t0)]
    print("after 403: %d GETs and %d watches in 12 s" % (len(gets),
                                                         len(watches)))
    assert 12.0 / (2.2 * RP) - 1 <= len(gets) <= 12.0 / RP + 1, gets
    assert len(watches) <= 1, watches
    assert all(e["code"] == 403 for e in api.requests(token=f.token,
                                                      method="WATCH"))
    v = f.leader()
    assert v["name"] == lead.identity and v["is_leader"] is False
    assert f.alive()
    chk.assert_s1()


def test_watch_false_never_watches(cluster, api):
    """(e) `watch: false`: no watch request at all; followers poll every
    retry_period as before and a release is seen by the next poll."""
    RP = 1.0
    kw = dict(lease_duration=6.0, renew_deadline=4.0, retry_period=RP,
              watch=False)
    a = start(cluster, "a", **kw)
    wait_until(a.is_leader, START_BOUND, what="a to lead")
    b = start(cluster, "b", **kw)
    chk = cluster.checker([a, b])
    wait_until(lambda: (v := b.leader()) and v["name"] == a.identity,
               START_BOUND, what="b to follow")
    t0 = time.monotonic()
    time.sleep(6.0)
    gets = api.requests(token=b.token, method="GET", since=t0)
    assert len(gets) >= 6.0 / (2.2 * RP) - 1, gets
    t_term = time.monotonic()
    a.terminate()
    s = wait_until(lambda: chk.first_true(name="b", since=t_term),
                   2.2 * RP + 3.0, what="b to take over by polling")
    print("handover by polling after %.2f s" % (s[1] - t_term))
    assert api.requests(method="WATCH") == []
    chk.assert_s1()


def test_no_two_leaders_through_repeated_handovers(cluster, api):
    """(f) S1 over several watch-driven handovers among three instances,
    restarting each old leader as a follower."""
    first, rest, chk = leader_and_followers(cluster, api, 3)
    ins = [first] + rest
    cur = first
    for rnd in range(3):
        t = time.monotonic()
        cur.terminate()
        assert cur.wait(RT + 2.0) == 0
        s = wait_until(lambda: chk.first_true(since=t, exclude=(cur.name,)),
                       SLOW["retry_period"] * 2.2 + 2.0, what="a new leader")
        assert s[1] - t <= WATCH_BOUND, "round %d: %.2fs" % (rnd, s[1] - t)
        nxt = [i for i in ins if i.name == s[2]][0]
        again = cluster.start("%s-r%d" % (cur.name, rnd), **SLOW)
        chk.add(again)
        ins = [i for i in ins if i is not cur] + [again]
        wait_watching(api, again)
        cur = nxt
    chk.assert_s1()
