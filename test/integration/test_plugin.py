"""kubectl leaderd: the leaderd binary invoked as kubectl-leaderd, against
the test API server.  Exact columns and values of get (the namespace,
-A, -o wide, -o json and yaml, -w), shards and move; the kubeconfig read
as kubectl reads it (KUBECONFIG merged, --kubeconfig, --context, -n, the
context's namespace); and each failure as one line and exit status 1,
after one request (never a retry)."""

import datetime
import json
import os
import subprocess
import time

import pytest
import yaml

from harness import LEASE_DURATION as LD, RETRY_PERIOD as RP, \
    leaderd_binary, wait_until

TOKEN = "plugin-token"


def microtime(ago):
    t = datetime.datetime.now(datetime.timezone.utc) - \
        datetime.timedelta(seconds=ago)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.fixture
def plugin(api, tmp_path):
    """A function running kubectl-leaderd ARGS with a kubeconfig for api
    whose context's namespace is "team"."""
    api.add_token(TOKEN)
    exe = tmp_path / "kubectl-leaderd"
    os.symlink(leaderd_binary(), exe)
    kc = api.write_kubeconfig(str(tmp_path / "kubeconfig"), token=TOKEN,
                              namespace="team")

    def run(*args, env=None, timeout=20):
        e = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        e["HOME"] = str(tmp_path)
        e["KUBECONFIG"] = kc
        e.update(env or {})
        return subprocess.run([str(exe)] + list(args), env=e, text=True,
                              capture_output=True, timeout=timeout)
    run.exe = str(exe)
    run.kubeconfig = kc
    return run


def plant(api):
    """Leases as leaderd, a client-go elector, nais and the kubelet leave
    them, and two LeaseCandidates."""
    api.create_lease("team", "alpha", {
        "holderIdentity": "pod-a", "leaseDurationSeconds": 15,
        "acquireTime": microtime(200.5), "renewTime": microtime(5.5),
        "leaseTransitions": 3, "strategy": "OldestEmulationVersion",
        "preferredHolder": "pod-c"})
    api.create_lease("team", "clientgo", {
        "holderIdentity": "cg-1_6c1f", "leaseDurationSeconds": 15,
        "acquireTime": microtime(60.5), "renewTime": microtime(60.5),
        "leaseTransitions": 0})
    api.create_lease("team", "nais", {
        "holderIdentity": "app-7d9", "acquireTime": microtime(3700.5)})
    api.create_lease("kube-node-lease", "node-1", {
        "holderIdentity": "node-1", "leaseDurationSeconds": 40,
        "renewTime": microtime(2.5)})
    api.enable_candidates()
    api.plant_candidate("team", "pod-a", "alpha")
    api.plant_candidate("team", "pod-c", "alpha")


def lines(out):
    return out.rstrip("\n").split("\n")


def one_of(got, expect):
    """got must be expect(d): d = 0 when the command ran within half a
    second of planting the Leases, else the whole seconds more it took
    (at most 3, for a loaded machine): ages d seconds older, times left d
    seconds less, every other byte the same."""
    want = [expect(d) for d in range(4)]
    assert got in want, "got:\n%s\nwant:\n%s" % (got, want[0])
    return want.index(got)


