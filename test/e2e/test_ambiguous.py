"""Ambiguous writes on a real kube-apiserver: the leader's renews reach
the server and are applied, but their answers are dropped and the
connection closed (test/kit/proxy.py's drop_after_forward, TLS end to
end), three times.  leaderd cannot tell from the answer whether each
renew landed; it learns it from the Lease, by the renewTime it sent.

Asserted with the server's history (e2ehist): each dropped renew is a
committed version; the leader keeps its term (one term, one claim on its
stream, no takeover by the follower); renewTimes are unique, the claim's
renew_time is a committed version's; S1 and the rest of the checks."""

import time

import e2elib as E
from e2elib import LD, RD, RP
from e2ehist import H, Oracle
from proxy import ProxyHub
from test_mixed_latency import _proxied

DROPS = 3


def test_dropped_renew_answers_keep_the_term(election, cluster):
    el = election(prefix="amb")
    hub = ProxyHub()
    px = hub.proxy(int(cluster.server.rsplit(":", 1)[1]), "leader")
    oracle = Oracle(cluster, match=lambda n: n == el.lease).start()
    a = E.Leaderd("c-amb-a", _proxied(cluster, el, px, "amb"), el.namespace,
                  el.lease)
    b = el.leaderd("c-amb-b")
    try:
        oracle.follow(a.start().wait_up())
        E.wait_for(a.is_leader, 2.2 * RP + 10, what="a to lead")
        oracle.follow(b.start().wait_up())
        E.wait_for(lambda: (b.leader() or {}).get("name") == a.ident,
                   2.2 * RP + 5, what="b to follow a")
        time.sleep(3 * RP)
        # A renew is the largest request a leader sends (a GET or a
        # watch is a few hundred bytes smaller).
        sizes = [e[3] for e in px.events_of("answer")][-3:]
        assert sizes, px.events_of("answer")
        px.set("drop_after_forward", min_req_bytes=min(sizes) - 60,
               count=DROPS)
        t0 = time.time()
        E.wait_for(lambda: len(px.events_of("drop_answer")) >= DROPS,
                   DROPS * (RP + 2 * E.REQ_TIMEOUT) + 10, interval=0.05,
                   what="%d renew answers dropped" % DROPS)
        time.sleep(LD)
        assert a.is_leader() and not b.is_leader()
    finally:
        oracle.stop()
        a.stop()
        b.stop()
        hub.close()
    fig = oracle.check(RD, RP)
    print(H.summary(fig))
    ts = H.terms(oracle.hist.versions(el.lease))
    renews = [v for v in ts[-1].versions if v.recv_wall > t0]
    print("%d answers dropped; the term went on with %d renews since, "
          "%d claim(s) on a's stream" % (
              len(px.events_of("drop_answer")), len(renews),
              len([c for s in oracle.streams if s.ident == a.ident
                   for c in s.claims()])))
    assert len(ts) == 1 and ts[0].holder == a.ident, ts
    # Each dropped answer was a committed renew: a version of a's arrived
    # at the watch within a second before the proxy dropped its answer.
    for t_drop in [e[0] for e in px.events_of("drop_answer")]:
        assert [v for v in ts[0].versions
                if t_drop - 1.0 <= v.recv_mono <= t_drop + 0.5], \
            "no committed renew near the dropped answer at %.3f" % t_drop
    assert fig["claims"] == 1, fig
    assert len(renews) >= LD / RP - 2, renews
