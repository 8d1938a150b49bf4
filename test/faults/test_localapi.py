"""F24: the local API under abuse.  The leader also listens on a unix
socket; abuse goes to its TCP port.  In every case the election keeps its
timing (the leader renews at least every RP + 0.3s, keeps the lease, no
one else claims) and /healthz stays right: a fresh client gets 200 within
1s, on TCP and on the unix socket, all the time.

leaderd's limits (lib/server/httpd.h, lib/codec/http_parse.h): 256 open connections
over all listeners, 10s idle/slow-request timeout, 2 KiB request line,
8 KiB of headers, 4 KiB body, 64 KiB of unsent replies per connection;
event streams and blocking reads apart, 1024 of each by default
(listen.max_streams; F24e sets 64), never evicted."""

import os
import socket
import threading
import time

import pytest

from faultlib import POLL, RP, START, terms_ok, wait_until

RENEW_GAP_MAX = RP + 0.3
HEALTH_TIMEOUT = 1.0


@pytest.fixture
def sockdir():
    import tempfile
    d = tempfile.mkdtemp(prefix="ldf-", dir="/tmp")
    yield d
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    os.rmdir(d)


def _setup(cluster, sockdir, max_streams=None):
    lead = cluster.new("lead", unix=os.path.join(sockdir, "lead.sock"))
    if max_streams is not None:
        with open(lead.config_path) as f:
            text = f.read()
        with open(lead.config_path, "w") as f:
            f.write(text.replace("listen:\n", "listen:\n  max_streams: %d\n"
                                 % max_streams, 1))
    lead.start()
    wait_until(lead.is_leader, POLL + START, what="lead to lead")
    fs = [cluster.start("f%d" % i) for i in range(2)]
    chk = cluster.checker()
    for f in fs:
        wait_until(lambda: (v := f.leader()) and v["name"] == "lead",
                   POLL + START, what="%s to follow" % f.name)
    return lead, fs, chk


class Prober:
    """Asks /healthz every 0.25s on TCP and on the unix socket, each with
    a fresh connection and a 1s timeout; records (t, via, status, secs)."""

    def __init__(self, inst):
        self.inst = inst
        self.out = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            t = time.monotonic()
            st = self.inst.get_status("/healthz", timeout=HEALTH_TIMEOUT)
            self.out.append((t, "tcp", st, time.monotonic() - t))
            t = time.monotonic()
            r = self.inst.unix_get("/healthz", timeout=HEALTH_TIMEOUT)
            self.out.append((t, "unix", r[0] if r else None,
                             time.monotonic() - t))
            self._stop.wait(0.25)

    def stop(self):
        self._stop.set()
        self._t.join(5)
        return self.out


def _election_kept(cluster, lead, fs, chk, t0, t1, measure, what):
    ws = [w["t"] for w in lead.writes() if t0 - RP <= w["t"] <= t1]
    gaps = [b - a for a, b in zip(ws, ws[1:])]
    assert gaps and max(gaps) <= RENEW_GAP_MAX, \
        "%s: renew gap %.2fs > %.2fs" % (what, max(gaps), RENEW_GAP_MAX)
    assert chk.takeover(t0, ["lead"]) is None
    assert cluster.lease()["spec"]["holderIdentity"] == "lead"
    assert "stopped leading" not in lead.log()
    assert lead.alive()
    chk.assert_s1()
    terms_ok(cluster)
    measure("F24", "%s: longest renew gap" % what, max(gaps),
            bound=RENEW_GAP_MAX)


def _health_right(probes, measure, what):
    bad = [p for p in probes if p[2] != 200]
    worst = max(p[3] for p in probes)
    measure("F24", "%s: /healthz probes failed" % what, len(bad), unit="",
            bound=0)
    measure("F24", "%s: /healthz probes made" % what, len(probes), unit="")
    measure("F24", "%s: slowest /healthz answer" % what, worst,
            bound=HEALTH_TIMEOUT)
    assert bad == [], ("%s: /healthz not answered 200 within %.0fs in %d of "
                       "%d probes (first at +%.1fs via %s: %s)" % (
                           what, HEALTH_TIMEOUT, len(bad), len(probes),
                           bad[0][0] - probes[0][0], bad[0][1], bad[0][2]))


def test_f24_1000_idle_connections(cluster, sockdir, measure):
    """F24a: 1000 idle TCP connections to the leader's local API for 5s.
    Bound: election timing kept; /healthz 200 within 1s on TCP and unix
    throughout."""
    lead, fs, chk = _setup(cluster, sockdir)
    t0 = time.monotonic()
    pr = Prober(lead)
    conns = []
    try:
        for _ in range(1000):
            s = socket.socket()
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", lead.port))
            except BlockingIOError:
                pass
            conns.append(s)
        time.sleep(5.0)
    finally:
        probes = pr.stop()
        for s in conns:
            s.close()
    t1 = time.monotonic()
    _election_kept(cluster, lead, fs, chk, t0, t1, measure,
                   "1000 idle connections")
    _health_right(probes, measure, "1000 idle connections")


