"""The peer sidecars' own manifests, with only the image changed, on a
real kube-apiserver (test/compat/manifests/, each citing its source):

 - `kubectl apply --dry-run=server` accepts each one (schema,
   defaulting, admission);
 - each is then run as a kubelet would run it: the pod spec's container
   (the image variant's entrypoint, or the container's command, then its
   args, with $(VAR) expanded), its env (fieldRefs resolved for the
   replica), in-cluster credentials whose user holds exactly the RBAC the
   manifest brings (or, where it brings none, the RBAC the peer's users
   grant, docs/migrating.md), a few replicas side by side: one leads, as
   the peer's own clients read it, and another takes over when it dies.

The one change to the specs: ports become free ports, so that replicas
can run side by side on one host.
"""

import json
import os
import re
import time
import urllib.error
import urllib.request

import pytest

import e2elib as E

MANIFESTS = os.path.join(E.REPO, "test", "compat", "manifests")
IMAGE = "ghcr.io/leaderd/leaderd:"


def objects(path, cluster):
    """The manifest's objects, as kubectl reads them."""
    p = cluster.admin.run("create", "--dry-run=client", "-o", "json", "-f",
                          path, ns=False)
    # One JSON document per object, one after another.
    dec, text, out, i = json.JSONDecoder(), p.stdout, [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            return out
        o, i = dec.raw_decode(text, i)
        out += o["items"] if o.get("kind") == "List" else [o]


def ensure_namespaces(cluster, objs):
    """The manifest's namespaces, each with the ServiceAccount "default"
    that admission looks up for a pod (the harness runs no controller
    manager to make it)."""
    nss = {o["metadata"].get("namespace") or "default" for o in objs}
    for ns in sorted(nss):
        if ns != "default":
            cluster.admin.run("create", "namespace", ns, check=False,
                              ns=False)
        cluster.admin.run("create", "serviceaccount", "default", "-n", ns,
                          check=False, ns=False)


@pytest.mark.parametrize("name", sorted(
    f for f in os.listdir(MANIFESTS) if f.endswith(".yaml")))
def test_dry_run_server(cluster, name):
    path = os.path.join(MANIFESTS, name)
    ensure_namespaces(cluster, objects(path, cluster))
    p = cluster.admin.run("apply", "--dry-run=server", "-f",
                          path, check=False, ns=False, timeout=120)
    assert p.returncode == 0, "%s:\n%s%s" % (name, p.stdout, p.stderr)
    assert "(server dry run)" in p.stdout, p.stdout


class Replica:
    """One pod of a manifest's workload, run as a kubelet would: the
    container's process, with the pod's env and in-cluster
    credentials."""

    def __init__(self, cluster, spec, container, name, namespace, token,
                 ports, extra_env=None):
        self.name = name
        self.namespace = namespace
        self.sa = os.path.join(E.WORK, "sa-%s-%s" % (name, os.urandom(3)
                                                     .hex()))
        os.makedirs(self.sa)
        for f, text in (("token", token), ("namespace", namespace),
                        ("ca.crt", cluster.ca_pem)):
            with open(os.path.join(self.sa, f), "w") as fh:
                fh.write(text)
        host, port = re.match(r"https://([^:/]+):(\d+)",
                              cluster.server).groups()
        env = {"PATH": os.environ.get("PATH", ""), "HOSTNAME": name,
               "KUBERNETES_SERVICE_HOST": host,
               "KUBERNETES_SERVICE_PORT": port, "LEADERD_SA_DIR": self.sa}
        env.update(extra_env or {})
        for e in container.get("env", []):
            if "value" in e:
                v = e["value"]
            else:
                v = {"metadata.name": name, "metadata.namespace": namespace,
                     "status.podIP": "127.0.0.1",
                     "spec.nodeName": "node-e2e"}[
                    e["valueFrom"]["fieldRef"]["fieldPath"]]
            env[e["name"]] = ports.get(e["name"], v)

        def expand(s):
            return re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1),
                          m.group(0)), s)
        self.argv = [expand(a) for a in container["command"] +
                     container.get("args", [])]
        for old, new in ports.items():
            self.argv = [a.replace(old, new) for a in self.argv]
        # A pod's hostname is its name: a UTS namespace of its own.
        self.proc = E.Proc("manifest-%s" % name, [
            "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
            name] + self.argv, env=env)

    def stop(self):
        self.proc.stop()


