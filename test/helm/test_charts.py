"""The Helm charts under deploy/helm/, rendered by the pinned helm
(test/helm/helm.mk builds it; `make helm-test` runs this file):

 - `helm lint --strict` passes on each chart, with its defaults and with
   every optional part turned on;
 - each case's render equals its golden file in test/helm/golden/
   (after a chart change: `make helm-golden`, then read the diff);
 - a bad value is refused by the chart's values.schema.json, and the
   message names the key;
 - the platform chart refuses a cluster older than Kubernetes 1.36;
 - leaderd -n accepts the leaderd.yaml each library-chart case renders.

The renders on a real kube-apiserver (dry-run, the policy's injection)
are test/e2e/test_inject.py.
"""

import difflib
import os
import shutil
import subprocess
import sys
import tempfile

import pytest
import yaml

REPO = os.environ.get("REPO") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
LEADERD = os.environ.get("LEADERD") or os.path.join(REPO, "leaderd")
HELM = os.environ.get("HELM") or os.path.join(REPO, "build", "helm", "bin",
                                               "helm")
SOURCE = os.path.join(REPO, "deploy", "helm")
# A copy of deploy/helm, where `helm dependency build` may write the
# example app's charts/ (the source tree stays as committed).
CHARTS = os.path.join(tempfile.mkdtemp(prefix="leaderd-helm-"), "helm")
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")

PLATFORM_ALL = ["--set", "rbac.namespaces={team-a,team-b}",
                "--set", "rbac.serviceAccounts[0].namespace=team-c",
                "--set", "rbac.serviceAccounts[0].name=worker",
                "--set", "rbac.nais=true",
                "--set", "podMonitor.enabled=true",
                "--set", "prometheusRule.enabled=true",
                "--set", "dashboard.enabled=true",
                "--set", "flowSchema.enabled=true"]

# name: (chart, extra helm template arguments)
CASES = {
    "example-app-native": ("example-app", []),
    "example-app-plain": ("example-app", [
        "--set", "leaderd-sidecar.native=false",
        "--set", "leaderd-sidecar.unixSocket=false",
        "--set", "leaderd-sidecar.appProbe=http://127.0.0.1:8080/ready",
        "--set", "leaderd-sidecar.leaseDuration=30s",
        "--set", "leaderd-sidecar.podMonitor.enabled=true"]),
    "example-app-shards": ("example-app", [
        "--set", "leaderd-sidecar.shards.group=work",
        "--set", "leaderd-sidecar.shards.count=8"]),
    "example-app-endpointsleases": ("example-app", [
        "--set", "leaderd-sidecar.lock.type=endpointsleases"]),
    "example-app-endpoints": ("example-app", [
        "--set", "leaderd-sidecar.lock.type=endpoints"]),
    "leaderd-default": ("leaderd", []),
    "leaderd-all": ("leaderd", PLATFORM_ALL),
}

# (chart, arguments, text the refusal must contain: the key's path)
BAD = [
    ("example-app", ["--set", "leaderd-sidecar.leaseDuration=15"],
     "/leaseDuration"),
    ("example-app", ["--set", "leaderd-sidecar.leaseDuration=fifteen"],
     "/leaseDuration"),
    ("example-app", ["--set", "leaderd-sidecar.lock.type=lease"],
     "/lock/type"),
    ("example-app", ["--set", "leaderd-sidecar.lock.name=My_Lease"],
     "/lock/name"),
    ("example-app", ["--set", "leaderd-sidecar.shards.count=0"],
     "/shards/count"),
    ("example-app", ["--set", "leaderd-sidecar.nativ=true"], "'nativ'"),
    ("example-app", ["--set", "leaderd-sidecar.appProbe=127.0.0.1:8080"],
     "/appProbe"),
    ("leaderd", ["--set", "injection.failurePolicy=Maybe"],
     "/injection/failurePolicy"),
    ("leaderd", ["--set", "injection.retryPeriod=2"],
     "/injection/retryPeriod"),
    ("leaderd", ["--set", "rbac.namespaces={Team_A}"], "/rbac/namespaces/0"),
    ("leaderd", ["--set", "rbac.serviceAccounts[0].name=worker"],
     "/rbac/serviceAccounts/0"),
    ("leaderd", ["--set", "injection.resources.limits.cpu=lots"],
     "/injection/resources/limits/cpu"),
    ("leaderd", ["--set", "image.tag=0.1.0'x"], "/image/tag"),
    ("leaderd", ["--set", "podMonitor.interval=30"], "/podMonitor/interval"),
    ("leaderd", ["--set", "prometheusRules.enabled=true"],
     "'prometheusRules'"),
]


