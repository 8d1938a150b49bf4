"""leaderd against a real kube-apiserver, as a least-privilege user bound
only to deploy/'s Role (with the lease name swapped for the test's own)."""

import json
import os
import re
import ssl
import time
import urllib.error
import urllib.request

import e2elib as E
from e2elib import LD, RP, KILL_BOUND, TERM_BOUND, REQ_TIMEOUT, MICROTIME


def wait_leader(parts, timeout, exclude=()):
    """The one participant of parts that says is_leader=true."""
    def one():
        ls = [p for p in parts if p not in exclude and p.proc.alive()
              and p.is_leader()]
        return ls[0] if len(ls) == 1 else None
    return E.wait_for(one, timeout, what="a leader among %s" %
                      [p.ident for p in parts])


def lease_spec(el):
    l = el.get_lease()
    assert l is not None, "Lease %s not found" % el.lease
    return l


def check_clientgo_fields(spec, holder):
    assert spec.get("holderIdentity") == holder, spec
    assert spec.get("leaseDurationSeconds") == LD, spec
    for f in ("acquireTime", "renewTime"):
        assert MICROTIME.match(spec.get(f, "")), \
            "%s %r is not a 6-digit MicroTime" % (f, spec.get(f))
    assert isinstance(spec.get("leaseTransitions"), int), spec


def test_acquire_and_renew(election, cluster):
    el = election(prefix="acq")
    a = el.leaderd("c-acq").start().wait_up()
    t0 = time.monotonic()
    E.wait_for(a.is_leader, 2.2 * RP + 10, what="leaderd to lead")
    print("acquired in %.2fs" % (time.monotonic() - t0))
    assert ("became leader of lease %s/%s" % (el.namespace, el.lease)) \
        in a.proc.text()
    body = a.leader()
    assert body["name"] == "c-acq" and body["identity"] == "c-acq"
    assert body["lock"] == "leases/%s/%s" % (el.namespace, el.lease)

    l1 = lease_spec(el)
    check_clientgo_fields(l1["spec"], "c-acq")
    assert l1["spec"]["leaseTransitions"] == 0
    # Renews: renewTime and resourceVersion move, acquireTime stays.
    time.sleep(3 * RP + 0.5)
    l2 = lease_spec(el)
    check_clientgo_fields(l2["spec"], "c-acq")
    assert l2["spec"]["acquireTime"] == l1["spec"]["acquireTime"]
    assert l2["spec"]["renewTime"] > l1["spec"]["renewTime"]
    assert l2["metadata"]["resourceVersion"] != l1["metadata"]["resourceVersion"]
    assert l2["spec"]["leaseTransitions"] == 0
    assert a.is_leader()
    st, _ = E.http_get_json(a.port, "/healthz")
    assert st == 200
    assert "API error" not in a.proc.text(), a.proc.text()
    # The Event client-go would record, allowed by deploy/'s events rule.
    def event():
        evs = cluster.admin.json("get", "events", "--field-selector",
                                 "involvedObject.name=" + el.lease)["items"]
        return [e for e in evs if e.get("reason") == "LeaderElection"
                and "c-acq became leader" in e.get("message", "")]
    E.wait_for(event, 10, interval=0.5, what="a LeaderElection Event")
    assert "cannot record an Event" not in a.proc.text(), a.proc.text()



def _failover(election, how):
    el = election(prefix=how)
    ps = [el.leaderd("c-%s-%d" % (how, i)).start() for i in range(2)]
    for p in ps:
        p.wait_up()
    old = wait_leader(ps, 2.2 * RP + 10)
    other = [p for p in ps if p is not old][0]
    time.sleep(2 * RP)     # the follower has observed the leader for a while
    assert not other.is_leader()
    assert other.leader()["name"] == old.ident
    before = lease_spec(el)["spec"]
    t0 = time.monotonic()
    if how == "kill9":
        old.proc.kill9()
        bound = KILL_BOUND
    else:
        rc, dt = old.proc.term(timeout=REQ_TIMEOUT + 5)
        assert rc == 0, "leaderd exit status %s after SIGTERM" % rc
        assert dt <= REQ_TIMEOUT + 1, "exit took %.2fs" % dt
        assert "released lease %s/%s" % (el.namespace, el.lease) \
            in old.proc.text()
        bound = TERM_BOUND
    E.wait_for(other.is_leader, bound, interval=0.02,
               what="takeover within %.1fs" % bound)
    dt = time.monotonic() - t0
    print("%s: takeover after %.2fs (bound %.1fs)" % (how, dt, bound))
    if how == "kill9":
        # Not before the old lease could have expired.
        # Not before the lease could have expired (followers judge from
        # their last observation, at most 2.2 x retry_period old).
        assert dt >= LD - 2.2 * RP - 0.5, "took over after only %.2fs" % dt
    after = lease_spec(el)["spec"]
    check_clientgo_fields(after, other.ident)
    assert after["leaseTransitions"] == before["leaseTransitions"] + 1
    assert after["acquireTime"] != before["acquireTime"]


def test_failover_kill9(election):
    _failover(election, "kill9")


def test_failover_sigterm(election):
    _failover(election, "term")


def test_release_record(election):
    """SIGTERM of a lone leader: the record shows the release."""
    el = election(prefix="rel")
    a = el.leaderd("c-rel").start().wait_up()
    E.wait_for(a.is_leader, 2.2 * RP + 10, what="leaderd to lead")
    rc, _ = a.proc.term(timeout=REQ_TIMEOUT + 5)
    assert rc == 0
    spec = lease_spec(el)["spec"]
    assert spec.get("holderIdentity", "") == "", spec
    assert spec.get("leaseDurationSeconds") == 1, spec


