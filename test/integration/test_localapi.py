"""The local API of a running leaderd, over TCP and the unix socket:
routes, fields and types, error answers to malformed requests (after
which the daemon must still answer and still lead), and the unix socket
rules (refuse a live socket, replace a stale one)."""

import json
import os
import re
import socket
import stat
import time

import pytest

from harness import (RENEW_DEADLINE as RD, RETRY_PERIOD as RP,
                     read_http_response, tcp_request, unix_request,
                     wait_until)

MICROTIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
BOUND = 2.2 * RP + 3.0
NS = "default"


def leading(cluster, name="solo", **kw):
    inst = cluster.start(name, **kw)
    wait_until(inst.is_leader, BOUND, what="%s to lead" % name)
    return inst


def check_error_body(st, hdrs, body):
    assert hdrs.get("content-type", "").startswith("application/json"), hdrs
    d = json.loads(body)
    assert isinstance(d.get("error"), str) and d["error"], d
    assert d.get("status") == st, d


def test_leader_json_fields_and_types(cluster):
    a = leading(cluster, "a")
    b = cluster.start("b")
    wait_until(lambda: (v := b.leader()) and v["name"] == a.identity, BOUND,
               what="b to see a")
    st, hdrs, body = a.request("/leader")
    assert st == 200
    assert hdrs["content-type"].startswith("application/json")
    la = json.loads(body)
    lb = b.leader()
    spec = cluster.lease()["spec"]
    for d, who in ((la, a), (lb, b)):
        assert isinstance(d["name"], str) and d["name"] == a.identity
        assert isinstance(d["is_leader"], bool)
        assert d["identity"] == who.identity
        assert d["lock"] == "leases/%s/%s" % (NS, cluster.lock)
        assert d["state"] in ("leader", "follower", "candidate", "stopping",
                              "stopped")
        assert isinstance(d["transitions"], int) and \
            not isinstance(d["transitions"], bool)
        assert d["transitions"] == spec.get("leaseTransitions", 0)
        for k in ("acquire_time", "renew_time"):
            assert d[k] is None or MICROTIME.match(d[k]), d
        assert d["acquire_time"] == spec["acquireTime"]
        assert d["lease_duration_seconds"] == spec["leaseDurationSeconds"]
        assert isinstance(d["valid_for_ms"], int) and d["valid_for_ms"] >= 0
    renews = {w["spec"]["renewTime"] for w in a.writes()}
    assert la["renew_time"] in renews and lb["renew_time"] in renews
    assert la["is_leader"] is True and la["state"] == "leader"
    assert 0 < la["valid_for_ms"] <= RD * 1000, la
    assert lb["is_leader"] is False and lb["state"] == "follower"
    assert lb["valid_for_ms"] == 0


def test_text_plain_root_health_ready(cluster):
    a = leading(cluster, "a")
    b = cluster.start("b")
    wait_until(lambda: (v := b.leader()) and v["name"] == a.identity, BOUND,
               what="b to see a")
    for inst in (a, b):
        st, hdrs, body = inst.request("/leader", {"Accept": "text/plain"})
        assert st == 200 and hdrs["content-type"].startswith("text/plain")
        assert body == (a.identity + "\n").encode()
        st, hdrs, body = inst.request("/")
        assert st == 200 and hdrs["content-type"].startswith(
            "application/json")
        assert json.loads(body) == {"name": a.identity}
        st, _, body = inst.request("/healthz")
        assert st == 200 and json.loads(body) == {"status": "ok"}
        st, _, body = inst.request("/readyz")
        assert st == 200 and json.loads(body) == {"status": "ready"}
        st, hdrs, body = inst.request("/leader", method="HEAD")
        assert st == 200 and body == b""
    # A query string is ignored.
    st, _, body = a.request("/leader?x=1")
    assert st == 200 and json.loads(body)["is_leader"] is True


def test_readyz_before_first_observation(cluster, api):
    inst = cluster.new("early")
    f = api.fault("status", token=inst.token, status=503)
    inst.start()
    time.sleep(3 * RP)
    st, _, body = inst.request("/readyz")
    d = json.loads(body)
    assert st == 503 and d["status"] == "not ready", d
    assert isinstance(d.get("reason"), str) and d["reason"], d
    v = inst.leader()
    assert v["is_leader"] is False and v["state"] == "candidate", v
    assert v["name"] == "" and v["valid_for_ms"] == 0
    st, _, body = inst.request("/healthz")
    assert st == 200, body  # the loop is alive; it just cannot reach the API
    api.clear_fault(f)
    wait_until(lambda: inst.get_status("/readyz") == 200, 2.2 * RP * 2 + 1.5,
               what="/readyz 200")
    wait_until(inst.is_leader, BOUND, what="early to lead")


