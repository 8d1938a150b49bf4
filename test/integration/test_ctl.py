"""The control commands in the daemon's binary: `leaderd status`,
`release`, `pause`, `resume` and `wait-leader`, run as `kubectl exec POD
-c leaderd -- leaderd status` runs them, against real leaderd processes
over TCP and over the unix socket.

Exit status (leaderd(8) EXIT STATUS): 0 done, 1 the daemon said no, 2
usage, 3 cannot reach leaderd (or what answered is not leaderd), 4
wait-leader timed out."""

import http.server
import json
import os
import re
import socket
import subprocess
import threading
import time

from harness import RETRY_PERIOD as RP, free_port, leaderd_binary, wait_until

SLACK = 1.5
JITTER = 2.2
LEADS = JITTER * RP + SLACK + 2.0


def ctl(*args, timeout=30):
    """Run `leaderd ARGS...`; (exit status, stdout, stderr)."""
    env = dict(os.environ)
    env.pop("KUBERNETES_SERVICE_HOST", None)
    p = subprocess.run([leaderd_binary()] + list(args),
                       stdin=subprocess.DEVNULL, capture_output=True,
                       env=env, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), \
        p.stderr.decode(errors="replace")


def tcp(inst):
    return ["--http", "127.0.0.1:%d" % inst.port]


def unix(inst):
    return ["--unix-socket", inst.unix]


def fields(text):
    """The `key: value` lines of status's human output, as a dict."""
    out = {}
    for ln in text.splitlines():
        k, sep, v = ln.partition(":")
        assert sep, "not a key: value line: %r" % ln
        out[k.strip()] = v.strip()
    return out


def pair(cluster, sockdir):
    """a leads, b follows; both on TCP and on a unix socket."""
    a = cluster.start("c-a", unix=sockdir + "/a.sock")
    wait_until(a.is_leader, LEADS, what="a leads")
    b = cluster.start("c-b", unix=sockdir + "/b.sock")
    wait_until(lambda: (b.leader() or {}).get("name") == "c-a", 3.0,
               what="b follows a")
    return a, b


def test_status_human_and_json(api, cluster, sockdir):
    a, b = pair(cluster, sockdir)
    lock = "leases/default/%s" % cluster.lock
    for where in (tcp(a), unix(a)):
        rc, out, err = ctl("status", *where)
        assert rc == 0, (rc, out, err)
        f = fields(out)
        assert f["holder"] == "c-a"
        assert f["leader"] == "yes (this instance)"
        assert f["identity"] == "c-a"
        assert f["lock"] == lock
        assert f["state"] == "leader"
        token = a.leader()["fencing_token"]
        assert re.fullmatch(r"\d{10}-.+", token)
        assert f["fencing token"] == token
        assert re.fullmatch(r"[0-9.]+(ms|s)", f["valid for"]), f
    for where in (tcp(b), unix(b)):
        rc, out, err = ctl("status", *where)
        assert rc == 0, (rc, out, err)
        f = fields(out)
        assert f["holder"] == "c-a"
        assert f["leader"] == "no"
        assert f["identity"] == "c-b"
        assert f["state"] == "follower"
        assert f["valid for"] == "- (not leading)"
    # --json: the daemon's /leader document, as it is.
    for inst, where in ((a, tcp(a)), (a, unix(a)), (b, tcp(b)),
                        (b, unix(b))):
        rc, out, err = ctl("status", "--json", *where)
        assert rc == 0, (rc, out, err)
        assert out.count("\n") == 1
        doc = json.loads(out)
        want = inst.leader()
        assert doc["identity"] == inst.identity
        assert doc["is_leader"] is (inst is a)
        assert doc["name"] == "c-a"
        assert set(doc) == set(want)
    # -f: the file's listeners, the unix socket first.
    rc, out, err = ctl("status", "-f", b.config_path)
    assert rc == 0 and fields(out)["identity"] == "c-b", (rc, out, err)
    assert b.log_count("http: GET /leader -> 200") >= 1


