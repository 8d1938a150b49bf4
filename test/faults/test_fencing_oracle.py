"""The fencing oracle (test/kit/fencing.py) under faults: rows FO1-FO3.

Three leaderd instances on one lock, each with an application, a worker
that acts every 20 ms only while it believes it leads, in run mode (the
worker is the `leaderd run` command, with $LEADERD_FENCING_TOKEN), in
API mode (the worker polls GET /leader every 100 ms and acts within
valid_for_ms of the poll's send time) or, in FO1 only, watch mode (the
worker holds GET /leader/watch and acts while its last event said
is_leader, with no valid_for_ms check).  Every action goes to a fenced
store and to an unfenced shadow log.  Each row checks, on the store's
history:

  (a) no lower token accepted after a higher one;
  (b) linearizable as a max-token register (A done before B invoked =>
      token(A) <= token(B));
  and, against fakeapi's write history: every accepted token is a term
  the server recorded, and only that term's holder's worker acted with
  it;

and prints (c), the exposure window: how long old-token actions kept
landing in the shadow log after the new term's first action.

FO1  kill -9, SIGSTOP for LD + 1.5 s, blackhole, 2.4 s of latency on
     the leader, in turn (one cluster per mode).  Exposure 0 expected,
     and asserted, except under SIGSTOP of leaderd in run and watch
     mode: a stopped leaderd can neither stop its command
     (docs/configuration.md, "The guarantee") nor send is_leader false
     on its stream, so the old worker acts on into the new term until
     SIGCONT; the test asserts that it does, that the store refuses
     every such action, and that they end within 0.5 s of SIGCONT.
FO2  Jepsen's nemesis: the leader's worker stops itself (SIGSTOP)
     between its check and its write, for LD + 1 s, while its leaderd is
     cut off from the API server (blackhole).  API mode: the stale write
     lands in the shadow log after the new term's first action, and the
     fenced store refuses it.  Run mode: leaderd SIGKILLs the stopped
     command at RD + run.grace, so the stale write never lands.
FO3  the whole pod frozen: the worker stopped between check and write
     and its leaderd SIGSTOPped, LD + 1 s; the worker is continued
     first, leaderd once the worker's write has landed (the worst order
     of a thaw).  Both modes: the stale write lands in the shadow log
     and is refused by the fenced store.

Timings: lease_duration 3s, renew_deadline 2s, retry_period 500ms,
request_timeout 1s, run.grace 800ms (faultlib.py)."""

import os
import signal
import subprocess
import sys
import time

import pytest

import fencing
from faultlib import FAILOVER, LD, NS, POLL, RD, RP, START, terms_ok, \
    wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(os.path.dirname(HERE), "kit", "fencing.py")
GRACE = 0.8
PERIOD = 0.02           # a worker acts every 20 ms
POLL_API = 0.1          # an API-mode worker polls /leader every 100 ms
MODES = ("run", "api")
FO1_MODES = ("run", "api", "watch")


class FencedGroup:
    """n leaderd instances, each with a fencing worker, and the Oracle
    they all act on."""

    def __init__(self, cluster, mode, workdir, n=3):
        self.cluster = cluster
        self.mode = mode
        self.oracle = fencing.Oracle().start()
        self.workers = {}       # name -> Popen (API mode)
        self.pause = {}
        self.ins = []
        for k in range(n):
            name = "fo-%d" % k
            self.pause[name] = os.path.join(workdir, "pause-" + name)
            args = []
            if mode == "run":
                args = ["run", "--grace", "%dms" % int(GRACE * 1000),
                        "--"] + self._worker_cmd(name)
            self.ins.append(cluster.new(name, args=args, log_level="info"))
        for i in self.ins:
            i.start(wait=False)
        for i in self.ins:
            i.wait_listening()
            if mode != "run":
                self.workers[i.name] = subprocess.Popen(
                    self._worker_cmd(i.name) + ["--leaderd", str(i.port),
                                                "--poll", str(POLL_API)],
                    stdin=subprocess.DEVNULL)

    def _worker_cmd(self, name):
        return [sys.executable, WORKER, "worker", "--store",
                str(self.oracle.port), "--name", name, "--mode", self.mode,
                "--period", str(PERIOD), "--pause-file", self.pause[name]]

    def close(self):
        for p in self.workers.values():
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
                p.kill()
            p.wait(5)
        for pid in list(self.oracle.pids.values()):
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
        self.oracle.stop()

    def by_name(self, name):
        return next(i for i in self.ins if i.name == name)

    def worker_pid(self, name):
        if self.mode != "run":
            return self.workers[name].pid
        return self.oracle.pids[name]

    def acting_leader(self, since, timeout, after_token=None):
        """The first accepted action after since with a token greater
        than after_token: (its instance, the action)."""
        def got():
            for r in self.oracle.accepted(since):
                if after_token is None or \
                        fencing.token_cmp(r["token"], after_token) > 0:
                    return r
            return None
        r = wait_until(got, timeout, what="a new term's first accepted "
                       "action (after %s)" % after_token)
        return self.by_name(r["worker"]), r

    def check(self):
        """(a), (b), and every action's token a server term whose holder
        is the worker's instance (worker name = instance name = identity).
        Returns the number accepted."""
        n = fencing.check_history(self.oracle)
        holders = {}
        for w in self.cluster.api.history(ns=NS, name=self.cluster.lock):
            h = w["spec"].get("holderIdentity") or ""
            if h and w["method"] != "DELETE":
                holders.setdefault("%010d-%s" % (
                    w["spec"].get("leaseTransitions", 0), w["uid"]),
                    set()).add(h)
        bad = [r for r in self.oracle.store.history
               if r["worker"] not in holders.get(r["token"], ())]
        assert bad == [], ("actions with a token whose term the server "
                           "gave to another holder (or never recorded): "
                           "%s; terms: %s" % (bad[:3], holders))
        return n


