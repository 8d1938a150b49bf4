"""The e2e tests' oracle: the API server's history of the Leases
(test/kit/lease_history.py) against what every participant said.

    o = Oracle(cluster, match=lambda n: n == el.lease).start()
    p.start().wait_up(); o.follow(p)    # after each (re)start
    ...
    fig = o.check(rd=RD, horizon={"go-1": RD + RP})

leaderd participants are followed through their event stream
(/leader/watch, or path=), which says when each claim began and ended on
leaderd's own clock.  The client-go elector has no stream; its /leader
is read every GO_SAMPLE_EVERY, and a run of "true" answers is a claim
from the end of its first request to the start of its last, on the wall
clock.  Checked: lease_history.check (server-side S1, the fencing token,
renewTimes, every claim inside a term of its own), and no two claims of
different participants overlap."""

import os
import sys
import threading
import time

import e2elib as E

sys.path.insert(0, os.path.join(E.REPO, "test", "kit"))
import lease_history as H  # noqa: E402

GO_SAMPLE_EVERY = 0.05


class GoClaims(threading.Thread):
    """Reads the client-go electors' /leader; claims as lease_history
    Claims (start and end on the wall clock)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.parts = []
        self.samples = []       # (w0, w1, ident, gen, is_leader, lease)
        self.stop_ev = threading.Event()

    def run(self):
        while not self.stop_ev.is_set():
            for p, gen in list(self.parts):
                if p.generation != gen or not p.proc.alive():
                    continue
                w0 = time.time()
                st, b = E.http_get_json(p.port, "/leader", timeout=0.5)
                w1 = time.time()
                if st == 200 and b is not None:
                    self.samples.append((w0, w1, p.ident, gen,
                                         b.get("is_leader") is True,
                                         p.lease, b.get("name") or ""))
            self.stop_ev.wait(GO_SAMPLE_EVERY)

    def claims(self):
        out = []
        for a, b, s in true_runs(self.samples):
            c = H.Claim(s[5], s[2], {}, None, "sampled")
            c.start, c.end = a, b
            out.append(c)
        return out

    def streams(self):
        """Per process, its samples as a stream of holder changes (for
        lease_history.check_follow): an event when the name changed,
        stamped at the end of the request that saw it."""
        by, out = {}, []
        for s in self.samples:
            by.setdefault((s[2], s[3]), []).append(s)
        for (ident, _), ss in by.items():
            st = H.LeaderStream(ident, 0)
            last = None
            for s in ss:
                if s[6] != last:
                    last = s[6]
                    st.events.append((0, s[1], {
                        "changed_at": _microtime(s[1]), "name": s[6],
                        "election": s[5], "is_leader": s[4]}))
            st.eof_wall = ss[-1][1]
            out.append(st)
        return out


def _microtime(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(t))) + \
        ".%06dZ" % int((t % 1) * 1e6)


class Oracle:
    def __init__(self, cluster, match, path="/leader/watch"):
        self.hist = H.LeaseHistory.from_kubeconfig(
            cluster.admin.kubeconfig, cluster.namespace, match=match,
            kubectl=E.KUBECTL)
        self.path = path
        self.streams = []
        self.go = GoClaims()

    def start(self):
        self.hist.start()
        self.go.start()
        return self

    def follow(self, p):
        """Follow a participant just started (after wait_up)."""
        if isinstance(p, E.GoElector):
            self.go.parts.append((p, p.generation))
        else:
            ident = getattr(p, "ident", None) or p.identity
            self.streams.append(H.LeaderStream(ident, p.port,
                                               self.path).start())
        return p

    def stop(self):
        """Stop following (again: nothing more)."""
        if self.go.stop_ev.is_set():
            return
        for s in self.streams:
            s.stop()
        self.go.stop_ev.set()
        self.go.join(timeout=5)
        self.hist.stop()        # after the last versions reached it

    def check(self, rd, rp, slack=0.25, follow=None):
        """lease_history.check (client-go holders: horizon rd + rp, see
        lease_history), then no two participants' claims overlap
        (streams and samples together), and, with follow (seconds),
        every participant names the server's holder within follow of a
        change (lease_history.check_follow); the figures."""
        self.stop()
        try:
            return self._check(rd, rp, slack, follow)
        except AssertionError as e:
            path = H.dump(self.hist, self.streams + self.go.streams(),
                          os.path.join(E.WORK, "history-%d.jsonl"
                                       % time.time_ns()))
            raise AssertionError("%s\n(versions and events: %s)" % (e, path))

    def _check(self, rd, rp, slack, follow):
        gos = {p.ident for p, _ in self.go.parts}
        horizon = {g: rd + rp for g in gos}
        fig = H.check(self.hist, self.streams, rd, horizon=horizon,
                      slack=slack)
        go = self.go.claims()
        n, _ = H.check_streams(self.hist, [_Fixed(go)], rd + rp, slack,
                               tokens=False)
        claims = [c for s in self.streams for c in s.claims()] + go
        fig["claims"] += n
        fig["abutting"] = H.check_no_overlap(claims)
        if follow is not None:
            fig["follow"] = H.check_follow(
                self.hist, self.streams + self.go.streams(), follow)
        return fig


class _Fixed:
    def __init__(self, claims):
        self._c = claims

    def claims(self):
        return self._c


def true_runs(samples):
    """Per (ident, generation) of samples (t0, t1, ident, generation,
    is_leader, ...), each run of consecutive true ones as (start, end,
    its first sample): the interval during which the claim certainly
    held, from the end of the first true sample to the start of the
    last (a single sample: a point inside it)."""
    by = {}
    for s in sorted(samples):
        by.setdefault((s[2], s[3]), []).append(s)
    out = []
    for ss in by.values():
        run = []
        for s in ss + [None]:
            if s is not None and s[4]:
                run.append(s)
                continue
            if run:
                a, b = run[0][1], run[-1][0]
                if b < a:
                    a = b = (run[0][0] + run[0][1]) / 2
                out.append((a, b, run[0]))
            run = []
    return out
