"""leaderd as a drop-in for nais/elector, started with naiserator's
exact injections (test/compat/peers.md 2.8): the current one,
nais/naiserator pkg/resourcecreator/leaderelection/leaderelection.go
container() and testdata/leader_election_elector.yaml at 808737d2,

    args: --election=myapplication --election-namespace=mynamespace
          --http=localhost:4040 --probe-address=0.0.0.0:4041
    env:  ELECTOR_LOG_FORMAT=json

and the one before e470f36b (2025-07), a regular container with
`--election=<app> --http=localhost:4040 --election-namespace=<ns>` and
ELECTOR_LOG_FORMAT=json.  Only the image changes: leaderd runs under its
own name, and the flags or the environment select nais.

What a nais user reads (peers.md 2.3-2.9): GET / (any path but /sse,
any method) answers {"name":"<holder>","last_update":"<RFC 3339 Z>"},
application/json, Cache-Control: no-cache, no newline, {} before the
first result; /sse sends "data: <that>\\n\\n" at once and on every change;
the probes on --probe-address answer as controller-runtime's healthz
handler ("ok", text/plain, nosniff; a failure 500 with "[-]<check>
failed: reason withheld" lines); /metrics on --metrics-address has
elector_elections_won and _lost; the Lease is created once, owned by the
pod (ownerReferences) with holderIdentity and acquireTime only, and
nobody ever updates, renews, releases or deletes it: the leader is its
holder until the garbage collector deletes it with the pod.

Each pod runs in a UTS namespace of its own (unshare), so that its
hostname, nais's identity, is its pod's name.  The changes to the
copied command lines: the ports 4040 and 4041 become free ports (the
probes still on 0.0.0.0), and the metrics address, which naiserator
leaves at its default 0.0.0.0:29090 in every pod's own network, is
given a free port through ELECTOR_METRICS_ADDRESS, since the test pods
share one network (test_defaults binds the real defaults once)."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from harness import free_port, leaderd_binary, tcp_request, wait_until
from peerpod import PeerPod, pods_fixture

NS = "mynamespace"
APP = "myapplication"
RESULT_RE = re.compile(rb'^\{"name":"([^"]+)","last_update":'
                       rb'"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"\}$')
# Set a pod's hostname in a UTS namespace of its own, then exec leaderd
# with the argv[0] given.
HOSTNAME_EXEC = ("import os, socket, sys; socket.sethostname(sys.argv[1]); "
                 "os.execv(sys.argv[2], sys.argv[3:])")


class Pod(PeerPod):
    """One leaderd process started as naiserator's sidecar, in-cluster
    (a service-account directory), with a Pod object of its name."""

    namespace = NS
    unset_prefixes = ("ELECTOR_",)

    def __init__(self, api, tmp, name, args, env=None, argv0="leaderd",
                 make_pod=True):
        if make_pod:
            api.create_pod(NS, name)
        super().__init__(api, tmp, name)
        e = self.incluster_env()
        e.update(env or {})
        self.launch([argv0] + list(args), e)

    def launch(self, argv, env, cwd=None):
        """Start leaderd with argv in a UTS namespace whose hostname is
        the pod's name."""
        self.argv = list(argv)
        self.spawn(["unshare", "-r", "-u", sys.executable, "-c",
                    HOSTNAME_EXEC, self.name, leaderd_binary()] + self.argv,
                   env, cwd=cwd)


pods = pods_fixture(Pod)


def injection(http, probes):
    """naiserator's args at HEAD, with free ports."""
    return ["--election=%s" % APP, "--election-namespace=%s" % NS,
            "--http=localhost:%d" % http, "--probe-address=0.0.0.0:%d" % probes]


def get(port, path="/", method="GET", host="localhost"):
    try:
        return tcp_request(port, ("%s %s HTTP/1.1\r\nHost: %s\r\n"
                                  "Content-Length: 0\r\nConnection: close"
                                  "\r\n\r\n" % (method, path, host))
                           .encode(), timeout=1.0)
    except OSError:
        return None


