"""The lock types other than leases against fakeapi: endpoints and
configmaps (the record in the control-plane.alpha.kubernetes.io/leader
annotation, as client-go v0.23 and the classic leader-elector sidecar
keep it), and the MultiLocks endpointsleases and configmapsleases
(primary legacy object, secondary Lease).  Legacy objects with a missing
or garbage annotation, a record written by the classic sidecar, an
annotation deleted by hand, a MultiLock whose secondary is missing.
Timings (harness.py): lease_duration 3s, renew_deadline 2s, retry_period
500ms, request_timeout 1s."""

import datetime
import json
import re
import threading
import time

import pytest

from fakeapi import LEADER_ANNOTATION
from harness import (LEASE_DURATION as LD, RETRY_PERIOD as RP, wait_until)

SLACK = 1.5
JITTER = 2.2
NS = "default"
UNKNOWN = "leaderelection.k8s.io/unknown"
# client-go v0.23's json.Marshal(LeaderElectionRecord): seconds, UTC.
RECORD_RE = re.compile(
    r'^\{"holderIdentity":"(?P<holder>[^"]*)",'
    r'"leaseDurationSeconds":(?P<duration>\d+),'
    r'"acquireTime":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",'
    r'"renewTime":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",'
    r'"leaderTransitions":(?P<transitions>\d+)\}$')
RESOURCE = {"endpoints": "endpoints", "configmaps": "configmaps",
            "endpointsleases": "endpoints", "configmapsleases": "configmaps"}
ACQUIRE = JITTER * RP + SLACK + 2.0


def start(cluster, name, lock_type, **kw):
    """A leaderd on lock_type (the harness writes leases)."""
    inst = cluster.new(name, **kw)
    with open(inst.config_path) as f:
        text = f.read()
    assert "  type: leases\n" in text
    with open(inst.config_path, "w") as f:
        f.write(text.replace("  type: leases\n", "  type: %s\n" % lock_type))
    return inst.start()


def start_n(cluster, n, lock_type, prefix="ld", **kw):
    return [start(cluster, "%s-%d" % (prefix, i), lock_type, **kw)
            for i in range(n)]


def annotation(api, resource, name):
    obj = api.get_object(resource, NS, name)
    if obj is None:
        return None
    return (obj["metadata"].get("annotations") or {}).get(LEADER_ANNOTATION)


def record(api, resource, name):
    raw = annotation(api, resource, name)
    return json.loads(raw) if raw else None


def go_time(t=None):
    """A metav1.Time as Go writes it: RFC 3339, seconds, UTC."""
    t = datetime.datetime.now(datetime.timezone.utc) if t is None else t
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def sidecar_bytes(holder, duration, acquire, renew, transitions):
    """The annotation exactly as the classic leader-elector writes it."""
    return ('{"holderIdentity":"%s","leaseDurationSeconds":%d,'
            '"acquireTime":"%s","renewTime":"%s","leaderTransitions":%d}'
            % (holder, duration, acquire, renew, transitions))