def test_readyz_leader_only(cluster):
    a = leading(cluster, "a", readyz_leader_only=True)
    b = cluster.start("b", readyz_leader_only=True)
    wait_until(lambda: (v := b.leader()) and v["name"] == a.identity, BOUND,
               what="b to see a")
    assert a.get_status("/readyz") == 200
    assert b.get_status("/readyz") == 503


def test_unix_socket_routes(cluster, sockdir):
    path = os.path.join(sockdir, "l.sock")
    a = cluster.start("a", unix=path)
    wait_until(a.is_leader, BOUND, what="a to lead")
    mode = stat.S_IMODE(os.stat(path).st_mode)
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    assert mode == 0o660, oct(mode)
    st, hdrs, body = a.unix_get("/leader")
    assert st == 200 and hdrs["content-type"].startswith("application/json")
    d = json.loads(body)
    t = a.leader()
    assert d["identity"] == t["identity"] == a.identity
    assert d["is_leader"] is True and d["name"] == a.identity
    assert d["lock"] == t["lock"]
    st, _, body = a.unix_get("/leader", {"Accept": "text/plain"})
    assert st == 200 and body == (a.identity + "\n").encode()
    st, _, body = a.unix_get("/")
    assert st == 200 and json.loads(body) == {"name": a.identity}
    assert a.unix_get("/healthz")[0] == 200
    assert a.unix_get("/readyz")[0] == 200
    st, hdrs, body = a.unix_get("/nope")
    assert st == 404
    check_error_body(st, hdrs, body)
    # Unix-socket only (no TCP listener) works too.
    path2 = os.path.join(sockdir, "u.sock")
    u = cluster.start("u", unix=path2, http=False)
    wait_until(lambda: (v := u.leader()) and v["name"] == a.identity, BOUND,
               what="u to see a")
    a.terminate()
    assert a.wait(3) == 0
    assert not os.path.exists(path), "socket left behind after exit"


def send(transport, inst, data, timeout=3.0):
    if transport == "tcp":
        return tcp_request(inst.port, data, timeout)
    return unix_request(inst.unix, data, timeout)


MALFORMED = [
    ("garbage", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n",
     {400}),
    ("no-version", b"GET /leader\r\n\r\n", {400, 505}),
    ("bad-version-token", b"GET /leader HTTX/1.1\r\nHost: localhost\r\n\r\n",
     {400, 505}),
    ("http2-version", b"GET /leader HTTP/2.0\r\nHost: localhost\r\n\r\n", {505}),
    ("header-no-colon", b"GET /leader HTTP/1.1\r\nHost x\r\n\r\n", {400}),
    ("many-headers", b"GET /leader HTTP/1.1\r\nHost: localhost\r\n" +
     b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 100) for i in range(100)) +
     b"\r\n", {431}),
    ("huge-header-line", b"GET /leader HTTP/1.1\r\nHost: localhost\r\nX-Big: " +
     b"a" * 20000 + b"\r\n\r\n", {431}),
    ("post", b"POST /leader HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n"
     b"{}", {405}),
    ("put-root", b"PUT / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n",
     {405}),
    ("delete", b"DELETE /leader HTTP/1.1\r\nHost: localhost\r\n\r\n", {405}),
    ("unknown-path", b"GET /leaderz HTTP/1.1\r\nHost: localhost\r\n\r\n", {404}),
    ("huge-body", b"GET /leader HTTP/1.1\r\nHost: localhost\r\n"
     b"Content-Length: 100000000\r\n\r\n", {413}),
    ("bad-content-length", b"GET /leader HTTP/1.1\r\nHost: localhost\r\n"
     b"Content-Length: abc\r\n\r\n", {400}),
    ("negative-content-length", b"GET /leader HTTP/1.1\r\nHost: localhost\r\n"
     b"Content-Length: -5\r\n\r\n", {400}),
]


