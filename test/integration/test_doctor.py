"""The doctors against the test API server: `leaderd doctor` as it runs
inside the pod (the daemon's configuration file, its token) and
`kubectl leaderd doctor [LEASE]` from outside (a kubeconfig).  Each
finding is staged, then shown absent without the fault, so that every
check can fail.  The output: one line per finding ("FAIL  CHECK: ...",
"warn", "ok", "skip"), "      fix: ..." beneath a problem, and the
summary "doctor: N problem(s), M warning(s) (...)"; the exit status 0
with no problem, 1 with one, 2 for a bad command line
(docs/operations.md, "Doctor")."""

import base64
import datetime
import json
import os
import subprocess
import time

import pytest

from harness import leaderd_binary

NS = "default"
TOKEN = "doctor-operator"


def microtime(ago):
    t = datetime.datetime.now(datetime.timezone.utc) - \
        datetime.timedelta(seconds=ago)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def jwt(exp):
    """A token shaped as a service account's JWT (not signed: the test
    API server takes any token it knows)."""
    def part(d):
        return base64.urlsafe_b64encode(json.dumps(d).encode()) \
            .decode().rstrip("=")
    return "%s.%s.c2ln" % (part({"alg": "RS256", "kid": "k"}), part({
        "iss": "https://kubernetes.default.svc", "exp": int(exp),
        "sub": "system:serviceaccount:default:leaderd"}))


def run(args, env=None, exe=None, timeout=30):
    e = {k: v for k, v in os.environ.items()
         if k not in ("KUBERNETES_SERVICE_HOST", "POD_NAMESPACE",
                      "KUBECONFIG")}
    e.update(env or {})
    p = subprocess.run([exe or leaderd_binary()] + list(args), env=e,
                       text=True, capture_output=True, timeout=timeout)
    return p


def findings(out):
    """(word, check, text) per finding line, the fix lines apart."""
    got = []
    for ln in out.splitlines():
        if ln.startswith("      fix: ") or ln.startswith("doctor: "):
            continue
        word, _, rest = ln.partition("  ")
        check, _, text = rest.strip().partition(": ")
        got.append((word.strip(), check, text))
    return got


def having(out, word, check, words):
    """The finding lines of that weight and check holding words."""
    return [f for f in findings(out) if f[0] == word and f[1] == check
            and words in f[2]]


def fix_of(out, words):
    """The fix line under the first finding holding words."""
    lines = out.splitlines()
    for i, ln in enumerate(lines):
        if words in ln and i + 1 < len(lines) and \
                lines[i + 1].startswith("      fix: "):
            return lines[i + 1][len("      fix: "):]
    return None


def summary(out):
    return out.rstrip("\n").splitlines()[-1]


# -- leaderd doctor, inside the pod ----------------------------------------

def pod_doctor(inst, *extra, env=None):
    return run(["-f", inst.config_path] + list(extra) + ["doctor"],
               env=env or {"POD_NAMESPACE": inst.namespace})


def test_pod_missing_verb(api, cluster, lock_name):
    """A Role without update: the access review names the verb, the
    resource, the namespace and the account, with the rule to add."""
    inst = cluster.new("pod-a")
    r = pod_doctor(inst)
    assert r.returncode == 0, r.stdout + r.stderr
    assert summary(r.stdout) == "doctor: 0 problems, 0 warnings (leases " \
        "%s/%s, identity pod-a, as this pod)" % (NS, lock_name)
    for verb in ("get", "update", "watch"):
        assert having(r.stdout, "ok", "access", "may %s leases."
                      "coordination.k8s.io/%s in namespace %s" %
                      (verb, lock_name, NS)), r.stdout
    assert having(r.stdout, "ok", "access", "may create events")
    assert having(r.stdout, "ok", "token", "accepts the token")

    api.deny("update", "leases", ns=NS)
    r = pod_doctor(inst)
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "access", "this pod's service account "
                  "may not update leases.coordination.k8s.io/%s in namespace "
                  "%s (needed to renew the Lease and take it over)" %
                  (lock_name, NS)), r.stdout
    user = "system:serviceaccount:default:%s" % inst.token
    assert fix_of(r.stdout, "may not update") == \
        'add verb "update" on resource "leases" (apiGroup ' \
        '"coordination.k8s.io") to the Role in namespace %s bound to %s ' \
        '(deploy/base/role.yaml)' % (NS, user)
    assert r.stdout.splitlines()[0].startswith("FAIL  access: ")
    assert summary(r.stdout).startswith("doctor: 1 problem, 0 warnings")
    # Each verb was asked about with this pod's own token.
    asked = {(k, u, a["verb"], a["resource"]) for k, u, a in api.reviews()}
    assert ("SelfSubjectAccessReview", user, "update", "leases") in asked


