"""A shard group on a real kube-apiserver: 16 shards over 3 leaderd,
bound only to deploy/shards' Role; a rolling restart of all three (a new
member started, balance, then an old one stopped by SIGTERM, balance,
three times over).  The API server's history of the group's Leases
(shards and member Leases) and every member's /leaders/watch stream (one
event per shard election on every change) pass e2ehist's checks:
server-side S1, the fencing token, unique renewTimes, every claim inside
a term of its own, no shard claimed by two members at once.  Balance
(every shard owned once, each member 16/M rounded down or up) is reached
after each step, the Leases carry the group's label and name the owners,
and each departed member's Lease is deleted."""

import json
import os
import subprocess
import sys
import time
import uuid

import e2elib as E
from e2elib import LD, RD, RP, REQ_TIMEOUT
from e2ehist import H, Oracle

sys.path.insert(0, os.path.join(E.REPO, "test", "kit"))
from shardkit import quota_ok, views_of  # noqa: E402

N = 16
BALANCE = 3 * LD + 10 * RP + 5


class Member:
    """One leaderd in the group, with the interface ShardChecker and
    shardkit.shards use (name, proc, alive, request)."""

    def __init__(self, ident, cfg, kubeconfig):
        self.name = self.identity = ident
        self.port = E.free_port()
        self.proc = E.Proc("shard-" + ident, [
            E.LEADERD, "-f", cfg, "--kubeconfig", kubeconfig, "--id", ident,
            "--http", "127.0.0.1:%d" % self.port])

    def alive(self):
        return self.proc.alive()

    def request(self, path, timeout=0.5):
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", self.port,
                                       timeout=timeout)
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            c.close()


def shards_role():
    p = subprocess.run([E.KUBECTL, "kustomize",
                        os.path.join(E.REPO, "deploy", "shards")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    import yaml
    roles = [d for d in yaml.safe_load_all(p.stdout)
             if d and d.get("kind") == "Role"]
    assert len(roles) == 1
    return roles[0]["rules"]


def group_leases(cluster, group):
    out = cluster.admin.json("get", "leases", "-l",
                             "leaderd.io/shard-group=" + group)
    return {o["metadata"]["name"]: o for o in out["items"]}


def test_rolling_restart_16_shards_3_members(cluster):
    group = "e2e-sh-" + uuid.uuid4().hex[:5]
    kc, subject = cluster.new_user("shards")
    cluster.bind(group, shards_role(), subject)
    E.wait_for(lambda: cluster.can_i(kc, "get", "leases", group), 15,
               interval=0.5, what="RBAC binding")
    cfg = os.path.join(E.WORK, "shards-%s.yaml" % group)
    with open(cfg, "w") as f:
        f.write("lock: {namespace: %s}\nlease_duration: %ds\n"
                "renew_deadline: %ds\nretry_period: %ds\n"
                "kubernetes: {request_timeout: %ds}\n"
                "shards: {group: %s, count: %d, force: true}\n"
                % (cluster.namespace, LD, RD, RP, REQ_TIMEOUT, group, N))
    seq = iter(range(100))
    live = []
    oracle = Oracle(cluster, match=lambda n: n.startswith(group + "-"),
                    path="/leaders/watch").start()

    def start():
        m = Member("%s-m%d" % (group, next(seq)), cfg, kc)
        live.append(m)
        E.wait_for(lambda: (_up(m) or (0,))[0] == 200, 15,
                   what="%s to answer" % m.name)
        oracle.follow(m)
        return m

    def balanced():
        v = views_of(live)
        return quota_ok(v, N) and v

    made = []
    try:
        for _ in range(3):
            made.append(start())
        t0 = time.monotonic()
        v = E.wait_for(balanced, BALANCE, interval=0.1,
                       what="initial balance")
        print("initial balance after %.1fs" % (time.monotonic() - t0))
        for step in range(3):
            old = live[0]
            made.append(start())
            t0 = time.monotonic()
            E.wait_for(balanced, BALANCE, interval=0.1,
                       what="balance with %s joined" % live[-1].name)
            t1 = time.monotonic()
            rc, _ = old.proc.term(timeout=15)
            live.remove(old)
            v = E.wait_for(balanced, BALANCE, interval=0.1,
                           what="balance with %s gone" % old.name)
            print("step %d: join balanced in %.1fs, SIGTERM in %.1fs" % (
                step, t1 - t0, time.monotonic() - t1))
            assert rc == 0, old.proc.text()[-2000:]
        # The Leases agree with /shards and carry the group's label; the
        # members' Leases are those of the live members only.
        leases = group_leases(cluster, group)
        for m in live:
            for s in v[m.name]["owned"]:
                spec = leases["%s-%d" % (group, s)]["spec"]
                assert spec["holderIdentity"] == m.identity
        members = sorted(n for n in leases if "-member-" in n)
        assert members == sorted("%s-member-%s" % (group, m.identity)
                                 for m in live), members
    finally:
        oracle.stop()
        for m in made:
            m.proc.stop()
    fig = oracle.check(RD, RP)
    print(H.summary(fig))
    assert fig["leases"] >= N, fig


def _up(m):
    try:
        return m.request("/healthz")
    except OSError:
        return None
