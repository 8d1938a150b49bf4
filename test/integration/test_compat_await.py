"""leaderd as a drop-in for LINBIT k8s-await-election (v0.4.x and HEAD
cccb14a), started as its users start it: the image's entrypoint (or
/tmp/utils/k8s-await-election in examples/httpbin-example.yaml) with
the command as its arguments, configured by the environment of its
README.md and examples/httpbin-example.yaml, in-cluster (a
service-account directory whose namespace file says team-a).

What an await user relies on (test/compat/peers.md section 4): no
flags, argv[1..] is the command, which runs only while this pod leads;
K8S_AWAIT_ELECTION_* (ENABLED empty or unset: the command is exec'd
with no election); the Lease LOCK_NAMESPACE/LOCK_NAME with 15s / 10s /
2s; STATUS_ENDPOINT answering every path and method with
{"status": "ok"} (text/plain, sniffed, no newline), or 500
{"status": "expired"}; with SERVICE_NAME, the Endpoints object of the
selectorless Service written with this pod's IP, nodeName and the
SERVICE_PORTS_JSON ports before the command starts; exit 0 when the
command exits 0, 1 when it fails, when leadership is lost, and on any
configuration error.

The changes to the copied environment: STATUS_ENDPOINT ":9999" becomes
":<a free port>", so that tests run side by side; the command
(my-singleton-server, gunicorn httpbin) becomes a small python script
that notes when it starts and stops; IDENTITY, POD_IP and NODE_NAME,
which the downward API fills, are given literally; README's 5 replicas
are 3 here (a 2-core machine)."""

import os
import signal
import sys
import threading
import time

import pytest

from fakeapi import now_microtime
from harness import free_port, tcp_request, wait_until
from peerpod import PeerPod, pods_fixture

POD_NS = "team-a"
CT = "text/plain; charset=utf-8"
OK = b'{"status": "ok"}'
ENV = "K8S_AWAIT_ELECTION_"
# client-go's defaults, as await sets them: a follower takes over at most
# lease_duration after it saw the last change, plus a retry (2s with
# client-go's 1.2 jitter) and slack.
FAILOVER = 15 + 2.4 + 3

# README.md, Deployment my-singleton-with-replicas.
README_ENV = {
    ENV + "ENABLED": "1",
    ENV + "NAME": "linstor-controller",
    ENV + "LOCK_NAME": "piraeus-op-cs",
    ENV + "LOCK_NAMESPACE": "default",
    ENV + "STATUS_ENDPOINT": ":9999",
}

# examples/httpbin-example.yaml, Deployment my-server-with-replicas.
HTTPBIN_ENV = {
    ENV + "ENABLED": "1",
    ENV + "NAME": "my-server",
    ENV + "LOCK_NAME": "my-server",
    ENV + "LOCK_NAMESPACE": "default",
    ENV + "STATUS_ENDPOINT": ":9999",
    ENV + "SERVICE_NAME": "my-service",
    ENV + "SERVICE_NAMESPACE": "default",
    ENV + "SERVICE_PORTS_JSON": '[{"name":"http","port":80}]',
}

# The command: notes "start", "term" and "exit" with its pid and
# time.monotonic() (CLOCK_MONOTONIC, the fake API's clock too), then runs
# until SIGTERM, or exits with CODE after AFTER seconds (AFTER < 0: never).
COMMAND = r"""
import os, signal, sys, time
marker, code, after = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
def mark(ev):
    with open(marker, "a") as f:
        f.write("%d %s %.6f\n" % (os.getpid(), ev, time.monotonic()))
def term(sig, frame):
    mark("term")
    os._exit(0)
signal.signal(signal.SIGTERM, term)
mark("start")
end = time.monotonic() + after
while after < 0 or time.monotonic() < end:
    time.sleep(0.02)
mark("exit")
sys.exit(code)
"""


