"""lease_history -- the API server's own record of every Lease version,
and leaderd's own event streams, checked against each other.

Sampling /leader every 50 ms sees a claim only at the instants it asks.
This module records instead what was *written*: an admin watch on the
Leases, opened from a list's resourceVersion before the Leases exist,
receives every version the API server commits, in order.  Each leaderd
instance's event stream (GET /leader/watch, /leader/NAME/watch or
/leaders/watch) says when it started and stopped saying "I lead", on
leaderd's own wall clock (changed_at), which is the clock the Lease's
renewTime and acquireTime fields are written on.  All processes run on
one host, so one wall clock (CLOCK_REALTIME) orders both.

Interface (the e2e tests and the HA harness use it):

    import lease_history as H

    hist = H.LeaseHistory.from_kubeconfig(admin_kubeconfig, namespace,
                                          match=lambda name: ...)
    hist.start()                # list, then watch from the list's RV
    s = H.LeaderStream("c-1", port)            # per leaderd process,
    s.start()                                   # after it answers
    ...                                         # the test runs
    s.stop(); hist.stop()       # hist.stop() first waits for the
                                # watch to deliver what a list shows
    fig = H.check(hist, [s, ...], rd=RD, horizon={"go-1": RD + RP},
                  slack=0.25)

- LeaseHistory(server, ssl_context, headers, namespace, match): one
  watch over the namespace's Leases (so shard groups and several
  elections at once); match(name) selects the ones recorded.  A broken
  watch is resumed from the last resourceVersion; a 410 Gone (the
  history compacted away under us) fails the run, it never skips.
  .versions(name) -> [Version], .names() -> the Leases seen,
  .sync() waits until the watch has delivered what a fresh list shows,
  .stop() syncs, then stops.  from_kubeconfig reads a kubeconfig with a
  token or a client certificate (not an exec plugin).
- Version: name, rv, uid, holder, acquire, renew (seconds since the
  epoch, floats from the MicroTime fields, None if absent), ld
  (leaseDurationSeconds), transitions, handover_to (the
  leaderd.io/handover-to annotation or ""), kind ("ADDED", "MODIFIED",
  "DELETED", or "LISTED" for a Lease that existed before start()),
  recv_mono (time.monotonic() when it arrived) and recv_wall.
- terms(versions, one_process=False) -> [Term]: the versions split into
  terms, a term being one (uid, holder, acquireTime); hist_terms(hist,
  name) passes hist.one_process (LeaseHistory: False; True where each
  identity is one process, so a holder's new acquireTime over its own
  live term goes on in that term instead of being judged a takeover).  Term: holder, uid, acquire,
  transitions, versions, last_renew, handover (written by the previous
  holder as a directed handover), end ("released", "deleted", "handed
  over", "taken" over a live term, or None while it lasts), end_version
  (the version that ended it), prev (the term before it on the same
  uid, or None), next, own_start() (when the holder itself may have
  begun to lead), assigned.  A version naming a holder without
  acquireTime (the coordinated election controller's assignment) is no
  term; that holder's renew of it as it is (client-go's coordinated
  elector: no acquireTime, the old leaseTransitions) begins an assigned
  term whose acquire is that renewTime.
- LeaderStream(ident, port, path="/leader/watch"): one process's
  stream; every event (recv_mono, recv_wall, body) and the time the
  stream ended (eof_wall: the process died or closed it).  A restarted
  process needs a new LeaderStream.  .claims() -> [Claim]: lease name,
  ident, start and end (leaderd's changed_at; end = the next event's
  changed_at, or the stream's end), token and renew_time of the event
  that said "I lead".
- check(hist, streams, rd, horizon=None, slack=0.25, ignore=()) runs the
  four checks below on every recorded Lease and returns the figures:
  {"leases", "versions", "terms", "takeovers", "min_gap" (seconds from a
  live term's last renew to the next term's acquire, the smallest),
  "claims", "worst_end" (the latest a claim ended past its term's bound,
  negative: margin)}.  Each check is also a function of its own
  (check_s1, check_tokens, check_renew_times, check_streams), and each
  raises AssertionError naming the versions or events at fault.
- check_no_overlap(claims): no two identities' claims on a Lease
  overlap (the claims of several streams, or sampled ones).
- dump(hist, streams, path): every version and event as JSON lines.
- check_follow(hist, streams, bound): every stream names the holder the
  server's latest version names within bound seconds of each change;
  returns the longest lag.

What is checked, and why it is sound:

1. Server-side S1 (check_s1).  For every term T taken over a live term
   P (P neither released, nor deleted, nor handed over by its holder):
   T.acquire - P.last_renew >= horizon(P.holder), where horizon is rd
   for leaderd and may be given per holder (client-go keeps leading up
   to retry_period + renew_deadline after its last good renew: its renew
   loop waits retry_period before a round that times out after
   renew_deadline).  Sound because (a) a holder's claim lasts at most
   renew_deadline from the send time of its last renew whose success it
   learned (leaderd: elector_lead_until), and that renew is committed,
   so it is in the history, and its renewTime was stamped at that send;
   an unanswered renew that did commit only makes the true end earlier;
   (b) the taker's claim starts no earlier than its takeover's send,
   stamped as acquireTime (client-go stamps it before its GET, earlier
   still, which only makes the check stricter); (c) both stamps come from
   one wall clock, which the tests do not step.  A handover (the
   annotation naming the new holder, acquireTime = renewTime, written
   while the old holder had already stopped claiming) and a release end
   a term as its holder's own act, not a takeover.
2. Fencing token (check_tokens).  On each uid, leaseTransitions never
   decreases from version to version, and every new term has a greater
   one than the term before it; each "I lead" event's fencing_token is
   "%010d-<uid>" of a term of that instance's identity (docs/api.md).
   A Lease deleted and created again starts a new uid at 0.
   A version naming a holder without acquireTime is an assignment by
   Kubernetes' coordinated leader election controller, no term: the
   assigned holder's term begins with its own write, and S1 judges that
   write against the term before the assignment.  An assigned term
   (client-go's renew of the assignment, the controller's count kept)
   carries no fencing token, so its leaseTransitions is not checked to
   grow.
3. Ambiguous writes (check_renew_times).  leaderd tells its own writes by
   renewTime (an answer lost, it reads the Lease back and looks for the
   renewTime it sent).  So on each uid no renewTime is carried by two
   terms, and renewTime never goes back within a term; and every "I
   lead" event's renew_time is the renewTime of a committed version held
   by that instance: a claim never rests on a write that did not land.
4. Streams agree with the terms (check_streams).  Every interval an
   instance said "I lead" lies inside a term of its own on that Lease:
   it starts at or after the term's acquireTime (for a handover, after
   the successor's first own renew: it leads from its own renew's send)
   and ends by min(last renew of the term + rd, the next term's
   acquireTime, the release's renewTime), each up to slack: the stream's
   "no" is sent when leaderd's timer runs, a scheduling delay after the
   deadline, while /leader judges the deadline itself.

Python 3 standard library only.
"""