def test_pod_token(api, cluster, lock_name):
    """A rejected token stops the checks at the first line; a JWT's exp
    is read from the token file."""
    exp = time.time() + 3600
    inst = cluster.new("pod-a", token=jwt(exp))
    r = pod_doctor(inst)
    assert r.returncode == 0, r.stdout + r.stderr
    want = datetime.datetime.fromtimestamp(int(exp), datetime.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%SZ")
    f = having(r.stdout, "ok", "token", "the file %s" % inst.token_path)
    assert f and ("it expires at %s" % want) in f[0][2], r.stdout

    api.revoke_token(inst.token)
    r = pod_doctor(inst)
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "token", "rejects the token from the "
                  "file %s (401 Unauthorized); it expires at %s" %
                  (inst.token_path, want)), r.stdout
    assert "revoked" in fix_of(r.stdout, "401 Unauthorized")
    assert not having(r.stdout, "ok", "access", "")    # no further

    # Past its exp, and still taken.
    api.add_token(inst.token)
    inst.write_token(jwt(time.time() - 60))
    api.add_token(jwt(time.time() - 60))
    r = pod_doctor(inst)
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "token", "past its expiry")


def test_pod_lease_ghost_and_split(api, cluster, lock_name):
    """The Lease judged against our durations, and an old-style lock of
    the same name holding a live record."""
    inst = cluster.new("pod-a")
    api.create_lease(NS, lock_name, {
        "holderIdentity": "ghost-7f9c", "leaseDurationSeconds": 3600,
        "acquireTime": microtime(25), "renewTime": microtime(25)})
    r = pod_doctor(inst)
    assert r.returncode == 1, r.stdout + r.stderr
    f = having(r.stdout, "FAIL", "lease", "lease %s/%s: holder ghost-7f9c "
               "asks 3600 s (ours 3 s)" % (NS, lock_name))
    assert f, r.stdout
    fix = fix_of(r.stdout, "holder ghost-7f9c asks")
    assert "'{\"spec\":{\"holderIdentity\":\"\"}}'" in fix
    assert "kubectl delete lease -n %s %s" % (NS, lock_name) in fix
    assert having(r.stdout, "ok", "split", "no endpoints")

    # A short foreign lease, renewed, is fine.
    api.modify_lease(NS, lock_name, lambda o: o["spec"].update({
        "leaseDurationSeconds": 5, "renewTime": microtime(1)}))
    rec = json.dumps({"holderIdentity": "old-a", "leaseDurationSeconds": 15,
                      "acquireTime": microtime(100)[:19] + "Z",
                      "renewTime": microtime(1)[:19] + "Z",
                      "leaderTransitions": 0})
    api.create_object("endpoints", NS, lock_name, annotations={
        "control-plane.alpha.kubernetes.io/leader": rec})
    r = pod_doctor(inst)
    assert r.returncode == 1, r.stdout + r.stderr
    assert not having(r.stdout, "FAIL", "lease", "")
    assert having(r.stdout, "FAIL", "split", "endpoints %s/%s holds a "
                  "leader record renewed" % (NS, lock_name)), r.stdout
    assert "endpointsleases" in fix_of(r.stdout, "holds a leader record")

    # Within the migration lock it is expected.
    r = pod_doctor(inst, "--lock-type", "endpointsleases")
    assert having(r.stdout, "ok", "split", "which lock type "
                  "endpointsleases keeps"), r.stdout


