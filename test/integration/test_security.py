"""The security review's findings (ref/security-review.md), each tried
against the real binary: cleartext credentials (L5), proxy variables
(I4), attacker-controlled text in logs and answers (L1), the Host
header (I3) and a connection flood under a low open-file limit (L2)."""

import json
import os
import re
import socket
import subprocess
import threading
import time

import pytest

from harness import Leaderd, free_port, wait_until

CONF = """\
identity: me
lock:
  namespace: default
  name: sec
lease_duration: 3s
renew_deadline: 2s
retry_period: 500ms
listen:
  http: 127.0.0.1:%(port)d
kubernetes:
  kubeconfig: %(kc)s
  request_timeout: 1s
%(extra)s"""


def run(args, env=None, timeout=10):
    e = dict(os.environ)
    for k in ("KUBERNETES_SERVICE_HOST", "HTTP_PROXY", "http_proxy",
              "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy",
              "ALL_PROXY", "all_proxy"):
        e.pop(k, None)
    e.update(env or {})
    return subprocess.run(args, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, env=e,
                          timeout=timeout)


def write_kc(path, server, token=True):
    user = "  user: {token: secret-token-abc}" if token else "  user: {}"
    with open(path, "w") as f:
        f.write("current-context: c\ncontexts:\n- name: c\n"
                "  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
                "  cluster:\n    server: %s\n"
                "    insecure-skip-tls-verify: true\n"
                "users:\n- name: u\n%s\n" % (server, user))
    return path


def write_conf(tmp_path, kc, extra=""):
    p = str(tmp_path / "leaderd.yaml")
    with open(p, "w") as f:
        f.write(CONF % {"port": free_port(), "kc": kc, "extra": extra})
    return p


# -- L5: no bearer token over http:// unless asked for ------------------

def test_token_over_http_refused(leaderd_bin, tmp_path):
    kc = str(tmp_path / "kc")
    with open(kc, "w") as f:
        f.write("current-context: c\ncontexts:\n- name: c\n"
                "  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
                "  cluster:\n    server: http://127.0.0.1:1\n"
                "users:\n- name: u\n  user: {token: secret-token-abc}\n")
    conf = write_conf(tmp_path, kc)
    for args in (["-n", "-f", conf], ["-f", conf]):
        p = run([leaderd_bin] + args)
        assert p.returncode == 2, (p.stdout, p.stderr)
        assert ("%s: server http://127.0.0.1:1 is plain HTTP, so a bearer "
                "token would cross the network in cleartext; use an "
                "https:// server, or set kubernetes.insecure_http: true"
                % kc) in p.stderr, p.stderr
        assert "secret-token-abc" not in p.stdout + p.stderr

    conf = write_conf(tmp_path, kc, "  insecure_http: true\n")
    p = run([leaderd_bin, "-n", "-f", conf])
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert "insecure_http is true: a bearer token goes to " \
        "http://127.0.0.1:1 in cleartext" in p.stderr


def test_http_without_credentials_allowed(leaderd_bin, tmp_path):
    """kubectl proxy: plain http on loopback, no credentials."""
    kc = str(tmp_path / "kc")
    with open(kc, "w") as f:
        f.write("current-context: c\ncontexts:\n- name: c\n"
                "  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
                "  cluster:\n    server: http://127.0.0.1:8001\n"
                "users:\n- name: u\n  user: {}\n")
    p = run([leaderd_bin, "-n", "-f", write_conf(tmp_path, kc)])
    assert p.returncode == 0, (p.stdout, p.stderr)


# -- I4: proxy variables as Go reads them ------------------------------

