#!/usr/bin/env python3
"""fencing -- the fencing oracle: Jepsen's lock-set for leaderd.

Each leaderd instance has an application, a worker that acts only while
it believes it leads.  Every action goes to two places, both kept by a
small server in the test process (Oracle):

  fenced store  refuses a token lower than the highest it has accepted
                (the rule docs/api.md "Fencing token" gives users); every
                attempt is recorded with its invocation time (the worker's
                send time) and its completion time (when the store had
                decided), accepted or refused;
  shadow log    unfenced: records every action as it lands.

All times are time.monotonic() (CLOCK_MONOTONIC), the clock leaderd,
fakeapi and every test process on the machine share.

The checker (check_history) verifies on the fenced store's history:

  (a) it never accepted a lower token after a higher one (apply order);
  (b) the accepted history is linearizable as a max-token register: if
      A completed before B was invoked, token(A) <= token(B);

and measures (c), the exposure window of the shadow log: for each new
term, how long actions with an older token kept landing after the new
term's first action (exposure()).

The worker is this file run as a script:

    fencing.py worker --store PORT --name NAME --mode run
        a `leaderd run` command: acts with $LEADERD_FENCING_TOKEN every
        --period seconds until it is stopped;
    fencing.py worker --store PORT --name NAME --mode api --leaderd PORT
        polls GET /leader every --poll seconds and acts, every --period
        seconds, only while the last answer said is_leader and its
        valid_for_ms, counted from that poll's send time, has not run
        out (a poll that gets no answer changes nothing);
    fencing.py worker ... --mode watch --leaderd PORT
        holds GET /leader/watch and acts while its last event said
        is_leader, with no valid_for_ms check: the stream's end, or
        --silence seconds without a line, means "not leader".

Between its check (am I leader?) and its write, a worker stops itself
with SIGSTOP when its pause file (--pause-file) exists: the nemesis
Jepsen uses against lock clients, at a chosen moment.  It removes the
file first, so it pauses once per file.

Python 3.11 standard library only.
"""

import argparse
import json
import os
import signal
import socket
import socketserver
import sys
import threading
import time
import urllib.request

# -- tokens ----------------------------------------------------------------


def token_key(token):
    """(uid, leaseTransitions) of a fencing token
    "0000000007-6f1c0d0e-...": ten digits of leaseTransitions, "-", the
    Lease's metadata.uid (docs/api.md "Fencing token").  ValueError for
    anything else, the empty token (a free lease) included."""
    if not isinstance(token, str) or len(token) < 12 or token[10] != "-" \
            or not token[:10].isdigit():
        raise ValueError("not a fencing token: %r" % (token,))
    return token[11:], int(token[:10])


def token_cmp(a, b):
    """-1, 0 or 1 as token a orders before, with or after b.  Tokens of
    one Lease (one uid) order by leaseTransitions, which is also their
    order as plain strings (ten digits).  Tokens of different uids (the
    Lease deleted and created again) do not compare: ValueError, for the
    store must be reset on purpose."""
    ua, na = token_key(a)
    ub, nb = token_key(b)
    if ua != ub:
        raise ValueError("tokens of different Leases (uid %s, %s) do not "
                         "compare; reset the store on purpose" % (ua, ub))
    return (na > nb) - (na < nb)


# -- the store and the shadow log ------------------------------------------


class FencedStore:
    """A store that keeps the highest token accepted and refuses a lower
    one (an equal one is accepted: one term writes many times).  A token
    of another Lease uid is refused ("uid") until reset().  history:
    one dict per attempt, in apply order: seq, worker, token, t_inv,
    t_done, ok, why ("" when accepted, "stale" or "uid")."""

    def __init__(self):
        self.highest = None
        self.history = []
        self._lock = threading.Lock()

    def write(self, worker, token, t_inv):
        with self._lock:
            why = ""
            if self.highest is not None:
                try:
                    if token_cmp(token, self.highest) < 0:
                        why = "stale"
                except ValueError:
                    why = "uid"
            if not why:
                self.highest = token
            rec = {"seq": len(self.history), "worker": worker,
                   "token": token, "t_inv": t_inv, "ok": not why,
                   "why": why, "t_done": time.monotonic()}
            self.history.append(rec)
            return rec

    def reset(self):
        """Forget the highest token (a new Lease uid, on purpose)."""
        with self._lock:
            self.highest = None


class ShadowLog:
    """The unfenced copy: every action lands.  entries: dicts with
    worker, token, t (arrival)."""

    def __init__(self):
        self.entries = []
        self._lock = threading.Lock()

    def append(self, worker, token):
        with self._lock:
            e = {"worker": worker, "token": token, "t": time.monotonic()}
            self.entries.append(e)
            return e


