"""Loopback by name and by both families: "localhost" in --http and
--probes binds 127.0.0.1 and ::1 whatever /etc/hosts says, so a client
answers whichever family it tries first; a literal binds only itself; a
pod without an IPv6 loopback still starts, on 127.0.0.1, and says so.

Some cases run leaderd under its own /etc/hosts (unshare -m and a bind
mount) or in its own network namespace (unshare -n); they are skipped,
with the reason, where the machine does not allow it."""

import json
import os
import shutil
import socket
import subprocess

import pytest

from harness import free_port, wait_until

# A client that resolves "localhost" and tries only the first address,
# as some JVM and Go setups do; prints the address and the status.
FIRST_ONLY = r"""
import http.client, socket, sys
port = int(sys.argv[1])
fam, _, _, _, sa = socket.getaddrinfo("localhost", port, 0,
                                      socket.SOCK_STREAM)[0]
s = socket.socket(fam, socket.SOCK_STREAM)
s.settimeout(2)
s.connect(sa)
s.sendall(b"GET /leader HTTP/1.1\r\nHost: localhost:%d\r\n"
          b"Connection: close\r\n\r\n" % port)
data = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    data += b
print(sa[0], data.split(b" ", 2)[1].decode())
"""

HOSTS = {
    "v4only": "127.0.0.1 localhost\n",
    "v6only": "::1 localhost\n",
    "v6first": "::1 localhost\n127.0.0.1 localhost\n",
}


def get_leader(family, addr, port):
    """Status of GET /leader over a socket of family to addr."""
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect((addr, port))
        s.sendall(b"GET /leader HTTP/1.1\r\nHost: localhost:%d\r\n"
                  b"Connection: close\r\n\r\n" % port)
        data = b""
        while True:
            b = s.recv(4096)
            if not b:
                break
            data += b
    finally:
        s.close()
    st = int(data.split(b" ", 2)[1])
    body = data.split(b"\r\n\r\n", 1)[1]
    return st, body


def curl(family_flag, url):
    r = subprocess.run(["curl", "-sS", family_flag, "--max-time", "3",
                        "-o", "-", "-w", "\n%{http_code}", url],
                       capture_output=True, timeout=10)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def have_ipv6_loopback():
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.bind(("::1", 0))
        s.close()
        return True
    except OSError:
        return False


def can_unshare(flag):
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", flag, "true"], capture_output=True,
                          timeout=10).returncode == 0


def assert_both_families(inst, port):
    for fam, addr in ((socket.AF_INET, "127.0.0.1"),
                      (socket.AF_INET6, "::1")):
        st, body = get_leader(fam, addr, port)
        assert st == 200, (addr, body)
        assert json.loads(body)["name"] == inst.identity
    for flag in ("-4", "-6"):
        rc, out, err = curl(flag, "http://localhost:%d/leader" % port)
        assert rc == 0 and out.endswith("\n200"), (flag, rc, out, err)


def start_http(cluster, host, **kw):
    """Start "a" with --http host:PORT on the port the harness polls."""
    a = cluster.new("a", **kw)
    a.args += ["--http", "%s:%d" % (host, a.port)]
    return a.start(), a.port


@pytest.fixture
def need_v6():
    if not have_ipv6_loopback():
        pytest.skip("this machine has no IPv6 loopback (::1)")


def test_localhost_binds_both_loopbacks(cluster, need_v6):
    a, port = start_http(cluster, "localhost")
    wait_until(a.is_leader, 5, what="a to lead")
    assert_both_families(a, port)
    r = subprocess.run(["python3", "-c", FIRST_ONLY, str(port)],
                       capture_output=True, timeout=10)
    assert r.returncode == 0 and r.stdout.split()[1] == b"200", r
    log = a.log()
    assert "listening on 127.0.0.1:%d" % port in log
    assert "listening on [::1]:%d" % port in log


def hosts_wrapper(tmp_path, kind):
    """A command prefix that runs its argument under an /etc/hosts that
    maps localhost as kind says."""
    if not can_unshare("-m"):
        pytest.skip("cannot make a mount namespace here (unshare -m)")
    hosts = tmp_path / ("hosts-" + kind)
    hosts.write_text(HOSTS[kind])
    return ["unshare", "-m", "sh", "-c",
            'mount --bind "$0" /etc/hosts && exec "$@"', str(hosts)]


