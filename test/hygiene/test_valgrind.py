"""The real leaderd under valgrind memcheck through acquire, renew, API
faults, failover both ways and shutdown.

Each valgrind run uses --leak-check=full --errors-for-leak-kinds=
definite,indirect --error-exitcode=99: a definite or indirect leak, an
invalid read or write, a use of an uninitialised value or a bad free
makes the process exit 99 instead of leaderd's own status, and a normal
exit after SIGTERM is 0.  So every test ends with "SIGTERM, exit status
0", and also checks the summary in valgrind's log (so a valgrind that
did not run, or a log that lacks the summary, fails too).

Valgrind slows leaderd down some 20-50 times, so these tests use longer
election timings than the integration tests (VG_* below) and generous,
bounded waits."""

import os
import re
import shutil
import socket
import subprocess
import time

import pytest

import fakeapi
from harness import Leaderd, tcp_request, unix_request, wait_until

VALGRIND = os.environ.get("VALGRIND", "valgrind")
VALGRIND_ARGS = [
    "--leak-check=full",
    "--errors-for-leak-kinds=definite,indirect",
    "--show-leak-kinds=definite,indirect,possible",
    "--error-exitcode=99",
    "--track-fds=yes",
    "--num-callers=40",
]

# Election timings for a daemon under valgrind: lease_duration >
# renew_deadline > 1.2 x retry_period, request_timeout < renew_deadline.
VG_LD = 10.0
VG_RD = 6.0
VG_RP = 1.0
VG_RT = 3.0
VG_TIMINGS = dict(lease_duration=VG_LD, renew_deadline=VG_RD,
                  retry_period=VG_RP, request_timeout=VG_RT)

START_TIMEOUT = 90.0    # valgrind start-up plus the first TLS handshake
EXIT_TIMEOUT = 120.0    # release, exit and valgrind's leak check
NS = "default"


def _check_valgrind(binary):
    if shutil.which(VALGRIND) is None:
        pytest.fail("%s not found: apt-get install valgrind (make deps)"
                    % VALGRIND)
    with open(binary, "rb") as f:
        if b"__asan_init" in f.read():
            pytest.fail("%s is built with AddressSanitizer, which cannot run "
                        "under valgrind; point $LEADERD at a plain build"
                        % binary)


def vg_leaderd(api, workdir, name, lock, binary, **kw):
    """A Leaderd whose binary is a wrapper that execs valgrind on the
    real one (same pid, so signals and /proc go to the daemon)."""
    _check_valgrind(binary)
    d = os.path.join(workdir, name)
    os.makedirs(d, exist_ok=True)
    vlog = os.path.join(d, "valgrind.log")
    wrapper = os.path.join(d, "leaderd-valgrind")
    args = " ".join(VALGRIND_ARGS)
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nexec %s %s --log-file=%s -- %s "$@"\n'
                % (VALGRIND, args, vlog, binary))
    os.chmod(wrapper, 0o755)
    for k, v in VG_TIMINGS.items():
        kw.setdefault(k, v)
    inst = Leaderd(api, workdir, name, lock, binary=wrapper, **kw)
    inst.valgrind_log = vlog
    return inst


def plain_leaderd(api, workdir, name, lock, binary, **kw):
    for k, v in VG_TIMINGS.items():
        kw.setdefault(k, v)
    return Leaderd(api, workdir, name, lock, binary=binary, **kw)


def _num(s):
    return int(s.replace(",", ""))