def result(port, path="/"):
    """nais's GET / answer: the holder it names, or None if it is not
    the exact shape (status, headers, bytes)."""
    r = get(port, path)
    if r is None:
        return None
    st, h, b = r
    m = RESULT_RE.match(b)
    if (st != 200 or h.get("content-type") != "application/json" or
            h.get("cache-control") != "no-cache" or m is None):
        return None
    return m.group(1).decode()


def holder(api):
    obj = api.get_lease(NS, APP)
    return obj["spec"].get("holderIdentity") if obj else None


def writes_other_than_create(api):
    """Requests that would need more than nais's RBAC (get, create,
    list, watch on leases; get, list, watch on pods): any PUT, PATCH or
    DELETE, and any POST but a Lease's create."""
    bad = []
    for r in api.requests():
        if r["method"] in ("PUT", "PATCH", "DELETE"):
            bad.append((r["method"], r["path"]))
        elif r["method"] == "POST" and not r["path"].endswith(
                "/namespaces/%s/leases" % NS):
            bad.append((r["method"], r["path"]))
    return bad


def metrics(port):
    r = get(port, "/metrics")
    assert r is not None and r[0] == 200, r
    return r[2].decode()


def sample(text, name):
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


class Sse:
    """A client of GET /sse that reads the chunked body's events."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.s.sendall(b"GET /sse HTTP/1.1\r\nHost: localhost:%d\r\n\r\n"
                       % port)
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.s.recv(4096)
            assert chunk, "closed before the headers"
            self.buf += chunk
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = lines[0]
        self.headers = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        self.body = b""

    def _chunk(self, deadline):
        while True:
            head, sep, rest = self.buf.partition(b"\r\n")
            if sep:
                n = int(head, 16)
                if len(rest) >= n + 2:
                    assert rest[n:n + 2] == b"\r\n", rest[:n + 2]
                    self.buf = rest[n + 2:]
                    return rest[:n]
            self.s.settimeout(max(0.05, deadline - time.monotonic()))
            chunk = self.s.recv(4096)
            assert chunk, "the stream closed"
            self.buf += chunk

    def event(self, timeout=10.0):
        """The next event's bytes, "data: ...\\n\\n" whole."""
        deadline = time.monotonic() + timeout
        while b"\n\n" not in self.body:
            self.body += self._chunk(deadline)
        ev, _, self.body = self.body.partition(b"\n\n")
        return ev + b"\n\n"

    def close(self):
        self.s.close()


def sse_name(ev):
    assert ev.startswith(b"data: ") and ev.endswith(b"\n\n"), ev
    m = RESULT_RE.match(ev[6:-2])
    assert m, ev
    return m.group(1).decode()


