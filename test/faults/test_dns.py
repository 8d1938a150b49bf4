"""F43 (issue 27 item 6): the API server's host name stops resolving.

How, honestly and without LD_PRELOAD: each leaderd runs in a mount
namespace of its own (`unshare -m -r`, an unprivileged user namespace)
in which a hosts file the test owns is bind-mounted over /etc/hosts.
leaderd (libcurl, glibc's getaddrinfo through nsswitch's "files")
resolves the kubeconfig's server name, kube-api.leaderd.test, exactly as
it would in a pod; the test rewrites that file in place (the bind mount
follows the inode) to make the name resolve or not.  The serving
certificate names it (subjectAltName DNS:kube-api.leaderd.test).

libcurl keeps a resolved address 60 s (CURLOPT_DNS_CACHE_TIMEOUT's
default; leaderd does not change it) and reuses its connections, so a
name that stops resolving under a running leader changes nothing for a
minute; what a failed lookup does is seen on an instance that has never
resolved it.

Timings: lease_duration 3s, renew_deadline 2s, retry_period 500ms,
request_timeout 1s (faultlib.py)."""

import os
import shutil
import signal
import stat
import subprocess
import time

import pytest

import fakeapi
from faultlib import (FAILOVER, POLL, RP, SLACK, START, assert_waited_ld,
                      requests_of, terms_ok, wait_until)

NAME = "kube-api.leaderd.test"
LOCAL = "127.0.0.1 localhost\n::1 localhost\n"


def _userns_ok():
    if shutil.which("unshare") is None:
        return False
    p = subprocess.run(["unshare", "-m", "-r", "true"],
                       capture_output=True, timeout=10)
    return p.returncode == 0


def _wrapped(cluster, api, name, hosts_text):
    """A leaderd whose /etc/hosts is its own file; returns (inst, path)."""
    inst = cluster.new(name, proxied=False)
    hosts = os.path.join(inst.dir, "hosts")
    with open(hosts, "w") as f:
        f.write(hosts_text)
    wrapper = os.path.join(inst.dir, "leaderd-ns")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\n"
                "exec unshare -m -r sh -c 'mount --bind \"$1\" /etc/hosts "
                "&& shift && exec \"$@\"' sh %s %s \"$@\"\n"
                % (hosts, inst.binary))
    os.chmod(wrapper, stat.S_IRWXU)
    inst.binary = wrapper
    api.write_kubeconfig(inst.kubeconfig, token_file=inst.token_path,
                         user=name, namespace=inst.namespace,
                         server="https://%s:%d" % (NAME, api.port))
    return inst, hosts


def _rewrite(path, text):
    with open(path, "r+") as f:     # in place: the bind mount keeps the inode
        f.truncate(0)
        f.write(text)


def test_f43_api_host_name_stops_resolving(cluster, api, measure):
    """F43: a resolves the API host name and leads; b starts where it
    does not resolve.  Bound: b never claims, stays up (/leader answers,
    the name's failure logged), and tries at most every retry_period
    (no tight loop: at most 2.2 / RP lookups a second); once the name
    resolves again b follows a within POLL + SLACK.  Then a's name stops
    resolving and its connections are closed: a keeps the lease (its
    resolved address is cached); a killed, b takes over within FAILOVER,
    not before LD after a's last renew; S1 and the terms."""
    if not _userns_ok():
        pytest.fail("unshare -m -r is not permitted here: F43 needs an "
                    "unprivileged user and mount namespace")
    crt, key = fakeapi.issue_cert(api.dir, "named",
                                  san="DNS:%s,IP:127.0.0.1" % NAME)
    api.set_server_cert(crt, key)
    a, hosts_a = _wrapped(cluster, api, "a", LOCAL + "127.0.0.1 %s\n" % NAME)
    b, hosts_b = _wrapped(cluster, api, "b", LOCAL)
    a.start()
    wait_until(a.is_leader, START + POLL, what="a to lead by its name")
    b.start()
    chk = cluster.checker([a, b])
    t0 = time.monotonic()
    time.sleep(4.0)
    dt = time.monotonic() - t0
    fails = b.log_count("Could not resolve host")
    reqs = requests_of(api, b)
    lead_b = chk.trues("b")
    assert 1 <= fails <= dt * 2.2 / RP + 2, \
        "%d failed lookups in %.1fs" % (fails, dt)
    assert b.alive() and b.leader() is not None, "b is down"
    assert reqs == [], "b reached the API server without its name: %s" % (
        reqs[:3],)
    assert lead_b == []
    _rewrite(hosts_b, LOCAL + "127.0.0.1 %s\n" % NAME)
    t_fix = time.monotonic()
    wait_until(lambda: (v := b.leader()) and v["name"] == a.identity,
               POLL + SLACK, what="b to follow a once its name resolves")
    follows = time.monotonic() - t_fix
    # a's name stops resolving; its connections are cut.
    _rewrite(hosts_a, LOCAL)
    t_gone = time.monotonic()
    api.close_connections()
    time.sleep(4 * RP)
    kept = a.is_leader()
    renews = [r for r in requests_of(api, a, since=t_gone, method="PUT")
              if r["code"] == 200]
    a_false = [s for s in chk.of("a", since=t_gone) if not s[3]]
    t_kill = time.monotonic()
    a.signal(signal.SIGKILL)
    s = wait_until(lambda: chk.takeover(t_kill, ["a"]), FAILOVER + 1.0,
                   what="b to take over")
    assert_waited_ld(s, a)
    chk.assert_s1()
    terms_ok(cluster)
    measure("F43", "b's failed lookups a second (unresolved)",
            fails / dt, unit="/s", bound=2.2 / RP + 0.5)
    measure("F43", "name resolves again -> b follows", follows,
            bound=POLL + SLACK)
    measure("F43", "a's renews in 2 s after its name went (cached)",
            len(renews), unit="")
    measure("F43", "takeover by b after kill -9", s[1] - t_kill,
            bound=FAILOVER)
    assert kept and renews and a_false == [], \
        "a lost the lease when its name stopped resolving: %d renews, " \
        "false samples %s" % (len(renews), a_false[:3])
    assert s[2] == "b"