def entrypoint(container):
    """The image's entrypoint for leaderd's variants (oci.py VARIANTS;
    the Dockerfile's targets), else the container's command."""
    image = container.get("image", "")
    if image.startswith(IMAGE):
        tag = image[len(IMAGE):]
        peer = tag.split("-", 1)[1] if "-" in tag else ""
        return [E.LEADERD] + (["--compat=" + peer] if peer else [])
    return container["command"]


def workload(objs, container_name):
    """(pod spec, container, namespace of the workload)."""
    for o in objs:
        if o["kind"] == "Pod":
            spec = o["spec"]
        elif o["kind"] == "Deployment":
            spec = o["spec"]["template"]["spec"]
        else:
            continue
        for c in spec.get("containers", []) + \
                spec.get("initContainers", []):
            if c["name"] == container_name:
                c = dict(c, command=entrypoint(c))
                return spec, c, o["metadata"].get("namespace", "default")
    raise AssertionError("no container %s" % container_name)


def grant(cluster, objs, namespace, extra_rules, subject):
    """Apply the manifest's RBAC for real, its RoleBindings naming our
    user instead of the pod's ServiceAccount; with extra_rules, a Role
    of them in namespace, bound too (a peer whose manifest brings
    none)."""
    for o in objs:
        if o["kind"] not in ("Role", "ClusterRole", "RoleBinding"):
            continue
        o = json.loads(json.dumps(o))
        if o["kind"] != "ClusterRole":
            o["metadata"].setdefault("namespace", namespace)
        if o["kind"] == "RoleBinding":
            o["subjects"] = [subject]
        cluster.admin.run("apply", "-f", "-", input=json.dumps(o),
                          ns=False)
    if extra_rules:
        name = "peer-%s" % os.urandom(3).hex()
        for o in ({"kind": "Role", "rules": extra_rules},
                  {"kind": "RoleBinding", "subjects": [subject],
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                               "kind": "Role", "name": name}}):
            o.update({"apiVersion": "rbac.authorization.k8s.io/v1",
                      "metadata": {"name": name, "namespace": namespace}})
            cluster.admin.run("apply", "-f", "-", input=json.dumps(o),
                              ns=False)


def token_for(cluster):
    """A harness user (name, token, RBAC subject) with no rights yet."""
    if cluster.mode != "harness":
        pytest.skip("needs the harness's static users")
    name, token = cluster.static_users.pop(0)
    return token, {"kind": "User", "name": name,
                   "apiGroup": "rbac.authorization.k8s.io"}


def get(port, path="/", timeout=1.0):
    """GET http://127.0.0.1:port/path: (status, headers, body) or None."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                    timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()
    except OSError:
        return None


def classic_name(port):
    """The classic's GET /: {"name":...}, or None."""
    r = get(port)
    return json.loads(r[2])["name"] if r and r[0] == 200 else None


def run_replicas(cluster, manifest, container, n, ports_for, extra_rules):
    objs = objects(os.path.join(MANIFESTS, manifest), cluster)
    ensure_namespaces(cluster, objs)
    spec, c, ns = workload(objs, container)
    token, subject = token_for(cluster)
    grant(cluster, objs, ns, extra_rules, subject)
    out = []
    for i in range(n):
        ports = ports_for(i)
        out.append((Replica(cluster, spec, c, "%s-%d" % (container, i), ns,
                            token, ports), ports))
    return out


