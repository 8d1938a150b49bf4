"""The run mode, `leaderd run -- CMD`, against fakeapi: the command runs
only while its leaderd leads, gets SIGTERM then SIGKILL (run.grace) on
losing or on SIGTERM, in its whole process group, is restarted or ends
leaderd by run.restart, and never runs on two instances at once.

The command is runchild.py: it appends start/beat/term/stop/exit lines
with time.monotonic() to a marker file per instance, so the tests judge
from the commands' own records when each process lived.  Timings
(harness.py): lease_duration 3s, renew_deadline 2s, retry_period 500ms,
request_timeout 1s; run.grace 800ms fits in lease_duration -
renew_deadline."""

import os
import signal
import sys
import time

from harness import (LEASE_DURATION as LD, RENEW_DEADLINE as RD,
                     RETRY_PERIOD as RP, wait_until)

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD = os.path.join(os.path.dirname(HERE), "kit", "runchild.py")
GRACE = 0.8
SLACK = 1.5             # process start-up, scheduling, request latency
JITTER = 2.2            # acquire retry is retry_period x [1, 2.2)
NS = "default"


def run_args(marker, *child_args, grace=GRACE, restart=None):
    a = ["run", "--grace", "%dms" % int(grace * 1000)]
    if restart is not None:
        a += ["--restart", restart]
    return a + ["--", sys.executable, CHILD, marker] + list(child_args)


def records(marker):
    """[(pid, event, t, rest)] from one marker file."""
    out = []
    try:
        with open(marker) as f:
            for ln in f:
                parts = ln.rstrip("\n").split(" ", 3)
                if len(parts) >= 3:
                    out.append((int(parts[0]), parts[1], float(parts[2]),
                                parts[3] if len(parts) > 3 else ""))
    except FileNotFoundError:
        pass
    return out


def lives(marker):
    """Per process: [pid, first t, last t, start record's details]."""
    by = {}
    for pid, ev, t, rest in records(marker):
        if pid not in by:
            by[pid] = [pid, t, t, ""]
        by[pid][1] = min(by[pid][1], t)
        by[pid][2] = max(by[pid][2], t)
        if ev == "start":
            by[pid][3] = rest
    return sorted(by.values(), key=lambda x: x[1])


def starts(marker):
    return [r for r in records(marker) if r[1] == "start"]


