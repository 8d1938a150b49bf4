"""Render every kustomization under deploy/ and check what comes out.

`kubectl kustomize DIR` must succeed for the base, the top-level
deploy/ and each variant; the rendered objects are then checked for what
the documentation promises: least-privilege RBAC, a hardened sidecar, probes on
the right paths and a reachable port, the downward API, the shared
socket, resources, a PodDisruptionBudget, and the native-sidecar and
migration specifics.  The last tests hand each leaderd container's
rendered arguments and config to `leaderd -n`.

kubectl (which embeds kustomize) and PyYAML are required; without them
the tests fail and say so.
"""

import re
import subprocess

import pytest

from deploy_helpers import ROOT, need_tool

try:
    import yaml
except ImportError:  # pragma: no cover - reported by the fixture below
    yaml = None

DEPLOY = ROOT / "deploy"

# Every directory under deploy/ holding a kustomization.yaml; a new one
# must be added here (test_every_kustomization_is_listed checks).
KUSTOMIZATIONS = [
    "deploy",
    "deploy/base",
    "deploy/native-sidecar",
    "deploy/migrate-leader-elector",
    "deploy/leader-service",
    "deploy/leader-endpoints",
    "deploy/app-gated",
    "deploy/coordinated",
    "deploy/shards",
]
# Kustomizations of cluster-scoped objects, applied on their own, with no
# pod (checked by their own tests below).
CLUSTER_WIDE = ["deploy/flowschema"]
# The variants that keep the base's config file and unix socket.
WITH_CONFIG = ["deploy", "deploy/base", "deploy/native-sidecar",
               "deploy/app-gated", "deploy/coordinated", "deploy/shards",
               "deploy/leader-service", "deploy/leader-endpoints"]

IMAGE = "ghcr.io/leaderd/leaderd"
SA_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
LEASES = ("coordination.k8s.io", "leases")
ENDPOINTS = ("", "endpoints")
CONFIGMAPS = ("", "configmaps")
EVENTS = ("", "events")
PODS = ("", "pods")
SLICES = ("discovery.k8s.io", "endpointslices")
CANDIDATES = ("coordination.k8s.io", "leasecandidates")
# The variants whose leaderd uses a MultiLock on an Endpoints object too.
WITH_ENDPOINTS = ["deploy/migrate-leader-elector"]

_cache = {}


@pytest.fixture(scope="session")
def kubectl():
    if yaml is None:
        pytest.fail("PyYAML is missing: `apt-get install python3-yaml` or "
            "`pip install pyyaml`")
    return need_tool("kubectl", "install kubectl (it embeds kustomize); "
        "these tests run `kubectl kustomize` on each kustomization")


