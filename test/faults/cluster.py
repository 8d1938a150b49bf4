"""cluster -- leaderd instances on one lock, each behind its own fault
proxy, for the fault tests (conftest.py) and the soak (soak.py)."""

import os
import signal

import harness  # test/kit, on the path (conftest.py, soak.py)
from checker import Checker

NS = "default"


def testhooks_binary():
    p = os.environ.get("LEADERD_TESTHOOKS") or os.path.join(
        harness.ROOT, "build", "leaderd-testhooks")
    return os.path.abspath(p)


class FaultCluster:
    """leaderd instances on one lock, each behind its own proxy."""

    def __init__(self, api, hub, workdir, lock, node):
        self.api = api
        self.hub = hub
        self.workdir = workdir
        self.lock = lock
        self.instances = []
        self.checkers = []
        self.proxies = []
        node._leaderds = self.instances

    def new(self, name, proxied=True, testhooks=False, clock=None, **kw):
        """A Leaderd, configured, not started.  proxied: its kubeconfig
        points at a fresh Proxy (inst.proxy).  testhooks or clock=(rate,
        offset_s): the test-hooks build with $LEADERD_TEST_CLOCK."""
        kw.setdefault("lock", self.lock)
        kw.setdefault("log_level", "debug")
        if testhooks or clock is not None:
            kw["binary"] = testhooks_binary()
            if not os.path.exists(kw["binary"]):
                raise AssertionError("%s not found (make "
                                     "build/leaderd-testhooks, or set "
                                     "$LEADERD_TESTHOOKS)" % kw["binary"])
        inst = harness.Leaderd(self.api, self.workdir, name, **kw)
        inst.proxy = None
        inst.clock_file = None
        if testhooks or clock is not None:
            inst.clock_file = os.path.join(inst.dir, "clock")
            set_clock(inst, *(clock or (1.0, 0.0)))
            env = dict(inst.env or {})
            env["LEADERD_TEST_CLOCK"] = inst.clock_file
            inst.env = env
        if proxied:
            inst.proxy = self.hub.proxy(self.api.port, name)
            self.proxies.append(inst.proxy)
            self.api.write_kubeconfig(inst.kubeconfig,
                                      token_file=inst.token_path, user=name,
                                      namespace=inst.namespace,
                                      server=inst.proxy.url)
        self.instances.append(inst)
        return inst

    def start(self, name, **kw):
        return self.new(name, **kw).start()

    def start_n(self, n, prefix="ld", **kw):
        return [self.start("%s-%d" % (prefix, i), **kw) for i in range(n)]

    def checker(self, instances=None, interval=0.02):
        c = Checker(instances if instances is not None else self.instances,
                    interval).start()
        self.checkers.append(c)
        return c

    def wait_single_leader(self, timeout, instances=None):
        return harness.wait_single_leader(instances or self.instances,
                                          timeout)

    def lease(self):
        return self.api.get_lease(NS, self.lock)

    def transitions(self):
        lease = self.lease()
        return lease["spec"].get("leaseTransitions", 0) if lease else None

    def close(self):
        for c in self.checkers:
            c.stop()
        for i in self.instances:
            if i.alive():
                i.signal(signal.SIGCONT)
            i.cleanup()
        for p in self.proxies:
            try:
                p.clear()
            except Exception:  # noqa: BLE001
                pass


def set_clock(inst, rate, offset_s, suspended_s=0.0):
    """Rewrite inst's $LEADERD_TEST_CLOCK file (atomically; leaderd re-reads
    it when its mtime changes).  suspended_s: how long the machine has
    been suspended in all (CLOCK_MONOTONIC stood still that long)."""
    tmp = inst.clock_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%r %r %r\n" % (float(rate), float(offset_s),
                                 float(suspended_s)))
    os.replace(tmp, inst.clock_file)
