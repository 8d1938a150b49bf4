"""The fencing token in /leader (fencing_token) and in the
X-Leaderd-Fencing-Token header: the same on every instance for one term,
strictly greater (as a string) for each new term of the same Lease,
never repeated when the Lease is deleted and created again."""

import re

from harness import (LEASE_DURATION as LD, RETRY_PERIOD as RP, wait_until)

SLACK = 1.5
JITTER = 2.2
TOKEN = re.compile(r"^\d{10}-[0-9a-f-]{36}$")
NS = "default"


def tokens(ins):
    """{name: (json token, header token)} of the live instances."""
    out = {}
    for i in ins:
        if not i.alive():
            continue
        st, h, body = i.request("/leader")
        assert st == 200
        import json
        out[i.name] = (json.loads(body)["fencing_token"],
                       h.get("x-leaderd-fencing-token"))
    return out


def agreed_token(cluster, ins, timeout=3.0):
    """Wait until every live instance answers the same token in the body
    and the header, and it matches the Lease; return it."""
    def same():
        t = tokens(ins)
        vals = {v for pair in t.values() for v in pair}
        if len(vals) != 1:
            return None
        tok = vals.pop()
        lease = cluster.lease()
        if not tok or not lease:
            return None
        want = "%010d-%s" % (lease["spec"].get("leaseTransitions", 0),
                             lease["metadata"]["uid"])
        return tok if tok == want else None
    return wait_until(same, timeout, what="one agreed fencing token")


def test_token_agreed_and_increasing_across_terms(api, cluster):
    ins = cluster.start_n(3)
    leader = cluster.wait_single_leader(JITTER * RP + SLACK + 2.0)
    seen = [agreed_token(cluster, ins)]
    assert TOKEN.match(seen[0]), seen[0]
    for _ in range(2):
        leader.terminate()
        assert leader.wait(5.0) == 0
        live = [i for i in ins if i.alive()]
        leader = cluster.wait_single_leader(JITTER * RP + SLACK + 2.0, live)
        seen.append(agreed_token(cluster, live))
    # Strictly increasing as plain strings, one Lease uid throughout.
    assert seen == sorted(seen) and len(set(seen)) == len(seen), seen
    assert len({t.split("-", 1)[1] for t in seen}) == 1
    # A restarted instance with the same identity starts a new term.
    old = leader
    again = cluster.new(old.name + "-again", identity=old.identity)
    old.kill9()
    again.start()
    live = [i for i in cluster.instances if i.alive()]
    cluster.wait_single_leader(LD + JITTER * RP + SLACK + 2.0, live)
    t = agreed_token(cluster, live)
    assert t > seen[-1], (t, seen)


def test_token_not_repeated_after_lease_recreated(api, cluster):
    a = cluster.start("fa")
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="fa to lead")
    t1 = agreed_token(cluster, [a])
    a.terminate()
    assert a.wait(5.0) == 0
    api.delete_lease(NS, cluster.lock)
    b = cluster.start("fb")
    wait_until(b.is_leader, JITTER * RP + SLACK + 2.0, what="fb to lead")
    t2 = agreed_token(cluster, [b])
    assert t2 != t1
    assert t2.split("-", 1)[0] == "0000000000"      # a new Lease object
    assert t2.split("-", 1)[1] != t1.split("-", 1)[1]


def test_no_token_while_the_lease_is_free(api, cluster):
    a = cluster.start("fa")
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="fa to lead")
    b = cluster.start("fb")
    wait_until(lambda: b.leader() and b.leader()["name"] == "fa", 3.0,
               what="fb to see fa")
    assert b.leader()["fencing_token"] == agreed_token(cluster, [a, b])
    # fb cannot take the lease: it sees the released, holderless record.
    f = api.fault("status", token=b.token, status=503, methods=["PUT"])
    a.terminate()
    assert a.wait(5.0) == 0
    wait_until(lambda: b.leader() and b.leader()["name"] == "", 3.0,
               what="fb to see the release")
    st, h, _ = b.request("/leader")
    assert b.leader()["fencing_token"] == ""
    assert "x-leaderd-fencing-token" not in h
    api.clear_fault(f)
    wait_until(b.is_leader, JITTER * RP + SLACK + 2.0, what="fb to lead")
    agreed_token(cluster, [b])
