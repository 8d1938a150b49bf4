#!/usr/bin/env python3
"""bench -- leaderd's figures, printed, never asserted (the machine is
noisy; the tests assert safety, this measures cost and speed).

    python3 test/bench/bench.py [--leaderd PATH] [--trials N] [--idle S]

With the default production timings (15s / 10s / 2s) it measures, for
three instances against the test API server over TLS:
  - resident memory (VmRSS, VmHWM) of each leaderd after start and idle;
  - CPU time used over the idle period, per instance, as ms per minute;
  - API requests per minute, leader and followers;
  - /leader latency from a local client (p50, p99, max over 2000 GETs);
and with short timings (3s / 2s / 500ms), over N trials:
  - handover after SIGTERM of the leader (until another says is_leader);
  - takeover after kill -9 of the leader.
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from fakeapi import FakeAPI  # noqa: E402
from harness import Leaderd, wait_until  # noqa: E402


def proc_status(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])  # kB
    return 0


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


def http_latency(port, n):
    req = b"GET /leader HTTP/1.1\r\nHost: localhost\r\n\r\n"
    s = socket.create_connection(("127.0.0.1", port))
    times = []
    try:
        for _ in range(n):
            t = time.perf_counter()
            s.sendall(req)
            buf = b""
            while b"\r\n\r\n" not in buf:
                buf += s.recv(4096)
            head, body = buf.split(b"\r\n\r\n", 1)
            length = int([h for h in head.split(b"\r\n")
                          if h.lower().startswith(b"content-length")][0]
                         .split(b":")[1])
            while len(body) < length:
                body += s.recv(4096)
            times.append((time.perf_counter() - t) * 1e6)
    finally:
        s.close()
    times.sort()
    return times[len(times) // 2], times[int(len(times) * 0.99)], times[-1]


def steady(args, work):
    api = FakeAPI().start()
    insts = [Leaderd(api, work, "steady-%d" % i, "bench-steady",
                     lease_duration=15, renew_deadline=10, retry_period=2,
                     request_timeout=5, log_level="info")
             for i in range(3)]
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
        if gop is not None:
            print("  client-go v0.36.3 elector (test/e2e), follower on the "
                  "same Lease: VmRSS %d kB (private %d kB)" % (
                      proc_status(gop.pid, "VmRSS"),
                      proc_status(gop.pid, "RssAnon")))
            gop.terminate()
            gop.wait(10)
        p50, p99, mx = http_latency(lead.port, 2000)
        print("  /leader over one keep-alive connection, 2000 GETs: "
              "p50 %.0f us, p99 %.0f us, max %.0f us" % (p50, p99, mx))
    finally:
        for i in insts:
            i.cleanup()
        api.stop()


def handovers(args, work, how):
    api = FakeAPI().start()
    times = []
    try:
        for trial in range(args.trials):
            insts = [Leaderd(api, work, "%s-%d-%d" % (how, trial, i),
                             "bench-%s-%d" % (how, trial), log_level="info")
                     for i in range(3)]
            try:
                for i in insts:
                    i.start()
                old = wait_until(lambda: leader_of(insts), 10,
                                 what="a leader")
                time.sleep(1.0)
                t = time.monotonic()
                if how == "sigterm":
                    old.terminate()
                else:
                    old.kill9()
                rest = [i for i in insts if i is not old]
                wait_until(lambda: leader_of(rest), 15, interval=0.005,
                           what="a new leader")
                times.append(time.monotonic() - t)
            finally:
                for i in insts:
                    i.cleanup()
    finally:
        api.stop()
    return times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--leaderd")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--idle", type=float, default=60)
    args = ap.parse_args()
    if args.leaderd:
        os.environ["LEADERD"] = os.path.abspath(args.leaderd)
    with tempfile.TemporaryDirectory(prefix="leaderd-bench-") as work:
        steady(args, work)
        for how, bound in (("sigterm", "2.2 x retry_period = 1.1 s"),
                           ("kill9", "lease_duration + 2.2 x retry_period "
                            "= 4.1 s")):
            t = handovers(args, work, how)
            print("%s of the leader, 3s/2s/500ms, %d trials: median %.2f s, "
                  "worst %.2f s (bound %s)" % (how, len(t),
                                              statistics.median(t), max(t),
                                              bound))


if __name__ == "__main__":
    main()
