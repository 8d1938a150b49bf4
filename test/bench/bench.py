#!/usr/bin/env python3
"""bench -- leaderd's figures, printed, never asserted (the machine is
noisy; the tests assert safety, this measures cost and speed).

    python3 test/bench/bench.py [--leaderd PATH] [--trials N]
        [--kill-trials N] [--idle S] [--backends fakeapi,kube-apiserver]
        [--only-candidacy] [--candidacy-trials N] [--candidacy-idle S]
        [--only-coordinated] [--coordinated-trials N] [--only-shards]
        [--only-elections] [--elections-idle S] [--streamread PATH]

With the default production timings (15s / 10s / 2s) it measures, for
three instances against the test API server over TLS:
  - resident memory (VmRSS, VmHWM) of each leaderd after start and idle;
  - CPU time used over the idle period, per instance, as ms per minute;
  - API requests per minute, leader and followers;
  - /leader latency from a local client (p50, p99, max over 2000 GETs);
and, at the same timings, for leaderd and the client-go elector side by
side, on the test API server and on the e2e suite's kube-apiserver
(test/bench/handover.py):
  - handover after SIGTERM of the leader (until another says is_leader),
    p50/p99 over --trials;
  - takeover after kill -9 of the leader, over --kill-trials;
  - API requests per minute of a watching and a polling leaderd follower
    and of a client-go follower;
and, for coordinated election (--only-coordinated), on a kube-apiserver
with CoordinatedLeaderElection on: the controller's write of
spec.preferredHolder to the preferred candidate's is_leader, leaderd
beside client-go's coordinated elector, over --coordinated-trials;
and, for leadership that follows the application (--only-candidacy):
  - the application killed -9 until another elector leads, over
    --candidacy-trials: leaderd with --require-client, leaderd with an
    HTTP probe at 1 s x 2, the client-go elector's process killed (its
    application and elector are one process) over
    --candidacy-kill-trials, and leaderd without gating (one trial of
    --never-wait seconds: it never hands over);
  - the renew interval of a leader (p50, p99, max over
    --candidacy-idle seconds) without a probe, with a probe every 1 s,
    and with a probe of an application that stopped answering;
and, for shard groups (--only-shards, test/bench/shards.py): the time to
balance after a member joins, leaves by SIGTERM and is killed, at 16 and
64 shards over 3 and 8 members, the shards moved against the minimum,
and the group's API requests per second.
and, for several elections (--only-elections), idle over
--elections-idle seconds with every election led:
  - VmRSS, RssAnon, Pss and CPU of one leaderd with 1, 4 and 16
    elections, of 16 leaderd with one each, and of one client-go elector
    process (one per election), in total and per election.
"""

import argparse
import os
import select
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit"))

from fakeapi import FakeAPI  # noqa: E402
from harness import Leaderd, wait_until  # noqa: E402
import handover  # noqa: E402
import shards  # noqa: E402


def proc_status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])  # kB
    return 0


def pss(pid):
    """Proportional set size (kB, /proc/PID/smaps_rollup): the shared
    pages divided among the processes that map them."""
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


def mem(pid):
    """(VmRSS, RssAnon, Pss) in kB."""
    return (proc_status(pid, "VmRSS"), proc_status(pid, "RssAnon"),
            pss(pid))


def smaps_groups(pid):
    """Resident kB by mapping group from /proc/PID/smaps: a library by
    its name (libcrypto, libssl, libcurl, libc, ...), ld.so,
    the binary, [heap], anonymous maps, [stack] and other files; each as
    [Rss, private, anonymous]."""
    groups = {}
    cur = None
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if "-" in w[0] and not w[0].endswith(":"):
                path = w[5] if len(w) > 5 else ""
                base = os.path.basename(path)
                if path == "":
                    cur = "anon"
                elif path.startswith("["):
                    cur = path
                elif base.startswith("leaderd"):
                    cur = "leaderd"
                elif base.startswith("ld-linux"):
                    cur = "ld.so"
                elif ".so" in base:
                    cur = base.split(".so")[0]
                else:
                    cur = "other files"
                groups.setdefault(cur, [0, 0, 0])
            elif w[0] == "Rss:":
                groups[cur][0] += int(w[1])
            elif w[0] in ("Private_Clean:", "Private_Dirty:"):
                groups[cur][1] += int(w[1])
            elif w[0] == "Anonymous:":
                groups[cur][2] += int(w[1])
    return groups


