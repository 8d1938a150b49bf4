"""Shard groups (shards: {group, count}): several leaderd split N shard
Leases evenly, each shard owned by one member at a time.

Every test samples every instance's GET /shards with a ShardChecker and
asserts that no shard is ever reported owned by two instances at once;
each one then checks a change of membership: the initial balance (every
member floor(N/M)..ceil(N/M)), a SIGTERM (its shards released, its member
Lease deleted), a kill -9 (its shards taken once they expire), a member
added (only the newcomer gains: nothing moves between the others), a
member paused past the lease (it reports nothing owned on resume), and
the API server failing for longer than the lease; in run mode, that a
shard leaves the command before it is handed over or released; and that
members follow the group through one watch by label selector after one
list, falling back to the list on 410 Gone or a broken stream."""

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.parse

import pytest

from harness import (LEASE_DURATION as LD, RETRY_PERIOD as RP, Leaderd,
                     leaderd_binary,
                     read_http_response, wait_until)
from shardkit import ShardChecker, member_config, quota_ok, shards, views_of

# Balance is reached in a few list periods after membership settles; a
# member's departure by expiry needs its lease_duration first.
BALANCE = 10 * RP + 2 * LD + 5.0
LABEL_GROUP = "leaderd.io/shard-group"
OUTAGE = 30.0           # seconds the API fails in the outage test


def group_of(request):
    return "g%d" % (abs(hash(request.node.name)) % 100000)


def member(api, tmp_path, name, group, count, **kw):
    inst = Leaderd(api, str(tmp_path), name, "unused", **kw)
    return member_config(inst, group, count)


@pytest.fixture
def group(api, tmp_path, request):
    """start(n, count) -> members started; all stopped at the end, each
    having to exit 0 on SIGTERM; the checker's verdict asserted."""
    made, chk = [], ShardChecker([])
    g = group_of(request)

    def start(n, count, prefix="m"):
        out = []
        for _ in range(n):
            inst = member(api, tmp_path, "%s%d" % (prefix, len(made)), g,
                          count)
            made.append(inst)
            out.append(inst.start())
            chk.add(inst)
        return out
    start.name = g
    start.checker = chk
    start.made = made
    chk.start()
    yield start
    chk.stop()
    bad = [i.name for i in made if i.cleanup(grace=6.0) not in (None, 0)]
    chk.assert_safe()
    assert not bad, "did not exit 0 on SIGTERM: %s" % bad


def balanced(insts, n):
    v = views_of([i for i in insts if i.alive()])
    return quota_ok(v, n) and v


def test_initial_balance_and_api(api, group):
    n = 24
    insts = group(4, n)
    v = wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    a = insts[0]
    d = v[a.name]
    assert d["group"] == group.name and d["count"] == n
    assert d["is_member"] is True and d["identity"] == a.identity
    assert sorted(d["members"]) == sorted(i.identity for i in insts)
    # Each shard Lease names its owner, carries the group's label, and
    # the fencing token is its transitions and uid (as /leader's).
    for i in insts:
        for s in v[i.name]["owned"]:
            obj = api.get_lease("default", "%s-%d" % (group.name, s))
            assert obj["spec"]["holderIdentity"] == i.identity
            assert obj["metadata"]["labels"][LABEL_GROUP] == group.name
            tok = v[i.name]["fencing_tokens"][str(s)]
            assert tok == "%010d-%s" % (obj["spec"].get(
                "leaseTransitions", 0), obj["metadata"]["uid"])
    m = api.get_lease("default", "%s-member-%s" % (group.name, a.identity))
    assert m["spec"]["holderIdentity"] == a.identity
    assert m["metadata"]["labels"] == {LABEL_GROUP: group.name,
                                       "leaderd.io/shard-member": "true"}
    # A blocking read with the current index waits; a stale one answers.
    st, hdrs, body = a.request("/shards")
    idx = int(hdrs["x-leaderd-index"])
    assert json.loads(body)["index"] == idx
    t0 = time.monotonic()
    st, hdrs, _ = a.request("/shards?wait=1s&index=%d" % idx, timeout=3)
    assert st == 200 and time.monotonic() - t0 >= 0.9
    st, _, _ = a.request("/shards?wait=1s&index=%d" % (idx - 1), timeout=3)
    assert st == 200
    st, _, body = a.request("/shards?wait=xx&index=1")
    assert st == 400 and b"wait" in body
    # The stream starts with the state now.
    s = socket.create_connection(("127.0.0.1", a.port), timeout=3)
    s.sendall(b"GET /shards/watch HTTP/1.1\r\nHost: localhost\r\n\r\n")
    buf = b""
    while b"\n\n" not in buf.partition(b"\r\n\r\n")[2]:
        buf += s.recv(65536)
    s.close()
    ev = buf.partition(b"\r\n\r\n")[2].split(b"\n\n")[0]
    assert ev.startswith(b"data: ")
    assert set(json.loads(ev[6:])) >= {"group", "count", "members", "owned",
                                       "fencing_tokens", "index"}
    assert b"text/event-stream" in buf
    # Metrics: the group's gauges and each shard's master status.
    _, _, met = a.request("/metrics")
    met = met.decode()
    owned_now = len(shards(a)["owned"])
    mname = "%s-member-%s" % (group.name, a.identity)
    assert 'leaderd_shards_owned{group="%s",name="%s"} %d' % (
        group.name, mname, owned_now) in met
    assert 'leaderd_shard_members{group="%s",name="%s"} 4' % (
        group.name, mname) in met
    s0 = d["owned"][0]
    assert 'leader_election_master_status{name="%s-%d"} 1' % (
        group.name, s0) in met
    # The group's list counts as a list (operations.md's verbs), not
    # as "other".
    assert 'leaderd_api_requests_total{verb="list",code="200",name="%s"}' \
        % mname in met, met
    assert 'verb="other"' not in met, met