def _stopped(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"
    except OSError:
        return False


def _gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def _report(measure, g, row, fault, since, until, first=None):
    """Accepted, refused stale and the exposure window of the terms that
    began in [since, until); printed as figures of row."""
    o = g.oracle
    acc = len(o.accepted(since, until))
    ref = [r for r in o.refused(since, until) if r["why"] == "stale"]
    ex = fencing.exposure(o.shadow.entries, since, until)
    win = max([t["window"] for t in ex] or [0.0])
    stale = sum(t["stale"] for t in ex)
    what = "%s, %s" % (g.mode, fault)
    measure(row, what + ": accepted", acc, unit="")
    measure(row, what + ": refused stale", len(ref), unit="")
    measure(row, what + ": exposure window", win)
    print("FENCING %-4s %-4s %-28s accepted %5d  refused stale %4d  "
          "stale in shadow %4d  exposure %.3f s" % (
              row, g.mode, fault, acc, len(ref), stale, win))
    return {"accepted": acc, "refused": ref, "window": win, "stale": stale,
            "terms": ex}


@pytest.fixture
def group(cluster, tmp_path, request):
    g = FencedGroup(cluster, request.param, str(tmp_path))
    yield g
    g.close()


@pytest.mark.parametrize("group", FO1_MODES, indirect=True)
def test_fo1_fencing_oracle_kill_pause_partition_delay(group, measure):
    """FO1: kill -9, SIGSTOP (LD + 1.5 s), blackhole and 2.4 s latency
    on the leader, in turn.  Bound: (a), (b) and the server-term check
    hold; each fault ends in a new term whose worker's actions are
    accepted within LD + 2.2*RP + 1s + 1s; exposure window 0 (no old
    token in the shadow log after the new term's first action), except
    run and watch mode under SIGSTOP of leaderd, where old-token actions
    must land (and be refused) until SIGCONT, and no later than 0.5 s
    after it."""
    g = group
    leader, r = g.acting_leader(0.0, POLL + START + 3.0)
    tok = r["token"]
    for fault in ("kill -9", "SIGSTOP LD+1.5s", "blackhole",
                  "latency 2.4s"):
        time.sleep(2 * RP)
        t0 = time.monotonic()
        if fault == "kill -9":
            leader.kill9()
        elif fault.startswith("SIGSTOP"):
            leader.signal(signal.SIGSTOP)
        elif fault == "blackhole":
            leader.proxy.set("blackhole")
        else:
            leader.proxy.set("latency", down_ms=1.2 * RD * 1000.0)
        new, first = g.acting_leader(t0, FAILOVER + 1.0, after_token=tok)
        assert new is not leader
        t_cont = None
        if fault.startswith("SIGSTOP"):
            time.sleep(max(0.0, t0 + LD + 1.5 - time.monotonic()))
            t_cont = time.monotonic()
            leader.signal(signal.SIGCONT)
        elif fault == "kill -9":
            leader.start()
        else:
            leader.proxy.clear()
        # The old claim ended RD after its last renew, before the takeover
        # (LD after it): 1 s more for any old-token action still on its
        # way, and, after SIGCONT, for leaderd to stop its command.
        time.sleep(1.0)
        t1 = time.monotonic()
        rep = _report(measure, g, "FO1", fault, t0, t1)
        g.check()
        assert rep["accepted"] > 0
        if g.mode != "api" and fault.startswith("SIGSTOP"):
            assert rep["window"] > 0 and rep["refused"], (
                "%s mode, leaderd stopped: expected its worker to act on "
                "into the new term (and be refused)" % g.mode)
            # Continued, leaderd finds its claim over and at once stops
            # the command (run) or sends is_leader false (watch).
            last = max(e["t"] for e in g.oracle.shadow.entries
                       if e["token"] == tok)
            measure("FO1", "%s, stale actions end after SIGCONT" % g.mode,
                    last - t_cont, bound=0.5)
            assert last - t_cont <= 0.5
        else:
            assert rep["window"] == 0.0 and rep["stale"] == 0, (
                "%s mode, %s: old-token actions landed %.3fs into the new "
                "term: %s" % (g.mode, fault, rep["window"], rep["terms"]))
        leader, tok = new, first["token"]
    terms_ok(g.cluster)


def _nemesis(g, freeze_leaderd):
    """Pause the acting leader's worker between its check and its write
    for LD + 1 s; meanwhile cut its leaderd off (blackhole) or freeze it
    too (SIGSTOP).  Returns (old instance, old token, first action of the
    new term, worker pid, pause start, continue time)."""
    old, _ = g.acting_leader(0.0, POLL + START + 3.0)
    time.sleep(2 * RP)
    tok = g.oracle.accepted()[-1]["token"]
    pid = g.worker_pid(old.name)
    open(g.pause[old.name], "w").close()
    wait_until(lambda: _stopped(pid), 2.0, interval=0.005,
               what="the worker to stop between check and write")
    t_p = time.monotonic()
    if freeze_leaderd:
        old.signal(signal.SIGSTOP)
    else:
        old.proxy.set("blackhole")
    new, first = g.acting_leader(t_p, FAILOVER + 1.0, after_token=tok)
    assert new is not old
    time.sleep(max(0.0, t_p + LD + 1.0 - time.monotonic()))
    t_c = time.monotonic()
    if not _gone(pid):
        os.kill(pid, signal.SIGCONT)
    if freeze_leaderd:
        # The worst order of a thaw: leaderd continues once the worker's
        # write has landed.  Continued together, leaderd (run mode) finds
        # its claim over and SIGTERMs the command first in about half
        # the runs.
        _wait_stale(g, old, t_c)
        old.signal(signal.SIGCONT)
    else:
        old.proxy.clear()
    return old, tok, first, pid, t_p, t_c


@pytest.mark.parametrize("group", MODES, indirect=True)
def test_fo2_worker_paused_between_check_and_write(group, measure):
    """FO2: the leader's worker stops itself between its check and its
    write for LD + 1 s while its leaderd is blackholed.  Bound: API mode:
    the stale write reaches the shadow log after the new term's first
    action and the fenced store refuses it (why fencing is needed); run
    mode: the stopped command is gone (SIGKILL) before it can write,
    exposure 0.  (a), (b) and the server-term check hold."""
    g = group
    old, tok, first, pid, t_p, t_c = _nemesis(g, freeze_leaderd=False)
    if g.mode == "run":
        assert _gone(pid), "the stopped command outlived its claim"
    else:
        _wait_stale(g, old, t_c)
    time.sleep(1.0)
    _assert_nemesis(g, measure, "FO2", "worker paused",
                    old, tok, first, t_p)


@pytest.mark.parametrize("group", MODES, indirect=True)
def test_fo3_pod_frozen_between_check_and_write(group, measure):
    """FO3: the leader's worker stops itself between check and write and
    its leaderd is SIGSTOPped, LD + 1 s (a whole pod frozen); the worker
    is continued first, leaderd after its write.  Bound, both modes:
    the stale write lands in the shadow log after the new term's first
    action, and the fenced store refuses it; (a), (b) and the
    server-term check hold."""
    g = group
    old, tok, first, pid, t_p, t_c = _nemesis(g, freeze_leaderd=True)
    time.sleep(1.0)
    _assert_nemesis(g, measure, "FO3", "pod frozen", old, tok, first, t_p)


def _wait_stale(g, old, t_c):
    """Wait for the continued worker's write to land in the shadow log
    (it always does; the fenced store decides on it just after)."""
    wait_until(lambda: [e for e in g.oracle.shadow.entries
                        if e["worker"] == old.name and e["t"] >= t_c], 2.0,
               what="the continued worker's write in the shadow log")
    time.sleep(0.05)


def _assert_nemesis(g, measure, row, fault, old, tok, first, t_p):
    rep = _report(measure, g, row, fault, t_p, time.monotonic())
    g.check()
    stale = [e for e in g.oracle.shadow.entries
             if e["worker"] == old.name and e["token"] == tok and
             e["t"] >= first["t_done"]]
    refused = [r for r in rep["refused"] if r["worker"] == old.name]
    if g.mode == "run" and row == "FO2":
        assert stale == [] and rep["window"] == 0.0, stale[:3]
    else:
        # The shadow log shows the stale write landed in the new term;
        # the fenced store refused every one of them.
        assert stale, "no stale write landed in the shadow log"
        assert refused and len(refused) == len(stale), (refused, stale)
        assert all(r["token"] == tok for r in refused)
        assert rep["window"] > 0
        print("FENCING %s %s: stale write by %s (token %s) landed %.3f s "
              "after the new term's first action, refused by the fenced "
              "store" % (row, g.mode, old.name, tok,
                         stale[0]["t"] - first["t_done"]))
    terms_ok(g.cluster)