def valgrind_summary(path):
    """The figures of a valgrind log: errors, definite/indirect/possible/
    reachable bytes, allocations, open fds at exit."""
    with open(path, errors="replace") as f:
        text = f.read()
    out = {"text": text}
    m = re.search(r"ERROR SUMMARY: ([\d,]+) errors", text)
    out["errors"] = _num(m.group(1)) if m else None
    if "All heap blocks were freed -- no leaks are possible" in text:
        for k in ("definite", "indirect", "possible", "reachable"):
            out[k] = 0
    else:
        for k, label in (("definite", "definitely lost"),
                         ("indirect", "indirectly lost"),
                         ("possible", "possibly lost"),
                         ("reachable", "still reachable")):
            m = re.search(label + r": ([\d,]+) bytes", text)
            out[k] = _num(m.group(1)) if m else None
    m = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees, "
                  r"([\d,]+) bytes allocated", text)
    out["allocs"] = _num(m.group(1)) if m else None
    out["frees"] = _num(m.group(2)) if m else None
    m = re.search(r"FILE DESCRIPTORS: (\d+) open(?: \((\d+) std\))? at exit",
                  text)
    out["fds_at_exit"] = int(m.group(1)) if m else None
    # Descriptors other than 0-2 and valgrind's own log that leaderd left
    # open at exit ("Open file descriptor 5: /path", "Open AF_INET
    # socket 6: 127.0.0.1:4040 <-> unbound", ...).
    out["leftover_fds"] = [
        (int(n), d) for n, d in re.findall(
            r"Open (?:file descriptor|[A-Za-z_0-9]+ socket) (\d+): (.*)",
            text)
        if int(n) > 2 and not d.strip().endswith("valgrind.log")]
    return out


def stop_and_check(inst, figures, what):
    """SIGTERM a valgrind leaderd, wait for it, and assert a clean exit
    and a clean valgrind summary.  Returns the summary."""
    t0 = time.monotonic()
    inst.terminate()
    rc = inst.wait(EXIT_TIMEOUT)
    took = time.monotonic() - t0
    assert rc is not None, "%s still running %.0fs after SIGTERM" % (
        inst.name, EXIT_TIMEOUT)
    s = valgrind_summary(inst.valgrind_log)
    figures("%s: exit %s after %.1fs; valgrind errors=%s definite=%s "
            "indirect=%s possible=%s reachable=%s bytes; allocs=%s frees=%s; "
            "fds open at exit=%s (std 0-2 and valgrind's log: %s)"
            % (what, rc, took, s["errors"], s["definite"], s["indirect"],
               s["possible"], s["reachable"], s["allocs"], s["frees"],
               s["fds_at_exit"],
               "yes" if not s["leftover_fds"] else s["leftover_fds"]))
    detail = s["text"][-12000:]
    assert rc == 0, "%s exited %s after SIGTERM (99: valgrind found errors)" \
        ":\n%s" % (inst.name, rc, detail)
    assert s["errors"] == 0, detail
    assert s["definite"] == 0 and s["indirect"] == 0, detail
    assert s["allocs"] is not None and s["allocs"] > 0, \
        "no heap summary in the valgrind log:\n" + detail
    assert s["fds_at_exit"] is not None, \
        "no fd summary in the valgrind log:\n" + detail
    assert not s["leftover_fds"], "descriptors left open at exit: %r" % (
        s["leftover_fds"],)
    return s


def renews(inst, since):
    """Successful PUTs by inst (its token) applied at or after since."""
    return [w for w in inst.writes() if w["method"] == "PUT" and
            w["t"] >= since and
            w["spec"].get("holderIdentity") == inst.identity]


def wait_leader(inst, timeout, what=None):
    def ok():
        if not inst.alive():
            raise AssertionError("%s exited with %s:\n%s" % (
                inst.name, inst.proc.returncode, inst.log()[-4000:]))
        return inst.is_leader()
    wait_until(ok, timeout, interval=0.2, what=what or
               "%s to lead" % inst.name)


def wait_renews(inst, n, since, timeout):
    wait_until(lambda: len(renews(inst, since)) >= n, timeout, interval=0.2,
               what="%d renewals by %s" % (n, inst.name))


@pytest.fixture
def lock(request):
    base = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")
    return "%s-%d" % (base[:40].strip("-"), os.getpid())