def test_sigterm_releases_and_deletes_member(api, group):
    n = 12
    insts = group(3, n)
    v = wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    gone = insts[1]
    had = v[gone.name]["owned"]
    gone.terminate()
    assert gone.wait(5) == 0
    # Its shards were released (holder "") before it exited, and its
    # member Lease deleted.
    for s in had:
        rel = [h for h in api.history(ns="default", name="%s-%d" % (
            group.name, s), token=gone.token)
            if h["method"] == "PUT" and not h["spec"].get("holderIdentity")]
        assert rel, "shard %d not released by %s" % (s, gone.name)
    assert api.get_lease("default", "%s-member-%s" % (
        group.name, gone.identity)) is None
    rest = [insts[0], insts[2]]
    v = wait_until(lambda: balanced(rest, n), BALANCE, what="rebalance")
    assert sorted(v[insts[0].name]["members"]) == sorted(
        i.identity for i in rest)


def test_kill9_shards_taken_after_expiry(api, group):
    n = 12
    insts = group(3, n)
    v = wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    dead = insts[2]
    had = set(v[dead.name]["owned"])
    dead.kill9()
    rest = insts[:2]
    v = wait_until(lambda: balanced(rest, n), BALANCE, what="rebalance")
    taken = set(v[rest[0].name]["owned"]) | set(v[rest[1].name]["owned"])
    assert had <= taken
    # Nobody wrote over a dead member's shard before it expired: each
    # takeover's send time is at least lease_duration after the dead
    # one's last renew of it (fakeapi stamps both).
    for s in had:
        hist = api.history(ns="default", name="%s-%d" % (group.name, s))
        last = max(h["t_recv"] for h in hist if h["token"] == dead.token)
        later = [h for h in hist if h["t_recv"] > last]
        assert later and later[0]["t_recv"] - last >= LD - 0.05, (s, later)


def test_member_added_only_newcomer_gains(api, group):
    n = 20
    insts = group(4, n)
    before = wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    new = group(1, n)[0]
    allm = insts + [new]
    after = wait_until(lambda: balanced(allm, n), BALANCE,
                       what="rebalance with a fifth member")
    moved = 0
    for i in insts:
        old, now = set(before[i.name]["owned"]), set(after[i.name]["owned"])
        assert now <= old, "%s gained %r" % (i.name, now - old)
        moved += len(old - now)
    assert moved == len(after[new.name]["owned"]) == n // 5


def test_paused_member_owns_nothing_on_resume(api, group):
    n = 12
    insts = group(3, n)
    wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    p = insts[0]
    assert shards(p)["owned"]
    s = socket.create_connection(("127.0.0.1", p.port), timeout=10)
    p.signal(signal.SIGSTOP)
    try:
        time.sleep(0.05)
        s.sendall(b"GET /shards HTTP/1.1\r\nHost: localhost\r\n\r\n")
        rest = insts[1:]
        wait_until(lambda: balanced(rest, n), BALANCE,
                   what="the others to take the paused one's shards")
    finally:
        p.signal(signal.SIGCONT)
    st, _, body, _ = read_http_response(s, timeout=5)
    s.close()
    assert st == 200
    assert json.loads(body)["owned"] == [], body
    wait_until(lambda: balanced(insts, n), BALANCE, what="rebalance")


