"""leaderd's command line and configuration checks: bad configs exit 2
with file:line:col, -n says "configuration OK" for the shipped examples,
flags override the file, --version and --help work."""

import os
import re
import subprocess

import pytest

from harness import ROOT, free_port

ENV = {"POD_NAME": "pod-0", "POD_NAMESPACE": "apps"}

GOOD = """\
identity: me
lock:
  type: leases
  namespace: default
  name: my-app
lease_duration: 3s
renew_deadline: 2s
retry_period: 500ms
release_on_cancel: true
listen:
  http: 127.0.0.1:4040
  unix: ""
kubernetes:
  kubeconfig: ""
  request_timeout: 1s
log:
  level: info
  format: text
"""
SHARDS_GOOD = GOOD.replace("  name: my-app\n", "")


def run(bin_, args, env=None, timeout=10):
    e = dict(os.environ)
    e.pop("KUBERNETES_SERVICE_HOST", None)
    e.update(ENV)
    e.update(env or {})
    p = subprocess.run([bin_] + list(args), stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=e, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), \
        p.stderr.decode(errors="replace")


def replace(text, old, new):
    assert old in text, old
    return text.replace(old, new, 1)


def line_of(text, needle, nth=1):
    n = 0
    for i, ln in enumerate(text.splitlines(), 1):
        if needle in ln:
            n += 1
            if n == nth:
                return i, ln
    raise AssertionError(needle)


def cols(ln, *needles):
    """1-based columns where the given substrings start in line ln."""
    return {ln.index(n) + 1 for n in needles if n in ln}


# (id, config text, [(needle marking the offending line, nth occurrence,
#   substrings whose start column is acceptable)], what the message is about)
CASES = [
    ("unknown-top-key", GOOD + "bogus: 1\n", [("bogus:", 1, ("bogus",))],
     ("bogus",)),
    ("unknown-nested-key", replace(GOOD, "  name: my-app\n",
                                   "  name: my-app\n  nmae: typo\n"),
     [("nmae:", 1, ("nmae",))], ("nmae",)),
    ("bad-duration", replace(GOOD, "lease_duration: 3s", "lease_duration: 3x"),
     [("lease_duration:", 1, ("lease_duration", "3x"))],
     ("3x", "duration")),
    ("renew-not-below-lease", replace(GOOD, "renew_deadline: 2s",
                                      "renew_deadline: 3s"),
     [("renew_deadline:", 1, ("renew_deadline", "3s")),
      ("lease_duration:", 1, ("lease_duration", "3s"))], ("renew_deadline",)),
    ("renew-not-above-jittered-retry", replace(GOOD, "retry_period: 500ms",
                                               "retry_period: 2s"),
     [("renew_deadline:", 1, ("renew_deadline", "2s")),
      ("retry_period:", 1, ("retry_period", "2s"))], ("retry_period",)),
    ("lease-not-whole-seconds",
     replace(GOOD, "lease_duration: 3s", "lease_duration: 2500ms"),
     [("lease_duration:", 1, ("lease_duration", "2500ms"))],
     ("lease_duration",)),
    ("zero-lease", replace(GOOD, "lease_duration: 3s", "lease_duration: 0s"),
     [("lease_duration:", 1, ("lease_duration", "0s"))], ("lease_duration",)),
    ("timeout-not-below-renew",
     replace(GOOD, "request_timeout: 1s", "request_timeout: 2s"),
     [("request_timeout:", 1, ("request_timeout", "2s")),
      ("renew_deadline:", 1, ("renew_deadline", "2s"))],
     ("request_timeout",)),
    ("bool-wrong", replace(GOOD, "release_on_cancel: true",
                           "release_on_cancel: maybe"),
     [("release_on_cancel:", 1, ("release_on_cancel", "maybe"))],
     ("maybe", "release_on_cancel", "bool")),
    ("map-expected", replace(GOOD, "log:\n  level: info\n  format: text\n",
                             "log: [info, text]\n"),
     [("log:", 1, ("log", "["))], ("log", "map")),
    ("lock-type", replace(GOOD, "  type: leases", "  type: configmap"),
     [("type:", 1, ("type", "configmap"))], ("configmap", "leases")),
    ("log-level", replace(GOOD, "  level: info", "  level: loud"),
     [("level:", 1, ("level", "loud"))], ("loud", "level")),
    ("unset-env", replace(GOOD, "identity: me",
                          "identity: ${LEADERD_ITEST_UNSET_VAR}"),
     [("identity:", 1, ("identity", "${"))], ("LEADERD_ITEST_UNSET_VAR",)),
    ("duplicate-key", GOOD + "lease_duration: 4s\n",
     [("lease_duration:", 2, ("lease_duration",))],
     ("lease_duration", "duplicate")),
    ("bad-listen", replace(GOOD, "  http: 127.0.0.1:4040",
                           "  http: not-an-address"),
     [("http:", 1, ("http", "not-an-address"))],
     ("not-an-address", "http", "listen")),
    ("empty-lock-name", replace(GOOD, "  name: my-app", '  name: ""'),
     [("name:", 1, ("name", '""'))], ("name",)),
]