import calendar
import http.client
import json
import os
import ssl
import subprocess
import threading
import time
import urllib.parse

HANDOVER = "leaderd.io/handover-to"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/%s/leases"


def microtime(s):
    """A MicroTime (2026-12-05T06:40:00.123456Z) as seconds since the
    epoch, to a quarter of a microsecond (a double); None for None or ""."""
    if not s:
        return None
    s = s.rstrip("Z")
    whole, _, frac = s.partition(".")
    t = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
    return t + (int(frac.ljust(6, "0")[:6]) / 1e6 if frac else 0.0)


class Version:
    """One committed version of a Lease, as the admin watch received it."""

    def __init__(self, kind, obj, recv_mono, recv_wall):
        md, spec = obj.get("metadata", {}), obj.get("spec") or {}
        self.kind = kind
        self.name = md.get("name", "")
        self.rv = md.get("resourceVersion", "")
        self.uid = md.get("uid", "")
        self.holder = spec.get("holderIdentity") or ""
        self.acquire = microtime(spec.get("acquireTime"))
        self.renew = microtime(spec.get("renewTime"))
        self.renew_s = spec.get("renewTime") or ""
        self.ld = spec.get("leaseDurationSeconds") or 0
        self.transitions = spec.get("leaseTransitions") or 0
        self.handover_to = (md.get("annotations") or {}).get(HANDOVER, "")
        self.recv_mono = recv_mono
        self.recv_wall = recv_wall

    def __repr__(self):
        return "<%s %s rv=%s holder=%r acquire=%s renew=%s tr=%d%s>" % (
            self.kind, self.name, self.rv, self.holder,
            _ts(self.acquire), _ts(self.renew), self.transitions,
            " handover" if self.handover_to else "")