class Sink:
    """A TCP listener that records the first bytes of each connection
    (a CONNECT line from an HTTP proxy client, a SOCKS greeting...)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.hits = []
        self.stop = False
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            c.settimeout(1)
            try:
                self.hits.append(c.recv(200))
            except OSError:
                self.hits.append(b"")
            c.close()

    def close(self):
        self.stop = True
        self.th.join(2)
        self.sock.close()


def local_name():
    """The machine's host name when /etc/hosts maps it to loopback: a
    name that is neither localhost nor an IP literal, so proxies apply
    to it, and that resolves without asking a DNS server."""
    name = socket.gethostname()
    try:
        with open("/etc/hosts") as f:
            for ln in f:
                w = ln.split("#")[0].split()
                if len(w) > 1 and name in w[1:] and \
                        (w[0].startswith("127.") or w[0] == "::1"):
                    return name
    except OSError:
        pass
    pytest.fail("the host name %r is not mapped to loopback in /etc/hosts"
                % name)


@pytest.mark.parametrize("env,proxied", [
    # Go ignores ALL_PROXY; libcurl would send a SOCKS greeting there.
    ({"ALL_PROXY": "socks5://127.0.0.1:%(p)d",
      "all_proxy": "socks5://127.0.0.1:%(p)d"}, False),
    # HTTP_PROXY is for http:// servers only.
    ({"HTTP_PROXY": "http://127.0.0.1:%(p)d",
      "http_proxy": "http://127.0.0.1:%(p)d"}, False),
    ({"HTTPS_PROXY": "http://127.0.0.1:%(p)d"}, True),
    ({"https_proxy": "127.0.0.1:%(p)d"}, True),
    # NO_PROXY with Go's syntax: a name, a leading dot (subdomains
    # only), host:port entries.
    ({"HTTPS_PROXY": "http://127.0.0.1:%(p)d",
      "NO_PROXY": "other.example, %(h)s"}, False),
    ({"HTTPS_PROXY": "http://127.0.0.1:%(p)d",
      "NO_PROXY": ".%(h)s"}, True),
    ({"HTTPS_PROXY": "http://127.0.0.1:%(p)d",
      "no_proxy": "%(h)s:%(sp)d"}, False),
    ({"HTTPS_PROXY": "http://127.0.0.1:%(p)d",
      "NO_PROXY": "%(h)s:1"}, True),
], ids=["all_proxy", "http_proxy", "https_proxy", "https_proxy_noscheme",
        "no_proxy_name", "no_proxy_dot", "no_proxy_port",
        "no_proxy_other_port"])
def test_proxy_env(leaderd_bin, tmp_path, env, proxied):
    sink = Sink()
    try:
        host, sport = local_name(), free_port()
        kc = write_kc(str(tmp_path / "kc"), "https://%s:%d" % (host, sport))
        conf = write_conf(tmp_path, kc)
        e = {k: v % {"p": sink.port, "h": host, "sp": sport}
             for k, v in env.items()}
        p = subprocess.Popen([leaderd_bin, "-f", conf],
                             stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True,
                             env={**{k: v for k, v in os.environ.items()
                                     if "proxy" not in k.lower()}, **e})
        try:
            if proxied:
                wait_until(lambda: sink.hits, 5, what="a proxy connection")
            else:
                time.sleep(1.5)
        finally:
            p.terminate()
            _, err = p.communicate(timeout=5)
        if proxied:
            assert sink.hits[0].startswith(
                b"CONNECT %s:%d " % (host.encode(), sport)), sink.hits
            assert b"secret-token-abc" not in b"".join(sink.hits)
        else:
            assert sink.hits == [], (sink.hits, err)
    finally:
        sink.close()


# -- L1: Lease and API text in logs and text answers --------------------

FORGED = "2030-01-01T00:00:00.000Z info became leader of lease default/x"


@pytest.mark.parametrize("server,name,ok", [
    ("https://127.0.0.1:%(p)d", "localhost", True),
    ("https://127.0.0.1:%(p)d/", "wrong.example", False),
    ("https://localhost:%(p)d", "localhost", True),
], ids=["ip_port", "wrong_name", "name_port"])
def test_tls_server_name(cluster, server, name, ok):
    """kubeconfig tls-server-name: leaderd connects to the server URL's
    host and port but checks the certificate against that name."""
    a = cluster.new("a")
    with open(a.kubeconfig) as f:
        kc = f.read()
    url = server % {"p": cluster.api.port}
    kc = kc.replace("    server: %s" % json.dumps(cluster.api.url),
                    "    server: %s\n    tls-server-name: %s"
                    % (json.dumps(url), name))
    assert "tls-server-name" in kc
    with open(a.kubeconfig, "w") as f:
        f.write(kc)
    a.start()
    if ok:
        wait_until(a.is_leader, 5, what="a leads through tls-server-name")
    else:
        wait_until(lambda: name in a.log(), 5, what="the name refused")
        assert not a.is_leader()


def held_by(cluster, holder):
    """An instance "a" started beside a Lease that holder holds for an
    hour, once its /leader names it."""
    from fakeapi import now_microtime
    cluster.api.create_lease("default", cluster.lock, {
        "holderIdentity": holder, "leaseDurationSeconds": 3600,
        "acquireTime": now_microtime(), "renewTime": now_microtime(),
        "leaseTransitions": 0})
    a = cluster.start("a")
    wait_until(lambda: (a.leader() or {}).get("name") == holder, 5,
               what="the holder %r in /leader" % holder)
    return a


def test_hostile_holder_and_status(cluster):
    api = cluster.api
    evil = "pod-a\n" + FORGED + " (forged)\x1b[31m\x07"
    a = held_by(cluster, evil)
    st, hdrs, body = a.request("/leader", headers={"Accept": "text/plain"})
    assert st == 200, body
    assert body == (b"pod-a\\x0a" + FORGED.encode() +
                    b" (forged)\\x1b[31m\\x07\n"), body
    # The Status message of a 403 is the API side's text as well.
    f = api.fault("status", token=a.token, status=403, count=3,
                  message="denied\n" + FORGED + "\x1b]0;pwn\x07")
    wait_until(lambda: "denied\\x0a" in a.log(), 5,
               what="the 403 logged")
    api.clear_fault(f)
    log = open(a.stderr_path, "rb").read()
    assert b"\x1b" not in log and b"\x07" not in log
    for ln in log.decode().splitlines():
        assert not ln.startswith(FORGED), ln
    assert "pod-a\\x0a" + FORGED in log.decode()


def test_bidi_and_invisible_holder_escaped(cluster, leaderd_bin):
    """A holder name with a right-to-left override and zero-width
    characters reads as another name on a terminal: `leaderd status` and
    the text/plain answer show them as \\uXXXX; JSON keeps them."""
    a = held_by(cluster, "pod-a\u202e0-dop\u200b\u2066")
    st, hdrs, body = a.request("/leader", headers={"Accept": "text/plain"})
    assert st == 200, body
    assert body == b"pod-a\\u202e0-dop\\u200b\\u2066\n", body
    out = subprocess.run([leaderd_bin, "status", "--http",
                          "127.0.0.1:%d" % a.port], capture_output=True,
                         text=True, timeout=10).stdout
    assert re.search(r"^holder: +pod-a\\u202e0-dop\\u200b\\u2066$", out,
                     re.M), out
    log = a.log()
    assert "leader of lease default/%s: pod-a\\u202e0-dop\\u200b\\u2066" % (
        cluster.lock) in log, log
    for text in (out, log):
        assert not any(c in text for c in "\u202e\u200b\u2066"), text


# -- I3: the Host header on the TCP listener ---------------------------

def test_host_header_checked_on_tcp_only(cluster, sockdir):
    from harness import tcp_request, unix_request
    path = os.path.join(sockdir, "a.sock")
    a = cluster.start("a", unix=path)
    port = a.port

    def tcp(req):
        return tcp_request(port, req)

    # DNS rebinding: a browser sends the attacker's name.
    st, h, body = tcp(b"GET /leader HTTP/1.1\r\nHost: evil.example:%d\r\n"
                      b"\r\n" % port)
    assert st == 421, body
    assert h.get("content-type") == "application/json"
    assert b'"status":421' in body and b"pod" not in body
    st, _, body = tcp(b"GET /leader HTTP/1.1\r\n\r\n")
    assert st == 400 and b"Host header is required" in body, body
    st, _, body = tcp(b"GET /leader HTTP/1.1\r\nHost: localhost:%d\r\n"
                      b"Connection: close\r\n\r\n" % (port + 1))
    assert st == 421, body
    for host in (b"localhost:%d" % port, b"127.0.0.1:%d" % port,
                 b"LOCALHOST", b"[::1]:%d" % port):
        st, _, body = tcp(b"GET /leader HTTP/1.1\r\nHost: " + host +
                          b"\r\nConnection: close\r\n\r\n")
        assert st == 200, (host, body)
    st, _, body = tcp(b"GET /leader HTTP/1.0\r\n\r\n")
    assert st == 200, body
    # The unix socket is not checked: only local processes reach it.
    st, _, body = unix_request(path, b"GET /leader HTTP/1.1\r\n"
                               b"Host: evil.example\r\nConnection: close"
                               b"\r\n\r\n")
    assert st == 200, body
    assert a.alive()


# -- L2: a local connection flood under a low open-file limit ----------

def test_connection_flood_under_low_nofile_keeps_lease(cluster, tmp_path,
                                                       leaderd_bin):
    """Under `ulimit -n 64` (soft and hard), 200 idle local connections
    must not take the descriptors the API client needs: the leader's API
    connection is dropped and has to be reopened (with the CA file) while
    the flood holds, and the lease must be kept."""
    wrapper = str(tmp_path / "leaderd-nofile64")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nulimit -n 64 || exit 99\nexec %s \"$@\"\n"
                % leaderd_bin)
    os.chmod(wrapper, 0o755)
    a = cluster.start("a", binary=wrapper)
    wait_until(a.is_leader, 5, what="a to lead")
    held = []
    try:
        for _ in range(200):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", a.port))
            held.append(s)
        time.sleep(0.3)
        # The leader's next renew is dropped: the API client must open a
        # new connection while the flood holds every local slot.
        api = cluster.api
        api.fault("drop", token=a.token, count=1)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 3 * 2.0:
            time.sleep(0.1)
            assert "stopped leading" not in a.log(), a.log()[-2000:]
        # Renews went on, through a new connection.
        assert [r for r in api.requests(token=a.token, method="PUT",
                                        since=t0 + 2.0)
                if r["code"] == 200], "no successful renew during the flood"
        assert a.alive()
    finally:
        for s in held:
            s.close()
    st = a.get_status("/healthz")
    assert st == 200
    assert "local API connections at most" in a.log()


def test_soft_nofile_raised_to_hard(cluster, tmp_path, leaderd_bin):
    wrapper = str(tmp_path / "leaderd-soft64")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nulimit -S -n 64 || exit 99\nexec %s \"$@\"\n"
                % leaderd_bin)
    os.chmod(wrapper, 0o755)
    hard = open("/proc/self/limits").read()
    hard = [ln.split() for ln in hard.splitlines()
            if ln.startswith("Max open files")][0][4]
    a = cluster.start("a", binary=wrapper)
    lim = [ln.split() for ln in
           open("/proc/%d/limits" % a.pid).read().splitlines()
           if ln.startswith("Max open files")][0]
    assert lim[3] == hard and lim[4] == hard, lim
    if int(hard) >= 256 + 32:
        assert "local API connections at most" not in a.log()


# -- M1: a probes-only listener and a per-peer cap ---------------------

def local_non_loopback_ip():
    """An IPv4 address of this machine off the loopback (traffic to it
    stays on the machine), so a test can be a non-loopback peer."""
    try:
        lines = open("/proc/net/fib_trie").read().splitlines()
    except OSError:
        lines = []
    for prev, ln in zip(lines, lines[1:]):
        if "/32 host LOCAL" in ln:
            ip = prev.strip().split()[-1]
            if not ip.startswith("127."):
                return ip
    pytest.fail("no local IPv4 address off the loopback to test with")


def test_probes_listener_serves_probes_only(cluster, leaderd_bin):
    pport = free_port()
    a = cluster.start("a", args=["--probes", "127.0.0.1:%d" % pport])
    wait_until(a.is_leader, 5, what="a to lead")
    from harness import tcp_request
    for path, want in (("/healthz", {200}), ("/readyz", {200})):
        st, _, body = tcp_request(pport, b"GET %s HTTP/1.1\r\nHost: "
                                  b"127.0.0.1:%d\r\nConnection: close\r\n\r\n"
                                  % (path.encode(), pport))
        assert st in want, (path, body)
    st, _, body = tcp_request(pport, b"HEAD /healthz HTTP/1.1\r\nHost: "
                              b"localhost\r\nConnection: close\r\n\r\n",
                              head=True)
    assert st == 200
    for path in (b"/leader", b"/", b"/leader?x=1", b"/healthz/"):
        st, _, body = tcp_request(pport, b"GET %s HTTP/1.1\r\nHost: "
                                  b"localhost\r\n\r\n" % path)
        assert st == 404 and b"pod" not in body and b'"a"' not in body, \
            (path, body)
    # The application API is where it was.
    assert a.leader()["name"] == "a"
    assert "(probes only)" in a.log()


def test_per_peer_cap_for_non_loopback_peers(cluster):
    ip = local_non_loopback_ip()
    pport = free_port()
    a = cluster.start("a", args=["--probes", "0.0.0.0:%d" % pport])
    wait_until(a.is_leader, 5, what="a to lead")
    held = []
    try:
        for _ in range(30):
            s = socket.socket()
            s.bind((ip, 0))
            s.settimeout(2)
            s.connect((ip, pport))
            held.append(s)
        time.sleep(0.5)
        # Every connection asks; only HTTPD_PEER_MAX (8) are served.
        served = 0
        for s in held:
            try:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: %s:%d\r\n\r\n"
                          % (ip.encode(), pport))
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    served += 1
            except OSError:
                pass
        assert served == 8, served
        # Loopback clients are not affected.
        assert a.get_status("/healthz") == 200
        assert a.leader()["name"] == "a"
        assert "refusing a connection from a non-loopback peer" in a.log()
    finally:
        for s in held:
            s.close()
    # Once they are gone, the peer is served again.

    def served_again():
        s = socket.socket()
        try:
            s.bind((ip, 0))
            s.settimeout(1)
            s.connect((ip, pport))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: %s:%d\r\n"
                      b"Connection: close\r\n\r\n" % (ip.encode(), pport))
            return s.recv(64).startswith(b"HTTP/1.1 200")
        except OSError:
            return False
        finally:
            s.close()
    wait_until(served_again, 3, interval=0.1, what="the peer served again")
