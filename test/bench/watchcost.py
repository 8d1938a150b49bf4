#!/usr/bin/env python3
"""watchcost -- what the API server pays for leaderd's Lease watches: one
watch per Lease (what leaderd does: fieldSelector=metadata.name=NAME)
against one watch per instance on the namespace's Leases with a label
selector, on the e2e suite's kube-apiserver (kasbox).  Printed, never
asserted.

    python3 test/bench/watchcost.py [--sizes 1,8,32] [--instances 3] \\
        [--seconds 30] [--retry 2]

kasbox is build/e2e/bin/kasbox (make e2e-bins), or $E2E_BIN/kasbox.

For each number of Leases N and each mode (none: no watch, the writes
alone; per-lease: instances x N watches; selector: instances watches),
in a fresh namespace: N Leases, the watches opened as leaderd opens
them (HTTP/1.1, one connection each, bookmarks on), then every Lease
renewed once per --retry seconds (one PUT, as its leader would) for
--seconds.  Over that window: the kasbox process's CPU time (utime +
stime, /proc/PID/stat; kube-apiserver and its embedded etcd are one
process) and its VmRSS at the end; from its /metrics,
apiserver_longrunning_requests (WATCH, leases: one is the server's own)
and apiserver_watch_events_total (leases) per renew, the events it sent
to watchers; and the MODIFIED events the watches received per renew,
over all instances.  (apiserver_registered_watchers is gone from
kube-apiserver 1.36's /metrics.)
"""

import argparse
import http.client
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kit"))
import handover  # noqa: E402

LABEL = "leaderd.io/bench"


class Api:
    def __init__(self, url, ca, token):
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=ca)
        self.token = token

    def conn(self):
        return http.client.HTTPSConnection(self.host, self.port,
                                           context=self.ctx, timeout=30)

    def req(self, c, method, path, body=None):
        h = {"Authorization": "Bearer " + self.token,
             "Accept": "application/json"}
        if body is not None:
            body = json.dumps(body)
            h["Content-Type"] = "application/json"
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        if r.status >= 300:
            raise RuntimeError("%s %s: %d %s" % (method, path, r.status,
                                                 data[:200]))
        return json.loads(data) if data[:1] == b"{" else data.decode()


def leases_path(ns):
    return "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % ns


