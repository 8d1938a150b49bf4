"""Several elections in one leaderd (elections: in the config).

Three leaderd, each in three elections (the top-level lock and two
elections: items): each election has one leader, and never two at
once; GET /leaders and /leader/NAME agree with it; POST
/leader/NAME/release moves that election only; SIGTERM releases every
election held; the streams carry their election; /metrics labels each
election's series with its name."""

import json
import signal
import socket
import time

from harness import (ElectionView, LeadershipChecker, RETRY_PERIOD as RP,
                     wait_until)

SLACK = 1.5
JITTER = 2.2


def add_elections(inst, lock):
    """Two more elections: "b" (named by its lock) and "c" (named)."""
    with open(inst.config_path, "a") as f:
        f.write("elections:\n"
                "  - lock: {type: leases, namespace: default, name: b-%s}\n"
                "    name: b\n"
                "  - name: c\n"
                "    lock:\n"
                "      name: c-%s\n"
                "    lease_duration: 4s\n" % (lock, lock))


def names(lock):
    return [lock, "b", "c"]


def leases(lock):
    return {lock: lock, "b": "b-" + lock, "c": "c-" + lock}


def start(cluster, n):
    insts = []
    for i in range(n):
        inst = cluster.new("e-%d" % i)
        add_elections(inst, cluster.lock)
        insts.append(inst.start())
    return insts


def leaders_of(insts):
    """Election name -> the instances that say they lead it now."""
    out = {}
    for inst in insts:
        if not inst.alive():
            continue
        try:
            st, body = inst.get_json("/leaders")
        except (OSError, ValueError):
            continue
        assert st == 200
        for name, v in body.items():
            if v["is_leader"]:
                out.setdefault(name, []).append(inst.name)
    return out


def each_one_leader(insts, lock):
    ls = leaders_of(insts)
    return all(len(ls.get(n, [])) == 1 for n in names(lock)) and ls


def checkers(insts, lock):
    return {n: LeadershipChecker([ElectionView(i, n) for i in insts]).start()
            for n in names(lock)}


def test_each_election_one_leader_and_routes(api, cluster):
    insts = start(cluster, 3)
    chk = checkers(insts, cluster.lock)
    try:
        ls = wait_until(lambda: each_one_leader(insts, cluster.lock),
                        JITTER * RP + SLACK + 3.0, what="a leader each")
        # Each Lease names the leader its election reports.
        for n, lease in leases(cluster.lock).items():
            obj = api.get_lease("default", lease)
            assert obj["spec"]["holderIdentity"] == ls[n][0], (n, obj)
        a = insts[0]
        st, all_ = a.get_json("/leaders")
        assert st == 200 and list(all_) == names(cluster.lock)
        for n in names(cluster.lock):
            st, one = a.get_json("/leader/" + n)
            assert st == 200 and one["election"] == n
            assert one["lock"] == "leases/default/" + leases(cluster.lock)[n]
            assert one["name"] == all_[n]["name"]
        # /leader is the first election's, byte for byte /leader/FIRST's.
        _, first = a.get_json("/leader")
        _, again = a.get_json("/leader/" + cluster.lock)
        assert first["election"] == cluster.lock
        assert first["lock"] == again["lock"] and first["name"] == again[
            "name"]
        # The second election inherits the durations; the third has its own.
        assert all_["b"]["lease_duration_seconds"] == 3
        assert all_["c"]["lease_duration_seconds"] == 4
        assert a.get_status("/leader/nope") == 404
        st, _, _ = a.request("/leader/b/release")
        assert st == 405
        time.sleep(1.0)
    finally:
        for c in chk.values():
            c.stop()
    for c in chk.values():
        c.assert_s1()
        assert c.claims(), "no leader seen"


def test_release_moves_that_election_only(api, cluster):
    insts = start(cluster, 3)
    ls = wait_until(lambda: each_one_leader(insts, cluster.lock),
                    JITTER * RP + SLACK + 3.0, what="a leader each")
    chk = checkers(insts, cluster.lock)
    holder = {n: api.get_lease("default", l)["spec"]["holderIdentity"]
              for n, l in leases(cluster.lock).items()}
    rv = {n: api.get_lease("default", l)["metadata"]["resourceVersion"]
          for n, l in leases(cluster.lock).items()}
    b_leader = next(i for i in insts if i.name == ls["b"][0])
    st, _, body = b_leader.request("/leader/b/release", method="POST",
                                   timeout=6.0)
    body = json.loads(body)
    assert st == 200 and body["released"] is True, body
    assert b_leader.log_count("lease default/b-%s: stepping down"
                              % cluster.lock) == 1
    # Another instance takes b; b's old leader cools down.
    wait_until(lambda: (each_one_leader(insts, cluster.lock) or {}).get(
        "b", [b_leader.name])[0] != b_leader.name,
        JITTER * RP + SLACK + 2.0, what="b moves")
    # The other two elections kept their leader throughout.
    for n in (cluster.lock, "c"):
        obj = api.get_lease("default", leases(cluster.lock)[n])
        assert obj["spec"]["holderIdentity"] == holder[n]
        assert int(obj["spec"]["leaseTransitions"] or 0) == 0
        assert int(obj["metadata"]["resourceVersion"]) >= int(rv[n])
    for c in chk.values():
        c.stop()
        c.assert_s1()
    # The first election's own step-down path is unchanged.
    st, _, body = b_leader.request("/leader/c/release", method="POST",
                                   timeout=6.0)
    if b_leader.name != holder["c"]:
        assert st == 409, body


