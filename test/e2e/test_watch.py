"""leaderd's watch on the Lease against a real kube-apiserver (issue 8).

Two leaderd instances (watch on, the default) and one client-go elector
on one Lease, with a retry period long enough (4 s) that a handover seen
through the watch (milliseconds) cannot be mistaken for one seen by a
poll (4-8.8 s):

- SIGTERM of the leaderd leader: the other leaderd leads within
  WATCH_BOUND, ahead of the polling client-go elector, three times;
- SIGTERM of the client-go leader: a watching leaderd leads within
  WATCH_BOUND (client-go releases; leaderd sees it through the watch);
- the API server's history of the Lease and every participant's claims
  (leaderd's event streams, the client-go elector's /leader) pass
  e2ehist's checks: server-side S1, the fencing token, unique
  renewTimes, every claim inside a term of its own, none overlapping.

How many requests a watching follower makes is not measured here: the
apiserver's metrics do not tell users apart and its own leases share
them.  test/integration/test_watch.py counts them against fakeapi.

The Role in deploy/ must grant watch on the Lease by name: a watch with
fieldSelector=metadata.name=<lease> is allowed and one without it is
forbidden (checked with the least-privilege user, no leaderd needed).
"""

import base64
import http.client
import json
import ssl
import time
import urllib.parse

import e2elib as E
from e2ehist import H, Oracle

# Timings of every participant here (client-go: LD > RD > 1.2 x RP).
WLD, WRD, WRP = 10, 7, 4
TIMING = ["--lease-duration", "%ds" % WLD, "--renew-deadline", "%ds" % WRD,
          "--retry-period", "%ds" % WRP]
WATCH_BOUND = 1.0       # release -> a watching leaderd leads (/leader)
POLL_BOUND = 2.2 * WRP + E.SLACK


class SlowGoElector(E.GoElector):
    """The client-go elector at this file's timings."""

    def argv(self):
        a = super().argv()
        for flag, v in (("-lease-duration", WLD), ("-renew-deadline", WRD),
                        ("-retry-period", WRP)):
            a[a.index(flag) + 1] = "%ds" % v
        return a


def user_api(kubeconfig):
    """(host, port, ssl context, token) of a kubeconfig written by
    e2elib.write_kubeconfig (JSON)."""
    with open(kubeconfig) as f:
        kc = json.load(f)
    cl = kc["clusters"][0]["cluster"]
    u = urllib.parse.urlsplit(cl["server"])
    if "certificate-authority-data" in cl:
        pem = base64.b64decode(cl["certificate-authority-data"]).decode()
        ctx = ssl.create_default_context(cadata=pem)
    else:
        ctx = ssl.create_default_context(cafile=cl["certificate-authority"])
    return u.hostname, u.port or 443, ctx, kc["users"][0]["user"]["token"]


def raw_watch(kubeconfig, namespace, query, timeout=10.0):
    """One watch request; (status, content type, body or the events as a
    list of dicts read until the stream ends)."""
    host, port, ctx, token = user_api(kubeconfig)
    c = http.client.HTTPSConnection(host, port, context=ctx, timeout=timeout)
    try:
        c.request("GET", "/apis/coordination.k8s.io/v1/namespaces/%s/leases?%s"
                  % (namespace, query),
                  headers={"Authorization": "Bearer " + token,
                           "Accept": "application/json"})
        r = c.getresponse()
        body = r.read()
        ctype = r.getheader("Content-Type")
        if r.status != 200:
            return r.status, ctype, json.loads(body)
        return r.status, ctype, [json.loads(ln) for ln in body.splitlines()
                                 if ln.strip()]
    finally:
        c.close()


