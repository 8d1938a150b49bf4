"""speed -- make bench's CPU per /leader request and the image's
footprint by the API server's key type, printed, never asserted.

    python3 test/bench/speed.py --loadgen PATH --image LEADERD
        [--shared LEADERD] [--clientgo PATH] [--seconds S] [--conns N]
        [--idle S] [--only cpu|footprint]

CPU per request: one leader on the test API server (TLS, 15s/10s/2s),
then loadgen's keep-alive GETs of /leader over --conns connections for
--seconds; the server's CPU over that time (its threads' scheduler
time, /proc/PID/task/*/schedstat) divided by the answers loadgen read.
For the image's binary (--image), the shared build (--shared) and the
client-go elector of test/e2e (--clientgo), whose /leader is served by
Go's net/http, as a client-go sidecar would.  loadgen runs on the same
machine: what it and the other processes take of the cores bounds the
requests per second, not the CPU per request much.

Footprint: three instances of the image's binary on one test API server
whose CA and certificate are P-256, then RSA-2048 keys (FakeAPI's
key_type), idle --idle seconds once one leads; the leader's and a
follower's VmRSS, RssAnon and Pss beside the image's targets (VmRSS <=
1.5 MiB, RssAnon <= 512 KiB).
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit"))

from fakeapi import FakeAPI  # noqa: E402
from harness import Leaderd, free_port, wait_until  # noqa: E402
from bench import oncpu_ms, proc_status, pss  # noqa: E402

TIMINGS = dict(lease_duration=15, renew_deadline=10, retry_period=2,
               request_timeout=5, log_level="info")
KEY_TYPES = (("P-256", "ec"), ("RSA-2048", "rsa:2048"))


def load(loadgen, pid, port, path, seconds, conns):
    """loadgen on 127.0.0.1:port for seconds; returns (requests, errors,
    requests per second, server CPU us per request)."""
    c0 = oncpu_ms(pid) * 1e3
    p = subprocess.run([loadgen, "-c", str(conns), "-d", str(seconds),
                        "127.0.0.1", str(port), path],
                       capture_output=True, text=True, timeout=seconds + 60)
    c1 = oncpu_ms(pid) * 1e3
    if p.returncode != 0:
        raise RuntimeError("loadgen: %s" % p.stderr.strip())
    w = p.stdout.split()
    n, err, dt = int(w[1]), int(w[3]), float(w[5])
    return n, err, n / dt, (c1 - c0) / max(1, n)


def leaderd_cpu(args, work, binary, tag):
    api = FakeAPI().start()
    i = Leaderd(api, work, "speed-%s" % tag, "bench-speed-%s" % tag,
                binary=binary, **TIMINGS)
    try:
        i.start()
        wait_until(i.is_leader, 15, what="%s to lead" % tag)
        load(args.loadgen, i.pid, i.port, "/leader", 1, args.conns)
        return load(args.loadgen, i.pid, i.port, "/leader", args.seconds,
                    args.conns)
    finally:
        i.cleanup()
        api.stop()


def clientgo_cpu(args, work):
    api = FakeAPI().start()
    token = "bench-speed-clientgo"
    api.add_token(token)
    kc = os.path.join(work, "speed-clientgo.kubeconfig")
    api.write_kubeconfig(kc, token=token)
    port = free_port()
    p = subprocess.Popen([args.clientgo, "-kubeconfig", kc, "-name",
                          "bench-speed-clientgo", "-id", "clientgo",
                          "-http", "127.0.0.1:%d" % port],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def leads():
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/leader" % port,
                                        timeout=1) as r:
                return b'"is_leader":true' in r.read()
        except OSError:
            return False
    try:
        wait_until(leads, 20, what="the client-go elector to lead")
        load(args.loadgen, p.pid, port, "/leader", 1, args.conns)
        return load(args.loadgen, p.pid, port, "/leader", args.seconds,
                    args.conns)
    finally:
        p.terminate()
        p.wait(10)
        api.stop()


def cpu_table(args, work):
    rows = [("image: static, musl, Mbed TLS", args.image)]
    if args.shared:
        rows.append(("make: shared, glibc, OpenSSL", args.shared))
    print("CPU per /leader request: loadgen, %d keep-alive connections, "
          "%.0f s, one leader on the test API server (15s/10s/2s):"
          % (args.conns, args.seconds))
    print("| build | requests/s | CPU per request | errors |")
    print("|---|---|---|---|")
    for what, binary in rows:
        n, err, rate, us = leaderd_cpu(args, work, binary,
                                       "image" if binary == args.image
                                       else "shared")
        print("| %s | %.0f | %.1f us | %d |" % (what, rate, us, err))
    if args.clientgo and os.path.exists(args.clientgo):
        n, err, rate, us = clientgo_cpu(args, work)
        print("| client-go v0.36.3 elector, /leader on net/http (test/e2e) "
              "| %.0f | %.1f us | %d |" % (rate, us, err))
    else:
        print("| client-go elector | not built (make e2e-bins) | | |")
    sys.stdout.flush()


def footprint(args, work, key_type):
    d = tempfile.mkdtemp(prefix="certs-", dir=work)
    api = FakeAPI(certdir=d, key_type=key_type).start()
    insts = [Leaderd(api, work, "fp-%s-%d" % (key_type.replace(":", ""), k),
                     "bench-fp-%s" % key_type.replace(":", ""),
                     binary=args.image, **TIMINGS) for k in range(3)]
    try:
        for i in insts:
            i.start()
        wait_until(lambda: any(i.is_leader() for i in insts), 15,
                   what="a leader")
        time.sleep(args.idle)
        lead = [i for i in insts if i.is_leader()][0]
        fol = [i for i in insts if i is not lead][0]
        return [(proc_status(i.pid, "VmRSS"), proc_status(i.pid, "RssAnon"),
                 pss(i.pid), proc_status(i.pid, "VmHWM"))
                for i in (lead, fol)]
    finally:
        for i in insts:
            i.cleanup()
        api.stop()


def footprint_table(args, work):
    print("footprint of the image's binary by the API server's keys (CA "
          "and certificate), 3 instances, 15s/10s/2s, %.0f s idle; "
          "targets: VmRSS <= 1536 kB, RssAnon <= 512 kB:" % args.idle)
    print("| keys | role | VmRSS kB | RssAnon kB | Pss kB | VmHWM kB |")
    print("|---|---|---|---|---|---|")
    for what, kt in KEY_TYPES:
        for role, (rss, anon, pss, hwm) in zip(("leader", "follower"),
                                               footprint(args, work, kt)):
            print("| %s | %s | %d%s | %d%s | %d | %d |" % (
                what, role, rss, "" if rss <= 1536 else " (over)", anon,
                "" if anon <= 512 else " (over)", pss, hwm))
        sys.stdout.flush()


def machine():
    """What ran it: the CPU, the cores, the load average (other work on
    the machine shows there)."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "machine: %s, %d cores, kernel %s, load average %.2f %.2f " \
        "%.2f at the start" % ((model, os.cpu_count(), os.uname().release)
                               + os.getloadavg())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loadgen", required=True)
    ap.add_argument("--image", required=True,
                    help="the image's binary (make image-bin)")
    ap.add_argument("--shared", help="the shared build's binary (make)")
    ap.add_argument("--clientgo", default=os.environ.get(
        "CLIENTGO_ELECTOR") or os.path.join(
            HERE, "..", "..", "build", "e2e", "bin", "clientgo-elector"))
    ap.add_argument("--seconds", type=float, default=6)
    ap.add_argument("--conns", type=int, default=50)
    ap.add_argument("--idle", type=float, default=30)
    ap.add_argument("--only", choices=("cpu", "footprint"))
    args = ap.parse_args()
    args.image = os.path.abspath(args.image)
    if args.shared:
        args.shared = os.path.abspath(args.shared)
    print(machine())
    with tempfile.TemporaryDirectory(prefix="leaderd-speed-") as work:
        if args.only != "footprint":
            cpu_table(args, work)
        if args.only != "cpu":
            footprint_table(args, work)


if __name__ == "__main__":
    main()