def test_status_from_a_file_with_tcp_only(api, cluster):
    a = cluster.start("c-t")
    wait_until(a.is_leader, LEADS, what="a leads")
    rc, out, err = ctl("status", "-f", a.config_path)
    assert rc == 0, (rc, out, err)
    assert fields(out)["leader"] == "yes (this instance)"
    # A file without a local API listener: nothing to ask (2).
    path = os.path.join(a.dir, "none.yaml")
    with open(path, "w") as f:
        f.write("listen:\n  http: \"\"\n  unix: \"\"\n")
    rc, out, err = ctl("status", "-f", path)
    assert rc == 2, (rc, out, err)
    assert "no local API listener" in err


def test_release_moves_leadership(api, cluster, sockdir):
    a, b = pair(cluster, sockdir)
    chk = cluster.checker()
    rc, out, err = ctl("release", *unix(a))
    assert rc == 0, (rc, out, err)
    assert out.startswith("released: this instance no longer leads"), out
    assert not a.is_leader()
    wait_until(b.is_leader, LEADS, what="b takes over")
    # On a follower: refused with the daemon's reason (1).
    rc, out, err = ctl("release", *tcp(a))
    assert rc == 1, (rc, out, err)
    assert out == ""
    assert "refused (409): not the leader" in err, err
    rc, out, err = ctl("release", "--json", *unix(a))
    assert rc == 1, (rc, out, err)
    assert json.loads(out) == {"error": "not the leader", "status": 409}
    assert b.is_leader()
    chk.assert_s1()


def test_wildcard_listener_refuses_and_the_hint_works(api, cluster,
                                                     sockdir):
    """Moving leadership is refused (403, exit 1) on a listener bound to
    a wildcard, whatever address the request comes from: neither --http
    with the loopback address nor -f of a file whose only listener it is
    gets round it.  The hint says what does, and it works: listen.unix,
    then --unix-socket or -f with that file."""
    a = cluster.new("c-w", unix=sockdir + "/w.sock")
    with open(a.config_path) as f:
        text = f.read()
    text = text.replace("127.0.0.1:%d" % a.port, "0.0.0.0:%d" % a.port)
    with open(a.config_path, "w") as f:
        f.write(text)
    tcp_only = os.path.join(a.dir, "tcp-only.yaml")
    with open(tcp_only, "w") as f:
        f.write(re.sub(r"(?m)^  unix: .*$", '  unix: ""', text))
    a.start()
    wait_until(a.is_leader, LEADS, what="a leads")
    for how in (tcp(a), ["-f", tcp_only]):
        rc, out, err = ctl("pause", *how)
        assert rc == 1, (how, rc, out, err)
        assert "refused (403)" in err, err
        assert "give leaderd listen.unix and use --unix-socket PATH (or " \
            "-f with that file), or bind listen.http to localhost" in err, err
        assert "--http with the loopback address" not in err, err
    for how in (unix(a), ["-f", a.config_path]):
        rc, out, err = ctl("pause", *how)
        assert rc == 0, (how, rc, out, err)
        rc, out, err = ctl("resume", *how)
        assert rc == 0, (how, rc, out, err)


def test_release_to_and_pause_say_what_the_daemon_said(api, cluster,
                                                       sockdir):
    """release --to, pause and resume need daemon routes that a leaderd
    may not serve yet: the refusal is reported with the daemon's words
    and what to do (1), and nothing moves.  A leaderd that serves them
    must do what was asked."""
    a, b = pair(cluster, sockdir)
    rc, out, err = ctl("release", "--to", "c-b", *unix(a))
    if rc == 1:
        assert "POST /leader/release?to=c-b: refused (400)" in err, err
        assert "does not support release --to" in err, err
        assert a.is_leader()
    else:
        assert rc == 0, (rc, out, err)
        wait_until(b.is_leader, LEADS, what="b is handed the lease")
        a, b = b, a
    rc, out, err = ctl("pause", *unix(a))
    if rc == 1:
        assert "POST /leader/pause: refused (404): not found" in err, err
        assert "does not serve it" in err, err
        assert a.is_leader()
        rc, out, err = ctl("resume", *unix(a))
        assert rc == 1 and "POST /leader/resume: refused (404)" in err, err
    else:
        assert rc == 0 and out.startswith("paused"), (rc, out, err)
        wait_until(b.is_leader, LEADS, what="b takes over from paused a")
        rc, out, err = ctl("resume", *unix(a))
        assert rc == 0 and out.startswith("resumed"), (rc, out, err)
    # An identity is sent escaped, and the daemon reads it back whole.
    rc, out, err = ctl("release", "--to", "a b&c=d", *unix(a))
    if rc == 1:
        assert "?to=a%20b%26c%3Dd" in err, err


