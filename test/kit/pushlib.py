"""Clients of leaderd's push API, for the integration and fault tests
and the benchmark: a server-sent-events reader for GET /leader/watch and
GET /sse over TCP or the unix socket, and a blocking read of
/leader?wait=...&index=N.

Python 3.11 standard library only."""

import json
import socket
import threading
import time

from harness import read_http_response


def connect(inst, via):
    """A connected socket to inst's local API: via "tcp" or "unix"."""
    if via == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2.0)
        s.connect(inst.unix)
    else:
        s = socket.create_connection(("127.0.0.1", inst.port), timeout=2.0)
    return s


def request_bytes(path, headers=None):
    req = "GET %s HTTP/1.1\r\nHost: localhost\r\n" % path
    for k, v in (headers or {}).items():
        req += "%s: %s\r\n" % (k, v)
    return (req + "\r\n").encode()


class Stream:
    """One event-stream client.  The status line and headers are read
    at once; a thread then reads events, each kept as (receive wall time
    in seconds, parsed JSON), and notes when the server closes."""

    def __init__(self, inst, via="tcp", path="/leader/watch", read=True,
                 rcvbuf=None):
        self.via = via
        self.sock = s = socket.socket(
            socket.AF_UNIX if via == "unix" else socket.AF_INET,
            socket.SOCK_STREAM)
        if rcvbuf is not None:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(2.0)
        s.connect(inst.unix if via == "unix" else ("127.0.0.1", inst.port))
        s.sendall(request_bytes(path))
        self.events = []
        self.comments = []
        self.closed_at = None
        self._cv = threading.Condition()
        self._buf = b""
        self._t = None
        if not read:
            self.status = None
            return
        self._read_head()
        if self.status != 200:
            return
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _read_head(self):
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("closed before the headers")
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        if self.status != 200:
            self.body = rest
            return
        self._buf = rest
        self._parse()

    def _parse(self):
        while b"\n\n" in self._buf:
            block, _, self._buf = self._buf.partition(b"\n\n")
            t = time.time()
            with self._cv:
                for ln in block.decode().split("\n"):
                    if ln.startswith("data: "):
                        self.events.append((t, json.loads(ln[6:])))
                    elif ln.startswith(":"):
                        self.comments.append((t, ln))
                    else:
                        raise AssertionError("not an event line: %r" % ln)
                self._cv.notify_all()

    def _run(self):
        try:
            self.sock.settimeout(None)
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    break
                self._buf += chunk
                self._parse()
        except OSError:
            pass
        with self._cv:
            self.closed_at = time.time()
            self._cv.notify_all()

    def wait_event(self, pred, timeout, what="an event"):
        """The first event (t, data) with pred(data), waiting up to
        timeout seconds."""
        end = time.monotonic() + timeout
        with self._cv:
            while True:
                for e in self.events:
                    if pred(e[1]):
                        return e
                left = end - time.monotonic()
                if left <= 0 or self.closed_at is not None:
                    raise AssertionError(
                        "%s stream: no %s within %.1fs; events %r" % (
                            self.via, what, timeout,
                            [d for _, d in self.events]))
                self._cv.wait(left)

    def wait_closed(self, timeout):
        end = time.monotonic() + timeout
        with self._cv:
            while self.closed_at is None:
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError("%s stream still open after %.1fs"
                                         % (self.via, timeout))
                self._cv.wait(left)
        return self.closed_at

    def data(self):
        with self._cv:
            return [d for _, d in self.events]

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        if self._t is not None:
            self._t.join(2)


def blocking_read(inst, via, query, headers=None, timeout=10.0):
    """GET /leader?query over via; (status, headers, body, seconds)."""
    s = connect(inst, via)
    try:
        t = time.monotonic()
        s.sendall(request_bytes("/leader?" + query,
                                dict({"Connection": "close"},
                                     **(headers or {}))))
        st, hdrs, body, _ = read_http_response(s, timeout=timeout)
        return st, hdrs, body, time.monotonic() - t
    finally:
        s.close()