@pytest.mark.parametrize("cid,text,where,about", CASES,
                         ids=[c[0] for c in CASES])
def test_bad_config_exit_2_with_position(leaderd_bin, tmp_path, cid, text,
                                         where, about):
    path = str(tmp_path / ("%s.yaml" % cid))
    with open(path, "w") as f:
        f.write(text)
    positions = []
    for needle, nth, starts in where:
        ln_no, ln = line_of(text, needle, nth)
        positions.append((ln_no, cols(ln, *starts)))
    for args in (["-n", "-f", path], ["-f", path]):
        rc, out, err = run(leaderd_bin, args)
        assert rc == 2, (args, rc, out, err)
        text_out = err if args[0] == "-f" else out + err
        found = re.findall(re.escape(path) + r":(\d+):(\d+):", text_out)
        assert found, "no %s:line:col in the output of leaderd %s:\n%s" % (
            path, " ".join(args), text_out)
        good = []
        for x in text_out.splitlines():
            m = re.search(re.escape(path) + r":(\d+):(\d+):", x)
            if m and any(int(m.group(1)) == pl and int(m.group(2)) in pc
                         for pl, pc in positions):
                good.append(x)
        assert good, "wanted line:col in %s, got %s:\n%s" % (
            positions, found, text_out)
        assert any(a.lower() in x.lower() for x in good for a in about), (
            "the message should mention one of %s:\n%s" % (about, good))
        assert "configuration OK" not in out


def test_every_error_reported(leaderd_bin, tmp_path):
    text = replace(GOOD, "identity: me", "identity: me\nbogus: 1")
    text = replace(text, "retry_period: 500ms", "retry_period: 5zz")
    path = str(tmp_path / "two.yaml")
    with open(path, "w") as f:
        f.write(text)
    rc, out, err = run(leaderd_bin, ["-n", "-f", path])
    assert rc == 2
    lines = {int(x) for x in re.findall(re.escape(path) + r":(\d+):\d+:",
                                        out + err)}
    assert {line_of(text, "bogus")[0], line_of(text, "retry_period")[0]} \
        <= lines, out + err


def test_missing_config_file(leaderd_bin, tmp_path):
    path = str(tmp_path / "nope.yaml")
    rc, out, err = run(leaderd_bin, ["-n", "-f", path])
    assert rc == 2 and path in out + err


@pytest.mark.parametrize("name", ["leaderd.yaml", "minimal.yaml"])
def test_shipped_configs_pass_check(leaderd_bin, name):
    path = os.path.join(ROOT, "config", name)
    assert os.path.exists(path), path
    rc, out, err = run(leaderd_bin, ["-n", "-f", path])
    assert rc == 0, (out, err)
    assert "configuration OK" in out + err


def test_check_verbose_prints_effective_config_with_flags(leaderd_bin,
                                                          tmp_path):
    path = str(tmp_path / "good.yaml")
    with open(path, "w") as f:
        f.write(GOOD)
    rc, out, err = run(leaderd_bin, ["-n", "-v", "-f", path,
                                     "--lease-duration", "20s",
                                     "--renew-deadline", "15s",
                                     "--election", "flagged"])
    assert rc == 0, (out, err)
    assert "configuration OK" in out + err
    assert re.search(r"^lease_duration: 20s(\s+#.*)?$", out, re.M), out
    assert re.search(r"^renew_deadline: 15s(\s+#.*)?$", out, re.M), out
    assert re.search(r"^\s+name: \"?flagged\"?(\s+#.*)?$", out, re.M), out
    assert re.search(r"^retry_period: 500ms(\s+#.*)?$", out, re.M), out


def test_classic_flags_and_ttl(leaderd_bin):
    rc, out, err = run(leaderd_bin, ["-n", "-v", "--election", "classic",
                                     "--election-namespace", "kube-apps",
                                     "--id", "pod-7", "--http",
                                     "127.0.0.1:4041", "--ttl", "8s"])
    assert rc == 0, (out, err)
    assert re.search(r"^identity: \"?pod-7\"?(\s+#.*)?$", out, re.M), out
    assert re.search(r"^\s+namespace: \"?kube-apps\"?(\s+#.*)?$", out, re.M), out
    assert re.search(r"^\s+name: \"?classic\"?(\s+#.*)?$", out, re.M), out
    assert re.search(r"^\s+http: \"?127\.0\.0\.1:4041\"?(\s+#.*)?$", out, re.M), out
    assert re.search(r"^lease_duration: 8s(\s+#.*)?$", out, re.M), out
    assert re.search(r"^renew_deadline: 4s(\s+#.*)?$", out, re.M), out
    assert re.search(r"^retry_period: 2s(\s+#.*)?$", out, re.M), out


