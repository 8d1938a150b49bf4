"""TLS to the API server, the same whichever library the binary is built
on: the shared build's OpenSSL, or the image's static build's Mbed TLS
(docs/building.md).  Each test starts its own API server with the
certificates it needs (fakeapi.issue_cert signs them with the test CA).

    - kubeconfig certificate-authority-data, client-certificate-data and
      client-key-data (PEM in memory) and their file forms, the client
      certificate as the only credential;
    - IPv4 and IPv6 IP SANs and DNS SANs; a wrong IP refused; a dNSName
      spelled like the IP refused for an IP URL (as OpenSSL and Go do);
    - TLS 1.3 only (kube-apiserver --tls-min-version=VersionTLS13) and
      TLS 1.2 only servers;
    - an HTTPS_PROXY that tunnels with CONNECT;
    - the token on every request over one kept-alive connection;
    - a new server certificate under the same CA picked up on reconnect.
"""

import base64
import json
import os
import select
import socket
import time

import pytest

import fakeapi
from tlscases import LoopbackServer
from conftest import Cluster
from harness import RETRY_PERIOD, wait_until

# The first acquire: a retry period times the jitter (up to 2.2), plus
# start-up and the handshake.
LEAD = RETRY_PERIOD * 2.2 + 3.0


@pytest.fixture
def make(request, tmp_path, lock_name):
    """make(san=..., **FakeAPI options) -> (api, cluster): an API server
    whose certificate has subjectAltName san, signed by the test CA in
    its own directory, and a Cluster on it."""
    made = []

    def _make(san="IP:127.0.0.1,DNS:localhost", cn="localhost",
              host="127.0.0.1", **kw):
        d = str(tmp_path / ("certs-%d" % len(made)))
        fakeapi.make_certs(d)
        crt, key = fakeapi.issue_cert(d, "served", san=san, cn=cn)
        api = fakeapi.FakeAPI(certdir=d, host=host, **kw).start()
        api.set_server_cert(crt, key)
        c = Cluster(api, str(tmp_path / ("run-%d" % len(made))), lock_name,
                    request.node)
        made.append((api, c))
        return api, c
    yield _make
    for api, c in made:
        try:
            c.close()
        finally:
            api.stop()