def test_f24_slowloris(cluster, sockdir, measure):
    """F24b: 300 slowloris clients (more than the 256-connection limit),
    each sending its request line at once and then one header byte every
    0.3s for 5s.  Bound: election timing kept; /healthz 200 within 1s."""
    lead, fs, chk = _setup(cluster, sockdir)
    t0 = time.monotonic()
    pr = Prober(lead)
    conns = []
    try:
        for _ in range(300):
            try:
                s = socket.create_connection(("127.0.0.1", lead.port),
                                             timeout=0.2)
                s.sendall(b"GET /leader HTTP/1.1\r\n")
            except OSError:
                continue    # the accept queue is full: the attack holds
            conns.append(s)
        end = time.monotonic() + 5.0
        while time.monotonic() < end:
            for s in conns:
                try:
                    s.send(b"X")
                except OSError:
                    pass
            time.sleep(0.3)
    finally:
        probes = pr.stop()
        for s in conns:
            s.close()
    t1 = time.monotonic()
    measure("F24", "slowloris connections made (of 300)", len(conns),
            unit="")
    _election_kept(cluster, lead, fs, chk, t0, t1, measure, "slowloris")
    _health_right(probes, measure, "slowloris")


def test_f24_clients_that_never_read(cluster, sockdir, measure):
    """F24c: 50 clients pipeline GET /leader requests as fast as they can
    and never read an answer, for 5s.  Bound: election timing kept;
    /healthz 200 within 1s; the daemon drops them (past 64 KiB of unsent
    replies) rather than buffer without end."""
    lead, fs, chk = _setup(cluster, sockdir)
    t0 = time.monotonic()
    pr = Prober(lead)
    conns = []
    req = b"GET /leader HTTP/1.1\r\nHost: localhost\r\n\r\n" * 64
    dropped = 0
    try:
        for _ in range(50):
            s = socket.create_connection(("127.0.0.1", lead.port), timeout=1)
            s.setblocking(False)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            conns.append(s)
        end = time.monotonic() + 5.0
        while time.monotonic() < end:
            for s in list(conns):
                try:
                    s.send(req)
                except BlockingIOError:
                    pass
                except OSError:
                    conns.remove(s)
                    s.close()
                    dropped += 1
            time.sleep(0.01)
    finally:
        probes = pr.stop()
        for s in conns:
            s.close()
    t1 = time.monotonic()
    _election_kept(cluster, lead, fs, chk, t0, t1, measure,
                   "never-reading clients")
    _health_right(probes, measure, "never-reading clients")
    measure("F24", "never-reading clients dropped by the daemon (of 50)",
            dropped, unit="")
    rss = _rss_kb(lead.pid)
    measure("F24", "leader RSS after the never-reading clients", rss,
            unit="KiB")
    assert rss < 64 * 1024


def _rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1])
    return 0


def test_f24_one_mib_header(cluster, sockdir, measure):
    """F24d: 5 requests with a 1 MiB header.  Bound: each gets 431 (or the
    connection is closed once the 8 KiB header limit is passed), the
    daemon stays up, election timing kept, /healthz 200 within 1s."""
    lead, fs, chk = _setup(cluster, sockdir)
    t0 = time.monotonic()
    pr = Prober(lead)
    codes = []
    try:
        for _ in range(5):
            s = socket.create_connection(("127.0.0.1", lead.port), timeout=3)
            try:
                s.sendall(b"GET /leader HTTP/1.1\r\nX-Big: " +
                          b"a" * (1024 * 1024) + b"\r\n\r\n")
            except OSError:
                pass
            try:
                ans = s.recv(200)
            except OSError:
                ans = b""
            codes.append(ans[9:12].decode() if ans else "closed")
            s.close()
            time.sleep(0.3)
        time.sleep(1.0)
    finally:
        probes = pr.stop()
    t1 = time.monotonic()
    assert all(c in ("431", "closed") for c in codes), codes
    assert "431" in codes, codes
    _election_kept(cluster, lead, fs, chk, t0, t1, measure, "1 MiB header")
    _health_right(probes, measure, "1 MiB header")


def test_f24_streams_and_idle_connections(cluster, sockdir, measure):
    """F24e: the push API full (64 event streams, half on TCP, half on
    the unix socket, listen.max_streams 64) plus 1000 idle TCP
    connections, for 5s.  Bound: election timing kept; /healthz 200
    within 1s on TCP and unix throughout; a 65th stream refused with a
    JSON 503; the 64 streams stay open (the idle flood evicts idle
    connections, never a stream)."""
    from pushlib import Stream
    lead, fs, chk = _setup(cluster, sockdir, max_streams=64)
    t0 = time.monotonic()
    pr = Prober(lead)
    streams, conns = [], []
    try:
        for i in range(64):
            s = Stream(lead, ("tcp", "unix")[i % 2])
            streams.append(s)
            assert s.status == 200, s.status
        extra = Stream(lead, "tcp")
        assert extra.status == 503, extra.status
        assert extra.headers["content-type"].startswith("application/json")
        extra.close()
        for _ in range(1000):
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect(("127.0.0.1", lead.port))
            except BlockingIOError:
                pass
            conns.append(c)
        time.sleep(5.0)
        open_streams = sum(1 for s in streams if s.closed_at is None)
    finally:
        probes = pr.stop()
        for c in conns:
            c.close()
        for s in streams:
            s.close()
    t1 = time.monotonic()
    measure("F24", "streams + idle connections: streams still open (of 64)",
            open_streams, unit="", bound=64, cmp=">=")
    assert open_streams == 64
    assert all(s.data() and s.data()[0]["name"] == "lead" for s in streams)
    _election_kept(cluster, lead, fs, chk, t0, t1, measure,
                   "64 streams + 1000 idle connections")
    _health_right(probes, measure, "64 streams + 1000 idle connections")