def test_sigterm_releases_every_election(api, cluster):
    (a,) = start(cluster, 1)
    wait_until(lambda: each_one_leader([a], cluster.lock),
               JITTER * RP + SLACK + 3.0, what="a leads all three")
    a.signal(signal.SIGTERM)
    assert a.wait(6.0) == 0
    for n, lease in leases(cluster.lock).items():
        obj = api.get_lease("default", lease)
        assert obj["spec"]["holderIdentity"] == "", (n, obj)
    assert a.log_count("released lease") == 3


def read_events(inst, path, n, timeout=4.0):
    """The first n data events of a stream, as dicts."""
    s = socket.create_connection(("127.0.0.1", inst.port), timeout=timeout)
    try:
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path).encode())
        buf = b""
        end = time.monotonic() + timeout
        while b"\r\n\r\n" not in buf or \
                buf.split(b"\r\n\r\n", 1)[1].count(b"\n\n") < n:
            if time.monotonic() > end:
                break
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    body = buf.split(b"\r\n\r\n", 1)[1]
    return [json.loads(line[6:]) for line in body.split(b"\n")
            if line.startswith(b"data: ")][:n]


def test_streams_and_metrics_carry_the_election(api, cluster):
    (a,) = start(cluster, 1)
    wait_until(lambda: each_one_leader([a], cluster.lock),
               JITTER * RP + SLACK + 3.0, what="a leads all three")
    (ev,) = read_events(a, "/leader/watch", 1)
    assert ev["election"] == cluster.lock and ev["is_leader"] is True
    (ev,) = read_events(a, "/leader/b/watch", 1)
    assert ev["election"] == "b" and ev["is_leader"] is True
    evs = read_events(a, "/leaders/watch", 3)
    assert [e["election"] for e in evs] == names(cluster.lock)
    st, _, body = a.request("/metrics")
    text = body.decode()
    assert st == 200
    for n in names(cluster.lock):
        assert 'leader_election_master_status{name="%s"} 1' % n in text
        assert 'leaderd_transitions_total{name="%s"}' % n in text
    # The API requests are the process's: one series per verb and code.
    creates = [ln for ln in text.splitlines()
               if ln.startswith('leaderd_api_requests_total{verb="create"')]
    assert len(creates) == 1 and int(creates[0].split()[-1]) >= 3, creates


def test_every_election_records_its_event(api, cluster):
    """Three elections won at once each get their "became leader" Event,
    though the one Events client sends one at a time: the Events API is
    slowed so that all three wins come while the first is in flight."""
    api.fault("delay", delay_ms=400,
              path_prefix="/api/v1/namespaces/default/events")
    (a,) = start(cluster, 1)
    wait_until(lambda: each_one_leader([a], cluster.lock),
               JITTER * RP + SLACK + 3.0, what="a leads all three")

    def became():
        return sorted(e["involvedObject"]["name"] for e in api.events()
                      if e.get("message") == a.identity + " became leader")
    want = sorted(leases(cluster.lock).values())
    wait_until(lambda: became() == want, 3 * 0.4 + SLACK,
               what="three became-leader Events")
    for e in api.events():
        assert e["involvedObject"]["kind"] == "Lease", e
    time.sleep(0.5)
    assert became() == want, "an Event twice"
    st, _, body = a.request("/metrics")
    assert st == 200
    assert '\nleaderd_events_dropped_total{name="%s"} 0\n' % cluster.lock \
        in body.decode()


def test_leaders_watch_carries_every_change(api, cluster):
    """GET /leaders/watch: one event per election now, then one on every
    change of any (docs/api.md).  Opened before a leads anything, it
    must then carry each election's "is_leader": true; and a release of
    election b, its "false"."""
    (a,) = start(cluster, 1)
    s = socket.create_connection(("127.0.0.1", a.port), timeout=8.0)
    try:
        s.sendall(b"GET /leaders/watch HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        wait_until(lambda: each_one_leader([a], cluster.lock),
                   JITTER * RP + SLACK + 3.0, what="a leads all three")
        st, _, body = a.request("/leader/b/release", method="POST",
                                timeout=6.0)
        assert st == 200, body
        buf, end = b"", time.monotonic() + 3.0
        while time.monotonic() < end:
            s.settimeout(max(0.05, end - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    evs = [json.loads(line[6:]) for line in buf.split(b"\n")
           if line.startswith(b"data: ")]
    seen = {(e["election"], e["is_leader"]) for e in evs}
    for n in names(cluster.lock):
        assert (n, True) in seen, (n, [(e["election"], e["is_leader"])
                                       for e in evs])
    assert ("b", False) in seen, evs
