"""The Helm charts of deploy/helm/ on a real kube-apiserver (v1.36.3 in
the harness), and the platform chart's injection by pod label
(docs/helm.md):

 - `helm template | kubectl apply --dry-run=server` accepts both charts'
   renders (the Prometheus Operator's kinds aside: no CRD here);
 - a Pod created with the label leaderd.io/inject=true is stored with
   leaderd as a native sidecar (init container, restartPolicy Always,
   startupProbe), its identity and namespace from the downward API, its
   own projected token, and LEADERD_URL in every app container; the
   annotations change the Lease, the timings, the app probe, the form
   (plain), and add nais's variables;
 - an unlabelled pod, a labelled pod in kube-system, a pod that already
   has leaderd, and a re-applied pod are left as they are; a labelled
   pod that names no Lease, or has a bad annotation, is refused;
 - the injected pod spec, run as the kubelet would run it (as
   test_compat_manifests.py runs the peers' manifests) with a token of
   the pod's ServiceAccount, bound by the chart's RoleBinding: three
   replicas, one leader, a failover when it dies.

The policy is installed with failurePolicy Fail, so that a policy the
API server cannot evaluate fails these tests instead of leaving pods
bare.  HELM: the pinned helm (test/helm/helm.mk).
"""

import copy
import json
import os
import shutil
import subprocess
import tempfile

import pytest

import e2elib as E
from test_compat_manifests import Replica, entrypoint

HELM = os.environ.get("HELM", "")
NS = "inject-a"          # where the chart binds its ClusterRole
NS_OTHER = "inject-b"    # not bound, still injected
LABEL = {"leaderd.io/inject": "true"}
POLICY = "leaderd-inject"


def helm(*args):
    p = subprocess.run([HELM] + list(args), capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, "helm %s: %s%s" % (" ".join(args), p.stdout,
                                                 p.stderr)
    return p.stdout


@pytest.fixture(scope="module")
def charts():
    """A copy of deploy/helm with the example app's dependency built."""
    assert HELM and os.access(HELM, os.X_OK), \
        "HELM=%r: run through `make e2e` (it builds helm)" % HELM
    d = tempfile.mkdtemp(prefix="helm-", dir=E.WORK)
    shutil.copytree(os.path.join(E.REPO, "deploy", "helm"),
                    os.path.join(d, "helm"))
    helm("dependency", "build", os.path.join(d, "helm", "example-app"))
    yield os.path.join(d, "helm")
    shutil.rmtree(d, ignore_errors=True)


def ensure_namespace(cluster, ns):
    """The namespace and its ServiceAccount "default" (the harness runs no
    controller manager to make it)."""
    cluster.admin.run("create", "namespace", ns, check=False, ns=False)
    cluster.admin.run("create", "serviceaccount", "default", "-n", ns,
                      check=False, ns=False)


def pod(name, labels=None, annotations=None, containers=None, **spec):
    meta = {"name": name, "labels": dict(labels or {})}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": dict(spec, containers=containers or [
                {"name": "app", "image": "registry.example/app:1"},
                {"name": "worker", "image": "registry.example/app:1",
                 "env": [{"name": "A", "value": "b"}]}])}


def create(cluster, obj, ns=NS, check=True):
    """Create obj in ns; the Pod as stored (or the failed process)."""
    p = cluster.admin.run("create", "-n", ns, "-o", "json", "-f", "-",
                          input=json.dumps(obj), ns=False, check=False)
    if not check:
        return p
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def platform(cluster, charts):
    """The platform chart applied, its RBAC bound in NS; waits until the
    API server injects."""
    for ns in (NS, NS_OTHER, "kube-system"):
        ensure_namespace(cluster, ns)
    out = helm("template", "leaderd", os.path.join(charts, "leaderd"),
               "--namespace", "leaderd-system",
               "--set", "rbac.namespaces={%s}" % NS,
               "--set", "injection.failurePolicy=Fail")
    cluster.admin.run("apply", "-f", "-", input=out, ns=False)

    def active():
        p = cluster.admin.run(
            "create", "--dry-run=server", "-n", NS, "-o", "json", "-f", "-",
            input=json.dumps(pod("probe", dict(LABEL, **{
                "app.kubernetes.io/name": "probe"}))), ns=False, check=False)
        return p.returncode == 0 and "leaderd" in [
            c["name"] for c in json.loads(p.stdout)["spec"].get(
                "initContainers", [])]
    E.wait_for(active, 60, interval=0.5, what="the policy to inject")
    yield
    # The test pods (on a real cluster, a kubelet would try to run them).
    for ns in (NS, NS_OTHER):
        cluster.admin.run("delete", "pods", "--all", "-n", ns,
                          "--wait=false", ns=False, check=False)
    cluster.admin.run("delete", "-f", "-", "--ignore-not-found",
                      "--wait=false", input=out, ns=False, check=False)


