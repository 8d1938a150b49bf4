"""Leadership follows the application: client-bound candidacy
(candidacy.require_client), pause and resume by hand, and the
application probe (candidacy.probe).

A client-bound instance is a candidate only while a local client holds a
/leader/watch or /sse stream: when the application dies its socket
closes, and the leader releases at once, so another instance leads in
milliseconds rather than after lease_duration.  A paused instance leaves
candidacy until resumed.  An instance whose application's probe fails is
no candidate: a leader releases at once, a follower never takes over,
and after such a release it waits candidacy.cooldown before it may take
the lease again.  /leader says why (candidate, candidate_reason), and
the stream carries the change."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from fakeapp import FakeApp, holding
from harness import RETRY_PERIOD as RP, free_port, wait_until
from test_security import local_non_loopback_ip

SLACK = 1.5
JITTER = 2.2


def add_config(inst, text):
    with open(inst.config_path, "a") as f:
        f.write(text)


def post(inst, path, timeout=3.0):
    st, _, body = inst.request(path, method="POST", timeout=timeout)
    return st, json.loads(body) if body else None


class Stream:
    """A local client holding GET /leader/watch open on inst's TCP port
    (or its unix socket), reading its events in the background.  With
    src, a peer off the loopback: from the address src to src:port (a
    wildcard listener), so that leaderd sees a non-loopback peer."""

    def __init__(self, inst, path="/leader/watch", unix=None, src=None):
        host = b"localhost"
        if unix:
            self.s = socket.socket(socket.AF_UNIX)
            self.s.connect(unix)
        elif src:
            self.s = socket.socket()
            self.s.bind((src, 0))
            self.s.settimeout(2)
            self.s.connect((src, inst.port))
            self.s.settimeout(None)
            host = b"%s:%d" % (src.encode(), inst.port)
        else:
            self.s = socket.create_connection(("127.0.0.1", inst.port), 2)
        self.s.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\n\r\n"
                       % (path.encode(), host))
        self.head = b""
        self.events = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        buf = b""
        while True:
            try:
                b = self.s.recv(4096)
            except OSError:
                return
            if not b:
                return
            buf += b
            if len(self.head) < 64:
                self.head += b[:64 - len(self.head)]
            while b"\n\n" in buf:
                ev, buf = buf.split(b"\n\n", 1)
                for line in ev.split(b"\n"):
                    if line.startswith(b"data: "):
                        self.events.append(json.loads(line[6:]))

    def status(self):
        """The answer's status: 200 for a stream, 503 when refused; None
        before the first bytes."""
        if not self.head.startswith(b"HTTP/1."):
            return None
        return int(self.head.split(b" ")[1])

    def close(self):
        # shutdown first: close alone leaves the descriptor open while
        # the reader thread sits in recv.
        try:
            self.s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.s.close()


def test_client_bound_leader_hands_over_when_its_client_dies(cluster):
    """Two client-bound instances, each with its application holding a
    stream: the leader's application is killed -9, the leader releases at
    once and the other leads well before lease_duration."""
    a = cluster.new("cb-a", args=["--require-client"])
    b = cluster.new("cb-b", args=["--require-client"])
    a.start()
    # No client yet: not a candidate, never leads.
    time.sleep(2 * RP)
    la = a.leader()
    assert la["candidate"] is False and la["candidate_reason"] == "no client"
    assert la["name"] == "" and not a.is_leader()
    pa = holding(a.port)
    try:
        wait_until(a.is_leader, JITTER * RP + SLACK, what="a leads")
        b.start()
        pb = holding(b.port)
        wait_until(lambda: (b.leader() or {}).get("name") == "cb-a", 3.0,
                   what="b follows a")
        assert b.leader()["candidate"] is True
        chk = cluster.checker()
        t0 = time.monotonic()
        pa.kill()
        pa.wait()
        wait_until(b.is_leader, 2.0, what="b takes over")
        took = time.monotonic() - t0
        print("application killed -9 -> new leader in %.3f s "
              "(lease_duration %.1f s)" % (took, cluster.lease_duration
                                          if hasattr(cluster,
                                                     "lease_duration")
                                          else 3.0))
        assert took < 1.5, took
        la = a.leader()
        assert la["candidate_reason"] == "no client" and not la["is_leader"]
        assert a.log_count("not a candidate: no client") >= 1
        chk.assert_s1()
        pb.kill()
        pb.wait()
    finally:
        for p in (pa,):
            if p.poll() is None:
                p.kill()


def test_client_bound_two_clients_and_the_grace(cluster):
    """Leading holds while one of two clients stays; with
    candidacy.client_grace, a client back within the grace keeps it."""
    a = cluster.new("cb-two", args=["--require-client"])
    add_config(a, "candidacy:\n  client_grace: 1s\n")
    a.start()
    s1 = Stream(a)
    s2 = Stream(a, path="/sse")
    wait_until(a.is_leader, JITTER * RP + SLACK, what="a leads")
    s1.close()
    time.sleep(0.5)
    assert a.is_leader(), "one client of two left: still leads"
    s2.close()
    # Within the grace, still a candidate and the leader...
    time.sleep(0.3)
    assert a.is_leader()
    s3 = Stream(a)
    time.sleep(1.2)
    assert a.is_leader(), "a client came back within the grace"
    t0 = time.monotonic()
    s3.close()
    wait_until(lambda: not a.is_leader(), 3.0, what="a releases")
    took = time.monotonic() - t0
    assert 0.9 <= took, "released before the grace ended: %.3f" % took
    # is_leader turns false at once; the release is written just after.
    wait_until(lambda: cluster.lease()["spec"].get("holderIdentity") in
               ("", None), 2.0, what="the release written")
    assert a.leader()["candidate_reason"] == "no client"


def test_client_over_the_unix_socket(cluster, tmp_path):
    sock = str(tmp_path / "ld.sock")
    a = cluster.new("cb-unix", http=False, unix=sock,
                    args=["--require-client"])
    a.start()
    s = Stream(a, unix=sock)
    wait_until(a.is_leader, JITTER * RP + SLACK, what="a leads")
    s.close()
    wait_until(lambda: not a.is_leader(), 2.0, what="a releases")


# -- which streams count (review L2) ---------------------------------

def not_a_candidate_for_a_while(inst):
    """inst stays out of candidacy for 2 retry periods: no client."""
    time.sleep(2 * RP)
    la = inst.leader()
    assert la["candidate"] is False, la
    assert la["candidate_reason"] == "no client", la
    assert not inst.is_leader()


def test_a_monitoring_stream_is_no_client(cluster):
    """Only the first election's stream (/leader/watch, /sse, and
    /leader/NAME/watch for its NAME) is the application's: a monitoring
    client on /leaders/watch keeps nobody a candidate, and it does not
    keep a leader whose application left."""
    a = cluster.new("cb-mon", args=["--require-client"])
    a.start()
    mon = Stream(a, path="/leaders/watch")
    try:
        wait_until(lambda: mon.events, 2.0, what="the monitor is served")
        not_a_candidate_for_a_while(a)
        app = Stream(a)
        wait_until(a.is_leader, JITTER * RP + SLACK, what="a leads")
        app.close()
        wait_until(lambda: not a.is_leader(), 2.0,
                   what="a releases, the monitor still there")
        assert a.leader()["candidate_reason"] == "no client"
        # The first election's own path is the same stream: it counts.
        app = Stream(a, path="/leader/%s/watch" % a.lock)
        wait_until(lambda: a.log_count("a candidate again") == 2, 2.0,
                   what="a candidate again (then its cooldown)")
        app.close()
    finally:
        mon.close()


def test_a_peers_own_stream_is_the_applications(cluster):
    """Under compat nais, GET /sse is nais/elector's own stream (another
    channel): it is the application's, and it counts."""
    a = cluster.new("cb-nais")
    with open(a.config_path) as f:
        text = f.read()
    with open(a.config_path, "w") as f:
        f.write(text.replace("listen:\n", "listen:\n  probes: \"\"\n"
                             "  metrics: \"\"\n", 1))
    add_config(a, "compat: nais\ncandidacy:\n  require_client: true\n")
    a.start()
    time.sleep(2 * RP)
    assert a.log_count("not a candidate yet: no client") == 1
    assert a.log_count("a candidate again") == 0
    app = Stream(a, path="/sse")
    try:
        wait_until(lambda: a.log_count("a candidate again") == 1, 2.0,
                   what="a candidate with the /sse stream")
        wait_until(lambda: app.status() == 200, 2.0, what="/sse's 200")
    finally:
        app.close()
    wait_until(lambda: a.log_count("not a candidate: no client") == 1, 2.0,
               what="no candidate once the stream is gone")