def test_naiserator_injection(api, pods):
    """Three replicas with naiserator's injection: the first pod creates
    the Lease, owned by itself, with holderIdentity and acquireTime
    only; every pod names it on GET / and /sse; the probes answer as
    controller-runtime's; the winner counts elector_elections_won."""
    ports = [(free_port(), free_port(), free_port()) for _ in range(3)]
    names = ["myapplication-5d9c-%s" % s for s in ("abcde", "fghij", "klmno")]
    first = pods(names[0], injection(*ports[0][:2]), env={
        "ELECTOR_LOG_FORMAT": "json",
        "ELECTOR_METRICS_ADDRESS": "127.0.0.1:%d" % ports[0][2]})
    wait_until(lambda: holder(api) == names[0], 15,
               what="the first pod to create the Lease")
    ps = [first] + [pods(n, injection(*p[:2]), env={
        "ELECTOR_LOG_FORMAT": "json",
        "ELECTOR_METRICS_ADDRESS": "127.0.0.1:%d" % p[2]})
        for n, p in zip(names[1:], ports[1:])]
    for http, _, _ in ports:
        wait_until(lambda: result(http) == names[0], 15,
                   what="GET / on :%d to name %s: %r"
                   % (http, names[0], get(http)))

    lease = api.get_lease(NS, APP)
    uid = api.get_pod(NS, names[0])["metadata"]["uid"]
    assert lease["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": names[0], "uid": uid}]
    assert set(lease["spec"]) == {"holderIdentity", "acquireTime"}, lease
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$",
                    lease["spec"]["acquireTime"])

    # The bytes of GET / on every path and method but /sse.
    st, h, b = get(ports[1][0], "/")
    assert st == 200 and h["content-type"] == "application/json"
    assert h["cache-control"] == "no-cache" and not b.endswith(b"\n")
    assert int(h["content-length"]) == len(b)
    for path, method in (("/anything", "GET"), ("/x/y?z=1", "POST"),
                         ("/", "DELETE")):
        st, h, b = get(ports[2][0], path, method)
        assert (st, RESULT_RE.match(b).group(1)) == (200, names[0].encode())

    # /sse: the result at once, framed as nais frames it.
    sse = Sse(ports[1][0])
    try:
        assert sse.status == "HTTP/1.1 200 OK"
        assert sse.headers["content-type"] == "text/event-stream"
        assert sse.headers["cache-control"] == "no-cache"
        assert sse.headers["connection"] == "keep-alive"
        assert sse.headers["transfer-encoding"] == "chunked"
        assert sse_name(sse.event()) == names[0]
    finally:
        sse.close()

    # The probes on 0.0.0.0: kubelet's startupProbe GET /healthz.
    for _, probes, _ in ports:
        for path in ("/healthz", "/readyz"):
            # kubelet sends Host: <pod IP>:<port>, the address it connects to.
            st, h, b = get(probes, path, host="127.0.0.1:%d" % probes)
            assert (st, b) == (200, b"ok"), (path, st, b)
            assert h["content-type"] == "text/plain; charset=utf-8"
            assert h["x-content-type-options"] == "nosniff"

    # The winner's counter; followers create nothing, so count nothing.
    text = metrics(ports[0][2])
    assert sample(text, "elector_elections_won") == 1, text
    assert sample(text, "elector_elections_lost") is None
    assert "leader_election_master_status" in text
    assert "elector_elections" not in metrics(ports[1][2])
    st, _, _ = get(ports[0][2], "/healthz")
    assert st == 404

    assert writes_other_than_create(api) == []
    assert len(api.history(NS, APP)) == 1
    assert api.events() == []
    for p in ps:
        assert p.proc.poll() is None, p.text()
    json.loads(ps[0].text().splitlines()[0])   # ELECTOR_LOG_FORMAT=json


def test_older_injection_and_lost_race(api, pods):
    """naiserator before July 2025: `--election=<app> --http=localhost:4040
    --election-namespace=<ns>` and ELECTOR_LOG_FORMAT=json, which alone
    selects nais.  Two pods race for the create: the one whose POST is
    held loses it (AlreadyExists), counts elector_elections_lost, and
    follows the winner."""
    ports = [(free_port(), free_port(), free_port()) for _ in range(2)]
    names = ["%s-7f8b-slow0" % APP, "%s-7f8b-fast1" % APP]

    def args(http):
        return ["--election=%s" % APP, "--http=localhost:%d" % http,
                "--election-namespace=%s" % NS]

    def env(p):
        return {"ELECTOR_LOG_FORMAT": "json",
                "ELECTOR_PROBE_ADDRESS": "127.0.0.1:%d" % p[1],
                "ELECTOR_METRICS_ADDRESS": "127.0.0.1:%d" % p[2]}
    api.add_token("tok-" + names[0])
    api.fault("delay", token="tok-" + names[0], methods=["POST"],
              delay_ms=4000, count=1)
    slow = pods(names[0], args(ports[0][0]), env=env(ports[0]))
    # Its read found no Lease: its create is on its way, and held.
    wait_until(lambda: [r for r in api.requests(token="tok-" + names[0],
                                                method="GET")
                        if r["code"] == 404 and "/leases/" in r["path"]],
               15, what="the first pod to find no Lease")
    pods(names[1], args(ports[1][0]), env=env(ports[1]))
    wait_until(lambda: holder(api) == names[1], 10,
               what="the second pod to win the create")
    for http, _, _ in ports:
        wait_until(lambda: result(http) == names[1], 10,
                   what="GET / on :%d to name %s" % (http, names[1]))
    wait_until(lambda: sample(metrics(ports[0][2]),
                              "elector_elections_lost") == 1, 5,
               what="the slow pod to count its lost election")
    assert sample(metrics(ports[1][2]), "elector_elections_won") == 1
    assert sample(metrics(ports[0][2]), "elector_elections_won") is None
    assert holder(api) == names[1]
    assert api.get_lease(NS, APP)["metadata"]["ownerReferences"][0][
        "name"] == names[1]
    assert writes_other_than_create(api) == []
    assert slow.proc.poll() is None, slow.text()


