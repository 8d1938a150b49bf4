#!/usr/bin/env python3
"""report -- summarise the figures the fault suite measured.

    FAULTS_RESULTS=/tmp/r.jsonl make faults    (run it N times)
    python3 test/faults/report.py /tmp/r.jsonl

prints one Markdown table row per figure: runs, worst (the maximum, or
the minimum for a ">" / ">=" bound), best, mean and the bound."""

import json
import sys
from collections import OrderedDict


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: report.py RESULTS.jsonl\n")
        return 2
    rows = OrderedDict()
    with open(argv[1]) as f:
        for ln in f:
            if not ln.strip():
                continue
            m = json.loads(ln)
            rows.setdefault((m["row"], m["what"]), []).append(m)
    key = lambda k: (k[0][0] != "F", int(k[0][1:]) if k[0][1:].isdigit()
                     else 99, k[0], k[1])
    print("| row | figure | runs | worst | best | mean | bound |")
    print("|---|---|---|---|---|---|---|")
    for (row, what) in sorted(rows, key=key):
        ms = rows[(row, what)]
        vs = [m["value"] for m in ms]
        m0 = ms[0]
        low = m0["cmp"] in (">", ">=")
        worst, best = (min(vs), max(vs)) if low else (max(vs), min(vs))
        unit = m0["unit"]
        fmt = (lambda v: "%.3f %s" % (v, unit)) if unit else \
            (lambda v: "%g" % v)
        bound = "" if m0["bound"] is None else "%s %s" % (
            m0["cmp"], fmt(m0["bound"]).strip())
        print("| %s | %s | %d | %s | %s | %s | %s |" % (
            row, what, len(vs), fmt(worst).strip(), fmt(best).strip(),
            fmt(sum(vs) / len(vs)).strip(), bound))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