def test_free_shards_claimed_at_the_quota_rate(api, group):
    """A member that finds shards free claims them at its quota per
    retry_period (two at once, then one each retry_period / quota), not
    all in one instant: after an outage longer than the lease every
    shard is free together, and the group claims them back at the rate
    it renews them (docs/shards.md, "Claims paced")."""
    n = 8
    insts = group(1, n)
    wait_until(lambda: balanced(insts, n), BALANCE, what="every shard owned")
    first = {}
    for h in api.history(ns="default"):
        if re.fullmatch(r"%s-\d+" % group.name, h["name"]) and \
                h["method"] in ("POST", "PUT") and h["name"] not in first:
            first[h["name"]] = h["t_recv"]
    assert len(first) == n, first
    ts = sorted(first.values())
    # Six claims after the first two, one per RP / n at the least.
    least = (n - 2) * RP / n
    assert ts[-1] - ts[0] >= 0.9 * least, \
        "%d free shards claimed within %.3fs (paced: at least %.3fs)" % (
            n, ts[-1] - ts[0], least)


def test_api_outage_no_two_owners(api, group):
    n = 12
    insts = group(3, n)
    wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    f = api.fault("status", status=500)
    t0 = time.monotonic()
    try:
        # Past renew_deadline nobody may say it owns anything, for as
        # long as the API fails: 30 s, ten lease durations.
        wait_until(lambda: all(shards(i) is not None and
                               not shards(i)["owned"] for i in insts),
                   LD + 2.0, what="every claim to lapse")
        while time.monotonic() < t0 + OUTAGE:
            assert all(not shards(i)["owned"] for i in insts)
            time.sleep(0.5)
    finally:
        api.clear_fault(f)
    wait_until(lambda: balanced(insts, n), BALANCE + LD, what="rebalance")


CHILD = r'''
import os, signal, sys, time
out = sys.argv[1]
def note(tag):
    with open(out, "a") as f:
        f.write("%d %s %s\n" % (os.getpid(), tag,
                                os.environ.get("LEADERD_SHARDS", "-")))
signal.signal(signal.SIGHUP, lambda *a: note("hup"))
signal.signal(signal.SIGTERM, lambda *a: (note("term"), sys.exit(0)))
note("start")
while True:
    time.sleep(0.05)
'''


def notes(path):
    try:
        with open(path) as f:
            return [ln.split(" ", 2) for ln in f.read().splitlines()]
    except OSError:
        return []


@pytest.mark.parametrize("on_change", ["restart", "sighup"])
def test_run_mode_leaderd_shards(api, tmp_path, request, on_change):
    """run: the command gets LEADERD_SHARDS; a change restarts it (the
    new one's variable is the shards owned) or sends it SIGHUP (the same
    process, which reads /shards again).  The first member runs alone
    until it owns every shard, then the second joins and takes half."""
    import sys
    n, g = 8, group_of(request)
    insts, chk = [], ShardChecker([])
    # SIGHUP's default action ends a process: ignore it until the
    # command's own handler is in place (an ignored signal stays so
    # across exec).
    wrap = ["/bin/sh", "-c", 'trap "" HUP; exec "$0" "$@"',
            sys.executable, "-c", CHILD]

    def add(k):
        out = str(tmp_path / ("child-%d" % k))
        inst = Leaderd(api, str(tmp_path), "r%d" % k, "unused",
                       args=["run", "--grace", "800ms", "--"] + wrap + [out])
        member_config(inst, g, n, extra="  on_change: %s\n" % on_change)
        inst.out = out
        insts.append(inst.start())
        chk.add(inst)
    try:
        chk.start()
        add(0)
        wait_until(lambda: balanced(insts, n), BALANCE, what="one owner")
        time.sleep(0.5)
        add(1)
        wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
        for inst in insts:
            want = ",".join(str(s) for s in shards(inst)["owned"])
            if on_change == "restart":
                # The command running now started with the shards owned.
                def settled():
                    ns = notes(inst.out)
                    return ns and ns[-1][1] == "start" and \
                        ns[-1][2] == want
                wait_until(settled, 5.0, what="%s's command restarted "
                           "with LEADERD_SHARDS=%s" % (inst.name, want))
            else:
                ns = notes(inst.out)
                assert len({x[0] for x in ns}) == 1, ns
                assert ns[0][1] == "start" and ns[0][2] == "", ns
        if on_change == "sighup":
            # The first one lost half its shards: told by SIGHUP.
            wait_until(lambda: any(x[1] == "hup"
                                   for x in notes(insts[0].out)),
                       5.0, what="a SIGHUP")
    finally:
        chk.stop()
        rcs = [i.cleanup(grace=6.0) for i in insts]
    chk.assert_safe()
    assert all(rc in (None, 0) for rc in rcs), rcs
    # The command was stopped before leaderd exited.
    for inst in insts:
        assert notes(inst.out)[-1][1] == "term", notes(inst.out)


