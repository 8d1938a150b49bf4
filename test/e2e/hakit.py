"""hakit -- an HA control plane for make e2e-ha (test/e2e/ha.py).

Three etcd v3.6 members (kasbox etcd), their peer traffic through
test/kit PeerProxies (so one member can be cut off), and two
kube-apiservers v1.36 (kasbox apiserver), A on member e1 and B on
member e2, on one PKI, one service-account key and one token file
(kasbox pki).  The clients reach them through test/kit Balancers:

    front[0]  A only          front[1]  B only
    lb        A and B, round robin, no health check
    orc       A and B, the oracle's own way in (the scenarios move it
              off an apiserver before they fault it)

so an apiserver that is down refuses connections (RST) while it is
restarted, as a host whose port is closed does.  kubeconfig(user, way)
writes a kubeconfig for any user and any of these ways in."""

import json
import os
import signal
import sys
import time
import urllib.request
import ssl

import e2elib as E

sys.path.insert(0, os.path.join(E.REPO, "test", "kit"))
import tcplb  # noqa: E402
import lease_history as H  # noqa: E402

COMMON_FLAGS = (
    "--feature-gates=CoordinatedLeaderElection=true",
    "--runtime-config=coordination.k8s.io/v1beta1=true",
    "--shutdown-delay-duration=2s",
    "--shutdown-send-retry-after=true",
    "--endpoint-reconciler-type=none",
)


