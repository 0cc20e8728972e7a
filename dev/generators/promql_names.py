"""The metric names and labels that the Grafana dashboard and the Prometheus rules read.

    .venv/bin/python scripts/promql_names.py            # one line per metric: name, labels used
    .venv/bin/python scripts/promql_names.py --exprs    # every PromQL expression, one per line

A small PromQL scanner, enough for the expressions in ``deploy/`` (selectors, functions,
aggregations with ``by``/``without``, ``on``/``ignoring`` matching, ranges, strings). It does not
judge whether an expression is valid PromQL: ``scripts/check-deploy`` has promtool parse every one
(``promtool check rules`` for the rules, ``promtool promql format`` for the dashboard). What it
finds is compared with what a running worker exports in
``tests/e2e/test_metrics_coverage.py``, so a panel or an alert cannot read a series that does not
exist. Standard library and PyYAML only.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DASHBOARDS = sorted((ROOT / "deploy" / "grafana").glob("*.json"))
RULE_FILES = sorted(
    p for p in (ROOT / "deploy" / "prometheus").glob("*.yaml") if not p.name.endswith(".test.yaml")
)

#: Words that are never metric names where they stand (operators, modifiers).
KEYWORDS = frozenset(
    {
        "and",
        "or",
        "unless",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "bool",
        "offset",
        "atan2",
        "inf",
        "nan",
    }
)
GROUPING = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
      | (?P<range>\[[^\]]*\])
      | (?P<number>(?:0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)(?:[smhdwy]|ms)*)
      | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
      | (?P<op>=~|!~|!=|==|<=|>=|[-+*/%^<>=,(){}])
      | (?P<var>\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Matcher:
    """One label matcher of a selector: ``metric{label op "value"}``."""

    metric: str
    label: str
    op: str
    value: str


@dataclass
class Usage:
    """What one expression reads."""

    expr: str
    metrics: set[str] = field(default_factory=set)
    matchers: list[Matcher] = field(default_factory=list)
    #: Labels named in ``by``/``without``/``on``/``ignoring``/``group_*`` lists.
    grouping: set[str] = field(default_factory=set)


def _tokens(expr: str) -> Iterator[tuple[str, str]]:
    pos = 0
    text = expr.rstrip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"cannot scan PromQL at {text[pos : pos + 20]!r} in {expr!r}")
        pos = m.end()
        kind = m.lastgroup
        assert kind is not None
        yield kind, m.group(kind)


def scan(expr: str) -> Usage:
    """The metrics, label matchers and grouping labels of one PromQL expression."""
    usage = Usage(expr)
    toks = list(_tokens(expr))
    i = 0
    while i < len(toks):
        kind, value = toks[i]
        nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
        if kind == "ident" and value in GROUPING and nxt == "(":
            i += 2
            while i < len(toks) and toks[i][1] != ")":
                if toks[i][0] == "ident":
                    usage.grouping.add(toks[i][1])
                i += 1
        elif kind == "ident" and value not in KEYWORDS and nxt not in ("(", "by", "without"):
            usage.metrics.add(value)
            if nxt == "{":
                i = _matchers(toks, i + 2, value, usage)
        elif kind == "op" and value == "{":
            i = _matchers(toks, i + 1, "", usage)
        i += 1
    return usage


def _matchers(toks: list[tuple[str, str]], i: int, metric: str, usage: Usage) -> int:
    """Read ``label op "value"`` items up to the closing brace; return its index."""
    while i < len(toks) and toks[i][1] != "}":
        if toks[i][0] == "ident" and i + 2 < len(toks) and toks[i + 2][0] == "string":
            raw = toks[i + 2][1]
            usage.matchers.append(Matcher(metric, toks[i][1], toks[i + 1][1], raw[1:-1]))
            i += 3
        else:
            i += 1
    return i


# --- where the expressions are ------------------------------------------------------------------


def dashboard_exprs(path: Path) -> list[tuple[str, str]]:
    """(where, expr) of every query of a Grafana dashboard, template variables included."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    found: list[tuple[str, str]] = []

    def walk(panels: list[dict[str, Any]]) -> None:
        for panel in panels:
            for target in panel.get("targets", ()):
                if target.get("expr"):
                    found.append((f"{path.name}: {panel.get('title')}", target["expr"]))
            walk(panel.get("panels", []))

    walk(doc.get("panels", []))
    for var in doc.get("templating", {}).get("list", []):
        query = var.get("query")
        if var.get("type") == "query":
            text = query.get("query") if isinstance(query, dict) else query
            m = re.fullmatch(r"\s*label_values\((.*),\s*[A-Za-z_]+\)\s*", text or "")
            if m:
                found.append((f"{path.name}: variable {var['name']}", m.group(1)))
    return found


def rule_exprs(path: Path) -> list[tuple[str, str]]:
    """(where, expr) of every alerting and recording rule of a Prometheus rule file."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [
        (f"{path.name}: {rule.get('alert') or rule.get('record')}", str(rule["expr"]))
        for group in doc.get("groups", [])
        for rule in group.get("rules", [])
    ]


def all_exprs() -> list[tuple[str, str]]:
    """Every expression of ``deploy/grafana`` and ``deploy/prometheus``."""
    out: list[tuple[str, str]] = []
    for path in DASHBOARDS:
        out += dashboard_exprs(path)
    for path in RULE_FILES:
        out += rule_exprs(path)
    return out


def substitute_grafana_variables(expr: str) -> str:
    """The expression with Grafana's variables replaced, so promtool can parse it."""
    expr = expr.replace("$__rate_interval", "5m").replace("$__interval", "1m")
    return re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", "x", expr)


def main(argv: list[str]) -> int:
    exprs = all_exprs()
    if "--exprs" in argv:
        for _, expr in exprs:
            print(" ".join(substitute_grafana_variables(expr).split()))
        return 0
    names: dict[str, set[str]] = {}
    for _, expr in exprs:
        usage = scan(expr)
        for metric in usage.metrics:
            names.setdefault(metric, set())
        for m in usage.matchers:
            names.setdefault(m.metric, set()).add(m.label)
    for name in sorted(names):
        print(name, " ".join(sorted(names[name])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