@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_malformed_requests_get_4xx_and_daemon_stays_up(cluster, api,
                                                        sockdir, transport):
    path = os.path.join(sockdir, "m.sock")
    a = leading(cluster, "a", unix=path)
    trans0 = cluster.lease()["spec"].get("leaseTransitions", 0)
    chk = cluster.checker([a])
    t0 = time.monotonic()
    for name, data, want in MALFORMED:
        st, hdrs, body = send(transport, a, data)
        assert st in want, (name, st, body)
        check_error_body(st, hdrs, body)
        if st == 405:
            allow = {x.strip() for x in hdrs.get("allow", "").split(",")}
            assert {"GET", "HEAD"} <= allow, (name, hdrs)
        assert a.alive(), "leaderd died after %s" % name
    # A half-sent request then a close, and a connection closed at once.
    for data in (b"GET /lea", b""):
        s = socket.create_connection(("127.0.0.1", a.port), timeout=2)
        s.sendall(data)
        s.close()
    assert a.alive()
    v = a.leader()
    assert v is not None and v["is_leader"] is True, v
    assert a.get_status("/healthz") == 200
    # The election was never disturbed: renewals went on without a gap
    # and the leader never stopped saying so.
    time.sleep(RD + RP)
    ws = [w["t"] for w in a.writes() if w["t"] >= t0 - RP]
    assert len(ws) >= 3, ws
    gaps = [y - x for x, y in zip(ws, ws[1:])]
    assert max(gaps) < RD, gaps
    mine = chk.of(a.name, since=t0)
    assert mine and all(x[3] for x in mine), "stopped leading meanwhile"
    assert cluster.lease()["spec"].get("leaseTransitions", 0) == trans0
    assert cluster.lease()["spec"]["holderIdentity"] == a.identity


def test_pipelined_and_keepalive_requests(cluster):
    a = leading(cluster, "a")
    s = socket.create_connection(("127.0.0.1", a.port), timeout=3)
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                  b"GET /leader HTTP/1.1\r\nHost: localhost\r\nAccept: text/plain"
                  b"\r\n\r\n")
        st1, _, b1, rest = read_http_response(s)
        assert st1 == 200 and json.loads(b1) == {"status": "ok"}
        # The second answer may already be in `rest`.
        buf = rest
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            assert chunk, "connection closed before the second answer"
            buf += chunk
        head, _, body = buf.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        m = re.search(rb"(?i)content-length:\s*(\d+)", head)
        n = int(m.group(1))
        while len(body) < n:
            body += s.recv(65536)
        assert body[:n] == (a.identity + "\n").encode()
    finally:
        s.close()


def test_idle_connections_do_not_block_answers(cluster):
    a = leading(cluster, "a")
    idle = []
    try:
        for i in range(40):
            s = socket.create_connection(("127.0.0.1", a.port), timeout=2)
            if i % 2:
                s.sendall(b"GET /leader HTTP/1.1\r\nHo")
            idle.append(s)
        t = time.monotonic()
        v = a.leader(timeout=1.0)
        assert v is not None and v["is_leader"] is True
        assert time.monotonic() - t < 0.5
        time.sleep(RD + RP)
        assert a.is_leader(), "lost leadership while clients idled"
    finally:
        for s in idle:
            s.close()


def test_second_daemon_on_live_socket_refuses(cluster, sockdir):
    path = os.path.join(sockdir, "live.sock")
    a = cluster.start("a", unix=path)
    wait_until(a.is_leader, BOUND, what="a to lead")
    b = cluster.new("b", unix=path)
    b.start(wait=False)
    rc = b.wait(5)
    assert rc is not None and rc != 0, "second daemon did not refuse (rc %r)" \
        % rc
    assert path in b.log(), b.log()
    # The first still owns and serves the socket.
    assert os.path.exists(path)
    st, _, body = a.unix_get("/leader")
    assert st == 200 and json.loads(body)["identity"] == a.identity
    assert a.alive()


def test_stale_socket_is_replaced(cluster, sockdir):
    path = os.path.join(sockdir, "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()  # leaves the file with nobody listening
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    a = cluster.start("a", unix=path)
    wait_until(lambda: a.unix_get("/healthz") is not None, 3,
               what="the socket to answer")
    st, _, body = a.unix_get("/leader")
    assert st == 200 and json.loads(body)["identity"] == a.identity


def test_socket_path_that_is_not_a_socket_is_an_error(cluster, sockdir):
    path = os.path.join(sockdir, "file")
    with open(path, "w") as f:
        f.write("precious\n")
    a = cluster.new("a", unix=path)
    a.start(wait=False)
    rc = a.wait(5)
    assert rc is not None and rc != 0, rc
    assert path in a.log()
    assert open(path).read() == "precious\n"