# A command that works on its shards and says when, by CLOCK_MONOTONIC
# (time.monotonic(), the fakeapi's clock too): "PID T work 0,5,9" when it
# starts on a set, "PID T end" when it has stopped working.  Told to stop
# (SIGTERM) or to re-read (SIGHUP), it first finishes the work under way
# (DROP s, within run.grace), as a real one would.  Under sighup it reads
# /shards once its handler is in place: a SIGHUP sent before was ignored.
WORKER = r"""
import json, os, signal, sys, time, urllib.request
out, url = sys.argv[1], sys.argv[2]
DROP = 0.3
def note(what):
    with open(out, "a") as f:
        f.write("%d %.6f %s\n" % (os.getpid(), time.monotonic(), what))
hup = []
def term(*a):
    time.sleep(DROP)
    note("end")
    os._exit(0)
signal.signal(signal.SIGHUP, lambda *a: hup.append(1))
signal.signal(signal.SIGTERM, term)
note("work " + os.environ["LEADERD_SHARDS"])
if sys.argv[3] == "sighup":
    hup.append(1)
while True:
    if hup:
        del hup[:]
        time.sleep(DROP)
        with urllib.request.urlopen(url + "/shards", timeout=2) as r:
            d = json.load(r)
        note("work " + ",".join(str(s) for s in d["owned"]))
    time.sleep(0.02)
"""


def work_intervals(path):
    """(shard, start, end) of the worker's notes in path: a shard is
    worked on from the note that names it until the process's next note
    (end: infinity while it runs; for a process killed before its "end"
    note, the next process's first note, later than its real end)."""
    by_pid, order = {}, []
    for ln in notes(path):
        if ln[0] not in by_pid:
            order.append(ln[0])
        by_pid.setdefault(ln[0], []).append((float(ln[1]), ln[2]))
    out = []
    for k, pid in enumerate(order):
        evs = by_pid[pid]
        if evs[-1][1] != "end" and k + 1 < len(order):
            evs.append((by_pid[order[k + 1]][0][0], "end"))
        for i, (t, what) in enumerate(evs):
            if not what.startswith("work"):
                continue
            end = evs[i + 1][0] if i + 1 < len(evs) else float("inf")
            for s in what[4:].strip().split(","):
                if s:
                    out.append((int(s), t, end))
    return out


def working(inst, want):
    """Wait until inst's worker works on the shards want, and on no other."""
    wait_until(lambda: {s for s, _, e in work_intervals(inst.out)
                        if e == float("inf")} == want, 10.0,
               what="%s's command on %s" % (inst.name, sorted(want)))


@pytest.mark.parametrize("on_change", ["restart", "sighup"])
def test_run_mode_handover_after_command_let_go(api, tmp_path, request,
                                                on_change):
    """run: a shard moved to rebalance the group (a directed handover) is
    written over to the receiver only once the giver's command no longer
    works on it: restart, its old process has exited; sighup, run.grace
    after the signal.  The same for a shard released because the member
    is paused.  The first member owns every shard, the second joins, then
    the first is paused.  At the moment of each write that gave a shard
    up (a handover or a release) or claimed it (the request's arrival at
    the API server), no command of another member than the new holder
    was working on it (the worker takes DROP = 0.3 s to let go, within
    run.grace)."""
    import sys
    n, g = 8, group_of(request)
    insts, chk = [], ShardChecker([])
    wrap = ["/bin/sh", "-c", 'trap "" HUP; exec "$0" "$@"',
            sys.executable, "-c", WORKER]

    def add(k):
        out = str(tmp_path / ("worker-%d" % k))
        inst = Leaderd(api, str(tmp_path), "w%d" % k, "unused")
        inst.args = ["run", "--grace", "1500ms", "--"] + wrap + [
            out, "http://127.0.0.1:%d" % inst.port, on_change]
        member_config(inst, g, n, extra="  on_change: %s\n" % on_change)
        inst.out = out
        insts.append(inst.start())
        chk.add(inst)
    try:
        chk.start()
        add(0)
        wait_until(lambda: balanced(insts, n), BALANCE, what="one owner")
        working(insts[0], set(range(n)))
        add(1)
        wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
        for inst in insts:
            working(inst, set(shards(inst)["owned"]))
        # A pause: the first member's shards are released, after its
        # command is gone.
        a, b = insts
        assert "releasing" in shards(a)
        st, _, _ = a.request("/leader/pause", method="POST")
        assert st == 200
        wait_until(lambda: balanced([b], n), BALANCE,
                   what="the other to own every shard")
        working(b, set(range(n)))
        assert notes(a.out)[-1][2] == "end", notes(a.out)
    finally:
        chk.stop()
        rcs = [i.cleanup(grace=6.0) for i in insts]
    chk.assert_safe()
    assert all(rc in (None, 0) for rc in rcs), rcs
    work = {i.identity: work_intervals(i.out) for i in insts}
    # Each write that changed a shard's holder: (shard, from, to, time).
    moves = []
    for s in range(n):
        prev = ""
        for h in api.history(ns="default", name="%s-%d" % (g, s)):
            holder = h["spec"].get("holderIdentity") or ""
            if holder != prev:
                moves.append((s, prev, holder, h["t_recv"]))
            prev = holder
    w0, w1 = (i.identity for i in insts)
    # The joiner's share was handed over to it; the rest released at
    # the pause and taken by it.
    assert len([m for m in moves if m[1:3] == (w0, w1)]) >= n // 2, moves
    assert len([m for m in moves if m[1:3] == (w0, "")]) >= n // 2, moves
    bad = []
    for s, giver, to, t in moves:
        for who, iv in work.items():
            if who == to:
                continue
            bad += [(s, giver, to, who, round(e - t, 3))
                    for x, b, e in iv if x == s and b <= t < e]
    assert not bad, "a shard given up or claimed while another member's " \
        "command still worked on it (shard, from, to, whose command, " \
        "seconds it went on): %s" % bad