def test_get_columns_and_values(api, plugin):
    plant(api)
    r = plugin("get")
    assert r.returncode == 0 and r.stderr == "", r
    one_of(r.stdout, lambda d: (
        "NAME       HOLDER      RENEWED   EXPIRES   TRANSITIONS   "
        "CANDIDATES   PREFERRED\n"
        "alpha      pod-a       %ds        %ds        3             "
        "2            pod-c\n"
        "clientgo   cg-1_6c1f   %ds       expired   0             "
        "<none>       <none>\n"
        "nais       app-7d9     <none>    <none>    0             "
        "<none>       <none>\n" % (5 + d, 9 - d, 60 + d)))
    r = plugin("get", "-A")
    assert r.returncode == 0 and r.stderr == "", r
    one_of(r.stdout, lambda d: (
        "NAMESPACE         NAME       HOLDER      RENEWED   EXPIRES   "
        "TRANSITIONS   CANDIDATES   PREFERRED\n"
        "kube-node-lease   node-1     node-1      %ds        %ds       0"
        "             <none>       <none>\n"
        "team              alpha      pod-a       %ds        %ds        3"
        "             2            pod-c\n"
        "team              clientgo   cg-1_6c1f   %ds       expired   0"
        "             <none>       <none>\n"
        "team              nais       app-7d9     <none>    <none>    0"
        "             <none>       <none>\n"
        % (2 + d, 37 - d, 5 + d, 9 - d, 60 + d)))
    r = plugin("get", "alpha", "-o", "wide")
    one_of(r.stdout, lambda d: (
        "NAME    HOLDER   RENEWED   EXPIRES   TRANSITIONS   CANDIDATES   "
        "PREFERRED   ACQUIRED   STRATEGY                 GROUP\n"
        "alpha   pod-a    %ds        %ds        3             2            "
        "pod-c       3m%ds      OldestEmulationVersion   <none>\n"
        % (5 + d, 9 - d, 20 + d)))
    # -n names another namespace than the context's.
    r = plugin("get", "-n", "kube-node-lease")
    one_of(r.stdout, lambda d: (
        "NAME     HOLDER   RENEWED   EXPIRES   TRANSITIONS   CANDIDATES   "
        "PREFERRED\n"
        "node-1   node-1   %ds        %ds       0             <none>       "
        "<none>\n" % (2 + d, 37 - d)))
    # pflag's forms, as kubectl takes them.
    for args in (["--namespace=kube-node-lease"], ["-n=kube-node-lease"],
                 ["-nkube-node-lease"]):
        r = plugin("get", *args)
        assert r.returncode == 0 and \
            lines(r.stdout)[1].split()[0] == "node-1", (args, r)
    r = plugin("get", "-n", "empty")
    assert r.returncode == 0 and r.stdout == "" and \
        r.stderr == "No resources found in empty namespace.\n", r


def test_get_json_and_yaml(api, plugin):
    plant(api)
    r = plugin("get", "-o", "json")
    assert r.returncode == 0, r
    doc = json.loads(r.stdout)
    assert doc["apiVersion"] == "leaderd.io/v1"
    assert doc["kind"] == "LeaseStatusList"
    a, cg, nais = doc["items"]
    lease = api.get_lease("team", "alpha")
    d = one_of((a["renewedSecondsAgo"], a["expiresInSeconds"]),
               lambda d: (5 + d, 9 - d))
    assert a == {
        "namespace": "team", "name": "alpha", "holder": "pod-a",
        "acquireTime": lease["spec"]["acquireTime"],
        "renewTime": lease["spec"]["renewTime"],
        "leaseDurationSeconds": 15, "renewedSecondsAgo": 5 + d,
        "expiresInSeconds": 9 - d, "expired": False, "transitions": 3,
        "candidates": 2, "preferredHolder": "pod-c",
        "strategy": "OldestEmulationVersion", "shardGroup": None,
        "shardMember": False, "owner": None,
        "resourceVersion": lease["metadata"]["resourceVersion"]}
    assert cg["expired"] is True and cg["expiresInSeconds"] in (-45, -46)
    assert cg["candidates"] == 0 and cg["strategy"] is None
    assert nais["renewTime"] is None and nais["expired"] is None and \
        nais["expiresInSeconds"] is None and \
        nais["leaseDurationSeconds"] is None
    r2 = plugin("get", "-o", "yaml")
    assert r2.returncode == 0, r2
    y = yaml.safe_load(r2.stdout)
    for d in (doc, y):
        for it in d["items"]:
            it.pop("renewedSecondsAgo")
            it.pop("expiresInSeconds")
    assert y == doc
    r = plugin("get", "-o", "yaml", "-l", "nothing=here")
    assert r.stdout == "apiVersion: leaderd.io/v1\nkind: LeaseStatusList\n" \
        "items: []\n", r
    assert json.loads(plugin("get", "-l", "x=y", "-o", "json").stdout)[
        "items"] == []


