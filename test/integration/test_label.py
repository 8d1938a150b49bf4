"""The leader pod label (actions.label) against fakeapi: the leader's pod
says leaderd.io/role=leader, the others standby; standby is written
before the release and as soon as the claim ends, leader only once the
Lease is ours; a failing PATCH is retried with backoff, a label edited by
hand is put back at the next renew; the label's client sends the token the
daemon's other clients send.  Timings as in harness.py."""

import time

from harness import (LEASE_DURATION as LD, RENEW_DEADLINE as RD,
                     RETRY_PERIOD as RP, wait_until)

KEY = "leaderd.io/role"
NS = "default"
SLACK = 1.5
JITTER = 2.2
PODS = "/api/v1/namespaces/%s/pods/" % NS


def labelled(cluster, name, key=None, pod=None):
    """A Leaderd with the label on, for pod `pod` (default: its name)."""
    inst = cluster.new(name, env={"POD_NAME": pod or "pod-" + name})
    with open(inst.config_path, "a") as f:
        f.write("actions:\n  label:\n    enabled: true\n")
        if key:
            f.write("    key: %s\n" % key)
    return inst


def role(api, pod, key=KEY):
    labels = api.pod_labels(NS, pod) or {}
    return labels.get(key)


def leader_spans(api, pods, key=KEY, until=None):
    """Per pod, the intervals during which the server held its label at
    leader: [(pod, from, to)]."""
    out = []
    for pod in pods:
        since = None
        for t, _, _, labels, _ in api.pod_history(NS, pod):
            if labels.get(key) == "leader" and since is None:
                since = t
            elif labels.get(key) != "leader" and since is not None:
                out.append((pod, since, t))
                since = None
        if since is not None:
            out.append((pod, since, until or time.monotonic()))
    return out


def overlaps(spans):
    bad = []
    for i, a in enumerate(spans):
        for b in spans[i + 1:]:
            if a[0] != b[0] and a[1] < b[2] and b[1] < a[2]:
                bad.append((a, b))
    return bad


def test_label_follows_leadership(api, cluster):
    for p in ("pod-la", "pod-lb"):
        api.create_pod(NS, p, labels={"app": "demo"})
    a = labelled(cluster, "la").start()
    wait_until(lambda: a.is_leader(), JITTER * RP + SLACK + 2.0,
               what="la to lead")
    b = labelled(cluster, "lb").start()
    wait_until(lambda: role(api, "pod-la") == "leader" and
               role(api, "pod-lb") == "standby", 3.0,
               what="leader and standby labels")
    # Other labels are kept (a merge patch).
    assert api.pod_labels(NS, "pod-la")["app"] == "demo"
    # leader was set only after the lease was ours.
    acq = [w for w in a.writes() if w["spec"].get("holderIdentity") == "la"]
    first = [h for h in api.pod_history(NS, "pod-la")
             if h[3].get(KEY) == "leader"][0]
    assert first[0] >= acq[0]["t"], (first[0], acq[0]["t"])

    # SIGTERM: standby is written before the release.
    a.terminate()
    assert a.wait(5.0) == 0
    rel = [w for w in a.writes() if not w["spec"].get("holderIdentity")]
    assert rel
    stand = [h for h in api.pod_history(NS, "pod-la")
             if h[3].get(KEY) == "standby" and h[0] > first[0]]
    assert stand and stand[0][0] <= rel[-1]["t"], (stand, rel)
    wait_until(lambda: role(api, "pod-lb") == "leader",
               JITTER * RP + SLACK + 2.0, what="lb labelled leader")
    assert role(api, "pod-la") == "standby"
    assert not overlaps(leader_spans(api, ["pod-la", "pod-lb"]))
    assert b.is_leader()


def test_label_standby_at_claim_end_no_overlap(api, cluster):
    """The old leader loses its Lease writes but can still PATCH: its pod
    turns standby when its claim ends, before anyone else may lead, so
    the two leader labels never overlap."""
    for p in ("pod-la", "pod-lb"):
        api.create_pod(NS, p)
    a = labelled(cluster, "la").start()
    wait_until(lambda: a.is_leader(), JITTER * RP + SLACK + 2.0,
               what="la to lead")
    b = labelled(cluster, "lb").start()
    wait_until(lambda: role(api, "pod-la") == "leader", 3.0,
               what="la labelled")
    f = api.fault("status", token=a.token, status=503,
                  path_prefix="/apis/coordination.k8s.io/")
    wait_until(lambda: role(api, "pod-lb") == "leader",
               LD + JITTER * RP + SLACK + 3.0, what="lb labelled leader")
    api.clear_fault(f)
    spans = sorted(leader_spans(api, ["pod-la", "pod-lb"]),
                   key=lambda x: x[1])
    assert not overlaps(spans), spans
    print("label hand-over: %s standby %.3fs before %s leader"
          % (spans[0][0], spans[1][1] - spans[0][2], spans[1][0]))
    assert b.is_leader()


