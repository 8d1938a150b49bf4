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

What changes, so that replicas can run side by side on one host: ports
become free ports (nais's default metrics address, which naiserator
leaves in every pod's own network, too); the pod IPs of await's
replicas are 10.0.0.N, as the API server refuses a loopback address in
an Endpoints object; await's application image is a directory on PATH
with leaderd named k8s-await-election and a script for the command.
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
                 ports, extra_env=None, pod_ip="127.0.0.1"):
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
                     "status.podIP": pod_ip,
                     "spec.nodeName": "node-e2e"}[
                    e["valueFrom"]["fieldRef"]["fieldPath"]]
            env[e["name"]] = ports.get(e["name"], v)

        def expand(s):
            return re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1),
                          m.group(0)), s)
        def swap(s):
            """Each port at once, whole words only: a free port that
            happens to contain "4041" is not rewritten in turn."""
            if not ports:
                return s
            return re.sub(r"(?<!\w)(%s)(?!\w)" % "|".join(
                re.escape(k) for k in sorted(ports, key=len, reverse=True)),
                lambda m: ports[m.group(1)], s)
        self.argv = [swap(expand(a)) for a in container["command"] +
                     container.get("args", [])]
        # A pod's hostname is its name: a UTS namespace of its own.
        self.proc = E.Proc("manifest-%s" % name, [
            "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
            name] + self.argv, env=env)

    def stop(self):
        self.proc.stop()


def entrypoint(container, images=None):
    """The container's command if it has one; else the image's
    entrypoint: leaderd's variants' (oci.py VARIANTS; the Dockerfile's
    targets), or as images gives it for an application's image."""
    if "command" in container:
        return container["command"]
    image = container.get("image", "")
    if image.startswith(IMAGE):
        tag = image[len(IMAGE):]
        peer = tag.split("-", 1)[1] if "-" in tag else ""
        return [E.LEADERD] + (["--compat=" + peer] if peer else [])
    return images[image]


def workload(objs, container_name, images=None):
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
                c = dict(c, command=entrypoint(c, images))
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


def run_replicas(cluster, manifest, container, n, ports_for, extra_rules,
                 extra_env_for=None, pod_ip_for=None, images=None):
    """n replicas named CONTAINER-i: [(Replica, its ports)]; replica i
    with extra_env_for(i) and the pod IP pod_ip_for(i) if given."""
    objs = objects(os.path.join(MANIFESTS, manifest), cluster)
    ensure_namespaces(cluster, objs)
    spec, c, ns = workload(objs, container, images)
    token, subject = token_for(cluster)
    grant(cluster, objs, ns, extra_rules, subject)
    out = []
    for i in range(n):
        ports = ports_for(i)
        out.append((Replica(cluster, spec, c, "%s-%d" % (container, i), ns,
                            token, ports,
                            extra_env_for(i) if extra_env_for else None,
                            pod_ip_for(i) if pod_ip_for else "127.0.0.1"),
                    ports))
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


NAIS_RESULT = re.compile(rb'^\{"name":"([^"]+)","last_update":'
                         rb'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"\}$')


def nais_name(port):
    """nais's GET /: the name in {"name":...,"last_update":...}, or
    None (no answer yet, or {} before the first result)."""
    r = get(port)
    m = r and r[0] == 200 and NAIS_RESULT.match(r[2])
    return m.group(1).decode() if m else None


def sample(port, metric):
    """The value of an unlabelled metric on GET /metrics, or None."""
    r = get(port, "/metrics")
    assert r and r[0] == 200, r
    m = re.search(rb"^%s (\S+)$" % metric.encode(), r[2], re.M)
    return float(m.group(1)) if m else None