def test_takeover_only_after_the_lease_is_deleted(api, pods):
    """Leader for life: a killed leader's Lease stands, so nobody takes
    over, however long (past leaderd's own lease_duration, 15 s); once
    the garbage collector deletes it with the pod, a follower creates it
    again, owned by itself, and /sse tells the followers."""
    ports = [(free_port(), free_port(), free_port()) for _ in range(3)]
    names = ["%s-6c4d-%d" % (APP, i) for i in range(3)]
    ps = []
    for n, p in zip(names, ports):
        ps.append(pods(n, injection(p[0], p[1]), env={
            "ELECTOR_LOG_FORMAT": "json",
            "ELECTOR_METRICS_ADDRESS": "127.0.0.1:%d" % p[2]}))
        if n == names[0]:
            wait_until(lambda: holder(api) == names[0], 15,
                       what="the first pod to lead")
    for http, _, _ in ports:
        wait_until(lambda: result(http) == names[0], 15,
                   what="GET / on :%d to name the first pod" % http)
    streams = [Sse(p[0]) for p in ports[1:]]
    try:
        for s in streams:
            assert sse_name(s.event()) == names[0]
        rv = api.get_lease(NS, APP)["metadata"]["resourceVersion"]
        ps[0].kill()
        time.sleep(17)
        assert api.get_lease(NS, APP)["metadata"]["resourceVersion"] == rv
        for http, _, _ in ports[1:]:
            assert result(http) == names[0]
        assert writes_other_than_create(api) == []

        # The garbage collector deletes the Lease with the pod.
        api.delete_lease(NS, APP)
        wait_until(lambda: holder(api) in names[1:], 15,
                   what="a follower to create the Lease again")
        new = holder(api)
        owner = api.get_lease(NS, APP)["metadata"]["ownerReferences"][0]
        assert owner["name"] == new
        assert owner["uid"] == api.get_pod(NS, new)["metadata"]["uid"]
        for http, _, _ in ports[1:]:
            wait_until(lambda: result(http) == new, 10,
                       what="GET / on :%d to name %s" % (http, new))
        for s in streams:
            deadline = time.monotonic() + 10
            while sse_name(s.event(deadline - time.monotonic())) != new:
                pass
    finally:
        for s in streams:
            s.close()
    creates = [h for h in api.history(NS, APP) if h["method"] == "POST"]
    assert len(creates) == 2
    assert writes_other_than_create(api) == []


def test_sigterm_exits_0_and_leaves_the_lease(api, pods):
    """SIGTERM: nais exits 0 at once and never touches its Lease; the
    followers go on naming the old holder."""
    ports = [(free_port(), free_port(), free_port()) for _ in range(2)]
    names = ["%s-9a1b-%d" % (APP, i) for i in range(2)]
    ps = [pods(names[0], injection(*ports[0][:2]), env={
        "ELECTOR_METRICS_ADDRESS": "127.0.0.1:%d" % ports[0][2]})]
    wait_until(lambda: holder(api) == names[0], 15, what="a leader")
    ps.append(pods(names[1], injection(*ports[1][:2]), env={
        "ELECTOR_METRICS_ADDRESS": "127.0.0.1:%d" % ports[1][2]}))
    wait_until(lambda: result(ports[1][0]) == names[0], 15,
               what="the follower to name the leader")
    before = api.get_lease(NS, APP)
    t0 = time.monotonic()
    ps[0].proc.send_signal(signal.SIGTERM)
    assert ps[0].proc.wait(5) == 0, ps[0].text()
    assert time.monotonic() - t0 < 2
    time.sleep(1)
    assert api.get_lease(NS, APP) == before
    assert result(ports[1][0]) == names[0]
    assert writes_other_than_create(api) == []