def test_get_watch_streams_each_version(api, plugin):
    plant(api)
    p = subprocess.Popen([plugin.exe, "get", "-w"], text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, KUBECONFIG=plugin.kubeconfig))
    try:
        head = [p.stdout.readline() for _ in range(4)]
        assert head[0].split()[0] == "NAME" and head[1].split()[0] == \
            "alpha", head
        api.modify_lease("team", "clientgo", lambda o: o["spec"].update(
            holderIdentity="cg-2_aa", renewTime=microtime(0.5),
            leaseTransitions=1))
        api.create_lease("team", "fresh", {"holderIdentity": "f-1",
                                           "leaseDurationSeconds": 10,
                                           "renewTime": microtime(0.5)})
        one = p.stdout.readline().split()
        two = p.stdout.readline().split()
        one_of(one, lambda d: ["clientgo", "cg-2_aa", "%ds" % d,
                               "%ds" % (14 - d), "1", "<none>", "<none>"])
        one_of(two, lambda d: ["fresh", "f-1", "%ds" % d, "%ds" % (9 - d),
                               "0", "<none>", "<none>"])
        assert p.poll() is None
    finally:
        p.kill()
        p.wait()
    # -w -o json: one document per line.
    p = subprocess.Popen([plugin.exe, "get", "alpha", "-w", "-o", "json"],
                         text=True, stdout=subprocess.PIPE,
                         env=dict(os.environ, KUBECONFIG=plugin.kubeconfig))
    try:
        first = json.loads(p.stdout.readline())
        assert first["name"] == "alpha" and first["holder"] == "pod-a"
        api.modify_lease("team", "clientgo", lambda o: None)
        api.modify_lease("team", "alpha", lambda o: o["spec"].update(
            holderIdentity="pod-c"))
        nxt = json.loads(p.stdout.readline())
        assert nxt["name"] == "alpha" and nxt["holder"] == "pod-c"
    finally:
        p.kill()
        p.wait()
    # A version the server no longer has (410 Expired): listed again,
    # each Lease printed as it is now, and watched on.
    p = subprocess.Popen([plugin.exe, "get", "alpha", "-w"], text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, KUBECONFIG=plugin.kubeconfig))
    try:
        assert p.stdout.readline().split()[0] == "NAME"
        assert p.stdout.readline().split()[:2] == ["alpha", "pod-c"]
        f = api.watch_fault("gone", token=TOKEN, count=1)
        # The stream ends (as at its timeout); the next watch, from the
        # last version seen, gets the 410: the Lease listed again.
        api.watch_end_open()
        assert p.stdout.readline().split()[:2] == ["alpha", "pod-c"]
        assert f.hits == 1
        api.modify_lease("team", "alpha", lambda o: o["spec"].update(
            holderIdentity="pod-d"))
        assert p.stdout.readline().split()[:2] == ["alpha", "pod-d"]
        assert p.poll() is None
    finally:
        p.kill()
        p.wait()
    # -A -w: a watch across namespaces.
    p = subprocess.Popen([plugin.exe, "get", "-A", "-w", "-o", "json"],
                         text=True, stdout=subprocess.PIPE,
                         env=dict(os.environ, KUBECONFIG=plugin.kubeconfig))
    try:
        seen = [json.loads(p.stdout.readline()) for _ in range(5)]
        assert [(o["namespace"], o["name"]) for o in seen] == [
            ("kube-node-lease", "node-1"), ("team", "alpha"),
            ("team", "clientgo"), ("team", "fresh"), ("team", "nais")]
        api.create_lease("elsewhere", "new", {"holderIdentity": "n-1"})
        nxt = json.loads(p.stdout.readline())
        assert (nxt["namespace"], nxt["name"], nxt["holder"]) == \
            ("elsewhere", "new", "n-1")
    finally:
        p.kill()
        p.wait()


