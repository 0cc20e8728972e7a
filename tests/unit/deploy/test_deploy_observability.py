"""The Grafana dashboard and the Prometheus rules, statically.

promtool parses and unit-tests the rules in scripts/check-deploy; a running worker's /metrics is
compared with the names they read in tests/e2e/test_metrics_coverage.py. Here: the dashboard is
fresh and well formed, the PromQL scanner finds what it should, label values the queries match
are values the worker can emit, and every alert is tested, severe and documented.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml
from deploy_files import ROOT

from dev.generators import dashboard as gen_dashboard
from dev.generators import promql_names as promql
from worker.core import ErrorClass, LedgerOutcome
from worker.core.failures import FailureCode

DASHBOARD = ROOT / "deploy" / "grafana" / "grounding-worker.json"
RULES = ROOT / "deploy" / "prometheus" / "alerts.yaml"
RULE_TESTS = ROOT / "deploy" / "prometheus" / "alerts.test.yaml"
OPERATIONS = ROOT / "docs" / "operations.md"

#: The values each label can take, from the code that sets it.
LABEL_VALUES = {
    # worker/core/turns/machine.py Decision.outcome, as counted by the pipeline
    "outcome": {o.value for o in LedgerOutcome} | {"unchanged"},
    "code": {c.value for c in FailureCode},
    "error_class": {c.value for c in ErrorClass},
    "store": {"postgres", "mongo"},
}


def dashboard() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return doc


def alert_rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return [r for g in doc["groups"] for r in g["rules"] if "alert" in r]


# --- the scanner --------------------------------------------------------------------------------


def test_scanner_finds_metrics_matchers_and_grouping() -> None:
    usage = promql.scan(
        'histogram_quantile(0.99, sum by (le, store) (rate(a_bucket{ns=~"$x", k="v"}[5m])))'
        " / on (ns) group_left sum without (pod) (b_total) > bool 3 unless c offset 5m"
    )
    assert usage.metrics == {"a_bucket", "b_total", "c"}
    assert usage.grouping == {"le", "store", "ns", "pod"}
    assert [(m.metric, m.label, m.op, m.value) for m in usage.matchers] == [
        ("a_bucket", "ns", "=~", "$x"),
        ("a_bucket", "k", "=", "v"),
    ]


def test_scanner_skips_functions_aggregations_and_strings() -> None:
    usage = promql.scan('sum(rate(x_total[1m])) by (a) + count by (b) (y{l!~"sum|rate"})')
    assert usage.metrics == {"x_total", "y"}
    assert usage.grouping == {"a", "b"}


def test_scanner_refuses_what_it_cannot_read() -> None:
    with pytest.raises(ValueError, match="cannot scan"):
        promql.scan("rate(x[5m]) # comment")


def test_every_query_is_found() -> None:
    exprs = promql.all_exprs()
    panels = [p for p in dashboard()["panels"] if p["type"] != "row" for _ in p["targets"]]
    assert len(exprs) == len(panels) + 1 + len(alert_rules())  # + the namespace variable
    assert all(promql.scan(e).metrics for _, e in exprs)


# --- label values -------------------------------------------------------------------------------


def test_matched_label_values_are_values_the_worker_emits() -> None:
    checked = 0
    for where, expr in promql.all_exprs():
        for m in promql.scan(expr).matchers:
            if m.label not in LABEL_VALUES:
                continue
            wanted = set(m.value.split("|")) if m.op in ("=~", "!~") else {m.value}
            unknown = wanted - LABEL_VALUES[m.label]
            assert not unknown, f"{where}: {m.label} never takes {sorted(unknown)}"
            checked += 1
    assert checked >= 5


def test_the_alerts_split_every_dead_letter_class_between_them() -> None:
    classes: dict[str, set[str]] = {}
    for rule in alert_rules():
        for m in promql.scan(rule["expr"]).matchers:
            if m.label == "error_class":
                classes[rule["alert"]] = set(m.value.split("|"))
    bad_input = classes["GroundingDeadLettersBadInput"]
    ours = classes["GroundingDeadLettersInfrastructure"]
    assert not bad_input & ours
    assert bad_input | ours == LABEL_VALUES["error_class"]


# --- dashboard ----------------------------------------------------------------------------------


def test_dashboard_is_fresh() -> None:
    assert DASHBOARD.read_text(encoding="utf-8") == gen_dashboard.build(), (
        "stale: run .venv/bin/python scripts/gen_dashboard.py"
    )


def test_dashboard_panels_are_well_formed() -> None:
    doc = dashboard()
    ids = [p["id"] for p in doc["panels"]]
    assert len(ids) == len(set(ids))
    variables = {v["name"] for v in doc["templating"]["list"]}
    assert variables == {"datasource", "namespace"}
    for p in doc["panels"]:
        if p["type"] == "row":
            continue
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert p["description"]
        assert p["targets"], p["title"]
        ref_ids = [t["refId"] for t in p["targets"]]
        assert len(ref_ids) == len(set(ref_ids))
        for t in p["targets"]:
            assert 'namespace=~"$namespace"' in t["expr"], p["title"]
        grid = p["gridPos"]
        assert grid["x"] + grid["w"] <= 24


def test_dashboard_has_the_panels_operations_need() -> None:
    titles = {p["title"] for p in dashboard()["panels"]}
    for wanted in (
        "Throughput by route",
        "Could-not-ground share of finished turns",
        "Failure codes",
        "Dead letters by class",
        "Consumer lag by partition",
        "Evidence store latency (p50, p99)",
        "Batch size",
        "Batch processing time (p50, p99)",
    ):
        assert wanted in titles


# --- alerts -------------------------------------------------------------------------------------


def test_every_alert_is_unit_tested_firing_and_quiet() -> None:
    tests = yaml.safe_load(RULE_TESTS.read_text(encoding="utf-8"))
    assert tests["rule_files"] == ["alerts.yaml"]
    fired: set[str] = set()
    quiet: set[str] = set()
    for case in tests["tests"]:
        for t in case["alert_rule_test"]:
            (fired if t["exp_alerts"] else quiet).add(t["alertname"])
    names = {r["alert"] for r in alert_rules()}
    assert names == fired, f"never seen firing: {names - fired}"
    assert names == quiet, f"never seen quiet: {names - quiet}"


def test_every_alert_has_a_severity_a_summary_and_a_runbook_section() -> None:
    docs = OPERATIONS.read_text(encoding="utf-8")
    anchors = {
        re.sub(r"[^a-z0-9 -]", "", h.strip().lower()).replace(" ", "-")
        for h in re.findall(r"^#+ (.+)$", docs, re.MULTILINE)
    }
    for rule in alert_rules():
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}
        assert rule["annotations"]["summary"]
        assert rule["annotations"]["description"]
        url = rule["annotations"]["runbook_url"]
        path, _, anchor = url.partition("#")
        # the base is Prometheus' external label runbook_base_url, else the repository path
        assert path == '{{ or $externalLabels.runbook_base_url "docs" }}/operations.md'
        assert anchor == rule["alert"].lower()
        assert anchor in anchors, f"no section `{rule['alert']}` in docs/operations.md"