def test_follows_a_lease_nais_created(api, pods):
    """A mixed rollout: the Lease a nais pod created (its shape, owned by
    its pod) is followed as it is, never taken over; a deleted one is
    created anew by leaderd."""
    api.create_pod(NS, "%s-old-nais" % APP)
    uid = api.get_pod(NS, "%s-old-nais" % APP)["metadata"]["uid"]
    api.create_lease(NS, APP, {"holderIdentity": "%s-old-nais" % APP,
                               "acquireTime": "2026-01-02T03:04:05.000000Z"})
    api.modify_lease(NS, APP, lambda o: o["metadata"].update(
        {"ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
                              "name": "%s-old-nais" % APP, "uid": uid}]}))
    http, probes, mport = free_port(), free_port(), free_port()
    pods("%s-new-0" % APP, injection(http, probes),
         env={"ELECTOR_METRICS_ADDRESS": "127.0.0.1:%d" % mport})
    wait_until(lambda: result(http) == "%s-old-nais" % APP, 15,
               what="leaderd to name the nais pod's holder")
    st, _, b = get(probes, "/readyz")
    assert (st, b) == (200, b"ok")
    rv = api.get_lease(NS, APP)["metadata"]["resourceVersion"]
    time.sleep(3)
    assert api.get_lease(NS, APP)["metadata"]["resourceVersion"] == rv
    assert writes_other_than_create(api) == []
    api.delete_lease(NS, APP)
    wait_until(lambda: holder(api) == "%s-new-0" % APP, 10,
               what="leaderd to create the deleted Lease")
    wait_until(lambda: result(http) == "%s-new-0" % APP, 5,
               what="GET / to name leaderd's pod")


def test_probes_before_setup(api, pods):
    """readyz fails until the pod is read (candidate) and the lock is
    read (official), as controller-runtime words it; healthz passes;
    GET / is {} before the first result."""
    http, probes, mport = free_port(), free_port(), free_port()
    name = "%s-nopod-0" % APP
    p = pods(name, injection(http, probes), make_pod=False,
             env={"ELECTOR_METRICS_ADDRESS": "127.0.0.1:%d" % mport})
    wait_until(lambda: get(probes, "/readyz") is not None, 10,
               what="the probes listener")
    st, h, b = get(probes, "/readyz")
    assert st == 500, (st, b)
    assert b == (b"[-]candidate failed: reason withheld\n"
                 b"[-]official failed: reason withheld\n"
                 b"healthz check failed\n")
    assert h["content-type"] == "text/plain; charset=utf-8"
    assert h["x-content-type-options"] == "nosniff"
    st, h, b = get(probes, "/readyz/candidate")
    assert (st, b) == (500, b"internal server error: candidate has not "
                       b"performed setup\n")
    st, h, b = get(probes, "/readyz/official/")
    assert (st, b) == (500, b"internal server error: no election has run\n")
    assert get(probes, "/healthz")[::2] == (200, b"ok")
    assert get(probes, "/healthz/manager")[::2] == (200, b"ok")
    assert get(probes, "/healthz?verbose")[::2] == (
        200, b"[+]manager ok\nhealthz check passed\n")
    assert get(probes, "/readyz?exclude=candidate&exclude=official")[::2] \
        == (200, b"ok")
    assert get(probes, "/healthz/nope")[::2] == (404, b"404 page not found\n")
    st, h, b = get(http, "/")
    assert (st, b) == (200, b"{}")
    assert h["content-type"] == "application/json"
    wait_until(lambda: "no pod %s in namespace %s" % (name, NS) in p.text(),
               5, what="the hint that the hostname must be the pod's name")

    api.create_pod(NS, name)
    wait_until(lambda: get(probes, "/readyz")[::2] == (200, b"ok"), 10,
               what="/readyz to pass once the pod exists")
    assert get(probes, "/readyz?verbose")[::2] == (
        200, b"[+]candidate ok\n[+]official ok\nhealthz check passed\n")
    # "official" passes once the lock was read (absent, here); the
    # result names the holder once the create is answered.
    wait_until(lambda: result(http) == name, 5, what="GET / to name it")


