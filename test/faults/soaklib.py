"""soaklib -- bounded random kills of several leaderd instances (F26), used
by test_process.py (25 s) and soak.py (`make soak DURATION=...`).

Every 0.5-2 s one action, chosen at random: kill -9 or SIGTERM the leader
or a follower (while at least two are up), or restart a dead instance.
With keep_one (the soak), instance c-0 is never killed, so its file
descriptors can be followed over the whole run; when it is chosen it is
cut off from the API server instead (proxy blackhole for 2.5-4 s).
The checker samples every /leader all the time.  At the end it reports
the transitions, and checks:

  S1  no overlapping sampled claims, and no term on the server taken over
      less than LD after the previous live term's last write;
  S2  every sampled claim lies within RD of the arrival of one of that
      instance's writes;
  L1  no leaderless gap longer than FAILOVER after the moment some
      instance, alive until the gap ended, had been up for 0.5 s;
  fds the open descriptors of a process do not grow over its life
      (sampled from /proc every 2 s).
"""

import os
import time

from checker import assert_terms, terms
from faultlib import FAILOVER, LD, NS, POLL, RD, RT, START, wait_until

GAP_BOUND = FAILOVER
READY = 0.5             # a started instance reads the lease within this
FD_GROWTH_MAX = 2       # descriptors a process may gain after warm-up


def _fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return None


def run(cluster, n, duration, rng, max_kills=None, keep_one=False,
        progress=None, args=()):
    """args: leaderd's extra arguments (soak.py's fencing workers run as
    `leaderd run` commands)."""
    ins = cluster.start_n(n, prefix="c", log_level="info", args=list(args))
    chk = cluster.checker(ins)
    lives = {i.name: [[i.t_start, None, i.pid]] for i in ins}
    dead_since = {}
    events = []
    fds = {}            # pid -> [first after warm-up, max, last]
    kills = restarts = partitions = 0
    heal = []           # (time, instance) to clear a blackhole at
    t0 = time.monotonic()
    wait_until(lambda: any(i.is_leader() for i in ins), POLL + START + 2,
               what="a first leader")
    next_fd = 0.0
    while time.monotonic() - t0 < duration:
        time.sleep(rng.uniform(0.5, 2.0))
        now = time.monotonic()
        for t_h, i in [h for h in heal if h[0] <= now]:
            i.proxy.clear()
            heal.remove((t_h, i))
            events.append((now - t0, "heal", i.name))
            # For L1 a cut-off instance is no candidate: a new "life".
            lives[i.name].append([now, None, i.pid])
        if now >= next_fd:
            next_fd = now + 2.0
            for i in ins:
                if i.alive() and now - i.t_start > 2.0:
                    c = _fds(i.pid)
                    if c is not None:
                        f = fds.setdefault(i.pid, [c, c, c, i.name])
                        f[1], f[2] = max(f[1], c), c
        alive = [i for i in ins if i.alive()]
        dead = [i for i in ins if not i.alive()]
        if dead and (rng.random() < 0.5 or len(alive) < 2 or
                     (max_kills is not None and kills >= max_kills)):
            i = rng.choice(dead)
            if now - dead_since.get(i.name, 0) < 0.5:
                continue
            i.start()
            restarts += 1
            lives[i.name].append([i.t_start, None, i.pid])
            events.append((i.t_start - t0, "start", i.name))
            continue
        if len(alive) < 2 or (max_kills is not None and kills >= max_kills):
            continue
        leaders = [i for i in alive if i.is_leader()]
        if leaders and rng.random() < 0.6:
            victim = leaders[0]
        else:
            victim = rng.choice(alive)
        if keep_one and victim is ins[0]:
            if not heal:
                victim.proxy.set("blackhole")
                heal.append((now + rng.uniform(2.5, 4.0), victim))
                lives[victim.name][-1][1] = now
                partitions += 1
                events.append((now - t0, "blackhole", victim.name))
                if progress:
                    progress("%7.1fs blackhole %s" % (now - t0, victim.name))
            continue
        how = "kill9" if rng.random() < 0.7 else "sigterm"
        t = time.monotonic()
        if how == "kill9":
            victim.kill9()
        else:
            victim.terminate()
            victim.wait(RT + 1.0)
            if victim.alive():
                victim.kill9()
        lives[victim.name][-1][1] = t
        dead_since[victim.name] = time.monotonic()
        kills += 1
        events.append((t - t0, how + (" leader" if victim in leaders
                                      else " follower"), victim.name))
        if progress:
            progress("%7.1fs %s %s" % (t - t0, how, victim.name))
    # Heal, bring everyone back and let one leader settle.
    for _, i in heal:
        i.proxy.clear()
    for i in ins:
        if not i.alive():
            i.start()
            lives[i.name].append([i.t_start, None, i.pid])
    t_end = time.monotonic()
    settled = True
    try:
        cluster.wait_single_leader(FAILOVER + START, ins)
    except AssertionError:
        settled = False
    time.sleep(0.5)
    for i in ins:
        if i.alive():
            c = _fds(i.pid)
            if c is not None and i.pid in fds:
                fds[i.pid][2] = c
    chk.stop()
    rep = _report(cluster, ins, chk, lives, events, fds, kills, restarts,
                  t0, t_end, settled)
    rep["partitions"] = partitions
    return rep


