"""Real throttling (chaos rows T1, T2): a kube-apiserver of its own with a
server-wide concurrency of 4 seats (--max-requests-inflight=3,
--max-mutating-requests-inflight=1), API Priority and Fairness on (the
default) and a queue wait limit of 1s (--request-timeout=4s: the wait
is a quarter of it), while a load generator (apfload.py) LISTs 300
ConfigMaps of 4 KB as 32 ServiceAccounts on 160 threads.  Two leaderd,
as a ServiceAccount with deploy/'s Role, share a Lease:

T1  the default FlowSchemas: leaderd's requests fall in
    "service-accounts", priority level workload-low, with the load;
    they must meet real 429s;
T2  with deploy/flowschema/flowschema.yaml (its subject set to the
    test's ServiceAccount): leaderd's Lease verbs at leader-election;
    no Lease request may meet a 429.

Both: S1 (no two claims overlap, sampled) and no retry storm: each
leaderd's requests per second (its leaderd_api_requests_total, read
every second) stay at most STORM per second.

Run by `make chaos` (E2E_THROTTLE=1); skipped otherwise: the load takes
both cores for half a minute a row."""

import json
import os
import re
import subprocess
import sys
import time
import uuid

import pytest

import e2elib as E
from e2elib import LD, RP
from conftest import Cluster, _start_harness, _stop_harness
from test_interop import Sampler, check_no_overlap

pytestmark = pytest.mark.skipif(os.environ.get("E2E_THROTTLE") != "1",
                                reason="the throttling rows run in make "
                                "chaos (E2E_THROTTLE=1)")

FLAGS = ("--max-requests-inflight=3", "--max-mutating-requests-inflight=1",
         "--request-timeout=4s")
LOAD_USERS = 32
LOAD_THREADS = 160
LOAD_SECONDS = float(os.environ.get("E2E_THROTTLE_SECONDS", "30"))
# No retry storm: a leaderd's API requests in any one second.  Steady, a
# leader renews once per retry_period (1s here) and a follower watches;
# a 429 is retried at the next retry_period, not at once.
STORM = 4
HERE = os.path.dirname(os.path.abspath(__file__))
FLOWSCHEMA = os.path.join(E.REPO, "deploy", "flowschema", "flowschema.yaml")
LEASE_VERBS = ("get", "list", "watch", "create", "update", "delete")
METRIC = re.compile(r'^leaderd_api_requests_total\{verb="([a-z]+)",'
                    r'code="([a-z0-9]+)"[^}]*\} (\d+)$')


@pytest.fixture(scope="module")
def apf():
    """The throttled harness, 300 ConfigMaps and the load's tokens."""
    c = Cluster()
    _start_harness(c, extra=FLAGS, name="kasbox-apf")
    k = c.admin
    items = [{"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "bulk-%d" % i},
              "data": {"d": "x" * 4000}} for i in range(300)]
    items += [{"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": "load-%d" % i}}
              for i in range(LOAD_USERS)]
    items += [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": "load"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                          "verbs": ["list"]}]},
              {"apiVersion": "rbac.authorization.k8s.io/v1",
               "kind": "RoleBinding", "metadata": {"name": "load"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                           "kind": "Role", "name": "load"},
               "subjects": [{"kind": "Group", "name":
                             "system:serviceaccounts:" + c.namespace}]}]
    k.run("apply", "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": items}), timeout=120)
    c.load_tokens = [k.run("create", "token", "load-%d" % i,
                           "--duration=3600s").stdout.strip()
                     for i in range(LOAD_USERS)]
    yield c
    _stop_harness(c)


def _sa_kubeconfig(c, name, rules, lease):
    """A ServiceAccount bound to rules, and a kubeconfig with its token."""
    k = c.admin
    k.apply({"apiVersion": "v1", "kind": "ServiceAccount",
             "metadata": {"name": name}})
    c.bind(lease, rules, {"kind": "ServiceAccount", "name": name,
                          "namespace": c.namespace})
    token = k.run("create", "token", name, "--duration=3600s").stdout.strip()
    path = os.path.join(E.WORK, "kc-%s" % name)
    E.write_kubeconfig(path, c.server, name, ca_pem=c.ca_pem, token=token,
                       namespace=c.namespace)
    return path


def _flowschema(c, sa):
    """deploy/'s FlowSchema, its subject set to sa, applied; returns its
    name."""
    fs = json.loads(c.admin.run("create", "--dry-run=client", "-o", "json",
                                "-f", FLOWSCHEMA, ns=False).stdout)
    fs["metadata"]["name"] = "leaderd-%s" % sa
    (subj,) = fs["spec"]["rules"][0]["subjects"]
    subj["serviceAccount"] = {"name": sa, "namespace": c.namespace}
    c.admin.run("apply", "-f", "-", input=json.dumps(fs), ns=False)
    return fs["metadata"]["name"]


