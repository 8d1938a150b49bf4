"""Check `make install` and the man pages it installs.

`make install DESTDIR=...` must put exactly three files under DESTDIR:
the daemon in $(PREFIX)/sbin and the pages leaderd(8) and
leaderd.yaml(5) under $(PREFIX)/share/man, with PREFIX /usr/local unless
given.  The pages must name every flag of the longopts of
cmd/leaderd/main.c (the daemon) and cmd/leaderd/ctl.c (the control
commands) and every key of lib/config.c's table, so none can grow
without its manual.
"""

import os
import re
import subprocess

import pytest

from deploy_helpers import ROOT, need_tool

MAN8 = ROOT / "docs" / "man" / "leaderd.8"
MAN5 = ROOT / "docs" / "man" / "leaderd.yaml.5"


def make_install(destdir, *args):
    """Run make install into destdir, outside any calling make's flags."""
    need_tool("make", "install make (build-essential)")
    env = {k: v for k, v in os.environ.items()
        if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    run = subprocess.run(["make", "-s", "-C", str(ROOT), "install",
        f"DESTDIR={destdir}", *args], env=env, capture_output=True,
        text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr


def installed(destdir):
    """Every file under destdir, as {relative path: mode}."""
    return {str(p.relative_to(destdir)): p.stat().st_mode & 0o7777
        for p in destdir.rglob("*") if p.is_file()}


def test_install_puts_three_files_under_destdir(tmp_path):
    make_install(tmp_path)
    assert installed(tmp_path) == {
        "usr/local/sbin/leaderd": 0o755,
        "usr/local/share/man/man8/leaderd.8": 0o644,
        "usr/local/share/man/man5/leaderd.yaml.5": 0o644,
    }
    base = tmp_path / "usr" / "local"
    assert (base / "sbin" / "leaderd").read_bytes() == \
        (ROOT / "leaderd").read_bytes()
    assert (base / "share/man/man8/leaderd.8").read_bytes() == \
        MAN8.read_bytes()
    assert (base / "share/man/man5/leaderd.yaml.5").read_bytes() == \
        MAN5.read_bytes()


def test_install_honours_prefix(tmp_path):
    make_install(tmp_path, "PREFIX=/usr")
    assert set(installed(tmp_path)) == {"usr/sbin/leaderd",
        "usr/share/man/man8/leaderd.8",
        "usr/share/man/man5/leaderd.yaml.5"}


def man_text(path):
    """A page's source with roff's escaped hyphens made plain."""
    return path.read_text().replace("\\-", "-")


def source(pattern):
    """The one file under the tree matching pattern (lib/ may be split
    into folders)."""
    found = sorted(ROOT.glob(pattern))
    assert len(found) == 1, f"{pattern}: {found}"
    return found[0].read_text()


def longopts(path):
    """The long option names of the longopts[] table in path."""
    m = re.search(r"longopts\[\]\s*=\s*\{(.*?)\n\};", source(path), re.S)
    assert m, f"no longopts in {path}"
    return re.findall(r'\{\s*"([a-z-]+)"', m.group(1))


def test_leaderd_8_names_every_flag():
    daemon, ctl = longopts("cmd/leaderd/main.c"), longopts("cmd/leaderd/ctl.c")
    assert len(daemon) > 20
    assert {"json", "to", "timeout"} <= set(ctl)
    page = man_text(MAN8)
    missing = [f for f in daemon + ctl if not re.search(
        rf"^\.It Fl (?:.*, Fl )?-{re.escape(f)}(?![\w-])", page, re.M)]
    assert not missing, f"leaderd.8 has no .It entry for --{missing}"


def test_leaderd_yaml_5_names_every_key():
    text = source("lib/**/config.c")
    keys = re.findall(r'^\s*\{\s*"([a-z_.]+)",\s*CONFIG_', text, re.M)
    assert len(keys) > 20
    page = man_text(MAN5)
    missing = [k for k in keys if not re.search(
        rf"^\.It Cm {re.escape(k)} Ar ", page, re.M)]
    assert not missing, f"leaderd.yaml.5 has no .It entry for {missing}"


def test_man_pages_lint_clean():
    mandoc = need_tool("mandoc", "install mandoc (make deps)")
    run = subprocess.run([mandoc, "-T", "lint", "-W", "warning",
        str(MAN8), str(MAN5)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
