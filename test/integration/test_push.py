"""The push API: GET /leader/watch and GET /sse (server-sent events) and
the blocking read GET /leader?wait=...&index=N, over TCP and the unix
socket.  Events on connect and on a failover, on SIGTERM a final event
and a clean close, the cap on streams (the 65th refused while /healthz
still answers; lowered to what the open-file limit holds), an idle
stream's memory, a stream client that never reads is dropped, and bad
wait or index values are refused with 400 while the daemon stays up."""

import json
import os
import signal
import socket
import threading
import time

import pytest

from harness import RETRY_PERIOD as RP, wait_until
from pushlib import Stream, blocking_read, connect, request_bytes

BOUND = 2.2 * RP + 3.0
VIAS = ("tcp", "unix")


def with_max_streams(inst, n):
    """Rewrite inst's config with listen.max_streams: n."""
    with open(inst.config_path) as f:
        lines = f.read().splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("  unix:"))
    lines.insert(i + 1, "  max_streams: %d" % n)
    with open(inst.config_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return inst


def pair(cluster, sockdir):
    """a leads, b follows and names a; both listen on TCP and unix."""
    a = cluster.start("a", unix=os.path.join(sockdir, "a.sock"))
    wait_until(a.is_leader, BOUND, what="a to lead")
    b = cluster.start("b", unix=os.path.join(sockdir, "b.sock"))
    wait_until(lambda: (v := b.leader()) and v["name"] == "a", BOUND,
               what="b to see a")
    return a, b


def check_event_fields(d, inst):
    assert isinstance(d["index"], int) and d["index"] >= 1, d
    assert isinstance(d["is_leader"], bool)
    assert d["identity"] == inst.identity
    assert isinstance(d["changed_at"], str) and d["changed_at"].endswith("Z")


def test_events_on_connect_and_failover(cluster, sockdir):
    a, b = pair(cluster, sockdir)
    streams = [Stream(b, via, path) for via in VIAS
               for path in ("/leader/watch", "/sse")]
    for s in streams:
        assert s.status == 200
        assert s.headers["content-type"] == "text/event-stream"
        assert s.headers["cache-control"] == "no-cache"
        assert "content-length" not in s.headers
        t, d = s.wait_event(lambda d: True, 1.0, "first event")
        check_event_fields(d, b)
        assert d["name"] == "a" and d["is_leader"] is False
        assert s.headers["x-leaderd-index"] == str(d["index"])
    sa = Stream(a, "unix")
    d0 = sa.wait_event(lambda d: True, 1.0)[1]
    assert d0["is_leader"] is True and d0["name"] == "a"
    # Failover: a hands the lease back, b takes it.
    a.terminate()
    for s in streams:
        s.wait_event(lambda d: d["name"] == "b" and d["is_leader"], BOUND,
                     "b leading")
    assert a.wait(5) == 0
    for s in streams:
        ds = s.data()
        idx = [d["index"] for d in ds]
        assert idx == sorted(set(idx)), "indexes not increasing: %r" % idx
        # Every event is a change of (name, is_leader).
        pairs = [(d["name"], d["is_leader"]) for d in ds]
        assert all(p != q for p, q in zip(pairs, pairs[1:])), pairs
        assert all(p[1] is False for p in pairs[:-1]), pairs
    # /leader agrees with the last event.
    st, hdrs, body = b.request("/leader")
    last = streams[0].data()[-1]
    assert json.loads(body)["index"] == last["index"]
    assert hdrs["x-leaderd-index"] == str(last["index"])
    for s in streams + [sa]:
        s.close()


def test_sigterm_final_event_and_close(cluster, sockdir):
    a, b = pair(cluster, sockdir)
    sa = [Stream(a, via) for via in VIAS]
    sb = [Stream(b, via) for via in VIAS]
    for s in sa:
        assert s.wait_event(lambda d: True, 1.0)[1]["is_leader"] is True
    for s in sb:
        s.wait_event(lambda d: True, 1.0)
    # A blocking read waiting on each daemon is answered too.
    waits = {}

    def wait_on(inst, via):
        idx = inst.leader()["index"]
        waits[(inst.name, via)] = blocking_read(
            inst, via, "wait=60s&index=%d" % idx, timeout=30)

    ts = [threading.Thread(target=wait_on, args=(i, v), daemon=True)
          for i in (a, b) for v in VIAS]
    for t in ts:
        t.start()
    wait_until(lambda: a.log_count("waits") >= 2 and
               b.log_count("waits") >= 2, 2.0, what="the reads to wait")
    t0 = time.time()
    a.terminate()
    b.terminate()
    for s in sa + sb:
        t, d = s.wait_event(lambda d: d["is_leader"] is False and
                            d["state"] in ("stopping", "stopped"), 5.0,
                            "final event")
        assert t - t0 < 2.0
        s.wait_closed(5.0)
        assert s.data()[-1]["is_leader"] is False
    assert a.wait(5) == 0 and b.wait(5) == 0
    for t in ts:
        t.join(5)
    assert len(waits) == 4, waits
    for (name, via), (st, hdrs, body, secs) in waits.items():
        assert st == 200, (name, via, st, body)
        assert secs < 5.0, (name, via, secs)
        assert json.loads(body)["is_leader"] is False


@pytest.mark.parametrize("via", VIAS)
def test_blocking_read(cluster, sockdir, via):
    a, b = pair(cluster, sockdir)
    st, hdrs, body, _ = blocking_read(b, via, "")
    d = json.loads(body)
    idx = d["index"]
    assert st == 200 and hdrs["x-leaderd-index"] == str(idx)
    # A different index is answered at once.
    st, hdrs, body, secs = blocking_read(b, via, "wait=30s&index=%d"
                                         % (idx + 100))
    assert st == 200 and secs < 1.0 and json.loads(body)["index"] == idx
    # The same index, nothing changes: answered when the wait ends.
    st, hdrs, body, secs = blocking_read(b, via, "index=%d&wait=1500ms"
                                         % idx)
    assert st == 200 and 1.4 <= secs < 3.0, secs
    assert json.loads(body)["index"] == idx
    assert hdrs["x-leaderd-index"] == str(idx)
    # wait=0s does not wait; text/plain works as a blocking read too.
    st, _, _, secs = blocking_read(b, via, "wait=0s&index=%d" % idx)
    assert st == 200 and secs < 1.0
    # A change answers a waiting read at once.
    out = {}

    def waiter(key, headers=None):
        out[key] = blocking_read(b, via, "wait=60s&index=%d" % idx,
                                 headers, timeout=30)

    ts = [threading.Thread(target=waiter, args=("json",), daemon=True),
          threading.Thread(target=waiter, args=("text",
                           {"Accept": "text/plain"}), daemon=True)]
    base = b.log_count("waits")
    for t in ts:
        t.start()
    wait_until(lambda: b.log_count("waits") >= base + 2, 2.0,
               what="the reads to wait")
    t0 = time.monotonic()
    a.terminate()
    for t in ts:
        t.join(BOUND + 2)
    assert set(out) == {"json", "text"}, out
    st, hdrs, body, secs = out["json"]
    d = json.loads(body)
    assert st == 200 and d["index"] > idx
    assert hdrs["x-leaderd-index"] == str(d["index"])
    assert time.monotonic() - t0 < BOUND
    st, hdrs, body, _ = out["text"]
    assert st == 200 and hdrs["content-type"].startswith("text/plain")
    assert int(hdrs["x-leaderd-index"]) > idx
    assert body in (b"\n", b"a\n", b"b\n")
    assert a.wait(5) == 0


BAD_QUERIES = ["wait=abc&index=1", "wait=-1s&index=1", "wait=10&index=1",
               "wait=30s&index=x", "wait=30s&index=", "index=1&index=2",
               "wait=1s&wait=2s&index=1", "wait=%zz&index=1", "wait",
               "index=-3", "index=99999999999999999999999",
               "wait=1.5ns&index=1"]


@pytest.mark.parametrize("via", VIAS)
def test_malformed_wait_is_400(cluster, sockdir, via):
    a = cluster.start("a", unix=os.path.join(sockdir, "a.sock"))
    wait_until(a.is_leader, BOUND, what="a to lead")
    for q in BAD_QUERIES:
        st, hdrs, body, secs = blocking_read(a, via, q)
        assert st == 400, (q, st, body)
        assert hdrs["content-type"].startswith("application/json")
        d = json.loads(body)
        assert d["status"] == 400 and d["error"], d
        assert secs < 1.0
    # A wait past the cap is capped, not refused; other keys are ignored.
    idx = a.leader()["index"]
    st, _, body, secs = blocking_read(a, via, "wait=1000h&index=%d&x=1"
                                      % (idx + 1))
    assert st == 200 and secs < 1.0
    assert a.alive() and a.is_leader()
    assert a.get_status("/healthz") == 200


def test_stream_cap_and_healthz(cluster, sockdir):
    """64 streams (listen.max_streams 64) and 200 idle connections: the
    65th stream is refused with a JSON 503, /healthz and /leader answer,
    and a closed stream frees its place."""
    a = with_max_streams(cluster.new("a", unix=os.path.join(sockdir,
                                                            "a.sock")), 64)
    a.start()
    wait_until(a.is_leader, BOUND, what="a to lead")
    streams = [Stream(a, VIAS[i % 2]) for i in range(64)]
    idle = []
    try:
        for s in streams:
            assert s.status == 200
            s.wait_event(lambda d: True, 2.0)
        for _ in range(200):
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect(("127.0.0.1", a.port))
            except BlockingIOError:
                pass
            idle.append(c)
        for via in VIAS:
            s = Stream(a, via)
            assert s.status == 503, s.status
            assert s.headers["content-type"].startswith("application/json")
            d = json.loads(s.body or s.sock.recv(4096))
            assert d["status"] == 503 and "stream" in d["error"]
            s.close()
        assert a.get_status("/healthz", timeout=1.0) == 200
        assert a.unix_get("/healthz")[0] == 200
        assert a.leader()["is_leader"] is True
        # The streams are alive and a closed one frees its place.
        assert all(s.closed_at is None for s in streams)
        streams.pop().close()

        def new_ok():
            s = Stream(a, "tcp")
            ok = s.status == 200
            if ok:
                streams.append(s)
            else:
                s.close()
            return ok
        wait_until(new_ok, 2.0, what="a freed place")
    finally:
        for s in streams:
            s.close()
        for c in idle:
            c.close()


def test_max_streams_setting(cluster, sockdir):
    """listen.max_streams 2: the third stream is refused; 0 turns the
    push routes off, blocking reads included."""
    a = with_max_streams(cluster.new("a", unix=os.path.join(sockdir,
                                                            "a.sock")), 2)
    a.start()
    wait_until(a.is_leader, BOUND, what="a to lead")
    s1, s2 = Stream(a, "tcp"), Stream(a, "unix", "/sse")
    assert (s1.status, s2.status) == (200, 200)
    s3 = Stream(a, "tcp")
    assert s3.status == 503
    for s in (s1, s2, s3):
        s.close()
    b = with_max_streams(cluster.new("b"), 0)
    b.start()
    wait_until(lambda: (v := b.leader()) and v["name"] == "a", BOUND,
               what="b to see a")
    s = Stream(b, "tcp")
    assert s.status == 503
    s.close()
    idx = b.leader()["index"]
    st, _, body, _ = blocking_read(b, "tcp", "wait=5s&index=%d" % idx)
    assert st == 503 and json.loads(body)["status"] == 503
    assert b.get_status("/healthz") == 200


def open_stream(inst, via):
    """A /leader/watch stream on a plain socket, its first event read
    if it is one: (socket, status)."""
    s = connect(inst, via)
    s.sendall(request_bytes("/leader/watch"))
    buf = b""
    while b"\r\n\r\n" not in buf or (
            buf.startswith(b"HTTP/1.1 200") and
            b"\n\n" not in buf.partition(b"\r\n\r\n")[2]):
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    return s, int(buf.split(b" ", 2)[1]) if buf else 0


def test_stream_cap_under_the_open_file_limit(cluster, sockdir, tmp_path,
                                              leaderd_bin):
    """Under `ulimit -n 600` listen.max_streams 1000 cannot be kept with
    the request connections' cap (256) and the API client's reserve
    (32): the daemon says so and takes (600 - 32 - 256) / 2 = 156 of
    each, so the 157th stream is refused and /healthz answers."""
    wrapper = str(tmp_path / "leaderd-nofile600")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nulimit -n 600 || exit 99\nexec %s \"$@\"\n"
                % leaderd_bin)
    os.chmod(wrapper, 0o755)
    a = with_max_streams(cluster.new("a", unix=os.path.join(sockdir,
                                                            "a.sock"),
                                     binary=wrapper), 1000)
    a.start()
    wait_until(a.is_leader, BOUND, what="a to lead")
    assert a.log_count("open-file limit 600: at most 156 streams") == 1, \
        a.log()[-2000:]
    socks = []
    try:
        for i in range(156):
            s, st = open_stream(a, VIAS[i % 2])
            socks.append(s)
            assert st == 200, "stream %d: %d" % (i, st)
        s, st = open_stream(a, "tcp")
        socks.append(s)
        assert st == 503
        assert a.get_status("/healthz", timeout=1.0) == 200
    finally:
        for s in socks:
            s.close()


