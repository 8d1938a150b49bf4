"""POST /leader/release (step down) and GET /readyz?leader=true.

The leader releases the Lease with the same compare-and-swap release as
on SIGTERM, answers once it is written, and does not take the Lease again
for step_down.cooldown, even when nobody else does; a follower answers
409; the call is served on the unix socket and a loopback TCP listener,
never on the probes listener nor on a TCP listener bound elsewhere."""

import json
import time

from harness import RETRY_PERIOD as RP, free_port, wait_until

SLACK = 1.5
JITTER = 2.2


def set_config(inst, section_line, extra):
    """Insert extra lines after section_line in inst's config."""
    with open(inst.config_path) as f:
        text = f.read()
    if section_line is None:
        text += extra
    else:
        assert section_line in text
        text = text.replace(section_line, section_line + extra, 1)
    with open(inst.config_path, "w") as f:
        f.write(text)


def release(inst, path="/leader/release", timeout=6.0):
    st, _, body = inst.request(path, method="POST", timeout=timeout)
    return st, json.loads(body) if body else None


def status_line(inst, path="/leader/release"):
    """(status, reason phrase) of a POST, as `curl -v` shows them."""
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", inst.port, timeout=6.0)
    try:
        c.request("POST", path)
        r = c.getresponse()
        r.read()
        return r.status, r.reason
    finally:
        c.close()


def test_release_moves_leadership_and_cools_down(api, cluster):
    a = cluster.new("s-a")
    b = cluster.new("s-b")
    cooldown = 4.0
    for i in (a, b):
        set_config(i, None, "step_down:\n  cooldown: 4s\n")
    a.start()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    b.start()
    wait_until(lambda: (b.leader() or {}).get("name") == "s-a", 3.0,
               what="b follows a")
    chk = cluster.checker()
    t0 = time.monotonic()
    st, body = release(a)
    assert st == 200, body
    assert body["released"] is True and body["is_leader"] is False
    assert body["cooldown_ms"] == 4000
    assert not a.is_leader()
    # The Lease was released by a's CAS write: holder empty for a moment,
    # then b takes it.
    new = wait_until(lambda: b.is_leader(), JITTER * RP + SLACK,
                     what="b takes over")
    assert new
    assert a.log_count("stepping down") >= 1
    # a does not compete during the cooldown (b holds it anyway) ...
    while time.monotonic() - t0 < cooldown:
        assert not a.is_leader()
        time.sleep(0.05)
    chk.assert_s1()
    # ... and a follower's release is refused.
    st, body = release(a)
    assert st == 409 and body["error"] == "not the leader"


def test_cooldown_holds_with_a_free_lease(api, cluster):
    """Alone, the instance that stepped down leaves the lease free for
    the whole cooldown, then takes it again."""
    a = cluster.new("s-solo")
    set_config(a, None, "step_down:\n  cooldown: 3s\n")
    a.start()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    t0 = time.monotonic()
    st, body = release(a)
    assert st == 200 and body["released"] is True, body
    lease = cluster.lease()
    assert lease["spec"].get("holderIdentity", "") == ""
    writes0 = len(a.writes())
    while time.monotonic() - t0 < 2.8:
        assert not a.is_leader()
        time.sleep(0.05)
    # No takeover write during the cooldown.
    assert len(a.writes()) == writes0
    wait_until(a.is_leader, 3.0 + JITTER * RP + SLACK, what="a leads again")
    assert time.monotonic() - t0 >= 3.0


def test_release_refusals(api, cluster, sockdir):
    a = cluster.new("s-r", unix=sockdir + "/r.sock")
    probes = free_port()
    set_config(a, "listen:\n", "  probes: \"127.0.0.1:%d\"\n" % probes)
    a.start()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    # Other methods: 405 with Allow.
    st, h, _ = a.request("/leader/release")
    assert st == 405 and h["allow"] == "POST"
    # Parameters other than to=IDENTITY, a bad identity, ourselves.
    for q in ("handover=s-b", "to=s-b&x=1", "to=", "to=-bad", "to=s-r"):
        st, body = release(a, "/leader/release?" + q)
        assert st == 400, (q, st, body)
    assert a.is_leader()
    # Never on the probes listener.
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", probes, timeout=1.0)
    c.request("POST", "/leader/release")
    r = c.getresponse()
    r.read()
    c.close()
    assert r.status == 404
    assert a.is_leader()
    # On the unix socket it works.
    res = a.unix_get("/leader/release", method="POST", timeout=6.0)
    assert res is not None and res[0] == 200, res
    assert json.loads(res[2])["released"] is True


