"""GET /metrics: the Prometheus text exposition (format 0.0.4), parsed by
the official prometheus_client parser, during an election and after a
failover; the name label on every series and leaderd_election_info; the
renew failures counter under a failing API; /metrics on the probes
listener; every metric that deploy/monitoring's rules and dashboard read
is one a live leaderd exports."""

import os
import re
import sys
import time

from prometheus_client.parser import text_string_to_metric_families

from fakeapp import FakeApp
from harness import (LEASE_DURATION as LD, RETRY_PERIOD as RP, free_port,
                     wait_until)
from shardkit import member_config

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(REPO, "test", "monitoring"))
from promql_names import (dashboard_exprs, metric_names,  # noqa: E402
                          rule_exprs)

# Read by the rules and the dashboard, exported by kube-state-metrics.
NOT_LEADERD = {"kube_lease_renew_time"}

SLACK = 1.5
JITTER = 2.2
CTYPE = "text/plain; version=0.0.4; charset=utf-8"


def scrape(inst, path="/metrics", port=None):
    """{metric family name: family} of one scrape, checking the type."""
    if port is None:
        st, h, body = inst.request(path)
    else:
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=1.0)
        try:
            c.request("GET", path)
            r = c.getresponse()
            st, h, body = r.status, {k.lower(): v for k, v in
                                     r.getheaders()}, r.read()
        finally:
            c.close()
    assert st == 200, body
    assert h["content-type"] == CTYPE
    return {f.name: f for f in text_string_to_metric_families(
        body.decode())}


