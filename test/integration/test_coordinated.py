"""Coordinated election (candidacy.coordinated) against the fake API
server, which plays kube-apiserver with and without the LeaseCandidate
API; the tests play its election controller.

A coordinated leaderd keeps a LeaseCandidate named after its identity,
never creates or takes the Lease by itself, takes it when the controller
names it (its own renew, a new term), renews its candidate when pinged,
hands over to preferredHolder, deletes its candidate on exit, and falls
back to the usual election, once logged, when the API is not served.
handover: auto hands the lease on SIGTERM to the candidate the
controller would pick."""

import datetime
import signal
import time

from fakeapi import now_microtime
from harness import RETRY_PERIOD as RP, wait_until

SLACK = 1.5
JITTER = 2.2
NS = "default"


def coordinated(version, *more):
    return ["--coordinated", "--binary-version", version] + list(more)


def assign(cluster, who):
    """What the controller writes: the holder, a 5 s term, no acquireTime,
    the strategy, no preferredHolder."""
    spec = {"holderIdentity": who, "leaseDurationSeconds": 5,
            "renewTime": now_microtime(),
            "strategy": "OldestEmulationVersion"}
    if cluster.lease() is None:
        cluster.api.create_lease(NS, cluster.lock, spec)
    else:
        def fn(o):
            o["spec"].update(spec)
            o["spec"].pop("preferredHolder", None)
            o["spec"].pop("acquireTime", None)
        cluster.api.modify_lease(NS, cluster.lock, fn)


def test_coordinated_falls_back_when_not_served(cluster):
    a = cluster.start("cf-a", args=coordinated("1.0.0"))
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    body = a.leader()
    assert body["coordinated"] is False, body
    assert "not served" in body["coordinated_reason"], body
    assert a.log_count("coordinated election off") == 1
    # Without the option, /leader says nothing of it.
    b = cluster.start("cf-b")
    assert "coordinated" not in b.leader()


def test_coordinated_assignment(cluster):
    api = cluster.api
    api.enable_candidates()
    a = cluster.start("cc-a", args=coordinated("1.0.0"))
    b = cluster.start("cc-b", args=coordinated("1.1.0", "--emulation-version",
                                                  "1.0.0"))
    chk = cluster.checker()
    wait_until(lambda: set(api.candidates(NS)) == {"cc-a", "cc-b"}, 3.0,
               what="both candidates")
    spec = api.candidates(NS)["cc-b"]["spec"]
    assert spec["leaseName"] == cluster.lock
    assert spec["binaryVersion"] == "1.1.0"
    assert spec["emulationVersion"] == "1.0.0"
    assert spec["strategy"] == "OldestEmulationVersion"
    assert spec["renewTime"]
    wait_until(lambda: a.leader()["coordinated"] is True, 3.0,
               what="a says coordinated")
    # Nobody creates the Lease by itself.
    time.sleep(JITTER * RP + SLACK)
    assert cluster.lease() is None
    assert not a.is_leader() and not b.is_leader()
    # The controller names a: a takes it by its own renew, a new term.
    assign(cluster, "cc-a")
    wait_until(a.is_leader, 2.0, interval=0.01, what="a leads")
    spec = cluster.lease()["spec"]
    assert spec["holderIdentity"] == "cc-a"
    assert spec["acquireTime"] == spec["renewTime"]
    assert spec["leaseDurationSeconds"] == 3
    assert spec["strategy"] == "OldestEmulationVersion"
    time.sleep(2 * RP)
    assert a.is_leader() and not b.is_leader()
    # A ping is answered by a renew of the candidate.
    ping = api.ping_candidate(NS, "cc-b")["spec"]["pingTime"]
    wait_until(lambda: api.candidates(NS)["cc-b"]["spec"]["renewTime"] >
               ping, RP + SLACK, what="b renews its candidate")
    # preferredHolder: a hands over at once; b clears it.
    api.modify_lease(NS, cluster.lock,
                     lambda o: o["spec"].update(preferredHolder="cc-b"))
    wait_until(b.is_leader, 2.0, interval=0.01, what="b leads")
    assert not a.is_leader()
    assert "preferredHolder" not in cluster.lease()["spec"]
    # On exit b deletes its candidate and releases; a does not take the
    # free lease (the controller would assign it).
    b.signal(signal.SIGTERM)
    assert b.wait(5.0) == 0
    assert "cc-b" not in api.candidates(NS)
    assert cluster.lease()["spec"]["holderIdentity"] == ""
    assert b.log_count("LeaseCandidate default/cc-b deleted") == 1
    time.sleep(JITTER * RP + SLACK)
    assert cluster.lease()["spec"]["holderIdentity"] == ""
    assert not a.is_leader()
    chk.assert_s1()