def test_pause_releases_every_shard(api, group):
    """POST /leader/pause: the member leaves the group (its member Lease
    and every shard released); resume: it joins again."""
    n = 8
    insts = group(2, n)
    wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    a, b = insts
    st, _, _ = a.request("/leader/pause", method="POST")
    assert st == 200
    v = wait_until(lambda: balanced([b], n), BALANCE,
                   what="the other to own every shard")
    assert v[b.name]["members"] == [b.identity]
    d = shards(a)
    assert d["owned"] == [] and d["is_member"] is False
    st, _, _ = a.request("/leader/resume", method="POST")
    assert st == 200
    wait_until(lambda: balanced(insts, n), BALANCE, what="rebalance")


def test_write_rate_tables_match_leaderd():
    """The write-rate table in README.md and docs/shards.md is what
    test/bench/shards_table.sh prints from `leaderd -n` today (the one
    home of the rate is config_shards_rate): a change of the rate or of
    the limit that leaves the documents behind fails here."""
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..",
                                        ".."))
    p = subprocess.run(["sh", os.path.join(root, "test", "bench",
                                           "shards_table.sh")],
                       cwd=root, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, LEADERD=leaderd_binary()))
    assert p.returncode == 0, p.stderr
    table = p.stdout
    assert table.count("\n") == 14, table
    for doc in ("README.md", os.path.join("docs", "shards.md")):
        with open(os.path.join(root, doc)) as f:
            assert table in f.read(), "%s's write-rate table differs " \
                "from `sh test/bench/shards_table.sh`:\n%s" % (doc, table)


def group_lists(api, inst, since=None):
    """inst's lists of the group's Leases (GETs by label selector)."""
    return [e for e in api.requests(token=inst.token, method="GET",
                                    since=since)
            if "labelSelector=" in (e.get("query") or "")]


def group_watches(api, inst, open_only=True):
    """inst's watches of the group's Leases, as [(entry, query dict)]."""
    out = []
    for e in api.watches(token=inst.token, open_only=open_only):
        q = urllib.parse.parse_qs(e.get("query") or "")
        if "labelSelector" in q:
            out.append((e, q))
    return out


def test_members_follow_one_watch(api, group):
    """Each member lists the group once, then follows it through one watch
    by label selector from the list's version; a join is seen through the
    watch alone: the old members hand shards over with no list between
    the newcomer's member Lease and balance (their safety-net list comes
    every 60 s while the watch delivers; this test is done well before)."""
    n = 12
    insts = group(3, n)
    before = wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    sel = "%s=%s" % (LABEL_GROUP, group.name)
    for i in insts:
        ws = wait_until(lambda: group_watches(api, i), 5.0,
                        what="%s's group watch" % i.name)
        # One stream for the whole group: no watch per Lease.
        assert len(api.watches(token=i.token)) == 1
        (e, q), = ws
        assert q["labelSelector"] == [sel]
        assert q["allowWatchBookmarks"] == ["true"]
        # From a list's version: the list came first.
        lists = group_lists(api, i)
        assert lists and lists[0]["t_recv"] < e["t_recv"]
        assert int(q["resourceVersion"][0]) > 0
    # While the watch delivers, the list is only a safety net: the lists
    # of the start end (the next comes 60 s after the last).
    wait_until(lambda: all(time.monotonic() - group_lists(api, i)[-1][
        "t_recv"] > 4 * RP for i in insts), 10.0,
        what="the lists to stop while the watch delivers")
    t_join = time.monotonic()
    new = group(1, n)[0]
    allm = insts + [new]
    after = wait_until(lambda: balanced(allm, n), BALANCE,
                       what="rebalance with a fourth member")
    t_bal = time.monotonic()
    handed = [h for h in api.history(method="PUT")
              if h["t"] >= t_join and h["spec"].get("holderIdentity") ==
              new.identity and h["token"] in [i.token for i in insts]]
    assert handed, "no shard handed over to the newcomer"
    for i in insts:
        assert [e for e in group_lists(api, i, since=t_join)
                if e["t_recv"] < t_bal] == [], \
            "%s listed the group during the join" % i.name
        # The same stream all along.
        assert len(group_watches(api, i)) == 1
    moved = sum(len(set(before[i.name]["owned"]) -
                    set(after[i.name]["owned"])) for i in insts)
    assert moved == len(after[new.name]["owned"]) == n // 4