def test_wait_leader(api, cluster, sockdir):
    a, b = pair(cluster, sockdir)
    # On the leader: at once.
    t0 = time.monotonic()
    rc, out, err = ctl("wait-leader", *tcp(a))
    assert rc == 0, (rc, out, err)
    assert time.monotonic() - t0 < 1.0
    assert out.startswith("leading: c-a leads leases/default/%s, fencing "
                          "token %s\n" % (cluster.lock,
                                           a.leader()["fencing_token"])), out
    rc, out, err = ctl("wait-leader", "--json", *unix(a))
    assert rc == 0 and json.loads(out)["is_leader"] is True
    # On a follower: not within the timeout (4), with blocking reads.
    before = b.log_count("http: GET /leader")
    t0 = time.monotonic()
    rc, out, err = ctl("wait-leader", "--timeout", "1500ms", *tcp(b))
    took = time.monotonic() - t0
    assert rc == 4, (rc, out, err)
    assert 1.4 <= took < 3.0, took
    assert "not the leader after 1.5s (holder: c-a, state: follower)" in err
    assert b.log_count("http: GET /leader") - before <= 4
    assert b.log_count("waits") >= 1
    rc, out, err = ctl("wait-leader", "--timeout", "0s", *unix(b))
    assert rc == 4, (rc, out, err)
    # A follower that becomes leader during the wait: 0 once it leads.
    res = {}

    def wait():
        res["r"] = ctl("wait-leader", "--timeout", "20s", *unix(b))
        res["t"] = time.monotonic()
    th = threading.Thread(target=wait)
    th.start()
    time.sleep(0.8)
    assert "r" not in res
    t0 = time.monotonic()
    rc, out, err = ctl("release", *unix(a))
    assert rc == 0, (rc, out, err)
    th.join(LEADS + 5.0)
    assert not th.is_alive()
    rc, out, err = res["r"]
    assert rc == 0, (rc, out, err)
    assert out.startswith("leading: c-b leads"), out
    assert res["t"] - t0 < LEADS
    assert b.is_leader()


def test_wait_leader_where_nothing_may_wait(api, cluster):
    """With listen.max_streams 0 the daemon refuses blocking reads
    (503): wait-leader falls back to plain reads once a second, never a
    tight loop, and still sees the takeover."""
    a = cluster.start("c-na")
    wait_until(a.is_leader, LEADS, what="a leads")
    b = cluster.new("c-nb")
    with open(b.config_path) as f:
        text = f.read()
    with open(b.config_path, "w") as f:
        f.write(text.replace("listen:\n", "listen:\n  max_streams: 0\n",
                             1))
    b.start()
    wait_until(lambda: (b.leader() or {}).get("name") == "c-na", 3.0,
               what="b follows a")
    before = b.log_count("http: GET /leader")
    t0 = time.monotonic()
    rc, out, err = ctl("wait-leader", "--timeout", "2500ms", *tcp(b))
    assert rc == 4, (rc, out, err)
    assert 2.4 <= time.monotonic() - t0 < 4.0
    # A plain read, one refused wait, then one read a second.
    assert 3 <= b.log_count("http: GET /leader") - before <= 7
    assert b.log_count("requests wait; refusing one more") >= 1
    res = {}

    def wait():
        res["r"] = ctl("wait-leader", "--timeout", "15s", *tcp(b))
    th = threading.Thread(target=wait)
    th.start()
    time.sleep(0.5)
    rc, out, err = ctl("release", *tcp(a))
    assert rc == 0, (rc, out, err)
    th.join(LEADS + 5.0)
    assert not th.is_alive()
    assert res["r"][0] == 0, res["r"]
    assert b.is_leader()