def render(kubectl, rel):
    if rel not in _cache:
        proc = subprocess.run([kubectl, "kustomize", str(ROOT / rel)],
            capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, \
            f"kubectl kustomize {rel} failed:\n{proc.stderr}"
        docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
        _cache[rel] = docs
    return _cache[rel]


def objects(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def one(docs, kind):
    found = objects(docs, kind)
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def pod_spec(docs):
    return one(docs, "Deployment")["spec"]["template"]["spec"]


def leaderd_container(spec):
    """The leaderd container, from containers or initContainers."""
    found = [c for c in spec.get("containers", []) +
        spec.get("initContainers", []) if c["image"].startswith(IMAGE)]
    assert len(found) == 1, "expected exactly one leaderd container"
    return found[0]


def app_containers(spec):
    return [c for c in spec["containers"] if not c["image"].startswith(IMAGE)]


def k8s_expand(s, env):
    """Expand $(VAR) as the kubelet does in command and args."""
    def sub(m):
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        return env[name] if name in env else m.group(0)
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", sub, s)


def flag_value(args, flag):
    """The value of --flag=V or --flag V in args, or None."""
    for i, a in enumerate(args):
        if a.startswith(flag + "="):
            return a[len(flag) + 1:]
        if a == flag and i + 1 < len(args):
            return args[i + 1]
    return None


def leaderd_config(docs):
    """The leaderd.yaml the leaderd container reads, parsed, or None."""
    spec = pod_spec(docs)
    c = leaderd_container(spec)
    path = flag_value(c.get("args", []), "--config") or \
        flag_value(c.get("args", []), "-f")
    if path is None:
        return None
    for m in c.get("volumeMounts", []):
        prefix = m["mountPath"].rstrip("/") + "/"
        if path.startswith(prefix):
            vol = [v for v in spec["volumes"] if v["name"] == m["name"]][0]
            cm_name = vol["configMap"]["name"]
            cm = [d for d in objects(docs, "ConfigMap")
                if d["metadata"]["name"] == cm_name]
            assert cm, f"volume {m['name']} names a missing ConfigMap {cm_name}"
            key = path[len(prefix):]
            return yaml.safe_load(cm[0]["data"][key])
    pytest.fail(f"--config {path} is not on any volume mount of leaderd")


def lock_name(docs):
    cfg = leaderd_config(docs)
    if cfg is not None:
        return cfg["lock"]["name"]
    name = flag_value(leaderd_container(pod_spec(docs))["args"], "--election")
    assert name, "leaderd has neither --config nor --election"
    return name


def listen_http(docs):
    c = leaderd_container(pod_spec(docs))
    value = flag_value(c.get("args", []), "--http")
    if value is not None:
        return value
    cfg = leaderd_config(docs)
    return (cfg or {}).get("listen", {}).get("http", "localhost:4040")


def listen_probes(docs):
    c = leaderd_container(pod_spec(docs))
    value = flag_value(c.get("args", []), "--probes")
    if value is not None:
        return value
    cfg = leaderd_config(docs)
    return (cfg or {}).get("listen", {}).get("probes", "")


def duration_s(value):
    m = re.fullmatch(r"(\d+)s", str(value))
    assert m, f"expected whole seconds, got {value!r}"
    return int(m.group(1))


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_renders(kubectl, rel):
    docs = render(kubectl, rel)
    kinds = sorted(d["kind"] for d in docs)
    assert kinds, f"{rel} rendered nothing"
    for kind in ("ServiceAccount", "Role", "RoleBinding", "Deployment",
            "PodDisruptionBudget"):
        assert kind in kinds, f"{rel}: no {kind} in {kinds}"


def test_every_kustomization_is_listed():
    found = sorted(str(p.parent.relative_to(ROOT))
        for p in DEPLOY.rglob("kustomization.yaml"))
    assert found == sorted(KUSTOMIZATIONS + CLUSTER_WIDE), \
        "add the new kustomization to KUSTOMIZATIONS so it is tested"


def test_top_level_is_the_base(kubectl):
    assert render(kubectl, "deploy") == render(kubectl, "deploy/base")


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_role_is_least_privilege(kubectl, rel):
    docs = render(kubectl, rel)
    role = one(docs, "Role")
    got = set()
    for r in role["rules"]:
        assert set(r) <= {"apiGroups", "resources", "resourceNames",
            "verbs"}, f"unexpected rule fields {sorted(r)}"
        names = tuple(sorted(r.get("resourceNames", []))) or None
        for g in r["apiGroups"]:
            for res in r["resources"]:
                for v in r["verbs"]:
                    got.add((g, res, v, names))
    if rel == "deploy/shards":
        # A shard group: the member Leases carry generated pod names, so
        # no rule names a Lease; list and watch for the group's label
        # selector, delete for the member Lease on exit.
        want = {LEASES + (v, None) for v in
            ("get", "list", "watch", "create", "update", "delete")}
        want |= {EVENTS + ("create", None)}
        assert got == want, f"{rel}: Role rules differ from least privilege"
        return
    name = (lock_name(docs),)
    want = {
        LEASES + ("get", name),
        LEASES + ("watch", name),
        LEASES + ("update", name),
        LEASES + ("create", None),
        EVENTS + ("create", None),
    }
    if rel not in WITH_ENDPOINTS:
        # The split-lock check reads the Endpoints and the ConfigMap of
        # the Lease's name, and nothing else (an endpointsleases lock
        # runs no such check).
        want |= {ENDPOINTS + ("get", name), CONFIGMAPS + ("get", name)}
    if rel == "deploy/leader-service":
        # The pod label: get and patch, on all pods (resourceNames cannot
        # name a Deployment's generated pod names).
        want |= {PODS + ("get", None), PODS + ("patch", None)}
    if rel == "deploy/leader-endpoints":
        # The leader's EndpointSlice: by name, but for the create.
        slice_name = ("leaderd-example-leader-leader",)
        want |= {SLICES + ("get", slice_name),
            SLICES + ("update", slice_name), SLICES + ("delete", slice_name),
            SLICES + ("create", None)}
    if rel in WITH_ENDPOINTS:
        want |= {ENDPOINTS + ("get", name), ENDPOINTS + ("update", name),
            ENDPOINTS + ("create", None)}
    if rel == "deploy/coordinated":
        # The pod's own LeaseCandidate, named after the pod (no
        # resourceNames): kept and deleted by leaderd, listed for the
        # controller's pings and handover: auto; watch for a client-go
        # candidate beside it.
        want |= {CANDIDATES + (v, None) for v in
            ("get", "list", "watch", "create", "update", "delete")}
    assert got == want, f"{rel}: Role rules differ from least privilege"
    assert not objects(docs, "ClusterRole")
    assert not objects(docs, "ClusterRoleBinding")


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_rolebinding_binds_the_pods_account(kubectl, rel):
    docs = render(kubectl, rel)
    rb, role, sa = one(docs, "RoleBinding"), one(docs, "Role"), \
        one(docs, "ServiceAccount")
    assert rb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role", "name": role["metadata"]["name"]}
    assert len(rb["subjects"]) == 1
    subj = rb["subjects"][0]
    assert subj["kind"] == "ServiceAccount"
    assert subj["name"] == sa["metadata"]["name"]
    # Empty means the binding's own namespace; anything else must match.
    assert subj.get("namespace", rb["metadata"].get("namespace")) == \
        rb["metadata"].get("namespace")
    assert pod_spec(docs)["serviceAccountName"] == sa["metadata"]["name"]


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_sidecar_security_context(kubectl, rel):
    spec = pod_spec(render(kubectl, rel))
    c = leaderd_container(spec)
    pod_sc = spec.get("securityContext", {})
    sc = c["securityContext"]

    def field(name):
        return sc.get(name, pod_sc.get(name))
    assert field("runAsNonRoot") is True
    assert field("runAsUser") == 65532
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc.get("privileged", False) is False
    assert sc["capabilities"].get("drop") == ["ALL"]
    assert not sc["capabilities"].get("add")
    assert field("seccompProfile") == {"type": "RuntimeDefault"}
    for app in app_containers(spec):
        asc = app.get("securityContext", {})
        assert asc.get("allowPrivilegeEscalation") is False, app["name"]
        assert asc.get("capabilities", {}).get("drop") == ["ALL"], \
            app["name"]


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_probes(kubectl, rel):
    docs = render(kubectl, rel)
    c = leaderd_container(pod_spec(docs))
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    # The probes go to the probes-only listener (listen.probes), which
    # serves /healthz and /readyz alone.
    host, _, port = listen_probes(docs).rpartition(":")
    assert port, "listen.probes (or --probes) is not set"
    for probe, path in (("livenessProbe", "/healthz"),
            ("readinessProbe", "/readyz")):
        get = c[probe]["httpGet"]
        assert get["path"] == path, probe
        p = ports.get(get["port"], get["port"])
        assert str(p) == port, f"{probe} port {p} is not leaderd's {port}"
        assert get.get("host") is None, "probes must go to the pod IP"
    # The kubelet connects to the pod IP: a loopback listener would fail
    # every probe.
    assert host in ("0.0.0.0", "[::]", ""), \
        f"listen.probes {host}:{port} is not reachable by kubelet probes"
    # The application API stays on the pod's loopback (M1): other pods
    # cannot reach /leader, and cannot starve it with connections.
    hhost, _, hport = listen_http(docs).rpartition(":")
    assert hhost in ("127.0.0.1", "[::1]", "localhost"), \
        f"listen.http {hhost}:{hport} is exposed beyond the pod"
    assert hport not in [str(p) for p in ports.values()], \
        "the local API's port is published"


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_downward_api_env(kubectl, rel):
    c = leaderd_container(pod_spec(render(kubectl, rel)))
    env = {e["name"]: e for e in c["env"]}
    for name, path in (("POD_NAME", "metadata.name"),
            ("POD_NAMESPACE", "metadata.namespace")):
        assert env[name]["valueFrom"]["fieldRef"]["fieldPath"] == path


QUANTITY = {"m": 1e-3, "": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def quantity(q):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|)", str(q))
    assert m, f"unparsed quantity {q!r}"
    return float(m.group(1)) * QUANTITY[m.group(2)]


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_resources(kubectl, rel):
    spec = pod_spec(render(kubectl, rel))
    for c in spec["containers"] + spec.get("initContainers", []):
        res = c["resources"]
        for r in ("cpu", "memory"):
            req, lim = quantity(res["requests"][r]), quantity(res["limits"][r])
            assert 0 < req <= lim, f"{c['name']} {r}: {req} > {lim}"
    res = leaderd_container(spec)["resources"]
    assert quantity(res["limits"]["cpu"]) <= 0.1
    assert quantity(res["limits"]["memory"]) <= 64 * 2**20


@pytest.mark.parametrize("rel", WITH_CONFIG)
def test_socket_in_shared_emptydir(kubectl, rel):
    docs = render(kubectl, rel)
    spec = pod_spec(docs)
    sock = leaderd_config(docs)["listen"]["unix"]
    assert sock, "the example must enable the unix socket"
    sockdir = sock.rsplit("/", 1)[0]
    ld = leaderd_container(spec)

    def vol_at(c):
        for m in c.get("volumeMounts", []):
            if m["mountPath"].rstrip("/") == sockdir:
                return m
        return None
    m = vol_at(ld)
    assert m is not None and not m.get("readOnly"), \
        f"{sockdir} is not a writable mount in leaderd"
    vol = [v for v in spec["volumes"] if v["name"] == m["name"]][0]
    assert "emptyDir" in vol
    apps = app_containers(spec)
    assert apps and all(vol_at(a) and vol_at(a)["name"] == m["name"]
        for a in apps), "the app does not mount the socket's emptyDir"
    # The socket is mode 0660: the app needs leaderd's uid or the
    # socket's group.  With fsGroup the emptyDir is setgid to it, so the
    # socket gets that group, and every container has it as well.
    pod_sc = spec.get("securityContext", {})
    ld_sc = ld["securityContext"]
    fs = pod_sc.get("fsGroup")
    sock_gid = fs if fs is not None else ld_sc.get("runAsGroup")
    for a in apps:
        a_sc = a.get("securityContext", {})
        gids = {a_sc.get("runAsGroup", pod_sc.get("runAsGroup")), fs,
            *pod_sc.get("supplementalGroups", [])}
        same_uid = a_sc.get("runAsUser", pod_sc.get("runAsUser")) == \
            ld_sc.get("runAsUser", pod_sc.get("runAsUser"))
        assert same_uid or (sock_gid is not None and sock_gid in gids), \
            f"{a['name']} could not connect to the 0660 socket"


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_token_reaches_leaderd_only(kubectl, rel):
    docs = render(kubectl, rel)
    spec = pod_spec(docs)
    sa = one(docs, "ServiceAccount")
    automount = spec.get("automountServiceAccountToken",
        sa.get("automountServiceAccountToken", True))
    assert automount is False, "the app would get leaderd's token too"
    ld = leaderd_container(spec)
    mounts = [m for m in ld["volumeMounts"] if m["mountPath"] == SA_MOUNT]
    assert len(mounts) == 1 and mounts[0].get("readOnly") is True
    vol = [v for v in spec["volumes"] if v["name"] == mounts[0]["name"]][0]
    sources = vol["projected"]["sources"]
    paths = set()
    for s in sources:
        if "serviceAccountToken" in s:
            paths.add(s["serviceAccountToken"]["path"])
        for kind in ("configMap", "downwardAPI"):
            for item in s.get(kind, {}).get("items", []):
                paths.add(item["path"])
    assert paths == {"token", "ca.crt", "namespace"}
    for a in app_containers(spec):
        assert all(m["name"] != vol["name"]
            for m in a.get("volumeMounts", [])), a["name"]


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_configmap_volumes_resolve(kubectl, rel):
    docs = render(kubectl, rel)
    names = {d["metadata"]["name"] for d in objects(docs, "ConfigMap")}
    names.add("kube-root-ca.crt")  # published in every namespace
    spec = pod_spec(docs)
    for v in spec["volumes"]:
        refs = [v["configMap"]["name"]] if "configMap" in v else []
        for s in v.get("projected", {}).get("sources", []):
            if "configMap" in s:
                refs.append(s["configMap"]["name"])
        for r in refs:
            assert r in names, f"volume {v['name']} names missing {r}"
    mounted = {m["name"] for c in spec["containers"] +
        spec.get("initContainers", []) for m in c.get("volumeMounts", [])}
    assert mounted <= {v["name"] for v in spec["volumes"]}


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_pdb_and_replicas(kubectl, rel):
    docs = render(kubectl, rel)
    dep, pdb = one(docs, "Deployment"), one(docs, "PodDisruptionBudget")
    assert dep["spec"]["replicas"] == 3
    labels = dep["spec"]["template"]["metadata"]["labels"]
    sel = pdb["spec"]["selector"]["matchLabels"]
    assert sel and all(labels.get(k) == v for k, v in sel.items())
    assert sel == dep["spec"]["selector"]["matchLabels"]
    s = pdb["spec"]
    assert s.get("maxUnavailable") == 1 or s.get("minAvailable") == 2


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_grace_period_covers_release(kubectl, rel):
    docs = render(kubectl, rel)
    cfg = leaderd_config(docs) or {}
    timeout = duration_s(cfg.get("kubernetes", {}).get("request_timeout",
        "5s"))
    # leaderd needs up to shutdown_timeout to stop and hand back the
    # lease: unset, 5s plus 2 x request_timeout with the pod label.
    budget = duration_s(cfg.get("shutdown_timeout", "5s"))
    label = cfg.get("actions", {}).get("label", {}).get("enabled")
    if "shutdown_timeout" not in cfg and label:
        budget += 2 * timeout
    grace = pod_spec(docs)["terminationGracePeriodSeconds"]
    assert grace >= budget + 5


@pytest.mark.parametrize("rel", WITH_CONFIG)
def test_example_timings_follow_the_recommendation(kubectl, rel):
    """The recommendation of docs/operations.md, "Tuning durations",
    which the example config follows:
    lease_duration > renew_deadline + retry_period + request_timeout."""
    cfg = leaderd_config(render(kubectl, rel))
    lease, renew, retry = (duration_s(cfg[k]) for k in
        ("lease_duration", "renew_deadline", "retry_period"))
    timeout = duration_s(cfg["kubernetes"]["request_timeout"])
    assert lease > renew + retry + timeout
    assert renew > 1.2 * retry and timeout < renew


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_image(kubectl, rel):
    spec = pod_spec(render(kubectl, rel))
    version = re.search(r"^VERSION\s*\?=\s*(\S+)",
        (ROOT / "Makefile").read_text(), re.M).group(1)
    assert leaderd_container(spec)["image"] == f"{IMAGE}:{version}"
    for c in spec["containers"] + spec.get("initContainers", []):
        assert ":" in c["image"] and not c["image"].endswith(":latest")


def test_base_sidecar_is_a_plain_container(kubectl):
    spec = pod_spec(render(kubectl, "deploy/base"))
    assert leaderd_container(spec) in spec["containers"]
    assert not spec.get("initContainers")


def test_native_sidecar(kubectl):
    docs = render(kubectl, "deploy/native-sidecar")
    spec = pod_spec(docs)
    init = spec["initContainers"]
    ld = leaderd_container(spec)
    assert ld in init and ld not in spec["containers"]
    assert ld["restartPolicy"] == "Always"
    assert ld["startupProbe"]["httpGet"]["path"] == "/healthz"
    assert [c["name"] for c in spec["containers"]] == \
        [c["name"] for c in app_containers(spec)] and spec["containers"]
    # Everything else about leaderd is the base's.
    base = leaderd_container(pod_spec(render(kubectl, "deploy/base")))
    same = {k: v for k, v in ld.items()
        if k not in ("restartPolicy", "startupProbe")}
    assert same == base


def test_migrate_leader_elector(kubectl):
    docs = render(kubectl, "deploy/migrate-leader-elector")
    spec = pod_spec(docs)
    ld = leaderd_container(spec)
    # The classic's own defaults (--compat=classic): no
    # --election-namespace, so the lock is where the old pods' is,
    # Endpoints default/example (test/integration/test_migrate_overlay.py
    # runs these arguments beside old pods outside "default").
    assert ld["args"] == ["--compat=classic", "--election=example",
        "--lock-type=endpointsleases", "--http=localhost:4040",
        "--probes=0.0.0.0:4041", "--id=$(POD_NAME)"]
    # The RBAC is where the lock is.
    role, rb = one(docs, "Role"), one(docs, "RoleBinding")
    assert role["metadata"]["namespace"] == "default"
    assert rb["metadata"]["namespace"] == "default"
    assert rb["subjects"][0]["namespace"] == "default"
    rules = role["rules"]
    assert rules[0]["resourceNames"] == ["example"]
    assert {"apiGroups": [""], "resources": ["endpoints"],
        "resourceNames": ["example"], "verbs": ["get", "update"]} in rules
    # Old and new pods share the election through the Endpoints object
    # (the MultiLock's primary): an ordinary rolling update is safe.
    strategy = one(docs, "Deployment")["spec"]["strategy"]
    assert strategy["type"] == "RollingUpdate"
    assert strategy == one(render(kubectl, "deploy/base"),
        "Deployment")["spec"]["strategy"]
    assert not objects(docs, "ConfigMap")
    # The app asks GET / on localhost:4040, the classic way.
    script = " ".join(app_containers(spec)[0]["args"])
    assert "http://localhost:4040/" in script


@pytest.mark.parametrize("rel", KUSTOMIZATIONS)
def test_leaderd_accepts_rendered_config(kubectl, leaderd, rel, tmp_path):
    """Run `leaderd -n` with the container's args, env and config file."""
    docs = render(kubectl, rel)
    spec = pod_spec(docs)
    c = leaderd_container(spec)
    env = {"PATH": "/usr/bin:/bin", "POD_NAME": "leaderd-example-7d4b9-x2x9z",
        "POD_NAMESPACE": "leaderd-test", "POD_IP": "10.244.1.7"}
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = e["value"]
    args = [k8s_expand(a, env) for a in c.get("args", [])]
    # Lay the ConfigMap volumes out under tmp_path, as the kubelet would.
    for m in c.get("volumeMounts", []):
        vol = [v for v in spec["volumes"] if v["name"] == m["name"]][0]
        if "configMap" not in vol:
            continue
        cm = [d for d in objects(docs, "ConfigMap")
            if d["metadata"]["name"] == vol["configMap"]["name"]][0]
        where = tmp_path / m["mountPath"].lstrip("/")
        where.mkdir(parents=True)
        for key, text in cm["data"].items():
            (where / key).write_text(text)
        args = [str(tmp_path) + a if a.startswith(m["mountPath"] + "/")
            else a for a in args]
    proc = subprocess.run([str(leaderd), "-n", *args], env=env,
        capture_output=True, text=True, timeout=10)
    assert proc.returncode == 0 and "configuration OK" in proc.stdout, \
        f"leaderd -n {' '.join(args)}: exit {proc.returncode}\n" \
        f"{proc.stdout}{proc.stderr}"


def test_k8s_expand():
    env = {"POD_NAME": "p"}
    assert k8s_expand("--id=$(POD_NAME)", env) == "--id=p"
    assert k8s_expand("$(UNSET) $$(POD_NAME)", env) == "$(UNSET) $(POD_NAME)"


def test_leader_service(kubectl):
    """deploy/leader-service: a Service selecting the pods of the
    Deployment that leaderd labels leader, and leaderd configured to
    keep that label on its own pod (named by the downward API)."""
    docs = render(kubectl, "deploy/leader-service")
    svc = one(docs, "Service")
    dep = one(docs, "Deployment")
    tmpl = dep["spec"]["template"]["metadata"]["labels"]
    sel = svc["spec"]["selector"]
    assert sel.get("leaderd.io/role") == "leader"
    assert {k: v for k, v in sel.items() if k != "leaderd.io/role"} \
        .items() <= tmpl.items(), (sel, tmpl)
    # The label is leaderd's to set: never part of the template or of the
    # Deployment's selector (it would orphan the pods).
    assert "leaderd.io/role" not in tmpl
    assert "leaderd.io/role" not in dep["spec"]["selector"]["matchLabels"]
    cfg = leaderd_config(docs)
    assert cfg["actions"]["label"]["enabled"] is True
    assert cfg["actions"]["label"].get("key", "leaderd.io/role") == \
        "leaderd.io/role"
    spec = pod_spec(docs)
    env = {e["name"]: e for e in leaderd_container(spec)["env"]}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == \
        "metadata.name"
    # The Service's port reaches a port the leader's pod exposes.
    ports = {p["name"] for c in spec["containers"] +
             spec.get("initContainers", []) for p in c.get("ports", [])}
    for p in svc["spec"]["ports"]:
        assert p["targetPort"] in ports or isinstance(p["targetPort"], int)
    # Everything else is the base's.
    base = leaderd_container(pod_spec(render(kubectl, "deploy/base")))
    assert leaderd_container(spec) == base


def test_leader_endpoints(kubectl):
    """deploy/leader-endpoints: a selectorless Service, leaderd keeping
    its EndpointSlice on the leader's pod IP (downward API), the slice's
    port named and numbered as the Service's."""
    docs = render(kubectl, "deploy/leader-endpoints")
    svc = one(docs, "Service")
    assert "selector" not in svc["spec"], "the Service must be selectorless"
    cfg = leaderd_config(docs)["actions"]["endpoints"]
    assert cfg["service"] == svc["metadata"]["name"]
    assert not cfg.get("legacy", False)
    [port] = svc["spec"]["ports"]
    assert cfg["port"] == port["targetPort"]
    assert cfg.get("port_name", "") == port.get("name", "")
    spec = pod_spec(docs)
    env = {e["name"]: e for e in leaderd_container(spec)["env"]}
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == \
        "status.podIP"
    assert "label" not in leaderd_config(docs)["actions"]
    role = one(docs, "Role")
    slice_rules = [r for r in role["rules"]
                   if r["resources"] == ["endpointslices"]]
    assert all(r["apiGroups"] == ["discovery.k8s.io"] for r in slice_rules)
    assert {v for r in slice_rules for v in r["verbs"]} == \
        {"get", "create", "update", "delete"}


def test_flowschema_covers_every_lease_verb_of_every_variant(kubectl):
    """deploy/flowschema/ (cluster-scoped, applied on its own) maps the base's ServiceAccount to the priority level
    leader-election, ahead of the default "service-accounts" FlowSchema,
    for every verb any variant's Role grants on Leases."""
    docs = render(kubectl, "deploy/flowschema")
    assert [d["kind"] for d in docs] == ["FlowSchema"]
    fs = docs[0]
    spec = fs["spec"]
    assert spec["priorityLevelConfiguration"]["name"] == "leader-election"
    # Behind the control plane's own electors (system-leader-election,
    # 100), ahead of every default FlowSchema a ServiceAccount meets.
    assert 100 < spec["matchingPrecedence"] < 900
    sa = one(render(kubectl, "deploy/base"), "ServiceAccount")
    (rule,) = spec["rules"]
    assert rule["subjects"] == [{"kind": "ServiceAccount", "serviceAccount": {
        "name": sa["metadata"]["name"], "namespace": "default"}}]
    assert "nonResourceRules" not in rule
    (rr,) = rule["resourceRules"]
    assert (rr["apiGroups"], rr["resources"]) == (["coordination.k8s.io"],
                                                  ["leases"])
    verbs = set()
    for rel in KUSTOMIZATIONS:
        for r in one(render(kubectl, rel), "Role")["rules"]:
            if "coordination.k8s.io" in r["apiGroups"] and \
                    "leases" in r["resources"]:
                verbs |= set(r["verbs"])
    assert verbs <= set(rr["verbs"]), \
        "Lease verbs the FlowSchema leaves at low priority: %s" % sorted(
            verbs - set(rr["verbs"]))
