"""The doctors on the real kube-apiserver, with RBAC on: `kubectl leaderd
doctor LEASE` finds a Role missing update for the candidates' service
account (by SubjectAccessReview, the account found through the pod the
holder names), a stale Lease, and a preferredHolder naming a dead
identity; `leaderd doctor`, with the instance's own credentials, finds
the verb its Role lacks (SelfSubjectAccessReview).  Each fault is shown
found, then not found once it is fixed.

These run on the harness with Coordinated Leader Election on
(cle_cluster): with the gate off, the API server drops a Lease's
strategy and preferredHolder."""

import datetime
import os
import subprocess
import uuid

import pytest

import e2elib as E


def microtime(ago):
    t = datetime.datetime.now(datetime.timezone.utc) - \
        datetime.timedelta(seconds=ago)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def name(prefix):
    return "doc-%s-%s" % (prefix, uuid.uuid4().hex[:6])


def plugin_exe():
    """leaderd as kubectl-leaderd (argv[0])."""
    d = os.path.join(E.WORK, "plugin-bin")
    exe = os.path.join(d, "kubectl-leaderd")
    if not os.path.exists(exe):
        os.makedirs(d, exist_ok=True)
        os.symlink(E.LEADERD, exe)
    return exe


def kdoctor(c, *args):
    p = subprocess.run([plugin_exe(), "doctor"] + list(args) + [
        "--kubeconfig", c.admin.kubeconfig, "-n", c.namespace],
        capture_output=True, text=True, timeout=60,
        env={k: v for k, v in os.environ.items() if k != "KUBECONFIG"})
    return p


def lines(out, word, check, words):
    return [ln for ln in out.splitlines()
            if ln.startswith("%-4s  %s: " % (word, check)) and words in ln]


def lease_rules(lease, verbs):
    return [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
             "resourceNames": [lease], "verbs": verbs},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
             "verbs": ["create"]},
            {"apiGroups": [""], "resources": ["events"],
             "verbs": ["create"]}]


def create_lease(c, lease, spec):
    c.admin.apply({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                   "metadata": {"name": lease}, "spec": spec})


def candidate_pod(c, pod, sa):
    """A pod (never scheduled: the harness has no nodes) of account sa."""
    c.admin.apply({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": pod},
                   "spec": {"serviceAccountName": sa,
                            "automountServiceAccountToken": False,
                            "containers": [{"name": "app",
                                            "image": "leaderd:e2e"}]}})


def test_kubectl_doctor_role_without_update(cle_cluster):
    c = cle_cluster
    lease, sa, pod = name("rbac"), name("sa"), name("pod")
    c.admin.run("create", "serviceaccount", sa)
    subject = {"kind": "ServiceAccount", "name": sa,
               "namespace": c.namespace}
    c.bind(lease, lease_rules(lease, ["get", "watch"]), subject)
    candidate_pod(c, pod, sa)
    create_lease(c, lease, {"holderIdentity": pod,
                            "leaseDurationSeconds": 600,
                            "acquireTime": microtime(0),
                            "renewTime": microtime(0)})
    user = "system:serviceaccount:%s:%s" % (c.namespace, sa)
    E.wait_for(lambda: c.admin.run("auth", "can-i", "get", "leases/" + lease,
                                   "--as", user, check=False)
               .stdout.strip() == "yes", 15, interval=0.5, what="RBAC")

    p = kdoctor(c, lease)
    assert p.returncode == 1, p.stdout + p.stderr
    assert lines(p.stdout, "FAIL", "access", "service account %s/%s (pods "
                 "%s) may not update leases.coordination.k8s.io/%s in "
                 "namespace %s" % (c.namespace, sa, pod, lease,
                                   c.namespace)), p.stdout
    assert lines(p.stdout, "ok", "access", "may get leases")
    assert lines(p.stdout, "ok", "pods", "holder %s: pod %s/%s exists" %
                 (pod, c.namespace, pod))
    assert "      fix: add verb \"update\" on resource \"leases\"" in p.stdout

    c.bind(lease, lease_rules(lease, ["get", "watch", "update"]), subject)
    E.wait_for(lambda: c.admin.run("auth", "can-i", "update",
                                   "leases/" + lease, "--as", user,
                                   check=False).stdout.strip() == "yes",
               15, interval=0.5, what="RBAC")
    p = kdoctor(c, lease)
    assert p.returncode == 0, p.stdout + p.stderr
    assert lines(p.stdout, "ok", "access", "may update leases")


