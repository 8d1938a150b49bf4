"""Process harness shared by the integration tests and the demo: a
wrapper around one leaderd process (config, kubeconfig, token, local API
client) and a leadership checker that samples every instance's /leader.

Python 3.11 standard library only."""

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import uuid

# Short timings for tests: lease_duration > renew_deadline > 1.2 x
# retry_period, request_timeout < renew_deadline.
LEASE_DURATION = 3.0
RENEW_DEADLINE = 2.0
RETRY_PERIOD = 0.5
REQUEST_TIMEOUT = 1.0

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def leaderd_binary():
    """$LEADERD, else ../../leaderd relative to this directory."""
    p = os.environ.get("LEADERD") or os.path.join(ROOT, "leaderd")
    return os.path.abspath(p)


class TestTimeout(Exception):
    """Raised in a test that ran past its time limit."""


@contextlib.contextmanager
def time_limit(seconds):
    """Raise TestTimeout in the main thread after `seconds` (SIGALRM), so
    no test waits without bound.  The conftests wrap every test in it."""
    def on_alarm(signum, frame):
        raise TestTimeout("test exceeded %ds" % seconds)
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def wait_until(pred, timeout, interval=0.02, what="condition"):
    """Poll pred() until it returns something truthy; return that.
    Raise AssertionError after timeout seconds."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() >= end:
            raise AssertionError("timed out after %.1fs waiting for %s"
                                 % (timeout, what))
        time.sleep(interval)


def fmt_duration(s):
    ms = int(round(s * 1000))
    if ms % 1000 == 0:
        return "%ds" % (ms // 1000)
    return "%dms" % ms


def yq(v):
    """A YAML scalar: JSON strings are valid YAML double-quoted scalars."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return json.dumps(v)


def _recv(sock, have_data):
    """recv; a reset after some data counts as the end of the answer (a
    server that closes with unread request bytes sends RST)."""
    try:
        return sock.recv(65536)
    except ConnectionResetError:
        if have_data:
            return b""
        raise


def read_http_response(sock, timeout=2.0, head=False):
    """Read one HTTP response from a connected socket.  Returns (status,
    headers dict with lower-case names, body bytes, rest bytes), or
    raises ConnectionError when the peer closes before a status line."""
    sock.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = _recv(sock, bool(buf))
        if not chunk:
            if not buf:
                raise ConnectionError("connection closed without an answer")
            break
        buf += chunk
    headpart, _, rest = buf.partition(b"\r\n\r\n")
    lines = headpart.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
    if not m:
        raise ConnectionError("bad status line %r" % lines[0])
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    if head:
        return int(m.group(1)), hdrs, b"", rest
    n = hdrs.get("content-length")
    if n is not None:
        n = int(n)
        while len(rest) < n:
            chunk = _recv(sock, True)
            if not chunk:
                break
            rest += chunk
        return int(m.group(1)), hdrs, rest[:n], rest[n:]
    while True:  # no length: read to close
        try:
            chunk = _recv(sock, True)
        except socket.timeout:
            break
        if not chunk:
            break
        rest += chunk
    return int(m.group(1)), hdrs, rest, b""


