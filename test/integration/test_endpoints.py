"""The leader's endpoints (actions.endpoints) against fakeapi: the
EndpointSlice "<service>-leader" names the leader's IP, written only once
the Lease is ours; after a kill -9 the new leader overwrites it; on
SIGTERM the stopping leader clears it before its release; failing writes
are retried with backoff and do not touch the election; with legacy the
core/v1 Endpoints object follows too; enabled without an IP is refused.
Each instance has its own fake POD_IP (10.0.0.N): strings in the object
only, no traffic goes there.  Timings as in harness.py."""

import subprocess

from harness import (LEASE_DURATION as LD, RETRY_PERIOD as RP, wait_until)

NS = "default"
SVC = "db"
SLICE = "db-leader"
SLACK = 1.5
JITTER = 2.2
SLICES = "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices" % NS


def with_endpoints(cluster, name, n, legacy=False):
    inst = cluster.new(name, env={"POD_NAME": "pod-" + name,
                                  "POD_IP": "10.0.0.%d" % n})
    with open(inst.config_path, "a") as f:
        f.write("actions:\n  endpoints:\n    service: %s\n    port: 5432\n"
                % SVC)
        if legacy:
            f.write("    legacy: true\n")
    return inst


def ips(api, resource="endpointslices", name=SLICE):
    obj = api.get_object(resource, NS, name)
    if obj is None:
        return None
    if resource == "endpointslices":
        return [a for ep in obj["endpoints"] for a in ep["addresses"]]
    return [a["ip"] for ss in obj["subsets"] for a in ss["addresses"]]


def leader_of(insts):
    for i in insts:
        if i.alive() and i.is_leader():
            return i
    return None


def test_slice_follows_the_leader(api, cluster):
    insts = [with_endpoints(cluster, "e%d" % n, n) for n in (1, 2, 3)]
    ip = {i.name: "10.0.0.%d" % n for n, i in zip((1, 2, 3), insts)}
    for i in insts:
        i.start()
    wait_until(lambda: leader_of(insts) is not None,
               JITTER * RP + SLACK + 2.0, what="a leader")
    a = leader_of(insts)
    wait_until(lambda: ips(api) == [ip[a.name]], 3.0, what="the slice")
    obj = api.get_object("endpointslices", NS, SLICE)
    assert obj["addressType"] == "IPv4"
    assert obj["metadata"]["labels"] == {
        "kubernetes.io/service-name": SVC,
        "endpointslice.kubernetes.io/managed-by": "leaderd.io"}
    ep = obj["endpoints"][0]
    assert ep["conditions"] == {"ready": True}
    assert ep["targetRef"] == {"kind": "Pod", "namespace": NS,
                               "name": "pod-" + a.name}
    assert obj["ports"] == [{"port": 5432, "protocol": "TCP"}]
    # Only the leader wrote it, and only once the Lease was its own.
    hist = api.core_history("endpointslices")
    assert {h["token"] for h in hist} == {a.token}, hist
    acq = [w for w in a.writes() if w["spec"].get("holderIdentity") ==
           a.name]
    assert hist[0]["t"] >= acq[0]["t"]

    # kill -9: nobody clears the slice; the next leader overwrites it.
    a.kill9()
    rest = [i for i in insts if i is not a]
    wait_until(lambda: leader_of(rest) is not None,
               LD + JITTER * RP + SLACK + 2.0, what="a new leader")
    b = leader_of(rest)
    wait_until(lambda: ips(api) == [ip[b.name]], 3.0,
               what="the slice names the new leader")

    # SIGTERM: the slice is cleared before the release, even when the
    # clearing write is slow to apply (the release waits for its answer).
    api.fault("delay", token=b.token, path_prefix=SLICES, delay_ms=400)
    b.terminate()
    assert b.wait(5.0) == 0
    rel = [w for w in b.writes() if not w["spec"].get("holderIdentity")]
    assert rel
    cleared = [h for h in api.core_history("endpointslices")
               if h["token"] == b.token and h["ips"] == []]
    assert cleared and cleared[0]["t"] <= rel[-1]["t"], (cleared, rel)
    # In the request log too: the slice PUT came before the Lease PUT
    # that released it.
    reqs = api.requests(token=b.token)
    put = [r for r in reqs if r["path"].startswith(SLICES)]
    assert put[-1]["t_recv"] <= rel[-1]["t_recv"]
    c = [i for i in rest if i is not b][0]
    wait_until(lambda: ips(api) == [ip[c.name]],
               JITTER * RP + SLACK + 3.0, what="the slice names the last")
    assert c.is_leader()