def rss_anon_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    raise AssertionError("no RssAnon in /proc/%d/status" % pid)


def test_idle_stream_memory(cluster, sockdir):
    """An idle stream holds its connection and nothing more (the
    request's parser and read buffer, and its sent events, are freed):
    250 streams, half TCP and half unix, each with its first event
    read, add at most 4 KiB apiece to the daemon's anonymous memory."""
    n = 250
    a = with_max_streams(cluster.new("a", unix=os.path.join(sockdir,
                                                            "a.sock")), n)
    a.start()
    wait_until(a.is_leader, BOUND, what="a to lead")
    Stream(a, "tcp").close()    # the first stream's one-time allocations
    time.sleep(0.2)
    before = rss_anon_kb(a.pid)
    socks = []
    try:
        for i in range(n):
            s, st = open_stream(a, VIAS[i % 2])
            socks.append(s)
            assert st == 200, "stream %d: %d" % (i, st)
        time.sleep(0.3)
        grown = rss_anon_kb(a.pid) - before
        assert grown <= 4 * n, "%d streams added %d kB (%.0f B each)" % (
            n, grown, grown * 1024.0 / n)
    finally:
        for s in socks:
            s.close()


def test_stream_client_that_never_reads_is_dropped(cluster, sockdir, api):
    """A follower sees the holder change many times a second (an admin
    flips it between two long names); a stream client that never reads
    is dropped once 64 KiB are unsent,
    while a reading client on the same daemon keeps every event."""
    api.create_lease("default", cluster.lock, {
        "holderIdentity": "x" * 250, "leaseDurationSeconds": 3600,
        "renewTime": "2030-01-01T00:00:00.000000Z",
        "acquireTime": "2030-01-01T00:00:00.000000Z",
        "leaseTransitions": 0})
    f = cluster.start("f", unix=os.path.join(sockdir, "f.sock"),
                      retry_period=0.02, renew_deadline=1.0,
                      lease_duration=2.0, request_timeout=0.5)
    wait_until(lambda: (v := f.leader()) and v["name"] == "x" * 250, BOUND,
               what="f to see the holder")
    lazy = Stream(f, "unix", read=False)
    good = Stream(f, "tcp")
    stop = threading.Event()

    def flip():
        n = 0
        while not stop.is_set():
            n += 1
            name = ("x" if n % 2 else "y") * 250

            def edit(o, name=name):
                o["spec"]["holderIdentity"] = name
            api.modify_lease("default", cluster.lock, edit)
            time.sleep(0.01)

    t = threading.Thread(target=flip, daemon=True)
    t.start()
    try:
        wait_until(lambda: f.log_count("stream client does not read") >= 1,
                   40.0, interval=0.2, what="the lazy client to be dropped")
    finally:
        stop.set()
        t.join(5)
    # The lazy client finds the stream ended (after the bytes that the
    # kernels held), the reading one is still open.
    lazy.sock.settimeout(5.0)
    got = 0
    while True:
        try:
            chunk = lazy.sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        got += len(chunk)
    assert got > 0
    assert good.closed_at is None
    n = len(good.data())
    assert n > 50, n
    idx = [d["index"] for d in good.data()]
    assert idx == list(range(idx[0], idx[0] + len(idx))), \
        "the reading client missed events"
    assert f.get_status("/healthz") == 200
    lazy.close()
    good.close()