def test_shards(api, plugin):
    g = {"leaderd.io/shard-group": "work"}
    for i, holder in enumerate(["m-a", "m-b", "m-a", "m-a"]):
        api.create_lease("team", "work-%d" % i, {
            "holderIdentity": holder, "leaseDurationSeconds": 15,
            "renewTime": microtime(1.5)}, labels=g)
    for m, ago in (("m-a", 1.5), ("m-b", 2.5), ("m-c", 30.5)):
        api.create_lease("team", "work-member-%s" % m, {
            "holderIdentity": m, "leaseDurationSeconds": 15,
            "renewTime": microtime(ago)},
            labels=dict(g, **{"leaderd.io/shard-member": "true"}))
    api.create_lease("team", "other-0", {"holderIdentity": "x"})
    r = plugin("shards", "work")
    assert r.returncode == 0 and r.stderr == "", r
    one_of(lines(r.stdout), lambda d: [
        "SHARD    OWNER   RENEWED   EXPIRES   TRANSITIONS"] + [
        "work-%d   %s     %ds        %ds       0" % (i, h, 1 + d, 13 - d)
        for i, h in enumerate(["m-a", "m-b", "m-a", "m-a"])] + [
        "",
        "MEMBER   LIVE   SHARDS   QUOTA",
        "m-a      yes    3        2",
        "m-b      yes    1        2",
        "m-c      no     0        <none>",
        "",
        "4 shards, 2 live members, 4 held by live members: not balanced"])
    api.modify_lease("team", "work-2", lambda o: o["spec"].update(
        holderIdentity="m-b"))
    r = plugin("shards", "work")
    assert lines(r.stdout)[-1] == \
        "4 shards, 2 live members, 4 held by live members: balanced", r
    r = plugin("shards", "none")
    assert r.returncode == 1 and r.stdout == "" and r.stderr == \
        "kubectl leaderd: no shard group \"none\" in namespace team: no " \
        "Lease is labelled leaderd.io/shard-group=none\n", r


def test_move(cluster, plugin):
    api = cluster.api
    a = cluster.new("mv-a")
    b = cluster.new("mv-b")
    a.start()
    wait_until(a.is_leader, 2.2 * RP + 3.5, what="a leads")
    b.start()
    wait_until(lambda: (b.leader() or {}).get("name") == "mv-a", 3.0,
               what="b follows a")
    lock = cluster.lock
    # Not a live candidate: refused, nothing written.
    n = len(api.history(ns="default", name=lock))
    r = plugin("move", lock, "--to", "mv-b", "-n", "default")
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr == (
        "kubectl leaderd: mv-b is not a live candidate of Lease \"%s\": no "
        "LeaseCandidate of that name names the Lease (leaderd keeps one "
        "with candidacy.coordinated) (--force moves it anyway)\n" % lock)
    assert not [h for h in api.history(ns="default", name=lock)[n:]
                if h["method"] == "PATCH"]
    # A live LeaseCandidate: moved, and the time printed.
    api.enable_candidates()
    api.plant_candidate("default", "mv-b", lock)
    r = plugin("move", lock, "--to", "mv-b", "-n", "default")
    assert r.returncode == 0 and r.stderr == "", r
    out = r.stdout.split()
    assert out[:6] == ["lease", '"%s"' % lock, "moved", "from", "mv-a",
                       "to"] and out[6:8] == ["mv-b", "in"], r.stdout
    assert out[8].endswith("ms") or out[8].endswith("s"), r.stdout
    assert api.get_lease("default", lock)["spec"]["holderIdentity"] == \
        "mv-b"
    wait_until(b.is_leader, 2.0, what="b leads")
    patch = [h for h in api.history(ns="default", name=lock)
             if h["method"] == "PATCH"]
    assert len(patch) == 1 and patch[0]["spec"]["preferredHolder"] == \
        "mv-b" and patch[0]["spec"]["strategy"] == "OldestEmulationVersion"
    # --force: the leader hands over even to an identity nobody runs,
    # which is why move checks first.
    r = plugin("move", lock, "--to", "ghost", "-n", "default", "--force")
    assert r.returncode == 0 and r.stdout.startswith(
        'lease "%s" moved from mv-b to ghost in ' % lock), r
    # A Lease whose holder does not hand over (no leaderd behind it): the
    # wait ends at --timeout, and says so.
    api.create_lease("default", "static", {
        "holderIdentity": "cg-1", "leaseDurationSeconds": 15,
        "renewTime": microtime(0.5)})
    t0 = time.monotonic()
    r = plugin("move", "static", "--to", "mv-a", "-n", "default", "--force",
               "--timeout", "1s")
    assert 1.0 <= time.monotonic() - t0 < 3.0
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr.startswith('kubectl leaderd: lease "static": mv-a does '
                               'not hold it after 1'), r
    assert r.stderr.endswith("(holder cg-1); spec.preferredHolder stays "
                             "mv-a\n"), r


