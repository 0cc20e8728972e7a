#!/usr/bin/env python3
"""Sentence splitting is linear in the draft (contract §3.7): a benchmark, not a test.

    .venv/bin/python -m dev.bench.sentences [--size-kib 1024] [--rounds 3] [--core]

Times ``sentence_spans`` on ``--size-kib`` of each shape below and prints each time as a ratio of
plain prose of the same size (measured in the same run: the baseline). A per-sentence rescan of
the block shows as a shape whose ratio grows with the size; ``--size-kib`` twice as large must
take about twice as long. ``--core``: also time one draft of each shape through the whole core
(``prepare`` + ``evaluate`` + ``decide``, no citation, so every unit is ``uncited_claim``), the
path a producer's 1 MiB draft takes.
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable
from datetime import UTC, datetime

import orjson

from worker.core import (
    Draft,
    TenantPolicy,
    decide,
    evaluate,
    parse_envelope,
    prepare,
    sentence_spans,
)

PROSE = (
    "The vessel loitered in the northern corridor for 12.5 hours before turning south, "
    "and its AIS transponder went silent twice during the transit. "
)
#: Shapes that stop the scanner often, or open what a later character may close.
SHAPES: dict[str, str] = {
    "prose": PROSE,
    "a. (stops)": "a. ",
    "U.S. (abbrev)": "U.S. a ",
    "Inc. (capital)": "Inc. A ",
    "( a. (open paren)": "( a. ",
    '" a. (quotes)': '" a. ',
    "**a.** (labels)": "**a.** ",
    "中文。(CJK)": "中文。",
    "a.<br> (breaks)": "a.<br>",
    "a: (lead-ins)": "a:\n",
}


def fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def best_of(fn: Callable[[], object], rounds: int) -> float:
    """The least CPU time of ``rounds`` runs, in seconds (CPU time: the machine is shared)."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def draft_of(markdown: str) -> Draft:
    value = {
        "schema_version": 1,
        "draft_id": "d-1",
        "turn_id": "t-1",
        "attempt": 0,
        "tenant_id": "acme",
        "principal": {"user_id": "u-1"},
        "kind": "answer",
        "output": {"answer_markdown": markdown, "citations": []},
    }
    d = parse_envelope(b"t-1", orjson.dumps(value), max_bytes=1 << 23)
    assert isinstance(d, Draft), d
    return d


def core(markdown: str) -> str:
    policy = TenantPolicy()
    now = datetime(2026, 12, 2, 12, tzinfo=UTC)
    prepared = prepare(draft_of(markdown), policy)
    evaluation = evaluate(prepared, {}, policy, now)
    return decide(None, prepared, evaluation, policy, now).outcome


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-kib", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--core", action="store_true")
    args = parser.parse_args()
    size = args.size_kib * 1024
    base = best_of(lambda: sentence_spans(fill(PROSE, size)), args.rounds)
    print(f"sentence_spans, {args.size_kib} KiB each (least CPU time of {args.rounds}):")
    for name, unit in SHAPES.items():
        text = fill(unit, size)
        took = best_of(functools.partial(sentence_spans, text), args.rounds)
        units = len(sentence_spans(text))
        print(f"  {name:20s} {took * 1000:8.1f} ms  {took / base:5.1f} x prose  {units:7d} units")
    if args.core:
        print(f"whole core (prepare + evaluate + decide), {args.size_kib} KiB each (one run):")
        for name, unit in SHAPES.items():
            text = fill(unit, size)
            t0 = time.process_time()
            outcome = core(text)
            print(f"  {name:20s} {(time.process_time() - t0) * 1000:8.1f} ms cpu  {outcome}")


if __name__ == "__main__":
    main()
