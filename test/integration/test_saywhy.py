"""Say why (issue 34): every condition that keeps an instance from
leading, or makes it work wrong, is named by /leader's "problem",
first in `leaderd status` (exit 5, 6 for a warning only), in /readyz's
reason; it is logged again while it lasts and once when it clears, and
the ones with a reason are Warning Events on the pod (docs/api.md
"Problems")."""

import base64
import json
import os
import re
import subprocess
import time

from fakeapi import now_microtime
from harness import (LEASE_DURATION as LD, RENEW_DEADLINE as RD, ROOT,
                     free_port, leaderd_binary, wait_until)

POD_ENV = {"POD_NAME": "pod-a", "POD_NAMESPACE": "default"}


def hooks_binary():
    return os.environ.get("LEADERD_TESTHOOKS") or \
        os.path.join(ROOT, "build", "leaderd-testhooks")


def status(inst):
    """`leaderd status` against inst: (exit status, stdout)."""
    env = dict(os.environ)
    env.pop("KUBERNETES_SERVICE_HOST", None)
    p = subprocess.run([leaderd_binary(), "status", "--http",
                        "127.0.0.1:%d" % inst.port],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       env=env, timeout=20)
    return p.returncode, p.stdout.decode(errors="replace")


def problem(inst, code, timeout=10.0):
    """Wait until /leader's problems include code; that problem."""
    found = {}

    def has():
        d = inst.leader()
        for p in (d or {}).get("problems", []):
            if p["code"] == code:
                found["p"] = p
                found["top"] = d["problem"]
                return True
        return False
    wait_until(has, timeout, what="%s: problem %s (log %s)"
               % (inst.name, code, inst.stderr_path))
    return found["p"]


def warnings(api, reason):
    return [e for e in api.events() if e.get("type") == "Warning" and
            e.get("reason") == reason]


def wait_event(api, reason, timeout=10.0):
    wait_until(lambda: warnings(api, reason), timeout,
               what="a Warning Event %s" % reason)
    return warnings(api, reason)[0]


def rbac_403(verb, lock):
    return ('leases.coordination.k8s.io "%s" is forbidden: User '
            '"system:serviceaccount:default:leaderd" cannot %s resource '
            '"leases" in API group "coordination.k8s.io" in the namespace '
            '"default"' % (lock, verb))


def test_no_problem_when_all_is_well(api, cluster):
    a = cluster.start("a")
    cluster.wait_single_leader(10)
    d = a.leader()
    assert d["problem"] is None and d["problems"] == []
    assert d["stale"] is False and d["confirmed_at"]
    rc, out = status(a)
    assert rc == 0 and "problem:" not in out


def test_forbidden_update_named_in_status_log_and_event(api, cluster):
    a = cluster.new("a", env=POD_ENV)
    api.fault("status", token=a.token, methods=["PUT"], status=403,
              message=rbac_403("update", cluster.lock))
    a.start()
    p = problem(a, "forbidden", timeout=10)
    assert p["message"].startswith(
        "update leases/%s in namespace default is forbidden (403)"
        % cluster.lock), p
    assert p["severity"] == "error" and p["since"]
    rc, out = status(a)
    assert rc == 5, out
    assert out.splitlines()[0].startswith("problem:        forbidden "), out
    assert "update leases/%s in namespace default" % cluster.lock in \
        out.splitlines()[0]
    ev = wait_event(api, "Forbidden")
    assert ev["involvedObject"]["kind"] == "Pod"
    assert ev["involvedObject"]["name"] == "pod-a"
    assert "update leases/%s" % cluster.lock in ev["message"]
    # Stopped leading says why.
    wait_until(lambda: [e for e in api.events()
                        if "stopped leading: " in e.get("message", "")],
               10, what="a stopped-leading Event with its why")
    stopped = [e for e in api.events()
               if "stopped leading: " in e.get("message", "")][0]
    assert "forbidden (403)" in stopped["message"], stopped
    assert "lease default/%s: problem forbidden: update leases/%s" % (
        cluster.lock, cluster.lock) in a.log()
    a.kill9()   # its release is forbidden too: no shutdown to wait out


def test_forbidden_create_names_the_lease(api, cluster):
    a = cluster.new("a")
    api.fault("status", token=a.token, methods=["POST"], status=403,
              message=rbac_403("create", cluster.lock),
              path_prefix="/apis/")
    a.start()
    p = problem(a, "forbidden")
    assert p["message"].startswith(
        "create leases/%s in namespace default is forbidden (403)"
        % cluster.lock), p
    # No pod name: the Warning goes on the Lease.
    ev = wait_event(api, "Forbidden")
    assert ev["involvedObject"]["kind"] == "Lease"
    assert ev["involvedObject"]["name"] == cluster.lock


