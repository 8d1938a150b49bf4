"""The fencing oracle's own tests (fencing.py): the token order, the
fenced store, and the checker failing on planted violations: a lower
token accepted after a higher one, a history that is not linearizable
as a max-token register, and the exposure window of a shadow log."""

import os
import signal
import subprocess
import sys
import time

import pytest

import fencing
from fencing import (FencedStore, check_fenced, check_linearizable,
                     exposure, token_cmp, token_key)

UID = "6f1c0d0e-9c2e-4b1a-8d7e-2a3b4c5d6e7f"
HERE = os.path.dirname(os.path.abspath(__file__))


def tok(n, uid=UID):
    return "%010d-%s" % (n, uid)


def rec(seq, token, t_inv, t_done, ok=True, worker="w"):
    return {"seq": seq, "worker": worker, "token": token, "t_inv": t_inv,
            "t_done": t_done, "ok": ok, "why": "" if ok else "stale"}


def test_token_order():
    assert token_key(tok(7)) == (UID, 7)
    assert token_cmp(tok(9), tok(10)) == -1
    assert token_cmp(tok(10), tok(9)) == 1
    assert token_cmp(tok(3), tok(3)) == 0
    # Ten digits: the numeric order is the plain string order.
    assert (tok(9) < tok(10)) == (token_cmp(tok(9), tok(10)) < 0)
    with pytest.raises(ValueError):
        token_cmp(tok(1), tok(2, uid="another-uid"))
    for bad in ("", "7-" + UID, "000000000x-" + UID, None):
        with pytest.raises(ValueError):
            token_key(bad)


def test_store_refuses_lower_accepts_equal_and_higher():
    s = FencedStore()
    assert s.write("a", tok(1), 0.0)["ok"]
    assert s.write("a", tok(1), 0.1)["ok"]
    assert s.write("b", tok(2), 0.2)["ok"]
    r = s.write("a", tok(1), 0.3)
    assert not r["ok"] and r["why"] == "stale"
    r = s.write("c", tok(5, uid="new-uid"), 0.4)
    assert not r["ok"] and r["why"] == "uid"
    s.reset()
    assert s.write("c", tok(0, uid="new-uid"), 0.5)["ok"]
    assert [r["seq"] for r in s.history] == list(range(6))
    assert check_fenced(s.history[:4]) == 3
    assert check_linearizable(s.history[:4]) == 3


def test_checker_fails_on_lower_token_accepted_after_higher():
    h = [rec(0, tok(1), 0.0, 0.1), rec(1, tok(2), 0.2, 0.3),
         rec(2, tok(1), 0.4, 0.5)]
    with pytest.raises(AssertionError, match="accepted token 0000000001"):
        check_fenced(h)
    # A refused lower token is no violation.
    h[2]["ok"] = False
    assert check_fenced(h) == 2


def test_checker_fails_on_non_linearizable_history():
    # Applied in seq order with rising tokens (so (a) holds), but B
    # (token 2) completed at 0.3 before A (token 1) was invoked at 0.4:
    # in real time A's lower token came after B's.
    h = [rec(0, tok(1), 0.4, 0.5, worker="A"),
         rec(1, tok(2), 0.2, 0.3, worker="B")]
    assert check_fenced(h) == 2
    with pytest.raises(AssertionError, match="not linearizable"):
        check_linearizable(h)
    # Overlapping in time, either order is a valid linearization.
    h[0]["t_inv"] = 0.25
    assert check_linearizable(h) == 2


def test_exposure_window():
    e = [{"worker": "a", "token": tok(1), "t": 1.0},
         {"worker": "a", "token": tok(1), "t": 2.0},
         {"worker": "b", "token": tok(2), "t": 2.5},   # new term's first
         {"worker": "a", "token": tok(1), "t": 2.6},
         {"worker": "a", "token": tok(1), "t": 3.25},  # last stale
         {"worker": "b", "token": tok(2), "t": 3.5},
         {"worker": "c", "token": tok(3), "t": 4.0}]   # clean change
    x = exposure(e)
    assert [(t["token"], t["stale"]) for t in x] == [
        (tok(1), 0), (tok(2), 2), (tok(3), 0)]
    assert x[1]["window"] == pytest.approx(0.75)
    assert x[1]["by"] == ["a"]
    assert x[2]["window"] == 0.0
    assert [t["token"] for t in exposure(e, since=2.4, until=3.9)] == \
        [tok(2)]


def test_worker_pauses_between_check_and_write(tmp_path):
    """A run-mode worker against a live Oracle: it acts with its token;
    with the pause file present it stops itself before its next write,
    and writes (a stale write, refused) once continued."""
    o = fencing.Oracle().start()
    pause = str(tmp_path / "pause")
    env = dict(os.environ, LEADERD_FENCING_TOKEN=tok(1))
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "fencing.py"),
                          "worker", "--store", str(o.port), "--name", "w1",
                          "--mode", "run", "--pause-file", pause], env=env)
    try:
        end = time.monotonic() + 10
        while len(o.accepted()) < 3 and time.monotonic() < end:
            time.sleep(0.02)
        assert len(o.accepted()) >= 3
        open(pause, "w").close()
        while not _stopped(p.pid) and time.monotonic() < end:
            time.sleep(0.01)
        assert _stopped(p.pid) and not os.path.exists(pause)
        n = len(o.shadow.entries)
        time.sleep(0.2)
        assert len(o.shadow.entries) == n       # nothing while stopped
        o.store.write("w2", tok(2), time.monotonic())
        p.send_signal(signal.SIGCONT)
        while not o.refused() and time.monotonic() < end:
            time.sleep(0.01)
        r = o.refused()[0]
        assert (r["worker"], r["token"], r["why"]) == ("w1", tok(1), "stale")
        assert any(e["token"] == tok(1) and e["t"] >= r["t_inv"]
                   for e in o.shadow.entries)
        assert check_fenced(o.store.history) >= 4
    finally:
        p.kill()
        p.wait()
        o.stop()


def _stopped(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


def test_api_worker_acts_within_valid_for_ms_of_its_last_answer():
    """An API-mode worker against a /leader that says "leader, valid for
    300 ms", then stops answering: the worker acts on, but never later
    than 300 ms after the last answered poll was sent (here: received,
    a later moment), and never with another token."""
    import http.server
    import json
    import threading

    state = {"answer": True, "last": 0.0}

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if not state["answer"]:
                time.sleep(2)
                return
            state["last"] = time.monotonic()
            body = json.dumps({"is_leader": True, "fencing_token": tok(4),
                               "valid_for_ms": 300}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    o = fencing.Oracle().start()
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "fencing.py"),
                          "worker", "--store", str(o.port), "--name", "w",
                          "--mode", "api", "--leaderd",
                          str(srv.server_address[1]), "--poll", "0.1"])
    try:
        end = time.monotonic() + 10
        while len(o.accepted()) < 10 and time.monotonic() < end:
            time.sleep(0.02)
        assert len(o.accepted()) >= 10
        state["answer"] = False
        t_off = time.monotonic()
        time.sleep(1.0)
        h = o.store.history
        assert {r["token"] for r in h} == {tok(4)}
        last = max(r["t_inv"] for r in h)
        assert last > t_off, "stopped at the first unanswered poll"
        assert last <= state["last"] + 0.3, (last - state["last"])
    finally:
        p.kill()
        p.wait()
        o.stop()
        srv.shutdown()