def test_kubectl_doctor_stale_lease(cle_cluster):
    c = cle_cluster
    lease = name("stale")
    create_lease(c, lease, {"holderIdentity": "gone-0",
                            "leaseDurationSeconds": 15,
                            "acquireTime": microtime(120),
                            "renewTime": microtime(120)})
    p = kdoctor(c, lease)
    assert p.returncode == 1, p.stdout + p.stderr
    assert lines(p.stdout, "FAIL", "lease", "lease %s/%s is stale: gone-0 "
                 "renewed it 120 s ago, past its 15 s duration" %
                 (c.namespace, lease)) or \
        lines(p.stdout, "FAIL", "lease", "renewed it 121 s ago"), p.stdout
    assert lines(p.stdout, "warn", "pods", "holder gone-0: no pod")

    c.admin.run("patch", "lease", lease, "--type", "merge", "-p",
                '{"spec":{"renewTime":"%s"}}' % microtime(0))
    p = kdoctor(c, lease)
    assert not lines(p.stdout, "FAIL", "lease", ""), p.stdout


def test_kubectl_doctor_dead_preferred_holder(cle_cluster):
    c = cle_cluster
    lease, pod, sa = name("pref"), name("pod"), name("sa")
    c.admin.run("create", "serviceaccount", sa)
    candidate_pod(c, pod, sa)
    create_lease(c, lease, {"holderIdentity": pod,
                            "leaseDurationSeconds": 600,
                            "acquireTime": microtime(0),
                            "renewTime": microtime(0),
                            "strategy": "OldestEmulationVersion",
                            "preferredHolder": "dead-7f9c"})
    got = c.admin.get_lease(lease)["spec"]
    assert got.get("preferredHolder") == "dead-7f9c", got
    p = kdoctor(c, lease)
    assert p.returncode == 1, p.stdout + p.stderr
    assert lines(p.stdout, "FAIL", "preferred", "lease %s/%s prefers holder "
                 "dead-7f9c" % (c.namespace, lease)), p.stdout
    assert lines(p.stdout, "warn", "pods", "preferredHolder dead-7f9c: no "
                 "pod")

    c.admin.run("patch", "lease", lease, "--type", "merge", "-p",
                '{"spec":{"preferredHolder":"%s"}}' % pod)
    p = kdoctor(c, lease)
    assert not lines(p.stdout, "FAIL", "preferred", ""), p.stdout


def test_pod_doctor_finds_the_missing_verb(cle_cluster):
    """leaderd doctor with the instance's own credentials and flags."""
    c = cle_cluster
    lease = name("pod")
    kc, subject = c.new_user("doc")
    c.bind(lease, lease_rules(lease, ["get", "watch"]), subject)
    E.wait_for(lambda: c.can_i(kc, "get", "leases", lease), 15,
               interval=0.5, what="RBAC")

    def doctor():
        return subprocess.run([
            E.LEADERD, "--kubeconfig", kc, "--election", lease,
            "--election-namespace", c.namespace, "--id", "inst-0",
            "--lease-duration", "%ds" % E.LD,
            "--renew-deadline", "%ds" % E.RD,
            "--retry-period", "%ds" % E.RP, "doctor"],
            capture_output=True, text=True, timeout=60,
            env=dict(os.environ, POD_NAMESPACE=c.namespace))

    p = doctor()
    assert p.returncode == 1, p.stdout + p.stderr
    assert lines(p.stdout, "FAIL", "access", "this pod's service account "
                 "may not update leases.coordination.k8s.io/%s in namespace "
                 "%s" % (lease, c.namespace)), p.stdout
    assert "bound to %s" % subject["name"] in p.stdout
    assert lines(p.stdout, "ok", "token", "accepts the token")
    assert lines(p.stdout, "ok", "access", "may get leases")
    assert lines(p.stdout, "ok", "access", "may create events")

    c.bind(lease, lease_rules(lease, ["get", "watch", "update"]), subject)
    E.wait_for(lambda: c.can_i(kc, "update", "leases", lease), 15,
               interval=0.5, what="RBAC")
    p = doctor()
    assert p.returncode == 0, p.stdout + p.stderr
    assert lines(p.stdout, "ok", "access", "may update leases")