def test_a_shard_members_application_holds_leader_watch(cluster):
    """In a shard group, the application's stream is /leader/watch (the
    member Lease's, the first election): /shards/watch, a monitor's
    stream here, keeps the member out of candidacy and owning nothing."""
    from shardkit import member_config, shards
    a = cluster.new("cb-shard", args=["--require-client"])
    member_config(a, "cbs%d" % (os.getpid() % 100000), 2)
    a.start()
    mon = Stream(a, path="/shards/watch")
    app = None
    try:
        wait_until(lambda: mon.events, 2.0, what="the monitor is served")
        not_a_candidate_for_a_while(a)
        assert shards(a)["owned"] == []
        app = Stream(a)
        wait_until(lambda: len((shards(a) or {}).get("owned", [])) == 2,
                   JITTER * RP + SLACK + 3.0, what="a owns both shards")
    finally:
        mon.close()
        if app:
            app.close()


def wildcard(inst):
    """inst's listen.http on every address (0.0.0.0), same port."""
    inst.args += ["--http", "0.0.0.0:%d" % inst.port]


def test_a_stream_from_off_the_pod_is_no_client(cluster):
    """listen.http on a wildcard address: a peer off the loopback (another
    pod) holding /leader/watch keeps nobody a candidate; the start-up
    log warns that only this pod's streams count."""
    ip = local_non_loopback_ip()
    a = cluster.new("cb-remote", args=["--require-client"])
    wildcard(a)
    a.start()
    assert "only streams from this pod" in a.log()
    remote = Stream(a, src=ip)
    try:
        wait_until(lambda: remote.events, 2.0, what="the peer is served")
        not_a_candidate_for_a_while(a)
        app = Stream(a)
        wait_until(a.is_leader, JITTER * RP + SLACK, what="a leads")
        app.close()
        wait_until(lambda: not a.is_leader(), 2.0,
                   what="a releases, the peer still there")
    finally:
        remote.close()