def test_watch_gone_and_broken_stream(api, group):
    """A 410 Gone on the group's watch makes the member list again and
    watch on from the list's version; a stream that keeps breaking brings
    the list back to every retry_period, and once the watch works again
    a join is seen through it.  No shard is ever owned twice."""
    n = 12
    insts = group(3, n)
    wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    a = insts[0]
    wait_until(lambda: group_watches(api, a), 5.0, what="the group watch")
    # 410: the next stream is answered with an Expired ERROR event.
    api.watch_fault("gone", token=a.token, count=1)
    t_cut = time.monotonic()
    assert api.watch_cut_open(token=a.token) == 1

    def relisted():
        ws = [w for w in group_watches(api, a, open_only=False)
              if w[0]["t_recv"] >= t_cut]
        gone = [w for w in ws if w[0].get("end") == "expired"]
        if not gone:
            return None
        lists = [e for e in group_lists(api, a, since=gone[0][0]["t_recv"])
                 if e["code"] == 200]
        after = [w for w in ws if lists and
                 w[0]["t_recv"] > lists[0]["t_recv"] and
                 w[0].get("streaming")]
        return lists and after and (lists, after)
    lists, after = wait_until(relisted, 10.0,
                              what="a list and a new watch after 410")
    # The new watch resumes from a version, not from "now".
    q = after[-1][1]
    assert q.get("resourceVersion") and int(q["resourceVersion"][0]) > 0
    # A stream that breaks at once, every time: lists every retry_period.
    cut = api.watch_fault("cut", token=a.token, after=0)
    t_cut = time.monotonic()
    api.watch_cut_open(token=a.token)
    wait_until(lambda: len(group_lists(api, a, since=t_cut)) >= 4, 10.0,
               what="lists while the watch is down")
    assert balanced(insts, n) or wait_until(
        lambda: balanced(insts, n), BALANCE, what="balance, watch down")
    api.clear_fault(cut)
    wait_until(lambda: group_watches(api, a), 10.0,
               what="the watch back")
    new = group(1, n)[0]
    wait_until(lambda: balanced(insts + [new], n), BALANCE,
               what="rebalance with a fourth member")


def test_sigterm_shards_taken_by_a_new_member_through_the_watch(api, group):
    """A member that joined just after its first list takes a leaver's
    freed shards through the watch, without another list: once the
    group's watch (from that list's version) has delivered its own member
    Lease, it has seen the others.  The newcomer's member Lease is
    created after its first list is answered and its lists fail from its
    second on, so only the watch can show it the freed shards; after a
    SIGTERM of one of the two old members each remaining member is two
    below its quota, so two of the four freed shards are planned to the
    newcomer, and the group balances only if it takes them."""
    n = 12
    insts = group(2, n)
    wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    # Its member Lease is created after its first list is answered.
    path = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    late = api.fault("delay", methods=["POST"], path=path, delay_ms=300,
                     count=1)
    new = group(1, n)[0]
    wait_until(lambda: [e for e in group_lists(api, new)
                        if e["code"] == 200], 10.0, interval=0.01,
               what="the newcomer's first list")
    f = api.fault("status", token=new.token, methods=["GET"], path=path,
                  status=503)
    t_fault = time.monotonic()
    allm = insts + [new]
    wait_until(lambda: balanced(allm, n), BALANCE,
               what="rebalance with a third member")
    assert late.hits == 1
    mine = api.history(name="%s-member-%s" % (group.name, new.identity))
    first = [e for e in group_lists(api, new) if e["code"] == 200][0]
    assert first["t_done"] < mine[0]["t"], "listed after it joined"
    gone, rest = insts[0], [insts[1], new]
    had = set(shards(gone)["owned"])
    t_term = time.monotonic()
    gone.terminate()
    assert gone.wait(5) == 0
    wait_until(lambda: balanced(rest, n), BALANCE,
               what="rebalance after the SIGTERM")
    # The newcomer took some of the freed shards...
    taken = {int(h["name"].rsplit("-", 1)[1])
             for h in api.history(method="PUT", token=new.token)
             if h["t"] >= t_term and h["spec"].get("holderIdentity") ==
             new.identity and h["name"].startswith(group.name + "-") and
             "member" not in h["name"]}
    assert taken & had, "the newcomer took none of %s" % sorted(had)
    # ...with no list answered since its first: through the watch alone.
    ok = [e for e in group_lists(api, new, since=t_fault)
          if e["code"] == 200]
    assert ok == [], "the newcomer listed the group: %s" % ok
    api.clear_fault(f)