def test_env_defaults(leaderd_bin):
    rc, out, err = run(leaderd_bin, ["-n", "-v", "--election", "x"],
                       env={"POD_NAME": "pod-from-env",
                            "POD_NAMESPACE": "ns-from-env"})
    assert rc == 0, (out, err)
    assert re.search(r"^identity: \"?pod-from-env\"?(\s+#.*)?$", out, re.M), out
    assert re.search(r"^\s+namespace: \"?ns-from-env\"?(\s+#.*)?$", out, re.M), out


def test_bad_flag_values(leaderd_bin):
    rc, out, err = run(leaderd_bin, ["-n", "--election", "x",
                                     "--lease-duration", "3x"])
    assert rc == 2 and "--lease-duration" in out + err, (out, err)
    rc, out, err = run(leaderd_bin, ["--no-such-flag"])
    assert rc == 2, (out, err)


def test_unreadable_token_file_exit_2(leaderd_bin, tmp_path, api):
    tok = str(tmp_path / "missing-token")
    kc = api.write_kubeconfig(str(tmp_path / "kc"), token_file=tok)
    rc, out, err = run(leaderd_bin, ["--election", "x", "--id", "a",
                                     "--http", "127.0.0.1:%d" % free_port(),
                                     "--kubeconfig", kc], timeout=10)
    assert rc == 2, (rc, out, err)
    assert tok in err, err


def test_missing_kubeconfig_exit_2(leaderd_bin, tmp_path):
    kc = str(tmp_path / "no-kubeconfig")
    rc, out, err = run(leaderd_bin, ["--election", "x", "--id", "a",
                                     "--http", "127.0.0.1:%d" % free_port(),
                                     "--kubeconfig", kc], timeout=10)
    assert rc == 2, (rc, out, err)
    assert kc in err, err


def test_not_in_cluster_says_the_fix_once(leaderd_bin):
    """Outside a cluster without a kubeconfig: exit 2, and the way out
    (kubernetes.kubeconfig or --kubeconfig) said once."""
    rc, out, err = run(leaderd_bin, ["--election", "x", "--id", "a",
                                     "--http", "127.0.0.1:%d" % free_port()],
                       env={"KUBERNETES_SERVICE_PORT": ""}, timeout=10)
    assert rc == 2, (rc, out, err)
    assert "leaderd: in-cluster credentials: not running in a cluster" \
        in err, err
    assert err.count("kubernetes.kubeconfig") == 1, err


def test_check_verbose_prints_the_stop_budget(leaderd_bin):
    """-n -v prints the shutdown_timeout a stop gets: in run mode
    5s + run.grace + 1s unless shutdown_timeout is given."""
    rc, out, err = run(leaderd_bin, ["-n", "-v", "--election", "x",
                                     "run", "--grace", "2s", "--", "true"])
    assert rc == 0, (out, err)
    assert re.search(r"^shutdown_timeout: 8s  # 5s \+ run\.grace \+ 1s",
                     out, re.M), out
    rc, out, err = run(leaderd_bin, ["-n", "-v", "--election", "x"])
    assert re.search(r"^shutdown_timeout: 5s$", out, re.M), out
    rc, out, err = run(leaderd_bin, ["-n", "-v", "--election", "x",
                                     "--shutdown-timeout", "30s", "run",
                                     "--", "true"])
    assert re.search(r"^shutdown_timeout: 30s  # --shutdown-timeout$",
                     out, re.M), out


def test_version_and_help(leaderd_bin):
    rc, out, err = run(leaderd_bin, ["--version"])
    assert rc == 0, (out, err)
    assert re.search(r"leaderd\D*\d+\.\d+\.\d+", out + err), out + err
    # The source revision beside the version: the commit it was built
    # from (this checkout's, as make test builds it), or "unknown".
    m = re.search(r"\(revision ([0-9a-f]{12})(-dirty)?\)|\(revision unknown\)",
                  out)
    assert m, out
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                          text=True, cwd=os.path.dirname(__file__))
    if head.returncode == 0:
        assert m.group(1) and head.stdout.startswith(m.group(1)), \
            (out, head.stdout)
    rc, out, err = run(leaderd_bin, ["--help"])
    assert rc == 0, (out, err)
    assert "--config" in out + err and "--election" in out + err