def test_peers_off_the_pod_leave_the_application_a_stream(cluster):
    """Peers off the loopback together hold at most half of
    listen.max_streams: with every slot they may have taken, the
    application's own stream is still served, and it leads."""
    ip = local_non_loopback_ip()
    a = cluster.new("cb-slots", args=["--require-client"])
    wildcard(a)
    with open(a.config_path) as f:
        text = f.read()
    with open(a.config_path, "w") as f:
        f.write(text.replace("listen:\n", "listen:\n  max_streams: 8\n", 1))
    a.start()
    # One peer may hold 8 connections (HTTPD_PEER_MAX): all streams.
    remote = [Stream(a, src=ip) for _ in range(8)]
    try:
        wait_until(lambda: all(r.status() for r in remote), 3.0,
                   what="every peer's stream answered")
        app = Stream(a)
        wait_until(lambda: app.status(), 2.0, what="the app answered")
        assert app.status() == 200, app.head
        wait_until(a.is_leader, JITTER * RP + SLACK, what="a leads")
        served = sum(1 for r in remote if r.status() == 200)
        assert served == 4, served
        app.close()
    finally:
        for r in remote:
            r.close()


def test_peers_off_the_pod_leave_the_application_a_blocking_read(cluster):
    """The same share for blocking reads (GET /leader?wait=): peers off
    the loopback hold at most half of listen.max_streams waiting, and
    this pod's read still waits instead of getting a 503."""
    ip = local_non_loopback_ip()
    a = cluster.new("wt-slots")
    wildcard(a)
    with open(a.config_path) as f:
        text = f.read()
    with open(a.config_path, "w") as f:
        f.write(text.replace("listen:\n", "listen:\n  max_streams: 8\n", 1))
    a.start()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    index = a.leader()["index"]
    req = "GET /leader?wait=30s&index=%d HTTP/1.1\r\nHost: %%s\r\n\r\n" % index

    def read(src):
        s = socket.socket()
        s.bind((src, 0))
        s.settimeout(2)
        s.connect((src, a.port))
        s.sendall((req % ("%s:%d" % (src, a.port))).encode())
        return s
    remote = [read(ip) for _ in range(8)]
    app = None
    try:
        time.sleep(0.3)
        app = read("127.0.0.1")
        app.settimeout(0.5)
        try:
            got = app.recv(64)
        except socket.timeout:
            got = b""
        assert got == b"", "this pod's read did not wait: %r" % got
        refused = 0
        for s in remote:
            s.settimeout(0.1)
            try:
                if s.recv(64).startswith(b"HTTP/1.1 503"):
                    refused += 1
            except socket.timeout:
                pass
        assert refused == 4, refused
    finally:
        for s in remote + ([app] if app else []):
            s.close()