# -- co-tenants with Lease create rights (review M1, M2) -------------------

MEMBER_LABELS = "leaderd.io/shard-member"


def plant_member(api, group, name, holder, duration=2147483647):
    """A member Lease as a co-tenant creates it with create rights alone:
    the group's labels, a holder, renewed once "now" and never again."""
    from fakeapi import now_microtime
    return api.create_lease(
        "default", "%s-member-%s" % (group, name),
        {"holderIdentity": holder, "leaseDurationSeconds": duration,
         "acquireTime": now_microtime(), "renewTime": now_microtime()},
        labels={LABEL_GROUP: group, MEMBER_LABELS: "true"})


def metric(inst, series):
    """The value of the sample of series ('family{label="v",...}') whose
    labels include those given (every leaderd_* series has name too)."""
    fam, _, want = series.partition("{")
    want = set(re.findall(r'(\w+)="([^"]*)"', want))
    _, _, met = inst.request("/metrics")
    for ln in met.decode().splitlines():
        head, _, value = ln.rpartition(" ")
        name, _, labels = head.partition("{")
        if name == fam and want <= set(re.findall(r'(\w+)="([^"]*)"',
                                                   labels)):
            return float(value)
    return None


def shard_holders(api, group, n):
    """Every holder any shard Lease of the group has had, by history."""
    names = {"%s-%d" % (group, s) for s in range(n)}
    return {h["spec"].get("holderIdentity") for h in api.history()
            if h["name"] in names}


def test_ghost_members_are_not_members(api, group):
    """Member Leases created once and never renewed (a co-tenant with
    Lease create rights: a huge leaseDurationSeconds, or a fresh one every
    retry_period with an ordinary one), and one renewed but held by a name
    other than its own, are not members: no shard is handed to them, the
    real members stay balanced, and the ghosts are counted in
    leaderd_shard_members_unconfirmed."""
    n = 8
    insts = group(2, n)
    wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    moves0 = sum(metric(i, 'leaderd_shard_handovers_total{group="%s"}' %
                        group.name) for i in insts)
    for k in range(6):
        plant_member(api, group.name, "ghost%d" % k, "ghost%d" % k)
    # Held by another name than its own, though renewed every period.
    plant_member(api, group.name, "liar", "someone-else", duration=3)
    t_end = time.monotonic() + 2 * LD + 2.0
    churn = 0
    while time.monotonic() < t_end:
        plant_member(api, group.name, "churn%d" % churn, "churn%d" % churn,
                     duration=int(LD))
        churn += 1
        api.modify_lease("default", "%s-member-liar" % group.name,
                         lambda o: o["spec"].update(
                             leaseTransitions=o["spec"].get(
                                 "leaseTransitions", 0) + 1))
        time.sleep(RP)
    real = {i.identity for i in insts}
    v = wait_until(lambda: balanced(insts, n), BALANCE,
                   what="balance among the real members")
    for i in insts:
        assert sorted(v[i.name]["members"]) == sorted(real)
    assert shard_holders(api, group.name, n) <= real | {"", None}, \
        "a shard was handed to a ghost"
    moves = sum(metric(i, 'leaderd_shard_handovers_total{group="%s"}' %
                       group.name) for i in insts)
    assert moves == moves0, "%d handovers under ghosts" % (moves - moves0)
    for i in insts:
        assert metric(i, 'leaderd_shard_members{group="%s"}' %
                      group.name) == 2
        wait_until(lambda: metric(
            i, 'leaderd_shard_members_unconfirmed{group="%s"}' %
            group.name) == 6 + 1 + churn, 5.0,
            what="%s's unconfirmed members" % i.name)