def test_pod_namespace(api, cluster, lock_name):
    inst = cluster.new("pod-a")
    r = pod_doctor(inst, env={"POD_NAMESPACE": "elsewhere"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert having(r.stdout, "warn", "namespace", "the lock's namespace %s "
                  "is not this pod's namespace elsewhere" % NS), r.stdout
    assert summary(r.stdout).startswith("doctor: 0 problems, 1 warning ")


# -- kubectl leaderd doctor -------------------------------------------------

@pytest.fixture
def kdoctor(api, tmp_path):
    """kubectl-leaderd doctor ARGS, as the operator (context namespace
    default)."""
    api.add_token(TOKEN)
    exe = tmp_path / "kubectl-leaderd"
    os.symlink(leaderd_binary(), exe)
    kc = api.write_kubeconfig(str(tmp_path / "kubeconfig"), token=TOKEN,
                              namespace=NS)

    def go(*args):
        return run(["doctor"] + list(args), exe=str(exe),
                   env={"KUBECONFIG": kc, "HOME": str(tmp_path)})
    return go


def held(api, name, holder, ago, dur=15, **more):
    # acquireTime = renewTime: as a hand-made record (an elector that
    # renews would read as client-go's, whose writer is not leaderd).
    spec = {"holderIdentity": holder, "leaseDurationSeconds": dur,
            "acquireTime": microtime(ago), "renewTime": microtime(ago)}
    spec.update(more)
    api.create_lease(NS, name, spec)


def test_kubectl_missing_update(api, kdoctor, lock_name):
    """The candidates' service account, found by the pod the holder
    names, may not update the Lease."""
    held(api, lock_name, "pod-a", 1)
    api.create_pod(NS, "pod-a", service_account="app-sa")
    r = kdoctor(lock_name)
    assert r.returncode == 0, r.stdout + r.stderr
    assert having(r.stdout, "ok", "access", "service account %s/app-sa "
                  "(pods pod-a) may update leases.coordination.k8s.io/%s" %
                  (NS, lock_name)), r.stdout
    assert having(r.stdout, "ok", "pods", "holder pod-a: pod %s/pod-a "
                  "exists" % NS)

    api.deny("update", "leases", ns=NS,
             user="system:serviceaccount:%s:app-sa" % NS)
    r = kdoctor(lock_name)
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "access", "service account %s/app-sa "
                  "(pods pod-a) may not update leases.coordination.k8s.io/"
                  "%s in namespace %s" % (NS, lock_name, NS)), r.stdout
    assert "system:serviceaccount:%s:app-sa" % NS in \
        fix_of(r.stdout, "may not update")
    sars = [(u, a["verb"]) for k, u, a in api.reviews()
            if k == "SubjectAccessReview"]
    assert ("system:serviceaccount:%s:app-sa" % NS, "get") in sars
    assert summary(r.stdout) == "doctor: 1 problem, 0 warnings (lease " \
        "%s/%s)" % (NS, lock_name)


def test_kubectl_stale(api, kdoctor, lock_name):
    held(api, lock_name, "pod-a", 20)
    r = kdoctor(lock_name)
    assert r.returncode == 1, r.stdout + r.stderr
    f = having(r.stdout, "FAIL", "lease", "lease %s/%s is stale: pod-a "
               "renewed it 20 s ago, past its 15 s duration" % (NS, lock_name))
    assert f, r.stdout
    assert having(r.stdout, "warn", "pods", "holder pod-a: no pod")
    assert "holderIdentity" in fix_of(r.stdout, "is stale")

    api.modify_lease(NS, lock_name, lambda o: o["spec"].update(
        {"renewTime": microtime(1)}))
    r = kdoctor(lock_name)
    assert not having(r.stdout, "FAIL", "lease", ""), r.stdout
    assert having(r.stdout, "ok", "lease", "held by pod-a, renewed 1 s ago")


def test_kubectl_preferred_dead(api, kdoctor, lock_name):
    """preferredHolder naming no live candidate."""
    api.enable_candidates()
    api.plant_candidate(NS, "pod-a", lock_name)
    held(api, lock_name, "pod-a", 1, strategy="OldestEmulationVersion",
         preferredHolder="pod-gone")
    r = kdoctor(lock_name)
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "preferred", "lease %s/%s prefers "
                  "holder pod-gone" % (NS, lock_name)), r.stdout
    assert '"preferredHolder":null' in fix_of(r.stdout, "prefers holder")
    assert having(r.stdout, "ok", "pods", "holder pod-a: no pod %s/pod-a, "
                  "but a live LeaseCandidate" % NS)

    api.plant_candidate(NS, "pod-b", lock_name)
    api.modify_lease(NS, lock_name, lambda o: o["spec"].update(
        {"preferredHolder": "pod-b"}))
    r = kdoctor(lock_name)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not having(r.stdout, "FAIL", "preferred", "")


