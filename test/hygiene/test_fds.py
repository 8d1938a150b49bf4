"""File descriptors and memory of a running leaderd over a bounded soak.

One daemon (A, TCP and unix socket) is watched through /proc/PID/fd and
/proc/PID/status while, cycle after cycle, it is put through client
connections of every kind (complete requests, connect-and-close, half
requests, resets, pipelined requests never read, idle connections),
API faults on its own token (503, 429, drop, apply-then-close,
blackhole, slow answers beyond request_timeout, 401) and failovers with
a peer (B) that is SIGTERMed, SIGKILLed and restarted, and A losing the
lease through a blackhole.  After each cycle the soak waits for a
quiet state (faults cleared, a single agreed leader, client sockets
closed, the server's linger over) and samples A's descriptors and RSS.

Asserts: after the warm-up cycle, the quiet fd count never exceeds the
warm-up one by more than FD_SLACK (a curl connection being replaced may
be in flight), the final one neither, the idle timeout gives back the
descriptors of idle clients, and RSS at the end is within RSS_SLACK_KB
of the warm-up figure.  The duration is HYGIENE_SOAK_SECONDS (default
60); every wait is bounded."""

import os
import socket
import struct
import threading
import time

import harness
from harness import (LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD,
                     REQUEST_TIMEOUT, Leaderd, wait_until)

SOAK_S = float(os.environ.get("HYGIENE_SOAK_SECONDS", "60"))
FD_SLACK = 2
RSS_SLACK_KB = int(os.environ.get("HYGIENE_RSS_SLACK_KB", "1024"))
HTTPD_IDLE_S = 10.0     # lib/server/httpd.h HTTPD_IDLE_MS
LINGER_S = 2.0          # lib/server/httpd.c LINGER_S
NS = "default"


def fd_table(pid):
    """{fd: link target} of a process."""
    out = {}
    d = "/proc/%d/fd" % pid
    for n in os.listdir(d):
        try:
            out[int(n)] = os.readlink(os.path.join(d, n))
        except OSError:
            pass            # closed meanwhile
    return out


def fd_kinds(table):
    """A count per kind of descriptor: socket, pipe, anon_inode:[x], file."""
    kinds = {}
    for t in table.values():
        if t.startswith("socket:"):
            k = "socket"
        elif t.startswith("pipe:"):
            k = "pipe"
        elif t.startswith("anon_inode:"):
            k = t
        else:
            k = "file"
        kinds[k] = kinds.get(k, 0) + 1
    return kinds


def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith(field + ":"):
                return int(ln.split()[1])
    return None


class Sampler:
    """Samples fd count and RSS of one pid every `interval` seconds."""

    def __init__(self, pid, interval=0.1):
        self.pid = pid
        self.interval = interval
        self.fds = []
        self.rss = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._t.start()
        return self

    def stop(self):
        self._stop.set()
        self._t.join(5)

    def _run(self):
        while not self._stop.is_set():
            try:
                self.fds.append(len(fd_table(self.pid)))
                self.rss.append(status_kb(self.pid, "VmRSS"))
            except OSError:
                return
            self._stop.wait(self.interval)


# -- client connections ------------------------------------------------

def _conn(inst, timeout=2.0):
    return socket.create_connection(("127.0.0.1", inst.port), timeout=timeout)


