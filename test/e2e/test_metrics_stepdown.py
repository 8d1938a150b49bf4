"""GET /metrics and POST /leader/release against a real kube-apiserver:
two leaderd instances as a user bound only to deploy/'s Role; /metrics
parsed by prometheus_client on both (exactly one master, requests
counted with the codes the API server really sends); a step-down moves
leadership to the other instance, and the first does not take the Lease
back during its cooldown."""

import json
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

import e2elib as E
from e2elib import LD, RP, TERM_BOUND

COOLDOWN = 2 * LD	# longer than any takeover, so a re-take would show


def scrape(p):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % p.port,
                                timeout=2.0) as r:
        assert r.headers["Content-Type"] == \
            "text/plain; version=0.0.4; charset=utf-8"
        text = r.read().decode()
    return {f.name: f for f in text_string_to_metric_families(text)}


def sample(fams, family, sname, **labels):
    for s in fams[family].samples:
        if s.name == sname and all(s.labels.get(k) == v
                                  for k, v in labels.items()):
            return s.value
    return None


def release(p):
    req = urllib.request.Request("http://127.0.0.1:%d/leader/release"
                                 % p.port, data=b"", method="POST")
    try:
        with urllib.request.urlopen(req, timeout=LD + 5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_metrics_and_step_down(election):
    el = election(prefix="met")
    extra = ["--step-down-cooldown", "%ds" % COOLDOWN]
    a = el.leaderd("c-met-a", extra=extra).start().wait_up()
    E.wait_for(a.is_leader, 2.2 * RP + 10, what="a to lead")
    b = el.leaderd("c-met-b", extra=extra).start().wait_up()
    E.wait_for(lambda: (b.leader() or {}).get("name") == "c-met-a", 10,
               what="b to follow a")

    fa, fb = scrape(a), scrape(b)
    master = "leader_election_master_status"
    assert sample(fa, master, master, name=el.lease) == 1
    assert sample(fb, master, master, name=el.lease) == 0
    # Requests the real API server answered, by verb and code.
    rq = "leaderd_api_requests"
    assert (sample(fa, rq, rq + "_total", verb="create", code="201") or
            sample(fa, rq, rq + "_total", verb="update", code="200")), \
        fa[rq].samples
    assert sample(fb, rq, rq + "_total", verb="get", code="200") >= 1
    # The watch stream was opened by both (a 200 that is still running
    # is not counted yet, so look at the histogram of finished ones
    # only for GETs and writes).
    h = "leaderd_api_request_duration_seconds"
    for f in (fa, fb):
        buckets = [s.value for s in f[h].samples
                   if s.name == h + "_bucket" and s.labels["verb"] == "get"]
        assert buckets and buckets == sorted(buckets)
    assert 0 < sample(fb, "leaderd_lease_expires_in_seconds",
                      "leaderd_lease_expires_in_seconds") <= LD

    # Step down: a releases, b takes over, a stays out for the cooldown.
    t0 = time.monotonic()
    st, body = release(a)
    assert st == 200 and body["released"] is True, (st, body)
    E.wait_for(b.is_leader, TERM_BOUND, what="b to take over")
    print("takeover after step-down in %.2fs" % (time.monotonic() - t0))
    assert "stepping down" in a.proc.text()
    st, body = release(a)
    assert st == 409, (st, body)
    while time.monotonic() - t0 < COOLDOWN - 0.5:
        assert not a.is_leader()
        time.sleep(0.1)
    fa, fb = scrape(a), scrape(b)
    assert sample(fa, master, master, name=el.lease) == 0
    assert sample(fb, master, master, name=el.lease) == 1
    assert sample(fb, "leaderd_transitions", "leaderd_transitions_total") \
        >= 1
    spec = el.get_lease()["spec"]
    assert spec["holderIdentity"] == "c-met-b"
