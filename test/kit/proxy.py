"""proxy -- a user-space fault-injecting TCP proxy for leaderd's fault tests.

One Proxy is one listener on 127.0.0.1 in front of an upstream (fakeapi);
each leaderd under test gets its own, so a fault can target one instance.
The proxy works on bytes, so TLS stays end to end between leaderd and the
server.  All proxies of a test share one asyncio loop in a background
thread (ProxyHub); modes are switched at run time from the test thread:

    pass                 forward both ways
    latency              hold every chunk up_ms (client to server) and
                         down_ms (server to client) before forwarding it
    blackhole            accept connections, forward nothing (bytes are read
                         and discarded; new connections never reach the
                         server); leaving the mode closes those connections
    drop_after_forward   forward the request to the server, drop the answer
                         and close the connection: the ambiguous write.  A
                         "request" is a run of TLS application-data bytes
                         from the client of at least min_req_bytes (a lease
                         PUT is larger than a GET); count answers are dropped,
                         then the mode returns to pass by itself
    reset                RST every existing connection and every new one
    trickle              forward server-to-client bytes (or client-to-server
                         with direction="up") trickle_bytes at a time, one
                         piece every trickle_ms
    half_open            the connections open at the switch stop forwarding
                         (bytes read and discarded, sockets kept open, no FIN
                         or RST): a peer that vanished; new connections pass
    hold_once            hold the next client request of at least
                         min_req_bytes (a PUT, not a GET) up_ms before
                         forwarding it, and what follows it on its
                         connection; then the mode returns to pass by
                         itself.  The server gets the request late if the
                         client keeps the connection that long, never if
                         the client gives up and closes it

Every event is stamped with time.monotonic(), the clock leaderd and fakeapi
use.  Loopback only.  Python 3.11 standard library.
"""

import asyncio
import socket
import struct
import threading
import time

MODES = ("pass", "latency", "blackhole", "drop_after_forward", "reset",
         "trickle", "half_open", "hold_once")
TLS_APPDATA = 23
TLS_TYPES = (20, 21, 22, 23)
CHUNK = 65536


class ProxyHub:
    """The asyncio loop (in a daemon thread) that runs every Proxy."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="fault-proxy-hub")
        self._thread.start()
        self.proxies = []

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, coro, timeout=10.0):
        """Run a coroutine on the hub loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(
            timeout)

    def proxy(self, upstream_port, name="proxy", upstream_host="127.0.0.1"):
        p = Proxy(self, upstream_host, upstream_port, name)
        self.call(p._start())
        self.proxies.append(p)
        return p

    def close(self):
        for p in self.proxies:
            try:
                self.call(p._stop(), timeout=5.0)
            except Exception:  # noqa: BLE001 (best effort at teardown)
                pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)


class _TLSCounter:
    """Splits one direction of a stream into TLS records, across chunk
    boundaries.  feed() returns, for a chunk, a list of (record type,
    payload bytes of that record in the chunk, whether the record starts
    in the chunk).  A stream that does not start like a TLS record is
    reported as one application-data record per chunk."""

    def __init__(self):
        self.hdr = b""
        self.left = 0       # payload bytes left in the current record
        self.kind = None
        self.plain = None   # None until the first byte is seen

    def feed(self, data):
        if self.plain is None and data:
            self.plain = data[0] not in TLS_TYPES
        if self.plain:
            return [(TLS_APPDATA, len(data), True)]
        out, i, cur = [], 0, None
        while i < len(data):
            if self.left == 0:
                need = 5 - len(self.hdr)
                self.hdr += data[i:i + need]
                i += need
                if len(self.hdr) < 5:
                    break
                self.kind = self.hdr[0]
                self.left = struct.unpack("!H", self.hdr[3:5])[0]
                self.hdr = b""
                cur = [self.kind, 0, True]
                out.append(cur)
                continue
            take = min(self.left, len(data) - i)
            if cur is None:
                cur = [self.kind, 0, False]
                out.append(cur)
            cur[1] += take
            self.left -= take
            i += take
            if self.left == 0:
                cur = None
        return [tuple(x) for x in out]

    @staticmethod
    def appdata(pieces):
        return sum(n for k, n, _ in pieces if k == TLS_APPDATA)


class _Conn:
    def __init__(self, proxy, creader, cwriter):
        self.proxy = proxy
        self.id = proxy._next_id()
        self.creader, self.cwriter = creader, cwriter
        self.sreader = self.swriter = None
        self.t_open = time.monotonic()
        self.t_close = None
        self.closed_by = None       # "client", "server", "proxy"
        self.frozen = False         # half_open caught it
        self.frozen_data = False    # the client sent into it since
        self.blackholed = False     # opened or used during a blackhole
        self.up_bytes = 0
        self.down_bytes = 0
        self.req_bytes = 0          # app-data bytes since the last answer
        self.tls_up = _TLSCounter()
        self.tls_down = _TLSCounter()
        self.client_appdata = False # the client sent application data
        self.tls13 = False          # the server encrypted its handshake
        self.tickets_left = 0       # TLS 1.3 session tickets still due
        self.down_kind = None       # "hs", "ticket" or "answer" (record)
        self.queues = {"up": asyncio.Queue(), "down": asyncio.Queue()}
        self.tasks = []
        self.done = False

    def writer(self, direction):
        return self.swriter if direction == "up" else self.cwriter

    def close(self, by, rst=False):
        if self.done:
            return
        self.done = True
        self.t_close = time.monotonic()
        self.closed_by = by
        for w in (self.cwriter, self.swriter):
            if w is None:
                continue
            try:
                if rst:
                    s = w.get_extra_info("socket")
                    if s is not None:
                        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                     struct.pack("ii", 1, 0))
                    w.transport.abort()
                else:
                    w.close()
            except (OSError, RuntimeError):
                pass
        for t in self.tasks:
            if t is not asyncio.current_task():
                t.cancel()
        self.proxy._closed(self)


