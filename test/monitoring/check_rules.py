#!/usr/bin/env python3
"""check_rules.py -- leaderd's alerts, dashboard and runbook, checked
(make monitoring-test).

    check_rules.py --promtool BIN [--root DIR]
    check_rules.py --write [--root DIR]

Checks, in a few seconds:

  check     `promtool check rules` passes on deploy/monitoring's plain
            rules file and on the groups of its PrometheusRule;
  same      the PrometheusRule is the plain file's groups under a
            monitoring.coreos.com/v1 header, byte for byte as --write
            makes it;
  alerts    the alerts the issue names are there, each with a severity,
            a summary, a description and a runbook_url
            docs/runbook.md#<alert in lower case> whose heading exists;
  test      `promtool test rules test/monitoring/rules-test.yaml` passes;
  fire      each alert is expected to fire in some evaluation of that
            file and to stay quiet in another; with the alert's expr
            replaced by one that never fires, its firing evaluations
            fail, and with one that always fires, its quiet evaluations
            fail (so neither kind can pass by accident);
  dashboard deploy/monitoring/leaderd-dashboard.json is a dashboard whose
            panels have unique ids, a datasource and an expression each.

The metric names that the rules and the dashboard read are checked
against a live leaderd by test/integration/test_metrics.py
(test_dashboard_and_rules_read_exported_metrics).  --write regenerates
the PrometheusRule from the plain file.
"""

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from promql_names import metric_names  # noqa: E402

RULES = "deploy/monitoring/leaderd-rules.yaml"
PROMRULE = "deploy/monitoring/prometheusrule.yaml"
DASHBOARD = "deploy/monitoring/leaderd-dashboard.json"
RUNBOOK = "docs/runbook.md"
TESTS = "test/monitoring/rules-test.yaml"
REQUIRED = ["LeaderdNoLeader", "LeaderdTwoLeaders", "LeaderdLeaderFlapping",
            "LeaderdRenewFailing", "LeaderdAPIForbidden", "LeaderdLeaseStale",
            "LeaderdSplitElection", "LeaderdSplitLeaders"]
NEVER = "absent(vector(1))"     # an expression with no result, ever
ALWAYS = "vector(1)"            # one result at every evaluation

PROMRULE_HEAD = """\
# leaderd's alerts as a PrometheusRule for the Prometheus Operator
# (monitoring.coreos.com/v1).  Generated from leaderd-rules.yaml, the
# plain rules file, by `python3 test/monitoring/check_rules.py --write`;
# edit that file, not this one (make monitoring-test fails when they
# differ).  Label it as your Prometheus's ruleSelector asks
# (kube-prometheus-stack: release: <its release name>).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: leaderd
  labels:
    app.kubernetes.io/name: leaderd
    app.kubernetes.io/component: alerts
spec:
"""


class Failures:
    def __init__(self):
        self.items = []
        self.passed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.items.append(what)
            print("FAIL: %s" % what)


def promrule_text(root):
    """The PrometheusRule: the plain file's groups: block, indented."""
    with open(os.path.join(root, RULES)) as f:
        lines = f.read().splitlines()
    start = lines.index("groups:")
    body = ["  " + ln if ln else "" for ln in lines[start:]]
    return PROMRULE_HEAD + "\n".join(body) + "\n"


def promtool(binary, *args, cwd=None):
    p = subprocess.run([binary] + list(args), cwd=cwd, capture_output=True,
                       text=True)
    return p.returncode, p.stdout + p.stderr