def test_readyz_gives_the_real_reason(api, cluster):
    a = cluster.new("a")
    api.fault("status", token=a.token, methods=["GET"], status=403,
              message=rbac_403("get", cluster.lock), path_prefix="/apis/")
    a.start()
    problem(a, "forbidden")
    st, _, body = a.request("/readyz")
    assert st == 503
    reason = json.loads(body)["reason"]
    assert reason.startswith("get leases/%s in namespace default is "
                             "forbidden (403)" % cluster.lock), reason


def jwt(exp):
    def seg(o):
        return base64.urlsafe_b64encode(json.dumps(o).encode()) \
            .decode().rstrip("=")
    return "%s.%s.c2ln" % (seg({"alg": "RS256"}),
                           seg({"sub": "system:serviceaccount:default:x",
                                "exp": exp}))


def test_unauthorized_names_the_token_file_and_expiry(api, cluster):
    exp = int(time.time()) + 3600
    a = cluster.new("a", token=jwt(exp), env=POD_ENV)
    a.start()
    cluster.wait_single_leader(10)
    api.revoke_token(a.token)
    p = problem(a, "unauthorized", timeout=10)
    m = p["message"]
    assert "the API server rejects the credentials (401" in m, m
    assert "the token file %s" % a.token_path in m, m
    want = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(exp))
    assert "a JWT valid until %s: not expired, so revoked" % want in m, m
    rc, out = status(a)
    assert rc == 5 and out.startswith("problem:        unauthorized"), out
    # A fresh token: the problem clears, with one line.
    api.add_token(a.token)
    wait_until(lambda: a.leader()["problem"] is None, 10,
               what="the 401 to clear")
    assert "problem unauthorized cleared after" in a.log()


def test_unreachable(api, cluster):
    a = cluster.start("a")
    cluster.wait_single_leader(10)
    api.fault("status", status=503, methods=["GET", "PUT"])
    p = problem(a, "unreachable")
    assert "the API server answers 503" in p["message"], p
    a.kill9()   # its release cannot be written: no shutdown to wait out


def test_not_candidate_names_the_probe(api, cluster):
    port = free_port()
    url = "http://127.0.0.1:%d/ready" % port
    a = cluster.start("a", args=["--app-probe", url])
    p = problem(a, "not_candidate")
    assert p["message"].startswith(
        "candidate: no (app unhealthy): the probe %s fails: " % url), p
    rc, out = status(a)
    assert rc == 6 and out.startswith("problem:        not_candidate "), out


def test_duplicate_identity(api, cluster):
    a = cluster.start("a", identity="app-0")
    cluster.wait_single_leader(10, [a])
    b = cluster.start("b", identity="app-0",
                      env={"POD_NAME": "pod-b", "POD_NAMESPACE": "default"})
    p = problem(b, "duplicate_identity", timeout=10)
    assert "two instances share identity app-0" in p["message"], p
    assert a.leader()["problem"] is None
    ev = wait_event(api, "DuplicateIdentity")
    assert ev["involvedObject"]["name"] == "pod-b"


def test_foreign_long_lease_and_both_fixes(api, cluster):
    a = cluster.start("a", env=POD_ENV)
    cluster.wait_single_leader(10)
    now = now_microtime()

    def ghost(obj):
        obj["spec"].update(holderIdentity="ghost-7f9c",
                           leaseDurationSeconds=3600, renewTime=now,
                           acquireTime=now)
    api.modify_lease("default", cluster.lock, ghost)
    p = problem(a, "foreign_long_lease", timeout=LD + 10)
    m = p["message"]
    assert m.startswith("holder ghost-7f9c has not renewed since "), m
    assert "leaseDurationSeconds 3600 (ours 3s)" in m, m
    assert 'set spec.holderIdentity to "" or delete the Lease' in m, m
    wait_event(api, "ForeignLongLease")

    def clear(obj):
        obj["spec"]["holderIdentity"] = ""
    api.modify_lease("default", cluster.lock, clear)
    wait_until(lambda: a.is_leader(), 10, what="a to lead again")
    assert a.leader()["problem"] is None
    assert "problem foreign_long_lease cleared after" in a.log()


def test_lock_namespace_is_a_warning(api, cluster):
    a = cluster.start("a", env={"POD_NAMESPACE": "elsewhere"})
    p = problem(a, "lock_namespace")
    assert p["severity"] == "warning"
    assert "the lock's namespace default is not this pod's namespace " \
        "elsewhere" in p["message"], p
    rc, out = status(a)
    assert rc == 6, out


