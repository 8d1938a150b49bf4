"""The fault proxy itself, against a plain TCP echo server and through TLS
to fakeapi: every mode does what the fault rows rely on."""

import socket
import ssl
import threading
import time

import pytest

from proxy import ProxyHub, _TLSCounter


class Echo:
    """A TCP echo server on 127.0.0.1 that counts what it received."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.received = 0
        self.conns = 0
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self._stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns += 1
            threading.Thread(target=self._serve, args=(c,),
                             daemon=True).start()

    def _serve(self, c):
        try:
            while True:
                d = c.recv(65536)
                if not d:
                    break
                self.received += len(d)
                c.sendall(d)
        except OSError:
            pass
        finally:
            c.close()

    def close(self):
        self._stop = True
        self.sock.close()


@pytest.fixture
def echo():
    e = Echo()
    yield e
    e.close()


@pytest.fixture
def phub():
    h = ProxyHub()
    yield h
    h.close()


def roundtrip(port, data=b"ping", timeout=2.0, sock=None):
    s = sock or socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.settimeout(timeout)
    t0 = time.monotonic()
    s.sendall(data)
    got = b""
    while len(got) < len(data):
        d = s.recv(65536)
        if not d:
            break
        got += d
    return s, got, time.monotonic() - t0


def test_pass_and_latency_per_direction(echo, phub):
    p = phub.proxy(echo.port, "echo")
    s, got, dt = roundtrip(p.port)
    assert got == b"ping" and dt < 0.2
    p.set("latency", up_ms=150, down_ms=250)
    s, got, dt = roundtrip(p.port, sock=s)
    assert got == b"ping" and 0.38 <= dt < 0.8, dt
    p.set("latency", up_ms=0, down_ms=300)
    s, got, dt = roundtrip(p.port, sock=s)
    assert got == b"ping" and 0.28 <= dt < 0.6, dt
    p.clear()
    s, got, dt = roundtrip(p.port, sock=s)
    assert got == b"ping" and dt < 0.2
    s.close()


def test_blackhole_accepts_and_forwards_nothing(echo, phub):
    p = phub.proxy(echo.port, "echo")
    old, _, _ = roundtrip(p.port)
    p.set("blackhole")
    with pytest.raises(socket.timeout):
        roundtrip(p.port, sock=old, timeout=0.5)
    s = socket.create_connection(("127.0.0.1", p.port), timeout=1.0)
    with pytest.raises(socket.timeout):
        roundtrip(p.port, sock=s, timeout=0.5)
    n = echo.conns
    p.clear()
    # Blackholed streams are closed when the network heals.
    old.settimeout(1.0)
    assert old.recv(10) == b""
    assert echo.conns == n      # the new connection never reached it
    s2, got, _ = roundtrip(p.port)
    assert got == b"ping"
    for x in (old, s, s2):
        x.close()


def test_reset_existing_and_new(echo, phub):
    p = phub.proxy(echo.port, "echo")
    old, _, _ = roundtrip(p.port)
    p.set("reset")
    old.settimeout(1.0)
    with pytest.raises(ConnectionResetError):
        old.send(b"x")
        old.recv(10)
    with pytest.raises((ConnectionResetError, BrokenPipeError)):
        s = socket.create_connection(("127.0.0.1", p.port), timeout=1.0)
        s.send(b"x")
        time.sleep(0.05)
        s.send(b"x")
        if s.recv(10) == b"":
            raise ConnectionResetError("closed")
    p.clear()
    _, got, _ = roundtrip(p.port)
    assert got == b"ping"


def test_trickle_is_slow(echo, phub):
    p = phub.proxy(echo.port, "echo")
    p.set("trickle", trickle_bytes=2, trickle_ms=50)
    _, got, dt = roundtrip(p.port, data=b"0123456789")
    assert got == b"0123456789"
    assert dt >= 0.2, dt


def test_half_open_freezes_existing_only(echo, phub):
    p = phub.proxy(echo.port, "echo")
    old, _, _ = roundtrip(p.port)
    p.set("half_open")
    with pytest.raises(socket.timeout):
        roundtrip(p.port, sock=old, timeout=0.5)
    s, got, _ = roundtrip(p.port)
    assert got == b"ping"
    old.close()
    time.sleep(0.2)
    h = [x for x in p.stats()["history"] if x["frozen"]]
    assert h and h[0]["closed_by"] == "client"
    s.close()


def test_tls_counter_counts_application_data():
    c = _TLSCounter()
    rec = bytes([23, 3, 3, 0, 5]) + b"hello"
    hs = bytes([22, 3, 1, 0, 3]) + b"abc"
    stream = hs + rec + rec
    pieces = []
    for i in range(0, len(stream), 3):
        pieces += c.feed(stream[i:i + 3])
    assert _TLSCounter.appdata(pieces) == 10
    assert [k for k, _, new in pieces if new] == [22, 23, 23]


def test_drop_after_forward_through_tls(api, phub):
    """The request reaches fakeapi (it is in its request log, answered),
    the client gets no answer and the connection is closed."""
    p = phub.proxy(api.port, "tls")
    api.add_token("t")
    ctx = ssl.create_default_context(cafile=api.ca_file)

    def get():
        raw = socket.create_connection(("127.0.0.1", p.port), timeout=2.0)
        s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
        s.sendall(b"GET /apis/coordination.k8s.io/v1/namespaces/default/"
                  b"leases/x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer t"
                  b"\r\n\r\n")
        return s, s.recv(65536)
    s, ans = get()
    assert ans.startswith(b"HTTP/1.1 404")
    p.set("drop_after_forward", min_req_bytes=100, count=1)
    n = len(api.requests())
    with pytest.raises((ssl.SSLError, OSError)) as ei:
        s2, ans2 = get()
        if ans2 == b"":
            raise OSError("closed without an answer")
    assert ei.value is not None
    time.sleep(0.1)
    assert len(api.requests()) == n + 1, "the request never reached fakeapi"
    assert p.events_of("drop_answer")
    assert p.mode == "pass"     # count used up
    s3, ans3 = get()
    assert ans3.startswith(b"HTTP/1.1 404")
