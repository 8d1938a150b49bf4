"""make e2e-ha: leaderd and client-go electors on an HA control plane
(test/e2e/hakit.py: three etcd members, two kube-apiservers), one fault
of the control plane at a time, judged by the API server's own history
of the Lease (test/kit/lease_history.py via e2ehist.Oracle).

    python3 ha.py [--smoke] [--only 1,3] [--json FILE]

Each scenario starts five electors on a Lease of its own: leaderd
pinned to apiserver A (c-a, started first, so it leads), to B (c-b) and
behind the round-robin balancer (c-lb); client-go v0.36 pinned to A
(go-a) and behind the balancer (go-lb); scenario 7, coordinated, the
three leaderd only.  Then the fault, a settling time, and the checks:

- S1 and S2 from the server history (lease_history.check: no term taken
  over a live one sooner than its holder's renew deadline, fencing
  tokens, renewTimes, every claim inside a term of its own and ended by
  its renew deadline) and no two participants' claims overlapping;
- L1: the longest time with no claim, within the scenario's bound;
- no thrashing: the transitions (terms after the first) within its
  bound.

One row per scenario: seconds with no leader (total, longest), the
transitions, the overlaps (0, or the run fails) and the scenario's own
figures.  Exit 1 if any scenario fails."""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

import e2elib as E
import e2ehist
import hakit
from e2elib import LD, RD, RP
from hakit import H

L1_BOUND = LD + 2.2 * RP + E.SLACK       # a takeover after a lost leader
ROLE_RULES = [
    {"apiGroups": ["coordination.k8s.io"],
     "resources": ["leases", "leasecandidates"],
     "verbs": ["get", "list", "watch", "create", "update", "patch",
               "delete"]},
    {"apiGroups": ["", "events.k8s.io"], "resources": ["events"],
     "verbs": ["create", "patch", "update"]}]


class _Cluster:
    def __init__(self, cp):
        self.admin = cp.admin
        self.namespace = "default"


class CoordGo(E.GoElector):
    def argv(self):
        return super().argv() + ["-coordinated", "-binary-version", "1.0.0"]


