#!/usr/bin/env python3
"""Precision and recall of the support check (contract rule 6b) on a labelled set.

    .venv/bin/python scripts/support_eval.py [--data tests/data/support/claims.jsonl] [--json]

Each line of the set is ``{"id", "kind", "label", "claim", "evidence": [text, ...]}`` with a human
label: ``supported``, ``partial`` (some of it is in the evidence, some is not) or ``unsupported``
(a changed number, entity or negation, or an unrelated source). Odd ids are the tuning half,
even ids the held-out half; the figures that count are the held-out ones.

Two measures, side by side: the worker's (``worker.core.claims.support.check_support``: numbers as
values, stemmed content words, negation) and a baseline of plain word overlap (the share of the
claim's lower-cased words found in the evidence, its two thresholds chosen on the tuning half
for the best F1 of ``unsupported`` at precision >= 0.9). Printed per half: precision and recall
of ``unsupported`` (against the label ``unsupported``) and of ``weak`` (against ``partial``), and
each miss of the worker's measure with its kind, so a reader sees what it cannot catch.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from worker.core.citations.evidence import CitationRef, EvidenceKind
from worker.core.claims.support import SourceText, check_support
from worker.core.contract import SupportLevel

DEFAULT = Path(__file__).resolve().parents[1] / "tests" / "data" / "support" / "claims.jsonl"
_WORD = re.compile(r"\w+")
#: Label each predicted level is scored against.
_EXPECTED = {"unsupported": "unsupported", "weak": "partial"}


class Item(NamedTuple):
    id: int
    kind: str
    label: str
    claim: str
    evidence: list[str]


class Score(NamedTuple):
    precision: float | None
    recall: float | None
    predicted: int
    actual: int


def load(path: Path) -> list[Item]:
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            items.append(Item(d["id"], d["kind"], d["label"], d["claim"], d["evidence"]))
    return items


def worker_level(item: Item) -> str:
    sources = [
        SourceText(CitationRef(EvidenceKind.OBS, i + 1), text)
        for i, text in enumerate(item.evidence)
    ]
    return check_support(item.claim, sources).level.value


def overlap(item: Item) -> float:
    words = _WORD.findall(item.claim.lower())
    if not words:
        return 1.0
    seen = set(_WORD.findall(" ".join(item.evidence).lower()))
    return sum(w in seen for w in words) / len(words)


def baseline_level(unsupported_below: float, weak_below: float) -> Callable[[Item], str]:
    def level(item: Item) -> str:
        share = overlap(item)
        if share < unsupported_below:
            return SupportLevel.UNSUPPORTED.value
        if share < weak_below:
            return SupportLevel.WEAK.value
        return SupportLevel.SUPPORTED.value

    return level


def score(items: Sequence[Item], predict: Callable[[Item], str], level: str) -> Score:
    expected = _EXPECTED[level]
    predicted = [i for i in items if predict(i) == level]
    actual = [i for i in items if i.label == expected]
    hits = sum(1 for i in predicted if i.label == expected)
    return Score(
        hits / len(predicted) if predicted else None,
        hits / len(actual) if actual else None,
        len(predicted),
        len(actual),
    )


def tune_baseline(tuning: Sequence[Item]) -> tuple[float, float]:
    """The baseline's thresholds: best F1 of ``unsupported`` at precision >= 0.9 on ``tuning``."""
    grid = [round(0.05 * k, 2) for k in range(1, 20)]
    best, best_f1 = (0.5, 0.75), -1.0
    for low in grid:
        s = score(tuning, baseline_level(low, 1.1), "unsupported")
        if s.precision is None or s.recall is None or s.precision < 0.9:
            continue
        f1 = 2 * s.precision * s.recall / (s.precision + s.recall or 1)
        if f1 > best_f1:
            best, best_f1 = (low, low), f1
    low = best[0]
    best_weak, best_weak_f1 = low, -1.0
    for high in (g for g in grid if g > low):
        s = score(tuning, baseline_level(low, high), "weak")
        if s.precision is None or s.recall is None:
            continue
        f1 = 2 * s.precision * s.recall / (s.precision + s.recall or 1)
        if f1 > best_weak_f1:
            best_weak, best_weak_f1 = high, f1
    return low, best_weak


def _cell(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def evaluate(items: Sequence[Item]) -> dict[str, Any]:
    tuning = [i for i in items if i.id % 2 == 1]
    held_out = [i for i in items if i.id % 2 == 0]
    low, high = tune_baseline(tuning)
    methods: dict[str, Callable[[Item], str]] = {
        "worker (numbers + stemmed words + negation)": worker_level,
        f"baseline: plain word overlap (<{low} unsupported, <{high} weak)": baseline_level(
            low, high
        ),
    }
    out: dict[str, Any] = {"items": len(items), "halves": {}, "misses": []}
    for half, subset in (("tuning", tuning), ("held-out", held_out)):
        out["halves"][half] = {
            name: {lv: score(subset, predict, lv)._asdict() for lv in _EXPECTED}
            for name, predict in methods.items()
        }
    for item in items:
        got = worker_level(item)
        want = {"supported": "supported", "partial": "weak", "unsupported": "unsupported"}
        if got != want[item.label]:
            out["misses"].append(
                {"id": item.id, "kind": item.kind, "label": item.label, "worker": got}
            )
    return out


def table(result: dict[str, Any]) -> str:
    lines = [f"labelled claims: {result['items']} (odd ids tune, even ids held out)", ""]
    for half, methods in result["halves"].items():
        lines.append(f"{half}:")
        lines.append(
            f"  {'method':<58} {'unsupported P':>13} {'R':>5} {'n':>4}   {'weak P':>6} {'R':>5}"
        )
        for name, s in methods.items():
            u, w = s["unsupported"], s["weak"]
            lines.append(
                f"  {name:<58} {_cell(u['precision']):>13} {_cell(u['recall']):>5}"
                f" {u['actual']:>4}   {_cell(w['precision']):>6} {_cell(w['recall']):>5}"
            )
        lines.append("")
    lines.append("the worker's misses (label -> level):")
    for m in result["misses"]:
        lines.append(f"  #{m['id']:<3} {m['kind']:<11} {m['label']:<12} -> {m['worker']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--data", type=Path, default=DEFAULT, help="the labelled set (JSON Lines)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = p.parse_args(argv)
    result = evaluate(load(a.data))
    print(json.dumps(result, indent=2) if a.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
