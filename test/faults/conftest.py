"""Fixtures for leaderd's fault suite: fakeapi (test/kit/fakeapi.py),
one fault proxy per leaderd (proxy.py), leaderd processes (harness.py),
the leadership checker (checker.py) and a `measure` fixture whose figures
are printed at the end of the run and appended to $FAULTS_RESULTS (JSON
lines) when set.  Every test is bounded by an alarm."""

import json
import os
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kit"))

import fakeapi  # noqa: E402
import harness  # noqa: E402
from fixtures import api, certdir, lock_name  # noqa: E402,F401
from cluster import FaultCluster, NS  # noqa: E402,F401
from proxy import ProxyHub  # noqa: E402

TEST_TIME_LIMIT = int(os.environ.get("FAULTS_TIME_LIMIT", "120"))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" and rep.failed:
        for inst in getattr(item, "_leaderds", []):
            lines = [ln for ln in inst.log().splitlines()
                     if " debug http: GET /leader -> 200" not in ln]
            if len(lines) > 200:
                lines = ["... (%d lines cut; full log: %s)"
                         % (len(lines) - 200, inst.stderr_path)] + lines[-200:]
            rc = inst.proc.poll() if inst.proc else "not started"
            rep.sections.append(("leaderd %s (pid %s, exit %s) stderr"
                                 % (inst.name, inst.proc.pid if inst.proc
                                    else "-", rc), "\n".join(lines)))


def pytest_terminal_summary(terminalreporter):
    # The figures travel on the reports (user_properties), so that those
    # measured by pytest-xdist's workers reach this summary too.
    tr = terminalreporter
    ms = [v for reps in tr.stats.values() for r in reps
          if getattr(r, "when", None) == "call"
          for k, v in getattr(r, "user_properties", ()) if k == "measure"]
    if not ms:
        return
    tr.section("fault measurements")
    for m in sorted(ms, key=lambda m: m["t"]):
        b = "" if m["bound"] is None else "  (bound %s %.3f)" % (
            m["cmp"], m["bound"])
        tr.write_line("%-4s %-44s %9.3f %s%s" % (
            m["row"], m["what"], m["value"], m["unit"], b))


@pytest.fixture(autouse=True)
def time_limit():
    """Fail a test that runs longer than TEST_TIME_LIMIT seconds."""
    with harness.time_limit(TEST_TIME_LIMIT):
        yield


@pytest.fixture
def measure(request):
    """measure(row, what, value, unit="s", bound=None, cmp="<=") records
    one figure (and checks nothing: assert separately)."""
    def rec(row, what, value, unit="s", bound=None, cmp="<="):
        m = {"row": row, "what": what, "value": float(value), "unit": unit,
             "bound": None if bound is None else float(bound), "cmp": cmp,
             "test": request.node.name, "t": time.time()}
        request.node.user_properties.append(("measure", m))
        print("MEASURE %s %s = %.3f %s%s" % (
            row, what, value, unit,
            "" if bound is None else " (bound %s %.3f)" % (cmp, bound)))
        path = os.environ.get("FAULTS_RESULTS")
        if path:
            with open(path, "a") as f:
                f.write(json.dumps(m) + "\n")
    return rec


@pytest.fixture(scope="session")
def hub():
    h = ProxyHub()
    yield h
    h.close()


@pytest.fixture
def cluster(api, hub, tmp_path, lock_name, request):
    c = FaultCluster(api, hub, str(tmp_path), lock_name, request.node)
    yield c
    c.close()