class Scenario:
    """One run: electors on a fresh Lease, the oracle, the figures."""

    def __init__(self, cp, num, title, coordinated=False):
        self.cp, self.num, self.title = cp, num, title
        self.lease = "ha-%d-%s" % (num, time.strftime("%H%M%S"))
        self.coordinated = coordinated
        self.parts = {}
        self.extra = {}
        self.l1_bound = L1_BOUND
        self.max_transitions = 2
        self.o = e2ehist.Oracle(_Cluster(cp), match=lambda n: n == self.lease)
        self.o.hist = hakit.History.from_kubeconfig(
            cp.admin.kubeconfig, "default",
            match=lambda n: n == self.lease, kubectl=E.KUBECTL)

    def elector(self, ident, way):
        user = "leaderd" if ident.startswith("c-") else "elector"
        kc = self.cp.kubeconfig(user, way)
        if ident.startswith("c-"):
            extra = ["--coordinated", "--binary-version", "1.0.0"] \
                if self.coordinated else []
            p = E.Leaderd(ident, kc, "default", self.lease, extra=extra)
        else:
            cls = CoordGo if self.coordinated else E.GoElector
            p = cls(ident, kc, "default", self.lease)
        p.start().wait_up()
        self.o.follow(p)
        self.parts[ident] = p
        return p

    def start(self):
        self.o.start()
        self.t_start = time.time()
        cp = self.cp
        self.elector("c-a", cp.front[0])
        E.wait_for(lambda: self.leader() is not None, 60, interval=0.1,
                   what="a first leader")
        self.elector("c-b", cp.front[1])
        self.elector("c-lb", cp.lb)
        # Coordinated, leaderd only: the bound on transitions is about
        # leaderd's handovers (client-go's coordinated elector never hands
        # over; lease_history.terms rebuilds its terms all the same).
        if not self.coordinated:
            self.elector("go-a", cp.front[0])
            self.elector("go-lb", cp.lb)
        time.sleep(2 * RP)
        return self

    def leader(self):
        for p in self.parts.values():
            if p.proc.alive() and p.is_leader():
                return p
        return None

    def fault_begins(self):
        self.t_fault = time.time()

    def finish(self, settle=2 * LD):
        time.sleep(settle)
        self.t_end = time.time()
        self.checked = True
        try:
            fig = self.o.check(rd=RD, rp=RP)
        except (AssertionError, TypeError) as e:
            self.dump()
            raise AssertionError("%s: %s" % (type(e).__name__, e))
        claims = [c for s in self.o.streams for c in s.claims()] + \
            self.o.go.claims()
        gaps = leaderless(claims, self.t_fault, self.t_end)
        ts = H.hist_terms(self.o.hist, self.lease)
        self.row = {
            "scenario": self.num, "title": self.title,
            "leaderless_s": round(sum(g for _, g in gaps), 2),
            "longest_gap_s": round(max([g for _, g in gaps] or [0]), 2),
            "transitions": max(0, len(ts) - 1),
            "overlaps": 0,
            "takeovers_of_live_terms": fig["takeovers"],
            "min_gap_s": fig["min_gap"] and round(fig["min_gap"], 2),
            "worst_end_s": fig["worst_end"] and round(fig["worst_end"], 3),
            "versions": fig["versions"], "claims": fig["claims"],
            "relists": self.o.hist.relists}
        named = sum(1 for v in H.LeaseHistory.versions(self.o.hist,
                                                       self.lease)
                    if v.acquire is None and v.holder)
        if named:
            self.row["controller_versions"] = named
        self.row.update(self.extra)
        # A restarted apiserver answers 403 for a moment after /readyz
        # says 200, until its RBAC informers have the Roles.
        n403 = sum(p.proc.text().count("403 Forbidden")
                   for p in self.parts.values())
        if n403:
            self.row["elector_403_lines"] = n403
        self.gaps = gaps
        bad = []
        if self.row["longest_gap_s"] > self.l1_bound:
            bad.append("L1: %.2fs with no leader (bound %.1fs)" % (
                self.row["longest_gap_s"], self.l1_bound))
        if self.row["transitions"] > self.max_transitions:
            bad.append("thrashing: %d transitions (bound %d)" % (
                self.row["transitions"], self.max_transitions))
        if not any(p.proc.alive() and p.is_leader()
                   for p in self.parts.values()):
            bad.append("no leader at the end")
        assert not bad, "; ".join(bad)
        return self.row

    def dump(self):
        """The Lease's versions as the oracle saw them, for a post-mortem."""
        path = os.path.join(E.WORK, "%s-versions.json" % self.lease)
        with open(path, "w") as f:
            for v in self.o.hist.versions(self.lease):
                f.write(json.dumps({k: getattr(v, k, None) for k in (
                    "kind", "rv", "holder", "acquire", "renew",
                    "transitions", "recv_wall")}) + "\n")
        self.extra["versions_file"] = path

    def stop(self):
        for p in self.parts.values():
            p.stop()
        if not getattr(self, "checked", False):
            try:
                self.o.stop()
            except AssertionError:
                pass


def leaderless(claims, t0, t1):
    """The spans in [t0, t1] no claim covers: [(start, seconds)]."""
    iv = sorted((max(c.start, t0), min(c.end or t1, t1)) for c in claims
                if (c.end or t1) > t0 and c.start < t1)
    gaps, cur = [], t0
    for a, b in iv:
        if a > cur:
            gaps.append((cur, a - cur))
        cur = max(cur, b)
    if cur < t1:
        gaps.append((cur, t1 - cur))
    return gaps


def first_claim_after(s, t):
    claims = [c for st in s.o.streams for c in st.claims()] + \
        s.o.go.claims()
    starts = [c.start for c in claims if c.start >= t]
    return min(starts) if starts else None


# -- the scenarios ---------------------------------------------------------

def s1_stop_apiserver(cp, s):
    """SIGSTOP the leader's apiserver for LD + 2 s, then SIGCONT."""
    a = cp.apiservers[0]
    assert s.leader() is s.parts["c-a"], "c-a (on A) should lead"
    cp.orc.kill(0)
    s.fault_begins()
    a.proc.p.send_signal(signal.SIGSTOP)
    time.sleep(LD + 2)
    a.proc.p.send_signal(signal.SIGCONT)
    cp.orc.restore(0)
    s.finish()
    t = first_claim_after(s, s.t_fault)
    s.row["takeover_s"] = t and round(t - s.t_fault, 2)