def leaderd_of(p):
    """(the leaderd container, "init" or "plain"), or (None, None)."""
    for kind, key in (("init", "initContainers"), ("plain", "containers")):
        for c in p["spec"].get(key, []):
            if c["name"] == "leaderd":
                return c, kind
    return None, None


def env_of(c):
    return {e["name"]: e.get("value", e.get("valueFrom"))
            for e in c.get("env", [])}


def app_containers(p):
    return [c for c in p["spec"]["containers"] if c["name"] != "leaderd"]


# -- the charts' renders -----------------------------------------------------

def dry_run(cluster, manifests, ns=None):
    """kubectl apply --dry-run=server; ns for the objects that name none."""
    p = cluster.admin.run("apply", "--dry-run=server", *(
        ["-n", ns] if ns else []), "-f", "-", input=manifests, ns=False,
        check=False, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    assert lines and all("(server dry run)" in l for l in lines), p.stdout
    return lines


def test_platform_chart_dry_run_server(cluster, charts):
    for ns in ("team-a", "team-c"):
        ensure_namespace(cluster, ns)
    out = helm("template", "dry", os.path.join(charts, "leaderd"),
               "--namespace", "leaderd-system",
               "--set", "rbac.namespaces={team-a}",
               "--set", "rbac.serviceAccounts[0].namespace=team-c",
               "--set", "rbac.serviceAccounts[0].name=worker",
               "--set", "rbac.nais=true", "--set", "dashboard.enabled=true",
               "--set", "flowSchema.enabled=true")
    ensure_namespace(cluster, "leaderd-system")
    kinds = " ".join(dry_run(cluster, out))
    for k in ("mutatingadmissionpolicy.", "mutatingadmissionpolicybinding.",
              "validatingadmissionpolicy.", "clusterrole.", "rolebinding.",
              "flowschema.", "configmap/"):
        assert k in kinds, kinds


@pytest.mark.parametrize("args", [
    [], ["--set", "leaderd-sidecar.native=false",
         "--set", "leaderd-sidecar.lock.type=endpointsleases"],
    ["--set", "leaderd-sidecar.shards.group=work"]],
    ids=["native", "plain-endpointsleases", "shards"])
def test_library_chart_dry_run_server(cluster, charts, args):
    out = helm("template", "example", os.path.join(charts, "example-app"),
               "--namespace", cluster.namespace, *args)
    kinds = " ".join(dry_run(cluster, out, cluster.namespace))
    assert "deployment.apps/example" in kinds and "role." in kinds, kinds


# -- the policy ------------------------------------------------------------

def test_labelled_pod_gets_a_native_sidecar(cluster, platform):
    p = create(cluster, pod("labelled", dict(LABEL, **{
        "app.kubernetes.io/name": "billing"})))
    c, kind = leaderd_of(p)
    assert kind == "init", p["spec"]
    assert p["spec"]["initContainers"][0]["name"] == "leaderd"
    assert c["restartPolicy"] == "Always"
    assert c["image"] == "ghcr.io/leaderd/leaderd:0.1.0"
    assert c["args"] == [
        "--id=$(POD_NAME)", "--election=billing",
        "--election-namespace=$(POD_NAMESPACE)", "--lock-type=leases",
        "--http=localhost:4040", "--probes=0.0.0.0:4041",
        "--lease-duration=15s", "--renew-deadline=10s", "--retry-period=2s",
        "--request-timeout=2s", "--release-on-cancel=true"]
    assert env_of(c) == {
        "POD_NAME": {"fieldRef": {"apiVersion": "v1",
                                  "fieldPath": "metadata.name"}},
        "POD_NAMESPACE": {"fieldRef": {"apiVersion": "v1",
                                       "fieldPath": "metadata.namespace"}}}
    probe = {"httpGet": {"path": "/healthz", "port": 4041, "scheme": "HTTP"},
             "timeoutSeconds": 2, "successThreshold": 1}
    assert c["startupProbe"] == dict(probe, periodSeconds=1,
                                     failureThreshold=30)
    assert c["livenessProbe"] == dict(probe, periodSeconds=10,
                                      failureThreshold=3)
    assert c["readinessProbe"] == dict(
        probe, httpGet=dict(probe["httpGet"], path="/readyz"),
        periodSeconds=5, failureThreshold=2)
    assert c["ports"] == [{"name": "leaderd-probes", "containerPort": 4041,
                           "protocol": "TCP"}]
    sc = c["securityContext"]
    assert sc["runAsNonRoot"] and sc["readOnlyRootFilesystem"] and \
        not sc["allowPrivilegeEscalation"] and \
        sc["capabilities"] == {"drop": ["ALL"]} and sc["runAsUser"] == 65532
    assert c["resources"] == {"requests": {"cpu": "5m", "memory": "16Mi"},
                              "limits": {"cpu": "50m", "memory": "32Mi"}}
    assert c["volumeMounts"] == [{
        "name": "leaderd-kube-api-access", "readOnly": True,
        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
    vols = {v["name"]: v for v in p["spec"]["volumes"]}
    srcs = vols["leaderd-kube-api-access"]["projected"]["sources"]
    assert srcs[0]["serviceAccountToken"] == {"path": "token",
                                              "expirationSeconds": 3607}
    assert srcs[1]["configMap"]["name"] == "kube-root-ca.crt"
    for a in app_containers(p):
        assert env_of(a)["LEADERD_URL"] == "http://127.0.0.1:4040", a
        assert "ELECTOR_GET_URL" not in env_of(a)
    # The app's own variables stay, first.
    assert p["spec"]["containers"][1]["env"][0] == {"name": "A",
                                                    "value": "b"}


def test_every_namespace_but_the_excluded(cluster, platform):
    """The policy acts in every namespace, whether or not the chart's
    RBAC binds it there (rbac.namespaces is the chart user's list)."""
    p = create(cluster, pod("elsewhere", dict(LABEL, **{
        "app.kubernetes.io/name": "billing"})), ns=NS_OTHER)
    assert leaderd_of(p)[1] == "init"


def test_annotations_override(cluster, platform):
    p = create(cluster, pod("annotated", LABEL, {
        "leaderd.io/lease": "jobs",
        "leaderd.io/lease-duration": "30s",
        "leaderd.io/renew-deadline": "20s",
        "leaderd.io/retry-period": "4s",
        "leaderd.io/app-probe": "http://127.0.0.1:8080/ready"}))
    c, kind = leaderd_of(p)
    assert kind == "init"
    for a in ("--election=jobs", "--lease-duration=30s",
              "--renew-deadline=20s", "--retry-period=4s",
              "--app-probe=http://127.0.0.1:8080/ready"):
        assert a in c["args"], c["args"]


def test_plain_sidecar_by_annotation(cluster, platform):
    p = create(cluster, pod("plain", dict(LABEL, **{
        "app.kubernetes.io/name": "plain"}), {"leaderd.io/native": "false"}))
    c, kind = leaderd_of(p)
    assert kind == "plain" and p["spec"]["containers"][-1] is c
    assert "restartPolicy" not in c and "startupProbe" not in c
    assert "initContainers" not in p["spec"]
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for a in app_containers(p):
        assert env_of(a)["LEADERD_URL"] == "http://127.0.0.1:4040"


def test_nais_compat(cluster, platform):
    p = create(cluster, pod("nais", dict(LABEL, **{
        "app.kubernetes.io/name": "myapplication"}),
        {"leaderd.io/compat": "nais"}))
    c, _ = leaderd_of(p)
    # naiserator's command line, unchanged, under --compat=nais.
    assert c["args"] == ["--compat=nais", "--election=myapplication",
                         "--election-namespace=$(POD_NAMESPACE)",
                         "--http=localhost:4040",
                         "--probe-address=0.0.0.0:4041"]
    for a in app_containers(p):
        e = env_of(a)
        assert e["ELECTOR_PATH"] == "localhost:4040"
        assert e["ELECTOR_GET_URL"] == "http://localhost:4040/"
        assert e["ELECTOR_SSE_URL"] == "http://localhost:4040/sse"
        assert e["LEADERD_URL"] == "http://127.0.0.1:4040"


def test_existing_init_containers_and_own_variables(cluster, platform):
    """leaderd goes first, so the app's own init containers can already
    ask it; a LEADERD_URL the container sets is kept."""
    p = create(cluster, pod(
        "withinit", dict(LABEL, **{"app.kubernetes.io/name": "w"}),
        containers=[{"name": "app", "image": "x", "env": [
            {"name": "LEADERD_URL", "value": "http://127.0.0.1:9999"}]}],
        initContainers=[{"name": "migrate", "image": "x"}],
        automountServiceAccountToken=False))
    assert [c["name"] for c in p["spec"]["initContainers"]] == [
        "leaderd", "migrate"]
    assert env_of(p["spec"]["containers"][0]) == {
        "LEADERD_URL": "http://127.0.0.1:9999"}
    # No automounted token: the pod had no volumes, it has leaderd's.
    assert [v["name"] for v in p["spec"]["volumes"]] == [
        "leaderd-kube-api-access"]


def strip(spec):
    """A stored spec without the generated token volume's random name."""
    s = json.dumps(spec)
    for v in spec.get("volumes", []):
        if v["name"].startswith("kube-api-access-"):
            s = s.replace(v["name"], "kube-api-access")
    return json.loads(s)


def test_unlabelled_pod_untouched(cluster, platform):
    plain = pod("unlabelled", {"app.kubernetes.io/name": "billing"})
    p = create(cluster, plain)
    assert leaderd_of(p) == (None, None)
    for c in p["spec"]["containers"]:
        assert "LEADERD_URL" not in env_of(c)
    assert "leaderd-kube-api-access" not in [
        v["name"] for v in p["spec"]["volumes"]]
    # The same pod in a namespace where no policy acts would be stored
    # the same: compare with a dry run of it under another label value.
    other = copy.deepcopy(plain)
    other["metadata"]["labels"]["leaderd.io/inject"] = "false"
    q = create(cluster, dict(other, metadata=dict(other["metadata"],
                                                 name="labelled-false")))
    assert strip(q["spec"]) == strip(p["spec"])


def test_kube_system_untouched(cluster, platform):
    p = create(cluster, pod("inject-test", dict(LABEL, **{
        "app.kubernetes.io/name": "x"})), ns="kube-system")
    try:
        assert leaderd_of(p) == (None, None)
        assert all("LEADERD_URL" not in env_of(c)
                   for c in p["spec"]["containers"])
    finally:
        cluster.admin.run("delete", "pod", "inject-test", "-n",
                          "kube-system", "--wait=false", ns=False,
                          check=False)


def test_idempotent(cluster, platform):
    """A re-applied pod is unchanged (the policy acts on CREATE only); a
    pod created from an injected pod's spec gets no second leaderd."""
    manifest = json.dumps(pod("reapplied", dict(LABEL, **{
        "app.kubernetes.io/name": "again"})))
    cluster.admin.run("apply", "-n", NS, "-f", "-", input=manifest,
                      ns=False)
    first = cluster.admin.json("get", "pod", "reapplied", "-n", NS,
                               ns=False)
    assert leaderd_of(first)[1] == "init"
    # kubectl may send a patch of list-order directives alone ("configured");
    # what counts is the object: not written again, spec the same.
    cluster.admin.run("apply", "-n", NS, "-f", "-", input=manifest,
                      ns=False)
    again = cluster.admin.json("get", "pod", "reapplied", "-n", NS,
                               ns=False)
    assert again["metadata"]["resourceVersion"] == \
        first["metadata"]["resourceVersion"]
    assert again["spec"] == first["spec"]

    copied = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "copied",
                           "labels": first["metadata"]["labels"]},
              "spec": strip(first["spec"])}
    copied["spec"].pop("nodeName", None)
    c = create(cluster, copied)
    names = [x["name"] for x in c["spec"].get("initContainers", []) +
             c["spec"]["containers"]]
    assert names.count("leaderd") == 1, names
    assert [v["name"] for v in c["spec"]["volumes"]].count(
        "leaderd-kube-api-access") == 1
    assert [e["name"] for e in c["spec"]["containers"][0]["env"]].count(
        "LEADERD_URL") == 1


@pytest.mark.parametrize("labels,annotations,says", [
    ({}, {}, "set annotation leaderd.io/lease or label "
     "app.kubernetes.io/name"),
    ({"app.kubernetes.io/name": "x"}, {"leaderd.io/lease-duration": "15"},
     "annotation leaderd.io/lease-duration"),
    ({"app.kubernetes.io/name": "x"}, {"leaderd.io/native": "no"},
     "annotation leaderd.io/native"),
    ({}, {"leaderd.io/lease": "Bad_Name"}, "annotation leaderd.io/lease"),
    ({"app.kubernetes.io/name": "x"}, {"leaderd.io/compat": "classic"},
     "annotation leaderd.io/compat"),
    ({"app.kubernetes.io/name": "My_App"}, {},
     "label app.kubernetes.io/name: My_App is not a DNS subdomain"),
], ids=["no-lease", "duration", "native", "lease-name", "compat",
        "label-name"])
def test_bad_pod_refused_with_the_key(cluster, platform, labels,
                                      annotations, says):
    p = create(cluster, pod("refused", dict(LABEL, **labels), annotations),
               check=False)
    assert p.returncode != 0, p.stdout
    assert says in p.stderr, p.stderr


# -- the injected pod spec, run as the kubelet would -------------------------

def test_injected_pods_elect_and_fail_over(cluster, platform):
    """Three Pods created with the label and fast timings; each stored
    spec's leaderd container run as the kubelet would (its args with
    $(VAR) expanded, its env's fieldRefs resolved, in-cluster
    credentials: a token of the pod's ServiceAccount, whose rights come
    from the chart's RoleBinding alone).  One leads; when it dies,
    another takes over."""
    if cluster.mode != "harness":
        pytest.skip("runs pods of its own namespace on the harness")
    ann = {"leaderd.io/lease": "elect-test", "leaderd.io/lease-duration":
           "%ds" % E.LD, "leaderd.io/renew-deadline": "%ds" % E.RD,
           "leaderd.io/retry-period": "%ds" % E.RP}
    names = ["elect-%d" % i for i in range(3)]
    specs = {n: create(cluster, pod(n, LABEL, ann))["spec"] for n in names}
    token = cluster.admin.run("create", "token", "default", "-n", NS,
                              "--duration=3600s", ns=False).stdout.strip()
    reps = []
    try:
        for n in names:
            c, kind = leaderd_of({"spec": specs[n]})
            assert kind == "init"
            ports = {"4040": str(E.free_port()), "4041": str(E.free_port())}
            reps.append((Replica(cluster, specs[n],
                                 dict(c, command=entrypoint(c)), n, NS,
                                 token, ports), ports))

        def leader():
            views = [E.http_get_json(int(p["4040"]), "/leader")
                     for r, p in reps if r.proc.alive()]
            leads = [r.name for (r, p), (st, b) in zip(
                [x for x in reps if x[0].proc.alive()], views)
                if st == 200 and b and b.get("is_leader") is True]
            return leads[0] if len(leads) == 1 else None
        lead = E.wait_for(leader, 30, interval=0.2, what="one leader")
        lease = cluster.admin.json("get", "lease", "elect-test", "-n", NS,
                                   ns=False)
        assert lease["spec"]["holderIdentity"] == lead
        assert lease["spec"]["leaseDurationSeconds"] == E.LD
        # Readiness as the kubelet would probe it, on the probes port.
        for r, p in reps:
            E.wait_for(lambda: E.http_get_json(int(p["4041"]),
                                               "/readyz")[0] == 200, 10,
                       what="%s /readyz" % r.name)
        victim = [r for r, _ in reps if r.name == lead][0]
        victim.proc.kill9()
        new = E.wait_for(lambda: (lambda l: l if l not in (None, lead)
                                  else None)(leader()),
                         E.KILL_BOUND + 5, interval=0.2,
                         what="another pod to lead")
        assert new != lead
    finally:
        for r, _ in reps:
            r.stop()
        cluster.admin.run("delete", "pod", *names, "-n", NS,
                          "--wait=false", ns=False, check=False)


def test_library_chart_pods_elect_and_fail_over(cluster, charts):
    """The example app's render (the library chart's sidecar, ConfigMap,
    ServiceAccount, Role limited to the Lease by resourceNames, and
    RoleBinding) applied for real; its leaderd container run as the
    kubelet would, three replicas with the ServiceAccount's token: the
    Role is all they need to elect and fail over."""
    if cluster.mode != "harness":
        pytest.skip("runs pods of its own namespace on the harness")
    ns = "library-a"
    ensure_namespace(cluster, ns)
    out = helm("template", "lib", os.path.join(charts, "example-app"),
               "--namespace", ns,
               "--set", "leaderd-sidecar.lock.name=lib-elect",
               "--set", "leaderd-sidecar.unixSocket=false",
               "--set", "leaderd-sidecar.leaseDuration=%ds" % E.LD,
               "--set", "leaderd-sidecar.renewDeadline=%ds" % E.RD,
               "--set", "leaderd-sidecar.retryPeriod=%ds" % E.RP)
    cluster.admin.run("apply", "-n", ns, "-f", "-", input=out, ns=False)
    cm = cluster.admin.json("get", "configmap", "lib-leaderd", "-n", ns,
                            ns=False)["data"]["leaderd.yaml"]
    role = cluster.admin.json("get", "role", "lib-leaderd", "-n", ns,
                              ns=False)
    assert role["rules"][0]["resourceNames"] == ["lib-elect"]
    dep = [d for d in out.split("\n---\n") if "kind: Deployment" in d]
    spec = json.loads(cluster.admin.run(
        "create", "--dry-run=client", "-o", "json", "-f", "-",
        input=dep[0], ns=False).stdout)["spec"]["template"]["spec"]
    c, kind = leaderd_of({"spec": spec})
    assert kind == "init"
    token = cluster.admin.run("create", "token", "lib", "-n", ns,
                              "--duration=3600s", ns=False).stdout.strip()
    reps = []
    try:
        for i in range(3):
            http, probes = E.free_port(), E.free_port()
            cfg = os.path.join(E.WORK, "lib-%d.yaml" % i)
            with open(cfg, "w") as f:
                f.write(cm.replace("localhost:4040", "localhost:%d" % http)
                        .replace("0.0.0.0:4041", "127.0.0.1:%d" % probes))
            reps.append((Replica(cluster, spec, dict(c, command=entrypoint(c)),
                                 "lib-%d" % i, ns, token,
                                 {"/etc/leaderd/leaderd.yaml": cfg}), http))

        def leader():
            live = [(r, h) for r, h in reps if r.proc.alive()]
            leads = [r.name for r, h in live
                     if (lambda st, b: st == 200 and b and
                         b.get("is_leader") is True)(
                             *E.http_get_json(h, "/leader"))]
            return leads[0] if len(leads) == 1 else None
        lead = E.wait_for(leader, 30, interval=0.2, what="one leader")
        assert cluster.admin.json("get", "lease", "lib-elect", "-n", ns,
                                  ns=False)["spec"]["holderIdentity"] == lead
        [r for r, _ in reps if r.name == lead][0].proc.kill9()
        E.wait_for(lambda: (lambda l: l if l not in (None, lead) else None)(
            leader()), E.KILL_BOUND + 5, interval=0.2,
            what="another pod to lead")
    finally:
        for r, _ in reps:
            r.stop()
        cluster.admin.run("delete", "-n", ns, "-f", "-", "--wait=false",
                          input=out, ns=False, check=False)
