"""The leader's endpoints (actions.endpoints) against a real
kube-apiserver: a selectorless Service, the EndpointSlice rules of
deploy/leader-endpoints' Role (its slice name replaced by ours), two
leaderd with fake pod IPs (10.0.0.1, 10.0.0.2: strings in the object
only, no traffic goes there).  The slice "<service>-leader" names the
leader's IP, is accepted by the real validation (addressType, labels,
port), and after a SIGTERM failover names the other instance; the
stopping leader cleared it before its release.
"""

import os
import subprocess
import time

import e2elib as E
from e2elib import RP, TERM_BOUND


def slice_rules(name):
    """deploy/leader-endpoints' rules on endpointslices, for slice name."""
    p = subprocess.run([E.KUBECTL, "kustomize",
                        os.path.join(E.REPO, "deploy", "leader-endpoints")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    import yaml
    docs = [d for d in yaml.safe_load_all(p.stdout) if d]
    role = [d for d in docs if d["kind"] == "Role"][0]
    rules = [r for r in role["rules"]
             if "endpointslices" in r.get("resources", [])]
    assert rules
    for r in rules:
        if "resourceNames" in r:
            r["resourceNames"] = [name]
    return rules


def wait_leader(parts, timeout):
    def one():
        ls = [p for p in parts if p.proc.alive() and p.is_leader()]
        return ls[0] if len(ls) == 1 else None
    return E.wait_for(one, timeout, what="one leader")


def test_endpointslice_follows_the_leader(election, cluster):
    el = election(prefix="eps")
    svc = el.lease + "-svc"
    name = svc + "-leader"
    cluster.bind(el.lease + "-eps", slice_rules(name), el.subject)
    E.wait_for(lambda: cluster.can_i(el.kubeconfig, "update",
                                     "endpointslices.discovery.k8s.io",
                                     name),
               15, interval=0.5, what="RBAC on endpointslices")
    cluster.admin.apply({"apiVersion": "v1", "kind": "Service",
                         "metadata": {"name": svc},
                         "spec": {"ports": [{"name": "http", "port": 80,
                                             "targetPort": 8080}]}})

    def ips():
        p = cluster.admin.run("get", "endpointslice", name, "-o", "json",
                              check=False)
        if p.returncode != 0:
            return None
        import json
        o = json.loads(p.stdout)
        return [a for ep in o.get("endpoints") or []
                for a in ep["addresses"]]

    ip = {}
    parts = []
    for n in (1, 2):
        ident = "c-eps-%d" % n
        cfg = os.path.join(E.WORK, "%s-%d.yaml" % (el.lease, n))
        with open(cfg, "w") as f:
            f.write("actions:\n  endpoints:\n    service: %s\n"
                    "    ip: 10.0.0.%d\n    port: 8080\n"
                    "    port_name: http\n" % (svc, n))
        ip[ident] = "10.0.0.%d" % n
        parts.append(el.leaderd(ident, extra=["-f", cfg]).start().wait_up())
    try:
        lead = wait_leader(parts, 2.2 * RP + 10)
        other = [p for p in parts if p is not lead][0]
        E.wait_for(lambda: ips() == [ip[lead.ident]], 10, interval=0.2,
                   what="the slice naming the leader")
        o = cluster.admin.json("get", "endpointslice", name)
        assert o["addressType"] == "IPv4"
        assert o["metadata"]["labels"]["kubernetes.io/service-name"] == svc
        assert o["metadata"]["labels"][
            "endpointslice.kubernetes.io/managed-by"] == "leaderd.io"
        assert o["ports"] == [{"name": "http", "port": 8080,
                               "protocol": "TCP"}]
        # Re-asserted at every renew, yet the same content is no write
        # for the API server: no new resourceVersion, no watch event for
        # every kube-proxy.
        rv = o["metadata"]["resourceVersion"]
        time.sleep(3 * RP)
        assert cluster.admin.json("get", "endpointslice", name)[
            "metadata"]["resourceVersion"] == rv
        # Found the way kube-proxy and CoreDNS find it: by the label.
        sel = cluster.admin.json("get", "endpointslices", "-l",
                                 "kubernetes.io/service-name=%s" % svc)
        assert [s["metadata"]["name"] for s in sel["items"]] == [name]
        assert "failed" not in "".join(
            l for l in lead.proc.text().splitlines() if "endpointslice" in l)

        t0 = time.monotonic()
        rc, _ = lead.proc.term(timeout=10)
        assert rc == 0
        # Cleared before the release, so at once.
        assert ips() in ([], [ip[other.ident]]), ips()
        E.wait_for(lambda: ips() == [ip[other.ident]], TERM_BOUND + 5,
                   interval=0.2, what="the slice naming the new leader")
        print("endpoints: slice names the new leader %.2fs after SIGTERM"
              % (time.monotonic() - t0))
        assert other.is_leader()
    finally:
        for p in parts:
            p.stop()
        cluster.admin.run("delete", "service", svc, "--wait=false",
                          check=False)
        cluster.admin.run("delete", "endpointslice", name, "--wait=false",
                          check=False)