def test_member_table_full_of_ghosts(api, group):
    """300 never-renewed member Leases, more than a member's table holds,
    do not keep a real member out: a member that joins after them is
    counted once seen renewing, and the group balances over the three.
    The API server's cache keeps pages here: the lists are pages of 100
    from the cache, then from their continue tokens."""
    api.list_cache_pages = True
    n = 8
    insts = group(2, n)
    wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    for k in range(300):
        plant_member(api, group.name, "ghost%03d" % k, "ghost%03d" % k)
    time.sleep(RP)
    allm = insts + group(1, n)
    v = wait_until(lambda: balanced(allm, n), BALANCE,
                   what="balance with a third member among 300 ghosts")
    for i in allm:
        assert sorted(v[i.name]["members"]) == sorted(
            j.identity for j in allm)
    assert shard_holders(api, group.name, n) <= \
        {i.identity for i in allm} | {"", None}
    qs = [urllib.parse.parse_qs(e.get("query") or "")
          for e in group_lists(api, allm[-1])]
    assert qs[0]["limit"] == ["100"] and qs[0]["resourceVersion"] == ["0"]
    assert [q for q in qs if "continue" in q and "resourceVersion" not in q]


def test_big_labelled_leases_keep_no_member_out(api, group):
    """Five Leases with the group's label and 250 KiB of annotations each
    (valid for the API server; together past the 1 MiB a leaderd reads in
    one answer), one with the label and a name that is not the group's,
    and a member Lease leaderd cannot read (a 300-byte holder) keep no
    member out: the list comes in pages (the watch cache answering
    resourceVersion=0 whole, the pages from etcd), what does not belong is
    skipped and counted, and the members balance.  The watch carries such
    objects too: one written while the group runs breaks no member's
    watch for good, and a join is rebalanced."""
    n = 8
    g = group.name
    pad = {"example.com/pad": "x" * (250 * 1024)}
    for k in range(5):
        api.create_lease("default", "%s-big%d" % (g, k),
                         {"holderIdentity": "nobody"},
                         labels={LABEL_GROUP: g}, annotations=pad)
    api.create_lease("default", "%s-odd" % g, {"holderIdentity": "x"},
                     labels={LABEL_GROUP: g})
    plant_member(api, g, "long", "h" * 300)
    insts = group(2, n)
    wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    for i in insts:
        assert [e for e in group_lists(api, i)
                if "continue=" in (e.get("query") or "")], \
            "%s did not page the list" % i.name
        assert metric(i, 'leaderd_shard_leases_skipped{group="%s"}' %
                      g) == 7
    # Written while the group runs: the watch carries them.
    t0 = time.monotonic()
    api.modify_lease("default", "%s-big0" % g, lambda o: o["metadata"][
        "annotations"].update({"example.com/pad": "y" * (250 * 1024)}))
    plant_member(api, g, "long2", "h" * 300)
    new = group(1, n)[0]
    allm = insts + [new]
    wait_until(lambda: balanced(allm, n), BALANCE,
               what="rebalance with a third member")
    wait_until(lambda: all([w for w in group_watches(api, i)
                            if w[0]["t_recv"] > t0 and
                            w[0].get("streaming")] for i in insts), BALANCE,
               what="the old members' watches streaming again")


def test_one_lease_over_an_answer(api, group):
    """One Lease with the group's label whose JSON is over the 1 MiB a
    leaderd reads in one answer (valid for the API server: 200 KiB of
    annotations that JSON escapes six-fold, as kube-apiserver writes '&'
    or '<'), alone in its page, is skipped by that page's own continue
    token, read from the head of the answer cut short: a group started
    after it balances, and one written while the group runs breaks no
    member's watch for good."""
    n = 8
    g = group.name
    pad = {"example.com/pad": "\x01" * (200 * 1024)}
    api.create_lease("default", "%s-huge" % g, {"holderIdentity": "x"},
                     labels={LABEL_GROUP: g}, annotations=pad)
    insts = group(2, n)
    wait_until(lambda: balanced(insts, n), BALANCE, what="balance")
    for i in insts:
        assert metric(i, 'leaderd_shard_leases_skipped{group="%s"}' %
                      g) == 1
    t0 = time.monotonic()
    api.create_lease("default", "%s-huge2" % g, {"holderIdentity": "x"},
                     labels={LABEL_GROUP: g}, annotations=pad)
    new = group(1, n)[0]
    allm = insts + [new]
    wait_until(lambda: balanced(allm, n), BALANCE,
               what="rebalance with a third member")
    wait_until(lambda: all([w for w in group_watches(api, i)
                            if w[0]["t_recv"] > t0 and
                            w[0].get("streaming")] for i in insts), BALANCE,
               what="the old members' watches streaming again")
    for i in allm:
        wait_until(lambda: metric(
            i, 'leaderd_shard_leases_skipped{group="%s"}' % g) == 2, 5.0,
            what="%s's count of skipped Leases" % i.name)
