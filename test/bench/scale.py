#!/usr/bin/env python3
"""scale -- what leaderd costs as the work grows (make bench-scale),
printed, never asserted for speed; overlaps (two electors leading one
Lease, two members owning one shard) are asserted.

    python3 test/bench/scale.py [--leaderd PATH] [--parts 1,2,3,4]
        [--sizes 10,50,100,200,400] [--clientgo-max N] [--window S]
        [--herd-leases N] [--outage S] [--streams 1,100,1000,10000]
        [--elections 1,2,4,8,16] [--streamread PATH] [--smoke]

Parts 1 and 2 run on the e2e suite's kube-apiserver (kasbox, from
$E2E_BIN, default build/e2e/bin; kube-apiserver and its embedded etcd
are ONE process, so its CPU and RSS are both together), at production
timings (lease 15 s, renew deadline 10 s, retry 2 s), every elector
with the admin kubeconfig:

 1. Sidecars per apiserver: N electors over N/10 Leases (one leader and
    nine followers each), leaderd and then the client-go elector, for
    each N (client-go up to --clientgo-max, and only while the memory
    the smaller N measured leaves room).  After every Lease has a holder
    and --settle seconds, over a --window: kasbox's CPU seconds per
    minute (utime + stime) and VmRSS; its requests per second by verb
    on Leases, from its own apiserver_request_total, and on everything;
    its long-running requests (apiserver_longrunning_requests, WATCH on
    Leases, the server's own included); the electors' summed VmRSS and
    Pss and their CPU.  A row with no electors comes first: the rest
    is reported against it, per 100 sidecars.  Last, each elector's
    N/10 leaders of N = --alone alone, each on its own Lease: the
    writes every elector must make, the floor.
 2. The herd after an outage: --herd-leases Leases with two electors
    each (leaderd, then client-go), and a 64-shard group over 8 leaderd
    members; after a steady window, kasbox is stopped (SIGSTOP) for
    --outage seconds and resumed.  Printed: the Lease request rate
    steady and its peak over the first 5 s after the resume (from
    apiserver_request_total, scraped about every second; the first
    interval counts from the resume, as a stopped server finishes no
    request), the same without the 504s (requests whose clients gave up
    in the outage, recorded as the server resumes), the Lease requests
    of those 5 s by verb and code, the time
    from the resume until every Lease (every shard) has a leader (an
    owner) again, and the overlaps seen by sampling every elector's
    /leader (/shards) throughout, asserted 0.

Parts 3 and 4 run on the test API server (test/kit/fakeapi.py):

 3. Local fan-out: one following leaderd with 1, 100, 1,000 and 10,000
    /leader/watch streams, half TCP, half unix (read by
    test/bench/streamread.c, --streamread, each event timed as its
    read returns); per change of holder, the time
    from the elector's change (changed_at in the event) to the last
    stream's event, p50 and p99 over --push-trials changes; the
    process's VmRSS and RssAnon growth per open stream; and /healthz
    latency from another process meanwhile (keep-alive, every 5 ms).
 4. Elections per sidecar: one leaderd leading k elections (bench.py's
    elections figures), VmRSS, Pss and CPU per election.

The open-file limit is raised to its hard limit for the bench and its
children.  --smoke (test/integration/test_bench_scale.py, in make
test): parts 3 and 4 in seconds, 100 streams and 1 and 2 elections;
parts 1 and 2 need kasbox, e.g. --parts 1 --sizes 10 --window 3.
"""

import argparse
import json
import multiprocessing
import os
import re
import resource
import signal
import socket
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit"))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

import bench  # noqa: E402
import e2elib  # noqa: E402
import handover  # noqa: E402
import watchcost  # noqa: E402
from harness import Leaderd, LeadershipChecker, wait_until  # noqa: E402
from shardkit import ShardChecker, member_config, views_of  # noqa: E402

LD, RD, RP, REQ_TIMEOUT = 15, 10, 2, 5
LABELS = re.compile(r'(\w+)="([^"]*)"')


# -- kasbox ------------------------------------------------------------------