def print_smaps(label, pid):
    g = smaps_groups(pid)
    rest = [0, 0, 0, 0]
    print("  %s, /proc/PID/smaps by mapping (kB: Rss, private, anon):"
          % label)
    for name, (rss, priv, anon) in sorted(g.items(),
                                          key=lambda kv: -kv[1][0]):
        if rss >= 100:
            print("    %-24s %5d %5d %5d" % (name, rss, priv, anon))
        elif rss:
            rest = [rest[0] + rss, rest[1] + priv, rest[2] + anon,
                    rest[3] + 1]
    if rest[3]:
        print("    %-24s %5d %5d %5d" % ("%d more, < 100 kB each" % rest[3],
                                         rest[0], rest[1], rest[2]))


def instructions_per_renew(work, renews=10):
    """Instructions per renew of a steady leader (15s/10s/2s) under
    callgrind: counters zeroed once it leads, dumped after `renews` more
    renew PUTs; then per TLS handshake, from 5 renews each made after the
    API server closed the connections.  (per renew, renews, per
    handshake, handshakes); None without valgrind."""
    import shutil
    vg = shutil.which("valgrind")
    ctl = shutil.which("callgrind_control")
    if not vg or not ctl:
        return None
    out = os.path.join(work, "callgrind.out")
    wrapper = os.path.join(work, "leaderd-callgrind")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec %s -q --tool=callgrind "
                "--callgrind-out-file=%s %s \"$@\"\n"
                % (vg, out, os.environ.get("LEADERD") or
                   os.path.join(HERE, "..", "..", "leaderd")))
    os.chmod(wrapper, 0o755)
    api = FakeAPI().start()
    i = Leaderd(api, work, "callgrind", "bench-callgrind",
                lease_duration=15, renew_deadline=10, retry_period=2,
                request_timeout=5, log_level="info", binary=wrapper)
    try:
        i.start(timeout=30)
        wait_until(i.is_leader, 30, what="the callgrind leader")
        time.sleep(3)

        def puts():
            return len([r for r in api.requests(token=i.token)
                        if r.get("method") == "PUT"])
        def measure(between=None, count=renews):
            """Instructions over count renews; between() runs before
            each.  Returns (instructions, renews, handshakes)."""
            for fn in os.listdir(work):
                if fn.startswith("callgrind.out."):
                    os.unlink(os.path.join(work, fn))
            subprocess.run([ctl, "-z", str(i.pid)], capture_output=True,
                           timeout=60)
            n0, h0 = puts(), len(api.handshakes)
            for k in range(count):
                if between is not None:
                    between()
                wait_until(lambda: puts() >= n0 + k + 1, 30, interval=0.1,
                           what="renew %d" % (k + 1))
            n1, h1 = puts(), len(api.handshakes)
            subprocess.run([ctl, "-d", str(i.pid)], capture_output=True,
                           timeout=60)
            total = 0
            for fn in os.listdir(work):
                if fn.startswith("callgrind.out."):
                    with open(os.path.join(work, fn)) as f:
                        for line in f:
                            if line.startswith(("summary:", "totals:")):
                                total = max(total, int(line.split()[1]))
            return total, n1 - n0, h1 - h0

        kept, n, _ = measure()
        # The TLS handshake: the same renews, each after the API server
        # closed every connection (lease and watch): the instructions
        # beyond a kept-alive renew, per handshake leaderd made.
        fresh, nf, hs = measure(between=api.close_connections, count=5)
        per_renew = kept / max(1, n)
        per_hs = (fresh - per_renew * nf) / max(1, hs)
        return per_renew, n, per_hs, hs
    finally:
        i.cleanup()
        api.stop()