class Pod(PeerPod):
    """One container whose entrypoint is leaderd named as await."""

    namespace = POD_NS
    unset = PeerPod.unset + ("POD_IP",)
    unset_prefixes = (ENV,)

    def __init__(self, api, tmp, name, env, code=0, after=-1.0,
                 argv0="k8s-await-election", cmd=None, pod_ip=None,
                 node=None, pre=()):
        super().__init__(api, tmp, name)
        self.marker = os.path.join(self.dir, "marker")
        script = os.path.join(self.dir, "server.py")
        with open(script, "w") as f:
            f.write(COMMAND)
        if cmd is None:
            cmd = [sys.executable, script, self.marker, str(code),
                   str(after)]
        self.port = free_port()
        e = self.incluster_env()
        # The downward API: metadata.name, status.podIP, spec.nodeName.
        e[ENV + "IDENTITY"] = name
        if pod_ip is not None:
            e[ENV + "POD_IP"] = pod_ip
        if node is not None:
            e[ENV + "NODE_NAME"] = node
        for k, v in env.items():
            if v is None:
                e.pop(k, None)
            elif k == ENV + "STATUS_ENDPOINT" and v == ":9999":
                e[k] = ":%d" % self.port
            else:
                e[k] = v
        self.env = e
        self.launch([argv0] + list(pre) + list(cmd), e)

    def events(self):
        """The command's notes: [(pid, event, monotonic time)]."""
        try:
            with open(self.marker) as f:
                lines = f.read().split("\n")
        except FileNotFoundError:
            return []
        out = []
        for ln in lines:
            p = ln.split()
            if len(p) == 3:
                out.append((int(p[0]), p[1], float(p[2])))
        return out

    def started(self):
        return [t for _, ev, t in self.events() if ev == "start"]

    def ask(self, path="/", method="GET"):
        """What the status endpoint answers, or None."""
        req = ("%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close"
               "\r\n\r\n" % (method, path)).encode()
        try:
            return tcp_request(self.port, req, timeout=1.0,
                               head=method == "HEAD")
        except OSError:
            return None


pods = pods_fixture(Pod)


def holder(api, ns="default", name="piraeus-op-cs"):
    lease = api.get_lease(ns, name)
    return lease["spec"].get("holderIdentity") if lease else None


def await_ok(pod, path="/", method="GET"):
    """None if pod answers as await does when all is well, else what."""
    r = pod.ask(path, method)
    if r is None:
        return "no answer"
    st, h, b = r
    if method == "HEAD":
        b = OK
    if (st, h.get("content-type"), h.get("content-length"), b) != \
            (200, CT, "16", OK):
        return "%s %s %s %r" % (st, h.get("content-type"),
                                h.get("content-length"), b)
    return None


def test_readme_replicas_and_failover(api, pods):
    """README.md's Deployment: ENABLED=1, NAME=linstor-controller,
    LOCK_NAME=piraeus-op-cs, LOCK_NAMESPACE=default, IDENTITY from
    metadata.name, STATUS_ENDPOINT=:9999, args [my-singleton-server].
    One command runs, the leader's; every pod answers the status on
    every path and method; the Lease is client-go's 15s record in
    default (not the pod's namespace); a killed leader's command is
    gone and another pod's starts within the lease duration."""
    ps = [pods("my-singleton-%d" % i, README_ENV) for i in range(3)]
    wait_until(lambda: holder(api) is not None, 15,
               what="a holder on Lease default/piraeus-op-cs")
    lead = holder(api)
    leader = [p for p in ps if p.name == lead][0]
    wait_until(lambda: leader.started(), 10, what="the leader's command")
    time.sleep(1.0)
    assert [p.name for p in ps if p.started()] == [lead]
    lease = api.get_lease("default", "piraeus-op-cs")
    spec = lease["spec"]
    assert spec["leaseDurationSeconds"] == 15, spec
    for k in ("acquireTime", "renewTime", "leaseTransitions"):
        assert k in spec, spec
    assert api.get_lease(POD_NS, "piraeus-op-cs") is None
    # The status: followers and the leader alike; every path and method
    # (a ServeMux with "/" alone), leaderd's own paths included.
    for p in ps:
        wait_until(lambda: await_ok(p) is None, 5,
                   what="%s's status: %s" % (p.name, await_ok(p)))
        for path, method in (("/healthz", "GET"), ("/leader", "GET"),
                             ("/metrics", "GET"), ("/x/y?z=1", "POST"),
                             ("/", "HEAD"), ("/leader/release", "POST"),
                             ("/readyz", "DELETE")):
            assert await_ok(p, path, method) is None, \
                (p.name, path, method, await_ok(p, path, method))
    # leaderd's own API is not served beside it: no step-down there.
    assert holder(api) == lead

    leader.stop()
    t_kill = time.monotonic()
    wait_until(lambda: holder(api) not in (lead, None), FAILOVER,
               what="another pod to take the Lease")
    new = [p for p in ps if p.name == holder(api)][0]
    wait_until(lambda: new.started(), 10, what="the new leader's command")
    assert new.started()[0] > t_kill
    # SIGKILL took the old command with it (PR_SET_PDEATHSIG).
    old_pid = leader.events()[0][0]
    wait_until(lambda: not os.path.exists("/proc/%d" % old_pid), 5,
               what="the old leader's command to be gone")
    assert api.get_lease("default", "piraeus-op-cs")["spec"][
        "leaseTransitions"] == spec["leaseTransitions"] + 1
    for p in ps:
        if p is not leader:
            assert await_ok(p) is None, await_ok(p)
            assert p.proc.poll() is None