def _ts(t):
    if t is None:
        return "-"
    return time.strftime("%H:%M:%S", time.gmtime(t)) + ("%.6f" % (t % 1))[1:]


class LeaseHistory:
    """Every version of the matching Leases in one namespace, from one
    admin watch opened before they exist (see the module's docstring)."""

    def __init__(self, server, ctx, headers, namespace, match=None):
        u = urllib.parse.urlsplit(server)
        self.host, self.port = u.hostname, u.port or 443
        self.ctx = ctx
        self.headers = dict(headers)
        self.namespace = namespace
        self.match = match or (lambda name: True)
        self.one_process = False        # terms(): one process per identity
        self.by_name = {}
        self.errors = []
        self.lock = threading.Lock()
        self.rv = None
        self.stop_ev = threading.Event()
        self.thread = None
        self.sock = None
        self.opened = threading.Event()

    @classmethod
    def from_kubeconfig(cls, kubeconfig, namespace, match=None,
                        kubectl=None):
        """From any kubeconfig kubectl reads (token or client
        certificate), via `kubectl config view --raw --minify`."""
        kubectl = kubectl or os.environ.get("KUBECTL", "kubectl")
        p = subprocess.run([kubectl, "--kubeconfig", kubeconfig, "config",
                            "view", "--raw", "--minify", "-o", "json"],
                           capture_output=True, text=True, timeout=30,
                           check=True)
        kc = json.loads(p.stdout)
        cl = kc["clusters"][0]["cluster"]
        user = kc["users"][0]["user"]
        if "certificate-authority-data" in cl:
            import base64
            ctx = ssl.create_default_context(cadata=base64.b64decode(
                cl["certificate-authority-data"]).decode())
        elif "certificate-authority" in cl:
            ctx = ssl.create_default_context(
                cafile=cl["certificate-authority"])
        else:
            ctx = ssl.create_default_context()
        headers = {"Accept": "application/json"}
        if user.get("token"):
            headers["Authorization"] = "Bearer " + user["token"]
        elif user.get("client-certificate"):
            ctx.load_cert_chain(user["client-certificate"],
                                user.get("client-key"))
        elif user.get("client-certificate-data"):
            import base64
            import tempfile
            d = tempfile.mkdtemp(prefix="lease-history-")
            for k, f in (("client-certificate-data", "c.pem"),
                         ("client-key-data", "k.pem")):
                with open(os.path.join(d, f), "wb") as fh:
                    fh.write(base64.b64decode(user[k]))
            ctx.load_cert_chain(os.path.join(d, "c.pem"),
                                os.path.join(d, "k.pem"))
        return cls(cl["server"], ctx, headers, namespace, match)

    def _get(self, query, timeout, keep=False):
        c = http.client.HTTPSConnection(self.host, self.port,
                                        context=self.ctx, timeout=timeout)
        c.request("GET", LEASES % self.namespace + "?" + query,
                  headers=self.headers)
        if keep:
            # The watch's socket: a streamed response detaches it from c.
            self.sock = c.sock
        return c, c.getresponse()

    def _add(self, kind, obj):
        v = Version(kind, obj, time.monotonic(), time.time())
        if not self.match(v.name):
            return
        with self.lock:
            self.by_name.setdefault(v.name, []).append(v)

    def start(self, timeout=10.0):
        """List (for the resourceVersion and any Lease already there),
        then watch from it in a thread; returns once the watch is open."""
        c, r = self._get("", timeout)
        body = r.read()
        c.close()
        if r.status != 200:
            raise AssertionError("lease history: list: %d %s" % (
                r.status, body[:300]))
        lst = json.loads(body)
        for obj in lst.get("items", []):
            self._add("LISTED", obj)
        self.rv = lst["metadata"]["resourceVersion"]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        if not self.opened.wait(timeout):
            raise AssertionError("lease history: the watch did not open "
                                 "within %.0fs: %s" % (timeout, self.errors))
        return self

    def _run(self):
        while not self.stop_ev.is_set():
            try:
                self._watch_once()
            except (OSError, http.client.HTTPException, ValueError) as e:
                if self.stop_ev.is_set():
                    return
                self.errors.append("watch from %s: %s" % (self.rv, e))
                time.sleep(0.1)

    def _watch_once(self):
        q = urllib.parse.urlencode({"watch": "1", "resourceVersion": self.rv,
                                    "allowWatchBookmarks": "true",
                                    "timeoutSeconds": "600"})
        c, r = self._get(q, 620, keep=True)
        try:
            if r.status != 200:
                raise ValueError("%d %s" % (r.status, r.read()[:300]))
            self.opened.set()
            while not self.stop_ev.is_set():
                line = r.readline()
                if not line:
                    return
                ev = json.loads(line)
                obj = ev.get("object") or {}
                if ev.get("type") == "ERROR":
                    # 410 Gone: the versions since self.rv are lost to us.
                    self.errors.append("watch ERROR: %s" % obj)
                    self.stop_ev.set()
                    self.gone = True
                    return
                rv = (obj.get("metadata") or {}).get("resourceVersion")
                if rv:
                    self.rv = rv
                if ev.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                    self._add(ev["type"], obj)
        finally:
            c.close()

    def sync(self, timeout=10.0):
        """Wait until the watch has delivered every matching Lease's
        version a fresh list shows (the watch may lag the store)."""
        c, r = self._get("", timeout)
        body = r.read()
        c.close()
        if r.status != 200:
            raise AssertionError("lease history: list: %d" % r.status)
        want = {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
                for o in json.loads(body).get("items", [])
                if self.match(o["metadata"]["name"])}
        end = time.monotonic() + timeout
        while True:
            with self.lock:
                missing = [n for n, rv in want.items()
                           if rv not in {v.rv for v in self.by_name.get(
                               n, [])}]
            if not missing:
                return
            if time.monotonic() > end:
                raise AssertionError("lease history: the watch lags: %s "
                                     "not seen after %.0fs" % (
                                         missing[:5], timeout))
            time.sleep(0.02)

    def stop(self, sync=True):
        """Stop watching (after sync(), unless sync is False).  Raises if
        the watch lost versions (410)."""
        if sync and not self.stop_ev.is_set():
            self.sync()
        self.stop_ev.set()
        if self.sock is not None:
            try:
                self.sock.shutdown(2)
            except OSError:
                pass
        if self.thread is not None:
            self.thread.join(timeout=5)
        assert not getattr(self, "gone", False), \
            "lease history: the watch lost versions: %s" % self.errors

    def names(self):
        with self.lock:
            return sorted(self.by_name)

    def versions(self, name):
        with self.lock:
            return list(self.by_name.get(name, []))


