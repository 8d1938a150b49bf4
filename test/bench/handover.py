"""handover -- how fast leadership moves, for leaderd and for the client-go
elector, on the test API server and on a real kube-apiserver.

Three electors of one kind share a Lease at production timings.  Each
trial stops the leader (SIGTERM: it releases the lease; or kill -9: it
does not) and measures, from the signal, until another elector's /leader
says is_leader (polled every millisecond).  The stopped elector is then
replaced by a new one, and the next trial starts once the followers have
seen the new leader renew.  Figures are printed, never asserted.
"""

import json
import os
import queue
import select
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request

from harness import free_port  # test/kit, on the path

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
E2E_BIN = os.environ.get("E2E_BIN") or os.path.join(REPO, "build", "e2e",
                                                     "bin")
FAKEAPP = os.path.join(REPO, "test", "kit", "fakeapp.py")


def get_leader(port, timeout=0.5):
    """The /leader body of the elector on port, or None."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError:
        return None
    try:
        s.sendall(b"GET /leader HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        buf = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            buf += d
        return json.loads(buf.split(b"\r\n\r\n", 1)[1])
    except (OSError, ValueError, IndexError):
        return None
    finally:
        s.close()


def post_release(port, to=None):
    """POST /leader/release (?to=IDENTITY) to the elector on port."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        path = "/leader/release" + ("?to=" + to if to else "")
        s.sendall(b"POST %s HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                  b"Content-Length: 0\r\n\r\n" % path.encode())
        while s.recv(65536):
            pass
    finally:
        s.close()


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


class FakeBackend:
    """The test API server (test/kit/fakeapi.py) over TLS; it
    counts requests per token."""

    name = "fakeapi"
    namespace = "default"

    def __init__(self, work):
        from fakeapi import FakeAPI
        self.work = work
        self.api = FakeAPI().start()

    def kubeconfig(self, who):
        token = "bench-" + who
        self.api.add_token(token)
        path = os.path.join(self.work, who + ".kubeconfig")
        self.api.write_kubeconfig(path, token=token)
        return path, token

    def requests(self, token):
        return len(self.api.requests(token=token))

    def stop(self):
        self.api.stop()


class KasBackend:
    """The e2e suite's kube-apiserver (build/e2e/bin/kasbox), started once;
    every elector uses its admin kubeconfig."""

    name = "kube-apiserver"
    namespace = "default"

    def __init__(self, work, flags=(), name="kasbox"):
        binary = os.path.join(E2E_BIN, "kasbox")
        if not os.access(binary, os.X_OK):
            raise RuntimeError("%s is not built (make e2e-bins)" % binary)
        out = os.path.join(work, name)
        self.log = open(os.path.join(work, name + ".log"), "wb")
        argv = [binary, "-out", out, "-users", "bench"]
        for f in flags:
            argv += ["-apiserver-flag", f]
        self.p = subprocess.Popen(argv,
                                  stdout=subprocess.PIPE, stderr=self.log,
                                  stdin=subprocess.DEVNULL, text=True)
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(l) for l in self.p.stdout],
                         daemon=True).start()
        end = time.monotonic() + 240
        while True:
            if self.p.poll() is not None or time.monotonic() > end:
                self.stop()
                raise RuntimeError("kasbox did not start; see %s"
                                   % self.log.name)
            try:
                if lines.get(timeout=0.5).startswith("READY "):
                    break
            except queue.Empty:
                pass
        with open(os.path.join(out, "info.json")) as f:
            self.info = json.load(f)
        self.admin = self.info["users"]["admin"]["kubeconfig"]
        self.work = work

    def watch_lease(self, name, pred):
        """Watch the Lease as admin in a thread; returns an Event whose
        .t is the monotonic time of the first record pred(obj) is true
        of (set once).  Close it with .stop()."""
        ctx = ssl.create_default_context(cafile=self.info["ca"])
        req = urllib.request.Request(
            "%s/apis/coordination.k8s.io/v1/namespaces/%s/leases?watch=1&"
            "fieldSelector=metadata.name%%3D%s" % (
                self.info["url"], self.namespace, name),
            headers={"Authorization": "Bearer " +
                     self.info["users"]["admin"]["token"]})
        hit = threading.Event()
        hit.t = None
        r = urllib.request.urlopen(req, context=ctx, timeout=120)
        hit.stop = r.close

        def run():
            try:
                for line in r:
                    t = time.monotonic()
                    try:
                        obj = json.loads(line)["object"]
                    except (ValueError, KeyError):
                        continue
                    if hit.t is None and pred(obj):
                        hit.t = t
                        hit.set()
            except (OSError, ValueError, AttributeError):
                pass
        threading.Thread(target=run, daemon=True).start()
        return hit

    def kubeconfig(self, who):
        return self.admin, None

    def requests(self, token):
        return None

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(10)
        self.log.close()


