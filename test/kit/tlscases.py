"""TLS cases that every leaderd binary must pass, whatever TLS library
is under its libcurl: collected by test/integration/test_tls_profile.py
(the binary under test, the shared build over OpenSSL by default) and by
test/deploy/test_tls.py (the image's static binary over Mbed TLS).

    - RSA and ECDSA server keys on TLS 1.2 and on TLS 1.3 (an RSA key on
      TLS 1.2 is signed with RSA-PSS when the client offers it, which
      Mbed TLS 3.6.6 offered and then refused);
    - the server certificate held to client-go's rules: a SHA-1
      signature, a 1024-bit RSA key, a common name without
      subjectAltName (for a name and for an IP address) are refused,
      the first two also when OPENSSL_CONF lowers OpenSSL's security
      level;
    - a broken ServerHello (TLS 1.3's version in legacy_version, no
      supported_versions) fails the request at once with a logged error,
      and leaderd stays up.
"""

import os
import socket
import struct
import threading
import time
import uuid

import pytest

import fakeapi
from harness import RETRY_PERIOD, Leaderd, time_limit, wait_until

# The first acquire: a retry period times the jitter (up to 2.2), plus
# start-up and the handshake.
LEAD = RETRY_PERIOD * 2.2 + 3.0
CASE_TIME_LIMIT = 60


@pytest.fixture
def tls_run(tmp_path):
    """tls_run(san=..., cn=..., key_type=..., digest=..., url_host=...,
    **FakeAPI options) -> (api, leaderd): a test API server whose
    certificate is made as asked (signed by its own test CA) and one
    leaderd started on it, reaching it at url_host."""
    made = []

    def _run(san="IP:127.0.0.1,DNS:localhost", cn="localhost",
             key_type="ec", digest="sha256", url_host="127.0.0.1", env=None,
             **kw):
        n = len(made)
        d = str(tmp_path / ("certs-%d" % n))
        fakeapi.make_certs(d)
        crt, key = fakeapi.issue_cert(d, "served", san=san, cn=cn,
                                      key_type=key_type, digest=digest)
        api = fakeapi.FakeAPI(certdir=d, **kw).start()
        made.append(api)
        api.set_server_cert(crt, key)
        inst = Leaderd(api, str(tmp_path / ("run-%d" % n)), "a",
                       lock="tls-%s" % uuid.uuid4().hex[:8], env=env)
        if url_host != "127.0.0.1":
            with open(inst.kubeconfig) as f:
                text = f.read()
            assert "https://127.0.0.1:" in text
            with open(inst.kubeconfig, "w") as f:
                f.write(text.replace("https://127.0.0.1:",
                                     "https://%s:" % url_host))
        made.append(inst)
        return api, inst.start()

    with time_limit(CASE_TIME_LIMIT):
        yield _run
    for x in reversed(made):
        if isinstance(x, Leaderd):
            x.cleanup()
        else:
            x.stop()


def refused(inst, api, seconds=2.0):
    """inst never gets an answer: its log says the certificate was not
    accepted, and the API server saw no request from it."""
    wait_until(lambda: "PEER_FAILED_VERIFICATION" in inst.log(), 5,
               what="%s to refuse the certificate" % inst.name)
    time.sleep(seconds)
    assert not inst.is_leader()
    assert api.requests(token=inst.token) == [], "a request got through"


# -- key types and protocol versions -----------------------------------------

@pytest.mark.parametrize("key_type", ["ec", "rsa:2048"],
                         ids=["ecdsa", "rsa"])
@pytest.mark.parametrize("version", ["TLSv1_2", "TLSv1_3"],
                         ids=["tls12", "tls13"])
def test_tls_key_type_and_version(tls_run, key_type, version):
    """A server with an ECDSA or an RSA key, speaking TLS 1.2 only or
    TLS 1.3 only: leaderd leads over each.  OpenSSL's server signs TLS
    1.2 with RSA-PSS when the client offers it."""
    api, a = tls_run(key_type=key_type, tls_min=version, tls_max=version)
    wait_until(a.is_leader, LEAD, what="a to lead over %s with an %s key"
               % (version, key_type))
    want = version.replace("_", ".")
    done = [v for _, v, err in api.handshakes if err is None]
    assert done and all(v == want for v in done), api.handshakes


# -- the server certificate, held to client-go's rules -----------------------

@pytest.mark.parametrize("cert", [
    dict(digest="sha1"),
    dict(key_type="rsa:1024"),
    dict(san=None, cn="localhost", url_host="localhost"),
    dict(san=None, cn="127.0.0.1"),
], ids=["sha1_signature", "rsa_1024", "cn_only_name", "cn_only_ip"])
def test_certificate_below_client_go_refused(tls_run, cert):
    """What Go's crypto/x509 (client-go) refuses, leaderd refuses: a
    SHA-1 signature, an RSA key under 2048 bits, a certificate whose
    only name is its common name (for a host name and for an IP).  The
    server is allowed to serve them (OpenSSL security level 0)."""
    api, a = tls_run(seclevel=0, **cert)
    refused(a, api)


# An OpenSSL configuration that lowers every TLS context's security
# level to 0 (as a system's openssl.cnf can): the floor leaderd sets
# must hold against it.  Mbed TLS does not read it.
OPENSSL_LEVEL_0 = """openssl_conf = conf
[conf]
ssl_conf = ssl
[ssl]
system_default = system
[system]
CipherString = DEFAULT:@SECLEVEL=0
"""


