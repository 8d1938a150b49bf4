"""promql_names.py -- the metric names a PromQL expression reads, and the
expressions of leaderd's rules and dashboard (deploy/monitoring/).

No PromQL parser is at hand in Python, so the names are found by
elimination: string literals, label matchers ({...}), range and subquery
brackets ([5m]), Grafana variables ($name, ${name}), the label lists of
by/without/on/ignoring/group_left/group_right, numbers and durations,
function names (an identifier followed by '('), and keywords are
removed; every identifier left is a metric name.  test_promql_names
(run by check_rules.py) pins it on the expressions it must handle.
"""

import json
import re

import yaml

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right",
            "and", "or", "unless", "offset", "bool", "inf", "nan", "atan2"}
LIST_KEYWORDS = r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\("


def _strip(expr):
    s = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`', '""', expr)
    s = re.sub(r"\$\{[^}]*\}|\$\w+", "", s)
    s = re.sub(r"\{[^{}]*\}", "", s)
    s = re.sub(r"\[[^\]]*\]", "", s)
    s = re.sub(LIST_KEYWORDS + r"[^()]*\)", " ", s)
    return s


def metric_names(expr):
    """The set of metric names expr reads."""
    s = _strip(expr)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
        word = m.group(0)
        start = m.start()
        if start > 0 and (s[start - 1].isdigit() or s[start - 1] == "."):
            continue            # a number's exponent or a duration's unit
        rest = s[m.end():].lstrip()
        if rest.startswith("("):
            continue            # a function or an aggregation
        if word.lower() in KEYWORDS:
            continue
        names.add(word)
    return names


def rule_exprs(path):
    """[(what, expr)] of a rules file (groups:) or a PrometheusRule."""
    with open(path) as f:
        doc = yaml.safe_load(f)
    groups = doc["spec"]["groups"] if "spec" in doc else doc["groups"]
    return [("%s %s" % (g["name"], r.get("alert") or r.get("record")),
             r["expr"]) for g in groups for r in g["rules"]]


def dashboard_exprs(path):
    """[(what, expr)] of a Grafana dashboard: every panel's targets (rows'
    nested panels too) and every query variable."""
    with open(path) as f:
        dash = json.load(f)
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                out.append(("panel %r" % p.get("title"), t["expr"]))
            walk(p.get("panels", []))
    walk(dash["panels"])
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.fullmatch(r"\s*label_values\((.*),\s*\w+\)\s*", q)
        out.append(("variable %s" % v["name"], m.group(1) if m else q))
    return out