class Kas:
    """kasbox started once (handover.KasBackend), as the api object both
    test/kit/harness.Leaderd (add_token, write_kubeconfig) and
    handover.Elector (kubeconfig, namespace) take: every elector is the
    admin user."""

    namespace = "default"

    def __init__(self, work):
        self.b = handover.KasBackend(work)
        self.info = self.b.info
        self.pid = self.b.p.pid
        self.token = self.info["users"]["admin"]["token"]
        self.api = watchcost.Api(self.info["url"], self.info["ca"],
                                 self.token)
        self.conn = None

    def add_token(self, token):
        pass

    def write_kubeconfig(self, path, token=None, token_file=None,
                         user="admin", namespace="default"):
        e2elib.write_kubeconfig(path, self.info["url"], user,
                                ca_file=self.info["ca"], token=self.token,
                                namespace=namespace)

    def kubeconfig(self, who):
        return self.b.admin, None

    def get(self, path):
        for _ in range(2):
            if self.conn is None:
                self.conn = self.api.conn()
            try:
                return self.api.req(self.conn, "GET", path)
            except (OSError, ValueError, RuntimeError,
                    watchcost.http.client.HTTPException):
                self.conn.close()
                self.conn = None
        raise RuntimeError("GET %s failed twice" % path)

    def scrape(self):
        """(monotonic time, {(verb, resource): requests}, {verb: long-
        running requests on Leases}, {"VERB code": requests on Leases})
        from kasbox's /metrics."""
        text = self.get("/metrics")
        t = time.monotonic()
        reqs, lr, codes = {}, {}, {}
        for line in text.splitlines():
            if line.startswith("apiserver_request_total{"):
                lab, v = line.rsplit(" ", 1)
                d = dict(LABELS.findall(lab))
                k = (d.get("verb", ""), d.get("resource", ""))
                reqs[k] = reqs.get(k, 0.0) + float(v)
                if k[1] == "leases":
                    c = "%s %s" % (k[0], d.get("code", "?"))
                    codes[c] = codes.get(c, 0.0) + float(v)
            elif line.startswith("apiserver_longrunning_requests{"):
                lab, v = line.rsplit(" ", 1)
                d = dict(LABELS.findall(lab))
                if d.get("resource") == "leases":
                    lr[d.get("verb")] = lr.get(d.get("verb"), 0.0) + \
                        float(v)
        return t, reqs, lr, codes

    def holders(self, prefix):
        """{Lease name: holderIdentity} of the Leases named prefix*."""
        d = self.get(watchcost.leases_path(self.namespace))
        return {i["metadata"]["name"]: i["spec"].get("holderIdentity")
                for i in d.get("items", [])
                if i["metadata"]["name"].startswith(prefix)}

    def stop(self):
        if self.b.p.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
        self.b.stop()


def lease_rate(m0, m1, verbs=None):
    """Requests per second on Leases between two scrapes (by verb if
    verbs is None: a dict)."""
    dt = m1[0] - m0[0]
    by = {}
    for (verb, res), v in m1[1].items():
        if res == "leases":
            by[verb] = by.get(verb, 0.0) + (v - m0[1].get((verb, res), 0.0))
    by = {k: v / dt for k, v in by.items() if v > 0}
    return by if verbs is None else sum(by.values())


def alive_rate(m0, m1):
    """Lease requests per second between two scrapes but those answered
    504: after a stopped server resumes, the requests its clients sent
    and gave up on during the outage, on connections already open."""
    n = sum(v - m0[3].get(k, 0.0) for k, v in m1[3].items()
            if not k.endswith(" 504"))
    return n / (m1[0] - m0[0])


def all_rate(m0, m1):
    return sum(v - m0[1].get(k, 0.0) for k, v in m1[1].items()) / (
        m1[0] - m0[0])


def oncpu_ms(pid):
    """bench.oncpu_ms, 0 for a process gone (counted as exited)."""
    try:
        return bench.oncpu_ms(pid)
    except OSError:
        return 0.0


def mem_avail_kb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return 0


# -- electors ----------------------------------------------------------------

class GoSidecar(handover.Elector):
    """The client-go elector as LeadershipChecker samples it."""

    def __init__(self, kas, ident, lease):
        super().__init__(kas, "clientgo", ident, lease, (LD, RD, RP))
        self.name = ident
        self.lock = lease
        self.proc = self.p
        self.pid = self.p.pid

    def alive(self):
        return self.p.poll() is None

    def leader(self, timeout=0.5):
        return handover.get_leader(self.port, timeout=timeout)