def test_kubectl_same_name_elsewhere(api, kdoctor, lock_name):
    held(api, lock_name, "pod-a", 1)
    api.create_lease("canary", lock_name, {
        "holderIdentity": "pod-c", "leaseDurationSeconds": 15,
        "acquireTime": microtime(30), "renewTime": microtime(1)})
    r = kdoctor(lock_name)
    assert r.returncode == 0, r.stdout + r.stderr
    assert having(r.stdout, "warn", "split", "lease canary/%s of the same "
                  "name is held too, by pod-c" % lock_name), r.stdout


def test_kubectl_every_lease_and_errors(api, kdoctor, lock_name):
    """Without LEASE, every Lease of the namespace; a rejected token is
    one line and exit 1."""
    held(api, lock_name, "pod-a", 1)
    held(api, lock_name + "-b", "pod-b", 30)
    r = kdoctor()
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "lease", "lease %s/%s-b is stale" %
                  (NS, lock_name))
    assert having(r.stdout, "ok", "lease", "lease %s/%s is held" %
                  (NS, lock_name))
    api.revoke_token(TOKEN)
    r = kdoctor(lock_name)
    assert r.returncode == 1
    assert r.stdout == "" and len(r.stderr.splitlines()) == 1, r
    assert "401" in r.stderr or "Unauthorized" in r.stderr, r.stderr


def leader_event(api, lease, identity):
    """The Event leaderd and client-go record as a holder takes over."""
    api._event(NS, json.dumps({
        "metadata": {"name": "%s.%x" % (lease, time.time_ns())},
        "involvedObject": {"kind": "Lease", "name": lease, "namespace": NS,
                           "apiVersion": "coordination.k8s.io/v1"},
        "reason": "LeaderElection", "type": "Normal",
        "message": "%s became leader" % identity}))


def test_kubectl_recent_holders(api, kdoctor, lock_name):
    """The Lease's Events name its recent holders: their pods are looked
    up, and their service accounts asked about too."""
    held(api, lock_name, "pod-a", 1)
    api.create_pod(NS, "pod-a", service_account="sa-new")
    api.create_pod(NS, "pod-old", service_account="sa-old")
    leader_event(api, lock_name, "pod-old")
    leader_event(api, lock_name, "pod-gone")
    leader_event(api, lock_name, "pod-a")
    r = kdoctor(lock_name)
    assert r.returncode == 0, r.stdout + r.stderr
    assert having(r.stdout, "ok", "pods", "recent holder pod-old: pod "
                  "%s/pod-old exists" % NS), r.stdout
    assert having(r.stdout, "warn", "pods", "recent holder pod-gone: no "
                  "pod %s/pod-gone" % NS), r.stdout
    assert not having(r.stdout, "ok", "pods", "recent holder pod-a")
    assert having(r.stdout, "ok", "access", "service account %s/sa-old "
                  "(pods pod-old) may update" % NS)

    api.deny("update", "leases", user="system:serviceaccount:%s:sa-old" % NS)
    r = kdoctor(lock_name)
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "access", "service account %s/sa-old "
                  "(pods pod-old) may not update" % NS), r.stdout
    assert having(r.stdout, "ok", "access", "service account %s/sa-new "
                  "(pods pod-a) may update" % NS)


def test_kubectl_selector_candidates(api, kdoctor, lock_name):
    """-l SELECTOR names the candidates' pods when nothing else does (a
    Lease not created yet: create is asked about too)."""
    api.create_pod(NS, "app-0", labels={"app": "shop"},
                   service_account="shop")
    api.create_pod(NS, "other-0", labels={"app": "other"},
                   service_account="other")
    r = kdoctor(lock_name)
    assert r.returncode == 0, r.stdout + r.stderr
    assert having(r.stdout, "skip", "candidates", "no candidate's pod "
                  "found"), r.stdout
    api.deny("create", "leases", user="system:serviceaccount:%s:shop" % NS)
    r = kdoctor(lock_name, "-l", "app=shop")
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "access", "service account %s/shop "
                  "(pods app-0) may not create leases.coordination.k8s.io "
                  "in namespace %s" % (NS, NS)), r.stdout
    assert not having(r.stdout, "ok", "access", "service account "
                      "%s/other" % NS)