class Renewer:
    """Another client holding a legacy lock: rewrites renewTime every
    retry_period, as a live leader-elector sidecar does."""

    def __init__(self, api, resource, name, holder, transitions=0,
                 lease=False):
        self.api, self.resource, self.name = api, resource, name
        self.holder, self.transitions, self.lease = holder, transitions, lease
        self.acquire = go_time()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def write(self):
        raw = sidecar_bytes(self.holder, int(LD), self.acquire, go_time(),
                            self.transitions)
        if self.lease:
            def fn(obj):
                obj["spec"]["renewTime"] = datetime.datetime.now(
                    datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            self.api.modify_lease(NS, self.name, fn)
            return

        def set_ann(obj):
            obj["metadata"].setdefault("annotations", {})[
                LEADER_ANNOTATION] = raw
        if self.api.get_object(self.resource, NS, self.name) is None:
            self.api.create_object(self.resource, NS, self.name,
                                   {LEADER_ANNOTATION: raw})
        else:
            self.api.modify_object(self.resource, NS, self.name, set_ann)

    def _run(self):
        while not self._stop.wait(RP):
            self.write()

    def start(self):
        self.write()
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(5)


@pytest.mark.parametrize("lock_type", ["endpoints", "configmaps"])
def test_legacy_lock_one_leader(cluster, api, lock_type):
    resource = RESOURCE[lock_type]
    ins = start_n(cluster, 3, lock_type)
    chk = cluster.checker(ins)
    leader = cluster.wait_single_leader(ACQUIRE)
    time.sleep(4 * RP)
    assert cluster.wait_single_leader(1.0) is leader
    raw = annotation(api, resource, cluster.lock)
    m = RECORD_RE.match(raw or "")
    assert m, raw
    assert m.group("holder") == leader.identity
    assert int(m.group("duration")) == int(LD)
    assert m.group("transitions") == "0"
    # Only the legacy object: no Lease, no other kind of object.
    assert api.get_lease(NS, cluster.lock) is None
    other = "configmaps" if resource == "endpoints" else "endpoints"
    assert api.get_object(other, NS, cluster.lock) is None
    # The leader renews the annotation; followers never write.
    writes = [h for h in api.core_history(resource, NS, cluster.lock)
              if not h["admin"]]
    assert len(writes) >= 4, writes
    assert {h["token"] for h in writes} == {leader.token}
    assert len({json.loads(h["annotation"])["acquireTime"]
                for h in writes}) == 1
    v = leader.leader()
    assert v["lock"] == "%s/%s/%s" % (lock_type, NS, cluster.lock)
    assert v["name"] == leader.identity
    for i in ins:
        assert i.leader()["name"] == leader.identity
    # The Event names the lock object of the right kind.
    evs = [e for e in api.events()
           if e["involvedObject"]["name"] == cluster.lock]
    assert evs, api.events()
    kind = "Endpoints" if resource == "endpoints" else "ConfigMap"
    assert {e["involvedObject"]["kind"] for e in evs} == {kind}
    assert {e["involvedObject"]["apiVersion"] for e in evs} == {"v1"}
    assert any(e["message"] == "%s became leader" % leader.identity
               for e in evs)
    # The Endpoints deprecation warning is logged once per process.
    for i in ins:
        n = i.log_count("the API server warns")
        assert n == (1 if resource == "endpoints" else 0), (i.name, n)
    chk.assert_s1()


@pytest.mark.parametrize("lock_type", ["endpoints", "configmapsleases"])
def test_legacy_failover_after_kill9(cluster, api, lock_type):
    resource = RESOURCE[lock_type]
    ins = start_n(cluster, 3, lock_type)
    chk = cluster.checker(ins)
    old = cluster.wait_single_leader(ACQUIRE)
    time.sleep(2 * RP)
    t_kill = time.monotonic()
    old.kill9()
    new = cluster.wait_single_leader(LD + JITTER * RP + SLACK + 2.0,
                                     [i for i in ins if i is not old])
    assert new is not old
    first = chk.wait_first_true(since=t_kill, exclude=(old.name,))
    assert first is not None and first[0] - t_kill >= LD - 2 * RP, first
    rec = record(api, resource, cluster.lock)
    assert rec["holderIdentity"] == new.identity
    assert rec["leaderTransitions"] == 1
    if lock_type.endswith("leases"):
        spec = api.get_lease(NS, cluster.lock)["spec"]
        assert spec["holderIdentity"] == new.identity
        assert spec["leaseTransitions"] == 1
    chk.assert_s1()


def test_missing_annotation_is_waited_out(cluster, api):
    """An Endpoints without the annotation (a Service's, or one whose
    annotation was deleted) reads as held by an unknown leader: taken one
    lease_duration later, keeping everything else on the object."""
    subsets = [{"addresses": [{"ip": "10.0.0.7"}],
                "ports": [{"port": 8080, "protocol": "TCP"}]}]
    api.create_object("endpoints", NS, cluster.lock,
                      annotations={"team": "a"}, extra={"subsets": subsets})
    ld = start(cluster, "ld-0", "endpoints")
    chk = cluster.checker([ld])
    t0 = time.monotonic()
    wait_until(lambda: (ld.leader() or {}).get("name") == UNKNOWN,
               3 * RP + SLACK, what="the unknown holder")
    assert cluster.wait_single_leader(LD + ACQUIRE) is ld
    first = wait_until(chk.first_true, 1.0, what="a sampled claim")
    assert first[0] - t0 >= LD - 2 * RP, first
    obj = api.get_object("endpoints", NS, cluster.lock)
    assert obj["subsets"] == subsets
    assert obj["metadata"]["annotations"]["team"] == "a"
    rec = json.loads(obj["metadata"]["annotations"][LEADER_ANNOTATION])
    assert rec["holderIdentity"] == ld.identity
    # A takeover of an empty record is a transition, as in client-go.
    assert rec["leaderTransitions"] == 1


@pytest.mark.parametrize("garbage", ["not json{", "", "[1,2]",
                                     '{"holderIdentity":7}',
                                     '{"renewTime":"yesterday"}'])
def test_garbage_annotation_blocks_until_fixed(cluster, api, garbage):
    """A record that does not decode stops the election, as client-go's
    Get fails on it: never a takeover of what might be a live lock.
    Deleting the annotation by hand frees it."""
    api.create_object("configmaps", NS, cluster.lock,
                      annotations={LEADER_ANNOTATION: garbage})
    ld = start(cluster, "ld-0", "configmaps")
    chk = cluster.checker([ld])
    wait_until(lambda: ld.log_count("is not a leader election record") or
               ld.log_count("BadRecord"), 3 * RP + SLACK,
               what="the bad record logged")
    time.sleep(LD + 2 * RP)
    assert chk.first_true() is None
    assert annotation(api, "configmaps", cluster.lock) == garbage
    # Logged once, not once per retry.
    warned = [ln for ln in ld.log().splitlines()
              if " warn " in ln and "BadRecord" in ln]
    assert len(warned) == 1, ld.log()
    assert ld.get_status("/readyz") == 503

    def drop(obj):
        del obj["metadata"]["annotations"][LEADER_ANNOTATION]
    api.modify_object("configmaps", NS, cluster.lock, drop)
    assert cluster.wait_single_leader(LD + ACQUIRE) is ld
    assert record(api, "configmaps", cluster.lock)["holderIdentity"] == \
        ld.identity


def test_classic_sidecar_record(cluster, api):
    """The exact bytes of a live gcr.io leader-elector: leaderd waits while
    it renews and takes over one lease_duration after it stops, counting
    the transition."""
    side = Renewer(api, "endpoints", cluster.lock, "leader-elector-5d8f7",
                   transitions=3).start()
    raw = annotation(api, "endpoints", cluster.lock)
    assert RECORD_RE.match(raw), raw
    ins = start_n(cluster, 2, "endpoints")
    chk = cluster.checker(ins)
    try:
        wait_until(lambda: all((i.leader() or {}).get("name") ==
                               "leader-elector-5d8f7" for i in ins),
                   3 * RP + SLACK, what="the sidecar seen as leader")
        time.sleep(2 * LD)
        assert chk.first_true() is None
        assert all(i.leader()["state"] == "follower" for i in ins)
    finally:
        t_stop = time.monotonic()
        side.stop()
    leader = cluster.wait_single_leader(LD + JITTER * RP + SLACK + 2.0)
    first = chk.wait_first_true(since=t_stop)
    assert first[0] - t_stop >= LD - 2 * RP, first
    rec = record(api, "endpoints", cluster.lock)
    assert rec["holderIdentity"] == leader.identity
    assert rec["leaderTransitions"] == 4
    chk.assert_s1()


def test_annotation_deleted_by_hand(cluster, api):
    ins = start_n(cluster, 2, "endpoints")
    chk = cluster.checker(ins)
    cluster.wait_single_leader(ACQUIRE)
    time.sleep(2 * RP)

    def drop(obj):
        del obj["metadata"]["annotations"][LEADER_ANNOTATION]
    api.modify_object("endpoints", NS, cluster.lock, drop)
    t_del = time.monotonic()
    assert annotation(api, "endpoints", cluster.lock) is None
    # The holder is unknown now: waited out, then one instance leads.
    wait_until(lambda: annotation(api, "endpoints", cluster.lock),
               LD + JITTER * RP + SLACK + 2.0, what="the annotation back")
    leader = cluster.wait_single_leader(ACQUIRE)
    assert chk.wait_first_true(since=t_del + RP) is not None
    assert record(api, "endpoints", cluster.lock)["holderIdentity"] == \
        leader.identity
    time.sleep(2 * RP)
    assert cluster.wait_single_leader(1.0) is leader
    chk.assert_s1()


def test_multilock_secondary_missing(cluster, api):
    """An old client holds the Endpoints; there is no Lease.  leaderd on
    endpointsleases follows it, creates nothing while it lives, and on
    takeover writes the Endpoints then creates the Lease."""
    side = Renewer(api, "endpoints", cluster.lock, "old-elector").start()
    ld = start(cluster, "ld-0", "endpointsleases")
    chk = cluster.checker([ld])
    try:
        wait_until(lambda: (ld.leader() or {}).get("name") == "old-elector",
                   3 * RP + SLACK, what="the old elector seen")
        time.sleep(LD + 2 * RP)
        assert chk.first_true() is None
        assert api.get_lease(NS, cluster.lock) is None
        assert ld.leader()["lock"] == "endpointsleases/%s/%s" % (
            NS, cluster.lock)
    finally:
        side.stop()
    assert cluster.wait_single_leader(LD + JITTER * RP + SLACK + 2.0) is ld
    rec = record(api, "endpoints", cluster.lock)
    spec = api.get_lease(NS, cluster.lock)["spec"]
    assert rec["holderIdentity"] == spec["holderIdentity"] == ld.identity
    assert rec["leaderTransitions"] == spec["leaseTransitions"] == 1
    # Events about both objects, as client-go's MultiLock records them.
    wait_until(lambda: {e["involvedObject"]["kind"] for e in api.events()
                        if e["message"] == "%s became leader" % ld.identity}
               == {"Endpoints", "Lease"}, 2.0, what="Events on both")
    # The primary is written before the secondary.
    e = [h for h in api.core_history("endpoints", NS, cluster.lock)
         if h["token"] == ld.token]
    s = api.history(ns=NS, name=cluster.lock, token=ld.token)
    assert e and s and e[0]["t"] <= s[0]["t"]
    # Secondary deleted by hand: re-created by the next renew, and the
    # leader keeps leading.
    api.delete_lease(NS, cluster.lock)
    wait_until(lambda: api.get_lease(NS, cluster.lock), 3 * RP + SLACK,
               what="the Lease re-created")
    assert api.get_lease(NS, cluster.lock)["spec"]["holderIdentity"] == \
        ld.identity
    time.sleep(2 * RP)
    assert [c for c in chk.claims()] and len(chk.claims()) == 1, \
        chk.claims()


def test_multilock_holders_disagree(cluster, api):
    """ConfigMap and Lease held by different clients: leaderd waits while
    either is renewed, names the holder of the one renewed last (the live
    one, as its other electors name it), and takes both when both
    stop."""
    api.create_lease(NS, cluster.lock, {
        "holderIdentity": "lease-holder", "leaseDurationSeconds": int(LD),
        "leaseTransitions": 0})
    a = Renewer(api, "configmaps", cluster.lock, "legacy-holder").start()
    b = Renewer(api, "leases", cluster.lock, "lease-holder",
                lease=True).start()
    ld = start(cluster, "ld-0", "configmapsleases")
    chk = cluster.checker([ld])
    try:
        wait_until(lambda: (ld.leader() or {}).get("name") in (
            "legacy-holder", "lease-holder"), 3 * RP + SLACK,
            what="a foreign holder")
        # The Lease alone changes: still a live lock, held by its holder.
        a.stop()
        wait_until(lambda: ld.leader()["name"] == "lease-holder",
                   3 * RP + SLACK, what="the Lease's holder named")
        time.sleep(LD + 3 * RP)
        assert chk.first_true() is None
        assert ld.leader()["name"] == "lease-holder"
    finally:
        a.stop()
        b.stop()
    assert cluster.wait_single_leader(LD + JITTER * RP + SLACK + 2.0) is ld
    assert record(api, "configmaps", cluster.lock)["holderIdentity"] == \
        ld.identity
    assert api.get_lease(NS, cluster.lock)["spec"]["holderIdentity"] == \
        ld.identity


def test_migration_mixed_fleet(cluster, api):
    """The migration's overlaps: endpoints beside endpointsleases, then
    (the endpoints instance gone) endpointsleases beside leases; leaders
    killed one by one, never two leaders."""
    ins = [start(cluster, "legacy-0", "endpoints"),
           start(cluster, "multi-0", "endpointsleases"),
           start(cluster, "multi-1", "endpointsleases")]
    chk = cluster.checker(ins)
    cluster.wait_single_leader(ACQUIRE)
    legacy = ins[0]
    legacy.kill9()
    leader = cluster.wait_single_leader(LD + JITTER * RP + SLACK + 2.0,
                                        ins[1:])
    wait_until(lambda: (api.get_lease(NS, cluster.lock) or {}).get(
        "spec", {}).get("holderIdentity") == leader.identity,
        3 * RP + SLACK, what="the Lease written by the MultiLock")
    late = [start(cluster, "leases-%d" % i, "leases") for i in range(2)]
    for inst in late:
        chk.add(inst)
    live = ins[1:] + late
    for _ in range(3):
        leader = cluster.wait_single_leader(LD + JITTER * RP + SLACK + 2.0,
                                            live)
        leader.kill9()
        live.remove(leader)
    last = cluster.wait_single_leader(LD + JITTER * RP + SLACK + 2.0, live)
    assert api.get_lease(NS, cluster.lock)["spec"]["holderIdentity"] == \
        last.identity
    chk.assert_s1()


# -- fakeapi's Endpoints and ConfigMaps: the semantics the tests rely on --

def core_call(api, method, path, body=None, token=None):
    from test_fakeapi import call
    if token is None:
        token = "tok-core"
        api.add_token(token)
    return call(api, method, path, body=body, token=token)


@pytest.mark.parametrize("resource,kind", [("endpoints", "Endpoints"),
                                           ("configmaps", "ConfigMap")])
def test_fakeapi_core_objects(api, resource, kind):
    base = "/api/v1/namespaces/%s/%s" % (NS, resource)
    code, hdrs, body = core_call(api, "GET", base + "/x")
    assert code == 404 and body["reason"] == "NotFound", body
    assert (hdrs.get("Warning") is not None) == (resource == "endpoints")
    obj = {"apiVersion": "v1", "kind": kind, "metadata": {
        "name": "x", "annotations": {LEADER_ANNOTATION: "{}"}}}
    code, _, created = core_call(api, "POST", base, obj)
    assert code == 201, created
    meta = created["metadata"]
    assert meta["uid"] and meta["resourceVersion"].isdigit()
    assert meta["annotations"][LEADER_ANNOTATION] == "{}"
    code, _, body = core_call(api, "POST", base, obj)
    assert code == 409 and body["reason"] == "AlreadyExists", body
    # PUT over the version read: 200 and a new resourceVersion.
    created["metadata"]["annotations"][LEADER_ANNOTATION] = "{\"a\":1}"
    code, _, upd = core_call(api, "PUT", base + "/x", created)
    assert code == 200, upd
    assert upd["metadata"]["resourceVersion"] != meta["resourceVersion"]
    assert upd["metadata"]["uid"] == meta["uid"]
    # PUT over a stale version, or with another uid: 409 Conflict.
    code, _, body = core_call(api, "PUT", base + "/x", created)
    assert code == 409 and body["reason"] == "Conflict", body
    upd["metadata"]["uid"] = "other"
    code, _, body = core_call(api, "PUT", base + "/x", upd)
    assert code == 409 and "Precondition failed" in body["message"], body
    # A wrong kind or non-string annotations: 400.
    bad = dict(obj, kind="Lease")
    assert core_call(api, "POST", base, bad)[0] == 400
    bad = {"metadata": {"name": "y", "annotations": {"k": 1}}}
    assert core_call(api, "POST", base, bad)[0] == 400
    # PUT to a missing object: Endpoints are created, ConfigMaps are not.
    new = {"metadata": {"name": "z"}}
    code, _, _ = core_call(api, "PUT", base + "/z", new)
    assert code == (201 if resource == "endpoints" else 404)
    assert [h["method"] for h in api.core_history(resource, NS, "x")] == \
        ["POST", "PUT"]


@pytest.mark.parametrize("lock_type", sorted(RESOURCE) + ["leases"])
def test_check_prints_the_lock(leaderd_bin, lock_type):
    import subprocess
    p = subprocess.run([leaderd_bin, "-n", "--election", "my-app",
                        "--election-namespace", "team-a", "--id", "me",
                        "--lock-type", lock_type],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "lock %s/team-a/my-app\nconfiguration OK\n" % \
        lock_type


def test_multilock_secondary_forbidden(cluster, api):
    """RBAC without leases on a MultiLock: no leadership, the log says
    what the Role lacks; granted again, leaderd leads."""
    ld = cluster.new("ld-0")
    with open(ld.config_path) as f:
        text = f.read()
    with open(ld.config_path, "w") as f:
        f.write(text.replace("  type: leases\n", "  type: endpointsleases\n"))
    f403 = api.fault("status", token=ld.token, status=403,
                     path_prefix="/apis/coordination.k8s.io/")
    ld.start()
    chk = cluster.checker([ld])
    wait_until(lambda: ld.log_count("leaderd needs get, update and create "
                                    "on endpoints and on leases"),
               3 * RP + SLACK, what="the RBAC hint")
    time.sleep(LD + 2 * RP)
    assert chk.first_true() is None
    assert api.get_lease(NS, cluster.lock) is None
    api.clear_fault(f403)
    assert cluster.wait_single_leader(LD + ACQUIRE) is ld
    assert api.get_lease(NS, cluster.lock)["spec"]["holderIdentity"] == \
        ld.identity
    chk.assert_s1()