def s2_rolling_restart(cp, s):
    """Restart A then B (SIGTERM: --shutdown-delay-duration=2s,
    --shutdown-send-retry-after), each once the other is ready."""
    s.fault_begins()
    downs = []
    for i, a in enumerate(cp.apiservers):
        cp.orc.kill(i)
        downs.append(round(cp.stop_apiserver(a, graceful=True), 1))
        t0 = time.monotonic()
        cp.start_apiserver(a)
        downs.append(round(time.monotonic() - t0, 1))
        cp.orc.restore(i)
        time.sleep(LD)
    s.extra["shutdown_s,start_s"] = downs
    s.finish()


def s3_move_etcd_leader(cp, s):
    """Move the etcd leader every 2 s for a minute."""
    s.fault_begins()
    p = subprocess.run([cp.kasbox, "etcdctl", "-endpoints",
                        ",".join(m.client_url for m in cp.members),
                        "-every", "2s", "-for", "60s", "move-leader"],
                       capture_output=True, text=True, timeout=120)
    last = json.loads(p.stdout.strip().splitlines()[-1])
    s.extra["etcd_moves"] = last["moves"]
    s.extra["etcd_moves_failed"] = last["failed"]
    assert last["moves"] >= 20, "only %s etcd leader moves" % last
    s.finish()


