"""chaoslib -- the kernel's own faults for the chaos rows: a "pod" as a
cgroup (CPU quota, freezer), and leaderd in a network namespace joined
to the test API server by a veth and a bridge, cut with nft rules.

cgroup v1 (the cpu and freezer controllers, each at /sys/fs/cgroup/NAME)
and v2 (cpu.max and cgroup.freeze in one tree) are both driven; where
neither is usable, or the tests are not root, they skip with the reason.

Python 3.11 standard library only; ip(8) and nft(8) (make deps).
"""

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

CG = "/sys/fs/cgroup"
# The deployed limit (deploy/base/deployment.yaml, limits.cpu 50m): the
# kubelet's CFS quota per 100 ms period, in microseconds.
PERIOD_US = 100000
DEPLOYED_MILLICPU = 50
# The kubelet's floor: a quota below 1 ms per period is raised to 1 ms
# (MinQuotaPeriod), so no limit under 10m exists in practice.
MIN_QUOTA_US = 1000


def quota_us(millicpu):
    return max(MIN_QUOTA_US, millicpu * PERIOD_US // 1000)


def _v2_root():
    """The cgroup v2 mount where the cpu controller may be enabled for
    children, or None."""
    for root in (CG, os.path.join(CG, "unified")):
        try:
            with open(os.path.join(root, "cgroup.controllers")) as f:
                ctrls = f.read().split()
        except OSError:
            continue
        if "cpu" in ctrls:
            return root
    return None


def cgroup_mode():
    """("v1" | "v2", None) when a pod cgroup can be made here, else
    (None, the reason to skip).  A cgroup is made and removed to be sure
    (a container may see the tree read-only)."""
    if os.geteuid() != 0:
        return None, "the cgroup rows need root (to make cgroups)"
    if all(os.path.exists(os.path.join(CG, c, "tasks"))
           for c in ("cpu", "freezer")) and \
            os.path.exists(os.path.join(CG, "cpu", "cpu.cfs_quota_us")):
        mode = "v1"
    elif _v2_root() is not None:
        mode = "v2"
    else:
        return None, ("neither cgroup v1's cpu and freezer controllers nor "
                      "a cgroup v2 tree with the cpu controller is mounted")
    try:
        PodCgroup(DEPLOYED_MILLICPU, mode=mode).close()
    except OSError as e:
        return None, "cannot make a cgroup with a CPU limit here: %s" % e
    return mode, None


class PodCgroup:
    """A pod's cgroup: a CPU limit in millicpu (None: no limit), and a
    freezer.  add(pid) moves a process (all its threads) in; its
    children stay in."""

    def __init__(self, millicpu=None, name=None, mode=None):
        if mode is None:
            mode, why = cgroup_mode()
            if mode is None:
                raise RuntimeError(why)
        self.mode = mode
        self.name = name or "leaderd-chaos-%s" % uuid.uuid4().hex[:8]
        if self.mode == "v1":
            self.dirs = [os.path.join(CG, c, self.name)
                         for c in ("cpu", "freezer")]
        else:
            root = _v2_root()
            with open(os.path.join(root, "cgroup.subtree_control"),
                      "w") as f:
                f.write("+cpu")
            self.dirs = [os.path.join(root, self.name)]
        made = []
        try:
            for d in self.dirs:
                os.makedirs(d, exist_ok=True)
                made.append(d)
            self.set_cpu(millicpu)
        except OSError:
            for d in reversed(made):
                os.rmdir(d)
            raise

    def _w(self, d, f, v):
        with open(os.path.join(d, f), "w") as fh:
            fh.write(str(v))

    def set_cpu(self, millicpu):
        self.millicpu = millicpu
        if self.mode == "v1":
            self._w(self.dirs[0], "cpu.cfs_period_us", PERIOD_US)
            self._w(self.dirs[0], "cpu.cfs_quota_us",
                    -1 if millicpu is None else quota_us(millicpu))
        else:
            self._w(self.dirs[0], "cpu.max", "%s %d" % (
                "max" if millicpu is None else quota_us(millicpu),
                PERIOD_US))

    def add(self, pid):
        for d in self.dirs:
            self._w(d, "cgroup.procs", pid)

    def pids(self):
        with open(os.path.join(self.dirs[0], "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]

    def freeze(self):
        if self.mode == "v1":
            self._w(self.dirs[1], "freezer.state", "FROZEN")
            self._wait_state(lambda: self._r(self.dirs[1], "freezer.state")
                             == "FROZEN")
        else:
            self._w(self.dirs[0], "cgroup.freeze", 1)
            self._wait_state(lambda: "frozen 1" in self._r(
                self.dirs[0], "cgroup.events"))

    def thaw(self):
        if self.mode == "v1":
            self._w(self.dirs[1], "freezer.state", "THAWED")
        else:
            self._w(self.dirs[0], "cgroup.freeze", 0)

    def _r(self, d, f):
        with open(os.path.join(d, f)) as fh:
            return fh.read().strip()

    def _wait_state(self, pred, timeout=2.0):
        end = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > end:
                raise AssertionError("the cgroup %s did not freeze within "
                                     "%.0fs" % (self.name, timeout))
            time.sleep(0.005)

    def throttled(self):
        """(periods, throttled periods, throttled seconds) so far."""
        st = dict(ln.split() for ln in
                  self._r(self.dirs[0], "cpu.stat").splitlines())
        if self.mode == "v1":
            return (int(st["nr_periods"]), int(st["nr_throttled"]),
                    int(st["throttled_time"]) / 1e9)
        return (int(st.get("nr_periods", 0)), int(st.get("nr_throttled", 0)),
                int(st.get("throttled_usec", 0)) / 1e6)

    def close(self):
        """Thaw, kill what is left, remove the cgroup."""
        try:
            self.thaw()
        except OSError:
            pass
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for d in self.dirs:
            end = time.monotonic() + 5
            while os.path.exists(d):
                try:
                    os.rmdir(d)
                except OSError:
                    if time.monotonic() > end:
                        raise
                    time.sleep(0.05)


def busy_sibling(cg):
    """A process that spins in cg, as a busy application in the pod;
    returns the Popen (kill it when done)."""
    p = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                         stdin=subprocess.DEVNULL)
    cg.add(p.pid)
    return p


# -- network namespaces -----------------------------------------------------

def netns_mode():
    """None when namespaces, veth, a bridge and nft work here, else the
    reason to skip."""
    if os.geteuid() != 0:
        return "the partition rows need root (network namespaces)"
    for tool in ("ip", "nft"):
        if shutil.which(tool) is None:
            return "%s is not installed (make deps: iproute2, nftables)" % tool
    # A namespace with an nft table, made and removed (a container may
    # lack the rights, a kernel nf_tables).
    probe = "ldprobe%d" % os.getpid()
    p = subprocess.run(["ip", "netns", "add", probe], capture_output=True,
                       text=True, timeout=20)
    if p.returncode != 0:
        return "ip netns add fails here: %s" % p.stderr.strip()
    try:
        p = subprocess.run(["ip", "netns", "exec", probe, "nft", "add",
                            "table", "inet", "probe"], capture_output=True,
                           text=True, timeout=20)
        if p.returncode != 0:
            return "nft fails in a network namespace: %s" % p.stderr.strip()
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True,
                       timeout=20)
    return None


def sh(*args, check=True):
    p = subprocess.run(list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=20)
    if check and p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(args), p.returncode,
                                                p.stderr.strip()))
    return p