def test_release_refused_on_non_loopback_listener(api, cluster):
    a = cluster.new("s-any")
    with open(a.config_path) as f:
        text = f.read()
    text = text.replace("127.0.0.1:%d" % a.port, "0.0.0.0:%d" % a.port)
    with open(a.config_path, "w") as f:
        f.write(text)
    a.start()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    st, body = release(a)
    assert st == 403, body
    assert a.is_leader()


def test_readyz_leader_true(api, cluster):
    a = cluster.start("s-ra")
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    b = cluster.start("s-rb")
    wait_until(lambda: b.get_status("/readyz") == 200, 3.0,
               what="b ready")
    # readyz.leader_only is off: plain /readyz is 200 on both ...
    assert a.get_status("/readyz") == 200
    # ... and ?leader=true is 200 on the leader only.
    assert a.get_status("/readyz?leader=true") == 200
    st, _, body = b.request("/readyz?leader=true")
    assert st == 503 and json.loads(body)["reason"] == "not the leader"
    assert b.get_status("/readyz?leader=false") == 200



def test_release_while_the_api_fails(api, cluster):
    """F29: the leader's writes fail when it is asked to step down.  It
    stops leading at once, answers 202 after renew_deadline +
    request_timeout, keeps trying, and the other instance takes over at
    expiry at the latest; the two never claim at once."""
    from harness import LEASE_DURATION as LD, RENEW_DEADLINE as RD, \
        REQUEST_TIMEOUT as RT
    a = cluster.start("s-fa")
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    b = cluster.start("s-fb")
    wait_until(lambda: (b.leader() or {}).get("name") == "s-fa", 3.0,
               what="b follows a")
    chk = cluster.checker()
    fault = api.fault("status", token=a.token, methods=["PUT"], status=503)
    t0 = time.monotonic()
    st, body = release(a, timeout=RD + RT + 3.0)
    answered = time.monotonic() - t0
    # 202 when nothing is settled by renew_deadline + request_timeout;
    # 200 with released false if b's takeover at expiry came first.
    assert body["released"] is False and body["is_leader"] is False
    if st == 202:
        assert RD + RT - 0.3 <= answered <= RD + RT + 1.0, answered
    else:
        # a answers when it sees b's write (through its watch), which can
        # be before b has taken its own PUT's answer: wait for b to say so.
        assert st == 200, (st, body)
        wait_until(lambda: (b.leader() or {}).get("name") == "s-fb", 1.0,
                   what="b names itself after a saw b's write")
    assert not a.is_leader()
    wait_until(b.is_leader, LD + JITTER * RP + SLACK, what="b takes over")
    took = time.monotonic() - t0
    print("F29: %d after %.2fs, takeover after %.2fs" % (st, answered,
                                                          took))
    api.clear_fault(fault)
    chk.assert_s1()
    assert not a.is_leader()


def test_release_without_waiting_requests(api, cluster):
    """With listen.max_streams 0 nothing may wait: 202 at once, the
    release is still written, and a later step-down works again."""
    a = cluster.new("s-nw")
    set_config(a, "listen:\n", "  max_streams: 0\n")
    set_config(a, None, "step_down:\n  cooldown: 1s\n")
    a.start()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    st, body = release(a)
    assert st == 202 and body["is_leader"] is False, (st, body)
    wait_until(lambda: (cluster.lease() or {}).get("spec", {}).get(
        "holderIdentity", "x") == "", 2.0, what="the release written")
    wait_until(a.is_leader, 1.0 + JITTER * RP + SLACK, what="a leads again")
    assert status_line(a) == (202, "Accepted")
    # A follower's refusal has its reason phrase too.
    assert status_line(a) == (409, "Conflict")