class Oracle:
    """The fenced store and the shadow log behind one TCP port on
    loopback.  A worker sends lines "act NAME TOKEN T_INV PID"; each goes
    to the shadow log, then to the fenced store, and is answered "ok" or
    "refused WHY".  pids: the last pid seen per worker name."""

    def __init__(self):
        self.store = FencedStore()
        self.shadow = ShadowLog()
        self.pids = {}
        oracle = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                try:
                    for line in self.rfile:
                        self.wfile.write(self.act(line.decode().split()))
                except ConnectionError:
                    pass        # a worker killed mid-exchange

            def act(self, p):
                if len(p) != 5 or p[0] != "act":
                    return b"error\n"
                name, token, t_inv, pid = p[1], p[2], float(p[3]), int(p[4])
                oracle.pids[name] = pid
                oracle.shadow.append(name, token)
                r = oracle.store.write(name, token, t_inv)
                return b"ok\n" if r["ok"] else \
                    ("refused %s\n" % r["why"]).encode()

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._srv = Server(("127.0.0.1", 0), Handler)
        self.port = self._srv.server_address[1]
        self._thread = threading.Thread(target=self._srv.serve_forever,
                                        daemon=True, name="fencing-oracle")

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._srv.shutdown()
        self._srv.server_close()

    def accepted(self, since=None, until=None):
        return [r for r in self.store.history if r["ok"] and
                (since is None or r["t_done"] >= since) and
                (until is None or r["t_done"] < until)]

    def refused(self, since=None, until=None):
        return [r for r in self.store.history if not r["ok"] and
                (since is None or r["t_done"] >= since) and
                (until is None or r["t_done"] < until)]

    def first_accepted(self, since, exclude_token=None):
        """The first accepted action after since with another token."""
        return next((r for r in self.accepted(since)
                     if r["token"] != exclude_token), None)


# -- the checker -----------------------------------------------------------


def check_fenced(history):
    """(a): in apply order, no accepted token is lower than one accepted
    before it.  Returns the number of accepted attempts."""
    hi, n = None, 0
    for r in sorted(history, key=lambda r: r["seq"]):
        if not r["ok"]:
            continue
        n += 1
        if hi is not None and token_cmp(r["token"], hi["token"]) < 0:
            raise AssertionError(
                "fenced store accepted token %s (seq %d, %s) after %s "
                "(seq %d, %s)" % (r["token"], r["seq"], r["worker"],
                                  hi["token"], hi["seq"], hi["worker"]))
        if hi is None or token_cmp(r["token"], hi["token"]) > 0:
            hi = r
    return n


def check_linearizable(history):
    """(b): the accepted attempts as a max-token register: whenever A
    completed before B was invoked (A.t_done < B.t_inv), token(A) <=
    token(B).  A sweep over completions in time order, O(n log n)."""
    acc = [r for r in history if r["ok"]]
    done = sorted(acc, key=lambda r: r["t_done"])
    i, top = 0, None            # top: the highest token completed so far
    for b in sorted(acc, key=lambda r: r["t_inv"]):
        while i < len(done) and done[i]["t_done"] < b["t_inv"]:
            if top is None or token_cmp(done[i]["token"], top["token"]) > 0:
                top = done[i]
            i += 1
        if top is not None and token_cmp(b["token"], top["token"]) < 0:
            raise AssertionError(
                "not linearizable as a max-token register: %s (%s) "
                "completed at %.6f, before %s (%s) was invoked at %.6f "
                "with a lower token" % (top["token"], top["worker"],
                                        top["t_done"], b["token"],
                                        b["worker"], b["t_inv"]))
    return len(acc)


def exposure(entries, since=None, until=None):
    """(c): per new term in the shadow log (a token greater than every
    one before it), how long actions with older tokens kept landing
    after that term's first action: a list of dicts token, first (its
    first action's time), stale (older-token actions landing after it),
    window (seconds from first to the last of those; 0.0 if none).
    Terms whose first action falls outside [since, until) are left out;
    their stale actions are counted however late."""
    es = sorted(entries, key=lambda e: e["t"])
    out, hi = [], None
    for e in es:
        if hi is None or token_cmp(e["token"], hi) > 0:
            hi = e["token"]
            if (since is None or e["t"] >= since) and \
                    (until is None or e["t"] < until):
                out.append({"token": e["token"], "first": e["t"],
                            "stale": 0, "window": 0.0, "by": set()})
    for t in out:
        late = [e for e in es if e["t"] >= t["first"] and
                token_cmp(e["token"], t["token"]) < 0]
        t["stale"] = len(late)
        t["by"] = sorted({e["worker"] for e in late})
        if late:
            t["window"] = late[-1]["t"] - t["first"]
    return out