class Elector:
    """One leaderd or client-go elector process with a /leader endpoint."""

    def __init__(self, backend, kind, ident, lease, timings, watch=True,
                 args=(), goargs=()):
        ld, rd, rp = timings
        self.kind = kind
        self.ident = ident
        self.port = free_port()
        self.kubeconfig, self.token = backend.kubeconfig(ident)
        if kind == "leaderd":
            argv = [os.environ["LEADERD"], "--kubeconfig", self.kubeconfig,
                    "--election", lease,
                    "--election-namespace", backend.namespace,
                    "--id", ident, "--http", "127.0.0.1:%d" % self.port,
                    "--lease-duration", "%gs" % ld,
                    "--renew-deadline", "%gs" % rd,
                    "--retry-period", "%gs" % rp,
                    "--release-on-cancel", "true",
                    "--watch", "true" if watch else "false",
                    "--log-level", "warn"] + list(args)
        else:
            argv = [os.path.join(E2E_BIN, "clientgo-elector"),
                    "-kubeconfig", self.kubeconfig,
                    "-namespace", backend.namespace, "-name", lease,
                    "-id", ident, "-http", "127.0.0.1:%d" % self.port,
                    "-lease-duration", "%gs" % ld,
                    "-renew-deadline", "%gs" % rd,
                    "-retry-period", "%gs" % rp,
                    "-release-on-cancel=true"] + list(goargs)
        self.p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL,
                                  stdin=subprocess.DEVNULL)

    def leader(self):
        return get_leader(self.port)

    def is_leader(self):
        b = self.leader()
        return bool(b and b.get("is_leader") is True)

    def signal(self, sig):
        if self.p.poll() is None:
            self.p.send_signal(sig)

    def stop(self):
        self.signal(signal.SIGTERM)
        try:
            self.p.wait(15)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(10)


def available(kind):
    if kind == "leaderd":
        return True
    return os.access(os.path.join(E2E_BIN, "clientgo-elector"), os.X_OK)


def _wait(pred, timeout, interval=0.01):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(interval)
    return None


def _settled(group, lease_holder):
    """One leader, and every other elector names it."""
    leaders = [e for e in group if e.is_leader()]
    if len(leaders) != 1:
        return None
    names = [(e.leader() or {}).get("name") for e in group]
    if any(n != leaders[0].ident for n in names):
        return None
    return leaders[0]


def trials(backend, kind, how, n, timings, tag):
    """n handovers (how: "sigterm" or "kill9") in a group of three; the
    seconds from each signal to the next is_leader."""
    ld, rd, rp = timings
    lease = "bench-%s-%s-%s" % (tag, kind, how)
    seq = [0]

    def new():
        seq[0] += 1
        return Elector(backend, kind, "%s-%s-%d" % (kind[:2], how, seq[0]),
                       lease, timings)

    group = [new() for _ in range(3)]
    times = []
    try:
        for _ in range(n):
            old = _wait(lambda: _settled(group, lease), 3 * ld + 10)
            if old is None:
                print("    (no settled leader; trial skipped)")
                break
            # Let the followers see at least one renew of this leader.
            time.sleep(rp * 1.5)
            rest = [e for e in group if e is not old]
            t0 = time.monotonic()
            if how in ("release", "directed"):
                # POST /leader/release, undirected or ?to= the first of
                # the others; the old leader stays, as a follower.
                to = rest[0].ident if how == "directed" else None
                post_release(old.port, to)
                want = rest[:1] if to else rest
            else:
                old.signal(signal.SIGTERM if how == "sigterm"
                           else signal.SIGKILL)
                want = rest
            took = _wait(lambda: any(e.is_leader() for e in want),
                         ld + 3 * rp + 10, interval=0.001)
            if took is None:
                print("    (no takeover within %.0f s)" % (ld + 3 * rp + 10))
                break
            times.append(time.monotonic() - t0)
            if how in ("release", "directed"):
                continue
            old.stop()
            group = rest + [new()]
    finally:
        for e in group:
            e.stop()
    return times