def _report(cluster, ins, chk, lives, events, fds, kills, restarts, t0,
            t_end, settled):
    v = []
    bad = chk.violations()
    for a, b in bad[:10]:
        v.append("S1: %s [%.3f, %.3f] overlaps %s [%.3f, %.3f]" % (
            a[0], a[1] - t0, a[2] - t0, b[0], b[1] - t0, b[2] - t0))
    try:
        assert_terms(cluster.api, NS, cluster.lock, LD, allow_admin=False)
    except AssertionError as e:
        v.append(str(e))
    for i in ins:
        try:
            chk.assert_backed(i, RD)
        except AssertionError as e:
            v.append(str(e))
    if not settled:
        v.append("L1: no single leader within %.1fs after the run"
                 % (FAILOVER + START))
    # L1 per gap.  Leadership is known from the sampled claims and, for
    # terms too short for a sample (a leader killed right after it took
    # over), from the server: each term from its first to its last write.
    claims = sorted(chk.claims(), key=lambda c: c[1])
    cover = [(c[1], c[2]) for c in claims]
    cover += [(tm["first"]["t"], tm["last"]["t"])
              for tm in terms(cluster.api, NS, cluster.lock)]
    cover.sort()
    worst = 0.0
    end = t0
    for s, e in cover:
        gap_start, gap_end = end, s
        if gap_end > gap_start:
            ready = []
            for name, ls in lives.items():
                for st, en, _ in ls:
                    if st + READY <= gap_end and (en is None or en >= gap_end):
                        ready.append(st + READY)
            ref = max(gap_start, min(ready)) if ready else gap_start
            late = gap_end - ref
            if gap_start > t0 + START:
                worst = max(worst, late)
                if late > GAP_BOUND:
                    v.append("L1: no leader from %.3f to %.3f (%.2fs after "
                             "a ready candidate; bound %.2fs)" % (
                                 gap_start - t0, gap_end - t0, late,
                                 GAP_BOUND))
        end = max(end, e)
    growth = {}
    for pid, (first, mx, last, name) in fds.items():
        growth[pid] = (name, first, mx, last)
        if mx - first > FD_GROWTH_MAX:
            v.append("fds: %s (pid %d) grew from %d to %d descriptors"
                     % (name, pid, first, mx))
    lease = cluster.lease()
    logs = sum(i.log().count("became leader of lease") for i in ins)
    return {"duration": t_end - t0, "kills": kills, "restarts": restarts,
            "transitions": lease["spec"].get("leaseTransitions", 0)
            if lease else None, "became_leader_lines": logs,
            "claims": len(claims), "samples": len(chk.snapshot()),
            "worst_gap": worst, "events": events, "fds": growth,
            "violations": v}


def format_report(rep):
    out = ["soak: %.0fs, %d kills, %d restarts, %d partitions, %d lease "
           "transitions (%d 'became leader' log lines), %d claims in %d "
           "samples" % (
               rep["duration"], rep["kills"], rep["restarts"],
               rep.get("partitions", 0),
               rep["transitions"] or 0, rep["became_leader_lines"],
               rep["claims"], rep["samples"]),
           "soak: longest leaderless gap after a ready candidate %.2fs "
           "(bound %.2fs)" % (rep["worst_gap"], GAP_BOUND)]
    if rep["fds"]:
        g = max(mx - first for _, first, mx, _ in rep["fds"].values())
        out.append("soak: file descriptors: %d processes sampled, largest "
                   "growth after warm-up %d" % (len(rep["fds"]), g))
    v = rep["violations"]
    out.append("soak: S1 sampled claims %s; S1 server-side terms %s; S2 %s; "
               "L1 %s" % tuple(
                   "VIOLATED" if any(x.startswith(p) for x in v) else "held"
                   for p in ("S1: ", "S1 violated (server", "S2", "L1")))
    for x in rep["violations"]:
        out.append("soak: VIOLATION " + x)
    return "\n".join(out)