def test_pod_clock_offset(api, cluster, lock_name):
    """This host's clock against the API server's Date: a FAIL past a
    quarter of renew_deadline (2 s here: 0.5 s, plus 1 s of rounding)."""
    inst = cluster.new("pod-a")
    r = pod_doctor(inst)
    assert r.returncode == 0, r.stdout + r.stderr
    assert having(r.stdout, "ok", "clock", "this host's clock is within"), \
        r.stdout
    api.date_offset_s = -30
    r = pod_doctor(inst)
    assert r.returncode == 1, r.stdout + r.stderr
    f = having(r.stdout, "FAIL", "clock", "s ahead of the API server's, more "
               "than a quarter of renew_deadline (500 ms)")
    assert f and f[0][2].startswith(("this host's clock is 29.",
                                     "this host's clock is 30.")), r.stdout
    assert "NTP" in fix_of(r.stdout, "ahead of the API server's")


def test_kubectl_renew_time_ahead(api, kdoctor, lock_name):
    """A renewTime in the API server's future: the holder's clock."""
    held(api, lock_name, "pod-a", -30)
    r = kdoctor(lock_name)
    assert r.returncode == 0, r.stdout + r.stderr
    assert having(r.stdout, "warn", "clock", "renewTime is 30 s ahead of the "
                  "API server's clock: the clock of pod-a's node runs "
                  "ahead") or having(r.stdout, "warn", "clock", "renewTime "
                  "is 29 s ahead"), r.stdout
    api.modify_lease(NS, lock_name, lambda o: o["spec"].update(
        {"renewTime": microtime(0), "acquireTime": microtime(0)}))
    r = kdoctor(lock_name)
    assert not having(r.stdout, "warn", "clock", ""), r.stdout


def test_pod_endpoints_lock_beside_a_live_lease(api, cluster, lock_name):
    """Drill case 9 from the old side: an instance on the endpoints lock
    finds the Lease of the same name held by electors on leases."""
    inst = cluster.new("old-a")
    held(api, lock_name, "new-c", 1, dur=15)
    r = pod_doctor(inst, "--lock-type", "endpoints")
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "split", "lease %s/%s holds a live "
                  "record, renewed 1 s ago by new-c: electors on the Lease "
                  "elect apart from those on lock type endpoints" %
                  (NS, lock_name)), r.stdout
    assert having(r.stdout, "ok", "access", "may update endpoints/%s" %
                  lock_name)
    r = pod_doctor(inst, "--lock-type", "endpointsleases")
    assert not having(r.stdout, "FAIL", "split", ""), r.stdout


def test_pod_in_cluster(api, tmp_path, lock_name):
    """As in a pod: the in-cluster service account (its token file, a
    JWT, its namespace file), no kubeconfig, no $POD_NAMESPACE."""
    sa = tmp_path / "sa"
    sa.mkdir()
    exp = time.time() + 1800
    tok = jwt(exp)
    api.add_token(tok)
    api.set_token_user(tok, "system:serviceaccount:team:shop")
    (sa / "token").write_text(tok + "\n")
    (sa / "namespace").write_text("team\n")
    (sa / "ca.crt").write_bytes(open(api.ca_file, "rb").read())
    env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1",
           "KUBERNETES_SERVICE_PORT": str(api.port),
           "LEADERD_SA_DIR": str(sa), "POD_NAME": "shop-0"}
    r = run(["--election", lock_name, "doctor"], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert summary(r.stdout) == "doctor: 0 problems, 0 warnings (leases " \
        "team/%s, identity shop-0, as this pod)" % lock_name
    assert having(r.stdout, "ok", "token", "accepts the token from the file "
                  "%s/token as system:serviceaccount:team:shop; it expires "
                  "at" % sa), r.stdout
    api.deny("create", "events", ns="team")
    r = run(["--election", lock_name, "doctor"], env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "access", "may not create events in "
                  "namespace team (needed to record leadership Events)")
    assert "bound to system:serviceaccount:team:shop" in \
        fix_of(r.stdout, "may not create events")
    # A bad flag is a configuration error: exit 2, no checks.
    r = run(["--election", lock_name, "--lease-duration", "soon", "doctor"],
            env=env)
    assert r.returncode == 2 and r.stdout == "", r


def test_pod_every_election(api, cluster, lock_name):
    """An elections: list: each election's lock checked."""
    inst = cluster.new("pod-a")
    with open(inst.config_path, "a") as f:
        f.write("elections:\n  - lock: {name: %s-b}\n" % lock_name)
    api.deny("update", "leases", ns=NS, name=lock_name + "-b")
    r = pod_doctor(inst)
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "access", "may not update leases."
                  "coordination.k8s.io/%s-b in namespace" % lock_name), \
        r.stdout
    assert having(r.stdout, "ok", "access", "may update leases."
                  "coordination.k8s.io/%s in namespace" % lock_name)
    assert summary(r.stdout).endswith("(2 elections from leases %s/%s, "
                                      "identity pod-a, as this pod)" %
                                      (NS, lock_name))