class Term:
    """One holder's term: consecutive versions with one (uid, holder,
    acquireTime)."""

    def __init__(self, v, prev):
        self.name, self.uid, self.holder = v.name, v.uid, v.holder
        self.acquire = v.acquire
        self.transitions = v.transitions
        self.versions = [v]
        self.handover = bool(v.handover_to) and v.handover_to == v.holder
        self.assigned = False
        self.end = None
        self.end_version = None
        self.prev = prev
        self.next = None

    @property
    def last_renew(self):
        return self.versions[-1].renew

    def own_start(self):
        """When the holder itself may have begun to lead: the acquireTime,
        or, for a handover, the renewTime of its first own renew (None:
        it never renewed the handover record)."""
        if not self.handover:
            return self.acquire
        for v in self.versions[1:]:
            if v.renew != self.versions[0].renew:
                return v.renew
        return None

    def __repr__(self):
        return "<term %s %r acquire=%s last_renew=%s tr=%d end=%s>" % (
            self.name, self.holder, _ts(self.acquire), _ts(self.last_renew),
            self.transitions, self.end)


def terms(versions, one_process=False):
    """The versions of one Lease split into terms (see Term).

    A version naming a holder without acquireTime is Kubernetes'
    coordinated election controller's assignment, no term; a later one
    naming the same holder with another renewTime is that holder's own
    renew of it as it is (client-go's coordinated elector keeps the
    record's missing acquireTime and its leaseTransitions): its term
    begins there, acquire = that renewTime, and is assigned (no fencing
    token to check).  one_process: each identity is one process, so a
    holder writing a new acquireTime over its own live term (client-go
    does, when the controller names it) goes on in that term; otherwise
    it is a new term, judged by S1 as a takeover (a second process of
    the same identity)."""
    out, cur, assigned = [], None, None
    for v in versions:
        if v.kind == "DELETED":
            if cur is not None:
                cur.end, cur.end_version = "deleted", v
            cur, assigned = None, None
            continue
        if cur is not None and cur.uid != v.uid:
            cur.end = cur.end or "deleted"
            cur = None
        if assigned is not None and assigned.uid != v.uid:
            assigned = None
        if v.holder == "":
            if cur is not None:
                cur.end, cur.end_version = "released", v
            cur, assigned = None, None
            continue
        if cur is not None and cur.holder == v.holder and (
                cur.acquire == v.acquire or
                (v.acquire is None and cur.assigned) or
                (v.acquire is not None and one_process)):
            cur.versions.append(v)
            continue
        if v.acquire is None and (assigned is None or
                                  assigned.holder != v.holder or
                                  assigned.renew == v.renew):
            # The controller's assignment: the holder's term begins
            # with its own write, judged against the term before.
            assigned = v
            continue
        prev = cur
        if prev is None and out and out[-1].uid == v.uid:
            prev = out[-1]
        t = Term(v, prev)
        if v.acquire is None:
            t.acquire, t.assigned = v.renew, True
        assigned = None
        if cur is not None:
            cur.end = "handed over" if t.handover else "taken"
            cur.end_version = v
            cur.next = t
        elif prev is not None:
            prev.next = t
        out.append(t)
        cur = t
    return out