LOCAL_REQUESTS = [
    (b"GET /leader HTTP/1.1\r\nHost: localhost\r\n\r\n", {200}),
    (b"GET /leader HTTP/1.1\r\nHost: localhost\r\nAccept: text/plain\r\n\r\n", {200}),
    (b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n", {200}),
    (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", {200}),
    (b"GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n", {200}),
    (b"GET /leaderz HTTP/1.1\r\nHost: localhost\r\n\r\n", {404}),
    (b"POST /leader HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}",
     {405}),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n", {400}),
    (b"GET /leader HTTP/2.0\r\nHost: localhost\r\n\r\n", {505}),
    (b"GET /leader HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 20000 +
     b"\r\n\r\n", {431}),
    (b"GET /leader HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000000\r\n\r\n",
     {413}),
    (b"GET /leader HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n",
     {400}),
    (b"GET /leader?wait=soon&index=1 HTTP/1.1\r\nHost: localhost\r\n\r\n", {400}),
    (b"GET /leader?wait=1s&index=0 HTTP/1.1\r\nHost: localhost\r\n\r\n", {200}),
    (b"HEAD /leader/watch HTTP/1.1\r\nHost: localhost\r\n\r\n", {200}),
]


def exercise_local_api(inst):
    """Every route and error answer over TCP and the unix socket, plus
    pipelined requests, half requests and abrupt closes."""
    for data, want in LOCAL_REQUESTS:
        head = data.startswith(b"HEAD ")    # headers only, keep-alive
        st, _, body = tcp_request(inst.port, data, timeout=10.0, head=head)
        assert st in want, (data[:40], st, body)
        if inst.unix:
            st, _, body = unix_request(inst.unix, data, timeout=10.0,
                                       head=head)
            assert st in want, ("unix", data[:40], st, body)
    s = socket.create_connection(("127.0.0.1", inst.port), timeout=10)
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                  b"HEAD /leader HTTP/1.1\r\nHost: localhost\r\n\r\n"
                  b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        end = time.monotonic() + 10
        buf = b""
        while time.monotonic() < end:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        assert buf.count(b"HTTP/1.1 200") == 3, buf[:500]
    finally:
        s.close()
    for data in (b"GET /lea", b"", b"GET /leader HTTP/1.1\r\nHost: localhost\r\n\r\n",
                 b"GET /sse HTTP/1.1\r\nHost: localhost\r\n\r\n",
                 b"GET /leader?wait=1m&index=1 HTTP/1.1\r\nHost: localhost\r\n\r\n"):
        s = socket.create_connection(("127.0.0.1", inst.port), timeout=10)
        s.sendall(data)
        s.close()      # before (or without) reading the answer
    assert inst.alive()


def test_valgrind_acquire_renew_local_api_shutdown(api, tmp_path, lock,
                                                   leaderd_bin, sockdir,
                                                   procs, figures):
    """Acquire (create), renew at least 3 times, answer every local API
    route and error over TCP and unix, release on SIGTERM, exit 0 with no
    definite/indirect leak and no invalid access.  Bounds: lead within
    90 s of start, 3 renewals within 30 s, exit within 120 s."""
    v = vg_leaderd(api, str(tmp_path), "vg", lock, leaderd_bin,
                   unix=os.path.join(sockdir, "vg.sock"))
    procs.append(v)
    v.start(timeout=START_TIMEOUT)
    wait_leader(v, START_TIMEOUT)
    t = time.monotonic()
    wait_renews(v, 3, t, 30.0)
    exercise_local_api(v)
    # A stream and a blocking read, both open across the SIGTERM.
    idx = v.leader(timeout=10.0)["index"]
    push = []
    for data in (b"GET /leader/watch HTTP/1.1\r\nHost: localhost\r\n\r\n",
                 b"GET /leader?wait=5m&index=%d HTTP/1.1\r\nHost: localhost\r\n"
                 b"\r\n" % idx):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(EXIT_TIMEOUT)
        s.connect(v.unix)
        s.sendall(data)
        push.append(s)
    wait_until(lambda: v.log_count(" waits") >= 1, 30.0, interval=0.2,
               what="the blocking read to wait")
    t_term = time.monotonic()
    stop_and_check(v, figures, "single leader")
    for s in push:
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        s.close()
        assert buf.startswith(b"HTTP/1.1 200"), buf[:200]
        assert b'"is_leader":false' in buf, buf[-400:]
    # The lease was released on the way out.
    rel = [w for w in v.writes() if w["t"] >= t_term]
    assert rel and rel[-1]["spec"].get("holderIdentity", "") == "", rel
    assert "released lease %s/%s" % (NS, lock) in v.log()


def test_valgrind_leader_terminated_follower_takes_over(
        api, tmp_path, lock, leaderd_bin, procs, figures):
    """Failover 1: the valgrind leader is SIGTERMed while a plain follower
    waits; it releases and exits 0, clean; the follower takes over within
    VG_RP x 1.2 + VG_RT + 5 s of the exit."""
    v = vg_leaderd(api, str(tmp_path), "vg", lock, leaderd_bin)
    procs.append(v)
    v.start(timeout=START_TIMEOUT)
    wait_leader(v, START_TIMEOUT)
    p = plain_leaderd(api, str(tmp_path), "plain", lock, leaderd_bin)
    procs.append(p)
    p.start(timeout=10.0)
    wait_until(lambda: (p.leader() or {}).get("name") == v.identity, 20.0,
               what="plain to see vg as leader")
    assert not p.is_leader()
    t = time.monotonic()
    wait_renews(v, 2, t, 30.0)
    stop_and_check(v, figures, "leader SIGTERMed")
    t_exit = time.monotonic()
    assert "released lease %s/%s" % (NS, lock) in v.log()
    bound = VG_RP * 1.2 + VG_RT + 5.0
    wait_leader(p, bound, "plain to take over within %.1fs" % bound)
    figures("takeover by the plain follower %.2fs after vg exited"
            % (time.monotonic() - t_exit))
    p.terminate()
    assert p.wait(VG_RT + 5.0) == 0


def test_valgrind_follower_becomes_leader_after_leader_killed(
        api, tmp_path, lock, leaderd_bin, procs, figures):
    """Failover 2: the valgrind daemon starts as a follower of a plain
    leader; the leader is SIGKILLed; the valgrind one takes over within
    VG_LD + 15 s, renews, and exits 0 clean on SIGTERM."""
    p = plain_leaderd(api, str(tmp_path), "plain", lock, leaderd_bin)
    procs.append(p)
    p.start(timeout=10.0)
    wait_leader(p, 20.0)
    v = vg_leaderd(api, str(tmp_path), "vg", lock, leaderd_bin)
    procs.append(v)
    v.start(timeout=START_TIMEOUT)
    wait_until(lambda: (v.leader() or {}).get("name") == p.identity,
               START_TIMEOUT, interval=0.2, what="vg to see plain as leader")
    assert not v.is_leader()
    time.sleep(2 * VG_RP)       # a few follower polls
    assert not v.is_leader()
    t_kill = time.monotonic()
    p.kill9()
    bound = VG_LD + 15.0
    wait_leader(v, bound, "vg to take over within %.0fs" % bound)
    figures("vg took over %.2fs after the plain leader was SIGKILLed "
            "(lease_duration %.0fs)" % (time.monotonic() - t_kill, VG_LD))
    wait_renews(v, 2, time.monotonic(), 30.0)
    stop_and_check(v, figures, "follower turned leader")


def _wait_hits(f, n, timeout):
    wait_until(lambda: f.hits >= n, timeout, interval=0.1,
               what="%r to be hit %d times" % (f, n))


def test_valgrind_api_faults(api, tmp_path, lock, leaderd_bin, procs,
                             figures):
    """The error paths under valgrind: 503 and 429 answers, dropped
    connections, an applied write whose answer is lost, a blackholed and
    a slow request (request_timeout), 409 conflicts from a foreign write,
    401 while the token is revoked, the lease deleted, and a foreign
    holder that takes the lease and lets it expire.  The daemon leads
    again afterwards (within VG_LD + 30 s) and exits 0 clean.  It polls
    (--watch false): a watching leader adopts a foreign write's version
    from its stream and never meets the 409 this test is for; the watch
    runs under valgrind in the tests above."""
    v = vg_leaderd(api, str(tmp_path), "vg", lock, leaderd_bin,
                   args=("--watch", "false"))
    procs.append(v)
    v.start(timeout=START_TIMEOUT)
    wait_leader(v, START_TIMEOUT)
    tok = v.token
    step = 30.0

    f = api.fault("status", token=tok, methods=["PUT"], status=503, count=2)
    _wait_hits(f, 2, step)
    f = api.fault("status", token=tok, methods=["PUT"], status=429,
                  retry_after=1, count=1)
    _wait_hits(f, 1, step)
    f = api.fault("drop", token=tok, methods=["PUT"], count=2)
    _wait_hits(f, 2, step)
    f = api.fault("apply_then_close", token=tok, methods=["PUT"], count=1)
    _wait_hits(f, 1, step)
    f = api.fault("blackhole", token=tok, count=1,
                  hold_ms=int((VG_RT + 1.0) * 1000))
    _wait_hits(f, 1, step)
    f = api.fault("delay", token=tok, count=1,
                  delay_ms=int((VG_RT + 1.0) * 1000))
    _wait_hits(f, 1, step)
    wait_leader(v, VG_LD + 30.0, "vg to lead again after transport faults")

    # A foreign write: vg's next PUT carries a stale resourceVersion.
    api.modify_lease(NS, lock, lambda o: o["metadata"].setdefault(
        "annotations", {}).update({"hygiene": "bump"}))
    t = time.monotonic()
    wait_until(lambda: any(r["code"] == 409 for r in
                           api.requests(token=tok, since=t)), step,
               interval=0.1, what="a 409 for vg")
    wait_renews(v, 1, time.monotonic(), step)

    # 401 for a while (shorter than renew_deadline).
    api.revoke_token(tok)
    t = time.monotonic()
    wait_until(lambda: any(r["code"] == 401 for r in
                           api.requests(token=tok, since=t)), step,
               interval=0.1, what="a 401 for vg")
    api.add_token(tok)
    wait_renews(v, 1, time.monotonic(), step)

    # The lease vanishes: 404, then a create.
    api.delete_lease(NS, lock)
    wait_until(lambda: any(w["method"] == "POST" for w in v.writes()
                           if w["t"] >= t), VG_LD + step, interval=0.2,
               what="vg to re-create the deleted lease")
    wait_leader(v, VG_LD + 30.0)

    # A foreign holder takes the lease; vg must stop leading, follow, and
    # take the lease again once the intruder's lease expires.
    def intrude(o):
        o["spec"]["holderIdentity"] = "intruder"
        o["spec"]["renewTime"] = fakeapi.now_microtime()
        o["spec"]["acquireTime"] = o["spec"]["renewTime"]
        o["spec"]["leaseDurationSeconds"] = 5
        o["spec"]["leaseTransitions"] = o["spec"].get("leaseTransitions",
                                                      0) + 1
    api.modify_lease(NS, lock, intrude)
    wait_until(lambda: (v.leader() or {}).get("name") == "intruder",
               VG_RD + step, interval=0.2, what="vg to see the intruder")
    assert not v.is_leader()
    wait_leader(v, 5 + VG_RP + 30.0, "vg to take the expired lease back")
    wait_renews(v, 1, time.monotonic(), step)
    stop_and_check(v, figures, "after API faults")


def test_valgrind_sees_a_leak(tmp_path, figures):
    """The check itself can fail: a program with a definite leak exits 99
    under the same valgrind options."""
    if shutil.which(VALGRIND) is None:
        pytest.fail("%s not found: apt-get install valgrind" % VALGRIND)
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("no C compiler to build the leak probe")
    src = tmp_path / "leak.c"
    src.write_text("#include <stdlib.h>\n#include <string.h>\n"
                   "int main(void) { char *p = malloc(64); "
                   "memset(p, 1, 64); p = NULL; return p != NULL; }\n")
    exe = tmp_path / "leak"
    subprocess.run([cc, "-O0", "-g", "-o", str(exe), str(src)], check=True,
                   timeout=60)
    r = subprocess.run([VALGRIND] + VALGRIND_ARGS + ["-q", "--", str(exe)],
                       capture_output=True, timeout=120)
    assert r.returncode == 99, r.stderr.decode(errors="replace")
    assert b"definitely lost" in r.stderr