def pid_gone(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    # A zombie still answers kill(0); read its state.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def assert_never_two(markers):
    """No two commands (of any instance, with their grandchildren) were
    ever alive at the same moment, from their own records."""
    spans = []
    for inst, m in markers.items():
        # A command and its grandchildren form one span per start.
        for pid, t0, t1, _ in lives(m):
            spans.append((inst, pid, t0, t1))
    spans.sort(key=lambda s: s[2])
    for i, a in enumerate(spans):
        for b in spans[i + 1:]:
            if a[0] != b[0] and a[2] < b[3] and b[2] < a[3]:
                raise AssertionError("commands of %s (pid %d, %.3f-%.3f) and "
                                     "%s (pid %d, %.3f-%.3f) overlap"
                                     % (a[0], a[1], a[2], a[3], b[0], b[1],
                                        b[2], b[3]))
    return spans


def start_run(cluster, name, marker, *child_args, **kw):
    grace = kw.pop("grace", GRACE)
    restart = kw.pop("restart", None)
    return cluster.start(name, args=run_args(marker, *child_args,
                                             grace=grace, restart=restart),
                         **kw)


def test_command_runs_while_leading_with_env_and_output(cluster, tmp_path):
    m = str(tmp_path / "a.marks")
    a = start_run(cluster, "ra", m, "--print", "hello from the command")
    wait_until(lambda: starts(m), JITTER * RP + SLACK + 2.0,
               what="the command to start")
    v = a.leader()
    assert v["is_leader"] is True
    st = starts(m)
    assert len(st) == 1
    rest = st[0][3]
    assert "LEADERD_IDENTITY=ra " in rest
    assert rest.endswith("LEADERD_LEASE=%s/%s" % (NS, cluster.lock))
    token = v["fencing_token"]
    assert token and "LEADERD_FENCING_TOKEN=%s" % token in rest
    # Its own process group, child of leaderd.
    pid = st[0][0]
    assert "pgid=%d ppid=%d" % (pid, a.pid) in rest
    # None of leaderd's sockets (listener, API connections) leaked into it.
    assert "sockets=0 " in rest, rest
    wait_until(lambda: "hello from the command" in
               open(a.stdout_path).read(), 3.0, what="stdout pass-through")
    assert "hello from the command (stderr)" in a.log()

    t_term = time.monotonic()
    a.terminate()
    assert a.wait(GRACE + 5.0) == 0
    recs = records(m)
    stop = [r for r in recs if r[1] == "stop"]
    assert stop and stop[0][2] >= t_term
    assert pid_gone(pid)
    # The release was written only after the command had stopped.
    rel = [w for w in a.writes() if not w["spec"].get("holderIdentity")]
    assert rel, a.writes()
    assert rel[-1]["t"] >= stop[0][2], (rel[-1], stop)
    assert cluster.lease()["spec"].get("holderIdentity") in (None, "")


def test_command_ignoring_sigterm_is_killed_after_grace(cluster, tmp_path):
    m = str(tmp_path / "a.marks")
    a = start_run(cluster, "ra", m, "--ignore-term")
    wait_until(lambda: starts(m), JITTER * RP + SLACK + 2.0,
               what="the command to start")
    pid = starts(m)[0][0]
    time.sleep(0.3)
    t_term = time.monotonic()
    a.terminate()
    # While the command is being stopped, leaderd still renews but no
    # longer says it leads.
    time.sleep(GRACE / 2)
    v = a.leader()
    assert v is not None and v["is_leader"] is False, v
    assert v["name"] == "ra"
    assert a.wait(GRACE + 5.0) == 0
    recs = records(m)
    term = [r for r in recs if r[1] == "term"]
    assert term, "the command never got SIGTERM"
    last = max(r[2] for r in recs)
    # It ignored SIGTERM and lived on until SIGKILL, about grace later.
    assert last >= term[0][2] + GRACE - 0.2, (term[0][2], last)
    assert last <= t_term + GRACE + 0.5, (t_term, last)
    assert pid_gone(pid)
    assert "sending SIGKILL to its process group" in a.log()
    rel = [w for w in a.writes() if not w["spec"].get("holderIdentity")]
    print("F27: SIGTERM->last sign of life %.3fs (grace %.1fs), release "
          "%.3fs after SIGTERM, exit %.3fs" % (last - t_term, GRACE,
                                               rel[-1]["t"] - t_term,
                                               time.monotonic() - t_term))
    rel = [w for w in a.writes() if not w["spec"].get("holderIdentity")]
    assert rel and rel[-1]["t"] >= last


def test_grandchildren_of_the_group_are_stopped(cluster, tmp_path):
    m = str(tmp_path / "a.marks")
    a = start_run(cluster, "ra", m, "--grandchildren", "2",
                  "--grandchildren-ignore-term")
    wait_until(lambda: len([r for r in records(m)
                            if r[1] == "grandchild"]) == 2,
               JITTER * RP + SLACK + 3.0, what="two grandchildren")
    procs = lives(m)
    main = starts(m)[0][0]
    pids = [p[0] for p in procs]
    assert len(pids) == 3
    for pid, _, _, _ in procs:
        if pid != main:
            assert any(r[0] == pid and "pgid=%d" % main in r[3]
                       for r in records(m) if r[1] == "grandchild")
    t_term = time.monotonic()
    a.terminate()
    assert a.wait(GRACE + 5.0) == 0
    for pid in pids:
        assert pid_gone(pid), pid
    # The main process stopped on SIGTERM; the grandchildren ignored it
    # and were killed with the group after grace.
    last = {p[0]: p[2] for p in lives(m)}
    assert last[main] < t_term + 0.5
    for pid in pids:
        assert last[pid] <= t_term + GRACE + 0.5, (pid, last[pid] - t_term)
    time.sleep(0.3)
    assert {p[0]: p[2] for p in lives(m)} == last, "a process wrote later"


def test_command_exit_never_releases_and_exits_with_its_code(cluster,
                                                              tmp_path):
    m = str(tmp_path / "a.marks")
    b = cluster.start("other")      # a plain instance, to see the hand-over
    cluster.wait_single_leader(JITTER * RP + SLACK + 2.0)
    b.cleanup()
    wait_until(lambda: not cluster.lease()["spec"].get("holderIdentity"),
               3.0, what="the lease to be released")
    a = start_run(cluster, "ra", m, "--exit-after", "0.5", "--code", "3",
                  restart="never")
    rc = a.wait(JITTER * RP + SLACK + 5.0)
    assert rc == 3, a.log()
    assert len(starts(m)) == 1
    assert [r for r in records(m) if r[1] == "exit"][0][3] == "3"
    spec = cluster.lease()["spec"]
    assert spec.get("holderIdentity") in (None, ""), spec
    assert "exiting with code 3" in a.log()


def test_command_exit_restart_restarts_with_backoff(cluster, tmp_path):
    m = str(tmp_path / "a.marks")
    a = start_run(cluster, "ra", m, "--exit-after", "0.2", "--code", "0",
                  restart="restart")
    wait_until(lambda: len(starts(m)) >= 3, JITTER * RP + SLACK + 8.0,
               what="two restarts")
    ex = [r for r in records(m) if r[1] == "exit"]
    st = starts(m)
    # Backoff: 1s before the first restart, 2s before the second.
    assert st[1][2] - ex[0][2] >= 0.9, (st[1][2], ex[0][2])
    assert st[2][2] - ex[1][2] >= 1.9, (st[2][2], ex[1][2])
    assert a.alive() and a.is_leader()
    assert a.log_count("restarting the command") >= 2


def test_leadership_lost_mid_run_stops_command_at_renew_deadline(
        api, cluster, tmp_path):
    ma, mb = str(tmp_path / "a.marks"), str(tmp_path / "b.marks")
    a = start_run(cluster, "ra", ma)
    wait_until(lambda: starts(ma), JITTER * RP + SLACK + 2.0,
               what="a's command to start")
    b = start_run(cluster, "rb", mb)
    cluster.wait_single_leader(2.0)
    tok_a = a.leader()["fencing_token"]
    time.sleep(2 * RP)
    # Every renew of a hangs: its claim ends renew_deadline after the
    # last renew that it sent and that succeeded.
    f = api.fault("blackhole", token=a.token, methods=["PUT"])
    t_fault = time.monotonic()
    wait_until(lambda: starts(mb), LD + JITTER * RP + SLACK + 3.0,
               what="b's command to start")
    api.clear_fault(f)
    ok = [w["t_recv"] for w in a.writes() if w["t"] <= t_fault]
    last_renew = max(ok)
    stop_a = [r for r in records(ma) if r[1] == "stop"]
    assert stop_a, "a's command was never stopped"
    # Stopped at the end of the claim (renew_deadline after the last
    # renew was sent), well before the lease expired for b.
    assert stop_a[0][2] <= last_renew + RD + 0.5, (stop_a[0][2] - last_renew)
    assert stop_a[0][2] < starts(mb)[0][2]
    print("lost mid-run: command stopped %.3fs after the last good renew "
          "(RD %.1fs); next command started %.3fs after that stop"
          % (stop_a[0][2] - last_renew, RD,
             starts(mb)[0][2] - stop_a[0][2]))
    assert "the claim on the lease ended" in a.log() or \
        "stopped leading" in a.log()
    tok_b = b.leader()["fencing_token"]
    assert tok_b > tok_a and tok_b.split("-", 1)[1] == tok_a.split("-", 1)[1]
    assert "LEADERD_FENCING_TOKEN=%s" % tok_b in starts(mb)[0][3]
    assert_never_two({"ra": ma, "rb": mb})


def test_never_two_commands_at_once_through_failovers(api, cluster,
                                                      tmp_path):
    """Three instances in run mode; the leader is cut off from the API,
    SIGTERMed and SIGKILLed in turn.  The commands' own records never
    overlap, and each failover starts exactly one new command."""
    marks = {}
    ins = []
    for n in ("ra", "rb", "rc"):
        marks[n] = str(tmp_path / (n + ".marks"))
        ins.append(start_run(cluster, n, marks[n], "--ignore-term"))
    chk = cluster.checker(ins)

    def running():
        return [n for n, m in marks.items()
                if starts(m) and not pid_gone(lives(m)[-1][0])]

    for how in ("blackhole", "sigterm", "status", "kill9"):
        leader = cluster.wait_single_leader(LD + JITTER * RP + SLACK + 4.0,
                                            [i for i in ins if i.alive()])
        wait_until(lambda: running() == [leader.name], 3.0,
                   what="only %s's command running" % leader.name)
        n0 = sum(len(starts(m)) for m in marks.values())
        if how == "blackhole":
            f = api.fault("blackhole", token=leader.token)
        elif how == "status":
            f = api.fault("status", token=leader.token, status=503)
        elif how == "sigterm":
            leader.terminate()
        else:
            leader.kill9()
        wait_until(lambda: sum(len(starts(m)) for m in marks.values()) > n0,
                   LD + JITTER * RP + SLACK + 4.0, what="a new command")
        if how in ("blackhole", "status"):
            api.clear_fault(f)
        time.sleep(RP)
    spans = assert_never_two(marks)
    gaps = [b[2] - a[3] for a, b in zip(spans, spans[1:]) if a[0] != b[0]]
    print("failovers: %d commands, smallest gap between two commands "
          "%.3fs" % (len(spans), min(gaps)))
    chk.assert_s1()
    for i in ins:
        if i.alive():
            i.terminate()
            assert i.wait(GRACE + 5.0) == 0
    for m in marks.values():
        for pid, _, _, _ in lives(m):
            assert pid_gone(pid), pid


def test_run_needs_a_command(leaderd_bin, tmp_path):
    import subprocess
    for argv, msg in ((["run"], "run needs a command"),
                      (["run", "--"], "run needs a command"),
                      (["--", "true"], "needs the run mode")):
        p = subprocess.run([leaderd_bin, "--election", "x", "--kubeconfig",
                            "/nonexistent"] + argv, capture_output=True,
                           text=True, timeout=10)
        assert p.returncode == 2, (argv, p.stderr)
        assert msg in p.stderr, (argv, p.stderr)


def test_grace_longer_than_the_gap_is_warned(leaderd_bin, tmp_path):
    import subprocess
    p = subprocess.run([leaderd_bin, "-n", "--election", "x",
                        "--grace", "6s", "run", "--", "true"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 0, p.stderr
    assert "run.grace 6000ms" in p.stderr and "lease_duration - renew_deadline" \
        in p.stderr, p.stderr
    p = subprocess.run([leaderd_bin, "-n", "--election", "x",
                        "--grace", "5s", "run", "--", "true"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 0 and "warning" not in p.stderr, p.stderr


def test_shutdown_timeout_must_exceed_grace(leaderd_bin, tmp_path):
    """In run mode the shutdown budget covers the command's stop, then
    the release: a shutdown_timeout not longer than run.grace is refused
    with exit 2 and the fix; unset, or longer, it is accepted."""
    import subprocess
    base = [leaderd_bin, "-n", "--election", "x", "--grace", "4s"]
    p = subprocess.run(base + ["--shutdown-timeout", "4s", "run", "--",
                               "true"], capture_output=True, text=True,
                       timeout=10)
    assert p.returncode == 2, p.stderr
    assert "--shutdown-timeout: shutdown_timeout (4s) must be longer than " \
        "run.grace (4s)" in p.stderr, p.stderr
    for extra in ([], ["--shutdown-timeout", "9s"]):
        p = subprocess.run(base + extra + ["run", "--", "true"],
                           capture_output=True, text=True, timeout=10)
        assert p.returncode == 0, (extra, p.stderr)
    # Outside run mode there is no command to wait for.
    p = subprocess.run(base + ["--shutdown-timeout", "1s"],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 0, p.stderr