def start_elector(kas, work, kind, ident, lease, tries=3):
    """A started elector; a new port on a failed start (another process
    may have taken the one free_port chose)."""
    if kind == "client-go":
        return GoSidecar(kas, ident, lease)
    for k in range(tries):
        i = Leaderd(kas, work, ident + "r" * k, lease, lease_duration=LD,
                    renew_deadline=RD, retry_period=RP,
                    request_timeout=REQ_TIMEOUT, log_level="warn")
        try:
            i.start(timeout=30)
            return i
        except AssertionError:
            if i.alive():
                raise
    raise RuntimeError("%s did not start %d times" % (ident, tries))


def revive(kas, work, kind, els, groups=None):
    """Replace the electors that exited at start (a client-go elector
    whose port another process took exits)."""
    time.sleep(2)
    for k, e in enumerate(els):
        if not e.alive():
            n = start_elector(kas, work, kind, e.name + "x", e.lock)
            print("  %s exited at start; %s instead" % (e.name, n.name))
            if groups is not None:
                groups[n.name] = groups[e.name]
            els[k] = n


def stop_all(els):
    for e in els:
        if e.alive():
            e.proc.send_signal(signal.SIGTERM)
    for e in els:
        try:
            e.proc.wait(20)
        except Exception:
            e.proc.kill()
            e.proc.wait(10)


def wait_held(kas, prefix, n, timeout):
    wait_until(lambda: (h := kas.holders(prefix)) and len(h) == n and
               all(h.values()), timeout, interval=1.0,
               what="every %s* Lease held" % prefix)


# -- 1. sidecars per apiserver ----------------------------------------------