class Bridge:
    """A bridge in the root namespace with address HOST (the test API
    server binds it), and one namespace per leaderd, each joined to it by
    a veth pair, addresses in 10.R.S.0/24 (a private range)."""

    def __init__(self):
        tag = uuid.uuid4().hex[:6]
        self.tag = tag
        self.br = "ldbr%s" % tag
        # A /24 of 10.0.0.0/8 from the tag, away from common ranges.
        n = int(tag, 16)
        self.net = "10.%d.%d" % (200 + n % 50, (n >> 8) % 256)
        self.host = self.net + ".1"
        self.spaces = []
        sh("ip", "link", "add", self.br, "type", "bridge")
        sh("ip", "addr", "add", self.host + "/24", "dev", self.br)
        sh("ip", "link", "set", self.br, "up")

    def namespace(self):
        """A new namespace joined to the bridge: returns a Netns."""
        i = len(self.spaces) + 2
        ns = Netns(self, "ld%s-%d" % (self.tag, i), "%s.%d" % (self.net, i))
        self.spaces.append(ns)
        return ns

    def close(self):
        for ns in self.spaces:
            ns.close()
        sh("ip", "link", "del", self.br, check=False)


class Netns:
    """One network namespace, its veth (inside: eth0; outside: the host
    end, on the bridge) and its nft table (inet chaos)."""

    def __init__(self, bridge, name, addr):
        self.name = name
        self.addr = addr
        self.host_if = "v%s" % name[2:]
        sh("ip", "netns", "add", name)
        sh("ip", "link", "add", self.host_if, "type", "veth", "peer", "name",
           "eth0", "netns", name)
        sh("ip", "link", "set", self.host_if, "master", bridge.br, "up")
        self.ip("addr", "add", addr + "/24", "dev", "eth0")
        self.ip("link", "set", "eth0", "up")
        self.ip("link", "set", "lo", "up")

    def ip(self, *args, check=True):
        return sh("ip", "-n", self.name, *args, check=check)

    def nft(self, rules):
        """Load rules (nft -f syntax) inside the namespace."""
        p = subprocess.run(["ip", "netns", "exec", self.name, "nft", "-f",
                            "-"], input=rules, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=20)
        if p.returncode != 0:
            raise RuntimeError("nft in %s: %s\n%s" % (self.name,
                                                      p.stderr.strip(), rules))

    def wrap(self):
        """The command prefix that runs a program inside."""
        return ["ip", "netns", "exec", self.name]

    def close(self):
        sh("ip", "netns", "del", self.name, check=False)
        sh("ip", "link", "del", self.host_if, check=False)


# The faults, as nft tables inside leaderd's namespace; each matches the
# API server's address and port only.  heal() flushes the table.
def cut_rules(kind, api_host, api_port):
    m = "ip daddr %s tcp dport %d" % (api_host, api_port)
    back = "ip saddr %s tcp sport %d" % (api_host, api_port)
    body = {
        # Both ways: nothing leaves, nothing arrives.
        "drop": ["chain out { type filter hook output priority 0; %s drop; }"
                 % m,
                 "chain in { type filter hook input priority 0; %s drop; }"
                 % back],
        # Requests go out and reach the server; every answer is lost.
        "oneway": ["chain in { type filter hook input priority 0; %s drop; }"
                   % back],
        # Every segment to the server is answered by a reset, at once.
        "reject": ["chain out { type filter hook output priority 0; "
                   "%s reject with tcp reset; }" % m],
    }[kind]
    return "table inet chaos {\n%s\n}\n" % "\n".join(body)