def wait_line(proc, word, timeout):
    """Wait for a line starting with word in proc's log; its fields."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for line in proc.text().splitlines():
            if line.startswith(word + " "):
                return line.split()
        if not proc.alive():
            raise AssertionError("%s exited: %s" % (proc.name,
                                                    proc.text()[-3000:]))
        time.sleep(0.1)
    raise AssertionError("%s: no %s line after %.0fs: %s" % (
        proc.name, word, timeout, proc.text()[-3000:]))


class Member:
    def __init__(self, i):
        self.name = "e%d" % (i + 1)
        self.client_port = E.free_port()
        self.peer_port = E.free_port()
        self.id = None
        self.proc = None
        self.proxy = None

    @property
    def client_url(self):
        return "http://127.0.0.1:%d" % self.client_port


class APIServer:
    def __init__(self, name, member):
        self.name = name
        self.member = member
        self.port = E.free_port()
        self.proc = None

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port


class ControlPlane:
    def __init__(self, work, kasbox, flags=()):
        self.work = work
        self.kasbox = kasbox
        self.flags = list(COMMON_FLAGS) + list(flags)
        self.pki = os.path.join(work, "pki")
        self.members = [Member(i) for i in range(3)]
        self.isolated = set()
        self.apiservers = []
        self.users = {}

    # -- etcd ----------------------------------------------------------
    def _cut(self, sender, receiver):
        if sender == receiver:
            return False
        return receiver in self.isolated or (sender and
                                             sender in self.isolated)

    def start(self):
        t0 = time.monotonic()
        p = E.Proc("kasbox-pki", [self.kasbox, "pki", "-out", self.pki,
                                  "-users", "leaderd,elector"])
        assert p.p.wait(timeout=60) == 0, p.text()
        with open(os.path.join(self.pki, "pki.json")) as f:
            self.users = json.load(f)["users"]
        # The proxies need the member ids, which come from the names and
        # advertised URLs: so the proxies first, their ids filled later.
        for m in self.members:
            m.proxy = tcplb.PeerProxy(m.peer_port, None, self._cut,
                                      name="peer-" + m.name)
        cluster = ",".join("%s=%s" % (m.name, m.proxy.url)
                           for m in self.members)
        for m in self.members:
            m.proc = E.Proc("etcd-" + m.name, [
                self.kasbox, "etcd", "-name", m.name,
                "-data", os.path.join(self.work, "etcd-" + m.name),
                "-client-port", str(m.client_port),
                "-peer-port", str(m.peer_port),
                "-advertise-peer", m.proxy.url,
                "-initial-cluster", cluster])
        for m in self.members:
            m.id = wait_line(m.proc, "READY", 120)[2]
            m.proxy.member_id = m.id
        self.apiservers = [APIServer("A", self.members[0]),
                           APIServer("B", self.members[1])]
        self.front = [tcplb.Balancer([a.port], name="front-" + a.name)
                      for a in self.apiservers]
        self.lb = tcplb.Balancer([a.port for a in self.apiservers],
                                 name="lb")
        self.orc = tcplb.Balancer([a.port for a in self.apiservers],
                                  name="orc")
        for a in self.apiservers:
            self.start_apiserver(a, wait=False)
        for a in self.apiservers:
            self.wait_apiserver(a)
        self.admin = E.Kubectl(self.kubeconfig("admin", self.orc), "default")
        self.startup = time.monotonic() - t0
        return self

    def etcd_status(self):
        p = E.Proc("etcdctl", [self.kasbox, "etcdctl", "-endpoints",
                               ",".join(m.client_url for m in self.members),
                               "status"])
        p.p.wait(timeout=30)
        for line in p.text().splitlines():
            if line.startswith("["):
                return json.loads(line)
        raise AssertionError("etcdctl status: " + p.text()[-2000:])

    def etcd_leader(self):
        for s in self.etcd_status():
            if not s.get("error") and s["id"] == s["leader"]:
                return next(m for m in self.members if m.id == s["id"])
        return None

    def isolate(self, member):
        self.isolated = {member.id} if member else set()
        for m in self.members:
            m.proxy.update()

    # -- apiservers ----------------------------------------------------
    def start_apiserver(self, a, wait=True):
        argv = [self.kasbox, "apiserver", "-pki", self.pki,
                "-out", os.path.join(self.work, "apiserver-" + a.name),
                "-port", str(a.port), "-etcd-servers", a.member.client_url]
        argv += ["-apiserver-flag=" + f for f in self.flags]
        a.proc = E.Proc("apiserver-" + a.name, argv)
        if wait:
            self.wait_apiserver(a)

    def wait_apiserver(self, a, timeout=180):
        wait_line(a.proc, "READY", timeout)

    def stop_apiserver(self, a, graceful=True):
        """SIGTERM (graceful shutdown) or SIGKILL; seconds it took."""
        t0 = time.monotonic()
        if graceful:
            a.proc.term(timeout=60)
        else:
            a.proc.kill9()
        return time.monotonic() - t0

    def restart_all(self, flags):
        """Both apiservers again with these flags on top of the common."""
        self.flags = list(COMMON_FLAGS) + list(flags)
        for a in self.apiservers:
            i = self.apiservers.index(a)
            self.orc.kill(i)
            self.stop_apiserver(a)
            self.start_apiserver(a)
            self.orc.restore(i)

    def index(self, a):
        return self.apiservers.index(a)

    # -- clients -------------------------------------------------------
    def kubeconfig(self, user, way):
        path = os.path.join(self.work, "kubeconfig-%s-%s" % (user, way.name))
        return E.write_kubeconfig(path, way.url, user,
                                  ca_file=os.path.join(self.pki, "ca.crt"),
                                  token=self.users[user]["token"])

    def admin_get(self, a, path, timeout=3):
        """GET path on apiserver a directly, as admin: (status, body)."""
        ctx = ssl.create_default_context(
            cafile=os.path.join(self.pki, "ca.crt"))
        req = urllib.request.Request(a.url + path, headers={
            "Authorization": "Bearer " + self.users["admin"]["token"]})
        try:
            with urllib.request.urlopen(req, timeout=timeout,
                                        context=ctx) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except OSError as e:
            return 0, str(e).encode()

    def close(self):
        for a in self.apiservers:
            if a.proc and a.proc.alive():
                try:
                    a.proc.p.send_signal(signal.SIGCONT)
                except OSError:
                    pass
                a.proc.term(timeout=20)
        for m in self.members:
            if m.proc and m.proc.alive():
                m.proc.p.send_signal(signal.SIGCONT)
                m.proc.term(timeout=20)
        for b in [getattr(self, "lb", None), getattr(self, "orc", None)] + \
                list(getattr(self, "front", [])):
            if b:
                b.close()
        for m in self.members:
            if m.proxy:
                m.proxy.close()


class History(H.LeaseHistory):
    """lease_history's record, which may re-list after a 410 only while
    `quiet` is set: while no apiserver can take a write (both down, their
    ways in closed), nothing can be missed between the last version seen
    and the list.  Every such re-list is counted.  Each identity here is
    one process: a holder's new acquireTime over its own live term goes
    on in it (lease_history.terms, one_process)."""

    quiet = False
    relists = 0

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.one_process = True

    def _add(self, kind, obj):
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        name = (obj.get("metadata") or {}).get("name")
        with self.lock:
            if kind == "LISTED" and any(
                    v.rv == rv for v in self.by_name.get(name, [])):
                return
        super()._add(kind, obj)

    def _watch_once(self):
        super()._watch_once()
        if getattr(self, "gone", False) and self.quiet:
            self.gone = False
            self.stop_ev.clear()
            self.relists += 1
            c, r = self._get("", 10)
            body = r.read()
            c.close()
            if r.status != 200:
                raise ValueError("relist: %d" % r.status)
            lst = json.loads(body)
            for obj in lst.get("items", []):
                self._add("LISTED", obj)
            self.rv = lst["metadata"]["resourceVersion"]