def test_split_lock(api, cluster):
    now = now_microtime()
    rec = {"holderIdentity": "old-a", "leaseDurationSeconds": 15,
           "acquireTime": now, "renewTime": now, "leaderTransitions": 0}
    api.create_object("endpoints", "default", cluster.lock, annotations={
        "control-plane.alpha.kubernetes.io/leader": json.dumps(rec)})
    a = cluster.start("a", env=POD_ENV)
    p = problem(a, "split_lock")
    assert p["message"].startswith(
        "the Endpoints default/%s of the same name holds a live leader "
        "record of old-a" % cluster.lock), p
    assert "use lock type endpointsleases" in p["message"]
    assert wait_event(api, "SplitLock")["involvedObject"]["kind"] == "Pod"


def test_split_lock_not_for_a_plain_endpoints(api, cluster):
    # A Service's Endpoints of the same name carries no leader record.
    api.create_object("endpoints", "default", cluster.lock)
    a = cluster.start("a")
    cluster.wait_single_leader(10)
    time.sleep(1.0)
    assert a.leader()["problems"] == []


def test_clock_skew_and_lasting_warning(api, cluster):
    """One clock 30 s ahead (the test clock hook), its monotonic clock 6
    times fast, so that the 60 s reminder comes within seconds."""
    clock = os.path.join(cluster.workdir, "clock")
    with open(clock, "w") as f:
        f.write("6.0 30\n")
    a = cluster.new("a", binary=hooks_binary(),
                    lease_duration=LD * 6, renew_deadline=RD * 6,
                    retry_period=3.0, request_timeout=6.0,
                    env=dict(POD_ENV, LEADERD_TEST_CLOCK=clock))
    a.start()
    p = problem(a, "clock_skew")
    assert re.match(r"this clock is \+(29|30)\.\ds off the API server's",
                    p["message"]), p
    ev = wait_event(api, "ClockSkew")
    assert ev["involvedObject"]["name"] == "pod-a"
    wait_until(lambda: "problem clock_skew still holds since" in a.log(),
               20, what="the reminder")
    with open(clock + ".new", "w") as f:
        f.write("6.0 0\n")
    os.replace(clock + ".new", clock)
    wait_until(lambda: "problem clock_skew cleared after" in a.log(), 20,
               what="the clear line")
    assert a.leader()["problem"] is None


def test_watch_down(api, cluster):
    a = cluster.new("a")
    api.watch_fault("forbidden", token=a.token)
    a.start()
    p = problem(a, "watch_down", timeout=RD + 10)
    assert "following the lease by polling" in p["message"], p
    assert "403" in p["message"], p


def test_stale_while_nothing_is_confirmed(api, cluster):
    """No answer and no watch: the record is not confirmed, so after
    lease_duration /leader says stale, and `leaderd status` says since
    when; the first answer confirms it again."""
    a = cluster.start("a", args=["--watch", "false"])
    cluster.wait_single_leader(10)
    assert a.leader()["stale"] is False
    f = api.fault("blackhole")
    wait_until(lambda: (a.leader() or {}).get("stale") is True, LD + 5,
               what="stale")
    rc, out = status(a)
    assert "confirmed:      " in out and "(stale: older than " \
        "lease_duration)" in out, out
    problem(a, "unreachable")
    api.clear_fault(f)
    wait_until(lambda: (a.leader() or {}).get("stale") is False, 10,
               what="confirmed again")


def test_split_lock_checks_leave_no_connection(api, cluster):
    """The old-style lock checks, rare GETs, each open a connection of
    their own and close it when answered.  The loop's clients share one
    pool of idle connections, and libcurl re-sends a request that meets
    a closed kept-alive connection on the next idle one: a check's spare
    connection would be one more silent try of a renew that the API
    server dropped (test_metrics.py's transport error went uncounted)."""
    a = cluster.start("a")
    cluster.wait_single_leader(10)
    wait_until(lambda: len(api.requests(token=a.token, method="PUT")) >= 3,
               10, what="three renews")
    reqs = api.requests(token=a.token)
    checks = [e for e in reqs if e["path"] in (
        "/api/v1/namespaces/default/endpoints/" + cluster.lock,
        "/api/v1/namespaces/default/configmaps/" + cluster.lock)]
    assert len(checks) == 2, checks
    peers = {e["peer"] for e in checks}
    assert len(peers) == 2, checks
    others = [(e["method"], e["path"]) for e in reqs
              if e not in checks and e["peer"] in peers]
    assert others == [], others