def check_history(oracle):
    """(a) and (b) on the fenced store; returns the number accepted."""
    h = list(oracle.store.history)
    check_fenced(h)
    return check_linearizable(h)


# -- the worker ------------------------------------------------------------


class _Store:
    """The worker's end of the Oracle connection."""

    def __init__(self, port, name):
        self.name = name
        self.sock = socket.create_connection(("127.0.0.1", port),
                                             timeout=5.0)
        self.rf = self.sock.makefile("rb")

    def act(self, token):
        t_inv = time.monotonic()
        self.sock.sendall(("act %s %s %.6f %d\n" % (
            self.name, token, t_inv, os.getpid())).encode())
        return self.rf.readline().decode().strip()


def _maybe_pause(path):
    """The nemesis: between the check and the write, stop this process
    (once per pause file)."""
    if path and os.path.exists(path):
        try:
            os.unlink(path)
        except FileNotFoundError:
            return
        os.kill(os.getpid(), signal.SIGSTOP)


def _leader(port, timeout):
    """(is_leader, token, valid_for_ms) from GET /leader, or None."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/leader" % port,
                                    timeout=timeout) as r:
            d = json.loads(r.read())
        return (d.get("is_leader") is True, d.get("fencing_token") or "",
                int(d.get("valid_for_ms") or 0))
    except (OSError, ValueError):
        return None


def worker_run(a):
    token = os.environ.get("LEADERD_FENCING_TOKEN", "")
    if not token:
        print("fencing worker: no LEADERD_FENCING_TOKEN", file=sys.stderr)
        return 2
    st = _Store(a.store, a.name or os.environ.get("LEADERD_IDENTITY", "?"))
    while True:
        # The check: leaderd runs this command only while it leads.
        _maybe_pause(a.pause_file)
        st.act(token)
        time.sleep(a.period)


def worker_api(a):
    st = _Store(a.store, a.name)
    valid_until, token, next_poll = 0.0, "", 0.0
    while True:
        now = time.monotonic()
        if now >= next_poll:
            t_send = time.monotonic()
            v = _leader(a.leaderd, a.poll)
            next_poll = t_send + a.poll
            if v is None:
                pass            # no answer: the last one holds
            elif not v[0] or not v[1]:
                valid_until = 0.0
            else:
                token = v[1]
                valid_until = t_send + v[2] / 1000.0
        # The check: within valid_for_ms of a poll that said leader.
        if time.monotonic() < valid_until:
            _maybe_pause(a.pause_file)
            st.act(token)
        time.sleep(a.period)


class _Stream:
    """The watch worker's view: a thread holding GET /leader/watch; an
    event sets (leading, token); a stream that ends, fails or stays
    silent for --silence seconds means "not leader" (docs/api.md, "Push
    API")."""

    def __init__(self, port, silence):
        self.port = port
        self.silence = silence
        self.leading, self.token = False, ""
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            try:
                s = socket.create_connection(("127.0.0.1", self.port),
                                             timeout=self.silence)
                s.sendall(b"GET /leader/watch HTTP/1.1\r\nHost: localhost"
                          b"\r\n\r\n")
                for line in s.makefile("rb"):
                    if line.startswith(b"data:"):
                        d = json.loads(line[5:])
                        self.token = d.get("fencing_token") or ""
                        self.leading = d.get("is_leader") is True and \
                            bool(self.token)
            except (OSError, ValueError):
                pass
            self.leading = False
            time.sleep(0.1)


def worker_watch(a):
    st = _Store(a.store, a.name)
    view = _Stream(a.leaderd, a.silence)
    while True:
        # The check: the last event said we lead, and the stream is up.
        if view.leading:
            token = view.token
            _maybe_pause(a.pause_file)
            st.act(token)
        time.sleep(a.period)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("worker")
    w.add_argument("--store", type=int, required=True,
                   help="the Oracle's port on 127.0.0.1")
    w.add_argument("--name", default=None)
    w.add_argument("--mode", choices=("run", "api", "watch"), required=True)
    w.add_argument("--leaderd", type=int, default=None,
                   help="api mode: leaderd's listen.http port")
    w.add_argument("--period", type=float, default=0.02)
    w.add_argument("--poll", type=float, default=0.1)
    w.add_argument("--silence", type=float, default=20.0,
                   help="watch mode: a stream this long without a line "
                   "is broken")
    w.add_argument("--pause-file", default=None)
    a = ap.parse_args(argv)
    if a.mode != "run" and (a.leaderd is None or not a.name):
        ap.error("--mode %s needs --leaderd and --name" % a.mode)
    try:
        return {"run": worker_run, "api": worker_api,
                "watch": worker_watch}[a.mode](a)
    except (BrokenPipeError, ConnectionError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