def helm(*args, check=True):
    p = subprocess.run([HELM] + list(args), capture_output=True, text=True,
                       timeout=120)
    if check and p.returncode != 0:
        raise AssertionError("helm %s: exit %d\n%s%s" % (
            " ".join(args), p.returncode, p.stdout, p.stderr))
    return p


def prepare():
    """The charts' copy, and in it the example app's dependency (the
    library chart) in its charts/."""
    assert os.access(HELM, os.X_OK), "no helm at %s (make helm-bin)" % HELM
    shutil.rmtree(CHARTS, ignore_errors=True)
    shutil.copytree(SOURCE, CHARTS)
    helm("dependency", "build", os.path.join(CHARTS, "example-app"))


def render(chart, args):
    return helm("template", "golden", os.path.join(CHARTS, chart),
                "--namespace", "golden", *args).stdout


@pytest.fixture(scope="module", autouse=True)
def _deps():
    prepare()
    yield
    shutil.rmtree(os.path.dirname(CHARTS), ignore_errors=True)


@pytest.mark.parametrize("chart,args", [
    ("leaderd-sidecar", []), ("example-app", []),
    ("example-app", CASES["example-app-plain"][1]),
    ("leaderd", []), ("leaderd", PLATFORM_ALL)])
def test_lint_strict(chart, args):
    p = helm("lint", "--strict", os.path.join(CHARTS, chart), *args,
             check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 chart(s) failed" in p.stdout, p.stdout


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    chart, args = CASES[name]
    got = render(chart, args)
    path = os.path.join(GOLDEN, name + ".yaml")
    with open(path) as f:
        want = f.read()
    if got != want:
        diff = "".join(difflib.unified_diff(
            want.splitlines(True), got.splitlines(True),
            "golden/%s.yaml" % name, "helm template"))
        pytest.fail("the render of %s differs from its golden file; if the "
                    "change is meant, run `make helm-golden` and commit "
                    "the diff:\n%s" % (name, diff))


@pytest.mark.parametrize("chart,args,key", BAD,
                         ids=["%s:%s" % (c, a[1]) for c, a, _ in BAD])
def test_schema_refuses_a_bad_value(chart, args, key):
    p = helm("template", "x", os.path.join(CHARTS, chart), *args,
             check=False)
    assert p.returncode != 0, "accepted: %s" % " ".join(args)
    assert "values don't meet the specifications of the schema" in p.stderr, \
        p.stderr
    assert key in p.stderr, "the refusal does not name %s:\n%s" % (key,
                                                                  p.stderr)


@pytest.mark.parametrize("name", sorted(
    n for n in CASES if CASES[n][0] == "example-app"))
def test_leaderd_accepts_the_rendered_config(name, tmp_path):
    chart, args = CASES[name]
    out = helm("template", "golden", os.path.join(CHARTS, chart),
               "--namespace", "golden", "--show-only",
               "templates/resources.yaml", *args).stdout
    docs = [d for d in out.split("\n---\n") if "kind: ConfigMap" in d]
    assert len(docs) == 1, out
    body = docs[0].split("leaderd.yaml: |\n", 1)[1]
    cfg = "".join(l[4:] + "\n" for l in body.splitlines())
    path = tmp_path / "leaderd.yaml"
    path.write_text(cfg)
    env = dict(os.environ, POD_NAME="golden-0", POD_NAMESPACE="golden")
    p = subprocess.run([LEADERD, "-n", "-f", str(path)], env=env,
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, "leaderd -n refuses %s's config:\n%s\n%s" % (
        name, cfg, p.stdout + p.stderr)


def test_platform_chart_needs_kubernetes_1_36():
    p = helm("template", "x", os.path.join(CHARTS, "leaderd"),
             "--kube-version", "1.35.4", check=False)
    assert p.returncode != 0
    assert "kubeVersion" in p.stderr and ">=1.36.0-0" in p.stderr, p.stderr
    helm("template", "x", os.path.join(CHARTS, "leaderd"),
         "--kube-version", "1.36.0")
    # The library chart's app renders on 1.29, the first with native
    # sidecars on by default.
    helm("template", "x", os.path.join(CHARTS, "example-app"),
         "--kube-version", "1.29.0")


def test_prometheus_rule_file_forms():
    """files/prometheus-rules.yaml as a rule file (groups:) or as a
    PrometheusRule object (spec.groups): the same rendered groups;
    prometheusRule.groups wins over both."""
    path = os.path.join(CHARTS, "leaderd", "files", "prometheus-rules.yaml")
    with open(path) as f:
        orig = f.read()
    group = ("- name: g\n  rules:\n  - alert: A\n    expr: vector(1)\n")
    args = ("template", "x", os.path.join(CHARTS, "leaderd"),
            "--set", "prometheusRule.enabled=true",
            "--show-only", "templates/prometheusrule.yaml")
    try:
        with open(path, "w") as f:
            f.write("groups:\n" + group)
        plain = helm(*args).stdout
        with open(path, "w") as f:
            f.write("apiVersion: monitoring.coreos.com/v1\n"
                    "kind: PrometheusRule\nspec:\n  groups:\n" +
                    "".join("  " + l + "\n" for l in group.splitlines()))
        assert helm(*args).stdout == plain
        assert "alert: A" in plain
        mine = helm(*args, "--set", "prometheusRule.groups[0].name=mine",
                    "--set", "prometheusRule.groups[0].rules[0].alert=B",
                    "--set", "prometheusRule.groups[0].rules[0].expr=1"
                    ).stdout
        assert "alert: B" in mine and "alert: A" not in mine
        with open(path, "w") as f:
            f.write("groups: []\n")
        p = helm(*args, check=False)
        assert p.returncode != 0 and "no rule groups" in p.stderr, p.stderr
    finally:
        with open(path, "w") as f:
            f.write(orig)


def test_notes():
    """NOTES.txt names the policy, and warns when no RoleBinding is made
    (every injected leaderd would then get 403)."""
    chart = os.path.join(CHARTS, "leaderd")
    bare = helm("install", "leaderd", chart, "--dry-run=client").stdout
    assert "MutatingAdmissionPolicy leaderd-inject" in bare, bare
    assert "WARNING: rbac.namespaces and rbac.serviceAccounts are empty" \
        in bare, bare
    bound = helm("install", "leaderd", chart, "--dry-run=client",
                 "--set", "rbac.namespaces={team-a}").stdout
    assert "WARNING" not in bound and "bound in team-a" in bound, bound


def test_flowschema_without_subjects_is_refused():
    p = helm("template", "x", os.path.join(CHARTS, "leaderd"),
             "--set", "flowSchema.enabled=true", check=False)
    assert p.returncode != 0
    assert "flowSchema.enabled" in p.stderr, p.stderr


@pytest.mark.parametrize("nais", ["false", "true"])
def test_flowschema_verbs_are_the_rbac_lease_verbs(nais):
    """The FlowSchema lifts every verb the sidecars' RBAC grants on Leases
    to leader-election, and no other."""
    docs = [d for d in yaml.safe_load_all(render("leaderd", [
        "--set", "rbac.namespaces={team-a}", "--set", "rbac.nais=" + nais,
        "--set", "flowSchema.enabled=true"])) if d]
    (fs,) = [d for d in docs if d["kind"] == "FlowSchema"]
    (rr,) = fs["spec"]["rules"][0]["resourceRules"]
    granted = {v for d in docs if d["kind"] == "ClusterRole"
               for r in d["rules"] if "leases" in r["resources"]
               for v in r["verbs"]}
    assert granted and set(rr["verbs"]) == granted, (rr["verbs"], granted)


def regenerate():
    prepare()
    os.makedirs(GOLDEN, exist_ok=True)
    for name, (chart, args) in sorted(CASES.items()):
        path = os.path.join(GOLDEN, name + ".yaml")
        with open(path, "w") as f:
            f.write(render(chart, args))
        print("wrote", os.path.relpath(path, REPO))
    shutil.rmtree(os.path.dirname(CHARTS), ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: test_charts.py --regenerate  (or run it with pytest)")
    regenerate()