def test_label_patch_failures_are_retried_and_reasserted(api, cluster):
    api.create_pod(NS, "pod-la")
    a = labelled(cluster, "la")
    f = api.fault("status", token=a.token, status=503, methods=["PATCH"],
                  path_prefix=PODS, count=3)
    a.start()
    wait_until(lambda: a.is_leader(), JITTER * RP + SLACK + 2.0,
               what="la to lead")
    # Three PATCHes fail; the label still converges, with backoff.
    wait_until(lambda: role(api, "pod-la") == "leader", 1 + 2 + 4 + SLACK,
               what="label after failures")
    assert f.hits == 3
    print("F28: label converged %.3fs after the first failed PATCH"
          % (time.monotonic() - [r for r in api.requests(
              token=a.token, method="PATCH") if r["code"] == 503][0]["t_recv"]))
    fails = [r for r in api.requests(token=a.token, method="PATCH")
             if r["code"] == 503]
    assert len(fails) == 3
    # Backoff: the retries are at least 1s and 2s apart.
    ts = [r["t_recv"] for r in fails]
    assert ts[2] - ts[1] >= 0.9, ts
    assert "failed: 503" in a.log()
    # Leading was never delayed by the failing label.
    assert a.is_leader()
    # A label changed by hand is put back at a following renew.
    api.set_pod_labels(NS, "pod-la", {KEY: "standby"})
    wait_until(lambda: role(api, "pod-la") == "leader", 2 * RP + SLACK,
               what="label re-asserted")


def test_label_pod_missing_and_custom_key(api, cluster):
    """A pod that does not exist is an error logged once, retried, and
    does not stop the election; a custom key is honoured."""
    a = labelled(cluster, "la", key="example.com/leader")
    a.start()
    wait_until(lambda: a.is_leader(), JITTER * RP + SLACK + 2.0,
               what="la to lead")
    wait_until(lambda: "failed: 404" in a.log(), 3.0, what="404 logged")
    api.create_pod(NS, "pod-la")
    wait_until(lambda: role(api, "pod-la", "example.com/leader") ==
               "leader", 1 + 2 + 4 + SLACK, what="custom label set")
    assert KEY not in api.pod_labels(NS, "pod-la")
    assert a.log_count("failed: 404") == 1


def test_rotated_token_reaches_all_four_clients(api, cluster):
    """The daemon's four API clients (the lock's, the watch's, the
    Events' and the label's) share one token.  The refresh rule: the
    token file is re-read a minute after the last read, or after a 401
    on any of the clients.  The token file is rewritten; the old token
    stays good for pods and Events (a kubelet rotation leaves it valid
    until it expires) but the Lease API answers it 401.  That 401 makes
    every client switch: each kind of request carries the new token, and
    after the first request that carried it none carries the old one."""
    api.create_pod(NS, "pod-rt")
    a = labelled(cluster, "rt").start()
    wait_until(lambda: a.is_leader() and role(api, "pod-rt") == "leader"
               and api.watches(token=a.token), JITTER * RP + SLACK + 2.0,
               what="rt to lead, label its pod and watch")
    time.sleep(2 * RP)
    old, new = a.token, a.token + "-rotated"
    t_rot = time.monotonic()
    api.add_token(new)
    a.write_token(new)
    api.fault("status", token=old, status=401,
              path_prefix="/apis/coordination.k8s.io/",
              message="Unauthorized")
    # The watch sends nothing while its stream is open: end it, as the
    # API server does at its timeout, so the next one opens now.
    api.watch_end_open()

    kinds = {
        "lock": lambda e: e["path"].startswith("/apis/coordination.k8s.io/")
        and e["method"] in ("GET", "PUT", "POST"),
        "watch": lambda e: e["method"] == "WATCH",
        "event": lambda e: e["method"] == "POST"
        and e["path"].endswith("/events"),
        "label": lambda e: e["method"] == "PATCH"
        and e["path"].startswith(PODS),
    }

    def answered(token):
        """The kinds whose requests with token since t_rot succeeded."""
        return {k for k, is_kind in kinds.items()
                for e in api.requests(token=token, since=t_rot)
                if is_kind(e) and e["code"] in (200, 201)}

    # The leader renews and re-asserts its label with the new token, and
    # the watch reopens with it (after a 401 on the lock or the watch).
    want = {"lock", "watch", "label"}
    try:
        wait_until(lambda: want <= answered(new), RD + JITTER * RP + SLACK)
    except AssertionError:
        pass
    assert want <= answered(new), "no %s request with the new token" % \
        " or ".join(sorted(want - answered(new)))
    # An Event: step down ("stopped leading"), then lead again after the
    # cooldown ("became leader").
    st, _, _ = a.request("/leader/release", method="POST", timeout=6.0)
    assert st == 200
    wait_until(lambda: "event" in answered(new), 2.0,
               what="an Event POST with the new token")
    wait_until(lambda: a.is_leader() and role(api, "pod-rt") == "leader",
               LD + JITTER * RP + SLACK + 2.0, what="rt to lead again")
    assert answered(new) == set(kinds)

    first_new = min(e["t_recv"] for e in api.requests(token=new,
                                                      since=t_rot))
    stale = [(e["method"], e["path"], e["code"])
             for e in api.requests(token=old, since=first_new)]
    assert stale == [], "the old token after the new one: %s" % stale[:4]
    assert old not in a.log() and new not in a.log(), \
        "a token appears in the log"


def test_label_needs_a_pod_name(cluster):
    import subprocess
    inst = cluster.new("la")
    with open(inst.config_path, "a") as f:
        f.write("actions:\n  label:\n    enabled: true\n")
    p = subprocess.run([inst.binary, "-n", "-f", inst.config_path],
                       capture_output=True, text=True, timeout=10,
                       env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 2
    assert "actions.label.enabled needs the pod's name" in p.stderr