def test_httpbin_example_endpoints(api, pods):
    """examples/httpbin-example.yaml: SERVICE_NAME=my-service,
    SERVICE_NAMESPACE=default, SERVICE_PORTS_JSON='[{"name":"http",
    "port":80}]', POD_IP and NODE_NAME from the downward API.  The
    Endpoints object of the selectorless Service is replaced whole
    (what another leader left, labels and annotations included, is
    gone), names this pod as setServiceEndpoint does, and is written
    before the command starts (here with a 1s slow write); the object
    carries no skip-mirror label
    (the control plane mirrors it into the Service's slice)."""
    api.create_object("endpoints", "default", "my-service",
                      annotations={"left": "by-the-old-leader"},
                      extra={"subsets": [{
                          "addresses": [{"ip": "10.0.0.1",
                                         "nodeName": "node-a"}],
                          "ports": [{"name": "http", "port": 80}]}]})
    # A slow API server: the command must still wait for the write.
    api.fault("delay", delay_ms=1000, methods=["PUT", "POST"],
              path_prefix="/api/v1/namespaces/default/endpoints")
    p = pods("my-server-0", HTTPBIN_ENV,
             argv0="/tmp/utils/k8s-await-election",
             pod_ip="10.0.0.7", node="node-b")
    wait_until(lambda: p.started(), 20, what="the command to start")
    obj = api.get_object("endpoints", "default", "my-service")
    assert obj["subsets"] == [{
        "addresses": [{"ip": "10.0.0.7", "nodeName": "node-b"}],
        "ports": [{"name": "http", "port": 80}]}], obj
    assert "labels" not in obj["metadata"], obj["metadata"]
    assert "annotations" not in obj["metadata"], obj["metadata"]
    writes = [h for h in api.core_history("endpoints", "default",
                                          "my-service")
              if h["token"] == p.token]
    assert writes and writes[0]["ips"] == ["10.0.0.7"], writes
    assert writes[0]["t"] < p.started()[0], (writes[0], p.started())
    # Only the Endpoints object: no slice of leaderd's own.
    assert api.get_object("endpointslices", "default",
                          "my-service-leader") is None
    assert holder(api, "default", "my-server") == "my-server-0"
    assert await_ok(p) is None, await_ok(p)

    # SIGTERM (await has no handler): leaderd stops the command, clears
    # the endpoints it wrote, releases the Lease, then exits 0.
    p.proc.send_signal(signal.SIGTERM)
    assert p.proc.wait(20) == 0, p.text()
    assert [ev for _, ev, _ in p.events()] == ["start", "term"]
    obj = api.get_object("endpoints", "default", "my-service")
    assert obj["subsets"] == [], obj
    assert holder(api, "default", "my-server") == ""