def test_kubeconfig_as_kubectl_reads_it(api, plugin, tmp_path):
    plant(api)
    # KUBECONFIG, a list: a missing file skipped, current-context from the
    # first that sets it, an entry from the first file that defines it.
    first = tmp_path / "first"
    first.write_text("apiVersion: v1\nkind: Config\ncurrent-context: "
                     "other\ncontexts:\n- name: other\n  context:\n"
                     "    cluster: fakeapi\n    user: leaderd\n"
                     "    namespace: kube-node-lease\n")
    env = {"KUBECONFIG": "%s:%s:%s" % (tmp_path / "missing", first,
                                       plugin.kubeconfig)}
    r = plugin("get", env=env)
    assert r.returncode == 0 and lines(r.stdout)[1].split()[0] == \
        "node-1", r
    r = plugin("get", "--context", "fakeapi", env=env)
    assert lines(r.stdout)[1].split()[0] == "alpha", r
    # --kubeconfig wins over KUBECONFIG.
    r = plugin("get", "--kubeconfig", plugin.kubeconfig,
               env={"KUBECONFIG": str(first)})
    assert lines(r.stdout)[1].split()[0] == "alpha", r


def one_line_exit_1(r, text):
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr.count("\n") == 1 and text in r.stderr, r.stderr