def hist_terms(hist, name):
    """terms() of one Lease of hist, with hist.one_process (False if it
    has none)."""
    return terms(hist.versions(name), getattr(hist, "one_process", False))


def _horizon(horizon, rd, holder):
    if horizon is None:
        return rd
    if callable(horizon):
        return horizon(holder)
    return horizon.get(holder, rd)


EPS = 2e-6      # MicroTime rounding of two stamps


def check_s1(ts, rd, horizon=None):
    """Server-side S1 on one Lease's terms; [(prev holder, holder, gap)]
    for every takeover of a live term."""
    out, bad = [], []
    for t in ts:
        p = t.prev
        if p is None or p.end != "taken" or p.uid != t.uid:
            continue
        gap = t.acquire - p.last_renew
        need = _horizon(horizon, rd, p.holder)
        out.append((p.holder, t.holder, gap))
        if gap < need - EPS:
            bad.append("%s took %s over %.3fs after %s's last renew "
                       "(< %.3fs): %r after %r" % (
                           t.holder, t.name, gap, p.holder, need,
                           t.versions[0], p.versions[-1]))
    assert not bad, "S1 violated on the server's history: " + "; ".join(bad)
    return out


def check_tokens(versions, ts):
    """leaseTransitions never decreases on a uid, and grows with every new
    term."""
    bad = []
    last = {}
    for v in versions:
        if v.kind == "DELETED":
            continue
        if v.uid in last and v.transitions < last[v.uid].transitions:
            bad.append("leaseTransitions went back: %r then %r" % (
                last[v.uid], v))
        last[v.uid] = v
    for t in ts:
        p = t.prev
        if p is not None and p.uid == t.uid and not t.assigned and \
                t.transitions <= p.transitions:
            bad.append("a new term without a greater leaseTransitions: "
                       "%r then %r" % (p, t))
    assert not bad, "fencing token not monotonic: " + "; ".join(bad)


def check_renew_times(ts):
    """No renewTime in two terms of a uid; none going back in a term."""
    bad, seen = [], {}
    for t in ts:
        r = None
        for v in t.versions:
            if v.renew is None:
                continue
            if r is not None and v.renew < r:
                bad.append("renewTime went back in a term: %r" % v)
            r = v.renew
            k = (t.uid, v.renew_s)
            if seen.get(k, t) is not t:
                bad.append("renewTime %s in two terms: %r and %r" % (
                    v.renew_s, seen[k], t))
            seen[k] = t
    assert not bad, "renewTime not unique: " + "; ".join(bad)


class Claim:
    """An interval a leaderd instance said "I lead" on one Lease."""

    def __init__(self, lease, ident, body, end, end_why):
        self.lease, self.ident = lease, ident
        self.start = microtime(body.get("changed_at"))
        self.end, self.end_why = end, end_why
        self.token = body.get("fencing_token") or ""
        self.renew_s = body.get("renew_time") or ""
        self.body = body

    def __repr__(self):
        return "<claim %s by %s %s..%s (%s) token %s renew %s>" % (
            self.lease, self.ident, _ts(self.start), _ts(self.end),
            self.end_why, self.token, self.renew_s)


def _lease_of(body):
    lock = body.get("lock") or ""
    return lock.rsplit("/", 1)[-1] if lock else body.get("election", "")