def value(fams, family, sample=None, **labels):
    """The value of the sample of family (sample name: family's own by
    default) whose labels include labels; None if there is none."""
    for s in fams[family].samples:
        if s.name == (sample or family) and all(
                s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    return None


def requests_total(fams, verb, code):
    return value(fams, "leaderd_api_requests", "leaderd_api_requests_total",
                 verb=verb, code=code) or 0


def verb_total(fams, verb):
    """Requests of one verb, whatever their code."""
    return sum(s.value for s in fams["leaderd_api_requests"].samples
               if s.labels.get("verb") == verb)


def sample_names(fams):
    """{sample name: [its samples]} of a scrape."""
    out = {}
    for f in fams.values():
        for smp in f.samples:
            out.setdefault(smp.name, []).append(smp)
    return out


def check_named(fams, names):
    """Every leaderd_* and leader_election_* sample carries a name label
    out of names; the elector_* counters of compat nais carry none."""
    for sname, smps in sample_names(fams).items():
        if not sname.startswith(("leaderd_", "leader_election_")):
            continue
        for smp in smps:
            assert smp.labels.get("name") in names, (sname, smp.labels)


def check_histogram(fams):
    """Buckets cumulative and ending in +Inf == _count, per verb."""
    fam = fams["leaderd_api_request_duration_seconds"]
    assert fam.type == "histogram"
    verbs = {s.labels["verb"] for s in fam.samples if "verb" in s.labels}
    assert verbs, "no histogram samples"
    for verb in verbs:
        buckets = [(float(s.labels["le"]), s.value) for s in fam.samples
                   if s.name.endswith("_bucket") and
                   s.labels["verb"] == verb]
        assert len(buckets) == 13, buckets
        bounds = [b for b, _ in buckets]
        assert bounds == sorted(bounds) and bounds[-1] == float("inf")
        counts = [v for _, v in buckets]
        assert counts == sorted(counts), (verb, counts)
        count = value(fams, "leaderd_api_request_duration_seconds",
                      "leaderd_api_request_duration_seconds_count",
                      verb=verb)
        assert counts[-1] == count and count > 0


def test_metrics_election_and_failover(api, cluster):
    ins = cluster.start_n(3)
    leader = cluster.wait_single_leader(JITTER * RP + SLACK + 2.0)
    lock = cluster.lock
    first = {}
    for i in ins:
        f = scrape(i)
        first[i.name] = f
        # Every family the issue names, with HELP and TYPE.
        for name, typ in (("leader_election_master_status", "gauge"),
                          ("leader_election_slowpath", "counter"),
                          ("leaderd_transitions", "counter"),
                          ("leaderd_api_requests", "counter"),
                          ("leaderd_renew_failures", "counter"),
                          ("leaderd_lease_expires_in_seconds", "gauge"),
                          ("leaderd_local_api_connections", "gauge"),
                          ("leaderd_build_info", "gauge")):
            assert f[name].type == typ, name
            assert f[name].documentation, name
        assert value(f, "leaderd_build_info", version="0.1.0") == 1
        rev = [s.labels.get("revision") for s in
               f["leaderd_build_info"].samples]
        assert rev and re.fullmatch(r"[0-9a-f]{12}(-dirty)?|unknown",
                                    rev[0]), rev
        want = 1 if i is leader else 0
        assert value(f, "leader_election_master_status", name=lock) == want
        # Everyone read the Lease first (200, or 404 before the create).
        assert verb_total(f, "get") >= 1
        # The lease is known everywhere: time left is positive.
        assert 0 < value(f, "leaderd_lease_expires_in_seconds") <= LD + 0.1
        # This scrape itself is one connection at least.
        assert value(f, "leaderd_local_api_connections") >= 1
        check_histogram(f)
        # One election: every series is still labelled with its name, and
        # the info gauge names the lock and this instance's identity.
        check_named(f, {lock})
        info = f["leaderd_election_info"]
        assert info.type == "gauge" and info.documentation
        assert [(smp.labels, smp.value) for smp in info.samples] == [
            ({"lock": "leases", "lock_namespace": "default",
              "lock_name": lock, "identity": i.identity, "name": lock},
             1.0)]
    # Exactly one instance says master.
    assert sum(value(first[i.name], "leader_election_master_status",
                     name=lock) for i in ins) == 1
    # The leader took a free or missing lease: a write went through.
    lf = first[leader.name]
    assert (requests_total(lf, "update", "200") +
            requests_total(lf, "create", "201")) >= 1

    # Renews keep counting on the leader.
    before = requests_total(lf, "update", "200")
    wait_until(lambda: requests_total(scrape(leader), "update", "200") >=
               before + 2, 4 * RP + SLACK, what="renews counted")

    # Failover: the new leader counts a transition and says master.
    followers = [i for i in ins if i is not leader]
    trans0 = {i.name: value(first[i.name], "leaderd_transitions",
                            "leaderd_transitions_total") for i in followers}
    leader.kill9()
    new = cluster.wait_single_leader(LD + JITTER * RP + SLACK + 2.0,
                                     followers)
    after = {i.name: scrape(i) for i in followers}
    assert sum(value(after[i.name], "leader_election_master_status",
                     name=lock) for i in followers) == 1
    assert value(after[new.name], "leader_election_master_status",
                 name=lock) == 1
    for i in followers:
        t = value(after[i.name], "leaderd_transitions",
                  "leaderd_transitions_total")
        assert t >= trans0[i.name] + 1, (i.name, trans0[i.name], t)
        check_histogram(after[i.name])
    # The takeover was a write over a record just read (no watch event
    # carries an expiry), or came from a watch; either way it counted.
    nf = after[new.name]
    assert requests_total(nf, "update", "200") >= 1


def test_renew_failures_and_error_codes(api, cluster):
    a = cluster.start("m-a")
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    f0 = scrape(a)
    assert value(f0, "leaderd_renew_failures",
                 "leaderd_renew_failures_total") == 0
    fault = api.fault("status", token=a.token, methods=["PUT"], status=500,
                      count=2)
    wait_until(lambda: value(scrape(a), "leaderd_renew_failures",
                             "leaderd_renew_failures_total") >= 2,
               4 * RP + SLACK, what="renew failures counted")
    api.clear_fault(fault)
    f = scrape(a)
    assert requests_total(f, "update", "500") >= 2
    # A transport failure is code="error" (libcurl retries a request
    # that met a closed kept-alive connection once, so drop two).
    fault = api.fault("drop", token=a.token, methods=["PUT"], count=2)
    wait_until(lambda: requests_total(scrape(a), "update", "error") >= 1,
               4 * RP + SLACK, what="a transport error counted")
    api.clear_fault(fault)
    # The slow path: a renew answered 409 is retried after a GET.
    def slow():
        return value(scrape(a), "leader_election_slowpath",
                     "leader_election_slowpath_total", name=cluster.lock)
    wait_until(a.is_leader, LD + JITTER * RP + SLACK, what="a leads again")
    # The failures above may still cost a the lease (at RD), and its
    # re-acquisition (a GET, then writes) counts on the slow path: read
    # s0 only after a renew that succeeds from here on.
    u0 = requests_total(scrape(a), "update", "200")
    wait_until(lambda: a.is_leader() and
               requests_total(scrape(a), "update", "200") > u0,
               LD + JITTER * RP + SLACK, what="a renews")
    s0 = slow()
    fault = api.fault("status", token=a.token, methods=["PUT"], status=409,
                      count=1)
    wait_until(lambda: slow() >= s0 + 1, 4 * RP + SLACK,
               what="slow path counted")
    api.clear_fault(fault)
    assert requests_total(scrape(a), "update", "409") == 1
    wait_until(a.is_leader, LD + JITTER * RP + SLACK, what="a leads")


def test_metrics_on_probes_listener(api, cluster):
    a = cluster.new("m-p")
    probes = free_port()
    with open(a.config_path) as f:
        text = f.read()
    text = text.replace("listen:\n", "listen:\n  probes: \"127.0.0.1:%d\"\n"
                        % probes, 1)
    with open(a.config_path, "w") as f:
        f.write(text)
    a.start()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    f = scrape(a, port=probes)
    assert value(f, "leader_election_master_status",
                 name=cluster.lock) == 1
    # Other methods than GET and HEAD: 405.
    st, _, _ = a.request("/metrics", method="POST")
    assert st == 405



def test_label_patches_counted(api, cluster):
    """The pod label's PATCH requests count as verb="patch"."""
    api.create_pod("default", "pod-m-l")
    a = cluster.new("m-l", env={"POD_NAME": "pod-m-l"})
    with open(a.config_path, "a") as f:
        f.write("actions:\n  label:\n    enabled: true\n")
    a.start()
    wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
    wait_until(lambda: (api.pod_labels("default", "pod-m-l") or {}).get(
        "leaderd.io/role") == "leader", 3.0, what="the leader label")
    wait_until(lambda: requests_total(scrape(a), "patch", "200") >= 1,
               3.0, what="the PATCH counted")
    check_histogram(scrape(a))


def test_dashboard_and_rules_read_exported_metrics(api, cluster):
    """Every metric name that deploy/monitoring's rules, PrometheusRule and
    dashboard read (kube-state-metrics' aside) is a sample name of a live
    leaderd: one with an application probe, and a shard group member."""
    app = FakeApp()
    try:
        a = cluster.new("mon-a")
        with open(a.config_path, "a") as f:
            f.write("candidacy:\n  probe:\n    url: %s\n    period: 200ms\n"
                    "    timeout: 100ms\n" % app.url())
        a.start()
        s = member_config(cluster.new("mon-s"), "mon", 2).start()
        wait_until(a.is_leader, JITTER * RP + SLACK + 2.0, what="a leads")
        wait_until(lambda: value(scrape(a), "leaderd_app_probe",
                                 "leaderd_app_probe_total",
                                 result="success"), 3.0, what="a probe")
        wait_until(lambda: "leaderd_shards_owned" in scrape(s), 3 * LD,
                   what="the shard gauges")
        exported = set(sample_names(scrape(a))) | set(
            sample_names(scrape(s)))
        check_named(scrape(s), {"mon-member-mon-s", "mon-0", "mon-1"})
    finally:
        app.die()
    mon = os.path.join(REPO, "deploy", "monitoring")
    exprs = (rule_exprs(os.path.join(mon, "leaderd-rules.yaml")) +
             rule_exprs(os.path.join(mon, "prometheusrule.yaml")) +
             dashboard_exprs(os.path.join(mon, "leaderd-dashboard.json")))
    assert len(exprs) >= 20, exprs
    read = set()
    for what, expr in exprs:
        names = metric_names(expr)
        assert names, (what, expr)
        missing = names - exported - NOT_LEADERD
        assert not missing, "%s reads %s, which leaderd does not export " \
            "(it exports %s)" % (what, sorted(missing), sorted(exported))
        read |= names
    # The ones the alerts of the issue are built on, at least.
    assert read >= {"leader_election_master_status",
                    "leaderd_transitions_total",
                    "leaderd_renew_failures_total",
                    "leaderd_api_requests_total", "leaderd_election_info",
                    "leaderd_shards_owned", "kube_lease_renew_time"}, read