def slug(heading):
    """A heading's anchor, as GitHub makes it."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    with open(path) as f:
        return {slug(m.group(1)) for m in
                re.finditer(r"^#+ (.+)$", f.read(), re.M)}


def alerts_of(groups):
    return {r["alert"]: r for g in groups for r in g["rules"] if "alert" in r}


def evaluations(tests):
    """{alert: (firing evaluations, quiet evaluations)} of a test file."""
    out = {}
    for t in tests["tests"]:
        for a in t.get("alert_rule_test", []):
            fire, quiet = out.setdefault(a["alertname"], ([], []))
            (fire if a.get("exp_alerts") else quiet).append(a)
    return out


def only(tests, alert, firing):
    """A copy of the test file keeping alert's firing (or quiet)
    evaluations alone, and the test groups that have one."""
    t = copy.deepcopy(tests)
    keep = []
    for g in t["tests"]:
        g["alert_rule_test"] = [
            a for a in g.get("alert_rule_test", [])
            if a["alertname"] == alert and bool(a.get("exp_alerts")) ==
            firing]
        g.pop("promql_expr_test", None)
        if g["alert_rule_test"]:
            keep.append(g)
    t["tests"] = keep
    return t


def run_tests(promtool_bin, rules_doc, tests_doc, tmp):
    """promtool test rules on the two documents; (rc, output)."""
    rp = os.path.join(tmp, "rules.yaml")
    tp = os.path.join(tmp, "tests.yaml")
    with open(rp, "w") as f:
        yaml.safe_dump(rules_doc, f, sort_keys=False)
    tests_doc = dict(tests_doc, rule_files=[rp])
    with open(tp, "w") as f:
        yaml.safe_dump(tests_doc, f, sort_keys=False)
    return promtool(promtool_bin, "test", "rules", tp)


def mutated(rules_doc, alert, expr):
    """The rules with alert's expr replaced; for ALWAYS, without its
    for: as well, so that it fires at the first evaluation."""
    d = copy.deepcopy(rules_doc)
    for g in d["groups"]:
        for r in g["rules"]:
            if r.get("alert") == alert:
                r["expr"] = expr
                if expr == ALWAYS:
                    r.pop("for", None)
    return d


def check_dashboard(root, fl):
    with open(os.path.join(root, DASHBOARD)) as f:
        dash = json.load(f)
    fl.check(dash.get("uid") and dash.get("title"), "dashboard: uid, title")
    ids, exprs = [], 0
    for p in dash["panels"]:
        ids.append(p["id"])
        fl.check("gridPos" in p, "dashboard: panel %s has a gridPos" % p["id"])
        if p["type"] == "row":
            continue
        fl.check(p.get("datasource", {}).get("uid") == "${datasource}",
                 "dashboard: panel %r uses the datasource variable"
                 % p["title"])
        fl.check(p.get("targets"), "dashboard: panel %r has targets"
                 % p["title"])
        for t in p.get("targets", []):
            exprs += 1
            fl.check(t.get("expr") and metric_names(t["expr"]),
                     "dashboard: panel %r target %s reads a metric"
                     % (p["title"], t.get("refId")))
    fl.check(len(ids) == len(set(ids)), "dashboard: panel ids unique")
    fl.check(exprs >= 10, "dashboard: at least 10 queries (%d)" % exprs)


def test_promql_names(fl):
    """The name finder on the shapes the rules and the dashboard use."""
    cases = [
        ('max by (namespace, name) (leader_election_master_status) == 0',
         {"leader_election_master_status"}),
        ('increase(leaderd_api_requests_total{code="403"}[5m]) > 0',
         {"leaderd_api_requests_total"}),
        ('histogram_quantile(0.99, sum by (verb, le) (rate(x_bucket'
         '{verb!="watch",name=~"$name"}[$__rate_interval])))', {"x_bucket"}),
        ('a * on (job, instance, name) group_left (lock) b unless on '
         '(job) c', {"a", "b", "c"}),
        ('label_replace(m, "app", "$1", "app_kubernetes_io_name", "(.+)")',
         {"m"}),
        ('time() - kube_lease_renew_time{namespace!~"kube-system"} > 1e2',
         {"kube_lease_renew_time"}),
        ('sum(rate(y[5m] offset 1h)) > bool 1', {"y"}),
    ]
    for expr, want in cases:
        got = metric_names(expr)
        fl.check(got == want, "metric_names(%r) = %s, want %s"
                 % (expr, sorted(got), sorted(want)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--promtool")
    ap.add_argument("--root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if args.write:
        with open(os.path.join(root, PROMRULE), "w") as f:
            f.write(promrule_text(root))
        print("wrote %s" % PROMRULE)
        return 0
    if not args.promtool:
        ap.error("--promtool BIN is needed (make monitoring-test builds it)")
    fl = Failures()
    test_promql_names(fl)

    with open(os.path.join(root, RULES)) as f:
        rules_doc = yaml.safe_load(f)
    with open(os.path.join(root, PROMRULE)) as f:
        text = f.read()
    prule = yaml.safe_load(text)
    fl.check(text == promrule_text(root),
             "%s is not what --write makes of %s: run python3 "
             "test/monitoring/check_rules.py --write" % (PROMRULE, RULES))
    fl.check(prule["apiVersion"] == "monitoring.coreos.com/v1" and
             prule["kind"] == "PrometheusRule", "PrometheusRule header")
    fl.check(prule["spec"]["groups"] == rules_doc["groups"],
             "the PrometheusRule's groups are the plain file's")

    rc, out = promtool(args.promtool, "check", "rules",
                       os.path.join(root, RULES))
    fl.check(rc == 0, "promtool check rules %s:\n%s" % (RULES, out))
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "prometheusrule-spec.yaml")
        with open(spec, "w") as f:
            yaml.safe_dump(prule["spec"], f, sort_keys=False)
        rc, out = promtool(args.promtool, "check", "rules", spec)
        fl.check(rc == 0, "promtool check rules on %s's spec:\n%s"
                 % (PROMRULE, out))

    alerts = alerts_of(rules_doc["groups"])
    runbook = anchors(os.path.join(root, RUNBOOK))
    for name in REQUIRED:
        fl.check(name in alerts, "alert %s is missing" % name)
    for name, r in alerts.items():
        fl.check(r.get("labels", {}).get("severity") in
                 ("critical", "warning"), "%s: severity" % name)
        ann = r.get("annotations", {})
        fl.check(ann.get("summary") and ann.get("description"),
                 "%s: summary and description" % name)
        want = "docs/runbook.md#" + name.lower()
        fl.check(ann.get("runbook_url") == want,
                 "%s: runbook_url %r, want %r" % (name,
                                                  ann.get("runbook_url"),
                                                  want))
        fl.check(name.lower() in runbook,
                 "%s: no heading '%s' in %s" % (name, name, RUNBOOK))

    rc, out = promtool(args.promtool, "test", "rules",
                       os.path.join(root, TESTS))
    fl.check(rc == 0, "promtool test rules %s:\n%s" % (TESTS, out))

    with open(os.path.join(root, TESTS)) as f:
        tests = yaml.safe_load(f)
    evs = evaluations(tests)
    with tempfile.TemporaryDirectory() as tmp:
        for name in alerts:
            fire, quiet = evs.get(name, ([], []))
            fl.check(fire, "%s: no evaluation expects it to fire" % name)
            fl.check(quiet, "%s: no evaluation expects it quiet" % name)
            if fire:
                rc, _ = run_tests(args.promtool,
                                  mutated(rules_doc, name, NEVER),
                                  only(tests, name, True), tmp)
                fl.check(rc != 0, "%s: its firing evaluations pass with "
                         "an expr that never fires" % name)
            if quiet:
                rc, _ = run_tests(args.promtool,
                                  mutated(rules_doc, name, ALWAYS),
                                  only(tests, name, False), tmp)
                fl.check(rc != 0, "%s: its quiet evaluations pass with an "
                         "expr that always fires" % name)
                rc, out = run_tests(args.promtool, rules_doc,
                                    only(tests, name, False), tmp)
                fl.check(rc == 0, "%s: its quiet evaluations alone fail:"
                         "\n%s" % (name, out))

    check_dashboard(root, fl)
    print("monitoring: %d alerts, each firing and quiet in %s; %s and %s "
          "agree; the dashboard has %s"
          % (len(alerts), TESTS, RULES, PROMRULE, DASHBOARD))
    print("%d passed, %d failed" % (fl.passed, len(fl.items)))
    return 1 if fl.items else 0


if __name__ == "__main__":
    sys.exit(main())