class Watch(threading.Thread):
    """One watch stream, counting the MODIFIED events it delivers."""

    def __init__(self, api, path):
        super().__init__(daemon=True)
        self.api, self.path = api, path
        self.modified = 0
        self.up = threading.Event()
        self.c = None

    def run(self):
        self.c = self.api.conn()
        self.c.request("GET", self.path, headers={
            "Authorization": "Bearer " + self.api.token,
            "Accept": "application/json"})
        r = self.c.getresponse()
        if r.status != 200:
            print("watch %s: %d" % (self.path, r.status))
            return
        self.up.set()
        try:
            while True:
                line = r.readline()
                if not line:
                    return
                if line.startswith(b'{"type":"MODIFIED"'):
                    self.modified += 1
        except (OSError, ValueError, http.client.HTTPException):
            return

    def close(self):
        try:
            self.c.sock.shutdown(2)
        except (OSError, AttributeError):
            pass


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        w = f.read().rsplit(")", 1)[1].split()
    return (int(w[11]) + int(w[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def lease_metrics(api):
    """apiserver_longrunning_requests (WATCH) and
    apiserver_watch_events_total for Leases, from /metrics."""
    c = api.conn()
    text = api.req(c, "GET", "/metrics")
    c.close()
    lr = sent = 0.0
    for line in text.splitlines():
        if 'resource="leases"' not in line or line.startswith("#"):
            continue
        if line.startswith("apiserver_longrunning_requests{") and \
                'verb="WATCH"' in line:
            lr += float(line.split()[-1])
        elif line.startswith("apiserver_watch_events_total{"):
            sent += float(line.split()[-1])
    return lr, sent


def lease_obj(name, rv=None):
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    o = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
         "metadata": {"name": name, "labels": {LABEL: "g"}},
         "spec": {"holderIdentity": "w-0", "leaseDurationSeconds": 15,
                  "acquireTime": now, "renewTime": now}}
    if rv is not None:
        o["metadata"]["resourceVersion"] = rv
    return o


def run(api, pid, n, mode, args, seq):
    ns = "wc-%d-%s-%d" % (n, mode, seq)
    c = api.conn()
    api.req(c, "POST", "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": ns}})
    names = ["lease-%d" % i for i in range(n)]
    rvs = {}
    for nm in names:
        rvs[nm] = api.req(c, "POST", leases_path(ns),
                          lease_obj(nm))["metadata"]["resourceVersion"]
    ws = []
    q = "?watch=1&allowWatchBookmarks=true&timeoutSeconds=3600"
    for _ in range(args.instances if mode != "none" else 0):
        if mode == "per-lease":
            for nm in names:
                ws.append(Watch(api, leases_path(ns) + q +
                                "&fieldSelector=metadata.name%3D" + nm +
                                "&resourceVersion=" + rvs[nm]))
        else:
            ws.append(Watch(api, leases_path(ns) + q + "&labelSelector=" +
                            urllib.parse.quote(LABEL + "=g") +
                            "&resourceVersion=" + max(rvs.values(),
                                                      key=int)))
    for w in ws:
        w.start()
    for w in ws:
        if not w.up.wait(30):
            raise RuntimeError("a watch did not open")
    time.sleep(3)
    lr, sent0 = lease_metrics(api)
    cpu0, t0 = cpu_s(pid), time.monotonic()
    renews = 0
    step = args.retry / n
    nxt = t0
    end = t0 + args.seconds
    i = 0
    while True:
        nxt += step
        if nxt > end:
            break
        nm = names[i % n]
        i += 1
        o = lease_obj(nm, rvs[nm])
        rvs[nm] = api.req(c, "PUT", leases_path(ns) + "/" + nm,
                          o)["metadata"]["resourceVersion"]
        renews += 1
        d = nxt - time.monotonic()
        if d > 0:
            time.sleep(d)
    time.sleep(max(0.0, end - time.monotonic()) + 1.0)
    cpu = cpu_s(pid) - cpu0
    el = time.monotonic() - t0
    rss = rss_mb(pid)
    sent = lease_metrics(api)[1] - sent0
    delivered = sum(w.modified for w in ws)
    for w in ws:
        w.close()
    api.req(c, "DELETE", "/api/v1/namespaces/" + ns)
    c.close()
    time.sleep(2)
    return {"n": n, "mode": mode, "watches": len(ws), "cpu_ms_per_s":
            1000.0 * cpu / el, "rss_mb": rss, "sent_per_renew":
            sent / renews if renews else 0.0,
            "longrunning": lr, "renews": renews,
            "events_per_renew": delivered / renews if renews else 0.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,8,32")
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--retry", type=float, default=2.0)
    ap.add_argument("--modes", default="none,per-lease,selector")
    ap.add_argument("--work", default="/tmp/watchcost")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    kas = handover.KasBackend(args.work)
    try:
        with open(os.path.join(args.work, "kasbox", "info.json")) as f:
            info = json.load(f)
        api = Api(info["url"], info["ca"], info["users"]["admin"]["token"])
        pid = kas.p.pid
        print("kube-apiserver %s (kasbox pid %d); %d instances, one renew "
              "per Lease every %gs, %gs per run" % (
                  info.get("kubernetes_version"), pid, args.instances,
                  args.retry, args.seconds))
        time.sleep(10)          # start-up work settles
        print("| Leases | mode | watches | longrunning WATCH | "
              "CPU ms/s | RSS MB | sent per renew | received per renew |")
        print("|---|---|---|---|---|---|---|---|")
        seq = 0
        for n in [int(x) for x in args.sizes.split(",")]:
            for mode in args.modes.split(","):
                seq += 1
                r = run(api, pid, n, mode, args, seq)
                print("| %d | %s | %d | %g | %.1f | %.0f | %.2f | %.2f |"
                      % (r["n"], r["mode"], r["watches"], r["longrunning"],
                         r["cpu_ms_per_s"], r["rss_mb"], r["sent_per_renew"],
                         r["events_per_renew"]), flush=True)
    finally:
        kas.stop()


if __name__ == "__main__":
    main()