def fmt(ts):
    if not ts:
        return "no trials"
    unit, k = ("ms", 1000.0) if max(ts) < 1.0 else ("s", 1.0)
    return "p50 %.1f %s, p99 %.1f %s, max %.1f %s (%d trials)" % (
        percentile(ts, 50) * k, unit, percentile(ts, 99) * k, unit,
        max(ts) * k, unit, len(ts))


def request_rates(backend, timings, idle, tag):
    """API requests per minute of a following leaderd (watching, and
    polling) and of a following client-go elector, on one Lease."""
    lease = "bench-%s-rates" % tag
    group = [Elector(backend, "leaderd", "rate-lead", lease, timings)]
    _wait(lambda: group[0].is_leader(), 20)
    group.append(Elector(backend, "leaderd", "rate-watch", lease, timings))
    group.append(Elector(backend, "leaderd", "rate-poll", lease, timings,
                         watch=False))
    if available("clientgo"):
        group.append(Elector(backend, "clientgo", "rate-go", lease, timings))
    try:
        time.sleep(5)
        n0 = {e.ident: backend.requests(e.token) for e in group}
        t0 = time.monotonic()
        time.sleep(idle)
        dt = time.monotonic() - t0
        return [(e.ident, e.kind, e.is_leader(),
                 (backend.requests(e.token) - n0[e.ident]) * 60.0 / dt)
                for e in group]
    finally:
        for e in group:
            e.stop()


# -- the application's death (candidacy) ----------------------------------

class App:
    """An application process beside an elector (test/kit/fakeapp.py):
    a health endpoint on its own port and, with hold, a /leader/watch
    stream held open on leaderd's port."""

    def __init__(self, hold=None, mode="ok", then=None, after=0.0):
        argv = [sys.executable, FAKEAPP, "--mode", mode]
        if hold:
            argv += ["--hold", str(hold)]
        if then:
            argv += ["--then", then, "--after", "%g" % after]
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True,
                                  stdin=subprocess.DEVNULL)
        r, _, _ = select.select([self.p.stdout], [], [], 15)
        line = self.p.stdout.readline() if r else ""
        if not line.startswith("ready "):
            self.kill()
            raise RuntimeError("the application did not start: %r" % line)
        self.port = int(line.split()[1])

    def url(self):
        return "http://127.0.0.1:%d/healthz" % self.port

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(10)


PROBE = (1, 2)          # the HTTP probe: period 1 s, failure_threshold 2


def gated(backend, gating, ident, lease, timings):
    """A leaderd with its application beside it (e.app).  gating:
    "client" (--require-client, the app holds a stream), "probe" (an HTTP
    probe of the app, 1 s x 2, timeout 1 s) or "none" (the app is
    there, leaderd knows nothing of it)."""
    if gating == "probe":
        app = App()
        cfg = os.path.join(backend.work, ident + ".yaml")
        with open(cfg, "w") as f:
            f.write("candidacy:\n  probe:\n    url: %s\n    period: %ds\n"
                    "    timeout: 1s\n    failure_threshold: %d\n"
                    % (app.url(), PROBE[0], PROBE[1]))
        e = Elector(backend, "leaderd", ident, lease, timings,
                    args=["-f", cfg])
    elif gating == "client":
        e = Elector(backend, "leaderd", ident, lease, timings,
                    args=["--require-client"])
        if _wait(lambda: e.leader() is not None, 15) is None:
            e.stop()
            raise RuntimeError("leaderd %s did not start" % ident)
        app = App(hold=e.port)
    else:
        e = Elector(backend, "leaderd", ident, lease, timings)
        app = App()
    e.app = app
    return e