def _unix(inst, timeout=2.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(inst.unix)
    return s


def client_churn(inst):
    """Opens and closes ~300 client connections of every kind."""
    for i in range(40):        # complete requests, TCP and unix
        assert inst.get_status("/healthz", timeout=2.0) == 200
        st = inst.unix_get("/leader" if i % 2 else "/readyz", timeout=2.0)
        assert st is not None and st[0] in (200, 503), st
    for _ in range(60):        # connect and close at once
        _conn(inst).close()
        _unix(inst).close()
    for _ in range(30):        # half a request, then close
        s = _conn(inst)
        s.sendall(b"GET /lea")
        s.close()
    for _ in range(20):        # a request, then a reset before reading
        s = _conn(inst)
        s.sendall(b"GET /leader HTTP/1.1\r\nHost: localhost\r\n\r\n")
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
        s.close()
    for _ in range(10):        # pipelined requests never read
        s = _conn(inst)
        s.sendall(b"GET /leader HTTP/1.1\r\nHost: localhost\r\n\r\n" * 50)
        s.close()
    for _ in range(5):         # oversized and malformed requests
        s = _conn(inst)
        try:
            s.sendall(b"GET / HTTP/1.1\r\nX-Big: " + b"a" * 20000 +
                      b"\r\n\r\n")
        except OSError:
            pass
        s.close()
        harness.tcp_request(inst.port, b"BREW /pot HTCPCP/1.0\r\n\r\n")
    idle = [_conn(inst) for _ in range(30)] + [_unix(inst) for _ in range(10)]
    time.sleep(0.3)
    for s in idle:             # idle connections closed by the client
        s.close()


# -- faults ------------------------------------------------------------

def _fault_cycle(api, inst, i):
    """One API fault on inst's token, chosen by the cycle number; waits
    (bounded) until it has been hit."""
    tok = inst.token
    kinds = [
        lambda: api.fault("status", token=tok, status=503, count=3),
        lambda: api.fault("drop", token=tok, count=3),
        lambda: api.fault("apply_then_close", token=tok, methods=["PUT"],
                          count=1),
        lambda: api.fault("blackhole", token=tok, count=1,
                          hold_ms=int((REQUEST_TIMEOUT + 0.5) * 1000)),
        lambda: api.fault("delay", token=tok, count=1,
                          delay_ms=int((REQUEST_TIMEOUT + 0.5) * 1000)),
        lambda: api.fault("status", token=tok, status=429, retry_after=1,
                          count=2),
    ]
    f = kinds[i % len(kinds)]()
    # A watching follower sends nothing while its stream is open: end
    # the stream, so that the reconnect (and the polls while it is down)
    # meet the fault too.
    api.watch_end_open(token=tok)
    want = f.count if f.count is not None else 1
    wait_until(lambda: f.hits >= want, 10.0, interval=0.05,
               what="%r to be hit" % f)
    if i % 4 == 3:             # and a short spell of 401s
        api.revoke_token(tok)
        t = time.monotonic()
        wait_until(lambda: any(r["code"] == 401 for r in
                               api.requests(token=tok, since=t)), 5.0,
                   what="a 401")
        api.add_token(tok)
    api.clear_faults()


# -- the soak ----------------------------------------------------------

class Peers:
    """A and a peer B that is replaced by a new process when it dies."""

    def __init__(self, api, workdir, lock, binary, sockpath, procs):
        self.api = api
        self.workdir = workdir
        self.lock = lock
        self.binary = binary
        self.procs = procs
        self.n = 0
        self.a = Leaderd(api, workdir, "a", lock, unix=sockpath,
                         binary=binary, log_level="info")
        procs.append(self.a)
        self.b = None

    def new_b(self):
        self.n += 1
        self.b = Leaderd(self.api, self.workdir, "b%d" % self.n, self.lock,
                         binary=self.binary, log_level="info")
        self.procs.append(self.b)
        self.b.start(timeout=10.0)
        return self.b

    def leader(self, timeout=LEASE_DURATION + 10.0):
        """Wait until both live daemons agree on one leader; return it."""
        live = [x for x in (self.a, self.b) if x is not None and x.alive()]

        def one():
            if not self.a.alive():
                raise AssertionError("A exited with %s:\n%s" % (
                    self.a.proc.returncode, self.a.log()[-3000:]))
            views = [(x, x.leader()) for x in live]
            if any(v is None for _, v in views):
                return None
            leads = [x for x, v in views if v["is_leader"]]
            if len(leads) != 1:
                return None
            if any(v["name"] != leads[0].identity for _, v in views):
                return None
            return leads[0]
        return wait_until(one, timeout, interval=0.05,
                          what="a single agreed leader")

    def failover(self, i):
        """Move leadership, one of four ways by cycle number."""
        a, api = self.a, self.api
        cur = self.leader()
        way = i % 4
        if cur is a:
            if way % 2 == 0:
                # A loses the lease: its requests are held past the
                # renew deadline; B takes over.
                f = api.fault("blackhole", token=a.token)
                wait_until(lambda: not a.is_leader(),
                           RENEW_DEADLINE + 3.0, what="A to stop leading")
                wait_until(lambda: self.b.is_leader(),
                           LEASE_DURATION + RETRY_PERIOD * 1.2 + 5.0,
                           what="B to take over")
                api.clear_fault(f)
            else:
                # The follower B dies and is replaced.
                self.b.kill9()
                self.new_b()
        else:
            if way % 2 == 0:
                self.b.terminate()       # releases: A takes over at once
                assert self.b.wait(REQUEST_TIMEOUT + 3.0) == 0
            else:
                self.b.kill9()           # A takes over after expiry
            wait_until(lambda: a.is_leader(),
                       LEASE_DURATION + RETRY_PERIOD * 1.2 + 5.0,
                       what="A to take over")
            self.new_b()
        self.leader()


def quiet_sample(peers):
    """Clear faults, wait for one leader and for client sockets to be
    gone (linger), then sample A's fds and RSS."""
    peers.api.clear_faults()
    peers.leader()
    time.sleep(LINGER_S + 0.5)
    # Let at least two retry periods pass, so a connection to the API
    # that was being replaced has been settled.
    time.sleep(2 * RETRY_PERIOD * 1.2)
    pid = peers.a.pid
    tab = fd_table(pid)
    return tab, status_kb(pid, "VmRSS")


def test_fds_and_rss_bounded_over_soak(api, tmp_path, sockdir, leaderd_bin,
                                       procs, figures):
    """Soak for HYGIENE_SOAK_SECONDS: A's quiet fd count stays within
    FD_SLACK of the warm-up count, idle clients' fds are given back by
    the idle timeout (HTTPD_IDLE_MS), RSS stays within RSS_SLACK_KB."""
    lock = "hygiene-fds-%d" % os.getpid()
    peers = Peers(api, str(tmp_path), lock, leaderd_bin,
                  os.path.join(sockdir, "a.sock"), procs)
    a = peers.a
    a.start(timeout=10.0)
    wait_until(a.is_leader, LEASE_DURATION + 5.0, what="A to lead")
    peers.new_b()
    peers.leader()
    fd_start = len(fd_table(a.pid))
    rss_start = status_kb(a.pid, "VmRSS")
    sampler = Sampler(a.pid).start()

    # Warm-up cycle: every kind of client, a fault, a failover.
    client_churn(a)
    _fault_cycle(api, a, 0)
    peers.failover(0)
    base_tab, base_rss = quiet_sample(peers)
    base = len(base_tab)

    quiet = []
    t_end = time.monotonic() + SOAK_S
    i = 1
    while time.monotonic() < t_end:
        client_churn(a)
        _fault_cycle(api, a, i)
        peers.failover(i)
        tab, rss = quiet_sample(peers)
        quiet.append((i, len(tab), rss))
        assert len(tab) <= base + FD_SLACK, (
            "cycle %d: %d fds open, %d after warm-up\nnow: %r\nthen: %r"
            % (i, len(tab), base, fd_kinds(tab), fd_kinds(base_tab)))
        i += 1
    assert len(quiet) >= 2, "soak too short for a trend (%d cycles)" % \
        len(quiet)

    peak_soak = max(sampler.fds or [0])

    # Idle clients that never send: the server's idle timeout closes
    # them and gives the descriptors back.
    idle = [_conn(a) for _ in range(40)] + [_unix(a) for _ in range(10)]
    try:
        wait_until(lambda: len(fd_table(a.pid)) >= base + 50 - FD_SLACK,
                   5.0, what="50 idle connections to be accepted")
        held = len(fd_table(a.pid))
        wait_until(lambda: len(fd_table(a.pid)) <= base + FD_SLACK,
                   HTTPD_IDLE_S + LINGER_S + 5.0,
                   what="the idle timeout to close 50 idle connections")
    finally:
        for s in idle:
            s.close()
    end_tab, end_rss = quiet_sample(peers)
    sampler.stop()
    end = len(end_tab)
    hwm = status_kb(a.pid, "VmHWM")

    figures("%d cycles over %.0fs, %d B processes; A fds: start %d, after "
            "warm-up %d %r, per cycle %s, with 50 idle clients %d, end %d "
            "%r; peak sampled during the cycles %d"
            % (i, SOAK_S, peers.n, fd_start, base, fd_kinds(base_tab),
               [q[1] for q in quiet], held, end, fd_kinds(end_tab),
               peak_soak))
    figures("A RSS kB: start %d, after warm-up %d, per cycle %s, end %d, "
            "peak sampled %d, VmHWM %d"
            % (rss_start, base_rss, [q[2] for q in quiet], end_rss,
               max(x for x in sampler.rss if x is not None), hwm))
    assert end <= base + FD_SLACK, (end, base, fd_kinds(end_tab),
                                    fd_kinds(base_tab))
    assert end_rss <= base_rss + RSS_SLACK_KB, (
        "RSS grew from %d kB to %d kB" % (base_rss, end_rss))
    assert a.alive()
    a.terminate()
    assert a.wait(REQUEST_TIMEOUT + 5.0) == 0