def test_selection_and_env(api, pods):
    """The flags only nais has select it without --compat (here with no
    ELECTOR_ variable), and so does any ELECTOR_ variable nais reads;
    viper's order is flag, then a non-empty variable, then the
    default."""
    http, probes, mport = free_port(), free_port(), free_port()
    pods("%s-flags-0" % APP, injection(http, probes) +
         ["--metrics-address=127.0.0.1:%d" % mport])
    wait_until(lambda: result(http) == "%s-flags-0" % APP, 15,
               what="--probe-address alone to select nais")
    assert sample(metrics(mport), "elector_elections_won") == 1
    api.delete_lease(NS, APP)
    wait_until(lambda: holder(api) == "%s-flags-0" % APP, 10,
               what="the Lease again")

    # Everything from the environment; an empty variable is unset, and
    # a flag beats its variable.
    http2, probes2, mport2 = free_port(), free_port(), free_port()
    pods("%s-env-1" % APP, ["--http", "localhost:%d" % http2, "positional",
                            "--", "--election=ignored"],
         env={"ELECTOR_ELECTION": APP, "ELECTOR_ELECTION_NAMESPACE": NS,
              "ELECTOR_HTTP": "localhost:%d" % free_port(),
              "ELECTOR_PROBE_ADDRESS": "127.0.0.1:%d" % probes2,
              "ELECTOR_METRICS_ADDRESS": "127.0.0.1:%d" % mport2,
              "ELECTOR_LOG_LEVEL": "", "ELECTOR_LOG_FORMAT": ""})
    wait_until(lambda: result(http2) == "%s-flags-0" % APP, 15,
               what="the env-configured pod to follow")
    assert get(probes2, "/readyz")[::2] == (200, b"ok")


def test_defaults(api, pods):
    """Without the addresses, nais's code defaults (not its README's):
    --http 0.0.0.0:27070, --probe-address 0.0.0.0:28080,
    --metrics-address 0.0.0.0:29090; selected by --compat=nais."""
    for port in (27070, 28080, 29090):
        s = socket.socket()
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            pytest.fail("port %d is taken on this machine" % port)
        finally:
            s.close()
    p = pods("%s-defaults-0" % APP, ["--compat=nais", "--election", APP,
                                     "--election-namespace", NS])
    wait_until(lambda: result(27070) == "%s-defaults-0" % APP, 15,
               what="GET / on 27070: %s" % p.text()[-500:])
    assert get(28080, "/healthz", host="127.0.0.1:28080")[::2] == (200, b"ok")
    assert sample(metrics(29090), "elector_elections_won") == 1


def run(args, env=None, argv0="leaderd"):
    e = {"PATH": os.environ.get("PATH", "")}
    e.update(env or {})
    p = subprocess.run([argv0] + args, executable=leaderd_binary(),
                       stdin=subprocess.DEVNULL, capture_output=True,
                       env=e, timeout=10)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


@pytest.mark.parametrize("args,env,rc,text", [
    # pflag: one dash is a run of shorthand letters.
    (["-election=x", "--election-namespace=y"], None, 2,
     "unknown shorthand flag: 'e' in -election=x"),
    (["--nope=1"], None, 2, "unknown flag: --nope"),
    (["--election"], None, 2, "flag needs an argument: --election"),
    (["---election=x"], None, 2, "bad flag syntax: ---election=x"),
    (["--help"], None, 0, "Usage of elector"),
    (["-h"], None, 0, "Usage of elector"),
    (["--election=x"], None, 1,
     "both --election and --election-namespace are required options"),
    (["--election-namespace=y"], {"ELECTOR_ELECTION": ""}, 1,
     "both --election and --election-namespace are required options"),
    (["--election=x", "--election-namespace=y", "--log-format=xml"], None,
     1, 'log format "xml" is not supported'),
    (["--election=x", "--election-namespace=y"],
     {"ELECTOR_LOG_LEVEL": "verbose"}, 1,
     'not a valid logrus Level: "verbose"'),
    (["--election=x", "--election-namespace=y", "--kubeconfig=/k"], None,
     2, "unknown flag: --kubeconfig"),
])
def test_refusals(args, env, rc, text):
    """The exit codes of nais's command line: pflag's 2 (0 for help),
    nais's ExitConfig 1 for what it checks itself."""
    got, out, err = run(["--compat=nais"] + args, env)
    assert got == rc and text in err, (got, out, err)


def test_unknown_peer_lists_nais():
    got, out, err = run(["--compat=zookeeper", "--election=x", "-n"])
    assert got == 2 and re.search(r"use one of [a-z, ]*\bnais\b", err), err