def s4_stop_etcd_leader(cp, s):
    """SIGSTOP the etcd leader for 3 s: e3, moved there first, whose
    apiserver there is none, so the fault is the leader change alone."""
    m = cp.members[2]
    p = subprocess.run([cp.kasbox, "etcdctl", "-endpoints",
                        ",".join(x.client_url for x in cp.members),
                        "-to", m.id, "move-leader"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, "move-leader to e3: " + p.stderr[-500:]
    E.wait_for(lambda: cp.etcd_leader() is m, 20, interval=0.5,
               what="e3 to lead etcd")
    time.sleep(2 * RP)
    s.fault_begins()
    m.proc.p.send_signal(signal.SIGSTOP)
    time.sleep(3)
    m.proc.p.send_signal(signal.SIGCONT)
    s.extra["etcd_leader_after"] = cp.etcd_leader().name
    s.finish()


def s5_isolate_member(cp, s):
    """Cut e1 (A's member) off its peers for LD + 6 s: A answers from its
    cache while writes go through B."""
    m = cp.members[0]
    cp.orc.kill(0)
    s.fault_begins()
    cp.isolate(m)
    t_end = time.monotonic() + LD + 6
    stale = []
    while time.monotonic() < t_end:
        st, body = cp.admin_get(cp.apiservers[0], "/apis/coordination.k8s.io"
                                "/v1/namespaces/default/leases/%s"
                                "?resourceVersion=0" % s.lease)
        if st == 200:
            stale.append(time.time() - H.microtime(
                json.loads(body)["spec"]["renewTime"]))
        time.sleep(0.5)
    cp.isolate(None)
    cp.orc.restore(0)
    s.extra["A_cached_read_age_max_s"] = round(max(stale or [0]), 1)
    s.extra["A_cached_reads"] = len(stale)
    s.l1_bound = L1_BOUND
    s.finish()


def s6_compaction(cp, s):
    """--etcd-compaction-interval=5s (set before the scenario), then A
    killed and restarted: a watch resumed on its new cache from a version
    older than it, compacted in etcd, gets 410 Gone (probed as admin, the
    way leaderd's own watch resumes from its last version)."""
    rv0 = s.o.hist.versions(s.lease)[-1].rv
    time.sleep(12)              # two compactions under the watches
    cp.orc.kill(0)
    s.fault_begins()
    a = cp.apiservers[0]
    cp.stop_apiserver(a, graceful=False)
    cp.start_apiserver(a)
    cp.orc.restore(0)
    base = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    gone = {}
    for b in cp.apiservers:
        st, body = cp.admin_get(b, base + "?watch=1&timeoutSeconds=1&"
                                "resourceVersion=%s" % rv0, timeout=5)
        gone["watch_" + b.name] = st if st != 200 else \
            (410 if b'"code":410' in body else 200)
        st, _ = cp.admin_get(b, base + "?resourceVersion=%s&"
                             "resourceVersionMatch=Exact" % rv0)
        gone["list_" + b.name] = st
    s.extra["from_old_rv"] = gone
    s.finish(settle=3 * LD)
    assert 410 in gone.values(), "no 410 from a compacted version: %s" % gone


def cle_controller(cp):
    """The apiserver whose leader-election controller leads, by its
    metrics (leader_election_master_status)."""
    for a in cp.apiservers:
        st, body = cp.admin_get(a, "/metrics")
        for line in body.decode(errors="replace").splitlines():
            if line.startswith("leader_election_master_status") and \
                    "leader-election-controller" in line and \
                    line.rstrip().endswith(" 1"):
                return a
    return None


def s7_coordinated(cp, s):
    """Coordinated election: stop the apiserver whose election
    controller leads, kill the leader: the controller fails over (its own
    lease, 15 s) and then picks the next."""
    a = E.wait_for(lambda: cle_controller(cp), 60, interval=1,
                   what="the election controller's apiserver")
    s.extra["controller_on"] = a.name
    i = cp.index(a)
    cp.orc.kill(i)
    s.fault_begins()
    a.proc.p.send_signal(signal.SIGSTOP)
    lead = s.leader()
    s.extra["killed"] = lead and lead.ident
    if lead:
        lead.proc.kill9()
    t0 = time.time()
    try:
        E.wait_for(lambda: s.leader() is not None, 60, interval=0.1,
                   what="a new leader chosen by the other controller")
        s.extra["new_leader_s"] = round(time.time() - t0, 2)
    finally:
        a.proc.p.send_signal(signal.SIGCONT)
        cp.orc.restore(i)
    # The controller's lease (15 s) and one of ours, then its choice.
    s.l1_bound = 15 + LD + 2.2 * RP + E.SLACK
    s.finish()


def s8_both_down(cp, s):
    """Both apiservers killed for 30 s, then back (the ways in open once
    both are ready): nobody claims past its renew deadline, and the
    lease is taken again within about one retry period, by the five
    electors and by a lone leaderd on a Lease of its own
    (lone_back_after_s)."""
    s.o.hist.quiet = True
    # A lone leaderd on a Lease of its own, through the balancer: nobody
    # else retries for it, so its own cadence after failures shows.
    solo = E.Leaderd("c-solo", cp.kubeconfig("leaderd", cp.lb), "default",
                     s.lease + "-solo")
    solo.start().wait_up()
    solo_st = H.LeaderStream("c-solo", solo.port).start()
    E.wait_for(solo.is_leader, 30, interval=0.1, what="c-solo leading")
    try:
        _s8_outage(cp, s, solo_st)
    finally:
        solo_st.stop()
        solo.stop()


def _s8_outage(cp, s, solo_st):
    ways = [(b, i) for b in [cp.lb, cp.orc] for i in range(2)] + \
        [(f, 0) for f in cp.front]
    for b, i in ways:
        b.kill(i)
    s.fault_begins()
    for a in cp.apiservers:
        cp.stop_apiserver(a, graceful=False)
    time.sleep(30)
    for a in cp.apiservers:
        cp.start_apiserver(a, wait=False)
    for a in cp.apiservers:
        cp.wait_apiserver(a)
    for i in range(2):
        cp.orc.restore(i)
    time.sleep(2)               # the oracle's watch again, before writes
    s.o.hist.quiet = False
    t_rec = time.time()
    for b, i in ways:
        b.restore(i)
    s.extra["down_s"] = round(t_rec - s.t_fault, 1)
    E.wait_for(lambda: s.leader() is not None, 30, interval=0.05,
               what="a leader after recovery")
    # The outage itself is leaderless by design; L1 is the recovery.
    s.l1_bound = float("inf")
    s.finish()
    t = first_claim_after(s, t_rec)
    s.extra["back_after_s"] = t and round(t - t_rec, 2)
    s.row["back_after_s"] = s.extra["back_after_s"]
    assert t is not None and t - t_rec <= 1.2 * RP + 1.0, \
        "L1: leadership back %.2fs after recovery (bound %.1fs)" % (
            t - t_rec if t else -1, 1.2 * RP + 1.0)
    E.wait_for(lambda: any(c.start >= t_rec for c in solo_st.claims()), 30,
               interval=0.05, what="c-solo leading after recovery")
    t = min(c.start for c in solo_st.claims() if c.start >= t_rec)
    s.row["lone_back_after_s"] = round(t - t_rec, 2)
    assert t - t_rec <= 1.2 * RP + 1.0, \
        "L1: a lone leaderd back %.2fs after recovery (bound %.1fs)" % (
            t - t_rec, 1.2 * RP + 1.0)


SCENARIOS = [
    (1, "SIGSTOP the leader's apiserver LD+2 s", s1_stop_apiserver, {}),
    (2, "rolling restart of both apiservers", s2_rolling_restart, {}),
    (3, "etcd leader moved every 2 s for 60 s", s3_move_etcd_leader, {}),
    (4, "SIGSTOP the etcd leader (e3) 3 s", s4_stop_etcd_leader, {}),
    (5, "etcd member of A isolated LD+6 s", s5_isolate_member, {}),
    (6, "compaction every 5 s, A restarted", s6_compaction,
     {"flags": ["--etcd-compaction-interval=5s"]}),
    (7, "coordinated: controller's apiserver stopped", s7_coordinated,
     {"coordinated": True}),
    (8, "both apiservers down 30 s", s8_both_down, {}),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true",
                    help="scenario 1 only (make test)")
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    only = {int(x) for x in args.only.split(",") if x} or \
        ({1} if args.smoke else {n for n, *_ in SCENARIOS})
    t0 = time.monotonic()
    cp = hakit.ControlPlane(E.WORK, E.KASBOX)
    rows, failed = [], []
    try:
        cp.start()
        print("e2e-ha: 3 etcd members, 2 apiservers ready in %.1fs" %
              cp.startup, flush=True)
        cp.admin.apply({"apiVersion": "rbac.authorization.k8s.io/v1",
                        "kind": "Role", "metadata": {"name": "ha-electors",
                                                     "namespace": "default"},
                        "rules": ROLE_RULES})
        cp.admin.apply({"apiVersion": "rbac.authorization.k8s.io/v1",
                        "kind": "RoleBinding",
                        "metadata": {"name": "ha-electors",
                                     "namespace": "default"},
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                                    "kind": "Role", "name": "ha-electors"},
                        "subjects": [{"kind": "User", "name": u,
                                      "apiGroup": "rbac.authorization.k8s.io"}
                                     for u in ("leaderd", "elector")]})
        flags = []
        for num, title, fn, opt in SCENARIOS:
            if num not in only:
                continue
            if opt.get("flags", []) != flags:
                flags = opt.get("flags", [])
                cp.restart_all(flags)
            t1 = time.monotonic()
            s = Scenario(cp, num, title, opt.get("coordinated", False))
            try:
                s.start()
                fn(cp, s)
                row = s.row
                row["result"] = "pass"
            except AssertionError as e:
                row = getattr(s, "row", {"scenario": num, "title": title})
                row["result"] = "FAIL: %s" % str(e)[:600]
                row["oracle_errors"] = s.o.hist.errors[-4:]
                failed.append(num)
            finally:
                s.stop()
            row["wall_s"] = round(time.monotonic() - t1, 1)
            rows.append(row)
            print("e2e-ha: %s" % json.dumps(row), flush=True)
    finally:
        cp.close()
    print()
    print("| # | scenario | no leader (s), longest | transitions | "
          "overlaps | figures | result |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        figs = ", ".join("%s %s" % (k, v) for k, v in r.items() if k not in (
            "scenario", "title", "leaderless_s", "longest_gap_s",
            "transitions", "overlaps", "result"))
        print("| %s | %s | %s, %s | %s | %s | %s | %s |" % (
            r["scenario"], r["title"], r.get("leaderless_s", "-"),
            r.get("longest_gap_s", "-"), r.get("transitions", "-"),
            r.get("overlaps", "-"), figs, r["result"]))
    print("\ne2e-ha: %d scenarios, %d failed, %.0fs in all" % (
        len(rows), len(failed), time.monotonic() - t0))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