def clientgo_elector(api, work, lock, n):
    """Start the e2e suite's client-go elector (if it was built) on the
    same Lease, to compare footprints; None when it is not there."""
    binary = os.environ.get("CLIENTGO_ELECTOR") or os.path.join(
        HERE, "..", "..", "build", "e2e", "bin", "clientgo-elector")
    if not os.path.exists(binary):
        return None
    token = "bench-clientgo-%d" % n
    api.add_token(token)
    kc = os.path.join(work, "clientgo-%d.kubeconfig" % n)
    api.write_kubeconfig(kc, token=token)
    return subprocess.Popen([binary, "-kubeconfig", kc, "-name", lock,
                             "-id", "clientgo-%d" % n],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def cpu_ms(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime + stime
    return ticks * 1000.0 / os.sysconf("SC_CLK_TCK")


def leader_of(insts):
    for i in insts:
        if i.alive() and i.is_leader():
            return i
    return None


def round_trip(s, req):
    """Send req on the kept-alive connection s and read the whole answer
    (its Content-Length body, none without one); the seconds it took."""
    t = time.perf_counter()
    s.sendall(req)
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(4096)
    head, body = buf.split(b"\r\n\r\n", 1)
    n = [h for h in head.split(b"\r\n")
         if h.lower().startswith(b"content-length")]
    n = int(n[0].split(b":")[1]) if n else 0
    while len(body) < n:
        body += s.recv(4096)
    return time.perf_counter() - t


def http_latency(port, n):
    req = b"GET /leader HTTP/1.1\r\nHost: localhost\r\n\r\n"
    s = socket.create_connection(("127.0.0.1", port))
    times = []
    try:
        for _ in range(n):
            times.append(round_trip(s, req) * 1e6)
    finally:
        s.close()
    times.sort()
    return times[len(times) // 2], times[int(len(times) * 0.99)], times[-1]


def steady(args, work):
    api = FakeAPI(key_type=args.key_type).start()
    insts = [Leaderd(api, work, "steady-%d" % i, "bench-steady",
                     lease_duration=15, renew_deadline=10, retry_period=2,
                     request_timeout=5, log_level="info")
             for i in range(3)]
    print("steady state of %s, API server keys %s" % (insts[0].binary,
                                                       args.key_type))
    try:
        for i in insts:
            i.start()
        wait_until(lambda: leader_of(insts), 10, what="a leader")
        gop = clientgo_elector(api, work, "bench-steady", 0)
        rss0 = [proc_status(i.pid, "VmRSS") for i in insts]
        cpu0 = [cpu_ms(i.pid) for i in insts]
        n0 = {i.token: len(api.requests(token=i.token)) for i in insts}
        t0 = time.monotonic()
        time.sleep(args.idle)
        dt = time.monotonic() - t0
        lead = leader_of(insts)
        print("steady state, 3 instances, 15s/10s/2s, %.0f s idle:" % dt)
        for k, i in enumerate(insts):
            reqs = len(api.requests(token=i.token)) - n0[i.token]
            print("  %-9s %-8s VmRSS %5d kB (private %5d kB, at start "
                  "%5d kB), VmHWM %5d kB, CPU %6.1f ms/min, %5.1f API "
                  "requests/min" % (
                      i.name, "leader" if i is lead else "follower",
                      proc_status(i.pid, "VmRSS"),
                      proc_status(i.pid, "RssAnon"), rss0[k],
                      proc_status(i.pid, "VmHWM"),
                      (cpu_ms(i.pid) - cpu0[k]) * 60 / dt, reqs * 60 / dt))
        fol = [i for i in insts if i is not lead][0]
        print_smaps("leader %s" % lead.name, lead.pid)
        print_smaps("follower %s" % fol.name, fol.pid)
        # The image's targets (docs/performance.md): VmRSS <= 1.5 MiB,
        # RssAnon <= 512 KiB.
        for role, i in (("leader", lead), ("follower", fol)):
            rss, anon, ps = mem(i.pid)
            print("  %-8s VmRSS %5d kB = %.2f MiB (target <= 1.5 MiB: %s), "
                  "RssAnon %5d kB (target <= 512 KiB: %s), Pss %5d kB" % (
                      role, rss, rss / 1024, "met" if rss <= 1536 else
                      "NOT met", anon, "met" if anon <= 512 else "NOT met",
                      ps))
        if gop is not None:
            grss, ganon, gpss = mem(gop.pid)
            frss, fanon, fpss = mem(fol.pid)
            print("  client-go v0.36.3 elector (test/e2e), follower on the "
                  "same Lease: VmRSS %d kB, RssAnon %d kB, Pss %d kB; "
                  "leaderd follower / client-go: %.2f of its VmRSS, %.2f "
                  "of its RssAnon, %.2f of its Pss" % (
                      grss, ganon, gpss, frss / max(1, grss),
                      fanon / max(1, ganon), fpss / max(1, gpss)))
            gop.terminate()
            gop.wait(10)
        else:
            print("  (client-go elector not built: make e2e-bins; no ratio)")
        p50, p99, mx = http_latency(lead.port, 2000)
        print("  /leader over one keep-alive connection, 2000 GETs: "
              "p50 %.0f us, p99 %.0f us, max %.0f us" % (p50, p99, mx))
    finally:
        for i in insts:
            i.cleanup()
        api.stop()
    ipr = instructions_per_renew(work)
    if ipr is None:
        print("  instructions per renew: valgrind not installed")
    else:
        print("  CPU per renew: %.0f instructions (callgrind, leader, "
              "mean over %d renews at 2 s)" % ipr[:2])
        print("  CPU per TLS handshake: %.0f instructions (callgrind: "
              "renews after the server closed the connections, beyond a "
              "kept-alive renew, over %d handshakes; includes the new "
              "connection and the watch request again)" % ipr[2:])


def _with_elections(inst, lock, k):
    """k elections in inst: the top-level lock and k - 1 elections:
    items, on Leases LOCK-1 .. LOCK-(k-1)."""
    if k < 2:
        return
    with open(inst.config_path, "a") as f:
        f.write("elections:\n")
        for j in range(1, k):
            f.write("  - lock: {name: %s-%d}\n" % (lock, j))


def oncpu_ms(pid):
    """Time on CPU of all of pid's threads, from the scheduler's
    nanosecond count (/proc/PID/task/*/schedstat), not the 10 ms ticks
    of /proc/PID/stat, too coarse for a process idle most of a minute."""
    ns = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                ns += int(f.read().split()[0])
        except OSError:
            pass
    return ns / 1e6


def _footprint(pids, idle):
    """Sum over pids of (VmRSS, RssAnon, Pss) in kB after the idle
    period, and of the CPU used in it, ms per minute."""
    cpu0 = [oncpu_ms(p) for p in pids]
    t0 = time.monotonic()
    time.sleep(idle)
    dt = time.monotonic() - t0
    cpu = sum(oncpu_ms(p) - c for p, c in zip(pids, cpu0)) * 60 / dt
    m = [mem(p) for p in pids]
    return [sum(x[i] for x in m) for i in range(3)], cpu


def elections_figures(args, work, ks=(1, 4, 16), separate=True):
    """Idle cost per election: one leaderd leading each of ks elections,
    (separate) 16 leaderd leading one each, and (if built) one client-go
    elector process per election; production timings, each alone on its
    Leases, so every election renews."""
    api = FakeAPI().start()
    kw = dict(lease_duration=15, renew_deadline=10, retry_period=2,
              request_timeout=5, log_level="info")
    rows = []
    try:
        for k in ks:
            lock = "bench-el%d" % k
            inst = Leaderd(api, work, "el%d" % k, lock, **kw)
            _with_elections(inst, lock, k)
            inst.start()
            wait_until(lambda: inst.get_json("/leaders")[0] == 200 and all(
                v["is_leader"] for v in inst.get_json("/leaders")[1].values()
            ), 15, what="%d elections led" % k)
            m, cpu = _footprint([inst.pid], args.elections_idle)
            rows.append(("1 leaderd, %d election%s" % (k, "s"[:k > 1]), k,
                         1, m, cpu))
            inst.cleanup()
        insts = [Leaderd(api, work, "sep%d" % j, "bench-sep-%d" % j, **kw)
                 for j in range(16 if separate else 0)]
        try:
            for i in insts:
                i.start()
            if insts:
                wait_until(lambda: all(i.is_leader() for i in insts), 15,
                           what="16 leaders")
                m, cpu = _footprint([i.pid for i in insts],
                                    args.elections_idle)
                rows.append(("16 leaderd, 1 election each", 16, 16, m,
                             cpu))
        finally:
            for i in insts:
                i.cleanup()
        gop = clientgo_elector(api, work, "bench-cg", 0)
        if gop is not None:
            try:
                time.sleep(5)
                m, cpu = _footprint([gop.pid], args.elections_idle)
                rows.append(("client-go elector, 1 process per election",
                             1, 1, m, cpu))
            finally:
                gop.terminate()
                gop.wait(10)
    finally:
        api.stop()
    print("several elections, idle, 15s/10s/2s, each election led (renews "
          "every 2 s), %.0f s:" % args.elections_idle)
    print("| what | processes | VmRSS kB | RssAnon kB | Pss kB | CPU ms/min "
          "| VmRSS kB per election | Pss kB per election | CPU ms/min per "
          "election |")
    print("|---|---|---|---|---|---|---|---|---|")
    for what, k, n, m, cpu in rows:
        print("| %s | %d | %d | %d | %d | %.1f | %.0f | %.0f | %.1f |" % (
            what, n, m[0], m[1], m[2], cpu, m[0] / k, m[2] / k, cpu / k))


# The stream reader of the push figures (test/bench/streamread.c, make
# build/bench/streamread): --streamread, else $LEADERD_STREAMREAD, else
# the build's.
STREAMREAD = os.environ.get("LEADERD_STREAMREAD") or os.path.join(
    HERE, "..", "..", "build", "bench", "streamread")


def need_streamread(path):
    """Exit 2 unless path is the stream reader, built."""
    if not os.access(path, os.X_OK):
        print("%s: no stream reader there; build it with `make "
              "build/bench/streamread`, or name it with --streamread or "
              "$LEADERD_STREAMREAD" % path, file=sys.stderr)
        sys.exit(2)


def _streamread_line(p, timeout):
    """streamread's next line within timeout seconds, or None."""
    ready, _, _ = select.select([p.stdout], [], [], timeout)
    return p.stdout.readline().decode() if ready else None


def push_delivery(args, work, nclients=100, meanwhile=None):
    """Delays, in ms, from each change's changed_at to its arrival at
    each stream client, and the per-change time until the last client
    had it.  The clients are args.streamread's streams (streamread.c),
    timed as each read returns.  meanwhile
    (test/bench/scale.py's): its before_streams(w) is called before
    the streams open, meanwhile(w) once they are, .stop() after the
    changes."""
    api = FakeAPI().start()
    lock = "bench-push"
    sock = os.path.join(work, "push.sock")
    api.create_lease("default", lock, {
        "holderIdentity": "holder-0", "leaseDurationSeconds": 3600,
        "renewTime": "2030-01-01T00:00:00.000000Z",
        "acquireTime": "2030-01-01T00:00:00.000000Z",
        "leaseTransitions": 0})
    w = Leaderd(api, work, "push", lock, unix=sock, lease_duration=2,
                renew_deadline=1, retry_period=0.1, request_timeout=0.5,
                log_level="info")
    # More clients than the default cap (64): raise listen.max_streams.
    with open(w.config_path) as f:
        cfg = f.read()
    with open(w.config_path, "w") as f:
        f.write(cfg.replace("\n  unix:", "\n  max_streams: %d\n  unix:"
                            % max(64, nclients)))
    delays, lasts = [], []
    reader = None
    try:
        w.start()
        wait_until(lambda: (v := w.leader()) and v["name"] == "holder-0",
                   10, what="the holder")
        if meanwhile is not None:
            meanwhile.before_streams(w)
        reader = subprocess.Popen(
            [args.streamread, "-n", str(nclients), str(w.port), sock],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        if _streamread_line(reader, 30 + nclients / 100.0) != "ready\n":
            raise RuntimeError("streamread did not start (exit status "
                               "%s)" % reader.poll())
        if meanwhile is not None:
            meanwhile(w)
        for trial in range(1, args.push_trials + 1):
            name = "holder-%d" % trial

            def edit(o, name=name):
                o["spec"]["holderIdentity"] = name
            reader.stdin.write(name.encode() + b"\n")
            reader.stdin.flush()
            api.modify_lease("default", lock, edit)
            # "change LAST MISSED D1 D2 ...": LAST "-" if none had it.
            line = _streamread_line(reader, 15)
            if not line or not line.startswith("change "):
                raise RuntimeError("streamread stopped answering (exit "
                                   "status %s)" % reader.poll())
            f = line.split()
            last, missed = f[1], int(f[2])
            if missed:
                print("  push: %d of %d clients missed change %d" % (
                    missed, nclients, trial))
                continue
            delays.extend(float(x) for x in f[3:])
            if last != "-":
                lasts.append(float(last))
        if meanwhile is not None:
            meanwhile.stop()
    finally:
        if reader is not None:
            reader.stdin.close()
            try:
                reader.wait(10)
            except subprocess.TimeoutExpired:
                reader.kill()
                reader.wait()
        w.cleanup()
        api.stop()
    return delays, lasts


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def handover_figures(args, work):
    """SIGTERM handover and kill -9 takeover at 15s/10s/2s, leaderd beside
    the client-go elector, on each backend; then API request rates."""
    timings = (15, 10, 2)
    kinds = ["leaderd"] + (["clientgo"] if handover.available("clientgo")
                           else [])
    if len(kinds) == 1:
        print("  (client-go elector not built: make e2e-bins; leaderd only)")
    for bname in args.backends.split(","):
        try:
            backend = (handover.FakeBackend(work) if bname == "fakeapi"
                       else handover.KasBackend(work))
        except RuntimeError as e:
            print("%s: skipped: %s" % (bname, e))
            continue
        try:
            for how, n, what in (
                    ("sigterm", args.trials, "graceful handover (SIGTERM "
                     "of the leader -> another leads)"),
                    ("kill9", args.kill_trials, "kill -9 takeover (bound "
                     "lease_duration + 0.2 s = 15.2 s; client-go up to "
                     "LD + 2.2 x RP = 19.4 s)")):
                print("%s, 15s/10s/2s, %s:" % (what, backend.name))
                for kind in kinds:
                    ts = handover.trials(backend, kind, how, n, timings,
                                         bname.replace("-", ""))
                    print("  %-9s %s" % (kind, handover.fmt(ts)))
            print("step-down at 15s/10s/2s, %s (POST /leader/release -> "
                  "another leads; ?to=: the named one leads):"
                  % backend.name)
            for how in ("release", "directed"):
                ts = handover.trials(backend, "leaderd", how, args.trials,
                                     timings, bname.replace("-", ""))
                print("  leaderd   %-9s %s" % (how, handover.fmt(ts)))
            if bname == "fakeapi":
                print("API requests per minute over %.0f s, 15s/10s/2s, "
                      "fakeapi:" % args.idle)
                for ident, kind, lead, rate in handover.request_rates(
                        backend, timings, args.idle, "fakeapi"):
                    print("  %-10s %-9s %-8s %5.1f requests/min" % (
                        ident, kind, "leader" if lead else "follower",
                        rate))
        finally:
            backend.stop()


def coordinated_figures(args, work):
    """Coordinated election: the controller's preferredHolder to the new
    leader, leaderd beside client-go's coordinated elector, on a
    kube-apiserver with CoordinatedLeaderElection on."""
    timings = (15, 10, 2)
    try:
        backend = handover.KasBackend(work, flags=handover.CLE_FLAGS,
                                      name="kasbox-cle")
    except RuntimeError as e:
        print("coordinated election: skipped: %s" % e)
        return
    try:
        print("coordinated move at 15s/10s/2s, kube-apiserver with "
              "CoordinatedLeaderElection (the controller's preferredHolder "
              "-> the preferred candidate leads):")
        for kind in ["leaderd"] + (["clientgo"] if handover.available(
                "clientgo") else []):
            ts = handover.coordinated_trials(backend, kind,
                                             args.coordinated_trials,
                                             timings, "kas")
            print("  %-9s %s" % (kind, handover.fmt(ts)))
    finally:
        backend.stop()


def candidacy_figures(args, work):
    """Leadership follows the application: the application's death to a
    new leader at 15s/10s/2s, leaderd client-bound, leaderd probing it,
    the client-go elector killed (its application and elector are one
    process), and leaderd without gating; then the renew interval of a
    leader with a probe every 1 s against one without."""
    timings = (15, 10, 2)
    ld, rd, rp = timings
    period, threshold = handover.PROBE
    n = args.candidacy_trials
    never = args.never_wait
    for bname in args.backends.split(","):
        try:
            backend = (handover.FakeBackend(work) if bname == "fakeapi"
                       else handover.KasBackend(work))
        except RuntimeError as e:
            print("%s: skipped: %s" % (bname, e))
            continue
        tag = bname.replace("-", "")
        try:
            print("application killed -9 -> another elector leads, three "
                  "electors, 15s/10s/2s, %s:" % backend.name)
            ts = handover.app_death_trials(backend, "client", n, timings,
                                           tag, never)
            print("  %-34s %s; target p50 < 50 ms" % (
                "leaderd --require-client", _fmt_app(ts, never)))
            ts = handover.app_death_trials(backend, "probe", n, timings,
                                           tag, never)
            print("  %-34s %s; target <= %d s x %d + 100 ms = %.1f s" % (
                "leaderd, HTTP probe %d s x %d" % (period, threshold),
                _fmt_app(ts, never), period, threshold,
                period * threshold + 0.1))
            if handover.available("clientgo"):
                ts = handover.trials(backend, "clientgo", "kill9",
                                     args.candidacy_kill_trials, timings,
                                     tag + "app")
                print("  %-34s %s; expected about lease_duration (%d s)"
                      % ("client-go elector process killed", handover.fmt(ts),
                         ld))
            else:
                print("  client-go elector: not built (make e2e-bins)")
            ts = handover.app_death_trials(backend, "none", 1, timings,
                                           tag, never)
            print("  %-34s %s%s" % (
                "leaderd without gating", _fmt_app(ts, never),
                "; the old leader led on: leaderd knows nothing of its "
                "application" if ts and ts[-1] is None else ""))
        finally:
            backend.stop()
    renew_timing(args, work)


def _fmt_app(ts, never):
    if ts and ts[-1] is None:
        return "never: no other elector led within %.0f s of the kill" % (
            never)
    return handover.fmt(ts)


def renew_timing(args, work):
    """The renew interval of three leaders on leases of their own, side
    by side on one test API server at 15s/10s/2s: without a probe, with
    an HTTP probe every 1 s of a healthy application, and with one of an
    application that stops answering once the leader leads (timeout 1 s,
    failure_threshold 1000, so that it stays a candidate)."""
    api = FakeAPI().start()
    apps = [handover.App(),
            handover.App(then="silent", after=5.0)]
    cases = [("no probe", None, 3),
             ("HTTP probe every 1 s", apps[0], 3),
             ("probe every 1 s, app silent", apps[1], 1000)]
    insts = []
    try:
        for k, (what, app, failures) in enumerate(cases):
            i = Leaderd(api, work, "renew-%d" % k, "bench-renew-%d" % k,
                        lease_duration=15, renew_deadline=10,
                        retry_period=2, request_timeout=5, log_level="info")
            if app is not None:
                with open(i.config_path, "a") as f:
                    f.write("candidacy:\n  probe:\n    url: %s\n"
                            "    period: 1s\n    timeout: 1s\n"
                            "    failure_threshold: %d\n"
                            % (app.url(), failures))
            insts.append(i.start())
        for i in insts:
            wait_until(i.is_leader, 10, what="%s to lead" % i.name)
        time.sleep(max(0.0, 5.5 - (time.monotonic() - insts[0].t_start)))
        cpu0 = [cpu_ms(i.pid) for i in insts]
        t0 = time.monotonic()
        time.sleep(args.candidacy_idle)
        t1 = time.monotonic()
        print("renew interval of a leader, 15s/10s/2s, test API server, "
              "%.0f s, three leaders side by side:" % (t1 - t0))
        for (what, app, failures), i, c0 in zip(cases, insts, cpu0):
            ts = [r["t_recv"] for r in api.requests(token=i.token,
                                                     method="PUT")
                  if t0 <= r["t_recv"] <= t1]
            iv = [(b - a) * 1000.0 for a, b in zip(ts, ts[1:])]
            probes = ""
            if app is not None:
                st, _, body = i.request("/metrics", timeout=2.0)
                m = dict((ln.split('"')[1], ln.rsplit(" ", 1)[1])
                         for ln in body.decode().splitlines()
                         if ln.startswith("leaderd_app_probe_total{"))
                probes = ", probes %s ok / %s failed" % (
                    m["success"], m["failure"])
            print("  %-28s p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d "
                  "intervals; retry_period 2000 ms), leader CPU %.1f "
                  "ms/min%s%s" % (
                      what, pct(iv, 0.5), pct(iv, 0.99), max(iv), len(iv),
                      (cpu_ms(i.pid) - c0) * 60 / (t1 - t0), probes,
                      "" if i.is_leader() else ", NOT leading at the end"))
    finally:
        for i in insts:
            i.cleanup()
        for a in apps:
            a.kill()
        api.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--leaderd")
    ap.add_argument("--trials", type=int, default=20,
                    help="SIGTERM handovers per elector kind and backend")
    ap.add_argument("--kill-trials", type=int, default=5,
                    help="kill -9 takeovers per elector kind and backend")
    ap.add_argument("--idle", type=float, default=60)
    ap.add_argument("--key-type", default="ec",
                    help="the test API server's CA and certificate keys "
                    "for the steady state: ec (P-256) or rsa:BITS "
                    "(rsa:2048, as kubeadm's); test/bench/speed.py prints "
                    "both")
    ap.add_argument("--backends", default="fakeapi,kube-apiserver")
    ap.add_argument("--push-trials", type=int, default=20)
    ap.add_argument("--only-push", action="store_true",
                    help="measure the push API only")
    ap.add_argument("--only-steady", action="store_true",
                    help="measure the steady state (memory, CPU) only")
    ap.add_argument("--only-elections", action="store_true",
                    help="measure the idle cost per election (one leaderd "
                    "with 1, 4, 16 elections, 16 leaderd, client-go) only")
    ap.add_argument("--elections-idle", type=float, default=30,
                    help="seconds idle per measurement of --only-elections")
    ap.add_argument("--only-candidacy", action="store_true",
                    help="measure the application's death to a new "
                    "leader and the renew interval with a probe only")
    ap.add_argument("--candidacy-trials", type=int, default=10,
                    help="application deaths per gating kind and backend")
    ap.add_argument("--candidacy-kill-trials", type=int, default=3,
                    help="client-go elector processes killed, per backend")
    ap.add_argument("--candidacy-idle", type=float, default=60,
                    help="seconds of renews measured with and without a "
                    "probe")
    ap.add_argument("--only-coordinated", action="store_true",
                    help="measure the coordinated move on the "
                    "controller's preferredHolder only")
    ap.add_argument("--coordinated-trials", type=int, default=10,
                    help="coordinated moves per elector kind")
    ap.add_argument("--only-shards", action="store_true",
                    help="measure shard groups only: time to balance "
                    "and shards moved on a join, a SIGTERM and a kill -9, "
                    "the group's API requests per second")
    ap.add_argument("--never-wait", type=float, default=40,
                    help="seconds to wait for a new leader before saying "
                    "never (leaderd without gating)")
    ap.add_argument("--streamread", default=STREAMREAD,
                    help="the push figures' stream reader (make "
                    "build/bench/streamread)")
    args = ap.parse_args()
    if args.leaderd:
        os.environ["LEADERD"] = os.path.abspath(args.leaderd)
    with tempfile.TemporaryDirectory(prefix="leaderd-bench-") as work:
        if args.only_steady:
            steady(args, work)
            return
        if args.only_candidacy:
            candidacy_figures(args, work)
            return
        if args.only_coordinated:
            coordinated_figures(args, work)
            return
        if args.only_shards:
            shards.shard_figures(args, work)
            return
        if args.only_elections:
            elections_figures(args, work)
            return
        need_streamread(args.streamread)
        d, last = push_delivery(args, work)
        if d and last:
            print("/leader/watch: event delivered to 100 stream clients "
                  "(50 TCP, 50 unix) %.2f ms (p50), %.2f ms (p99), %.2f ms "
                  "(max) after the elector's change; the last of the 100 "
                  "had it after %.2f ms (p50), %.2f ms (max) over %d "
                  "changes" % (pct(d, 0.5), pct(d, 0.99), max(d),
                               pct(last, 0.5), max(last), len(last)))
        if args.only_push:
            return
        steady(args, work)
        handover_figures(args, work)
        coordinated_figures(args, work)
        candidacy_figures(args, work)
        shards.shard_figures(args, work)
        elections_figures(args, work)


if __name__ == "__main__":
    main()
