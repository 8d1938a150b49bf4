"""deploy/ is accepted by a real API server: `kubectl apply
--dry-run=server -k` for deploy/ and every overlay in it (schema,
defaulting, admission and RBAC escalation checks run server-side)."""

import os
import subprocess

import pytest

import e2elib as E

DEPLOY = os.path.join(E.REPO, "deploy")


def kustomizations():
    out = []
    for d, _, files in os.walk(DEPLOY):
        if "kustomization.yaml" in files or "kustomization.yml" in files:
            out.append(os.path.relpath(d, E.REPO))
    return sorted(out)


def test_deploy_has_kustomizations():
    assert "deploy" in kustomizations(), "deploy/kustomization.yaml missing"


@pytest.mark.parametrize("path", kustomizations())
def test_apply_dry_run_server(cluster, path):
    k = cluster.admin
    # The leader-elector migration keeps its lock and Role where the old
    # pods locked, in "default", so it is applied without -n, as
    # docs/DEPLOYING.md says (kubectl refuses an object of another
    # namespace under -n).
    p = k.run("apply", "--dry-run=server", "-k", os.path.join(E.REPO, path),
              check=False, timeout=120,
              ns=path != os.path.join("deploy", "migrate-leader-elector"))
    assert p.returncode == 0, "kubectl apply --dry-run=server -k %s:\n%s%s" % (
        path, p.stdout, p.stderr)
    assert "(server dry run)" in p.stdout, p.stdout
    print(p.stdout)


def test_every_manifest_is_in_a_kustomization():
    """No stray manifest in deploy/ that the dry runs above would miss."""
    used = set()
    for d in kustomizations():
        p = subprocess.run([E.KUBECTL, "kustomize", os.path.join(E.REPO, d)],
                             capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
    # A manifest is a YAML file with apiVersion and kind at the top level
    # that is not itself a Kustomization; each must be named as a resource
    # or patch by some kustomization.yaml next to it or above it.
    for d, _, files in os.walk(DEPLOY):
        for f in files:
            if f in ("kustomization.yaml", "kustomization.yml"):
                with open(os.path.join(d, f)) as fh:
                    used.update(l.strip().lstrip("- ").strip()
                                for l in fh if l.strip())
    stray = []
    for d, _, files in os.walk(DEPLOY):
        # Helm templates, not kustomize manifests: test/helm and
        # test_inject.py render and apply them.
        # deploy/monitoring's PrometheusRule is applied where the
        # Prometheus Operator runs (its CRD is not on this API server);
        # test/monitoring checks it.
        if os.path.relpath(d, DEPLOY).split(os.sep)[0] in ("helm",
                                                           "monitoring"):
            continue
        for f in files:
            if not f.endswith((".yaml", ".yml")) or f.startswith("kustomization"):
                continue
            with open(os.path.join(d, f)) as fh:
                text = fh.read()
            if "\nkind:" not in "\n" + text:
                continue
            if not any(u.endswith(f) for u in used):
                stray.append(os.path.relpath(os.path.join(d, f), E.REPO))
    assert not stray, "manifests not in any kustomization: %s" % stray