class LeaderStream:
    """One leaderd process's event stream (GET /leader/watch by default;
    /leaders/watch carries every election's, /leader/NAME/watch one)."""

    def __init__(self, ident, port, path="/leader/watch",
                 host="127.0.0.1"):
        self.ident, self.port, self.path, self.host = ident, port, path, host
        self.events = []        # (recv_mono, recv_wall, body)
        self.eof_wall = None
        self.eof_mono = None
        self.error = None
        self.opened = threading.Event()
        self.stop_ev = threading.Event()
        self.sock = None
        self.thread = None

    def start(self, timeout=5.0):
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        if not self.opened.wait(timeout):
            raise AssertionError("%s: %s did not answer: %s" % (
                self.ident, self.path, self.error))
        return self

    def _run(self):
        try:
            c = http.client.HTTPConnection(self.host, self.port, timeout=30)
            c.request("GET", self.path)
            # The socket itself: a streamed response detaches it from c.
            self.sock = c.sock
            r = c.getresponse()
            if r.status != 200:
                self.error = "%d %s" % (r.status, r.read()[:200])
                return
            while True:
                line = r.readline()
                now_m, now_w = time.monotonic(), time.time()
                if not line:
                    break
                if line.startswith(b"data: "):
                    self.events.append((now_m, now_w,
                                        json.loads(line[6:])))
                    self.opened.set()
        except (OSError, http.client.HTTPException, ValueError) as e:
            if not self.stop_ev.is_set():
                self.error = str(e)
        finally:
            if not self.stop_ev.is_set():
                self.eof_mono, self.eof_wall = time.monotonic(), time.time()

    def stop(self):
        """Stop reading; a claim still open ends now."""
        if self.eof_wall is None:
            self.eof_mono, self.eof_wall = time.monotonic(), time.time()
        self.stop_ev.set()
        if self.sock is not None:
            try:
                self.sock.shutdown(2)
            except OSError:
                pass
        if self.thread is not None:
            self.thread.join(timeout=5)
        assert self.thread is None or not self.thread.is_alive(), \
            "%s: the stream reader did not stop" % self.ident

    def claims(self):
        """Every "I lead" interval, per Lease."""
        out, open_ = [], {}
        for _, _, b in list(self.events):
            lease = _lease_of(b)
            c = open_.pop(lease, None)
            if c is not None:
                c.end, c.end_why = microtime(b.get("changed_at")), "event"
                if b.get("is_leader") is True and \
                        b.get("fencing_token") == c.token:
                    open_[lease] = c     # still leading: one claim
                    c.end = None
                    continue
                out.append(c)
            if b.get("is_leader") is True:
                open_[lease] = Claim(lease, self.ident, b, None, None)
        for c in open_.values():
            c.end, c.end_why = self.eof_wall, "stream end"
            out.append(c)
        return out


def check_streams(hist, streams, rd, slack=0.25, tokens=True):
    """Every claim lies in a term of its instance (see the docstring);
    returns (number of claims, the latest end past its bound)."""
    bad, n, worst = [], 0, None
    tmap = {name: hist_terms(hist, name) for name in hist.names()}
    for s in streams:
        for c in s.claims():
            n += 1
            ts = [t for t in tmap.get(c.lease, []) if t.holder == c.ident]
            if tokens and c.token:
                tr, _, uid = c.token.partition("-")
                ts = [t for t in ts if (t.uid, t.transitions) ==
                      (uid, int(tr))] or ts
            # The term whose span holds the claim's start.
            best = None
            for t in ts:
                st = t.own_start()
                if st is not None and st <= c.start + EPS:
                    best = t
            if best is None:
                bad.append("%r: no term of %s began before it (terms %r)" % (
                    c, c.ident, ts))
                continue
            t = best
            if tokens and c.token and c.token != "%010d-%s" % (
                    t.transitions, t.uid):
                bad.append("%r: the fencing token is not its term's %r" % (
                    c, t))
            if c.renew_s and c.renew_s not in [v.renew_s
                                                for v in t.versions]:
                bad.append("%r: its renew_time is no committed version of "
                           "%r" % (c, t))
            bound = t.last_renew + rd
            if t.end_version is not None:
                ev = t.end_version
                bound = min(bound, t.next.acquire if t.end in (
                    "taken", "handed over") and t.next is not None
                            else ev.renew or bound)
            over = c.end - bound
            worst = over if worst is None else max(worst, over)
            if over > slack:
                bad.append("%r ends %.3fs after its term allows (%r)" % (
                    c, over, t))
    assert not bad, "leaderd's streams disagree with the server's " \
        "history: " + "; ".join(bad)
    return n, worst


