"""leaderd as a drop-in for vapor-ware/k8s-elector 1.2.0 (image
vaporio/k8s-elector, binary ./elector), started with that sidecar's exact
command lines: example.yaml's args, the README's two `kubectl run`
lines, and sando38/helm-ejabberd's space-separated one.  The pods are
in-cluster (a service-account directory whose namespace file says
team-a), as the sidecar's users run it.

What a k8s-elector user reads (test/compat/peers.md section 3): GET (any
path, any method) on -http answers 200, Content-Type application/json,
{"is_leader":B,"leader":"X","node":"ID","timestamp":"RFC 3339 UTC"} with
sorted keys and no newline; the lock -election in -namespace, whose
default is the literal "default"; a Lease unless -lock-type; -ttl 10s
split into lease 10s, renew ttl/3, retry ttl/6; no listener without
-http; the pod label k8s-elector/status: leader|standby on the pod
$ELECTOR_POD_NAME (else the hostname); Go's flag grammar, its messages
and exit statuses.

The changes to the copied command lines: the port 4040 (or 5002)
becomes a free port, so that tests can run side by side; and where
several replicas run, each gets -id=<its pod name> and
$ELECTOR_POD_NAME, because the test's processes share one hostname (a
pod's hostname is its name, which k8s-elector uses for both):
test_readme_leases_without_http and test_sando38_space_separated run
without them and check the hostname defaults."""

import datetime
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

import pytest

from fakeapi import LEADER_ANNOTATION
from harness import free_port, leaderd_binary, tcp_request, wait_until
from peerpod import PeerPod, pods_fixture

POD_NS = "team-a"
ARGV0 = "./elector"             # the image's ENTRYPOINT ["./elector"]
KEY = "k8s-elector/status"
BODY_RE = re.compile(
    rb'^\{"is_leader":(true|false),"leader":("(?:[^"\\]|\\.)*"),'
    rb'"node":("(?:[^"\\]|\\.)*"),'
    rb'"timestamp":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"\}\Z')
# client-go v0.17's release on configmaps/endpoints: only
# leaderTransitions kept, zero (null) times.
RELEASED = ('{"holderIdentity":"","leaseDurationSeconds":0,'
            '"acquireTime":null,"renewTime":null,"leaderTransitions":%d}')
# Go's flag.PrintDefaults for k8s-elector's flag set (cmd/elector.go and
# klog v1.0.0), from test/compat/vapor-flags run with -h.
USAGE = """\
  -add_dir_header
    \tIf true, adds the file directory to the header
  -alsologtostderr
    \tlog to standard error as well as files
  -election string
    \tThe name of the election. This is required.
  -http string
    \tThe HTTP address (host:port) which leader state will be reported on.
  -id string
    \tThe ID of the election participant. If not set, the hostname, \
as reported by the kernel, is used.
  -kubeconfig string
    \tThe kubeconfig file to use. If not set, in-cluster config will \
be used.
  -lock-type string
    \tThe type of Kubernetes object to use for the lock (leases, \
endpoints, configmaps) (default "leases")
  -log_backtrace_at value
    \twhen logging hits line file:N, emit a stack trace
  -log_dir string
    \tIf non-empty, write log files in this directory
  -log_file string
    \tIf non-empty, use this log file
  -log_file_max_size uint
    \tDefines the maximum size a log file can grow to. Unit is \
megabytes. If the value is 0, the maximum file size is unlimited. \
(default 1800)
  -logtostderr
    \tlog to standard error instead of files (default true)
  -namespace string
    \tThe Kubernetes namespace to run the election in. If not set, \
elections will run in the default namespace. (default "default")
  -skip_headers
    \tIf true, avoid header prefixes in the log messages
  -skip_log_headers
    \tIf true, avoid headers when opening log files
  -stderrthreshold value
    \tlogs at or above this threshold go to stderr (default 2)
  -ttl duration
    \tThe TTL for the election. (default 10s)
  -v value
    \tnumber for the log level verbosity
  -vmodule value
    \tcomma-separated list of pattern=N settings for file-filtered logging
"""


def failover(ttl):
    """Takeover after a crash: the lease (ttl), up to 2.2 retries (ttl/6)
    of jitter between tries, and slack."""
    return ttl + 2.2 * ttl / 6 + 3