def test_errors_one_line_exit_1(api, plugin, tmp_path):
    plant(api)
    # 401: the credentials refused; one request, no retry.
    api.revoke_token(TOKEN)
    n = len(api.requests())
    r = plugin("get")
    one_line_exit_1(r, "kubectl leaderd: Unauthorized: the API server at "
                    "%s refused the credentials of the current context "
                    "(401)" % api.url)
    assert len(api.requests()) == n + 1
    api.add_token(TOKEN)
    # 403: the verb and the resource named.
    f = api.fault("status", token=TOKEN, status=403, methods=["GET"],
                  message='leases.coordination.k8s.io is forbidden: User '
                  '"alice" cannot list resource "leases" in API group '
                  '"coordination.k8s.io" in the namespace "team"')
    n = len(api.requests())
    r = plugin("get")
    one_line_exit_1(r, "kubectl leaderd: Forbidden: not allowed to list "
                    "leases in namespace team (403); grant the verb "
                    "\"list\" on \"leases\" in a Role: ")
    assert len(api.requests()) == n + 1
    r = plugin("move", "alpha", "--to", "pod-c")
    one_line_exit_1(r, "not allowed to get leases \"alpha\" in namespace "
                    "team (403)")
    r = plugin("get", "-A")
    one_line_exit_1(r, "not allowed to list leases in all namespaces (403); "
                    "grant the verb \"list\" on \"leases\" in a "
                    "ClusterRole: ")
    api.clear_fault(f)
    # The LeaseCandidates alone refused: the table still, CANDIDATES "?",
    # one warning line, exit 0.
    f = api.fault("status", token=TOKEN, status=403,
                  path_prefix="/apis/coordination.k8s.io/v1beta1/")
    r = plugin("get", "alpha")
    assert r.returncode == 0 and r.stderr == "kubectl leaderd: warning: " \
        "not allowed to list leasecandidates in namespace team (403): " \
        "CANDIDATES is unknown\n", r
    assert lines(r.stdout)[1].split()[5] == "?", r
    api.clear_fault(f)
    # A context that does not exist.
    r = plugin("get", "--context", "nope")
    one_line_exit_1(r, "kubectl leaderd: %s: context \"nope\" does not "
                    "exist" % plugin.kubeconfig)
    # An API server that cannot be reached.
    kc = api.write_kubeconfig(str(tmp_path / "down"), token=TOKEN,
                              server="https://127.0.0.1:1")
    t0 = time.monotonic()
    r = plugin("get", "--kubeconfig", kc)
    one_line_exit_1(r, "kubectl leaderd: cannot reach the API server at "
                    "https://127.0.0.1:1 (the current context): ")
    assert time.monotonic() - t0 < 5
    # An API server that does not answer: --request-timeout bounds it.
    f = api.fault("blackhole", token=TOKEN)
    t0 = time.monotonic()
    r = plugin("get", "--request-timeout", "500ms")
    one_line_exit_1(r, "kubectl leaderd: the API server at %s (the current "
                    "context) did not answer within 500 ms: " % api.url)
    assert time.monotonic() - t0 < 3
    api.clear_fault(f)
    # Usage: exit 2, with the fix.
    r = plugin("get", "--to", "x")
    assert r.returncode == 2 and r.stderr == "kubectl leaderd: --to: not " \
        "a flag of this command (kubectl leaderd --help)\n", r
    r = plugin("get", "alpha", "-A")
    assert r.returncode == 2 and r.stderr == "kubectl leaderd: a Lease is " \
        "named in one namespace: -n NS, not -A (kubectl leaderd --help)\n", r
    r = plugin("move", "alpha")
    assert r.returncode == 2 and r.stderr == "kubectl leaderd: move needs " \
        "--to ID (kubectl leaderd --help)\n", r
    r = plugin("frobnicate")
    assert r.returncode == 2 and r.stderr.startswith(
        "kubectl leaderd: unknown command \"frobnicate\""), r


def test_move_checks_shard_members(api, plugin):
    """A shard Lease's live candidates are its group's live members."""
    g = {"leaderd.io/shard-group": "work"}
    api.create_lease("team", "work-0", {
        "holderIdentity": "m-a", "leaseDurationSeconds": 15,
        "renewTime": microtime(0.5)}, labels=g)
    for m, ago in (("m-b", 1.5), ("m-c", 30.5)):
        api.create_lease("team", "work-member-%s" % m, {
            "holderIdentity": m, "leaseDurationSeconds": 15,
            "renewTime": microtime(ago)},
            labels=dict(g, **{"leaderd.io/shard-member": "true"}))
    for to in ("m-c", "m-x"):
        r = plugin("move", "work-0", "--to", to)
        assert r.returncode == 1 and r.stderr == (
            "kubectl leaderd: %s is not a live candidate of Lease "
            "\"work-0\": no LeaseCandidate of that name names the Lease "
            "(leaderd keeps one with candidacy.coordinated), nor is it a "
            "live member of shard group work (--force moves it anyway)\n"
            % to), r
    # m-b is live: the move is made (nobody runs the group here, so the
    # wait ends at --timeout).
    r = plugin("move", "work-0", "--to", "m-b", "--timeout", "300ms")
    assert r.returncode == 1 and "m-b does not hold it after 3" in \
        r.stderr, r
    spec = api.get_lease("team", "work-0")["spec"]
    assert spec["preferredHolder"] == "m-b" and \
        spec["strategy"] == "OldestEmulationVersion"