def test_wait_leader_daemon_goes_away(api, cluster, sockdir):
    """A wait without a limit ends when the daemon stops: 3, not a hang
    nor a tight loop of reconnects."""
    a, b = pair(cluster, sockdir)
    p = subprocess.Popen([leaderd_binary(), "wait-leader"] + tcp(b),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.8)
    assert p.poll() is None
    b.terminate()
    try:
        out, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise AssertionError("wait-leader outlived its daemon")
    assert p.returncode == 3, (p.returncode, out, err)
    # Its last answer, then nothing listens; or, when the daemon stops
    # before it answers, the connection is reset.
    assert re.search(rb"^leaderd: wait-leader: (cannot reach leaderd: "
                     rb"127\.0\.0\.1:\d+: .*Connection refused|the "
                     rb"connection to leaderd at 127\.0\.0\.1:\d+ failed: )",
                     err), err


class Stub(http.server.ThreadingHTTPServer):
    """A local API that answers each (method, path) with a canned
    answer and records the requests, for the answers a leaderd of this
    tree does not give yet (a directed handover, pause and resume) and
    for what the client sends."""

    def __init__(self, answers):
        self.answers = answers
        self.seen = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def answer(self):
                stub.seen.append((self.command, self.path,
                                  self.headers.get("Host"),
                                  self.headers.get("Connection"),
                                  self.request_version))
                status, body = stub.answers[(self.command, self.path)]
                data = (json.dumps(body) + "\n").encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            do_GET = do_POST = answer

            def log_message(self, *args):
                pass
        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def where(self):
        return ["--http", "127.0.0.1:%d" % self.server_address[1]]


def test_requests_and_answers_to_come():
    """What the client sends (method, path, Host: localhost, one
    connection per request), and how it shows the answers of routes
    that other changes add to the daemon: release --to, pause and
    resume, a release not written yet (202), candidacy in /leader."""
    leader = {"name": "pod-b", "is_leader": False, "identity": "pod-a",
              "lock": "leases/ns/app", "state": "follower",
              "transitions": 3, "fencing_token": "0000000003-u",
              "valid_for_ms": 0, "index": 4, "candidate": False,
              "candidate_reason": "app unhealthy"}
    stub = Stub({
        ("GET", "/leader"): (200, leader),
        ("POST", "/leader/release?to=pod-b%2F%C3%A9"): (200, {
            "released": True, "is_leader": False, "cooldown_ms": 15000}),
        ("POST", "/leader/release"): (202, {
            "released": False, "is_leader": False, "cooldown_ms": 15000,
            "reason": "the release is not written yet; leaderd no "
                      "longer leads and keeps trying"}),
        ("POST", "/leader/pause"): (200, {
            "paused": True, "candidate": False,
            "candidate_reason": "paused", "is_leader": False}),
        ("POST", "/leader/resume"): (200, {
            "paused": False, "candidate": False,
            "candidate_reason": "app unhealthy", "is_leader": False}),
    })
    try:
        rc, out, err = ctl("status", *stub.where())
        assert rc == 0, (rc, out, err)
        f = fields(out)
        assert f["candidate"] == "no (app unhealthy)"
        assert f["holder"] == "pod-b" and f["leader"] == "no"
        rc, out, err = ctl("release", "--to", "pod-b/\u00e9", *stub.where())
        assert (rc, out) == (0, "released: this instance no longer leads; "
                             "the lease goes to pod-b/\u00e9, and stays out "
                             "of the election for 15s\n"), (rc, out, err)
        rc, out, err = ctl("release", *stub.where())
        assert rc == 0, (rc, out, err)
        # Each clause once, whatever reason the daemon gives.
        assert out == ("this instance no longer leads; the release is not "
                       "written yet: leaderd keeps trying, and the lease "
                       "expires anyway\n"), out
        rc, out, err = ctl("pause", *stub.where())
        assert (rc, out) == (0, "paused: this instance is not a candidate "
                             "and does not lead\n"), (rc, out, err)
        rc, out, err = ctl("resume", *stub.where())
        assert (rc, out) == (0, "resumed: not a candidate yet (app "
                             "unhealthy)\n"), (rc, out, err)
        rc, out, err = ctl("resume", "--json", *stub.where())
        assert rc == 0 and json.loads(out)["candidate_reason"] == \
            "app unhealthy", (rc, out, err)
        assert [s[:2] for s in stub.seen] == [
            ("GET", "/leader"),
            ("POST", "/leader/release?to=pod-b%2F%C3%A9"),
            ("POST", "/leader/release"), ("POST", "/leader/pause"),
            ("POST", "/leader/resume"), ("POST", "/leader/resume")]
        assert {s[2:] for s in stub.seen} == {("localhost", "close",
                                               "HTTP/1.1")}
    finally:
        stub.shutdown()
        stub.server_close()