def test_endpoints_several_ports(api, pods):
    """SERVICE_PORTS_JSON with several ports, protocol and appProtocol
    (corev1.EndpointPort), keys in Go's case-insensitive spelling, no
    NODE_NAME: written back as Go's json.Marshal writes them."""
    env = dict(HTTPBIN_ENV)
    env[ENV + "SERVICE_PORTS_JSON"] = (
        '[{"name":"http","port":80,"appProtocol":"kubernetes.io/h2c"},'
        '{"Name":"dns","Port":53,"protocol":"UDP","extra":1}]')
    p = pods("my-server-0", env, pod_ip="fd00::7")
    wait_until(lambda: p.started(), 20, what="the command to start")
    obj = api.get_object("endpoints", "default", "my-service")
    assert obj["subsets"] == [{
        "addresses": [{"ip": "fd00::7"}],
        "ports": [{"name": "http", "port": 80,
                   "appProtocol": "kubernetes.io/h2c"},
                  {"name": "dns", "port": 53, "protocol": "UDP"}]}], obj


def test_endpoints_write_refused(api, pods):
    """setServiceEndpoint's error ends await with 1 before the command
    starts; leaderd too (after releasing the Lease it took)."""
    api.fault("status", status=403, path_prefix="/api/v1/namespaces/"
              "default/endpoints", message="endpoints is forbidden")
    p = pods("my-server-0", HTTPBIN_ENV, pod_ip="10.0.0.7", node="n")
    assert p.proc.wait(25) == 1, p.text()
    assert p.started() == []
    assert "could not be written" in p.text(), p.text()
    assert holder(api, "default", "my-server") == ""


@pytest.mark.parametrize("code,want", [(0, 0), (3, 1)])
def test_command_exit(api, pods, code, want):
    """The command's exit ends await: 0 for 0, 1 for any failure (an
    exec.ExitError, the code not passed on); leaderd releases the Lease
    first."""
    p = pods("my-singleton-0", README_ENV, code=code, after=1.0)
    assert p.proc.wait(25) == want, p.text()
    assert [ev for _, ev, _ in p.events()] == ["start", "exit"]
    assert holder(api) == ""


def test_command_not_found(api, pods):
    """A command that cannot be run while leading: await's cmd.Run
    fails, exit 1."""
    p = pods("my-singleton-0", README_ENV, cmd=["no-such-server-x"])
    assert p.proc.wait(25) == 1, p.text()


def test_leadership_lost(api, pods):
    """The API server stops answering the leader: its claim ends after
    renew_deadline, the command is stopped (await's context kills it)
    and leaderd exits 1 so that the container restarts; the command is
    gone before another instance may take the Lease."""
    p = pods("my-singleton-0", README_ENV)
    wait_until(lambda: p.started(), 15, what="the command to start")
    t_last = max(h["t_recv"] for h in api.history("default",
                                                   "piraeus-op-cs"))
    api.fault("blackhole", token=p.token)
    t_cut = time.monotonic()
    assert p.proc.wait(40) == 1, p.text()
    evs = p.events()
    assert [ev for _, ev, _ in evs] == ["start", "term"], evs
    t_term = evs[-1][2]
    assert t_term > t_cut
    # Gone before lease_duration after the last renew that landed.
    t_last = max(h["t_recv"] for h in api.history("default",
                                                   "piraeus-op-cs"))
    assert t_term < t_last + 15, (t_term - t_last)


