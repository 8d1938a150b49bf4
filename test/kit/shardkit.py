"""Shard groups in tests: a leaderd configured as a member of a group,
GET /shards, and ShardChecker, which samples every instance's /shards and
finds any shard claimed by two instances at once (the shard version of
harness.LeadershipChecker: the samples of one round are taken one after
the other, so two claims overlap only if one instance said "owned" in a
window that began before another's "owned" window ended)."""

import http.client
import json
import time

from harness import Sampler, overlapping


def member_config(inst, group, count, extra=""):
    """Rewrite inst's config for a shard group: no lock.name (the member
    Lease is the first election), shards: {group, count}; force, since
    the tests' short durations pass the write limit."""
    with open(inst.config_path) as f:
        lines = f.read().splitlines()
    out, in_lock = [], False
    for ln in lines:
        if ln == "lock:":
            in_lock = True
        elif not ln.startswith("  "):
            in_lock = False
        if in_lock and ln.startswith("  name:"):
            continue
        out.append(ln)
    out += ["shards:", "  group: %s" % group, "  count: %d" % count,
            "  force: true"]
    with open(inst.config_path, "w") as f:
        f.write("\n".join(out) + "\n" + extra)
    return inst


def shards(inst, timeout=0.5, path="/shards"):
    """GET /shards as a dict; None if unreachable or not JSON."""
    if not inst.alive():
        return None
    try:
        st, _, body = inst.request(path, timeout=timeout)
        if st != 200:
            return None
        return json.loads(body)
    except (OSError, http.client.HTTPException, ValueError):
        return None


def owned(inst):
    d = shards(inst)
    return None if d is None else set(d["owned"])


def quota_ok(views, n):
    """views: name -> /shards dict of the live members.  Balanced: every
    shard owned by exactly one, each member floor..ceil of n/m, and every
    member sees every other."""
    m = len(views)
    if m == 0 or any(v is None for v in views.values()):
        return False
    lo, hi = n // m, -(-n // m)
    seen = {}
    for name, v in views.items():
        if not lo <= len(v["owned"]) <= hi or len(v["members"]) != m:
            return False
        for s in v["owned"]:
            if s in seen:
                return False
            seen[s] = name
    return len(seen) == n


def views_of(insts):
    return {i.name: shards(i) for i in insts if i.alive()}


class ShardChecker(Sampler):
    """Samples each instance's /shards in turn, every interval seconds,
    recording (t0, t1, name, owned set or None)."""

    thread_name = "shard-checker"

    def _run(self):
        while not self._stop.is_set():
            with self._lock:
                insts = list(self.instances)
            for inst in insts:
                if inst.proc is None:
                    continue
                t0 = time.monotonic()
                d = shards(inst, timeout=0.25)
                t1 = time.monotonic()
                got = None if d is None else frozenset(d["owned"])
                with self._lock:
                    self.samples.append((t0, t1, inst.name, got))
            self._stop.wait(self.interval)

    def snapshot(self):
        with self._lock:
            return list(self.samples)

    def claim_windows(self):
        """(shard, name, first_t0, first_t1, last_t0, last_t1): per
        instance and shard, the windows of the first sample owning it and
        of the last before a sample that does not (or is unreachable)."""
        out, open_ = [], {}
        for t0, t1, name, got in self.snapshot():
            got = got or frozenset()
            for key in [k for k in open_ if k[1] == name]:
                if key[0] not in got:
                    out.append(key + tuple(open_.pop(key)))
            for s in got:
                key = (s, name)
                if key in open_:
                    open_[key][2:4] = [t0, t1]
                else:
                    open_[key] = [t0, t1, t0, t1]
        out.extend(k + tuple(v) for k, v in open_.items())
        return out

    def claims(self):
        """(shard, name, start, end): t0 of the first sample owning the
        shard to t1 of the last before a sample that does not."""
        return [(c[0], c[1], c[2], c[5]) for c in self.claim_windows()]

    def violations(self):
        """Per shard, the pairs of owners the samples prove overlapping
        (overlapping: a held-up sample widens its window, it does
        not invent an overlap)."""
        by = {}
        for c in self.claim_windows():
            by.setdefault(c[0], []).append(c[1:])
        bad = []
        for s, cl in by.items():
            cl.sort(key=lambda c: c[1])
            bad.extend(((s,) + a, (s,) + b) for a, b in overlapping(cl))
        return bad

    def gaps(self):
        """Per shard, between one owner's last sample owning it and the
        next owner's first: the seconds from a claim's loss to another
        owner's claim as the samples saw them (negative: an overlap)."""
        by = {}
        for c in self.claims():
            by.setdefault(c[0], []).append(c)
        out = []
        for cl in by.values():
            cl.sort(key=lambda c: c[2])
            for a, b in zip(cl, cl[1:]):
                if a[1] != b[1]:
                    out.append(b[2] - a[3])
        return out

    def assert_safe(self):
        bad = self.violations()
        assert not bad, "shards owned by two at once: %r" % bad[:5]
        return len(self.snapshot())