def test_classic_nodejs_pod(cluster):
    """election/client/nodejs/pod.yaml: --election=example
    --http=localhost:4040 under the classic variant; the lock is the
    Endpoints default/example as the classic's, whatever namespace the
    pod runs in; server.js reads GET / name; a dead leader is
    replaced."""
    rules = [{"apiGroups": [""], "resources": ["endpoints"],
              "verbs": ["get", "create", "update"]}]
    reps = run_replicas(cluster, "classic-nodejs-pod.yaml", "elector", 3,
                        lambda i: {"4040": str(E.free_port())}, rules)
    try:
        def leaders():
            names = {classic_name(int(p["4040"])) for _, p in reps
                     if _.proc.alive()}
            return names.pop() if len(names) == 1 and "" not in names \
                and None not in names else None
        lead = E.wait_for(leaders, 30, what="one leader named by every pod")
        ep = cluster.admin.json("get", "endpoints", "example", "-n",
                                "default", ns=False)
        rec = json.loads(ep["metadata"]["annotations"][
            "control-plane.alpha.kubernetes.io/leader"])
        assert rec["holderIdentity"] == lead
        victim = [r for r, _ in reps if r.name == lead][0]
        victim.proc.kill9()
        E.wait_for(lambda: leaders() not in (None, lead), 10 + 2.2 * 2.5 + 5,
                   what="another pod to lead")
    finally:
        for r, _ in reps:
            r.stop()
        cluster.admin.run("delete", "endpoints", "example", "-n", "default",
                          "--ignore-not-found", ns=False, check=False)


def vapor_view(port):
    """vapor's GET /: (is_leader, leader), or None."""
    r = get(port)
    if not r or r[0] != 200:
        return None
    b = json.loads(r[2])
    return b["is_leader"], b["leader"]


def test_vapor_example(cluster):
    """vapor-ware's example.yaml: -election=example-election
    -http=localhost:4040 -ttl=3s -namespace=default -lock-type=configmaps
    under the vapor variant, three replicas: one says is_leader, all name
    it, the ConfigMap holds the record, the leader's Pod is labelled
    k8s-elector/status=leader; a dead leader is replaced."""
    rules = [{"apiGroups": [""], "resources": ["configmaps"],
              "verbs": ["get", "create", "update"]},
             {"apiGroups": [""], "resources": ["pods"],
              "verbs": ["get", "patch"]}]
    names = ["k8s-elector-%d" % i for i in range(3)]
    for n in names:
        cluster.admin.run("apply", "-f", "-", ns=False, input=json.dumps({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": n, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}))
    reps = run_replicas(cluster, "vapor-example.yaml", "k8s-elector", 3,
                        lambda i: {"4040": str(E.free_port())}, rules)
    try:
        def leader():
            views = [vapor_view(int(p["4040"])) for r, p in reps
                     if r.proc.alive()]
            if None in views or sum(v[0] for v in views) != 1:
                return None
            names_seen = {v[1] for v in views}
            return names_seen.pop() if len(names_seen) == 1 else None
        lead = E.wait_for(leader, 20, what="one vapor leader named by all")
        cm = cluster.admin.json("get", "configmap", "example-election",
                                "-n", "default", ns=False)
        rec = json.loads(cm["metadata"]["annotations"][
            "control-plane.alpha.kubernetes.io/leader"])
        assert rec["holderIdentity"] == lead and \
            rec["leaseDurationSeconds"] == 3, rec
        E.wait_for(lambda: cluster.admin.json(
            "get", "pod", lead, "-n", "default", ns=False)["metadata"]
            .get("labels", {}).get("k8s-elector/status") == "leader", 10,
            what="the leader's pod label")
        victim = [r for r, _ in reps if r.name == lead][0]
        victim.proc.kill9()
        E.wait_for(lambda: leader() not in (None, lead), 3 + 2.2 * 0.5 + 5,
                   what="another pod to lead")
    finally:
        for r, _ in reps:
            r.stop()
        cluster.admin.run("delete", "configmap", "example-election", "-n",
                          "default", "--ignore-not-found", ns=False,
                          check=False)
        cluster.admin.run("delete", "pod", *names, "-n", "default",
                          "--ignore-not-found", "--wait=false", ns=False,
                          check=False)