def test_handover_auto_to_the_candidate_the_controller_picks(cluster):
    api = cluster.api
    api.enable_candidates()
    a = cluster.start("ha-a", args=coordinated("1.0.0", "--handover", "auto"))
    c = cluster.start("ha-c", args=coordinated("1.1.0", "--handover", "auto"))
    b = cluster.start("ha-b", args=coordinated("1.0.0", "--handover", "auto"))
    chk = cluster.checker()
    wait_until(lambda: len(api.candidates(NS)) == 3, 3.0,
               what="three candidates")
    assign(cluster, "ha-a")
    wait_until(a.is_leader, 2.0, interval=0.01, what="a leads")
    time.sleep(RP + 0.5)    # a lists the others
    a.signal(signal.SIGTERM)
    wait_until(b.is_leader, 2.0, interval=0.01, what="b leads")
    assert a.wait(5.0) == 0
    assert a.log_count("handover auto: handing the lease to ha-b") == 1
    assert not c.is_leader()
    assert "ha-a" not in api.candidates(NS)
    chk.assert_s1()


def test_handover_auto_without_candidates_releases(cluster):
    a = cluster.start("hp-a", args=["--handover", "auto"])
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    b = cluster.start("hp-b")
    chk = cluster.checker()
    a.signal(signal.SIGTERM)
    assert a.wait(5.0) == 0
    assert a.log_count("no live candidate known; releasing") == 1
    wait_until(b.is_leader, JITTER * RP + SLACK, what="b leads")
    chk.assert_s1()


# -- co-tenants with LeaseCandidate create rights (security review M3, M4,
# L3).  Each test below failed before its fix.