def test_missing_update_permission(election, cluster):
    el = election(update=False, prefix="noupd")
    assert not cluster.can_i(el.kubeconfig, "update", "leases", el.lease)
    assert cluster.can_i(el.kubeconfig, "get", "leases", el.lease)
    # An expired Lease held by someone else: taking it needs update.
    old = "2020-01-01T00:00:00.000000Z"
    cluster.admin.apply({"apiVersion": "coordination.k8s.io/v1",
                         "kind": "Lease", "metadata": {"name": el.lease},
                         "spec": {"holderIdentity": "someone-else",
                                  "leaseDurationSeconds": LD,
                                  "acquireTime": old, "renewTime": old,
                                  "leaseTransitions": 3}})
    a = el.leaderd("c-noupd").start().wait_up()
    end = time.monotonic() + 6 * RP + 4
    while time.monotonic() < end:
        assert not a.is_leader(), "claimed leadership without update"
        time.sleep(0.05)
    assert a.proc.alive()
    log = a.proc.text()
    lines = [l for l in log.splitlines()
             if "403" in l and "update" in l and "leases" in l
             and el.lease in l]
    # The API server's answer once, and the problem it makes once (its
    # reminder comes after 60 s, past this wait).
    api = [l for l in lines if "API error: 403 Forbidden" in l]
    prob = [l for l in lines if "problem forbidden: update leases/%s in "
            "namespace" % el.lease in l]
    assert len(api) == 1 and len(prob) == 1 and len(lines) == 2, \
        "want the 403 once and its problem once, naming update/leases/%s, " \
        "got:\n%s" % (el.lease, log)
    print("403 lines:", *lines, sep="\n  ")
    spec = lease_spec(el)["spec"]
    assert spec["holderIdentity"] == "someone-else"
    assert "became leader" not in log


def test_wrong_ca(election, cluster):
    el = election(prefix="ca")
    with open(el.kubeconfig) as f:
        token = json.load(f)["users"][0]["user"]["token"]
    kc = E.write_kubeconfig(el.kubeconfig + "-wrongca", cluster.server,
                            "wrongca", ca_file=cluster.wrong_ca, token=token,
                            namespace=el.namespace)
    a = el.leaderd("c-ca", kubeconfig=kc).start().wait_up()
    end = time.monotonic() + 5 * RP + 3
    while time.monotonic() < end:
        assert not a.is_leader(), "leader through an unverified server"
        time.sleep(0.05)
    st, _ = E.http_get_json(a.port, "/readyz")
    assert st == 503, "ready although the API server was never reached"
    log = a.proc.text()
    assert re.search(r"(?i)certificate|ssl|tls|verif", log), log
    assert el.get_lease() is None, "a Lease was written with a wrong CA"


def _token_ok(cluster, token):
    ctx = ssl.create_default_context(cafile=cluster.ca_file)
    req = urllib.request.Request(cluster.server + "/api",
                                 headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_token_rotation(election, cluster):
    """A bound service-account token from the TokenRequest API in a token
    file; the old one is made invalid (its bound Secret deleted), then the
    file is replaced: leaderd keeps leading without a restart."""
    el = election(prefix="rot")
    adm = cluster.admin
    sa = el.lease + "-sa"
    adm.run("create", "serviceaccount", sa)
    cluster.bind(el.lease + "-sa", el.rules,
                 {"kind": "ServiceAccount", "name": sa,
                  "namespace": el.namespace})

    def token(secret):
        adm.run("create", "secret", "generic", secret)
        return adm.run("create", "token", sa, "--duration=600s",
                       "--bound-object-kind=Secret",
                       "--bound-object-name=" + secret).stdout.strip()

    t1 = token(sa + "-1")
    tf = E.WORK + "/" + el.lease + ".token"
    with open(tf, "w") as f:
        f.write(t1 + "\n")
    kc = E.write_kubeconfig(el.kubeconfig + "-rot", cluster.server, sa,
                            ca_file=cluster.ca_file, token_file=tf,
                            namespace=el.namespace)
    a = el.leaderd("c-rot", kubeconfig=kc).start().wait_up()
    E.wait_for(a.is_leader, 2.2 * RP + 10, what="leaderd to lead")
    pid = a.proc.p.pid
    t2 = token(sa + "-2")

    adm.run("delete", "secret", sa + "-1", "--wait=true")
    E.wait_for(lambda: _token_ok(cluster, t1) == 401, 10,
               what="the old token to be rejected")
    assert _token_ok(cluster, t2) == 200
    time.sleep(1.5 * RP)            # leaderd meets 401 with the old token
    with open(tf + ".new", "w") as f:
        f.write(t2 + "\n")
    os.replace(tf + ".new", tf)
    renew_before = a.leader().get("renew_time")
    # It keeps (or at worst regains) the lease, with the same process.
    E.wait_for(lambda: a.leader() and a.leader().get("renew_time")
               != renew_before and a.is_leader(), 3 * RP + 8,
               what="a renew with the new token")
    time.sleep(3 * RP)
    assert a.is_leader() and a.proc.alive() and a.proc.p.pid == pid
    spec = lease_spec(el)["spec"]
    assert spec["holderIdentity"] == "c-rot"
    log = a.proc.text()
    assert "401" in log, "the old token was never rejected?\n" + log
    # The new token was in place well within renew_deadline of the last
    # good renew: leadership must not have been interrupted.
    assert "stopped leading" not in log, log