def test_require_client_beside_a_non_loopback_listener_warns(leaderd_bin):
    """-n says that only this pod's streams count, where listen.http came
    from, and the fix; a loopback listener gets no warning."""
    base = [leaderd_bin, "--election=x", "--election-namespace=y",
            "--id=a", "--require-client", "-n"]
    p = subprocess.run(base + ["--http=0.0.0.0:4040"], capture_output=True,
                       text=True, timeout=10)
    assert p.returncode == 0, p.stderr
    assert "configuration OK" in p.stdout
    assert "warning: --http: listen.http \"0.0.0.0:4040\"" in p.stderr, \
        p.stderr
    assert "only streams from this pod" in p.stderr
    assert "listen.probes" in p.stderr
    for ok in ("localhost:4040", "127.0.0.1:4040", "[::1]:4040"):
        p = subprocess.run(base + ["--http=" + ok], capture_output=True,
                           text=True, timeout=10)
        assert p.returncode == 0 and "warning" not in p.stderr, \
            (ok, p.stderr)


def test_pause_and_resume(cluster):
    """POST /leader/pause: the leader releases at once and another leads;
    a paused instance never takes the lease, even a free one; POST
    /leader/resume makes it a candidate again.  The stream reports the
    change; a follower can be paused too; both are local-only."""
    a = cluster.new("pz-a")
    b = cluster.new("pz-b")
    a.start()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    b.start()
    wait_until(lambda: (b.leader() or {}).get("name") == "pz-a", 3.0,
               what="b follows")
    watch = Stream(b)
    chk = cluster.checker()
    st, body = post(a, "/leader/pause")
    assert st == 200 and body["paused"] is True, body
    assert body["candidate"] is False and body["is_leader"] is False
    wait_until(b.is_leader, JITTER * RP + SLACK, what="b takes over")
    la = a.leader()
    assert la["candidate"] is False and la["candidate_reason"] == "paused"
    # Pause the new leader too: the lease stays free; a stays out.
    st, body = post(b, "/leader/pause")
    assert st == 200
    wait_until(lambda: cluster.lease()["spec"].get("holderIdentity") in
               ("", None), 3.0, what="b released")
    time.sleep(3 * RP)
    assert not a.is_leader() and not b.is_leader()
    assert any(e.get("candidate_reason") == "paused" for e in watch.events)
    # Resume a: it takes the free lease (no cooldown after a pause).
    st, body = post(a, "/leader/resume")
    assert st == 200 and body["paused"] is False and body["candidate"]
    wait_until(a.is_leader, JITTER * RP + SLACK, what="a leads again")
    st, body = post(b, "/leader/resume")
    assert st == 200
    lb = b.leader()
    assert lb["candidate"] is True and lb["candidate_reason"] == ""
    chk.assert_s1()
    watch.close()
    st, body = post(a, "/leader/pause?now=1")
    assert st == 400
    st, _, _ = a.request("/leader/pause", timeout=2.0)
    assert st == 405


# -- the application probe ---------------------------------------------

def probed(cluster, name, app, period="200ms", timeout="100ms",
           failures=2, cooldown=None):
    inst = cluster.new(name)
    text = ("candidacy:\n  probe:\n    url: %s\n    period: %s\n"
            "    timeout: %s\n    failure_threshold: %d\n" % (
                app.url(), period, timeout, failures))
    if cooldown:
        text += "  cooldown: %s\n" % cooldown
    add_config(inst, text)
    return inst


def test_unhealthy_leader_hands_over(cluster):
    """The leader's application answers 500: after failure_threshold
    probes it releases, and the other leads; its metrics and /leader say
    so, and an Event names the reason."""
    apps = [FakeApp(), FakeApp()]
    try:
        a = probed(cluster, "pr-a", apps[0])
        b = probed(cluster, "pr-b", apps[1])
        a.start()
        wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
        b.start()
        wait_until(lambda: (b.leader() or {}).get("name") == "pr-a", 3.0,
                   what="b follows")
        chk = cluster.checker()
        t0 = time.monotonic()
        apps[0].mode = "fail"
        wait_until(b.is_leader, 0.2 * 2 + 0.1 + JITTER * RP + SLACK,
                   what="b takes over")
        print("app unhealthy -> new leader in %.3f s (period 0.2 s x 2)"
              % (time.monotonic() - t0))
        la = a.leader()
        assert la["candidate"] is False
        assert la["candidate_reason"] == "app unhealthy"
        st, _, m = a.request("/metrics")
        text = m.decode()
        assert 'leaderd_candidate{name="%s"} 0' % cluster.lock in text
        st, _, m = b.request("/metrics")
        assert '\nleaderd_candidate{name="%s"} 1\n' % cluster.lock \
            in m.decode()
        assert 'leaderd_app_probe_total{result="failure",name="%s"}' % \
            cluster.lock in text
        assert "leaderd_app_probe_duration_seconds_count" in text
        assert a.log_count("the application's probe failed: status 500") \
            >= 1
        evs = [e for e in cluster.api.events()
               if "not a candidate (app unhealthy)" in e.get("message", "")]
        assert evs, "no Event for the release"
        chk.assert_s1()
    finally:
        for x in apps:
            x.die()


