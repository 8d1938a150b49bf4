"""tcplb -- a small TCP load balancer and an etcd peer proxy, for the HA
harness (test/e2e/ha.py).

Balancer(backends) listens on 127.0.0.1 and sends each new connection to
the next backend in turn (round robin), skipping the ones marked down.
It has no health check, like a plain L4 balancer: a backend that hangs
(SIGSTOP) keeps getting connections.  Per backend:

    lb.stall(i)     hold every byte to and from it (a blackhole that
                    heals: TCP's retransmits are imitated by holding the
                    data, not dropping it); new connections go on going
                    to it
    lb.kill(i)      reset every connection to it and send no new one to it
    lb.restore(i)   back to normal (stalled data flows again)

PeerProxy(upstream_port, member_id, cut) sits in front of one etcd
member's peer port.  Each connection's first request names its sender in
etcd's X-Server-From header (rafthttp's streams and pipelines, one
sender per connection); cut(sender, receiver) says whether that pair is
partitioned now.  A partitioned connection is stalled until the pair
heals, then reset, since etcd peers redial at once.

Threads, the standard library only; every socket on 127.0.0.1.
"""

import socket
import threading

CHUNK = 65536


def _rst(s):
    """Reset the connection.  A thread blocked in recv() on s keeps the
    socket open past close(): shutdown(SHUT_RD) wakes it first, and the
    close that follows, lingering 0 s, sends the RST."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass


def _close(s):
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass


class _Pipe:
    """One proxied connection: two pumps, a gate that stalls both."""

    def __init__(self, owner, client, upstream, tag, head=b"", stalled=False):
        self.owner, self.client, self.upstream, self.tag = (
            owner, client, upstream, tag)
        self.gate = threading.Event()
        if not stalled:
            self.gate.set()
        self.closed = False
        self.head = head
        self.pumps = 2
        self.lock = threading.Lock()
        for a, b, first in ((client, upstream, head), (upstream, client, b"")):
            threading.Thread(target=self._pump, args=(a, b, first),
                             daemon=True).start()

    def _pump(self, src, dst, first):
        try:
            if first:
                self.gate.wait()
                dst.sendall(first)
            while not self.closed:
                data = src.recv(CHUNK)
                if not data:
                    break
                self.gate.wait()
                if self.closed:
                    break
                dst.sendall(data)
            if not self.closed:
                dst.shutdown(socket.SHUT_WR)
        except OSError:
            self.close(rst=True)
        finally:
            with self.lock:
                self.pumps -= 1
                last = self.pumps == 0
            if last:
                self.close()
                self.owner._forget(self)

    def close(self, rst=False):
        if self.closed:
            return
        self.closed = True
        self.gate.set()
        for s in (self.client, self.upstream):
            if rst:
                _rst(s)
            else:
                _close(s)


class _Listener:
    def __init__(self, name):
        self.name = name
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.pipes = []
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True,
                         name="%s-accept" % name).start()

    def _accept(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(c,),
                             daemon=True).start()

    def _forget(self, pipe):
        with self.lock:
            if pipe in self.pipes:
                self.pipes.remove(pipe)

    def _dial(self, port):
        u = socket.create_connection(("127.0.0.1", port), timeout=2)
        u.settimeout(None)
        u.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return u

    def close(self):
        self.stopped = True
        try:
            self.sock.close()
        except OSError:
            pass
        with self.lock:
            pipes = list(self.pipes)
        for p in pipes:
            p.close(rst=True)


class Balancer(_Listener):
    def __init__(self, backends, name="lb"):
        self.backends = list(backends)      # ports on 127.0.0.1
        self.state = ["up"] * len(self.backends)
        self.next = 0
        self.counts = [0] * len(self.backends)
        super().__init__(name)

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port

    def _pick(self):
        with self.lock:
            n = len(self.backends)
            for k in range(n):
                i = (self.next + k) % n
                if self.state[i] != "down":
                    self.next = i + 1
                    return i
        return None

    def _serve(self, c):
        i = self._pick()
        if i is None:
            _rst(c)
            return
        try:
            u = self._dial(self.backends[i])
        except OSError:
            _rst(c)
            return
        with self.lock:
            if self.state[i] == "down":
                _rst(c)
                _rst(u)
                return
            p = _Pipe(self, c, u, i, stalled=self.state[i] == "stalled")
            self.pipes.append(p)
            self.counts[i] += 1

    def _of(self, i):
        with self.lock:
            return [p for p in self.pipes if p.tag == i]

    def _gate(self, i, state, open_):
        """Backend i's state set, its pipes' gates opened or closed."""
        with self.lock:
            self.state[i] = state
            for p in self.pipes:
                if p.tag == i:
                    (p.gate.set if open_ else p.gate.clear)()

    def stall(self, i):
        self._gate(i, "stalled", False)

    def kill(self, i):
        with self.lock:
            self.state[i] = "down"
        for p in self._of(i):
            p.close(rst=True)

    def restore(self, i):
        self._gate(i, "up", True)

    def connections(self, i):
        return len(self._of(i))


class PeerProxy(_Listener):
    def __init__(self, upstream_port, member_id, cut, name="peer"):
        self.upstream_port = upstream_port
        self.member_id = member_id
        self.cut = cut
        super().__init__(name)

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def _serve(self, c):
        # The first request's headers name the sender.
        head = b""
        c.settimeout(10)
        try:
            while b"\r\n\r\n" not in head and len(head) < 16384:
                d = c.recv(4096)
                if not d:
                    break
                head += d
        except OSError:
            _rst(c)
            return
        c.settimeout(None)
        sender = ""
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"x-server-from:"):
                sender = line.split(b":", 1)[1].strip().decode()
        try:
            u = self._dial(self.upstream_port)
        except OSError:
            _rst(c)
            return
        # Stalled from the start when cut: a gate closed after the pumps
        # start would let the first request through.
        with self.lock:
            p = _Pipe(self, c, u, sender, head,
                      stalled=self.cut(sender, self.member_id))
            self.pipes.append(p)

    def update(self):
        """Apply the partition now: stall the pairs cut, reset the
        stalled ones that heal (their data would arrive very late)."""
        with self.lock:
            pipes = list(self.pipes)
        for p in pipes:
            if self.cut(p.tag, self.member_id):
                p.gate.clear()
            elif not p.gate.is_set():
                p.close(rst=True)
