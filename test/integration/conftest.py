"""Fixtures for leaderd's integration tests: the test API server, leaderd
processes with their own config/kubeconfig/token, and the leadership
checker, from the shared test kit (test/kit).  Every test is bounded by
a per-test alarm."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kit"))

import harness  # noqa: E402
from fixtures import api, certdir, lock_name, sockdir  # noqa: E402,F401
from harness import Leaderd, LeadershipChecker  # noqa: E402

TEST_TIME_LIMIT = int(os.environ.get("ITEST_TIME_LIMIT", "60"))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)
    if rep.when == "call" and rep.failed:
        for inst in getattr(item, "_leaderds", []):
            text = inst.log()
            # The checker's own /leader polls are noise here.
            lines = [ln for ln in text.splitlines()
                     if " debug http: GET /leader -> 200" not in ln]
            if len(lines) > 300:
                lines = ["... (%d lines cut; full log: %s)"
                         % (len(lines) - 300, inst.stderr_path)] + lines[-300:]
            rc = inst.proc.poll() if inst.proc else "not started"
            rep.sections.append(("leaderd %s (pid %s, exit %s) stderr"
                                 % (inst.name, inst.proc.pid if inst.proc
                                    else "-", rc), "\n".join(lines)))


@pytest.fixture(autouse=True)
def time_limit():
    """Fail a test that runs longer than TEST_TIME_LIMIT seconds."""
    with harness.time_limit(TEST_TIME_LIMIT):
        yield


class Cluster:
    """Starts leaderd instances on one lock and cleans them up."""

    def __init__(self, api, workdir, lock, node):
        self.api = api
        self.workdir = workdir
        self.lock = lock
        self.instances = []
        self.checkers = []
        node._leaderds = self.instances

    def new(self, name, **kw):
        """A Leaderd, configured but not started."""
        kw.setdefault("lock", self.lock)
        inst = Leaderd(self.api, self.workdir, name, **kw)
        self.instances.append(inst)
        return inst

    def start(self, name, **kw):
        return self.new(name, **kw).start()

    def start_n(self, n, prefix="ld", **kw):
        return [self.start("%s-%d" % (prefix, i), **kw) for i in range(n)]

    def checker(self, instances=None, interval=0.02):
        c = LeadershipChecker(instances if instances is not None
                              else self.instances, interval).start()
        self.checkers.append(c)
        return c

    def leaders(self, instances=None):
        return [i for i in (instances or self.instances)
                if i.alive() and i.is_leader()]

    def wait_single_leader(self, timeout, instances=None):
        return harness.wait_single_leader(instances or self.instances,
                                          timeout)

    def lease(self):
        return self.api.get_lease("default", self.lock)

    def close(self):
        """Stop every instance.  One that was still running must exit 0
        on SIGTERM (the contract; under sanitizers a leak or error report
        makes it exit non-zero): anything else fails the test."""
        for c in self.checkers:
            c.stop()
        bad = []
        for i in self.instances:
            rc = i.cleanup(grace=harness.REQUEST_TIMEOUT + 4.0)
            if rc not in (None, 0):
                bad.append("%s exited %s after SIGTERM at teardown (log %s)"
                           % (i.name, rc, i.stderr_path))
        if bad:
            pytest.fail("\n".join(bad), pytrace=False)


@pytest.fixture
def cluster(api, tmp_path, lock_name, request):
    c = Cluster(api, str(tmp_path), lock_name, request.node)
    yield c
    c.close()


@pytest.fixture
def leaderd_bin():
    p = harness.leaderd_binary()
    if not os.path.exists(p):
        pytest.fail("leaderd binary not found at %s (build it with make, or "
                    "set $LEADERD)" % p)
    return p