def pod_hostname():
    return socket.gethostname()


def valid_pod_name(s):
    return re.match(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", s) is not None \
        and len(s) <= 253


class Pod(PeerPod):
    """One leaderd process started as the k8s-elector image starts
    ./elector: its args, in a pod whose namespace is team-a."""

    namespace = POD_NS
    unset = PeerPod.unset + ("ELECTOR_POD_NAME",)

    def __init__(self, api, tmp, name, args, pod_env=True, argv0=ARGV0,
                 env=None):
        super().__init__(api, tmp, name)
        e = self.incluster_env()
        # Neither is k8s-elector's: they must change nothing.
        e.update({"POD_NAME": "not-" + name,
                  "POD_NAMESPACE": POD_NS})
        if pod_env:
            e["ELECTOR_POD_NAME"] = name
        e.update(env or {})
        self.launch([argv0] + list(args), e, cwd=self.dir)

    def terminate(self, timeout=10):
        """SIGTERM, as the kubelet stops the container; its exit status."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)


pods = pods_fixture(Pod)


def request(port, path="/", method="GET"):
    """(status, headers, body) as a client of k8s-elector sends it."""
    body = b"{}" if method in ("POST", "PUT") else b""
    req = ("%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
           "Content-Length: %d\r\n\r\n" % (method, path, len(body))).encode()
    try:
        return tcp_request(port, req + body, timeout=1.0,
                           head=(method == "HEAD"))
    except OSError:
        return None


def vapor_answer(port, node, leader, is_leader, path="/", method="GET"):
    """None if port answers path as k8s-elector would, else the mismatch:
    200, application/json, the sorted-key body without a newline, and a
    timestamp that is now (UTC, to the second)."""
    before = datetime.datetime.now(datetime.timezone.utc).replace(
        microsecond=0)
    r = request(port, path, method)
    after = datetime.datetime.now(datetime.timezone.utc)
    if r is None:
        return "no answer"
    st, h, b = r
    if st != 200 or h.get("content-type") != "application/json":
        return "%s %s %r" % (st, h.get("content-type"), b)
    m = BODY_RE.match(b)
    if m is None:
        return "body %r" % b
    got = (m.group(1) == b"true", json.loads(m.group(2)),
           json.loads(m.group(3)))
    if got != (is_leader, leader, node):
        return "is_leader, leader, node = %r, want %r" % (
            got, (is_leader, leader, node))
    ts = datetime.datetime.strptime(m.group(4).decode(),
                                    "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc)
    if not before <= ts <= after:
        return "timestamp %s not in [%s, %s]" % (ts, before, after)
    return None


def read(port):
    """The body as jq reads it, or None."""
    r = request(port)
    if r is None or r[0] != 200:
        return None
    return json.loads(r[2])


def record(api, resource, ns, name):
    obj = api.get_object(resource, ns, name)
    if obj is None:
        return None
    raw = (obj["metadata"].get("annotations") or {}).get(LEADER_ANNOTATION)
    return json.loads(raw) if raw else None


def holder(api, resource, ns, name):
    if resource == "leases":
        lease = api.get_lease(ns, name)
        return lease["spec"].get("holderIdentity") if lease else None
    rec = record(api, resource, ns, name)
    return rec["holderIdentity"] if rec else None


def label(api, ns, pod):
    return (api.pod_labels(ns, pod) or {}).get(KEY)


def listening_ports(pid):
    """TCP ports pid listens on (from /proc)."""
    out = []
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:"):
            inodes.add(target[8:-1])
    for tab in ("/proc/%d/net/tcp" % pid, "/proc/%d/net/tcp6" % pid):
        with open(tab) as f:
            for ln in f.read().splitlines()[1:]:
                cols = ln.split()
                if cols[9] in inodes and cols[3] == "0A":
                    out.append(int(cols[1].split(":")[1], 16))
    return out


def test_example_yaml_three_replicas_failover_and_handover(api, pods):
    """example.yaml: three replicas with args -election=example-election
    -http=localhost:4040 -ttl=3s -namespace=default -lock-type=configmaps.
    Every pod answers who leads; the lock is the ConfigMap
    default/example-election with leaseDurationSeconds 3; the leader's pod
    is labelled leader, the others standby.  A killed leader is replaced
    within the ttl; a SIGTERM'd one labels itself standby, releases, and
    exits 0 (k8s-elector exits 255 there), and the next pod takes over
    at once rather than after the ttl."""
    names = ["k8s-elector-example-%d" % i for i in range(3)]
    ports = [free_port() for _ in names]
    for n in names:
        api.create_pod("default", n, labels={"app": "k8s-elector"})
    ps = [pods(n, ["-election=example-election",
                   "-http=localhost:%d" % port, "-ttl=3s",
                   "-namespace=default", "-lock-type=configmaps",
                   "-id=%s" % n])
          for n, port in zip(names, ports)]
    wait_until(lambda: holder(api, "configmaps", "default",
                              "example-election") in names, 10,
               what="a holder of ConfigMap default/example-election")
    lead = holder(api, "configmaps", "default", "example-election")
    rec = record(api, "configmaps", "default", "example-election")
    assert rec["leaseDurationSeconds"] == 3, rec
    for n, port in zip(names, ports):
        wait_until(lambda: vapor_answer(port, n, lead, n == lead) is None,
                   10, what="GET / on %s: %s"
                   % (n, vapor_answer(port, n, lead, n == lead)))
    for n in names:
        want = "leader" if n == lead else "standby"
        wait_until(lambda: label(api, "default", n) == want, 5,
                   what="%s labelled %s" % (n, want))
        assert api.pod_labels("default", n)["app"] == "k8s-elector"
    assert api.get_lease("default", "example-election") is None
    assert api.get_object("configmaps", POD_NS, "example-election") is None

    # A crash: nothing runs OnStoppedLeading, the others take over.
    dead = ps[names.index(lead)]
    dead.stop()
    t0 = time.monotonic()
    wait_until(lambda: holder(api, "configmaps", "default",
                              "example-election") not in (lead, "", None),
               failover(3), what="another pod to take the lock")
    assert time.monotonic() - t0 > 1.5, "taken before the lease ran out"
    second = holder(api, "configmaps", "default", "example-election")
    live = [(n, port) for n, port in zip(names, ports) if n != lead]
    for n, port in live:
        wait_until(lambda: vapor_answer(port, n, second, n == second) is None,
                   5, what="GET / on %s names %s" % (n, second))
    wait_until(lambda: label(api, "default", second) == "leader", 5,
               what="the new leader's label")

    # SIGTERM: standby, release, exit 0; the third pod takes over at once.
    p2 = ps[names.index(second)]
    third = [n for n, _ in live if n != second][0]
    assert p2.terminate() == 0, p2.text()
    t_exit = time.monotonic()
    assert label(api, "default", second) == "standby"
    wait_until(lambda: holder(api, "configmaps", "default",
                              "example-election") == third, 2.5,
               what="%s to take the released lock" % third)
    assert time.monotonic() - t_exit < 2.5
    port3 = ports[names.index(third)]
    wait_until(lambda: vapor_answer(port3, third, third, True) is None, 5,
               what="GET / on %s: %s"
               % (third, vapor_answer(port3, third, third, True)))


def test_readme_leases_without_http(api, pods):
    """README.md: `kubectl run k8s-elector --image=vaporio/k8s-elector
    --replicas=3 -- -election=example`: a Lease default/example (the
    default lock), leaseDurationSeconds 10 (-ttl's default), no listener
    at all, the identity the hostname (not $POD_NAME), and the label on
    $ELECTOR_POD_NAME's pod."""
    api.create_pod("default", "k8s-elector-0")
    p = pods("k8s-elector-0", ["-election=example"])
    host = pod_hostname()
    wait_until(lambda: holder(api, "leases", "default", "example") == host,
               10, what="the hostname %s to hold Lease default/example"
               % host)
    lease = api.get_lease("default", "example")
    assert lease["spec"]["leaseDurationSeconds"] == 10, lease
    wait_until(lambda: label(api, "default", "k8s-elector-0") == "leader", 5,
               what="the leader label")
    assert p.proc.poll() is None
    assert listening_ports(p.proc.pid) == []
    assert api.get_lease(POD_NS, "example") is None


def test_readme_configmaps_http(api, pods):
    """README.md: `-election=example -lock-type=configmaps
    -http=0.0.0.0:5002`: the README's own output, a standby's and the
    leader's answers, and a ConfigMap default/example."""
    names = ["k8s-elector-74c54b485f-hgf9z", "k8s-elector-74c54b485f-564ht"]
    ports = [free_port() for _ in names]
    a = pods(names[0], ["-election=example", "-lock-type=configmaps",
                        "-http=0.0.0.0:%d" % ports[0], "-id=" + names[0]])
    wait_until(lambda: holder(api, "configmaps", "default", "example") ==
               names[0], 10, what="the first pod to lead")
    pods(names[1], ["-election=example", "-lock-type=configmaps",
                    "-http=0.0.0.0:%d" % ports[1], "-id=" + names[1]])
    for n, port in zip(names, ports):
        wait_until(lambda: vapor_answer(port, n, names[0], n == names[0])
                   is None, 10, what="GET / on %s: %s" % (
                       n, vapor_answer(port, n, names[0], n == names[0])))
    # The README's example bytes, with our time.
    st, h, b = request(ports[1])
    ts = BODY_RE.match(b).group(4)
    assert b == (b'{"is_leader":false,"leader":"k8s-elector-74c54b485f-hgf9z",'
                 b'"node":"k8s-elector-74c54b485f-564ht","timestamp":"'
                 + ts + b'"}')
    assert api.get_object("configmaps", "default", "example") is not None
    assert a.proc.poll() is None


def test_sando38_space_separated(api, pods):
    """sando38/helm-ejabberd image/.../scripts/run.sh: `elector -election
    "$election_name" -namespace "$pod_namespace" -http "$election_url"
    -ttl "$election_ttl" &` with ELECTION_URL=127.0.0.1:4040 and
    ELECTION_TTL=10s; its scripts read `jq .is_leader` and `.leader`, and
    stop the elector with `kill -s TERM`.  No -id and no
    $ELECTOR_POD_NAME: the hostname is the identity and the pod."""
    port = free_port()
    host = pod_hostname()
    labelled = valid_pod_name(host)
    if labelled:
        api.create_pod(POD_NS, host)
    p = pods("ejabberd-0", ["-election", "ejabberd", "-namespace", POD_NS,
                            "-http", "127.0.0.1:%d" % port, "-ttl", "10s"],
             pod_env=False, argv0="elector")
    wait_until(lambda: (read(port) or {}).get("is_leader") is True, 10,
               what="jq .is_leader to say true")
    body = read(port)
    assert body["leader"] == host and body["node"] == host, body
    assert vapor_answer(port, host, host, True) is None
    lease = api.get_lease(POD_NS, "ejabberd")
    assert lease["spec"]["holderIdentity"] == host
    assert lease["spec"]["leaseDurationSeconds"] == 10
    if labelled:
        wait_until(lambda: label(api, POD_NS, host) == "leader", 5,
                   what="the label on pod %s" % host)
    else:
        # A hostname that cannot be a pod's name: no label at all.
        assert "label" not in p.text(), p.text()
    # kill -s TERM: leaderd releases and exits 0 (k8s-elector: 255).
    assert p.terminate() == 0, p.text()
    lease = api.get_lease(POD_NS, "ejabberd")
    assert lease["spec"].get("holderIdentity", "") == "", lease
    if labelled:
        assert label(api, POD_NS, host) == "standby"


@pytest.mark.parametrize("args", [
    ["--election=x", "-v=2", "--compat=vapor"],
    ["--compat", "vapor", "--election", "x", "--ttl=10s", "-v", "4"],
    ["-election=x", "--namespace", "default", "-logtostderr=false",
     "-stderrthreshold=INFO", "first-non-flag", "-bogus"],
])
def test_go_flag_spellings(api, pods, args):
    """Go's flag: --flag as -flag, values after = or a space, klog's
    flags (-v=2) accepted, everything after the first non-flag ignored,
    --compat in either form skipped."""
    port = free_port()
    args = ["-http=127.0.0.1:%d" % port, "-id=go-0"] + args
    p = pods("go-0", args)
    wait_until(lambda: vapor_answer(port, "go-0", "go-0", True) is None, 10,
               what="GET /: %s" % vapor_answer(port, "go-0", "go-0", True))
    assert holder(api, "leases", "default", "x") == "go-0"
    lease = api.get_lease("default", "x")
    assert lease["spec"]["leaseDurationSeconds"] == 10
    if "4" in args:
        assert " debug " in p.text()


def test_every_path_and_method(api, pods):
    """httpLeaderInfo is on "/", which net/http matches for every path and
    method: the same answer for all of them that leaderd does not serve
    itself, HEAD without a body."""
    port = free_port()
    pods("paths-0", ["-election=paths", "-http=127.0.0.1:%d" % port,
                     "-id=paths-0"])
    wait_until(lambda: vapor_answer(port, "paths-0", "paths-0", True) is None,
               10, what="GET /")
    for method, path in (("GET", "/"), ("GET", "/status"),
                         ("GET", "/x/y?z=1"), ("POST", "/"),
                         ("PUT", "/anything"), ("DELETE", "/"),
                         ("OPTIONS", "/leader-info")):
        assert vapor_answer(port, "paths-0", "paths-0", True, path,
                            method) is None, (method, path)
    st, h, b = request(port, "/", "HEAD")
    assert st == 200 and h.get("content-type") == "application/json"
    assert b == b""
    # leaderd's own paths stay leaderd's.
    st, h, b = request(port, "/leader")
    assert st == 200 and json.loads(b)["identity"] == "paths-0"


def run(args, argv0=ARGV0):
    p = subprocess.run([argv0] + args, executable=leaderd_binary(),
                       stdin=subprocess.DEVNULL, capture_output=True,
                       env={"PATH": os.environ.get("PATH", "")}, timeout=10)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


@pytest.mark.parametrize("args,status,first", [
    (["-election=x", "-bogus"], 2, "flag provided but not defined: -bogus"),
    (["--compat=vapor", "-election", "x", "-ttl", "3"], 2,
     'invalid value "3" for flag -ttl: parse error'),
    (["-election=x", "-logtostderr=nope"], 2,
     'invalid boolean value "nope" for -logtostderr: parse error'),
    (["-election=x", "-v=high"], 2, 'invalid value "high" for flag -v: '
     'strconv.ParseInt: parsing "high": invalid syntax'),
    (["-election"], 2, "flag needs an argument: -election"),
    (["--compat=vapor", "-h"], 0, None),
    (["-election=x", "--help"], 0, None),
    (["-namespace", "n", "-help=1"], 0, None),
])
def test_flag_errors_and_help(args, status, first):
    """Go's flag: an error prints its line and the usage to stderr and
    exits 2; -h and --help print the usage and exit 0 (Go >= 1.15).
    (A bare `./elector -h` selects no peer, so it prints leaderd's own
    usage, also with 0.)"""
    rc, out, err = run(args)
    assert rc == status, (rc, out, err)
    assert out == ""
    usage = "Usage of %s:\n%s" % (ARGV0, USAGE)
    assert err == (first + "\n" if first else "") + usage, err


@pytest.mark.parametrize("args,want", [
    (["-namespace=team-a"], "-election: missing required value: election "
     "name was not specified (see '--help' for usage)"),
    (["-election=x", "-ttl=2500ms"], '-ttl: "2500ms" is not a whole number '
     "of seconds: k8s-elector writes leaseDurationSeconds 2 but waits the "
     "whole ttl itself, and leaderd keeps the record and the wait equal; "
     "use -ttl=2s or -ttl=3s"),
    (["-election=x", "-ttl=0s"], '-ttl: "0s" is not above zero'),
    (["-election=x", "-ttl=300ms"], '-ttl: "300ms" is under one second'),
    (["-election=x", "-lock-type=endpoints", "-ttl=2s"], '-ttl: "2s" with '
     "-lock-type=endpoints is too short beside k8s-elector pods"),
    (["-election=x", "-lock-type=etcd"], '-lock-type: lock.type "etcd" is '
     "not supported"),
    (["-election=Bad_Name"], '-election: lock.name "Bad_Name" is not a '
     "valid Lease name"),
])
def test_refusals(args, want):
    """What k8s-elector exits 255 on (no -election, a bad -lock-type), or
    panics on (a ttl of zero), or runs unsafely (a ttl that is not whole
    seconds, or under one; under 3s on a legacy lock, whose whole-second
    times k8s-elector pods may see unchanged for longer than the ttl),
    leaderd refuses at start with exit 2 and a message naming the flag
    and the fix."""
    rc, out, err = run(args)
    assert rc == 2, (rc, out, err)
    assert want in err, err
    assert "Usage of" not in err


@pytest.mark.parametrize("resource", ["configmaps", "endpoints"])
def test_vapor_released_record_is_free(api, pods, resource):
    """A k8s-elector pod (client-go v0.17) that stopped on SIGTERM leaves
    on configmaps/endpoints the record {"holderIdentity":"",
    "leaseDurationSeconds":0,"acquireTime":null,"renewTime":null,...}:
    leaderd reads it and takes the lock at once, as client-go does, not
    after its ttl (10s)."""
    api.create_object(resource, "default", "handover",
                      annotations={LEADER_ANNOTATION: RELEASED % 4})
    port = free_port()
    t0 = time.monotonic()
    pods("new-0", ["-election=handover", "-lock-type=%s" % resource,
                   "-http=127.0.0.1:%d" % port, "-id=new-0"])
    wait_until(lambda: holder(api, resource, "default", "handover") ==
               "new-0", 4, what="new-0 to take the released lock")
    assert time.monotonic() - t0 < 5
    rec = record(api, resource, "default", "handover")
    assert rec["leaderTransitions"] == 5 and \
        rec["leaseDurationSeconds"] == 10, rec
    wait_until(lambda: vapor_answer(port, "new-0", "new-0", True) is None, 5,
               what="GET /")


class VaporPod:
    """A k8s-elector pod (client-go v0.17) leading a ConfigMap lock with
    -ttl=3s: it rewrites the record every retry period (ttl/6), seconds
    in the times; on SIGTERM it writes the released record."""

    def __init__(self, api, name, ident, ttl=3):
        self.api, self.name, self.ident, self.ttl = api, name, ident, ttl
        self.acquire = self.now()
        self.last_change = None
        self.raw = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def now():
        return datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ")

    def put(self, raw):
        def fn(obj):
            obj["metadata"].setdefault("annotations", {})[
                LEADER_ANNOTATION] = raw
        if self.api.get_object("configmaps", "default", self.name) is None:
            self.api.create_object("configmaps", "default", self.name,
                                   {LEADER_ANNOTATION: raw})
        else:
            self.api.modify_object("configmaps", "default", self.name, fn)
        if raw != self.raw:
            self.raw, self.last_change = raw, time.monotonic()

    def write(self):
        self.put('{"holderIdentity":"%s","leaseDurationSeconds":%d,'
                 '"acquireTime":"%s","renewTime":"%s",'
                 '"leaderTransitions":0}'
                 % (self.ident, self.ttl, self.acquire, self.now()))

    def _run(self):
        while not self._stop.wait(self.ttl / 6):
            self.write()

    def start(self):
        self.write()
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(2)


@pytest.mark.parametrize("how", ["release", "crash"])
def test_mixed_rollout_with_a_vapor_leader(api, pods, how):
    """Issue item 4, k8s-elector beside leaderd on example.yaml's lock
    (configmaps, -ttl=3s): while the k8s-elector pod renews, leaderd
    follows and answers is_leader false with its name; when it stops on
    SIGTERM (released record), leaderd takes over at once; when it
    crashes, leaderd waits its ttl since it last saw the record change,
    as the k8s-elector pods themselves do."""
    vapor = VaporPod(api, "example-election", "k8s-elector-old").start()
    port = free_port()
    pods("k8s-elector-new", ["-election=example-election",
                             "-http=localhost:%d" % port, "-ttl=3s",
                             "-namespace=default", "-lock-type=configmaps",
                             "-id=k8s-elector-new"])
    try:
        wait_until(lambda: vapor_answer(port, "k8s-elector-new",
                                        "k8s-elector-old", False) is None,
                   5, what="leaderd to follow the k8s-elector pod")
        end = time.monotonic() + 2 * 3
        while time.monotonic() < end:
            assert holder(api, "configmaps", "default",
                          "example-election") == "k8s-elector-old"
            time.sleep(0.1)
    finally:
        vapor.stop()
    if how == "release":
        vapor.put(RELEASED % 0)
        t0 = time.monotonic()
        wait_until(lambda: holder(api, "configmaps", "default",
                                  "example-election") == "k8s-elector-new",
                   2, what="leaderd to take the released lock")
    else:
        t0 = vapor.last_change
        wait_until(lambda: holder(api, "configmaps", "default",
                                  "example-election") == "k8s-elector-new",
                   failover(3), what="leaderd to take the abandoned lock")
        # Not before 3s after the last change (leaderd saw it later).
        assert time.monotonic() - t0 >= 3.0
    rec = record(api, "configmaps", "default", "example-election")
    assert rec["leaderTransitions"] == 1 and rec["leaseDurationSeconds"] == 3
    wait_until(lambda: vapor_answer(port, "k8s-elector-new",
                                    "k8s-elector-new", True) is None, 5,
               what="GET / to say leaderd leads")


@pytest.mark.parametrize("resource", ["configmaps", "leases"])
def test_leaderd_renews_within_vapor_ttl(api, pods, resource):
    """A k8s-elector pod (client-go v0.17) takes the lock when it has not
    seen the record's bytes change for its own -ttl.  With the same -ttl
    (3s, example.yaml's), leaderd changes them at least every second on
    configmaps (times to the second) and at every renew (ttl/6) on a
    Lease, so no k8s-elector pod sharing its lock ever takes over."""
    port = free_port()
    lock = ["-lock-type=configmaps"] if resource == "configmaps" else []
    pods("renew-0", ["-election=renew", "-http=127.0.0.1:%d" % port,
                     "-ttl=3s", "-id=renew-0"] + lock)
    wait_until(lambda: holder(api, resource, "default", "renew") ==
               "renew-0", 5, what="renew-0 to lead")
    seen, changes = None, []
    end = time.monotonic() + 6
    while time.monotonic() < end:
        if resource == "leases":
            lease = api.get_lease("default", "renew")
            raw = json.dumps(lease["spec"], sort_keys=True)
        else:
            raw = api.get_object("configmaps", "default", "renew")[
                "metadata"]["annotations"][LEADER_ANNOTATION]
        if raw != seen:
            seen = raw
            changes.append(time.monotonic())
        time.sleep(0.05)
    gaps = [b - a for a, b in zip(changes, changes[1:])]
    assert len(changes) >= 5 and max(gaps) < 1.6, gaps
    assert holder(api, resource, "default", "renew") == "renew-0"


@pytest.mark.parametrize("argv0,args,vapor", [
    ("leaderd", ["-election=sel"], True),
    ("/usr/local/bin/leaderd", ["-v=2", "-namespace", "default",
                                "-election", "sel"], True),
    ("elector", ["-lock-type=leases", "--election=sel"], True),
    ("leaderd", ["--compat=vapor", "--election=sel"], True),
    # argv[0] "elector" is nais/elector's binary too: no selection.
    ("elector", ["--election=sel"], False),
])
def test_selection(api, pods, argv0, args, vapor):
    """Without --compat, a single-dash flag only k8s-elector has selects
    it, whatever the binary's name; argv[0] alone ("elector") does not,
    and leaderd's own grammar then runs."""
    port = free_port()
    pods("sel-0", args + ["--http=127.0.0.1:%d" % port, "--id=sel-0"],
         argv0=argv0)
    if vapor:
        wait_until(lambda: vapor_answer(port, "sel-0", "sel-0", True) is None,
                   10, what="GET /: %s"
                   % vapor_answer(port, "sel-0", "sel-0", True))
        assert holder(api, "leases", "default", "sel") == "sel-0"
    else:
        wait_until(lambda: api.get_lease(POD_NS, "sel") is not None, 10,
                   what="leaderd's own Lease in the pod's namespace")
        st, h, b = request(port)
        assert json.loads(b) == {"name": "sel-0"}, b


def test_http_port_taken(api, pods):
    """k8s-elector exits 255 (klog.Fatalf) when its -http port is taken;
    leaderd fails the start too, with exit 1 and the address, before it
    takes the lock."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        port = s.getsockname()[1]
        p = pods("taken-0", ["-election=taken", "-http=127.0.0.1:%d" % port,
                             "-id=taken-0"])
        assert p.proc.wait(10) == 1, p.text()
        assert "Address already in use" in p.text(), p.text()
        assert holder(api, "leases", "default", "taken") is None
    finally:
        s.close()
