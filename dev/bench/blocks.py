"""Rule 7's Markdown block reader: the parser's cost on a typical answer, and linearity on
adversarial shapes (contract §3.7: every stage linear in the draft). A benchmark, not a test.

1. A typical ~1 KB answer (a heading, paragraphs, a list, a quote, a table) and the one-paragraph
   answers of ``schemas/examples``: ``blocks`` (pulldown-cmark through pyromark, plus this
   project's reading of its events) against the bare parsers that could have been used: pyromark's
   events alone, cmark-gfm (``cmarkgfm``, to HTML: it exposes no source ranges per line) and
   markdown-it (``markdown-it-pyrs`` if installed, ``markdown-it-py``).
2. ``blocks`` and ``sentence_spans`` on 1, 2 and 4 MiB of each adversarial shape: the time per
   MiB must stay flat.

Usage: .venv/bin/python -m dev.bench.blocks
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import cmarkgfm
import pyromark
from markdown_it import MarkdownIt

from worker.core import blocks, sentence_spans

ROOT = Path(__file__).resolve().parents[2]

MIB = 1 << 20
TYPICAL = """## What happened

Checkout p95 latency rose from 180 ms to 840 ms within ten minutes of the 14:05 UTC deploy of
payments-api 2.3.0 [OBS-1001]. Support tickets doubled between 14:10 and 15:00 UTC [OBS-1007].

**Likely cause.** The deploy changed the connection-pool size [EVT-501].

- Roll back the deploy, since it is less than an hour old [DOC-9001].
- Watch the error rate on `/v1/charge` for the next hour [OBS-1005].
- Keep the incident channel open until p95 is back under 200 ms [DOC-9001].

> The runbook says to roll it back before investigating further [DOC-9001].

| Metric | Before | After |
|---|---|---|
| p95 latency | 180 ms | 840 ms [OBS-1001] |
| Tickets per hour | 40 | 80 [OBS-1007] |
"""


def per_call(fn: Callable[[str], object], text: str, calls: int = 2000) -> float:
    """Microseconds per call: the best of three batches."""
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(text)
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def best_of(fn: Callable[[str], object], text: str, rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - t0)
    return best


def fill(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def parsers() -> dict[str, Callable[[str], object]]:
    tables = pyromark.Options.ENABLE_TABLES
    out: dict[str, Callable[[str], object]] = {
        "blocks (pyromark + reading)": blocks,
        "pyromark events_with_range": lambda t: sum(
            1 for _ in pyromark.events_with_range(t, options=tables, merge_text=True)
        ),
        "cmarkgfm to HTML (table)": lambda t: cmarkgfm.markdown_to_html_with_extensions(
            t, extensions=["table"]
        ),
    }
    try:
        from markdown_it_pyrs import MarkdownIt as RustMarkdownIt  # noqa: PLC0415

        rust = RustMarkdownIt("commonmark").enable("table")
        out["markdown-it-pyrs tree"] = rust.tree
    except ImportError:
        print("(markdown-it-pyrs is not installed: not measured)")
    python = MarkdownIt("commonmark").enable("table")
    out["markdown-it-py tokens"] = python.parse
    return out


def adversarial(size: int) -> dict[str, str]:
    ticks: list[str] = []
    width = 1
    while sum(map(len, ticks)) < size:
        ticks.append("`" * width + " x ")
        width += 1
    nested = "".join("> " * (i % 200) + "x\n" for i in range(size // 200))
    items = "".join("  " * (i % 200) + "- x\n" for i in range(size // 200))
    return {
        "[[[[": fill("[", size),
        "*a* ": fill("*a* ", size),
        "backtick runs of growing width": "".join(ticks)[:size],
        "quotes nested to 200": nested[:size],
        "list items nested to 200": items[:size],
        '"1. " markers': fill("1. ", size),
        '"> " markers': fill("> ", size),
        "table rows": "a | b\n-|-\n" + fill("c | d [OBS-1]\n", size),
        "paragraph lines over delimiter rows": fill("x\na | b\n-|-\n\n", size),
        "lazy lines in a quote": fill("> a | b\n", size),
        "HTML block": "<div>\n" + fill("a <b>c</b> d < e <!-- f --> g.\n", size),
        "non-ASCII prose": fill("Zürich — 東京 priced at 4.2B [DOC-9]. ", size),
        "cited prose lines": fill("The vessel loitered for 12.5 hours [OBS-1].\n", size),
    }


def main() -> None:
    examples = [
        json.loads(p.read_text())["output"]["answer_markdown"]
        for p in sorted((ROOT / "schemas" / "examples").glob("answer_*.json"))
        if isinstance(json.loads(p.read_text()).get("output"), dict)
        and "answer_markdown" in json.loads(p.read_text())["output"]
    ]
    print(f"typical answer ({len(TYPICAL)} characters): microseconds per call")
    for name, fn in parsers().items():
        typical = per_call(fn, TYPICAL)
        one = sum(per_call(fn, e, 500) for e in examples) / len(examples)
        print(f"  {name:30s} {typical:8.1f} us   one-paragraph examples: {one:6.1f} us")
    print("\nadversarial shapes: seconds per MiB at 1, 2 and 4 MiB (flat = linear)")
    shapes = {n: adversarial(n * MIB) for n in (1, 2, 4)}
    for label in shapes[1]:
        for fn_name, fn in (("blocks", blocks), ("sentence_spans", sentence_spans)):
            per = [best_of(fn, shapes[n][label]) / n for n in (1, 2, 4)]
            shown = "  ".join(f"{p:.3f}" for p in per)
            print(f"  {label:38s} {fn_name:15s} {shown}")


if __name__ == "__main__":
    main()