def microtime(t):
    """Unix time t as a MicroTime string."""
    return datetime.datetime.fromtimestamp(
        t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def cand_requests(api, inst, since):
    """inst's LeaseCandidate requests received since `since`."""
    return [e for e in api.requests(token=inst.token, since=since)
            if "/leasecandidates" in e["path"]]


def acks_ping(api, name, within):
    """Ping name's candidate; whether it renews within `within` s."""
    ping = api.ping_candidate(NS, name)["spec"]["pingTime"]
    try:
        wait_until(lambda: api.candidates(NS)[name]["spec"]["renewTime"] >
                   ping, within, what="%s acks the ping" % name)
    except AssertionError:
        return False
    return True


def test_foreign_candidates_do_not_stop_the_pings(cluster):
    """M3: candidates of other Leases with what the API takes but leaderd
    once refused (64+ bytes of build metadata; a 138-byte custom
    strategy; a prerelease past what leaderd keeps) and one of our Lease
    with long build metadata: leaderd still answers every ping, and says
    coordinated: true."""
    api = cluster.api
    api.enable_candidates()
    api.plant_candidate(NS, "aa-meta", "other-lease",
                        binary_version="1.2.3+" + "b" * 70,
                        emulation_version="1.2.3+" + "e" * 300)
    api.plant_candidate(NS, "aa-strategy", "other-lease",
                        strategy="a" * 63 + "." + "b" * 60 +
                        ".example.com/x")
    api.plant_candidate(NS, "aa-pre", "other-lease",
                        binary_version="1.2.3-" + "p" * 400)
    api.plant_candidate(NS, "aa-ours-meta", cluster.lock,
                        binary_version="1.0.0+" + "m" * 100,
                        emulation_version="1.0.0")
    a = cluster.start("fc-a", args=coordinated("1.0.0"))
    wait_until(lambda: a.leader()["coordinated"] is True, 3.0,
               what="a says coordinated")
    time.sleep(2 * RP)
    assert acks_ping(api, "fc-a", 2 * RP + SLACK)
    assert a.leader()["coordinated"] is True
    assert acks_ping(api, "fc-a", 2 * RP + SLACK)


def test_candidate_reads_failing_say_coordinated_false(cluster):
    """M3: while our candidate cannot be read, /leader says coordinated:
    false with the reason, and true again once it can."""
    api = cluster.api
    api.enable_candidates()
    a = cluster.start("fr-a", args=coordinated("1.0.0"))
    wait_until(lambda: a.leader()["coordinated"] is True, 3.0,
               what="a says coordinated")
    f = api.fault("status", status=500, methods=["GET"],
                  path_prefix="/apis/coordination.k8s.io/v1beta1/")
    wait_until(lambda: a.leader()["coordinated"] is False, 4 * RP + SLACK,
               what="a says not coordinated")
    assert "LeaseCandidate" in a.leader()["coordinated_reason"]
    api.clear_fault(f)
    wait_until(lambda: a.leader()["coordinated"] is True, 8 * RP + SLACK,
               what="a says coordinated again")


def test_many_candidates_no_spin(cluster):
    """M4: 40 candidates of our Lease whose names sort before ours:
    leaderd still finds its own (it acks a ping), and its LeaseCandidate
    requests stay bounded (a safety bound, not a speed target: before
    the fix it made thousands a second)."""
    api = cluster.api
    api.enable_candidates()
    for i in range(40):
        api.plant_candidate(NS, "a%02d" % i, cluster.lock)
    a = cluster.start("zz-spin", args=coordinated("1.0.0"))
    time.sleep(1.0)
    t0 = time.monotonic()
    time.sleep(5.0)
    n = len(cand_requests(api, a, t0))
    # One read of ours a retry_period (10 in 5 s), 20 more allowed.
    assert n < 5.0 / RP + 20, n
    assert acks_ping(api, "zz-spin", 2 * RP + SLACK)


def test_candidate_errors_back_off(cluster):
    """M4: every failing candidate request is retried with a growing
    delay and logged; never a loop without delay."""
    api = cluster.api
    api.enable_candidates()
    a = cluster.start("eb-a", args=coordinated("1.0.0"))
    wait_until(lambda: a.leader()["coordinated"] is True, 3.0,
               what="a says coordinated")
    # Our candidate goes, and every create of it conflicts: the create,
    # read, create cycle must meet the backoff.
    f = api.fault("status", status=409, methods=["POST"],
                  path_prefix="/apis/coordination.k8s.io/v1beta1/")
    with api._lock:
        del api._cands[(NS, "eb-a")]
    t0 = time.monotonic()
    time.sleep(5.0)
    n = len(cand_requests(api, a, t0))
    assert n < 5.0 / RP + 20, n
    assert a.log_count("LeaseCandidate") >= 1
    api.clear_fault(f)
    wait_until(lambda: "eb-a" in api.candidates(NS), 20.0,
               what="a creates its candidate again")


def test_handover_auto_skips_candidates_that_do_not_ack(cluster):
    """L3: handover: auto never picks a candidate renewed in the future
    (beyond a small skew), nor one that has not answered its last ping,
    however old its versions; it picks the live one."""
    api = cluster.api
    api.enable_candidates()
    api.plant_candidate(NS, "zz-ghost", cluster.lock,
                        binary_version="0.0.1", emulation_version="0.0.1",
                        renew_time="2100-01-01T00:00:00.000000Z")
    t = time.time()
    api.plant_candidate(NS, "zz-mute", cluster.lock,
                        binary_version="0.0.1", emulation_version="0.0.1",
                        renew_time=microtime(t - 20), ping_time=
                        microtime(t - 10))
    a = cluster.start("hg-a", args=coordinated("1.0.0", "--handover", "auto"))
    b = cluster.start("hg-b", args=coordinated("1.0.0", "--handover", "auto"))
    chk = cluster.checker()
    wait_until(lambda: {"hg-a", "hg-b"} <= set(api.candidates(NS)), 3.0,
               what="both candidates")
    assign(cluster, "hg-a")
    wait_until(a.is_leader, 2.0, interval=0.01, what="a leads")
    time.sleep(2 * RP + 0.5)    # a lists the others
    a.signal(signal.SIGTERM)
    assert a.wait(5.0) == 0
    assert a.log_count("handover auto: handing the lease to hg-b") == 1, \
        a.log()
    wait_until(b.is_leader, 2.0, interval=0.01, what="b leads")
    assert cluster.lease()["spec"]["holderIdentity"] == "hg-b"
    chk.assert_s1()


def test_restart_reads_its_candidate_at_once(cluster):
    """M4's backoff spares the normal restart: the candidate our last
    process left makes the create 409, read and renewed at once."""
    api = cluster.api
    api.enable_candidates()
    api.plant_candidate(NS, "rs-a", cluster.lock,
                        renew_time=microtime(time.time() - 60))
    t0 = time.monotonic()
    a = cluster.start("rs-a", args=coordinated("1.0.0"))
    wait_until(lambda: a.leader()["coordinated"] is True, 2 * RP,
               what="a says coordinated")
    verbs = [e["method"] for e in cand_requests(api, a, t0)][:3]
    assert verbs == ["POST", "GET", "PUT"], verbs
    assert a.log_count("409") == 1
    assert a.log_count("reading it") == 1
    assert acks_ping(api, "rs-a", 2 * RP + SLACK)


def test_failing_list_leaves_handover_auto_without_a_pick(cluster):
    """M3: the list (handover: auto's, while leading) failing does not
    touch the pings: coordinated stays true, the failure is logged with
    its backoff, and on SIGTERM the leader releases."""
    api = cluster.api
    api.enable_candidates()
    a = cluster.start("fl-a", args=coordinated("1.0.0", "--handover", "auto"))
    b = cluster.start("fl-b", args=coordinated("1.0.0"))
    wait_until(lambda: {"fl-a", "fl-b"} <= set(api.candidates(NS)), 3.0,
               what="both candidates")
    api.fault("status", status=500, methods=["GET"],
              path="/apis/coordination.k8s.io/v1beta1/namespaces/%s/"
              "leasecandidates" % NS)
    assign(cluster, "fl-a")
    wait_until(a.is_leader, 2.0, interval=0.01, what="a leads")
    wait_until(lambda: a.log_count("LeaseCandidate list: 500") >= 1,
               2 * RP + SLACK, what="the list's failure logged")
    assert a.leader()["coordinated"] is True
    assert acks_ping(api, "fl-a", 2 * RP + SLACK)
    a.signal(signal.SIGTERM)
    assert a.wait(5.0) == 0
    assert a.log_count("no live candidate known; releasing") == 1
    assert cluster.lease()["spec"]["holderIdentity"] == ""
    assert not b.is_leader()