def app_death_trials(backend, gating, n, timings, tag, never_after):
    """n trials in a group of three gated leaderd: the leader's
    application killed -9, the seconds until another elector leads
    (None when none did within never_after seconds: then the trials
    stop)."""
    ld, rd, rp = timings
    lease = "bench-%s-app-%s" % (tag, gating)
    seq = [0]

    def new():
        seq[0] += 1
        return gated(backend, gating, "app-%s-%d" % (gating[:2], seq[0]),
                     lease, timings)

    group = []
    times = []
    try:
        group = [new() for _ in range(3)]
        for _ in range(n):
            old = _wait(lambda: _settled(group, lease), 3 * ld + 10)
            if old is None:
                print("    (no settled leader; trial skipped)")
                break
            time.sleep(rp * 1.5)
            rest = [e for e in group if e is not old]
            t0 = time.monotonic()
            old.app.p.send_signal(signal.SIGKILL)
            took = _wait(lambda: any(e.is_leader() for e in rest),
                         never_after, interval=0.001)
            if took is None:
                times.append(None)
                if not old.is_leader():
                    print("    (the old leader no longer leads, yet no "
                          "other does)")
                break
            times.append(time.monotonic() - t0)
            old.app.kill()
            old.stop()
            group = rest + [new()]
    finally:
        for e in group:
            e.app.kill()
            e.stop()
    return times


# -- coordinated election: the controller's preferredHolder ---------------

CLE_FLAGS = ("--feature-gates=CoordinatedLeaderElection=true",
             "--runtime-config=coordination.k8s.io/v1beta1=true")


def coordinated_trials(backend, kind, n, timings, tag):
    """n moves of a coordinated Lease (KEP-4355) made by the API server's
    election controller: the leader runs binary version 1.(n+1).0, a new
    candidate with the next older version starts, and the controller
    names it in spec.preferredHolder (strategy OldestEmulationVersion).
    Each figure is the seconds from the watch event that shows that
    preferredHolder (the controller's write) to the new candidate's
    is_leader; the old leader then stops.  leaderd
    hands the lease over with one write; client-go's coordinated elector
    stops renewing and the controller assigns the lease once it has
    expired."""
    ld, rd, rp = timings
    lease = "bench-%s-cle-%s" % (tag, kind)

    def new(v):
        ident = "%s-cle-%d" % (kind[:2], v)
        ver = "1.%d.0" % v
        if kind == "leaderd":
            return Elector(backend, kind, ident, lease, timings,
                           args=["--coordinated", "--binary-version", ver])
        return Elector(backend, kind, ident, lease, timings,
                       goargs=["-coordinated", "-binary-version", ver])

    v = n + 1
    old = new(v)
    times = []
    try:
        if _wait(old.is_leader, 60, interval=0.05) is None:
            print("    (the controller named no leader in 60 s)")
            return times
        for _ in range(n):
            time.sleep(rp * 1.5)
            v -= 1
            ident = "%s-cle-%d" % (kind[:2], v)
            hit = backend.watch_lease(lease, lambda o, ident=ident: (
                o.get("spec") or {}).get("preferredHolder") == ident)
            cand = new(v)
            hit.wait(60)
            hit.stop()
            seen = hit.t
            if seen is None:
                print("    (the controller did not prefer %s in 60 s)"
                      % cand.ident)
                cand.stop()
                break
            took = _wait(cand.is_leader, ld + 3 * rp + 30, interval=0.001)
            if took is None:
                print("    (%s did not lead in %.0f s)"
                      % (cand.ident, ld + 3 * rp + 30))
                cand.stop()
                break
            times.append(time.monotonic() - seen)
            old.stop()
            old = cand
    finally:
        old.stop()
    return times