class Proxy:
    """One listener.  Thread-safe setters; see the module doc for modes."""

    def __init__(self, hub, upstream_host, upstream_port, name):
        self.hub = hub
        self.name = name
        self.upstream = (upstream_host, upstream_port)
        self.port = None
        self._server = None
        self._lock = threading.Lock()
        self._ids = 0
        self.conns = {}             # open connections by id
        self.history = []           # closed connections (dicts)
        self.events = []            # (t, what, conn id, detail)
        self.accepted = 0
        self.mode = "pass"
        self.up_ms = 0.0
        self.down_ms = 0.0
        self.min_req_bytes = 1
        self.count = None
        self.trickle_bytes = 1
        self.trickle_ms = 50.0
        self.trickle_dir = "down"
        self.tickets = 2            # TLS 1.3 tickets fakeapi (OpenSSL) sends

    def __repr__(self):
        return "Proxy(%s :%s -> :%s %s)" % (self.name, self.port,
                                             self.upstream[1], self.mode)

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port

    # -- control (any thread) ------------------------------------------

    def set(self, mode, up_ms=0.0, down_ms=0.0, min_req_bytes=1, count=None,
            trickle_bytes=1, trickle_ms=50.0, direction="down"):
        """Switch mode.  latency: up_ms/down_ms.  drop_after_forward:
        min_req_bytes, count (None: every answer).  trickle: trickle_bytes,
        trickle_ms, direction.  hold_once: up_ms, min_req_bytes."""
        if mode not in MODES:
            raise ValueError("unknown mode %r (one of %s)"
                             % (mode, ", ".join(MODES)))
        with self._lock:
            self.mode = mode
            self.up_ms, self.down_ms = float(up_ms), float(down_ms)
            self.min_req_bytes = int(min_req_bytes)
            self.count = count
            self.trickle_bytes = max(1, int(trickle_bytes))
            self.trickle_ms = float(trickle_ms)
            self.trickle_dir = direction
            self._event("mode", None, mode)
        self.hub.call(self._apply(mode))

    def clear(self):
        self.set("pass")

    def stats(self):
        with self._lock:
            return {"accepted": self.accepted, "open": len(self.conns),
                    "history": [dict(h) for h in self.history],
                    "events": list(self.events)}

    def events_of(self, what):
        with self._lock:
            return [e for e in self.events if e[1] == what]

    # -- internals (hub loop) ------------------------------------------

    def _next_id(self):
        self._ids += 1
        return self._ids

    def _event(self, what, cid, detail=None):
        self.events.append((time.monotonic(), what, cid, detail))

    async def _start(self):
        self._server = await asyncio.start_server(
            self._accept, "127.0.0.1", 0, backlog=512)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self):
        if self._server is not None:
            self._server.close()
        for c in list(self.conns.values()):
            c.close("proxy")

    async def _apply(self, mode):
        for c in list(self.conns.values()):
            if mode == "reset":
                self._event("rst", c.id)
                c.close("proxy", rst=True)
            elif mode == "half_open" and not c.frozen:
                c.frozen = True
                self._event("freeze", c.id)
            elif mode == "pass" and (c.blackholed or c.frozen):
                # A healed network does not resurrect streams whose bytes
                # were thrown away: those connections are closed.
                self._event("close_stale", c.id)
                c.close("proxy")

    def _classify_down(self, c, pieces):
        """Whether a server-to-client chunk carries (part of) an answer to
        a request, as opposed to TLS handshake records or, in TLS 1.3, the
        session tickets a server sends after the client's Finished (the
        client sends its request right behind its Finished, so tickets
        arrive after the request was forwarded)."""
        answer = False
        for kind, _, new in pieces:
            if new:
                if kind != TLS_APPDATA:
                    c.down_kind = "hs"
                elif not c.client_appdata:
                    c.tls13 = True
                    c.down_kind = "hs"
                elif c.tickets_left > 0:
                    c.tickets_left -= 1
                    c.down_kind = "ticket"
                else:
                    c.down_kind = "answer"
            if c.down_kind == "answer":
                answer = True
        return answer

    def _closed(self, c):
        with self._lock:
            self.conns.pop(c.id, None)
            self.history.append({
                "id": c.id, "t_open": c.t_open, "t_close": c.t_close,
                "closed_by": c.closed_by, "frozen": c.frozen,
                "blackholed": c.blackholed, "up": c.up_bytes,
                "down": c.down_bytes})

    async def _accept(self, creader, cwriter):
        c = _Conn(self, creader, cwriter)
        with self._lock:
            self.accepted += 1
            self.conns[c.id] = c
            mode = self.mode
        self._event("accept", c.id)
        if mode == "reset":
            self._event("rst", c.id)
            c.close("proxy", rst=True)
            return
        if mode == "blackhole":
            c.blackholed = True
            c.tasks.append(asyncio.current_task())
            await self._sink(c, creader)
            return
        try:
            c.sreader, c.swriter = await asyncio.open_connection(
                *self.upstream)
        except OSError as e:
            self._event("upstream_error", c.id, str(e))
            c.close("proxy", rst=True)
            return
        if c.done:      # reset while connecting
            c.swriter.close()
            return
        c.tasks = [asyncio.ensure_future(self._pump(c, c.creader, "up")),
                   asyncio.ensure_future(self._pump(c, c.sreader, "down")),
                   asyncio.ensure_future(self._send(c, "up")),
                   asyncio.ensure_future(self._send(c, "down"))]

    async def _sink(self, c, reader):
        """Blackhole a connection that has no upstream: read, discard."""
        try:
            while not c.done:
                data = await reader.read(CHUNK)
                if not data:
                    c.close("client")
                    return
                c.up_bytes += len(data)
        except (OSError, asyncio.CancelledError):
            if not c.done:
                c.close("client")

    async def _pump(self, c, reader, direction):
        try:
            while not c.done:
                data = await reader.read(CHUNK)
                if not data:
                    if c.frozen and direction == "down":
                        # A vanished peer sends no FIN: keep the client
                        # side open and say nothing.
                        return
                    c.close("client" if direction == "up" else "server")
                    return
                self._route(c, direction, data)
        except asyncio.CancelledError:
            pass
        except OSError:
            if not c.done:
                c.close("client" if direction == "up" else "server")

    def _route(self, c, direction, data):
        with self._lock:
            mode = self.mode
            delay = self.up_ms if direction == "up" else self.down_ms
        if direction == "up":
            c.up_bytes += len(data)
        else:
            c.down_bytes += len(data)
        if c.frozen:
            if direction == "up" and not c.frozen_data:
                c.frozen_data = True
                self._event("frozen_data", c.id)
            return
        if mode == "half_open":
            # Connections opened after the switch pass.
            mode = "pass"
        if mode == "blackhole":
            c.blackholed = True
            return
        if mode == "reset":
            c.close("proxy", rst=True)
            return
        answer = False
        if direction == "up":
            pieces = c.tls_up.feed(data)
            if not c.client_appdata and any(k == TLS_APPDATA
                                            for k, _, _ in pieces):
                c.client_appdata = True
                if c.tls13:
                    c.tickets_left = self.tickets
            c.req_bytes += _TLSCounter.appdata(pieces)
            if mode == "hold_once" and c.req_bytes >= self.min_req_bytes:
                with self._lock:
                    armed = self.mode == "hold_once"
                    if armed:
                        self.mode = "pass"
                if armed:
                    self._event("hold", c.id, c.req_bytes)
                    self._event("mode", None, "pass (hold used)")
                    c.queues[direction].put_nowait(
                        (time.monotonic() + self.up_ms / 1000.0, data))
                    return
        else:
            answer = self._classify_down(c, c.tls_down.feed(data))
        if mode == "drop_after_forward" and answer:
            with self._lock:
                armed = (self.mode == "drop_after_forward" and
                         c.req_bytes >= self.min_req_bytes and
                         (self.count is None or self.count > 0))
                if armed and self.count is not None:
                    self.count -= 1
                    if self.count == 0:
                        self.mode = "pass"
                        self._event("mode", None, "pass (count used)")
                req = c.req_bytes
            if armed:
                self._event("drop_answer", c.id, req)
                c.close("proxy")
                return
        if answer and c.req_bytes > 0:
            self._event("answer", c.id, c.req_bytes)
            c.req_bytes = 0
        due = time.monotonic() + (delay / 1000.0 if mode == "latency" else 0)
        c.queues[direction].put_nowait((due, data))

    async def _send(self, c, direction):
        q = c.queues[direction]
        try:
            while not c.done:
                due, data = await q.get()
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                w = c.writer(direction)
                with self._lock:
                    trickle = (self.mode == "trickle" and
                               self.trickle_dir == direction)
                    step, gap = self.trickle_bytes, self.trickle_ms / 1000.0
                if c.frozen or c.done:
                    continue
                if not trickle:
                    w.write(data)
                    await w.drain()
                    continue
                for i in range(0, len(data), step):
                    if c.done or c.frozen:
                        break
                    w.write(data[i:i + step])
                    await w.drain()
                    await asyncio.sleep(gap)
        except asyncio.CancelledError:
            pass
        except (OSError, RuntimeError):
            if not c.done:
                c.close("client" if direction == "down" else "server")