@pytest.mark.parametrize("kind", sorted(HOSTS))
def test_localhost_whatever_etc_hosts_says(cluster, tmp_path, need_v6, kind):
    """The pod's /etc/hosts may map localhost to one family only, or to
    ::1 first: leaderd binds both all the same, and a client that takes
    the first address of its own lookup gets an answer."""
    wrap = hosts_wrapper(tmp_path, kind)
    script = tmp_path / "leaderd-wrap"
    script.write_text("#!/bin/sh\nexec %s \"$@\"\n" % " ".join(
        "'%s'" % w for w in wrap + [os.path.abspath(cluster_binary())]))
    script.chmod(0o755)
    a, port = start_http(cluster, "localhost", binary=str(script))
    wait_until(a.is_leader, 5, what="a to lead")
    assert_both_families(a, port)
    r = subprocess.run(wrap + ["python3", "-c", FIRST_ONLY, str(port)],
                       capture_output=True, timeout=10)
    assert r.returncode == 0, r
    addr, st = r.stdout.split()
    assert st == b"200", r
    assert addr == (b"127.0.0.1" if kind == "v4only" else b"::1")


def cluster_binary():
    from harness import leaderd_binary
    return leaderd_binary()


def test_literal_binds_only_itself(cluster, need_v6):
    a, port = start_http(cluster, "127.0.0.1")
    st, _ = get_leader(socket.AF_INET, "127.0.0.1", port)
    assert st == 200
    with pytest.raises(ConnectionRefusedError):
        get_leader(socket.AF_INET6, "::1", port)
    assert "[::1]" not in a.log()


def test_probes_localhost_binds_both(cluster, need_v6):
    pport = free_port()
    a = cluster.start("a", args=["--probes", "localhost:%d" % pport])
    wait_until(a.is_leader, 5, what="a to lead")
    for flag in ("-4", "-6"):
        rc, out, err = curl(flag, "http://localhost:%d/healthz" % pport)
        assert rc == 0 and out.endswith("\n200"), (flag, rc, out, err)
        rc, out, err = curl(flag, "http://localhost:%d/leader" % pport)
        assert rc == 0 and out.endswith("\n404"), (flag, rc, out, err)
    log = a.log()
    assert "listening on 127.0.0.1:%d (probes only)" % pport in log
    assert "listening on [::1]:%d (probes only)" % pport in log


# Run inside a fresh network namespace (only lo, port 4040 free): the
# default listen, with or without ::1.  Prints one line per check.
NETNS = r"""
set -u
ip link set lo up
if [ "$NOV6" = 1 ]; then
	sysctl -q -w net.ipv6.conf.lo.disable_ipv6=1 || exit 97
fi
"$LEADERD" -f "$CONF" 2>"$LOG" &
pid=$!
i=0
until curl -s -4 -o /dev/null --max-time 1 http://127.0.0.1:4040/healthz; do
	i=$((i + 1))
	if [ $i -gt 50 ] || ! kill -0 $pid 2>/dev/null; then
		echo "not up"; kill $pid 2>/dev/null; exit 98
	fi
	sleep 0.1
done
for f in -4 -6; do
	echo "curl$f $(curl -s $f -o /dev/null --max-time 2 \
	    -w '%{http_code}' http://localhost:4040/leader)"
done
echo "first $(python3 -c "$FIRST_ONLY" 4040 2>/dev/null)"
kill $pid
wait $pid
echo "exit $?"
"""


@pytest.mark.parametrize("nov6", [False, True], ids=["dual", "no-ipv6"])
def test_default_listen_in_own_netns(cluster, tmp_path, nov6):
    """The default listen.http (localhost:4040) in a pod of its own:
    both families when the pod has ::1; 127.0.0.1 and one info line
    about ::1 when it does not."""
    if not can_unshare("-n"):
        pytest.skip("cannot make a network namespace here (unshare -n)")
    a = cluster.new("a")
    conf = tmp_path / "default.yaml"
    conf.write_text("".join(ln for ln in open(a.config_path)
                            if not ln.startswith("  http:")))
    log = tmp_path / "netns.log"
    env = dict(os.environ, NOV6="1" if nov6 else "0", LEADERD=a.binary,
               CONF=str(conf), LOG=str(log), FIRST_ONLY=FIRST_ONLY)
    r = subprocess.run(["unshare", "-n", "sh", "-c", NETNS], env=env,
                       capture_output=True, timeout=30)
    if r.returncode == 97:
        pytest.skip("cannot disable IPv6 on lo in a network namespace")
    out = r.stdout.decode()
    text = log.read_text()
    assert r.returncode == 0, (out, r.stderr, text)
    assert "listening on 127.0.0.1:4040" in text
    assert "curl-4 " in out and "curl-4 000" not in out, (out, text)
    assert "exit 0" in out, (out, text)
    if nov6:
        assert "listening on [::1]" not in text
        assert "localhost:4040: skipped ::1" in text, text
        assert "curl-6 000" in out
        assert "first 127.0.0.1 " in out, out
    else:
        assert "listening on [::1]:4040" in text
        assert "curl-6 " in out and "curl-6 000" not in out, (out, text)
        assert "first " in out and " 000" not in out, out