def test_status_expired_shape(api, pods, tmp_path):
    """The leader whose record has not changed for lease_duration + 2s
    answers 500 {"status": "expired"} (client-go's Check(2s)): seen
    while leaderd, cut off from the API server, stops a command that
    ignores SIGTERM and then retries its release."""
    env = dict(README_ENV)
    env[ENV + "LEASE_DURATION"] = "3"
    env[ENV + "RENEW_DEADLINE"] = "2"
    env[ENV + "RETRY_PERIOD"] = "1"
    script = os.path.join(str(tmp_path), "stubborn.py")
    with open(script, "w") as f:
        f.write("import signal, time\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                "time.sleep(60)\n")
    p = pods("my-singleton-0", env, cmd=[sys.executable, script])
    wait_until(lambda: holder(api) == "my-singleton-0", 10,
               what="the pod to lead")
    assert await_ok(p) is None
    api.fault("blackhole", token=p.token)
    seen = {}

    def poll():
        while p.proc.poll() is None:
            r = p.ask()
            if r is not None and r[0] == 500:
                seen["r"] = r
                return
            time.sleep(0.05)
    t = threading.Thread(target=poll)
    t.start()
    p.proc.wait(30)
    t.join(5)
    assert "r" in seen, p.text()
    st, h, b = seen["r"]
    assert (st, h.get("content-type"), b) == \
        (500, CT, b'{"status": "expired"}'), seen["r"]
    assert p.proc.returncode == 1, p.text()


@pytest.mark.parametrize("env,argv,want", [
    # Each required variable, in await's order.
    ({ENV + "NAME": None}, None,
     "config: missing required environment variable: "
     "'K8S_AWAIT_ELECTION_NAME'"),
    ({ENV + "LOCK_NAMESPACE": ""}, None,
     "config: missing required environment variable: "
     "'K8S_AWAIT_ELECTION_LOCK_NAMESPACE'"),
    # A Service named and its ports unreadable.
    ({ENV + "SERVICE_NAME": "my-service",
      ENV + "SERVICE_PORTS_JSON": '{"port":80}'}, None,
     "failed to parse ports from env"),
    # client-go's NewLeaderElector refuses lease <= renew.
    ({ENV + "LEASE_DURATION": "10"}, None, "renew_deadline"),
    # No command at all.
    ({}, [], "Need at least one argument to run"),
    ({}, ["--compat=await"], "Need at least one argument to run"),
])
def test_refusals_exit_1(api, pods, env, argv, want):
    """Every configuration error exits 1, as logrus' Fatal does, and
    nothing is written to the API server."""
    e = dict(README_ENV)
    e.update(env)
    kw = {}
    if argv is not None:
        kw = {"cmd": argv}
        if argv[:1] == ["--compat=await"]:
            kw["argv0"] = "leaderd"
    p = pods("my-singleton-0", e, **kw)
    assert p.proc.wait(10) == 1, p.text()
    assert want in p.text(), p.text()
    assert api.history() == []


def test_enabled_unset_execs_the_command(api, pods):
    """ENABLED empty or unset (since v0.4.0): execve(LookPath(argv[1]))
    with no election: the command's own exit status, in leaderd's
    process (the same pid), and no request to the API server; a
    command that is not found exits 1."""
    for enabled in (None, ""):
        env = dict(README_ENV)
        env[ENV + "ENABLED"] = enabled
        p = pods("direct-%s" % ("unset" if enabled is None else "empty"),
                 env, code=7, after=0.2)
        assert p.proc.wait(10) == 7, p.text()
        assert [pid for pid, ev, _ in p.events()] == [p.proc.pid] * 2
    env = dict(README_ENV)
    env[ENV + "ENABLED"] = None
    p = pods("direct-missing", env, cmd=["no-such-server-x"])
    assert p.proc.wait(10) == 1, p.text()
    assert api.requests() == []


@pytest.mark.parametrize("argv0,pre,drop_enabled", [
    ("k8s-await-election", [], False),
    ("/usr/local/bin/leaderd", ["--compat=await"], False),
    ("leaderd", [], False),            # K8S_AWAIT_ELECTION_ENABLED is set
    ("leaderd", ["--compat", "await"], True),
])
def test_selection(api, pods, argv0, pre, drop_enabled):
    """argv[0] k8s-await-election, --compat=await (either getopt form)
    at argv[1], or K8S_AWAIT_ELECTION_ENABLED set selects await: the
    command runs while leading and its failure exits 1; with ENABLED
    unset under --compat await, the command is exec'd."""
    env = dict(README_ENV)
    if drop_enabled:
        env[ENV + "ENABLED"] = None
    p = pods("sel-0", env, argv0=argv0, pre=pre, code=5, after=0.3)
    if drop_enabled:
        assert p.proc.wait(10) == 5, p.text()
        assert api.requests() == []
        return
    assert p.proc.wait(25) == 1, p.text()
    assert holder(api) == ""
    assert len(p.started()) == 1


def test_mixed_rollout_with_clientgo_holder(api, pods):
    """A rolling replacement of await pods by leaderd pods on the same
    Lease must never give two leaders.  An await pod holds
    default/my-server as client-go writes it (15s, renewed every 2s) and
    its Endpoints name it; a leaderd pod starts beside it and never
    writes the Lease or starts its command while it renews.  The await pod is then deleted without a release (its
    release races its exit): leaderd takes the Lease no sooner than
    lease_duration after the last change it could see, replaces the
    Endpoints whole, and only then starts its command.  Handing back,
    leaderd's release leaves a record client-go takes at once."""
    t0 = now_microtime()
    api.create_lease("default", "my-server", {
        "holderIdentity": "my-server-await-0", "leaseDurationSeconds": 15,
        "acquireTime": t0, "renewTime": t0, "leaseTransitions": 4})
    api.create_object("endpoints", "default", "my-service", extra={
        "subsets": [{"addresses": [{"ip": "10.0.0.1",
                                    "nodeName": "node-a"}],
                     "ports": [{"name": "http", "port": 80}]}]})
    stop = threading.Event()
    last = {"t": time.monotonic()}

    def renew(obj):
        obj["spec"]["renewTime"] = now_microtime()

    def holder_loop():
        while not stop.wait(2.0):
            api.modify_lease("default", "my-server", renew)
            last["t"] = time.monotonic()
    th = threading.Thread(target=holder_loop)
    th.start()
    try:
        p = pods("my-server-leaderd-0", HTTPBIN_ENV, pod_ip="10.0.0.7",
                 node="node-b")
        wait_until(lambda: await_ok(p) is None, 10,
                   what="the leaderd pod's status endpoint")
        time.sleep(8.0)
        assert holder(api, "default", "my-server") == "my-server-await-0"
        assert p.started() == []
        assert [h for h in api.history("default", "my-server")
                if h["token"] == p.token] == []
    finally:
        stop.set()
        th.join()
    t_last = last["t"]
    wait_until(lambda: holder(api, "default", "my-server") ==
               "my-server-leaderd-0", FAILOVER, what="leaderd to take over")
    take = [h for h in api.history("default", "my-server")
            if h["token"] == p.token][0]
    assert take["t_recv"] >= t_last + 15.0, take["t_recv"] - t_last
    assert take["spec"]["leaseTransitions"] == 5, take["spec"]
    assert take["spec"]["leaseDurationSeconds"] == 15
    wait_until(lambda: p.started(), 10, what="the command")
    obj = api.get_object("endpoints", "default", "my-service")
    assert obj["subsets"] == [{
        "addresses": [{"ip": "10.0.0.7", "nodeName": "node-b"}],
        "ports": [{"name": "http", "port": 80}]}], obj
    ep_write = [h for h in api.core_history("endpoints", "default",
                                            "my-service")
                if h["token"] == p.token][0]
    assert take["t"] <= ep_write["t"] < p.started()[0]

    # Back: leaderd's SIGTERM release is a record client-go's
    # tryAcquireOrRenew takes at once (an empty holderIdentity).
    p.proc.send_signal(signal.SIGTERM)
    assert p.proc.wait(20) == 0, p.text()
    spec = api.get_lease("default", "my-server")["spec"]
    # client-go v0.36's own release record: no holder, 1s, same count.
    assert spec["holderIdentity"] == "", spec
    assert spec["leaseDurationSeconds"] == 1, spec
    assert spec["leaseTransitions"] == 5, spec
    # Its command was gone before the release.
    rel = [h for h in api.history("default", "my-server")
           if h["token"] == p.token][-1]
    assert [ev for _, ev, _ in p.events()] == ["start", "term"]
    assert p.events()[-1][2] < rel["t_recv"]