def _counts(p):
    """{(verb, code): n} from a leaderd's /metrics; None if unreachable."""
    try:
        import urllib.request
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % p.port,
                                    timeout=1.0) as r:
            text = r.read().decode()
    except OSError:
        return None
    out = {}
    for ln in text.splitlines():
        m = METRIC.match(ln)
        if m:
            out[(m.group(1), m.group(2))] = int(m.group(3))
    return out


def _total(c, pred=lambda v, code: True):
    return sum(n for (v, code), n in c.items() if pred(v, code))


@pytest.mark.parametrize("with_fs", [False, True],
                         ids=["T1-default-flowschemas",
                              "T2-deploy-flowschema"])
def test_throttled_by_apf(apf, deploy_role, with_fs):
    c = apf
    lease = "e2e-apf-%s" % uuid.uuid4().hex[:6]
    sa = "leaderd-%s" % uuid.uuid4().hex[:6]
    kc = _sa_kubeconfig(c, sa, E.lease_rules(deploy_role, lease), lease)
    fs_name = _flowschema(c, sa) if with_fs else None
    parts = [E.Leaderd("c%d" % i, kc, c.namespace, lease).start()
             for i in range(2)]
    load = None
    sampler = None
    try:
        for p in parts:
            p.wait_up()
        E.wait_for(lambda: sum(p.is_leader() for p in parts) == 1, LD + 10,
                   what="a leader before the load")
        sampler = Sampler(parts)
        sampler.start()
        before = [_counts(p) for p in parts]
        load = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "apfload.py"), c.server,
             c.ca_file, "/api/v1/namespaces/%s/configmaps" % c.namespace,
             str(LOAD_THREADS)] + c.load_tokens,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        per_sec = [[] for _ in parts]
        prev = before
        t_end = time.monotonic() + LOAD_SECONDS
        while time.monotonic() < t_end:
            time.sleep(1.0)
            now = [_counts(p) for p in parts]
            for i, (a, b) in enumerate(zip(prev, now)):
                if a is not None and b is not None:
                    per_sec[i].append(_total(b) - _total(a))
            prev = now
        load.terminate()
        lines = load.communicate(timeout=10)[0].splitlines()
        load = None
        time.sleep(2 * RP)
        sampler.stop()
        after = [_counts(p) for p in parts]
    finally:
        if load is not None:
            load.kill()
        if sampler is not None:
            sampler.stop()
        for p in parts:
            p.stop()
        if fs_name:
            c.admin.run("delete", "flowschema", fs_name, ns=False,
                        check=False)
    terms = check_no_overlap(sampler.samples)
    lease_429 = sum(_total(a, lambda v, code: v in LEASE_VERBS and
                           code == "429") -
                    _total(b, lambda v, code: v in LEASE_VERBS and
                           code == "429") for a, b in zip(after, before))
    all_429 = sum(_total(a, lambda v, code: code == "429") -
                  _total(b, lambda v, code: code == "429")
                  for a, b in zip(after, before))
    load_codes = {}
    for ln in lines:
        for kv in ln.split()[1:]:
            k, _, v = kv.partition("=")
            load_codes[k] = load_codes.get(k, 0) + int(v)
    worst = max(max(s) for s in per_sec if s)
    holders = len({t[2] for t in terms})
    ts = sorted(terms)
    leaderless = max([b[0] - a[1] for a, b in zip(ts, ts[1:])] or [0.0])
    row = "T2" if with_fs else "T1"
    print("\nCHAOS %s: load %s; leaderd's Lease requests answered 429: %d "
          "(all verbs %d); most requests in one second by one leaderd: %d "
          "(bound %d); claims %d by %d holder(s), longest leaderless "
          "%.2fs" % (row, load_codes, lease_429, all_429, worst, STORM,
                     len(terms), holders, leaderless))
    assert load_codes.get("429", 0) > 0, \
        "the load met no 429: it does not throttle (%s)" % load_codes
    assert worst <= STORM, "a retry storm: %s requests in one second " \
        "(per second: %s)" % (worst, per_sec)
    if with_fs:
        assert lease_429 == 0, "%d Lease requests answered 429 at " \
            "leader-election" % lease_429
    else:
        assert lease_429 > 0, "no Lease request met a 429 at workload-low: " \
            "the row shows nothing"