def test_shards_checked_by_n_lock_name_refused(leaderd_bin, tmp_path):
    # -n validates and prints the group and its write rate; the member
    # Lease is the first election, so a lock.name beside shards is
    # refused (exit 2, where it was given, and the fix).
    cfg = tmp_path / "shards.yaml"
    cfg.write_text(SHARDS_GOOD + "shards:\n  group: workers\n  count: 8\n")
    rc, out, err = run(leaderd_bin, ["-n", "-v", "-f", str(cfg)])
    assert rc == 0, (out, err)
    assert "shards:\n  group: workers" in out, out
    assert "Leases workers-0 .. workers-7, member Lease " \
        "workers-member-me" in out, out
    assert "lock leases/default/workers-member-me" in out, out
    # 8 shards and 8 members renewing every 500ms: 32 writes/s.
    assert "32.0 with 8 (limit 50)" in out, out
    text = GOOD + "shards:\n  group: workers\n  count: 8\n"
    cfg.write_text(text)
    rc, out, err = run(leaderd_bin, ["-f", str(cfg)], timeout=10)
    assert rc == 2, (rc, out, err)
    line, _ = line_of(text, "name: my-app")
    assert "%s:%d:9: lock.name cannot be given with shards" % (cfg, line) \
        in err, err
    assert "remove lock.name" in err, err


def test_shards_rate_refused_unless_forced(leaderd_bin, tmp_path):
    cfg = tmp_path / "shards.yaml"
    text = SHARDS_GOOD + "shards:\n  group: workers\n  count: 64\n"
    cfg.write_text(text)
    rc, out, err = run(leaderd_bin, ["-n", "-f", str(cfg)])
    assert rc == 2, (out, err)
    line, _ = line_of(text, "count: 64")
    assert "%s:%d:10: a group of 64 shards writes 256.0/s" % (cfg, line) \
        in err, err
    assert "limit of 50/s" in err and "retry_period 5s (25.6/s)" in err, err
    cfg.write_text(text + "  force: true\n")
    rc, out, err = run(leaderd_bin, ["-n", "-f", str(cfg)])
    assert rc == 0, (out, err)
    assert "forced" in out, out


def test_peer_environment_selects_only_without_leaderd_words(leaderd_bin,
                                                             tmp_path):
    """A peer's variable (K8S_AWAIT_ELECTION_ENABLED, ELECTOR_*), left
    over from a migration, selects that peer's command line only when
    argv is not leaderd's own (-f, -n, -v, run, a control word), and
    every selection or refusal says which variable did it; argv[0]
    k8s-await-election hands a control word to its command."""
    conf = tmp_path / "c.yaml"
    conf.write_text("identity: a\nlock: {name: x}\n")
    for var in ("K8S_AWAIT_ELECTION_ENABLED", "ELECTOR_LOG_FORMAT"):
        for args in (["-f", str(conf), "-n"], ["-n", "-v", "--election", "x"]):
            rc, out, err = run(leaderd_bin, args, env={var: "json"})
            assert rc == 0, (var, args, rc, out, err)
            assert "configuration OK" in out, out
            assert ("leaderd: %s in the environment is ignored: leaderd's "
                    "own flags or words were given" % var) in out, out
    # Without leaderd's words the variable selects its peer, and a
    # refusal names it.
    rc, out, err = run(leaderd_bin, ["--bogus"],
                       env={"ELECTOR_LOG_FORMAT": "json"})
    assert rc == 2, (rc, out, err)
    assert ("the command line is read as compat nais's, selected by "
            "ELECTOR_LOG_FORMAT in the environment") in err, err
    # k8s-await-election's argv[1..] is its command, control words too
    # (ENABLED unset: exec'd with no election).
    bindir = tmp_path / "bin"
    bindir.mkdir()
    os.symlink(leaderd_bin, bindir / "k8s-await-election")
    status = bindir / "status"
    status.write_text("#!/bin/sh\necho the command ran \"$@\"\nexit 7\n")
    status.chmod(0o755)
    e = dict(os.environ)
    e["PATH"] = "%s:%s" % (bindir, e.get("PATH", ""))
    e.pop("K8S_AWAIT_ELECTION_ENABLED", None)
    p = subprocess.run([str(bindir / "k8s-await-election"), "status", "-x"],
                       env=e, capture_output=True, text=True, timeout=10)
    assert p.returncode == 7, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == "the command ran -x\n", p.stdout
    # As leaderd, the same word is the control client (nothing listens:
    # exit 3), the variable notwithstanding.
    e["K8S_AWAIT_ELECTION_ENABLED"] = "1"
    p = subprocess.run([leaderd_bin, "status", "--http",
                        "127.0.0.1:%d" % free_port()],
                       env=e, capture_output=True, text=True, timeout=10)
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr)
