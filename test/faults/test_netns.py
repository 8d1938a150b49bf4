"""Kernel partitions (chaos rows K1-K4): each leaderd in its own network
namespace, joined to the test API server (bound on a bridge, in a
private 10.x range the test makes) by a veth pair.  The leader's
namespace is cut with nft, or its link set down, for LD + 2s, then
healed: real retransmits, resets and half-open connections where the
fault proxy (test_network.py) imitates them.

K1  symmetric drop (both ways)              proxy twin: F5 (blackhole)
K2  one-way drop: requests reach the        proxy twin: F7 (one answer
    server, every answer is lost                dropped after forwarding)
K3  reject with a TCP reset                 proxy twin: F9 (RST)
K4  link down (eth0 of the namespace)       proxy twin: F5

`make faults` runs K2 as the smoke; `make chaos` (CHAOS_FULL=1) all four.
Timings: lease_duration 3s, renew_deadline 2s, retry_period 500ms,
request_timeout 1s (faultlib.py)."""

import os
import time

import pytest

import chaoslib
import fakeapi
from cluster import FaultCluster
from faultlib import (FAILOVER, LD, POLL, RD, RP, RT, SLACK, START,
                      assert_waited_ld, terms_ok, wait_takeover, wait_until)

FULL = os.environ.get("CHAOS_FULL") == "1"
WHY = chaoslib.netns_mode()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

# The proxy rows' figures (docs/RELIABILITY.md, "Fault matrix") beside
# which each kernel row is reported.
TWIN = {"drop": "F5", "oneway": "F7", "reject": "F9", "linkdown": "F5"}
ROW = {"drop": "K1", "oneway": "K2", "reject": "K3", "linkdown": "K4"}


@pytest.fixture
def net(certdir, tmp_path, lock_name, request):
    """(bridge, API server on the bridge, cluster of namespaced leaderds)."""
    br = chaoslib.Bridge()
    api = None
    c = None
    try:
        crt, key = fakeapi.issue_cert(certdir, "bridge-" + br.tag,
                                      san="IP:%s" % br.host)
        api = fakeapi.FakeAPI(certdir=certdir, host=br.host).start()
        api.set_server_cert(crt, key)
        c = FaultCluster(api, None, str(tmp_path), lock_name, request.node)
        yield br, api, c
    finally:
        if c is not None:
            c.close()
        if api is not None:
            api.stop()
        br.close()


def _start(br, api, cluster, n):
    ins = []
    for i in range(n):
        ns = br.namespace()
        name = "ns-%d" % i
        inst = cluster.new(name, proxied=False, http=False,
                           unix="/tmp/ld-%s-%s.sock" % (br.tag, i))
        api.write_kubeconfig(inst.kubeconfig, token_file=inst.token_path,
                             user=name, namespace=inst.namespace,
                             server=api.url)
        inst.wrap = ns.wrap()
        inst.ns = ns
        ins.append(inst.start(timeout=START + 3.0))
    chk = cluster.checker(ins)
    leader = cluster.wait_single_leader(POLL + START + 2.0, ins)
    return ins, chk, leader


def _cut(inst, kind, api):
    if kind == "linkdown":
        inst.ns.ip("link", "set", "eth0", "down")
    else:
        inst.ns.nft(chaoslib.cut_rules(kind, api.host, api.port))


def _heal(inst, kind):
    if kind == "linkdown":
        inst.ns.ip("link", "set", "eth0", "up")
    else:
        inst.ns.nft("delete table inet chaos\n")


@pytest.mark.parametrize("kind", ["drop", "oneway", "reject", "linkdown"]
                         if FULL else ["oneway"])
def test_k_partition_of_the_leader(net, measure, kind):
    """K1-K4: cut the leader's namespace from the API server for LD + 2s,
    then heal.  Bound: S2 (the leader false no later than RD after its
    last good renew arrived, +0.25s sampling); a follower leads no sooner
    than LD after the leader's last write (a renew that landed unanswered
    counts) and within LD + 2.2*RP + 1s of the cut; once healed the old
    leader follows the new one within 2.2*RP + RT + 1s; S1 sampled and
    on the server's history, every claim backed by a write within RD."""
    br, api, cluster = net
    ins, chk, old = _start(br, api, cluster, 3)
    time.sleep(2 * RP)
    t_fault = time.monotonic()
    _cut(old, kind, api)
    s = wait_takeover(chk, t_fault, [old.name], FAILOVER + 1.0)
    t_ok, t_false, _ = chk.assert_s2(old, t_fault, RD)
    assert_waited_ld(s, old)
    took = s[1] - t_fault
    assert took <= FAILOVER
    last = chk.last_true(old.name, since=t_fault - 1.0)
    leaderless = s[0] - (last[1] if last else t_fault)
    new = [i for i in ins if i.name == s[2]][0]
    landed = [w for w in old.writes() if w["t_recv"] > t_fault]
    time.sleep(max(0.0, t_fault + LD + 2.0 - time.monotonic()))
    t_heal = time.monotonic()
    _heal(old, kind)
    wait_until(lambda: (v := old.leader()) and v["name"] == new.identity
               and not v["is_leader"], POLL + RT + SLACK,
               what="the old leader to follow %s after the heal" % new.name)
    healed = time.monotonic() - t_heal
    time.sleep(2 * RP)
    assert old.alive()
    chk.assert_s1()
    terms_ok(cluster)
    for i in ins:
        chk.assert_backed(i, RD)
    assert chk.takeover(t_heal, [new.name]) is None, \
        "leadership moved again after the heal"
    row, twin = ROW[kind], TWIN[kind]
    measure(row, "%s: leader false after its last good renew (%s)"
            % (kind, twin), t_false - t_ok, bound=RD + 0.25)
    measure(row, "%s: takeover after the cut (%s)" % (kind, twin), took,
            bound=FAILOVER)
    measure(row, "%s: leaderless (sampled)" % kind, leaderless)
    measure(row, "%s: old leader follows after the heal" % kind, healed,
            bound=POLL + RT + SLACK)
    measure(row, "%s: writes that landed after the cut" % kind,
            len(landed), unit="")
