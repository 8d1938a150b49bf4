"""deploy/migrate-leader-elector in a rolling update outside `default`.

The overlay is rendered with `kubectl kustomize` and its leaderd
container's command line is run as the kubelet would run it: $(VAR)
expanded from the container's environment (the downward API's POD_NAME
and POD_NAMESPACE), the image's entrypoint /leaderd in front.  Beside it
run old pods as the classic leader-elector ran them: `--election=example`
and no `--election-namespace`, whose default is the literal `default`
(here under `--compat=classic`, as the drop-in image starts them).
Every pod is in-cluster in the namespace `foo`.

The rollout is the base's RollingUpdate (maxSurge 1, maxUnavailable 0):
a new pod starts and becomes ready, then an old one gets SIGTERM, three
times.  Every pod's /leader is sampled throughout: never two leaders at
once, and a leader at every moment but the hand-overs.

The one change to the rendered and the copied command lines: each port
becomes a free port, so that tests can run side by side."""

import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from fakeapi import LEADER_ANNOTATION
from harness import LeadershipChecker, free_port, tcp_request, wait_until
from peerpod import PeerPod, pods_fixture

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
OVERLAY = os.path.join(ROOT, "deploy", "migrate-leader-elector")
IMAGE = "ghcr.io/leaderd/leaderd"
ENTRYPOINT = ["/leaderd"]       # the Dockerfile's ENTRYPOINT of the image
POD_NS = "foo"
ELECTION = "example"            # the classic README's --election
# The longest time without a leader at a hand-over.  After a SIGTERM:
# the release, then a follower's next poll of the Endpoints record
# (retry_period 2.5s with its jitter up to 1.2x), its write (up to the
# request timeout, 2.5s) and the checker's next round.  After a SIGKILL
# (the classic ignores SIGTERM and is killed after the grace period):
# the lease (10s) runs out first.
HANDOVER_MAX = {"term": 6.0, "kill": 16.0}