def sidecar_row(args, kas, work, kind, n, per_lease=10):
    nleases = max(1, n // per_lease)
    tag = "s%s%d%s" % ("go" if kind == "client-go" else "ld", n,
                       "a" if per_lease == 1 else "")
    els = []
    try:
        for i in range(n):
            els.append(start_elector(kas, work, kind, "%s-%d" % (tag, i),
                                     "%s-l%d" % (tag, i % nleases)))
        if n:
            revive(kas, work, kind, els)
            wait_held(kas, tag + "-l", nleases, 120 + n)
        time.sleep(args.settle)
        m0, c0 = kas.scrape(), watchcost.cpu_s(kas.pid)
        s0 = [oncpu_ms(e.pid) for e in els]
        time.sleep(args.window)
        m1, c1 = kas.scrape(), watchcost.cpu_s(kas.pid)
        dt = m1[0] - m0[0]
        scpu = sum(max(0.0, oncpu_ms(e.pid) - c) for e, c in zip(els, s0))
        mems = []
        for e in els:
            try:
                mems.append(bench.mem(e.pid))
            except OSError:
                pass            # it exited: counted below
        dead = sum(1 for e in els if not e.alive())
        return {"kind": kind, "n": n, "leases": nleases if n else 0,
                "cpu": (c1 - c0) * 60.0 / dt,
                "rss": watchcost.rss_mb(kas.pid),
                "verbs": lease_rate(m0, m1), "all": all_rate(m0, m1),
                "watches": m1[2].get("WATCH", 0.0),
                "srss": sum(m[0] for m in mems) / 1024.0,
                "spss": sum(m[2] for m in mems) / 1024.0,
                "scpu": scpu / 1000.0 * 60.0 / dt, "dead": dead}
    finally:
        stop_all(els)


def print_sidecars(rows, args):
    print("\n1. sidecars per apiserver: N electors over N/10 Leases, "
          "15s/10s/2s, %g s window after every Lease is held; kasbox "
          "(kube-apiserver and etcd in one process)" % args.window)
    print("| elector | N | Leases | apiserver CPU s/min | apiserver RSS MB "
          "| Lease req/s by verb | all req/s | WATCH on Leases "
          "| sidecars VmRSS MB | sidecars Pss MB | sidecars CPU s/min |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        verbs = ", ".join("%s %.1f" % (k, v) for k, v in
                          sorted(r["verbs"].items())) or "-"
        print("| %s | %d | %d | %.2f | %.0f | %s | %.1f | %g | %.1f | %.1f "
              "| %.2f |%s" % (r["kind"], r["n"], r["leases"], r["cpu"],
                              r["rss"], verbs, r["all"], r["watches"],
                              r["srss"], r["spss"], r["scpu"],
                              " (%d exited)" % r["dead"] if r["dead"]
                              else ""))
    base = rows[0]
    print("\nper 100 sidecars, above the row with none (apiserver CPU "
          "s/min, Lease req/s, sidecars VmRSS MB):")
    print("| elector | N | apiserver CPU s/min per 100 | Lease req/s per "
          "100 | sidecars VmRSS MB per 100 |")
    print("|---|---|---|---|---|")
    for r in rows[1:]:
        k = 100.0 / r["n"]
        print("| %s | %d | %.2f | %.1f | %.0f |" % (
            r["kind"], r["n"], (r["cpu"] - base["cpu"]) * k,
            sum(r["verbs"].values()) * k, r["srss"] * k))
    by = {(r["kind"], r["n"]): r for r in rows}
    n = args.alone or 100
    ld, go = by.get(("leaderd", n)), by.get(("client-go", n))
    if ld and go and go["cpu"] > base["cpu"]:
        print("at N=%d: leaderd costs the apiserver %.2f CPU s/min above "
              "idle, client-go %.2f: %.2f of client-go's" % (
                  n, ld["cpu"] - base["cpu"], go["cpu"] - base["cpu"],
                  (ld["cpu"] - base["cpu"]) / (go["cpu"] - base["cpu"])))
        fl = by.get(("leaderd, leaders alone", n // 10))
        fg = by.get(("client-go, leaders alone", n // 10)) or fl
        if fl and go["cpu"] > fg["cpu"]:
            print("  above each elector's %d leaders' own writes (leaderd "
                  "%.2f, client-go %.2f): leaderd's followers %.2f, "
                  "client-go's %.2f: %.2f of client-go's"
                  % (n // 10, fl["cpu"] - base["cpu"],
                     fg["cpu"] - base["cpu"], ld["cpu"] - fl["cpu"],
                     go["cpu"] - fg["cpu"], (ld["cpu"] - fl["cpu"]) /
                     (go["cpu"] - fg["cpu"])))


def sidecars(args, kas, work):
    rows = [sidecar_row(args, kas, work, "none", 0)]
    rows[0]["kind"] = "(none)"
    print("  idle kasbox: %.2f CPU s/min, %.0f MB" % (rows[0]["cpu"],
                                                      rows[0]["rss"]),
          flush=True)
    for kind in args.kinds:
        per = None
        for n in args.sizes:
            if kind == "client-go" and n > args.clientgo_max:
                print("  %s N=%d: skipped (--clientgo-max %d)" % (
                    kind, n, args.clientgo_max))
                continue
            if per and per * n > 0.6 * mem_avail_kb():
                print("  %s N=%d: skipped, %.0f MB needed of %.0f MB "
                      "available" % (kind, n, per * n / 1024.0,
                                     mem_avail_kb() / 1024.0))
                continue
            r = sidecar_row(args, kas, work, kind, n)
            per = r["srss"] * 1024.0 / n
            rows.append(r)
            print("  %s N=%d: apiserver %.2f CPU s/min, %.0f MB; Lease "
                  "%.1f req/s; sidecars %.0f MB" % (
                      kind, n, r["cpu"], r["rss"], sum(r["verbs"].values()),
                      r["srss"]), flush=True)
    for kind in args.kinds if args.alone else []:
        # The floor at N=alone: its N/10 leaders' writes with no follower,
        # for each elector (both renew each Lease every retry_period).
        r = sidecar_row(args, kas, work, kind, args.alone // 10,
                        per_lease=1)
        r["kind"] = "%s, leaders alone" % kind
        rows.append(r)
    print_sidecars(rows, args)
    return rows


# -- 2. the herd after an outage -------------------------------------------

def overlaps(chk, groups):
    """Overlapping claims between electors of one group (LeadershipChecker
    claims; groups: name -> group)."""
    by = {}
    for c in chk.claims():
        by.setdefault(groups[c[0]], []).append(c)
    bad = []
    for cl in by.values():
        for i, a in enumerate(cl):
            for b in cl[i + 1:]:
                if a[0] != b[0] and a[1] < b[2] and b[1] < a[2]:
                    bad.append((a, b))
    return bad


def outage(args, kas, led):
    """Steady Lease rate, SIGSTOP for --outage s, SIGCONT; then the
    Lease rate about every second for 5 s (between scrapes of /metrics,
    which a busy server answers late: (rate, seconds) each; the first
    counts from the resume, since a stopped server finishes no request,
    so what the clients queued in the outage counts where the server
    serves it), the Lease requests of those 5 s by verb and code, and
    the seconds from the resume until led() is true.  Returns (steady,
    peak, rates, took, codes)."""
    m0 = kas.scrape()
    time.sleep(args.steady)
    m1 = kas.scrape()
    steady = lease_rate(m0, m1, verbs=True)
    os.kill(kas.pid, signal.SIGSTOP)
    try:
        time.sleep(args.outage)
    finally:
        os.kill(kas.pid, signal.SIGCONT)
    tr = time.monotonic()
    prev, rates = (tr,) + m1[1:], []
    while time.monotonic() < tr + 5.0:
        time.sleep(max(0.0, min(1.0, tr + 5.0 - time.monotonic())))
        m = kas.scrape()
        rates.append((lease_rate(prev, m, verbs=True), m[0] - prev[0],
                      alive_rate(prev, m)))
        prev = m
    codes = {k: v - m1[3].get(k, 0.0) for k, v in prev[3].items()
             if v - m1[3].get(k, 0.0) > 0}
    took = wait_until(lambda: led(tr), 180, interval=0.2,
                      what="every Lease led again")
    return steady, max(r[0] for r in rates), rates, took, codes


def first_led_after(chk, names, tr):
    t = None
    for t0, t1, name, lead, _ in chk.snapshot():
        if lead and name in names and t0 >= tr:
            t = t1 if t is None else min(t, t1)
    return t


def herd_leases(args, kas, work, kind):
    n = args.herd_leases
    tag = "h%s" % ("go" if kind == "client-go" else "ld")
    els, groups, members = [], {}, {}
    chk = None
    try:
        for i in range(n):
            for j in range(2):
                e = start_elector(kas, work, kind, "%s-%d-%d" % (tag, i, j),
                                  "%s-l%d" % (tag, i))
                els.append(e)
                groups[e.name] = i
        revive(kas, work, kind, els, groups)
        for e in els:
            members.setdefault(groups[e.name], set()).add(e.name)
        wait_held(kas, tag + "-l", n, 180)
        chk = LeadershipChecker(els, interval=0.05).start()
        time.sleep(args.settle)

        def led(tr):
            ts = [first_led_after(chk, members[i], tr) for i in range(n)]
            return None if None in ts else max(ts) - tr
        steady, peak, rates, took, codes = outage(args, kas, led)
        time.sleep(2)
        chk.stop()
        bad = overlaps(chk, groups)
        return {"what": "%d Leases x 2 %s" % (n, kind), "steady": steady,
                "peak": peak, "rates": rates, "took": took, "codes": codes,
                "overlaps": len(bad), "samples": len(chk.snapshot())}
    finally:
        if chk is not None:
            chk.stop()
        stop_all(els)


def herd_shards(args, kas, work, count=64, m=8):
    group = "hsh%d" % count
    made = []
    chk = ShardChecker([], interval=0.1)
    try:
        for j in range(m):
            i = Leaderd(kas, work, "%s-m%d" % (group, j), "unused",
                        lease_duration=LD, renew_deadline=RD,
                        retry_period=RP, request_timeout=REQ_TIMEOUT,
                        log_level="warn")
            member_config(i, group, count)
            i.start(timeout=30)
            made.append(i)
            chk.add(i)

        def owned():
            v = views_of(made)
            if any(x is None for x in v.values()):
                return None
            own = [s for x in v.values() for s in x["owned"]]
            return len(own) == count and len(set(own)) == count
        wait_until(owned, 240, interval=0.5, what="every shard owned")
        chk.start()
        time.sleep(args.settle)

        def led(tr):
            # Every shard claimed, after the resume, by some member.
            seen = set()
            for t0, t1, name, own in chk.snapshot():
                if t0 >= tr and own:
                    seen |= set(own)
            if len(seen) < count:
                return None
            return owned() and time.monotonic() - tr
        steady, peak, rates, took, codes = outage(args, kas, led)
        time.sleep(2)
        chk.stop()
        return {"what": "%d shards over %d leaderd" % (count, m),
                "steady": steady, "peak": peak, "rates": rates,
                "codes": codes,
                "took": took, "overlaps": len(chk.violations()),
                "samples": len(chk.snapshot())}
    finally:
        chk.stop()
        stop_all(made)


def herd(args, kas, work):
    rows = []
    for kind in args.kinds:
        rows.append(herd_leases(args, kas, work, kind))
        print("  %s" % rows[-1], flush=True)
    if "leaderd" in args.kinds:
        rows.append(herd_shards(args, kas, work))
        print("  %s" % rows[-1], flush=True)
    print("\n2. the herd after an outage: kasbox stopped (SIGSTOP) for %g s "
          "and resumed; 15s/10s/2s; Lease requests/s from "
          "apiserver_request_total" % args.outage)
    print("| electors | steady req/s | peak req/s in the 5 s after | peak / "
          "steady | peak without the 504s | / steady | rates after (req/s "
          "over s, between scrapes) | every Lease led again after | "
          "overlaps (samples) | Lease requests in the 5 s after, by verb "
          "and code |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        alive = max(x[2] for x in r["rates"])
        st = r["steady"] or float("inf")
        print("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %.1f s | "
              "%d (%d) | %s |" % (
                  r["what"], r["steady"], r["peak"], r["peak"] / st, alive,
                  alive / st,
                  ", ".join("%.0f/%.1f" % x[:2] for x in r["rates"]),
                  r["took"], r["overlaps"], r["samples"],
                  ", ".join("%s: %d" % kv
                            for kv in sorted(r["codes"].items()))))
    bad = [r["what"] for r in rows if r["overlaps"]]
    assert not bad, "overlapping leaders after the outage: %s" % bad
    return rows


# -- 3. local fan-out --------------------------------------------------------

def _healthz(conn, port):
    """In a process of its own: GET /healthz on one keep-alive
    connection every 5 ms until the parent says stop; send back the
    latencies in ms."""
    req = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(5)
    out = []
    while not conn.poll(0.005):
        out.append(bench.round_trip(s, req) * 1000.0)
    s.close()
    conn.send(out)


class Meanwhile:
    """What push_delivery runs once its streams are open: the leaderd's
    memory then (against before), and /healthz polled throughout."""

    def __init__(self, settle):
        self.settle = settle
        self.before = self.after = None
        self.health = []

    def before_streams(self, w):
        self.before = bench.mem(w.pid)

    def __call__(self, w):
        time.sleep(self.settle)
        self.after = bench.mem(w.pid)
        self.pid, self.cpu0 = w.pid, bench.oncpu_ms(w.pid)
        fork = multiprocessing.get_context("fork")
        self.parent, child = fork.Pipe()
        self.p = fork.Process(target=_healthz, args=(child, w.port),
                              daemon=True)
        self.p.start()
        return self

    def stop(self):
        self.cpu = bench.oncpu_ms(self.pid) - self.cpu0
        self.parent.send("stop")
        if self.parent.poll(30):
            self.health = self.parent.recv()
        self.p.join(10)


def fanout(args, work):
    rows = []
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    for n in args.streams:
        room = (hard - 32 - 256) // 2       # httpd_set_max_streams's
        if hard != resource.RLIM_INFINITY and n > room:
            print("  %d streams: the open-file limit %d holds %d (the "
                  "rest would be refused); measuring %d" % (n, hard, room,
                                                             room))
            n = room
        mw = Meanwhile(settle=1.0 + n / 2000.0)
        d, last = bench.push_delivery(args, work, nclients=n, meanwhile=mw)
        if not last:
            print("  %d streams: no complete change" % n)
            continue
        h = mw.health or [0.0]
        rows.append((n, bench.pct(last, 0.5), bench.pct(last, 0.99),
                     max(last), len(last),
                     (mw.after[0] - mw.before[0]) * 1024.0 / n,
                     (mw.after[1] - mw.before[1]) * 1024.0 / n,
                     mw.after[0], mw.cpu / args.push_trials,
                     bench.pct(h, 0.5), bench.pct(h, 0.99), max(h),
                     len(mw.health)))
        print("  %d streams: %s" % (n, rows[-1]), flush=True)
    print("\n3. local fan-out: one following leaderd, N /leader/watch "
          "streams (half TCP, half unix); each change of holder from the "
          "elector's change (changed_at) to the last stream's event; "
          "/healthz latency meanwhile")
    print("| streams | to the last stream p50 ms | p99 ms | max ms "
          "| changes | VmRSS B per stream | RssAnon B per stream "
          "| VmRSS kB | leaderd CPU ms per change | /healthz p50 ms "
          "| p99 ms | max ms | GETs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %.2f | %.2f | %.2f | %d | %.0f | %.0f | %d | %.2f | "
              "%.2f | %.2f | %.2f | %d |" % r)
    return rows


# -- main --------------------------------------------------------------------

def ints(s):
    return [int(x) for x in s.split(",") if x]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--leaderd")
    ap.add_argument("--parts", default="1,2,3,4")
    ap.add_argument("--kinds", default="leaderd,client-go")
    ap.add_argument("--sizes", default="10,50,100,200,400")
    ap.add_argument("--clientgo-max", type=int, default=400)
    ap.add_argument("--alone", type=int, default=100,
                    help="part 1: a row of the N/10 leaderd leaders of "
                    "this N alone, each on its Lease (the writes' floor); "
                    "0: none")
    ap.add_argument("--window", type=float, default=60)
    ap.add_argument("--settle", type=float, default=10)
    ap.add_argument("--steady", type=float, default=20,
                    help="seconds of steady Lease rate before the outage")
    ap.add_argument("--herd-leases", type=int, default=100)
    ap.add_argument("--outage", type=float, default=30)
    ap.add_argument("--streams", default="1,100,1000,10000")
    ap.add_argument("--push-trials", type=int, default=20)
    ap.add_argument("--streamread", default=bench.STREAMREAD,
                    help="part 3's stream reader (make "
                    "build/bench/streamread)")
    ap.add_argument("--elections", default="1,2,4,8,16")
    ap.add_argument("--elections-idle", type=float, default=30)
    ap.add_argument("--smoke", action="store_true",
                    help="seconds: parts 3 and 4 only, 100 streams, 1 and "
                    "2 elections, short windows")
    args = ap.parse_args()
    if args.smoke:
        args.parts, args.streams, args.push_trials = "3,4", "100", 3
        args.elections, args.elections_idle = "1,2", 1.0
    args.parts = ints(args.parts)
    args.kinds = args.kinds.split(",")
    args.sizes, args.streams = ints(args.sizes), ints(args.streams)
    args.elections = ints(args.elections)
    if args.leaderd:
        os.environ["LEADERD"] = os.path.abspath(args.leaderd)
    if 3 in args.parts:
        bench.need_streamread(args.streamread)
    # N streams: N descriptors in the reader, and in leaderd N beside
    # as many waiting reads, 256 connections and 32 spare, or it lowers
    # its cap (httpd_set_max_streams): raise the hard limit if allowed.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 2 * max(args.streams or [0]) + 1024
    if hard != resource.RLIM_INFINITY and hard < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            hard = want
        except (ValueError, OSError):
            print("open-file limit %d: leaderd takes fewer streams than "
                  "%d (needs %d)" % (hard, max(args.streams), want))
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print("leaderd %s; %s; %d CPUs, %.1f GB RAM; open files %d" % (
        os.environ.get("LEADERD"), time.strftime("%Y-%m-%d %H:%M UTC",
                                                 time.gmtime()),
        os.cpu_count(), os.sysconf("SC_PHYS_PAGES") *
        os.sysconf("SC_PAGE_SIZE") / 1e9, hard), flush=True)
    with tempfile.TemporaryDirectory(prefix="leaderd-scale-") as work:
        if 1 in args.parts or 2 in args.parts:
            kas = Kas(work)
            try:
                print("kube-apiserver %s (kasbox pid %d)" % (
                    kas.info.get("kubernetes_version"), kas.pid),
                    flush=True)
                time.sleep(args.settle)
                if 1 in args.parts:
                    sidecars(args, kas, work)
                if 2 in args.parts:
                    herd(args, kas, work)
            finally:
                kas.stop()
        if 3 in args.parts:
            fanout(args, work)
        if 4 in args.parts:
            bench.elections_figures(args, work, ks=args.elections,
                                    separate=False)


if __name__ == "__main__":
    main()