def test_head_and_pipelined_requests(cluster):
    """HEAD on the stream routes answers headers only; a stream after
    pipelined requests answers them first, then streams."""
    a = cluster.start("a")
    wait_until(a.is_leader, BOUND, what="a to lead")
    st, hdrs, body = a.request("/leader/watch", method="HEAD")
    assert st == 200 and body == b""
    s = connect(a, "tcp")
    s.sendall(request_bytes("/healthz") + request_bytes("/leader/watch"))
    buf = b""
    s.settimeout(2.0)
    while buf.count(b"data: ") < 1:
        chunk = s.recv(65536)
        assert chunk, buf
        buf += chunk
    first, _, rest = buf.partition(b"\r\n\r\n")
    assert first.startswith(b"HTTP/1.1 200") and b"Content-Length" in first
    assert b"text/event-stream" in rest
    s.close()
    assert a.alive()


def test_leadership_running_out_is_pushed(cluster, sockdir, api):
    """The leader's API goes silent (every request blackholed): its
    leadership ends by time alone, renew_deadline after the send of its
    last good renew, and the streams and a waiting blocking read hear
    "is_leader false" then, not at some later poll.  (Today the last
    renew's timeout is capped at the leadership left, so its failure
    coincides with the end; the daemon's timer at lead_until_ms is what
    keeps this true when a renew may outlive the claim.)"""
    from harness import RENEW_DEADLINE as RD
    a = cluster.start("a", unix=os.path.join(sockdir, "a.sock"))
    wait_until(a.is_leader, BOUND, what="a to lead")
    streams = [Stream(a, via) for via in VIAS]
    for s in streams:
        assert s.wait_event(lambda d: True, 1.0)[1]["is_leader"] is True
    idx = a.leader()["index"]
    out = {}

    def waiter():
        out["r"] = blocking_read(a, "unix", "wait=60s&index=%d" % idx,
                                 timeout=30)

    t = threading.Thread(target=waiter, daemon=True)
    t.start()
    wait_until(lambda: a.log_count(" waits") >= 1, 2.0,
               what="the read to wait")
    f = api.fault("blackhole", token=a.token)
    try:
        for s in streams:
            te, d = s.wait_event(lambda d: d["is_leader"] is False,
                                 RD + 3.0, "is_leader false")
            # The daemon's own time stamp of the change is the end of its
            # leadership: within RD (+ scheduling) of the last good
            # renew the API server applied.
            last = max(w["t"] for w in a.writes())
            changed = time.time() - (time.monotonic() - last)
            at = _parse_time(d["changed_at"])
            assert at - changed <= RD + 0.3, (at - changed, d)
            assert te - at < 0.5
            assert d["valid_for_ms"] == 0
        t.join(5)
        st, _, body, _ = out["r"]
        assert st == 200 and json.loads(body)["is_leader"] is False
    finally:
        api.clear_fault(f)
    for s in streams:
        s.close()


def _parse_time(s):
    import datetime
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def test_keep_alive_comment(cluster, sockdir):
    """A quiet stream gets a ": keep-alive" comment within 15 s (plus
    scheduling), on TCP and unix, and no event in between."""
    a = cluster.start("a", unix=os.path.join(sockdir, "a.sock"))
    wait_until(a.is_leader, BOUND, what="a to lead")
    streams = [Stream(a, via) for via in VIAS]
    t0 = time.time()
    for s in streams:
        s.wait_event(lambda d: True, 1.0)
    wait_until(lambda: all(s.comments for s in streams), 17.0,
               interval=0.2, what="a keep-alive on every stream")
    for s in streams:
        t, line = s.comments[0]
        assert line == ": keep-alive"
        assert 14.0 <= t - t0 <= 16.5, t - t0
        assert len(s.data()) == 1 and s.closed_at is None
        s.close()