def test_nais_naiserator(cluster):
    """naiserator's injection (nais-naiserator.yaml): the initContainer
    elector with --election=myapplication
    --election-namespace=mynamespace --http=localhost:4040
    --probe-address=0.0.0.0:4041 and ELECTOR_LOG_FORMAT=json, under
    the nais variant, as the ServiceAccount myapplication bound to the
    ClusterRole elector (no update on leases), three replicas with
    their Pod objects: one creates the Lease, owned by its Pod, with no
    leaseDurationSeconds; every replica names it on GET /; the
    startupProbe's /healthz answers ok.  Leader for life: a killed
    leader's Lease stands past any lease duration and nobody takes
    over; once it is deleted (the garbage collector's part when the Pod
    goes), another replica creates it and leads."""
    ns, app = "mynamespace", "myapplication"
    names = ["elector-%d" % i for i in range(3)]
    # nais reads pods/<hostname> for the Lease's ownerReference.
    ensure_namespaces(cluster, objects(
        os.path.join(MANIFESTS, "nais-naiserator.yaml"), cluster))
    for n in names:
        cluster.admin.run("apply", "-f", "-", ns=False, input=json.dumps({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": n, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "x"}]}}))
    uid = {n: cluster.admin.json("get", "pod", n, "-n", ns, ns=False)[
        "metadata"]["uid"] for n in names}
    # naiserator leaves --metrics-address at its default, 0.0.0.0:29090,
    # which each pod binds in a network namespace of its own; these
    # replicas share the host's, so each has its own port (the one
    # setting not in the manifest).
    metrics = [E.free_port() for _ in names]
    reps = run_replicas(
        cluster, "nais-naiserator.yaml", "elector", 3,
        lambda i: {"4040": str(E.free_port()), "4041": str(E.free_port())},
        None, extra_env_for=lambda i: {
            "ELECTOR_METRICS_ADDRESS": "127.0.0.1:%d" % metrics[i]})
    try:
        def lease():
            p = cluster.admin.run("get", "lease", app, "-n", ns, "-o",
                                  "json", check=False, ns=False)
            return json.loads(p.stdout) if p.returncode == 0 else None

        def named():
            """The one name every live replica gives, else None."""
            seen = {nais_name(int(p["4040"])) for r, p in reps
                    if r.proc.alive()}
            return seen.pop() if len(seen) == 1 and None not in seen \
                else None
        lead = E.wait_for(named, 30, what="one leader named by every pod")
        assert lead in names
        rec = lease()
        assert rec["spec"]["holderIdentity"] == lead
        assert rec["metadata"]["ownerReferences"] == [
            {"apiVersion": "v1", "kind": "Pod", "name": lead,
             "uid": uid[lead]}], rec["metadata"]
        assert "leaseDurationSeconds" not in rec["spec"], rec["spec"]
        assert "renewTime" not in rec["spec"], rec["spec"]
        for r, p in reps:
            # kubelet's startupProbe: httpGet /healthz on 4041.
            st, _, body = get(int(p["4041"]), "/healthz")
            assert (st, body) == (200, b"ok"), (r.name, st, body)
        # nais counts an election won when its create succeeds.
        won = {r.name: sample(m, "elector_elections_won")
               for (r, _), m in zip(reps, metrics)}
        assert won == {n: 1.0 if n == lead else None for n in names}, won

        victim = [r for r, _ in reps if r.name == lead][0]
        rv = rec["metadata"]["resourceVersion"]
        victim.proc.kill9()
        # Past leaderd's lease duration (15s) and a retry (2s, jittered)
        # since the followers last saw the record: nobody takes over.
        time.sleep(15 + 2.2 * 2 + 1)
        assert lease()["metadata"]["resourceVersion"] == rv
        assert named() == lead
        for (r, p), m in zip(reps, metrics):
            if r.proc.alive():
                # Nor does any believe it leads (leaderd's own /leader).
                assert E.http_get_json(int(p["4040"]))[1][
                    "is_leader"] is False, r.name
                assert sample(m, "elector_elections_won") is None
                # Nor tried to: the RBAC has no update, a try would warn.
                bad = [l for l in r.proc.text().splitlines()
                       if json.loads(l)["level"] not in ("info", "debug")]
                assert bad == [], (r.name, bad)

        cluster.admin.run("delete", "lease", app, "-n", ns, ns=False)
        def another():
            n = named()
            return n if n != lead else None
        new = E.wait_for(another, 15, what="another pod to create the Lease")
        rec = lease()
        assert rec["spec"]["holderIdentity"] == new
        assert rec["metadata"]["ownerReferences"] == [
            {"apiVersion": "v1", "kind": "Pod", "name": new,
             "uid": uid[new]}], rec["metadata"]
        # ELECTOR_LOG_FORMAT=json: JSON lines (leaderd's fields).
        for r, _ in reps:
            for line in r.proc.text().splitlines():
                json.loads(line)
    finally:
        for r, _ in reps:
            r.stop()
        cluster.admin.run("delete", "lease", app, "-n", ns,
                          "--ignore-not-found", ns=False, check=False)
        cluster.admin.run("delete", "pod", *names, "-n", ns,
                          "--ignore-not-found", "--wait=false", ns=False,
                          check=False)


# The await example's command: notes which replica runs it (a file named
# after the pod, holding its pid), then serves on as a server would.  exec
# keeps the pid noted: the process leaderd started and watches.
SINGLETON = """#!/bin/sh
echo $$ > "%s/$HOSTNAME"
exec sleep 3600
"""


def dead(pid):
    """Whether pid is gone (or a zombie nobody reaps yet)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_await_singleton_service(cluster):
    """k8s-await-election's singleton-service.yml: the application's
    image has k8s-await-election as its entrypoint, here leaderd under
    that name (argv[0] selects await), args [my-singleton-server], the
    manifest's K8S_AWAIT_ELECTION_* env, as the ServiceAccount k8s-await
    bound to the Role get-leases, three replicas beside the selectorless
    Service my-service: one runs the command, the Endpoints my-service
    names that pod (POD_IP, NODE_NAME, the ports of PORTS_JSON), the
    status endpoint answers {"status": "ok"} on every path; a leader
    killed with SIGKILL takes its command with it, and another replica
    runs the command within the lease duration (15s), a retry (2s,
    jittered) and slack."""
    path = os.path.join(MANIFESTS, "await-singleton-service.yaml")
    objs = objects(path, cluster)
    ensure_namespaces(cluster, objs)
    svc = [o for o in objs if o["kind"] == "Service"][0]
    cluster.admin.run("apply", "-n", "default", "-f", "-", ns=False,
                      input=json.dumps(svc))
    # The image: k8s-await-election (leaderd) and my-singleton-server.
    image = os.path.join(E.WORK, "await-image-%s" % os.urandom(3).hex())
    marks = os.path.join(image, "ran")
    os.makedirs(marks)
    os.symlink(E.LEADERD, os.path.join(image, "k8s-await-election"))
    server = os.path.join(image, "my-singleton-server")
    with open(server, "w") as f:
        f.write(SINGLETON % marks)
    os.chmod(server, 0o755)
    ips = ["10.0.0.%d" % (i + 1) for i in range(3)]
    reps = run_replicas(
        cluster, "await-singleton-service.yaml", "my-server", 3,
        lambda i: {"K8S_AWAIT_ELECTION_STATUS_ENDPOINT":
                   ":%d" % E.free_port()}, None,
        extra_env_for=lambda i: {
            "PATH": image + ":" + os.environ.get("PATH", "")},
        pod_ip_for=lambda i: ips[i],
        images={"my-server": [os.path.join(image, "k8s-await-election")]})
    ip = {r.name: a for (r, _), a in zip(reps, ips)}

    def ran():
        """{replica: pid of the command it ran}."""
        out = {}
        for n in os.listdir(marks):
            with open(os.path.join(marks, n)) as f:
                t = f.read().strip()
            if t:
                out[n] = int(t)
        return out

    def endpoints():
        p = cluster.admin.run("get", "endpoints", "my-service", "-n",
                              "default", "-o", "json", check=False,
                              ns=False)
        return json.loads(p.stdout).get("subsets") \
            if p.returncode == 0 else None

    def subsets(name):
        return [{"addresses": [{"ip": ip[name], "nodeName": "node-e2e"}],
                 "ports": [{"name": "my-port", "port": 1024,
                            "protocol": "TCP"}]}]

    def holder():
        p = cluster.admin.run("get", "lease", "my-server", "-n", "default",
                              "-o", "json", check=False, ns=False)
        return json.loads(p.stdout)["spec"] if p.returncode == 0 else None
    try:
        lead = E.wait_for(lambda: len(ran()) == 1 and list(ran())[0], 30,
                          what="one replica to run the command")
        spec = holder()
        assert spec["holderIdentity"] == lead, spec
        assert spec["leaseDurationSeconds"] == 15, spec
        # SERVICE_NAME: written before the command starts.
        assert endpoints() == subsets(lead), endpoints()
        for r, p in reps:
            port = int(p["K8S_AWAIT_ELECTION_STATUS_ENDPOINT"][1:])
            for q in ("/", "/healthz", "/leader", "/x/y?z=1"):
                E.wait_for(lambda: get(port, q), 10,
                           what="%s's status endpoint" % r.name)
                st, _, body = get(port, q)
                assert (st, body) == (200, b'{"status": "ok"}'), \
                    (r.name, q, st, body)
        assert list(ran()) == [lead], ran()

        old = ran()[lead]
        victim = [r for r, _ in reps if r.name == lead][0]
        victim.proc.kill9()
        t_kill = time.monotonic()
        # Its command dies with it: leaderd's child gets SIGKILL when
        # leaderd dies (PR_SET_PDEATHSIG), as a container's processes
        # all die with it.
        E.wait_for(lambda: dead(old), 5, what="the old command to die")
        new = E.wait_for(lambda: [n for n in ran() if n != lead], 15 +
                         2.2 * 2 + 3, what="another replica to run it")
        took = time.monotonic() - t_kill
        assert len(new) == 1, ran()
        assert holder()["holderIdentity"] == new[0]
        E.wait_for(lambda: endpoints() == subsets(new[0]), 5,
                   what="the Endpoints to name the new leader")
        assert not dead(ran()[new[0]])
        print("await: the command ran again %.1fs after the kill" % took)
    finally:
        for r, _ in reps:
            r.stop()
        # A command left running by a failed check: ours, still sleep.
        for pid in ran().values():
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    mine = f.read().startswith(b"sleep\0")
            except FileNotFoundError:
                mine = False
            if mine and not dead(pid):
                os.kill(pid, 9)
        for kind, name in (("lease", "my-server"),
                           ("endpoints", "my-service"),
                           ("service", "my-service")):
            cluster.admin.run("delete", kind, name, "-n", "default",
                              "--ignore-not-found", ns=False, check=False)