def test_cannot_reach(tmp_path):
    port = free_port()
    rc, out, err = ctl("status", "--http", "127.0.0.1:%d" % port)
    assert rc == 3, (rc, out, err)
    # The address once: the connect's error names it.
    assert "leaderd: status: cannot reach leaderd: 127.0.0.1:%d: " \
        "Connection refused; is it running" % port in err, err
    rc, out, err = ctl("wait-leader", "--json", "--unix-socket",
                       str(tmp_path / "none.sock"))
    assert rc == 3 and out == "", (rc, out, err)
    assert "none.sock: No such file or directory" in err, err
    # Something that is not leaderd, and something that never answers:
    # 3, each within the request's time limit.
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)

    def serve():
        c, _ = srv.accept()
        c.recv(4096)
        c.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
        c.close()
    th = threading.Thread(target=serve, daemon=True)
    th.start()
    try:
        rc, out, err = ctl("status", "--http",
                           "127.0.0.1:%d" % srv.getsockname()[1])
        assert rc == 3, (rc, out, err)
        assert "not an HTTP/1.x answer" in err, err
    finally:
        srv.close()
    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(4)
    try:
        t0 = time.monotonic()
        rc, out, err = ctl("status", "--http",
                           "127.0.0.1:%d" % mute.getsockname()[1])
        assert rc == 3, (rc, out, err)
        assert "did not answer GET /leader within 5000 ms" in err, err
        assert 4.5 < time.monotonic() - t0 < 8.0
    finally:
        mute.close()


def test_usage_errors(tmp_path):
    for args, what in (
            (["status", "--bogus"], 'unknown option, or one without its '
             'value: "--bogus"'),
            (["status", "extra"], 'unexpected argument "extra"'),
            (["status", "--to", "x"], "--to is for release only"),
            (["release", "--timeout", "1s"], "--timeout is for "
             "wait-leader only"),
            (["wait-leader", "--timeout", "soon"], "--timeout: "),
            (["release", "--to"], "without its value"),
            (["status", "--http", "127.0.0.1:1", "--unix-socket", "/x"],
             "not both"),
            (["status", "--http", "127.0.0.1"], "--http 127.0.0.1: "),
            (["status", "--http", "127.0.0.1:0"], "from 1 to 65535"),
            (["status", "-f", str(tmp_path / "missing.yaml")],
             "missing.yaml"),
            (["release", "--to", "", "--http", "127.0.0.1:1"],
             "--to must name an identity")):
        rc, out, err = ctl(*args)
        assert rc == 2, (args, rc, out, err)
        assert what in err, (args, err)
        assert out == "", (args, out)
    rc, out, err = ctl("wait-leader", "-h")
    assert rc == 0 and out.startswith("usage: leaderd status"), (rc, out)
    assert "4 wait-leader timed out" in out
    # The daemon's own usage names the commands.
    rc, out, err = ctl("--help")
    assert rc == 0 and "leaderd status | release | pause | resume | " \
        "wait-leader" in out, out
