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