def test_legacy_endpoints(api, cluster):
    a = with_endpoints(cluster, "e1", 1, legacy=True).start()
    wait_until(lambda: a.is_leader(), JITTER * RP + SLACK + 2.0,
               what="e1 to lead")
    wait_until(lambda: ips(api) == ["10.0.0.1"] and
               ips(api, "endpoints", SVC) == ["10.0.0.1"], 3.0,
               what="slice and Endpoints")
    obj = api.get_object("endpoints", NS, SVC)
    assert obj["metadata"]["labels"] == {
        "endpointslice.kubernetes.io/skip-mirror": "true"}
    a.terminate()
    assert a.wait(5.0) == 0
    assert ips(api) == [] and ips(api, "endpoints", SVC) == []


def test_slice_write_failures_are_retried(api, cluster):
    a = with_endpoints(cluster, "e1", 1)
    f = api.fault("status", token=a.token, status=503,
                  methods=["PUT", "POST"], path_prefix=SLICES, count=3)
    a.start()
    wait_until(lambda: a.is_leader(), JITTER * RP + SLACK + 2.0,
               what="e1 to lead")
    wait_until(lambda: ips(api) == ["10.0.0.1"], 1 + 2 + 4 + SLACK,
               what="the slice after failures")
    assert f.hits == 3
    fails = [r for r in api.requests(token=a.token)
             if r["path"].startswith(SLICES) and r["code"] == 503]
    ts = [r["t_recv"] for r in fails]
    assert ts[2] - ts[1] >= 0.9, ts
    assert a.log().count("failed: 503") == 1
    # The election went on: every renew in the meantime succeeded.
    assert a.is_leader()
    assert all(r["code"] == 200 for r in api.requests(token=a.token)
               if r["path"].startswith("/apis/coordination.k8s.io/")
               and r["method"] == "PUT")


def test_endpoints_need_an_ip(cluster):
    inst = cluster.new("e1")
    with open(inst.config_path, "a") as f:
        f.write("actions:\n  endpoints:\n    service: db\n")
    p = subprocess.run([inst.binary, "-n", "-f", inst.config_path],
                       capture_output=True, text=True, timeout=10,
                       env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 2, p.stderr
    assert "actions.endpoints.service needs this pod's IP" in p.stderr
    assert "%s:" % inst.config_path in p.stderr


def test_a_follower_never_writes_the_slice(api, cluster):
    """A follower stopping (SIGTERM) or losing nothing never clears the
    leader's endpoint: only what an instance wrote itself is cleared."""
    a = with_endpoints(cluster, "e1", 1).start()
    wait_until(lambda: a.is_leader(), JITTER * RP + SLACK + 2.0,
               what="e1 to lead")
    b = with_endpoints(cluster, "e2", 2).start()
    wait_until(lambda: ips(api) == ["10.0.0.1"], 3.0, what="the slice")
    wait_until(lambda: b.leader() is not None, 3.0, what="e2 to follow")
    b.terminate()
    assert b.wait(5.0) == 0
    assert ips(api) == ["10.0.0.1"]
    assert [r for r in api.requests(token=b.token)
            if r["path"].startswith(SLICES)] == []


def test_slice_cleared_when_the_claim_ends(api, cluster):
    """The leader loses its Lease writes but can still write the slice:
    it clears its endpoint when its claim ends, before anyone else may
    lead, and the next leader names itself."""
    a = with_endpoints(cluster, "e1", 1).start()
    wait_until(lambda: a.is_leader(), JITTER * RP + SLACK + 2.0,
               what="e1 to lead")
    b = with_endpoints(cluster, "e2", 2).start()
    wait_until(lambda: ips(api) == ["10.0.0.1"], 3.0, what="the slice")
    f = api.fault("status", token=a.token, status=503,
                  path_prefix="/apis/coordination.k8s.io/")
    wait_until(lambda: ips(api) == ["10.0.0.2"],
               LD + JITTER * RP + SLACK + 3.0, what="e2 in the slice")
    api.clear_fault(f)
    hist = api.core_history("endpointslices")
    cleared = [h for h in hist if h["token"] == a.token and h["ips"] == []]
    named = [h for h in hist if h["token"] == b.token and
             h["ips"] == ["10.0.0.2"]]
    assert cleared and named and cleared[0]["t"] <= named[0]["t"], hist
    assert b.is_leader()
