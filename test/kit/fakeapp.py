"""fakeapp -- an application beside leaderd, for its candidacy probe
(candidacy.probe): a health endpoint over raw sockets that answers
well, or badly on purpose.

Modes (FakeApp.mode, read when a connection is accepted):

  ok          200 with a 2-byte body, at once
  fail        500, at once
  slow        200 after FakeApp.delay seconds from the accept
  silent      reads the request, never answers; holds the connection
              until the client closes it
  flood_body  a 200 status line and headers, then an endless body
  flood_head  a 200 status line, then endless header lines
  flood_raw   endless bytes that are not HTTP
  full        stops accepting; with fill(), the accept queue is full and
              the kernel drops further SYNs: a connect never completes
              (the listener has a backlog of 0 for this)

die() closes the listener (connection refused) and up() opens it again
on the same port.  Every accepted connection is logged in
FakeApp.accepts as (monotonic time, mode).

As a script it is an application process to kill -9 (test/bench):

    python3 fakeapp.py [--port P] [--hold LEADERD_PORT]
        [--mode MODE] [--then MODE --after SECONDS]

serves MODE (ok) on 127.0.0.1:P (0: any port), switches to the --then
mode SECONDS after the start, and with --hold keeps a /leader/watch
stream open on leaderd's port (client-bound candidacy).  It prints
"ready PORT" once all is up.  Python 3.11 standard library only.
"""

import argparse
import os
import select
import socket
import subprocess
import sys
import threading
import time

CHUNK = 64 * 1024


def _read_request(c, timeout=2.0):
    """Read the request head; False if the client went away first, or
    die() closed the connection under us."""
    buf = b""
    try:
        c.settimeout(timeout)
        while b"\r\n\r\n" not in buf:
            d = c.recv(4096)
            if not d:
                return False
            buf += d
    except OSError:
        return False
    return True


def _flood(c, first, more):
    """Send first, then more() forever, until the client goes away."""
    c.settimeout(5.0)
    try:
        c.sendall(first)
        while True:
            c.sendall(more())
    except OSError:
        pass


class FakeApp:
    def __init__(self, port=0, mode="ok", delay=0.0):
        self.mode = mode
        self.delay = delay
        self.accepts = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conns = set()
        self.lsock = None
        self.port = port
        self._thread = None
        self.up()

    def url(self, path="/healthz"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def tcp(self):
        return "tcp://127.0.0.1:%d" % self.port

    # -- the listener ----------------------------------------------------

    def up(self):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(0)
        self.port = s.getsockname()[1]
        self.lsock = s
        self._stop.clear()
        self._thread = threading.Thread(target=self._accept_loop, args=(s,),
                                        daemon=True)
        self._thread.start()

    def die(self):
        """Close the listener and every connection: refused from now."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
            self._thread = None
        if self.lsock is not None:
            self.lsock.close()
            self.lsock = None
        with self._lock:
            conns, self._conns = list(self._conns), set()
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()

    close = die

    def fill(self):
        """In mode full: one connection that is never accepted fills the
        queue (backlog 0); returns it (close it to empty the queue)."""
        c = socket.socket()
        c.settimeout(2)
        c.connect(("127.0.0.1", self.port))
        return c

    def _accept_loop(self, s):
        while not self._stop.is_set():
            if self.mode == "full":
                time.sleep(0.02)
                continue
            try:
                r, _, _ = select.select([s], [], [], 0.05)
            except (OSError, ValueError):
                return
            if not r or self.mode == "full":
                continue
            try:
                c, _ = s.accept()
            except OSError:
                continue
            t = time.monotonic()
            mode = self.mode
            with self._lock:
                self.accepts.append((t, mode))
                self._conns.add(c)
            threading.Thread(target=self._serve, args=(c, t, mode),
                             daemon=True).start()

    def count(self, since=None, until=None, mode=None):
        """Connections accepted in [since, until] (in mode)."""
        with self._lock:
            return sum(1 for t, m in self.accepts
                       if (since is None or t >= since) and
                       (until is None or t <= until) and
                       (mode is None or m == mode))

    # -- one connection --------------------------------------------------

    def _serve(self, c, t_acc, mode):
        try:
            self._answer(c, t_acc, mode)
        finally:
            with self._lock:
                self._conns.discard(c)
            try:
                c.close()
            except OSError:
                pass

    def _answer(self, c, t_acc, mode):
        if not _read_request(c):
            return
        if mode in ("ok", "fail", "slow"):
            if mode == "slow":
                left = t_acc + self.delay - time.monotonic()
                if left > 0:
                    time.sleep(left)
            st = b"200 OK" if mode != "fail" else b"500 Internal Server Error"
            try:
                c.sendall(b"HTTP/1.1 " + st + b"\r\nContent-Length: 2\r\n"
                          b"Connection: close\r\n\r\nok")
            except OSError:
                pass
        elif mode == "silent":
            c.settimeout(None)
            try:
                while c.recv(4096):
                    pass
            except OSError:
                pass
        elif mode == "flood_body":
            body = b"x" * CHUNK
            _flood(c, b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                   b"Connection: close\r\n\r\n", lambda: body)
        elif mode == "flood_head":
            n = [0]

            def lines():
                out = []
                for _ in range(256):
                    n[0] += 1
                    out.append(b"X-Flood-%d: %s\r\n" % (n[0], b"y" * 200))
                return b"".join(out)
            _flood(c, b"HTTP/1.1 200 OK\r\n", lines)
        elif mode == "flood_raw":
            junk = bytes(range(256)) * (CHUNK // 256)
            _flood(c, b"", lambda: junk)


def _hold(port):
    """A /leader/watch stream on leaderd's port, held open."""
    s = socket.create_connection(("127.0.0.1", port), 5)
    s.sendall(b"GET /leader/watch HTTP/1.1\r\nHost: localhost\r\n\r\n")
    if not s.recv(4096):
        raise SystemExit("leaderd closed the stream")
    s.settimeout(None)
    return s


def holding(port):
    """An application process holding a /leader/watch stream on
    leaderd's port (this script with --hold): killed -9, the kernel
    closes its socket, as it would an application's.  Returns its
    Popen once the stream is open."""
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                          "--hold", str(port)],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    if line[:1] != ["ready"]:
        p.kill()
        p.wait()
        raise RuntimeError("fakeapp --hold %d: %r" % (port, line))
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--hold", type=int, default=0,
                    help="leaderd's port: hold a /leader/watch stream")
    ap.add_argument("--mode", default="ok")
    ap.add_argument("--then", help="the mode after --after seconds")
    ap.add_argument("--after", type=float, default=0.0)
    args = ap.parse_args()
    app = FakeApp(args.port, mode=args.mode)
    if args.then:
        t = threading.Timer(args.after, setattr, (app, "mode", args.then))
        t.daemon = True
        t.start()
    held = _hold(args.hold) if args.hold else None
    print("ready %d" % app.port, flush=True)
    try:
        while True:
            if held is not None:
                # Read and drop the stream's events.
                r, _, _ = select.select([held], [], [], 3600)
                if r and not held.recv(65536):
                    sys.exit("leaderd closed the stream")
            else:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