@pytest.mark.parametrize("cert", [
    dict(digest="sha1"),
    dict(key_type="rsa:1024"),
], ids=["sha1_signature", "rsa_1024"])
def test_certificate_refused_whatever_openssl_cnf_says(tls_run, tmp_path,
                                                       cert):
    """The same refusals with OPENSSL_CONF lowering OpenSSL's security
    level to 0 for every context leaderd's libcurl makes."""
    conf = tmp_path / "openssl-level0.cnf"
    conf.write_text(OPENSSL_LEVEL_0)
    api, a = tls_run(seclevel=0, env={"OPENSSL_CONF": str(conf)}, **cert)
    refused(a, api)


def test_certificate_with_san_accepted_at_level_zero(tls_run):
    """The control of the case above: the same server at security level
    0, with a SHA-256-signed P-256 certificate with SANs, is accepted."""
    api, a = tls_run(seclevel=0)
    wait_until(a.is_leader, LEAD, what="a to lead")


# -- a broken ServerHello ----------------------------------------------------

class LoopbackServer:
    """A TCP server on 127.0.0.1 (port: self.port) that gives each
    connection to self.serve(conn) on a thread of its own; close() stops
    it.  The test servers of the TLS and proxy tests."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,),
                             daemon=True).start()

    def serve(self, conn):
        raise NotImplementedError

    def close(self):
        self.stopping = True
        self.sock.close()


class BadServerHello(LoopbackServer):
    """A TCP server on 127.0.0.1 that answers each ClientHello with a
    ServerHello claiming TLS 1.3 in legacy_version (0x0304), a TLS 1.3
    cipher suite and no supported_versions extension, and then says
    nothing more.  Records, for each connection, how long the client
    took to answer (an alert or a close) or None if it did not within
    `wait` seconds."""

    def __init__(self, wait=5.0):
        self.wait = wait
        self.answers = []       # (seconds or None, first bytes)
        super().__init__()

    @staticmethod
    def _read(c, n):
        data = b""
        while len(data) < n:
            chunk = c.recv(n - len(data))
            if not chunk:
                raise OSError("closed")
            data += chunk
        return data

    def serve(self, c):
        try:
            c.settimeout(5.0)
            head = self._read(c, 5)
            body = self._read(c, struct.unpack("!H", head[3:5])[0])
            # Handshake header (4), client_version (2), random (32),
            # then the session id, which a TLS 1.3 server echoes.
            sid_len = body[38]
            sid = body[39:39 + sid_len]
            hello = (b"\x03\x04" + os.urandom(32) + bytes([len(sid)]) + sid +
                     b"\x13\x01" + b"\x00" + b"\x00\x00")
            msg = b"\x02" + struct.pack("!I", len(hello))[1:] + hello
            c.sendall(b"\x16\x03\x03" + struct.pack("!H", len(msg)) + msg)
            t0 = time.monotonic()
            c.settimeout(self.wait)
            try:
                first = c.recv(16)
                self.answers.append((time.monotonic() - t0, first))
            except socket.timeout:
                self.answers.append((None, b""))
        except OSError:
            pass
        finally:
            c.close()


class _NoAPI:
    """What Leaderd needs of an API server, for a server that is not
    one: a kubeconfig pointing at it, with some CA."""

    def __init__(self, url, ca_file):
        self.url = url
        self.ca_file = ca_file

    def add_token(self, token):
        pass

    def write_kubeconfig(self, path, token_file, user, namespace, **kw):
        with open(path, "w") as f:
            f.write("\n".join([
                "apiVersion: v1", "kind: Config", "clusters:",
                "- name: c", "  cluster:", "    server: %s" % self.url,
                "    certificate-authority: %s" % self.ca_file,
                "users:", "- name: u", "  user:",
                "    tokenFile: %s" % token_file,
                "contexts:", "- name: x", "  context:", "    cluster: c",
                "    user: u", "    namespace: %s" % namespace,
                "current-context: x", ""]))


def test_broken_server_hello_fails_at_once(tmp_path):
    """A ServerHello with legacy_version 0x0304 and no supported_versions
    (the first step of the TLS 1.2/1.3 version confusion fixed in Mbed
    TLS 3.6.8): leaderd ends the handshake at once, an alert or a
    close well within its 10 s request timeout, logs the failed
    request, and stays up to try again."""
    srv = BadServerHello(wait=5.0)
    d = str(tmp_path / "certs")
    ca, _, _ = fakeapi.make_certs(d)
    api = _NoAPI("https://127.0.0.1:%d" % srv.port, ca)
    a = Leaderd(api, str(tmp_path / "run"), "a", lock="tls-hello",
                lease_duration=30.0, renew_deadline=20.0,
                request_timeout=10.0)
    try:
        with time_limit(CASE_TIME_LIMIT):
            a.start()
            wait_until(lambda: srv.answers, 8, what="a first handshake")
            took, first = srv.answers[0]
            assert took is not None, \
                "leaderd sent nothing and kept the connection for 5 s"
            assert took < 2.0, "leaderd took %.1f s to answer" % took
            # An alert record, if anything was sent, is a fatal one.
            if first:
                assert first[:1] == b"\x15", first.hex()
            wait_until(lambda: "SSL_CONNECT_ERROR" in a.log() or
                       "SSL connect error" in a.log(), 5,
                       what="the failed handshake in the log")
            assert not a.is_leader()
            assert a.alive() and a.get_status("/healthz") is not None
            # It tries again, and fails the same way again.
            wait_until(lambda: len(srv.answers) >= 2, 10,
                       what="a second attempt")
            assert all(t is not None and t < 2.0 for t, _ in srv.answers), \
                srv.answers
    finally:
        a.cleanup()
        srv.close()
