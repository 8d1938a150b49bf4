"""mangle -- an HTTP-level relay that corrupts the API server's answers to
one leaderd (F23).  The byte proxy (proxy.py) cannot touch TLS payloads,
so this relay terminates TLS with fakeapi's own certificate (same CA, so
leaderd's kubeconfig needs no change but the server URL), forwards every
request to fakeapi over a fresh TLS connection, and rewrites the answers
to lease GETs (status 200) according to its mode:

    None        pass the answer unchanged
    truncate    announce the full Content-Length, send half, close
    garbage     a body that is not JSON
    nul         the real body with a NUL byte inside a string
    huge        a valid lease with a 2 MiB annotation (over leaderd's cap)
    wrongtype   spec.leaseDurationSeconds as a string, renewTime a number
    missing     spec.renewTime and spec.leaseDurationSeconds removed
    norenew     spec.renewTime removed

Writes (PUT/POST) and their answers pass unchanged.  Each corrupted
answer is counted in .hits[mode].  Python 3.11 standard library.
"""

import http.client
import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = (None, "truncate", "garbage", "nul", "huge", "wrongtype", "missing",
         "norenew")


def _corrupt(mode, body):
    if mode == "garbage":
        return b"<html><body>502 Bad Gateway</body></html>\n"
    if mode == "nul":
        return body.replace(b'"spec":{', b'"spec":{"x\x00":"y",', 1)
    obj = json.loads(body)
    spec = obj.setdefault("spec", {})
    if mode == "huge":
        obj.setdefault("metadata", {}).setdefault("annotations", {})[
            "pad"] = "x" * (2 * 1024 * 1024)
    elif mode == "wrongtype":
        spec["leaseDurationSeconds"] = str(spec.get("leaseDurationSeconds"))
        spec["renewTime"] = 12345
    elif mode == "missing":
        spec.pop("renewTime", None)
        spec.pop("leaseDurationSeconds", None)
    elif mode == "norenew":
        spec.pop("renewTime", None)
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        self._relay()

    def do_PUT(self):
        self._relay()

    def do_POST(self):
        self._relay()

    def _relay(self):
        m = self.server.relay
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        hdrs = {k: v for k, v in self.headers.items()
                if k.lower() not in ("host", "connection", "content-length")}
        c = http.client.HTTPSConnection(m.up_host, m.up_port, timeout=10,
                                        context=m.client_ctx)
        try:
            c.request(self.command, self.path, body=body, headers=hdrs)
            r = c.getresponse()
            data = r.read()
            status, rh = r.status, r.getheaders()
        finally:
            c.close()
        mode = m.mode
        if mode is not None and self.command == "GET" and status == 200:
            with m.lock:
                m.hits[mode] = m.hits.get(mode, 0) + 1
            if mode == "truncate":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[:len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            data = _corrupt(mode, data)
        self.send_response(status)
        for k, v in rh:
            if k.lower() not in ("content-length", "connection",
                                 "transfer-encoding", "date", "server"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, relay):
        self.relay = relay
        super().__init__(("127.0.0.1", 0), _Handler)

    def get_request(self):
        sock, addr = super().get_request()
        sock.settimeout(30)
        return self.relay.server_ctx.wrap_socket(sock, server_side=True), addr

    def handle_error(self, request, client_address):
        pass


class MangleRelay:
    def __init__(self, api):
        self.up_host, self.up_port = "127.0.0.1", api.port
        self.server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.server_ctx.load_cert_chain(api.cert_file, api.key_file)
        self.client_ctx = ssl.create_default_context(cafile=api.ca_file)
        self.mode = None
        self.hits = {}
        self.lock = threading.Lock()
        self._srv = _Server(self)
        self.port = self._srv.server_address[1]
        self._t = threading.Thread(target=self._srv.serve_forever,
                                   kwargs={"poll_interval": 0.05},
                                   daemon=True, name="mangle")
        self._t.start()

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port

    def set(self, mode):
        if mode not in MODES:
            raise ValueError("unknown mode %r" % (mode,))
        self.mode = mode

    def stop(self):
        self._srv.shutdown()
        self._srv.server_close()
