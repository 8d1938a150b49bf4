"""leaderd as a drop-in for the classic leader-elector sidecar
(kubernetes-retired/contrib election/, image leader-elector:0.5), started
with that sidecar's exact command lines, as its image runs them: run.sh
does `/server --id=$(hostname) $@`, so argv[0] is /server and --id comes
first.  The pods are in-cluster (a service-account directory whose
namespace file says team-a), as the sidecar's users run it.

What a classic user reads (test/compat/peers.md section 1): GET / on
--http answers {"name":"<leader>"}, no newline, text/plain (Go sniffs
the un-typed body); the lock is the Endpoints object --election in
--election-namespace, whose default is the literal "default", never
the pod's namespace; no HTTP listener without --http; --ttl 10s split
into lease 10s, renew 5s, retry 2.5s; the record in the
control-plane.alpha.kubernetes.io/leader annotation.

The one change to the copied command lines: the port 4040 becomes a
free port, so that tests can run side by side."""

import json
import os
import re
import socket
import subprocess

import pytest

from fakeapi import LEADER_ANNOTATION
from harness import free_port, leaderd_binary, tcp_request, wait_until
from peerpod import PeerPod, pods_fixture

POD_NS = "team-a"
CLASSIC_CT = "text/plain; charset=utf-8"
# The classic's lease is 10s and a candidate waits up to 2.2 retries
# (2.5s) between tries: takeover within lease + jitter + slack.
FAILOVER = 10 + 2.2 * 2.5 + 3


class Pod(PeerPod):
    """One leaderd process started as the classic image starts /server."""

    namespace = POD_NS

    def __init__(self, api, tmp, hostname, args, argv0="/server"):
        super().__init__(api, tmp, hostname)
        self.hostname = hostname
        # run.sh: /server --id=$(hostname) $@
        self.launch([argv0, "--id=%s" % hostname] + list(args),
                    self.incluster_env())


pods = pods_fixture(Pod)


def get_root(port, path="/"):
    """GET path as the classic's clients do: status, headers, body."""
    try:
        return tcp_request(port, ("GET %s HTTP/1.1\r\nHost: localhost\r\n"
                                  "Connection: close\r\n\r\n" % path)
                           .encode(), timeout=1.0)
    except OSError:
        return None


def holder(api, ns, name):
    obj = api.get_object("endpoints", ns, name)
    if obj is None:
        return None
    raw = (obj["metadata"].get("annotations") or {}).get(LEADER_ANNOTATION)
    return json.loads(raw)["holderIdentity"] if raw else None


def classic_answer(port, name, path="/"):
    """The classic's bytes for GET path, or the mismatch."""
    r = get_root(port, path)
    if r is None:
        return "no answer"
    st, h, b = r
    want = b'{"name":%s}' % json.dumps(name).encode()
    if st != 200 or h.get("content-type") != CLASSIC_CT or b != want:
        return "%s %s %r" % (st, h.get("content-type"), b)
    return None


def test_readme_three_replicas_and_failover(api, pods):
    """election/README.md: `kubectl run leader-elector
    --image=k8s.gcr.io/leader-elector:0.5 --replicas=3 -- --election=example
    --http=0.0.0.0:4040`; every pod answers the leader's name, the lock is
    Endpoints default/example, and a killed leader is replaced."""
    ports = [free_port() for _ in range(3)]
    ps = [pods("leader-elector-%d" % i,
               ["--election=example", "--http=0.0.0.0:%d" % ports[i]])
          for i in range(3)]
    wait_until(lambda: holder(api, "default", "example") is not None, 15,
               what="a holder on Endpoints default/example")
    lead = holder(api, "default", "example")
    assert lead in [p.hostname for p in ps]
    for port in ports:
        wait_until(lambda: classic_answer(port, lead) is None, 10,
                   what="GET / on :%d to name %s: %s"
                   % (port, lead, classic_answer(port, lead)))
    # leaderd's own paths still answer beside the classic's /.
    st, h, b = get_root(ports[0], "/leader")
    assert st == 200 and h.get("content-type") == "application/json"
    assert api.get_lease(POD_NS, "example") is None
    assert api.get_lease("default", "example") is None
    assert api.get_object("endpoints", POD_NS, "example") is None

    dead = ps[[p.hostname for p in ps].index(lead)]
    dead.stop()
    wait_until(lambda: holder(api, "default", "example") not in (lead, None),
               FAILOVER, what="another pod to take default/example")
    new = holder(api, "default", "example")
    for p, port in zip(ps, ports):
        if p is not dead:
            wait_until(lambda: classic_answer(port, new) is None, 10,
                       what="GET / on :%d to name %s" % (port, new))


def test_pod_yaml_localhost_http(api, pods):
    """election/client/nodejs/pod.yaml: args --election=example
    --http=localhost:4040; server.js polls http://localhost:4040/ and
    reads master.name."""
    port = free_port()
    p = pods("nodejs-elector", ["--election=example",
                                "--http=localhost:%d" % port])
    wait_until(lambda: classic_answer(port, "nodejs-elector") is None, 15,
               what="GET / to name nodejs-elector: %s"
               % classic_answer(port, "nodejs-elector"))
    assert holder(api, "default", "example") == "nodejs-elector"
    obj = api.get_object("endpoints", "default", "example")
    raw = obj["metadata"]["annotations"][LEADER_ANNOTATION]
    rec = json.loads(raw)
    # --ttl's default 10s is the record's leaseDurationSeconds.
    assert rec["leaseDurationSeconds"] == 10, raw
    # webHandler is on "/", which net/http matches for every path and
    # method: the same bytes for all of them.
    for path in ("/master", "/x/y?z=1"):
        assert classic_answer(port, "nodejs-elector", path) is None, path
    st, h, b = tcp_request(port, b"POST / HTTP/1.1\r\nHost: localhost\r\n"
                           b"Content-Length: 0\r\nConnection: close\r\n\r\n",
                           timeout=1.0)
    assert (st, b) == (200, b'{"name":"nodejs-elector"}'), (st, b)
    assert p.proc.poll() is None


