"""make bench-scale's harness (test/bench/scale.py) in seconds: the
local fan-out at 100 streams and two elections per sidecar, on the
test API server; its tables are printed whole.  Figures are never
asserted (make bench-scale prints them).  The streams' reader is
$LEADERD_STREAMREAD (make integration builds it), else
build/bench/streamread."""

import os
import subprocess
import sys

import harness

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_bench_scale_smoke():
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "test", "bench", "scale.py"),
         "--leaderd", harness.leaderd_binary(), "--smoke"],
        capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    out = p.stdout
    assert "3. local fan-out" in out, out
    row = [ln for ln in out.splitlines() if ln.startswith("| 100 |")]
    assert len(row) == 1 and len(row[0].split("|")) == 15, out
    assert "| 1 leaderd, 2 elections | 1 |" in out, out
