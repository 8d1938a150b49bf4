"""A mixed fleet (issue 27 item 6): a leader whose successful answers
arrive late, then none at all, with the other kind following; client-go's
own defaults (lease_duration 15s, renew_deadline 10s, retry_period 2s).

The leader talks to the kube-apiserver through test/kit/proxy.py, which
holds every byte from the server L seconds before passing it on (TLS end
to end), so requests land at once and their answers come L late; once a
late renew has been answered, the proxy blackholes it.  The follower
talks to the server directly and takes the lease at its own
observation + lease_duration.

- client-go leader, L = 4.5 s: client-go counts its leadership from the
  answer of its last good renew (the next round starts retry_period
  later and gives up after renew_deadline), so it leads until
  L + retry_period + renew_deadline after the renew reached the server,
  while the follower takes over lease_duration after seeing it: two
  leaders for about L - (lease_duration - renew_deadline - retry_period)
  = L - 3 s.  The test asserts that overlap happens (as F19's "beyond"
  does): it is client-go's, and it is the bound a mixed fleet lives with.
- leaderd leader, L = 5.5 s (request_timeout 6 s): leaderd counts from
  the send, so its claim ends renew_deadline after the last good renew's
  send whatever L is; the client-go follower takes over at least
  lease_duration - renew_deadline = 5 s later.  The server's history and
  leaderd's stream pass e2ehist's checks; no overlap.
"""

import json
import os
import threading
import time

import e2elib as E
from e2ehist import H, Oracle
from proxy import ProxyHub

MLD, MRD, MRP = 15, 10, 2
TIMING = ["--lease-duration", "%ds" % MLD, "--renew-deadline", "%ds" % MRD,
          "--retry-period", "%ds" % MRP, "--request-timeout", "6s"]


class DefaultGo(E.GoElector):
    """The client-go elector at client-go's default timings."""

    def argv(self):
        a = super().argv()
        for flag, v in (("-lease-duration", MLD), ("-renew-deadline", MRD),
                        ("-retry-period", MRP)):
            a[a.index(flag) + 1] = "%ds" % v
        return a


def _proxied(cluster, el, px, name):
    """el's user's kubeconfig, its server the proxy px."""
    with open(el.kubeconfig) as f:
        kc = json.load(f)
    u = kc["users"][0]
    return E.write_kubeconfig(os.path.join(E.WORK, "kc-px-%s-%d" % (
        name, time.time_ns())), px.url, u["name"], ca_pem=cluster.ca_pem,
        token=u["user"]["token"], namespace=el.namespace)


def _late_renew(oracle, lease, holder, since_wall, lat):
    """The first renew by holder that reached the server after since_wall
    and whose answer comes lat late."""
    for v in oracle.hist.versions(lease):
        if v.holder != holder or v.recv_wall <= since_wall + 0.1 or \
                v.renew is None:
            continue
        # Sent after the switch (a leader of either kind renews by a
        # PUT alone: client-go's fast path skips the GET), so its answer
        # waits lat.
        return v
    return None


def _claims(oracle, ident):
    cs = [c for s in oracle.streams if s.ident == ident for c in s.claims()]
    return cs + [c for c in oracle.go.claims() if c.ident == ident]


def _run(cluster, el, leader_kind, lat):
    hub = ProxyHub()
    px = hub.proxy(int(cluster.server.rsplit(":", 1)[1]), "leader")
    oracle = Oracle(cluster, match=lambda n: n == el.lease).start()
    kc = _proxied(cluster, el, px, leader_kind)
    if leader_kind == "go":
        ldr = DefaultGo("go-late", kc, el.namespace, el.lease)
        fol = el.leaderd("c-fol", extra=TIMING)
    else:
        ldr = E.Leaderd("c-late", kc, el.namespace, el.lease, extra=TIMING)
        fol = DefaultGo("go-fol", el.kubeconfig, el.namespace, el.lease)
    try:
        oracle.follow(ldr.start().wait_up())
        E.wait_for(ldr.is_leader, 2 * MRP + 10, what="the leader to lead")
        oracle.follow(fol.start().wait_up())
        E.wait_for(lambda: (fol.leader() or {}).get("name") == ldr.ident,
                   2.2 * MRP + 5, what="the follower to follow")
        t_lat = time.time()
        px.set("latency", down_ms=lat * 1000)
        v = E.wait_for(lambda: _late_renew(oracle, el.lease, ldr.ident,
                                           t_lat, lat),
                       3 * lat + 2 * MRP + 5, interval=0.05,
                       what="a renew answered %.1fs late" % lat)
        # Its answer reaches the leader lat after the write landed.
        time.sleep(max(0.0, v.recv_wall + lat + 0.3 - time.time()))
        assert ldr.is_leader(), "the leader lost the lease to latency alone"
        px.set("blackhole")
        t_cut = time.time()
        E.wait_for(fol.is_leader, MLD + 2.2 * MRP + 5, interval=0.05,
                   what="the follower to take over")
        time.sleep(1.0)
    finally:
        oracle.stop()
        for p in (ldr, fol):
            p.stop()
        hub.close()
    old = max(_claims(oracle, ldr.ident), key=lambda c: c.end)
    new = min((c for c in _claims(oracle, fol.ident) if c.start > t_lat),
              key=lambda c: c.start)
    return oracle, v, old, new, t_cut


def _both(election, cluster):
    """Both runs at once, on two Leases (each takes about 35 s)."""
    out, errs = {}, []

    def go(kind, lat, prefix):
        try:
            out[kind] = (lat,) + _run(cluster, election(prefix=prefix),
                                      kind, lat)
        except BaseException as e:      # re-raised in the test's thread
            errs.append(e)

    t = threading.Thread(target=go, args=("c", 5.5, "mixc"))
    t.start()
    go("go", 4.5, "mixgo")
    t.join()
    if errs:
        raise errs[0]
    return out


def test_mixed_fleet_with_late_answers(election, cluster):
    out = _both(election, cluster)
    # client-go leader: overlaps.  The server's side still holds (the
    # taker waited lease_duration from what it saw), and leaderd's own
    # claims lie in its terms.
    lat, oracle, v, old, new, t_cut = out["go"]
    gap_go = new.start - old.end
    fig = H.check(oracle.hist, oracle.streams, MRD)
    print(H.summary(fig))
    print("client-go leader, answers %.1fs late: it led until %.2fs after "
          "its last renew reached the server; leaderd took over %.2fs "
          "after it: two leaders for %.2fs (L - (LD - RD - RP) = %.1fs)"
          % (lat, old.end - v.recv_wall, new.start - v.recv_wall, -gap_go,
             lat - (MLD - MRD - MRP)))
    # leaderd leader: does not.
    lat_c, oracle, v, old, new, t_cut = out["c"]
    gap_c = new.start - old.end
    fig = oracle.check(MRD, MRP)
    print(H.summary(fig))
    print("leaderd leader, answers %.1fs late: it led until %.2fs after "
          "its last renew reached the server; client-go took over %.2fs "
          "after it: %.2fs apart"
          % (lat_c, old.end - v.recv_wall, new.start - v.recv_wall, gap_c))
    assert gap_go < 0, "no overlap: client-go stopped %.2fs before the " \
        "takeover" % gap_go
    assert abs(-gap_go - (lat - (MLD - MRD - MRP))) <= 1.5, gap_go
    assert gap_c >= MLD - MRD - 1.0, gap_c