def test_hanging_app_is_bounded_by_the_timeouts(cluster):
    apps = [FakeApp(), FakeApp()]
    try:
        a = probed(cluster, "hg-a", apps[0])
        b = probed(cluster, "hg-b", apps[1])
        a.start()
        wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
        b.start()
        wait_until(lambda: (b.leader() or {}).get("name") == "hg-a", 3.0,
                   what="b follows")
        t0 = time.monotonic()
        apps[0].mode = "silent"
        wait_until(lambda: not a.is_leader(), 0.2 * 2 + 0.1 + 0.5,
                   what="a releases (period x threshold + timeout)")
        released = time.monotonic() - t0
        wait_until(b.is_leader, JITTER * RP + SLACK, what="b leads")
        print("app hangs -> a released after %.3f s (bound 0.5 s)"
              % released)
    finally:
        for x in apps:
            x.die()


def test_app_never_started_never_leads(cluster):
    """Nothing listens on the probe's port: the instance is never a
    candidate, and the lease stays free (no leader, said plainly)."""
    port = free_port()
    a = cluster.new("ns-a")
    add_config(a, "candidacy:\n  probe:\n    url: tcp://127.0.0.1:%d\n"
               "    period: 200ms\n    timeout: 100ms\n" % port)
    a.start()
    la = a.leader()
    assert la["candidate"] is False
    assert la["candidate_reason"] in ("app not yet probed", "app unhealthy")
    time.sleep(1.5)
    la = a.leader()
    assert la["candidate_reason"] == "app unhealthy" and la["name"] == ""
    assert not a.is_leader()
    assert cluster.lease() is None, "the lease was created"
    # The application starts: a candidate, and it leads.
    srv = socket.socket()
    srv.bind(("127.0.0.1", port))
    srv.listen(16)
    try:
        wait_until(a.is_leader, 0.2 + JITTER * RP + SLACK + 1.0,
                   what="a leads once its app is up")
    finally:
        srv.close()


def test_flapping_app_moves_leadership_once_per_cooldown(cluster):
    """The leader's application flaps (healthy, unhealthy, healthy...):
    after its release it stays out for candidacy.cooldown, so leadership
    moves at most once per cooldown."""
    apps = [FakeApp(), FakeApp()]
    try:
        a = probed(cluster, "fl-a", apps[0], failures=1, cooldown="3s")
        b = probed(cluster, "fl-b", apps[1], failures=1, cooldown="3s")
        a.start()
        wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
        b.start()
        wait_until(lambda: (b.leader() or {}).get("name") == "fl-a", 3.0,
                   what="b follows")
        chk = cluster.checker()
        apps[0].mode = "fail"
        wait_until(b.is_leader, 3.0, what="b takes over")
        apps[0].mode = "ok"
        # b's application now flaps too; a is healthy but cooling down.
        t0 = time.monotonic()
        moves = 0
        last = "fl-b"
        while time.monotonic() - t0 < 2.5:
            apps[1].mode = "fail" if apps[1].mode == "ok" else "ok"
            time.sleep(0.25)
            lb = b.leader() or {}
            if lb.get("name") and lb["name"] != last:
                moves += 1
                last = lb["name"]
        assert a.leader()["candidate_reason"] in ("cooldown", "")
        assert moves <= 1, moves
        chk.assert_s1()
    finally:
        for x in apps:
            x.die()


def test_probe_host_elsewhere_is_refused(leaderd_bin, tmp_path):
    """A probe of another host would let another pod's health decide
    this one's candidacy: exit 2 with the fix."""
    p = subprocess.run([leaderd_bin, "--election=x", "--election-namespace=y",
                        "--kubeconfig=/dev/null", "-n",
                        "--app-probe=http://192.0.2.1:8080/healthz"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 2
    assert "is not this pod" in p.stderr and "any_host" in p.stderr
