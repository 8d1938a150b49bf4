"""The HA harness's balancer and etcd peer proxy (tcplb.py), on echo
servers: round robin, stall and restore, kill (a reset, even while a
pump waits in recv), and a peer partition chosen by X-Server-From."""

import socket
import threading
import time

import pytest

import tcplb


class Echo:
    """A TCP server that answers every chunk with tag + chunk."""

    def __init__(self, tag):
        self.tag = tag
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,),
                             daemon=True).start()

    def _serve(self, c):
        with c:
            while True:
                # A connection the balancer cut may be reset either way.
                try:
                    d = c.recv(4096)
                    if not d:
                        return
                    c.sendall(self.tag + d)
                except OSError:
                    return

    def close(self):
        self.sock.close()


@pytest.fixture
def echoes():
    es = [Echo(b"A:"), Echo(b"B:")]
    yield es
    for e in es:
        e.close()


def ask(port, data=b"hi", timeout=2.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(data)
    return s, s.recv(100)


def test_round_robin_skips_a_killed_backend(echoes):
    lb = tcplb.Balancer([e.port for e in echoes])
    try:
        got = [ask(lb.port)[1] for _ in range(4)]
        assert got == [b"A:hi", b"B:hi", b"A:hi", b"B:hi"]
        lb.kill(0)
        assert [ask(lb.port)[1] for _ in range(3)] == [b"B:hi"] * 3
        lb.restore(0)
        assert {ask(lb.port)[1] for _ in range(2)} == {b"A:hi", b"B:hi"}
    finally:
        lb.close()


def test_kill_resets_an_idle_connection(echoes):
    """The client waits in recv and the pump waits in recv: kill must
    still reach it (a close alone left it open for ever)."""
    lb = tcplb.Balancer([echoes[0].port])
    try:
        s, first = ask(lb.port)
        assert first == b"A:hi"
        s.settimeout(3)
        t0 = time.monotonic()
        threading.Timer(0.2, lb.kill, args=(0,)).start()
        with pytest.raises(ConnectionResetError):
            assert s.recv(100) != b"", "a FIN, not a reset"
        assert time.monotonic() - t0 < 2
        # New connections are reset too (on loopback the reset may come
        # before connect returns).
        with pytest.raises(ConnectionResetError):
            n = socket.create_connection(("127.0.0.1", lb.port), timeout=1)
            assert n.recv(1) != b"", "a FIN, not a reset"
    finally:
        lb.close()


def test_stall_holds_and_restore_delivers(echoes):
    lb = tcplb.Balancer([echoes[0].port])
    try:
        s, _ = ask(lb.port)
        lb.stall(0)
        s.sendall(b"late")
        s.settimeout(0.5)
        with pytest.raises(socket.timeout):
            s.recv(100)
        lb.restore(0)
        s.settimeout(2)
        assert s.recv(100) == b"A:late"
    finally:
        lb.close()


def test_peer_proxy_cuts_by_sender(echoes):
    cut = {"ids": set()}

    def is_cut(sender, receiver):
        return sender in cut["ids"] or receiver in cut["ids"]

    pp = tcplb.PeerProxy(echoes[0].port, "r1", is_cut)
    try:
        req = b"GET /raft HTTP/1.1\r\nX-Server-From: s2\r\n\r\n"
        s, got = ask(pp.port, req)
        assert got == b"A:" + req
        cut["ids"] = {"s2"}
        pp.update()
        s.sendall(b"x")
        s.settimeout(0.5)
        with pytest.raises(socket.timeout):
            s.recv(100)
        # A new connection from the cut sender is held too; another
        # sender's passes.
        h = socket.create_connection(("127.0.0.1", pp.port), timeout=0.5)
        h.sendall(req)
        with pytest.raises(socket.timeout):
            h.recv(100)
        other = req.replace(b"s2", b"s3")
        assert ask(pp.port, other)[1] == b"A:" + other
        # Healed: the held connections are reset (their data is stale).
        cut["ids"] = set()
        pp.update()
        s.settimeout(2)
        with pytest.raises(ConnectionResetError):
            assert s.recv(100) != b"", "a FIN, not a reset"
    finally:
        pp.close()