def unix_request(path, request, timeout=2.0, head=False):
    """Send raw bytes over a unix socket, return read_http_response()."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(request)
        st, h, b, _ = read_http_response(s, timeout, head=head)
        return st, h, b
    finally:
        s.close()


def tcp_request(port, request, timeout=2.0, head=False):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(request)
        st, h, b, _ = read_http_response(s, timeout, head=head)
        return st, h, b
    finally:
        s.close()


class Leaderd:
    """One leaderd process with its own config, kubeconfig and token."""

    def __init__(self, api, workdir, name, lock, namespace="default",
                 identity=None, http=True, unix=None,
                 lease_duration=LEASE_DURATION, renew_deadline=RENEW_DEADLINE,
                 retry_period=RETRY_PERIOD, request_timeout=REQUEST_TIMEOUT,
                 release_on_cancel=True, log_level="debug", log_format="text",
                 readyz_leader_only=None, token=None, token_file=True,
                 args=(), env=None, binary=None):
        self.api = api
        self.name = name
        self.identity = identity or name
        self.lock = lock
        self.namespace = namespace
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.binary = binary or leaderd_binary()
        self.port = free_port() if http else None
        self.unix = unix
        self.args = list(args)
        self.env = env
        # A command prefix the daemon runs under (ip netns exec NS).
        self.wrap = []
        self.proc = None
        self.token = token or "tok-%s-%s" % (name, uuid.uuid4().hex[:12])
        self.config_path = os.path.join(self.dir, "leaderd.yaml")
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        self.token_path = os.path.join(self.dir, "token")
        self.stderr_path = os.path.join(self.dir, "stderr.log")
        self.stdout_path = os.path.join(self.dir, "stdout.log")
        self.t_start = None
        api.add_token(self.token)
        if token_file:
            self.write_token(self.token)
            api.write_kubeconfig(self.kubeconfig, token_file=self.token_path,
                                 user=name, namespace=namespace)
        else:
            api.write_kubeconfig(self.kubeconfig, token=self.token, user=name,
                                 namespace=namespace)
        lines = [
            "identity: %s" % yq(self.identity),
            "lock:",
            "  type: leases",
            "  namespace: %s" % yq(namespace),
            "  name: %s" % yq(lock),
            "lease_duration: %s" % fmt_duration(lease_duration),
            "renew_deadline: %s" % fmt_duration(renew_deadline),
            "retry_period: %s" % fmt_duration(retry_period),
            "release_on_cancel: %s" % yq(bool(release_on_cancel)),
            "listen:",
            "  http: %s" % yq("127.0.0.1:%d" % self.port if http else ""),
            "  unix: %s" % yq(unix or ""),
            "kubernetes:",
            "  kubeconfig: %s" % yq(self.kubeconfig),
            "  request_timeout: %s" % fmt_duration(request_timeout),
            "log:",
            "  level: %s" % log_level,
            "  format: %s" % log_format,
        ]
        if readyz_leader_only is not None:
            lines += ["readyz:", "  leader_only: %s" % yq(readyz_leader_only)]
        with open(self.config_path, "w") as f:
            f.write("\n".join(lines) + "\n")

    def __repr__(self):
        return "Leaderd(%s pid=%s)" % (self.name,
                                       self.proc.pid if self.proc else None)

    def write_token(self, token):
        """Replace the token file atomically (as a kubelet rotation does)."""
        tmp = self.token_path + ".new"
        with open(tmp, "w") as f:
            f.write(token + "\n")
        os.replace(tmp, self.token_path)

    # -- process -----------------------------------------------------

    def start(self, wait=True, timeout=5.0):
        if not os.path.exists(self.binary):
            raise AssertionError("leaderd binary not found at %s (build it "
                                 "with make, or set $LEADERD)" % self.binary)
        env = dict(os.environ)
        env.pop("POD_NAME", None)
        env.pop("POD_NAMESPACE", None)
        env.pop("KUBERNETES_SERVICE_HOST", None)
        env.update(self.env or {})
        self._err = open(self.stderr_path, "ab")
        self._out = open(self.stdout_path, "ab")
        self.t_start = time.monotonic()
        self.proc = subprocess.Popen(
            self.wrap + [self.binary, "-f", self.config_path] + self.args,
            stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._err,
            env=env, cwd=self.dir)
        if wait:
            self.wait_listening(timeout)
        return self

    def wait_listening(self, timeout=5.0):
        def up():
            if self.proc.poll() is not None:
                raise AssertionError("%s exited with %s during start-up:\n%s"
                                     % (self.name, self.proc.returncode,
                                        self.log()))
            if self.port is not None:
                return self.get_status("/healthz") is not None
            return os.path.exists(self.unix) and \
                self.unix_get("/healthz") is not None
        wait_until(up, timeout, what="%s to listen" % self.name)

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        if self.alive():
            self.proc.send_signal(sig)

    def terminate(self):
        self.signal(signal.SIGTERM)

    def kill9(self):
        """SIGKILL and reap."""
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
        return self.proc.wait(5)

    def wait(self, timeout):
        """Exit status, or None if still running after timeout."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def cleanup(self, grace=3.0):
        """SIGTERM, then SIGKILL after a bounded wait.  Returns the exit
        status when this call stopped a running daemon (-9: it had to be
        killed), None when it was not running."""
        if self.proc is None:
            return None
        rc = None
        if self.alive():
            self.terminate()
            rc = self.wait(grace)
            if rc is None:
                self.proc.kill()
                self.proc.wait(5)
                rc = -9
        for f in (self._err, self._out):
            try:
                f.close()
            except OSError:
                pass
        return rc

    def log(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_count(self, text):
        return sum(1 for ln in self.log().splitlines() if text in ln)

    # -- local API ---------------------------------------------------

    def request(self, path, headers=None, timeout=0.5, method="GET"):
        """(status, headers, body bytes) over TCP, or raise OSError."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request(method, path, headers=headers or {})
            r = c.getresponse()
            body = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, body
        finally:
            c.close()

    def get_status(self, path, timeout=0.5):
        try:
            return self.request(path, timeout=timeout)[0]
        except (OSError, http.client.HTTPException):
            return None

    def get_json(self, path, timeout=0.5):
        st, _, body = self.request(path, timeout=timeout)
        return st, json.loads(body)

    def leader(self, timeout=0.3):
        """GET /leader as a dict; None if unreachable or not JSON."""
        try:
            if self.port is not None:
                st, _, body = self.request("/leader", timeout=timeout)
            else:
                st, _, body = self.unix_get("/leader", timeout=timeout)
            if st != 200:
                return None
            return json.loads(body)
        except (OSError, http.client.HTTPException, ValueError, TypeError):
            return None

    def is_leader(self):
        d = self.leader()
        return bool(d and d.get("is_leader") is True)

    def unix_get(self, path, headers=None, timeout=1.0, method="GET"):
        """(status, headers, body) over the unix socket; None on error."""
        req = "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" % (
            method, path)
        for k, v in (headers or {}).items():
            req += "%s: %s\r\n" % (k, v)
        req += "\r\n"
        try:
            return unix_request(self.unix, req.encode(), timeout,
                                head=(method == "HEAD"))
        except (OSError, ConnectionError):
            return None

    # -- server-side view -------------------------------------------

    def writes(self):
        """Successful writes this instance made (fakeapi history)."""
        return self.api.history(ns=self.namespace, name=self.lock,
                                token=self.token)


def wait_single_leader(insts, timeout):
    """Wait until exactly one live instance of insts says is_leader and
    every live one names it; return it."""
    def one():
        live = [i for i in insts if i.alive()]
        views = [(i, i.leader()) for i in live]
        if any(v is None for _, v in views):
            return None
        leads = [i for i, v in views if v["is_leader"] is True]
        if len(leads) != 1:
            return None
        if any(v["name"] != leads[0].identity for _, v in views):
            return None
        return leads[0]
    return wait_until(one, timeout, what="a single agreed leader")


class Sampler:
    """A thread that samples instances in turn every `interval` seconds
    (the subclass's _run), into self.samples; instances may be added
    while it runs."""

    thread_name = "sampler"

    def __init__(self, instances, interval=0.02):
        self.instances = list(instances)
        self.interval = interval
        self.samples = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    def add(self, inst):
        with self._lock:
            self.instances.append(inst)

    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name=self.thread_name)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)


class ElectionView:
    """One election of an instance with several (elections:), seen as an
    instance of its own by LeadershipChecker: its leader() is
    GET /leader/ELECTION."""

    def __init__(self, inst, election):
        self.inst = inst
        self.election = election
        self.name = inst.name
        self.proc = inst.proc

    def alive(self):
        return self.inst.alive()

    def leader(self, timeout=0.3):
        try:
            st, _, body = self.inst.request("/leader/" + self.election,
                                            timeout=timeout)
            return json.loads(body) if st == 200 else None
        except (OSError, ValueError):
            return None


def overlapping(windows):
    """Of claims (owner, first_t0, first_t1, last_t0, last_t1), the pairs
    of different owners that surely overlap, each as two (owner, from, to)
    with the widest bounds (LeadershipChecker.violations says why)."""
    bad = []
    for i, a in enumerate(windows):
        for b in windows[i + 1:]:
            if a[0] != b[0] and a[3] > b[2] and b[3] > a[2]:
                bad.append(((a[0], a[1], a[4]), (b[0], b[1], b[4])))
    return bad


class LeadershipChecker(Sampler):
    """Samples every instance's /leader about every `interval` seconds from
    one thread, in turn, recording (t0, t1, name, is_leader, answer): the
    daemon evaluated is_leader at some moment in [t0, t1].  Because the
    samples are taken one after the other, their windows never overlap."""

    thread_name = "leadership-checker"

    def _targets(self):
        """The instances to sample this round (called under the lock)."""
        return list(self.instances)

    def _run(self):
        while not self._stop.is_set():
            with self._lock:
                insts = self._targets()
            for inst in insts:
                if inst.proc is None:
                    continue
                t0 = time.monotonic()
                d = inst.leader(timeout=0.25) if inst.alive() else None
                t1 = time.monotonic()
                lead = bool(d is not None and d.get("is_leader") is True)
                with self._lock:
                    self.samples.append((t0, t1, inst.name, lead, d))
            self._stop.wait(self.interval)

    def snapshot(self):
        with self._lock:
            return list(self.samples)

    def of(self, name, since=None):
        return [s for s in self.snapshot() if s[2] == name and
                (since is None or s[0] >= since)]

    def first_true(self, name=None, since=None, exclude=()):
        """The first sample claiming leadership (optionally of name, not of
        any in exclude) taken at or after since; None if none."""
        for s in self.snapshot():
            if since is not None and s[0] < since:
                continue
            if name is not None and s[2] != name:
                continue
            if s[2] in exclude:
                continue
            if s[3]:
                return s
        return None

    def wait_first_true(self, timeout=2.0, **kw):
        """first_true(**kw), waiting up to timeout seconds for the sampling
        thread to take it: a test that has just seen a leader by its own
        request may be ahead of the checker's round."""
        end = time.monotonic() + timeout
        while True:
            s = self.first_true(**kw)
            if s is not None or time.monotonic() >= end:
                return s
            time.sleep(self.interval)

    def claim_windows(self):
        """Per instance, its claims as (name, first_t0, first_t1, last_t0,
        last_t1): the windows of the first true sample and of the last
        true sample before a false or unreachable one."""
        out = []
        open_ = {}
        for t0, t1, name, lead, _ in self.snapshot():
            if lead:
                if name in open_:
                    open_[name][3:5] = [t0, t1]
                else:
                    open_[name] = [name, t0, t1, t0, t1]
            elif name in open_:
                out.append(tuple(open_.pop(name)))
        out.extend(tuple(v) for v in open_.values())
        return sorted(out, key=lambda c: c[1])

    def claims(self):
        """Per instance, its claim intervals [t0 of the first true sample,
        t1 of the last true sample before a false or unreachable one]."""
        return [(c[0], c[1], c[4]) for c in self.claim_windows()]

    def violations(self):
        """The pairs of claims the samples prove overlapping, as claims()
        gives them.  A claim began at some moment of its first sample's
        window and lasted at least to some moment of its last one's, so
        two claims surely overlap only when each one's last sample began
        after the other's first sample ended.  A sample held up after the
        daemon answered (a checker thread starved of CPU, a SIGSTOP
        between the answer and its read) widens its window instead of
        inventing an overlap; on an idle machine the windows are a few
        milliseconds wide."""
        return overlapping([(c[0], c[1], c[2], c[3], c[4])
                            for c in self.claim_windows()])

    def assert_s1(self):
        """S1: no two instances claim leadership at overlapping times."""
        bad = self.violations()
        if bad:
            t0 = self.samples[0][0] if self.samples else 0
            msg = ["S1 violated: overlapping leadership claims "
                   "(name, from, to; seconds since the first sample):"]
            for a, b in bad:
                msg.append("  %s [%.3f, %.3f] and %s [%.3f, %.3f]" % (
                    a[0], a[1] - t0, a[2] - t0, b[0], b[1] - t0, b[2] - t0))
            raise AssertionError("\n".join(msg))
        return self.claims()