def test_kubectl_unreachable(api, tmp_path):
    """No API server there: one line, exit 1."""
    from harness import free_port
    exe = tmp_path / "kubectl-leaderd"
    os.symlink(leaderd_binary(), exe)
    kc = api.write_kubeconfig(str(tmp_path / "kc"), token=TOKEN,
                              server="https://127.0.0.1:%d" % free_port())
    r = run(["doctor", "app", "--request-timeout", "2s"], exe=str(exe),
            env={"KUBECONFIG": kc, "HOME": str(tmp_path)})
    assert r.returncode == 1 and r.stdout == "", r
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_pod_verbs_of_the_actions_and_candidacy(api, cluster, lock_name):
    """The label, the endpoints and a coordinated candidacy add their
    verbs: each asked about, each denied one a FAIL naming it."""
    inst = cluster.new("pod-a")
    with open(inst.config_path, "a") as f:
        f.write("actions:\n"
                "  label: {enabled: true, pod: pod-a}\n"
                "  endpoints: {service: shop, ip: 10.0.0.7}\n"
                "candidacy: {coordinated: true, binary_version: 1.0.0}\n")
    r = pod_doctor(inst)
    asked = {(a["verb"], a["resource"], a.get("name", ""))
             for _, _, a in api.reviews()}
    for want in (("patch", "pods", "pod-a"),
                 ("create", "endpointslices", ""),
                 ("update", "endpointslices", "shop-leader"),
                 ("create", "leasecandidates", ""),
                 ("update", "leasecandidates", "pod-a"),
                 ("delete", "leasecandidates", "pod-a"),
                 ("list", "leasecandidates", "")):
        assert want in asked, (want, sorted(asked))
    assert r.returncode == 0, r.stdout + r.stderr
    api.deny("patch", "pods")
    api.deny("update", "endpointslices")
    r = pod_doctor(inst)
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "access", "may not patch pods/pod-a in "
                  "namespace %s (needed to keep the pod's label, "
                  "actions.label)" % NS), r.stdout
    assert having(r.stdout, "FAIL", "access", "may not update "
                  "endpointslices.discovery.k8s.io/shop-leader"), r.stdout
    assert summary(r.stdout).startswith("doctor: 2 problems")


def test_kubectl_all_namespaces(api, kdoctor, lock_name):
    """-A: every namespace's Leases, each checked in its namespace."""
    held(api, lock_name, "pod-a", 1)
    api.create_lease("canary", lock_name + "-c", {
        "holderIdentity": "pod-c", "leaseDurationSeconds": 15,
        "acquireTime": microtime(40), "renewTime": microtime(40)})
    r = kdoctor("-A")
    assert r.returncode == 1, r.stdout + r.stderr
    assert having(r.stdout, "FAIL", "lease", "lease canary/%s-c is stale" %
                  lock_name), r.stdout
    assert having(r.stdout, "ok", "lease", "lease %s/%s is held by pod-a" %
                  (NS, lock_name))
    assert "in every namespace)" in summary(r.stdout)
