"""Fixtures for the hygiene tests (valgrind runs, fd and memory soak).

The test API server and the leaderd process wrapper come from the
shared test kit, test/kit (fakeapi.py, harness.py), through sys.path.  Every test is bounded by a per-test alarm; figures worth
reporting (valgrind summaries, fd counts, RSS) are collected with the
`figures` fixture and printed at the end of the run."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kit"))

import fakeapi  # noqa: E402
import harness  # noqa: E402
from fixtures import api, certdir, sockdir  # noqa: E402,F401

# Per test; the soak test runs HYGIENE_SOAK_SECONDS plus its warm-up,
# idle-timeout phase and failovers.
TEST_TIME_LIMIT = int(os.environ.get("HYGIENE_TIME_LIMIT", "0")) or \
    max(300, int(float(os.environ.get("HYGIENE_SOAK_SECONDS", "60"))) + 240)

@pytest.fixture(autouse=True)
def time_limit():
    """Fail a test that runs longer than TEST_TIME_LIMIT seconds."""
    with harness.time_limit(TEST_TIME_LIMIT):
        yield


@pytest.fixture
def figures(request):
    """figures(text): record a line for the end-of-run summary.  The lines
    travel on the reports (user_properties), so that those of
    pytest-xdist's workers reach the summary too."""
    def add(text):
        request.node.user_properties.append(
            ("figure", "%s: %s" % (request.node.name, text)))
    return add


def pytest_terminal_summary(terminalreporter):
    lines = [v for key in ("passed", "failed", "error")
             for r in terminalreporter.stats.get(key, ())
             if getattr(r, "when", "call") == "call"
             for k, v in getattr(r, "user_properties", ()) if k == "figure"]
    if not lines:
        return
    terminalreporter.section("hygiene figures")
    for ln in lines:
        terminalreporter.write_line(ln)
    out = os.environ.get("HYGIENE_FIGURES")
    if out:
        with open(out, "w") as f:
            f.write("\n".join(lines) + "\n")


@pytest.fixture
def leaderd_bin():
    p = harness.leaderd_binary()
    if not os.path.exists(p):
        pytest.fail("leaderd binary not found at %s (build it with make, or "
                    "set $LEADERD)" % p)
    return p


@pytest.fixture
def procs():
    """A list to put harness.Leaderd objects in; each is stopped (SIGTERM,
    then SIGKILL) at the end of the test whatever happened.  A daemon that
    was still running and did not exit 0 on that SIGTERM fails the test
    (under a sanitizer or valgrind, that is how a report shows)."""
    lst = []
    yield lst
    bad = []
    for p in lst:
        live = p.alive()
        p.cleanup(grace=30.0)
        if live and p.proc.returncode != 0:
            bad.append("%s: exit %s after SIGTERM at teardown (log %s)"
                       % (p.name, p.proc.returncode, p.stderr_path))
    if bad:
        pytest.fail("\n".join(bad))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """On failure, attach the tail of each leaderd's stderr and valgrind
    log to the report."""
    outcome = yield
    rep = outcome.get_result()
    if rep.when != "call" or not rep.failed:
        return
    lst = item.funcargs.get("procs") if hasattr(item, "funcargs") else None
    for inst in lst or []:
        lines = [ln for ln in inst.log().splitlines()
                 if " debug http: GET /leader -> 200" not in ln]
        rep.sections.append(("leaderd %s stderr (last 150 lines)" % inst.name,
                             "\n".join(lines[-150:])))
        vlog = getattr(inst, "valgrind_log", None)
        if vlog and os.path.exists(vlog):
            with open(vlog, errors="replace") as f:
                rep.sections.append(("valgrind log of %s" % inst.name,
                                     f.read()[-20000:]))