def overlay_leaderd():
    """The overlay's leaderd container, rendered by kubectl kustomize."""
    try:
        import yaml
    except ImportError:
        pytest.fail("PyYAML is missing: `apt-get install python3-yaml` or "
                    "`pip install pyyaml`")
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("kubectl not found on PATH: install it (it embeds "
                    "kustomize); this test renders %s with `kubectl "
                    "kustomize`" % OVERLAY)
    proc = subprocess.run([kubectl, "kustomize", OVERLAY],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    [dep] = [d for d in docs if d["kind"] == "Deployment"]
    spec = dep["spec"]["template"]["spec"]
    [c] = [c for c in spec["containers"] + spec.get("initContainers", [])
           if c["image"].startswith(IMAGE)]
    return c


def k8s_expand(s, env):
    """$(VAR) as the kubelet expands it in command and args."""
    def sub(m):
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", sub, s)


def with_free_port(arg, flag):
    """--flag=HOST:PORT with a free PORT: (the argument, the port), or
    (arg, None) for another argument."""
    if not arg.startswith(flag + "="):
        return arg, None
    host = arg[len(flag) + 1:].rpartition(":")[0]
    port = free_port()
    return "%s=%s:%d" % (flag, host, port), port


class Pod(PeerPod):
    """One pod of the Deployment: leaderd in-cluster in POD_NS, with the
    downward API's POD_NAME and POD_NAMESPACE, started with argv."""

    namespace = POD_NS

    def __init__(self, api, tmp, name, argv, container=None):
        super().__init__(api, tmp, name)
        env = self.incluster_env()
        downward = {"POD_NAME": name, "POD_NAMESPACE": POD_NS}
        for e in (container or {}).get("env", []):
            if "value" in e:
                env[e["name"]] = k8s_expand(e["value"], downward)
        env.update(downward)
        self.http = self.probes = None
        args = []
        for a in argv:
            a = k8s_expand(a, downward)
            a, port = with_free_port(a, "--http")
            self.http = port or self.http
            a, port = with_free_port(a, "--probes")
            self.probes = port or self.probes
            args.append(a)
        assert self.http, "no --http in %s" % argv
        self.launch(args, env)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def get(self, port, path, timeout=0.3):
        try:
            return tcp_request(port, ("GET %s HTTP/1.1\r\nHost: localhost\r\n"
                                      "Connection: close\r\n\r\n" % path)
                               .encode(), timeout=timeout)
        except OSError:
            return None

    def leader(self, timeout=0.3):
        """GET /leader, decoded; None without an answer."""
        r = self.get(self.http, "/leader", timeout)
        if r is None or r[0] != 200:
            return None
        try:
            return json.loads(r[2])
        except ValueError:
            return None

    def ready(self):
        """The kubelet's readiness probe: GET /readyz answers 200."""
        r = self.get(self.probes or self.http, "/readyz")
        return r is not None and r[0] == 200

    def terminate(self):
        """The kubelet's stop: SIGTERM, then wait for the exit."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(15)


pods = pods_fixture(Pod)


def old_argv(name):
    """An old pod: the classic README's flags, under --compat=classic."""
    return ["leaderd", "--compat=classic", "--id=%s" % name,
            "--election=%s" % ELECTION, "--http=127.0.0.1:4040"]


def new_argv(container):
    """A new pod: the overlay's command line as its image runs it."""
    return (container.get("command") or ENTRYPOINT) + \
        list(container.get("args", []))


def holder(api, ns, name):
    """The holder named by the Endpoints ns/name, or None."""
    obj = api.get_object("endpoints", ns, name)
    if obj is None:
        return None
    raw = (obj["metadata"].get("annotations") or {}).get(LEADER_ANNOTATION)
    return json.loads(raw)["holderIdentity"] if raw else None


@pytest.mark.parametrize("stop", ["term", "kill"])
def test_rolling_replacement_keeps_one_leader(api, pods, stop):
    """Three old pods lead on what the classic locks, Endpoints
    default/example; three pods of the overlay replace them one by one,
    each old pod stopped with SIGTERM (it releases), or with SIGKILL as
    the classic itself is (it ignores SIGTERM until the grace period
    ends).  At every sample at most one pod leads, and a leader is
    missing only during a hand-over."""
    gap = HANDOVER_MAX[stop]
    container = overlay_leaderd()
    olds = [pods("old-%d" % i, old_argv("old-%d" % i)) for i in range(3)]
    wait_until(lambda: holder(api, "default", ELECTION) in
               [p.name for p in olds], 15,
               what="an old pod to lead Endpoints default/%s" % ELECTION)
    checker = LeadershipChecker(olds, interval=0.02).start()
    wait_until(lambda: len(checker.snapshot()) >= 9, 5,
               what="the first samples")

    news = []
    for i in range(3):
        new = pods("new-%d" % i, new_argv(container), container=container)
        news.append(new)
        checker.add(new)
        wait_until(new.ready, 15, what="%s to be ready" % new.name)
        # Long enough for a pod on its own lock to take it: a new pod
        # that leads beside an old one shows here.
        time.sleep(3.0)
        if stop == "term":
            assert olds[i].terminate() == 0, olds[i].text()
        else:
            olds[i].stop()

    def new_leader():
        return [p for p in news if (p.leader() or {}).get("is_leader")]
    [lead] = wait_until(new_leader, gap + 5, what="a new pod to lead")
    wait_until(lambda: checker.first_true(name=lead.name) is not None, 5,
               what="the checker to see %s lead" % lead.name)
    time.sleep(1.0)
    checker.stop()

    claims = checker.assert_s1()
    samples = checker.snapshot()
    start, end = samples[0][0], samples[-1][1]
    # A leader throughout: from the first sample to the last, the claims
    # leave no gap longer than a hand-over.
    assert claims and claims[0][1] - start < gap, claims
    t = claims[0][2]
    for name, t0, t1 in claims[1:]:
        assert t0 - t < gap, \
            "no leader for %.1fs before %s: %s" % (t0 - t, name, claims)
        t = max(t, t1)
    assert end - t < gap, claims
    # The new pods lead on the old pods' record, the Endpoints
    # default/example, and hold nothing in their own namespace.
    assert claims[-1][0] == lead.name
    assert holder(api, "default", ELECTION) == lead.name
    assert api.get_object("endpoints", POD_NS, ELECTION) is None


def test_binding_in_the_wrong_namespace_stops_the_rollout(api, pods):
    """The RoleBinding in "default" names the pods' namespace, which the
    overlay cannot know: left wrong, every request of the new pod to
    "default" is refused (403).  The new pod is then never ready, so
    the RollingUpdate (maxUnavailable 0) stops before any old pod goes,
    and the old pods keep their leader.  Once the binding is right, the
    new pod is ready without a restart."""
    container = overlay_leaderd()
    olds = [pods("old-%d" % i, old_argv("old-%d" % i)) for i in range(2)]
    wait_until(lambda: holder(api, "default", ELECTION) in
               [p.name for p in olds], 15,
               what="an old pod to lead Endpoints default/%s" % ELECTION)
    lead = holder(api, "default", ELECTION)
    denied = api.fault("status", token="tok-new-0", status=403,
                       path_prefix="/api/v1/namespaces/default/")
    new = pods("new-0", new_argv(container), container=container)
    end = time.monotonic() + 4.0
    while time.monotonic() < end:
        assert not new.ready(), "a new pod without its grants is ready"
        assert not (new.leader() or {}).get("is_leader"), new.leader()
        time.sleep(0.1)
    assert new.alive(), new.text()
    assert "in namespace default; check the Role" in new.text(), new.text()
    assert holder(api, "default", ELECTION) == lead
    api.clear_fault(denied)
    wait_until(new.ready, 10, what="new-0 to be ready once granted")
    assert holder(api, "default", ELECTION) == lead