def check_no_overlap(claims):
    """No two identities' claims on one Lease overlap in time; the number
    of pairs that met end to end (0 s apart or less than 10 ms)."""
    by = {}
    for c in claims:
        by.setdefault(c.lease, []).append(c)
    close = 0
    for cs in by.values():
        cs.sort(key=lambda c: c.start)
        for i, a in enumerate(cs):
            for b in cs[i + 1:]:
                if b.start > a.end:
                    if b.start - a.end < 0.01 and b.ident != a.ident:
                        close += 1
                    break
                assert a.ident == b.ident, \
                    "overlapping claims: %r and %r" % (a, b)
    return close


def check_follow(hist, streams, bound):
    """Each stream's holder ("name") follows the server's: the longest time
    a live stream named another holder than the latest version did (the
    version's receive time against leaderd's changed_at), at most bound.
    Returns that longest time."""
    worst, bad = 0.0, []
    for s in streams:
        evs = [(microtime(b.get("changed_at")), _lease_of(b),
                b.get("name") or "") for _, _, b in list(s.events)]
        if not evs:
            continue
        end = s.eof_wall if s.eof_wall is not None else time.time()
        for lease in {e[1] for e in evs}:
            mine = [(t, n) for t, le, n in evs if le == lease]
            srv = [(v.recv_wall, "" if v.kind == "DELETED" else v.holder)
                   for v in hist.versions(lease)]
            pts = sorted({t for t, _ in mine + srv
                          if mine[0][0] <= t <= end} | {mine[0][0], end})
            since = None
            for t in pts:
                a = [n for u, n in mine if u <= t][-1:]
                b = [n for u, n in srv if u <= t][-1:]
                if since is not None and t - since > worst:
                    worst = t - since
                if since is not None and t - since > bound:
                    bad.append("%s named %r at %s, the server %r, for "
                               "%.3fs" % (s.ident, a, _ts(since), b,
                                          t - since))
                    break
                if a != b and b:
                    since = t if since is None else since
                else:
                    since = None
    assert not bad, "a stream did not follow the holder: " + "; ".join(bad)
    return worst


def dump(hist, streams, path):
    """Every version and every stream event as JSON lines into path (for
    a failed check: what the server wrote and what each instance said)."""
    with open(path, "w") as f:
        for name in hist.names():
            for v in hist.versions(name):
                d = dict(vars(v))
                d["type"] = "version"
                f.write(json.dumps(d) + "\n")
        for st in streams:
            for m, w, b in list(st.events):
                f.write(json.dumps({"type": "event", "ident": st.ident,
                                    "recv_mono": m, "recv_wall": w,
                                    "body": b}) + "\n")
            f.write(json.dumps({"type": "eof", "ident": st.ident,
                                "wall": st.eof_wall}) + "\n")
    return path


def check(hist, streams, rd, horizon=None, slack=0.25, ignore=()):
    """All four checks over every recorded Lease; the figures."""
    fig = {"leases": 0, "versions": 0, "terms": 0, "takeovers": 0,
           "min_gap": None}
    for name in hist.names():
        if name in ignore:
            continue
        vs = hist.versions(name)
        ts = hist_terms(hist, name)
        fig["leases"] += 1
        fig["versions"] += len(vs)
        fig["terms"] += len(ts)
        gaps = check_s1(ts, rd, horizon)
        fig["takeovers"] += len(gaps)
        for g in gaps:
            if fig["min_gap"] is None or g[2] < fig["min_gap"]:
                fig["min_gap"] = g[2]
        check_tokens(vs, ts)
        check_renew_times(ts)
    fig["claims"], fig["worst_end"] = check_streams(hist, streams, rd, slack)
    return fig


def summary(fig):
    """One line of figures for a test's output."""
    return ("server history: %(leases)d leases, %(versions)d versions, "
            "%(terms)d terms, %(takeovers)d takeovers of a live term "
            "(smallest gap %(gap)s); %(claims)d claims on the streams, "
            "latest end %(worst)s" % dict(
                fig, gap="-" if fig["min_gap"] is None
                else "%.3fs" % fig["min_gap"],
                worst="-" if fig["worst_end"] is None
                else "%+.3fs past its bound" % fig["worst_end"]))