def kubeconfig(path, server, user, ca=None, ca_data=None):
    """Write a kubeconfig: server URL, the user's fields (a dict), the CA
    as a file or as data."""
    lines = ["apiVersion: v1", "kind: Config", "clusters:", "- name: c",
             "  cluster:", "    server: %s" % json.dumps(server)]
    if ca is not None:
        lines.append("    certificate-authority: %s" % json.dumps(ca))
    if ca_data is not None:
        lines.append("    certificate-authority-data: %s" % ca_data)
    lines += ["users:", "- name: u", "  user:"]
    lines += ["    %s: %s" % (k, json.dumps(v)) for k, v in user.items()]
    lines += ["contexts:", "- name: x", "  context:", "    cluster: c",
              "    user: u", "    namespace: default", "current-context: x",
              ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def b64(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def refused(inst, api, seconds=3.0):
    """inst never gets an answer: its log says the certificate was not
    accepted, and the API server saw no request from it."""
    wait_until(lambda: "PEER_FAILED_VERIFICATION" in inst.log(), 5,
               what="%s to refuse the certificate" % inst.name)
    time.sleep(seconds)
    assert not inst.is_leader()
    assert api.requests(token=inst.token) == [], "a request got through"


# -- credentials in memory and in files ------------------------------------

@pytest.mark.parametrize("form", ["data", "files"])
def test_client_certificate_is_the_credential(make, form):
    """certificate-authority-data, client-certificate-data and
    client-key-data (or the file forms), no token: the API server
    authenticates leaderd by its certificate's CN."""
    api, cluster = make(client_ca=None)
    ccrt, ckey = fakeapi.issue_cert(api.dir, "client", san=None,
                                    cn="leaderd-a", client=True)
    # Ask for client certificates from now on, as kube-apiserver's
    # --client-ca-file does.
    api.client_ca = api.ca_file
    api.set_server_cert(api.cert_file, api.key_file)
    api.add_token("cert:leaderd-a")
    a = cluster.new("a")
    if form == "data":
        kubeconfig(a.kubeconfig, api.url, {
            "client-certificate-data": b64(ccrt),
            "client-key-data": b64(ckey)}, ca_data=b64(api.ca_file))
    else:
        kubeconfig(a.kubeconfig, api.url, {
            "client-certificate": ccrt, "client-key": ckey},
            ca=api.ca_file)
    a.start()
    wait_until(a.is_leader, LEAD, what="a to lead with its certificate")
    reqs = api.requests()
    assert reqs and all(r["token"] == "cert:leaderd-a" for r in reqs), \
        [(r["method"], r["token"]) for r in reqs[:5]]


def test_client_certificate_unknown_to_the_server(make):
    """A client certificate the server's CA did not sign gets no
    identity: no token, no certificate, 401 and no leadership."""
    api, cluster = make()
    other = str(api.dir) + "-other"
    fakeapi.make_certs(other)
    ccrt, ckey = fakeapi.issue_cert(other, "client", san=None,
                                    cn="leaderd-a", client=True)
    api.client_ca = api.ca_file
    api.set_server_cert(api.cert_file, api.key_file)
    api.add_token("cert:leaderd-a")
    a = cluster.new("a")
    kubeconfig(a.kubeconfig, api.url, {
        "client-certificate-data": b64(ccrt),
        "client-key-data": b64(ckey)}, ca_data=b64(api.ca_file))
    a.start()
    time.sleep(LEAD)
    assert not a.is_leader()
    assert not [r for r in api.requests() if r["token"] is not None]


# -- names: IP and DNS subjectAltNames ---------------------------------------

def have_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize("san,host,ok", [
    ("IP:127.0.0.1", "127.0.0.1", True),
    ("IP:::1", "::1", True),
    ("DNS:localhost", "localhost", True),
    ("DNS:localhost,IP:127.0.0.2", "127.0.0.1", False),
    ("IP:::2,IP:127.0.0.1", "::1", False),
    ("DNS:127.0.0.1", "127.0.0.1", False),
    ("DNS:::1,IP:127.0.0.1", "::1", False),
], ids=["ipv4", "ipv6", "dns", "wrong_ipv4", "wrong_ipv6",
        "dns_spelled_like_ipv4", "dns_spelled_like_ipv6"])
def test_server_name_checked(make, san, host, ok):
    """The URL's host against the certificate's subjectAltNames: an IP
    address matches an iPAddress entry only (never a dNSName spelled
    like it: OpenSSL, Go and kube-apiserver's clients refuse it too), a
    name a dNSName."""
    if ":" in host and not have_ipv6_loopback():
        pytest.fail("this machine has no IPv6 loopback (::1): the IPv6 "
                    "IP SAN checks cannot run")
    listen = "::1" if ":" in host else "127.0.0.1"
    api, cluster = make(san=san, host=listen)
    a = cluster.new("a")
    url_host = "[%s]" % host if ":" in host else host
    kubeconfig(a.kubeconfig, "https://%s:%d" % (url_host, api.port),
               {"tokenFile": a.token_path}, ca=api.ca_file)
    a.start()
    if ok:
        wait_until(a.is_leader, LEAD, what="a to lead at %s" % url_host)
    else:
        refused(a, api)


# -- protocol versions --------------------------------------------------------

@pytest.mark.parametrize("tls_min,tls_max,version", [
    ("TLSv1_3", None, "TLSv1.3"),
    ("TLSv1_2", "TLSv1_2", "TLSv1.2"),
], ids=["tls13_only", "tls12_only"])
def test_tls_version(make, tls_min, tls_max, version):
    """A server that speaks TLS 1.3 only (kube-apiserver with
    --tls-min-version=VersionTLS13) and one that speaks TLS 1.2 only."""
    api, cluster = make(tls_min=tls_min, tls_max=tls_max)
    a = cluster.start("a")
    wait_until(a.is_leader, LEAD, what="a to lead over %s" % version)
    shakes = list(api.handshakes)
    assert shakes and all(v == version for _, v, _ in shakes), shakes


# -- proxies ----------------------------------------------------------------

class ConnectProxy(LoopbackServer):
    """An HTTP proxy on 127.0.0.1 that only tunnels: CONNECT host:port,
    200, then bytes both ways.  Records each CONNECT line."""

    def __init__(self):
        self.connects = []
        super().__init__()

    def serve(self, c):
        up = None
        try:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 8192:
                chunk = c.recv(4096)
                if not chunk:
                    return
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode()
            self.connects.append(line)
            method, target, _ = line.split(" ", 2)
            if method != "CONNECT":
                c.sendall(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
                return
            host, _, port = target.rpartition(":")
            up = socket.create_connection((host.strip("[]"), int(port)), 5)
            c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            rest = head.split(b"\r\n\r\n", 1)[1]
            if rest:
                up.sendall(rest)
            while not self.stopping:
                r, _, _ = select.select([c, up], [], [], 0.5)
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    (up if s is c else c).sendall(data)
        except (OSError, ValueError):
            pass
        finally:
            c.close()
            if up is not None:
                up.close()

def loopback_name():
    """The machine's host name and the 127.x address /etc/hosts maps it
    to: a name that is not localhost (Go and leaderd never proxy
    localhost or loopback addresses) and resolves without a DNS
    server."""
    name = socket.gethostname()
    with open("/etc/hosts") as f:
        for ln in f:
            w = ln.split("#")[0].split()
            if len(w) > 1 and name in w[1:] and w[0].startswith("127."):
                return name, w[0]
    pytest.fail("the host name %r is not mapped to 127.x in /etc/hosts"
                % name)


def test_https_proxy_tunnels_with_connect(make):
    """HTTPS_PROXY: leaderd asks the proxy for a CONNECT tunnel to the
    server's name and port and runs TLS, certificate check included,
    inside it.  The token never reaches the proxy in the clear."""
    name, addr = loopback_name()
    api, cluster = make(san="DNS:%s" % name, host=addr)
    proxy = ConnectProxy()
    try:
        a = cluster.new("a", env={"HTTPS_PROXY": "http://127.0.0.1:%d"
                                  % proxy.port, "NO_PROXY": ""})
        kubeconfig(a.kubeconfig, "https://%s:%d" % (name, api.port),
                   {"tokenFile": a.token_path}, ca=api.ca_file)
        a.start()
        wait_until(a.is_leader, LEAD, what="a to lead through the proxy")
        assert proxy.connects, "the proxy saw no CONNECT"
        assert all(c.startswith("CONNECT %s:%d " % (name, api.port))
                   for c in proxy.connects), proxy.connects
        assert api.requests(token=a.token)
        # Stopped while its proxy still runs: the release goes through.
        cluster.close()
    finally:
        proxy.close()


# -- connections ------------------------------------------------------------

def test_token_on_every_request_over_kept_alive_connections(make):
    """A steady leader renews over the connections it has: no new TLS
    handshake for seconds of renewals, and every request carries the
    bearer token (libcurl must not drop the header on a reused
    connection)."""
    api, cluster = make()
    a = cluster.start("a")
    wait_until(a.is_leader, LEAD, what="a to lead")
    time.sleep(1.0)
    t0, n0 = time.monotonic(), len(api.handshakes)
    time.sleep(8 * RETRY_PERIOD)
    renews = [r for r in api.requests(since=t0) if r["method"] == "PUT"]
    assert len(renews) >= 4, renews
    assert len(api.handshakes) == n0, api.handshakes[n0:]
    reqs = api.requests()
    assert reqs and all(r["token"] == a.token for r in reqs)


def test_new_server_certificate_on_reconnect(make):
    """The API server's certificate is replaced (a new key, the same CA)
    and its connections closed: leaderd reconnects, accepts the new
    certificate and keeps leading."""
    api, cluster = make()
    a = cluster.start("a")
    chk = cluster.checker([a])
    wait_until(a.is_leader, LEAD, what="a to lead")
    crt, key = fakeapi.issue_cert(api.dir, "renewed",
                                  san="IP:127.0.0.1,DNS:localhost")
    api.set_server_cert(crt, key)
    t_swap = time.monotonic()
    assert api.close_connections() >= 1
    wait_until(lambda: [r for r in api.requests(since=t_swap)
                        if r["method"] == "PUT" and r["code"] == 200], 5,
               what="a renewal over a new connection")
    shakes = [h for h in api.handshakes if h[0] >= t_swap]
    assert shakes and all(err is None for _, _, err in shakes), shakes
    time.sleep(2 * RETRY_PERIOD)
    mine = chk.of(a.name, since=t_swap)
    assert mine and all(s[3] for s in mine), "leadership lost on reconnect"