def test_naiserator_injection_keeps_service_endpoints(api, pods):
    """nais/naiserator before Dec 2023 (pkg/resourcecreator/leaderelection/
    leaderelection.go at 2a57e988^): --election=<app> --http=localhost:4040
    --election-namespace=<ns>, with RBAC get/update on the app Service's
    own Endpoints, which the endpoints controller also writes."""
    subsets = [{"addresses": [{"ip": "10.0.0.7"}],
                "ports": [{"port": 8080, "protocol": "TCP"}]}]
    api.create_object("endpoints", POD_NS, "myapp",
                      annotations={"other": "kept"},
                      extra={"subsets": subsets})
    port = free_port()
    pods("myapp-5d9c-abcde", ["--election=myapp", "--http=localhost:%d" % port,
                              "--election-namespace=%s" % POD_NS])
    wait_until(lambda: classic_answer(port, "myapp-5d9c-abcde") is None, 15,
               what="GET / to name the pod")
    obj = api.get_object("endpoints", POD_NS, "myapp")
    assert obj["subsets"] == subsets
    assert obj["metadata"]["annotations"]["other"] == "kept"
    assert holder(api, POD_NS, "myapp") == "myapp-5d9c-abcde"


def test_no_listener_without_http(api, pods):
    """election/README.md's first command line, --election=example alone:
    the classic opens no port; leaderd as /server leads without one, and
    nothing listens on leaderd's own default localhost:4040."""
    p = pods("quiet-0", ["--election=example"])
    wait_until(lambda: holder(api, "default", "example") == "quiet-0", 15,
               what="quiet-0 to lead default/example")
    assert p.proc.poll() is None
    fds = os.listdir("/proc/%d/fd" % p.proc.pid)
    listening = []
    for fd in fds:
        try:
            target = os.readlink("/proc/%d/fd/%s" % (p.proc.pid, fd))
        except OSError:
            continue
        if target.startswith("socket:"):
            inode = target[8:-1]
            for tab in ("/proc/%d/net/tcp" % p.proc.pid,
                        "/proc/%d/net/tcp6" % p.proc.pid):
                with open(tab) as f:
                    for ln in f.read().splitlines()[1:]:
                        cols = ln.split()
                        if cols[9] == inode and cols[3] == "0A":
                            listening.append(cols[1])
    assert listening == [], listening


@pytest.mark.parametrize("argv0,args", [
    ("leader-elector", []),
    ("leaderd", ["--compat=classic"]),
    ("/usr/local/bin/leaderd", ["--compat", "classic"]),
])
def test_selection(api, pods, argv0, args):
    """argv[0] leader-elector or /server, or --compat=classic in either
    getopt form, selects the classic's defaults."""
    port = free_port()
    pods("sel-0", args + ["--election=example", "--http",
                          "127.0.0.1:%d" % port], argv0=argv0)
    wait_until(lambda: classic_answer(port, "sel-0") is None, 15,
               what="GET / to name sel-0: %s" % classic_answer(port, "sel-0"))
    assert holder(api, "default", "example") == "sel-0"


def test_without_compat_leaderd_keeps_its_defaults(api, pods):
    """The same command line under leaderd's own name, without --compat:
    a Lease in the pod's namespace and leaderd's JSON (the hazard that
    compat exists for, documented in docs/migrating.md)."""
    port = free_port()
    pods("own-0", ["--election=example", "--http=127.0.0.1:%d" % port],
         argv0="leaderd")
    wait_until(lambda: api.get_lease(POD_NS, "example") is not None, 15,
               what="a Lease team-a/example")
    st, h, b = get_root(port)
    assert h.get("content-type") == "application/json"
    assert api.get_object("endpoints", "default", "example") is None


def run_check(args, argv0="/server"):
    p = subprocess.run([argv0] + args + ["-n"], executable=leaderd_binary(),
                       stdin=subprocess.DEVNULL, capture_output=True,
                       env={"PATH": os.environ.get("PATH", "")}, timeout=10)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_compat_refusals():
    """An unknown peer, the classic's single-dash spelling (pflag reads
    -election=x as shorthand letters and exits 2), and --help (its old
    pflag exits 2 on ErrHelp too) exit 2."""
    rc, out, err = run_check(["--compat=zookeeper", "--election=x",
                              "--id=a"])
    assert rc == 2 and 'compat "zookeeper" is not a peer' in err, err
    rc, out, err = run_check(["--help"])
    assert rc == 2 and "usage:" in err, (out, err)
    rc, out, err = run_check(["-election=x", "--id=a"])
    assert rc == 2, (out, err)
    rc, out, err = run_check(["--id=a", "--election=x", "--ttl=20s"])
    assert rc == 0 and "lock endpoints/default/x" in out, (out, err)


def test_http_port_taken(api, pods):
    """The classic exits 0 when its --http port is taken, and its
    election stops with it: leaderd fails the start instead (exit 1), so
    the kubelet restarts the container rather than counting it done."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        port = s.getsockname()[1]
        p = pods("taken-0", ["--election=example",
                             "--http=127.0.0.1:%d" % port])
        assert p.proc.wait(10) == 1, p.text()
        # strerror(EADDRINUSE): glibc and musl word it differently.
        assert re.search("Address (already )?in use", p.text()), p.text()
        assert holder(api, "default", "example") is None
    finally:
        s.close()