def test_deploy_role_grants_watch_by_name(cluster, election, deploy_role):
    """deploy/'s Role lists watch with the lock's resourceNames; with it a
    watch selecting the Lease by name is allowed (and sees it), a watch
    of every Lease in the namespace is not."""
    lease_rules = [r for r in deploy_role if "leases" in r.get("resources", [])
                   and r.get("resourceNames")]
    assert lease_rules and all("watch" in r["verbs"] for r in lease_rules), \
        deploy_role
    el = election(prefix="wrole")
    assert cluster.can_i(el.kubeconfig, "watch", "leases", el.lease)
    # Make the Lease exist, then watch it as the Role's user.
    ld = el.leaderd("c-role", extra=TIMING).start().wait_up()
    E.wait_for(ld.is_leader, POLL_BOUND + 5, what="c-role to lead")
    rv = el.get_lease()["metadata"]["resourceVersion"]
    st, ctype, evs = raw_watch(
        el.kubeconfig, el.namespace,
        "watch=1&fieldSelector=metadata.name%%3D%s&resourceVersion=0&"
        "allowWatchBookmarks=true&timeoutSeconds=2" % el.lease)
    assert st == 200 and ctype == "application/json", (st, evs)
    assert evs and evs[0]["type"] == "ADDED", evs
    obj = evs[0]["object"]
    assert obj["metadata"]["name"] == el.lease
    assert int(obj["metadata"]["resourceVersion"]) >= int(rv)
    assert obj["spec"]["holderIdentity"] == "c-role"
    st, _, body = raw_watch(el.kubeconfig, el.namespace,
                            "watch=1&timeoutSeconds=2")
    assert st == 403 and body["reason"] == "Forbidden", body
    assert 'cannot watch resource "leases"' in body["message"], body


def test_watch_handover_with_clientgo_on_the_lease(election, cluster):
    el = election(prefix="watch")
    c1 = el.leaderd("c-1", extra=TIMING)
    c2 = el.leaderd("c-2", extra=TIMING)
    go = SlowGoElector("go-1", el.kubeconfig, el.namespace, el.lease)
    parts = [c1, c2, go]
    oracle = Oracle(cluster, match=lambda n: n == el.lease).start()
    took = []
    try:
        oracle.follow(c1.start().wait_up())
        E.wait_for(c1.is_leader, POLL_BOUND + 5, what="c-1 to lead")
        for p in (c2, go):
            oracle.follow(p.start().wait_up())
        for p in (c2, go):
            E.wait_for(lambda: (v := p.leader()) and v.get("name") == "c-1",
                       POLL_BOUND + 5, what="%s to follow c-1" % p.ident)

        def handover(old, want, bound, label):
            """SIGTERM old; the first other claim must be want's, within
            bound seconds."""
            time.sleep(1.0)     # followers are watching / have polled
            t0 = time.monotonic()
            rc, _ = old.proc.term(timeout=10)
            assert rc == 0, "%s exited %s on SIGTERM" % (old.ident, rc)
            new = E.wait_for(lambda: next((p for p in parts if p is not old
                                           and p.proc and p.proc.alive()
                                           and p.is_leader()), None),
                             POLL_BOUND + 5, interval=0.01,
                             what="a leader after %s" % old.ident)
            dt = time.monotonic() - t0
            took.append((label, old.ident, new.ident, dt))
            print("%s: %s -> %s in %.3f s" % (label, old.ident, new.ident, dt))
            assert new is want, "%s: %s took over, not %s" % (
                label, new.ident, want.ident)
            assert dt <= bound, "%s: %.2fs > %.2fs: not through the watch" % (
                label, dt, bound)
            return new

        # leaderd -> leaderd, three times, the client-go elector polling.
        handover(c1, c2, WATCH_BOUND, "c->c")
        oracle.follow(c1.start().wait_up())
        E.wait_for(lambda: (v := c1.leader()) and v.get("name") == "c-2",
                   POLL_BOUND + 5, what="c-1 to follow c-2")
        handover(c2, c1, WATCH_BOUND, "c->c")
        oracle.follow(c2.start().wait_up())
        E.wait_for(lambda: (v := c2.leader()) and v.get("name") == "c-1",
                   POLL_BOUND + 5, what="c-2 to follow c-1")
        handover(c1, c2, WATCH_BOUND, "c->c")
        # leaderd -> client-go (it polls), then client-go -> leaderd (a
        # release seen through the watch).
        handover(c2, go, POLL_BOUND, "c->go")
        oracle.follow(c1.start().wait_up())
        E.wait_for(lambda: (v := c1.leader()) and v.get("name") == "go-1",
                   POLL_BOUND + 5, what="c-1 to follow go-1")
        handover(go, c1, WATCH_BOUND, "go->c")
        time.sleep(2 * WRP)
    finally:
        oracle.stop()
        go.stop()
    fig = oracle.check(WRD, WRP)
    print(H.summary(fig))
    print("handovers: %s" % ", ".join("%s %.3fs" % (t[0], t[3])
                                      for t in took))
    holders = {t.holder for t in H.terms(oracle.hist.versions(el.lease))}
    assert {"c-1", "c-2", "go-1"} <= holders, holders
    spec = el.get_lease()["spec"]
    assert spec["holderIdentity"] == "c-1", spec
    assert E.MICROTIME.match(spec["renewTime"]), spec
