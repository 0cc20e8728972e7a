#!/usr/bin/env python3
"""CPU time of the pure core's whole decision on adversarial drafts up to the size limit.

    .venv/bin/python -m bench.adversarial [--sizes 0.25,0.5,1] [--shapes a,b] [--limit 1.0]

Contract rule 7: every stage from parsing to the decision is linear in the draft's size, and any
draft up to the size limit, adversarial shapes included, is decided in well under a second of
CPU. Each shape fills an answer's ``answer_markdown`` until the envelope is the given size in
MiB (1 MiB is the default limit, ``GW_MAX_DRAFT_BYTES``; never over it). Each draft goes through
``worker.core.grounding``'s ``admit`` and ``judge``, the functions the worker and ``check`` both
run, with the evidence from an in-memory corpus; its CPU time (``time.process_time``) is printed
with the seconds per MiB (flat across sizes when linear) and, as the same-run baseline, how many
times the JSON decode of the same bytes (``orjson.loads``) it costs. Exits 1 when any draft
takes over ``--limit`` seconds of CPU. By default (``--gc paused``) it decides as the worker
decides a batch and ``check`` a draft, with the collector paused; ``--gc on`` shows what the
collector's passes over a heap of many small objects would add. Not a test: timings depend on
the machine.
"""

from __future__ import annotations

import argparse
import functools
import gc
import itertools
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import orjson

from worker.core.citations.evidence import CitationRef, EvidenceKind, EvidenceRecord
from worker.core.claims.policy import PolicyBook
from worker.core.grounding import Admitted, admit, judge

NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)
MIB = 1 << 20
MAX_BYTES = MIB
POLICIES = PolicyBook()
SOURCE = "The vessel Aurora entered the corridor and waited near buoy 7 for three hours."


def corpus() -> dict[CitationRef, EvidenceRecord]:
    """Ids 1-999 of every kind for tenant ``acme``; DOC-9 is hidden from the reader."""
    records = {}
    for i, kind in itertools.product(range(1, 1000), EvidenceKind):
        ref = CitationRef(kind, i)
        hidden = kind is EvidenceKind.DOC and i == 9
        records[ref] = EvidenceRecord(
            ref=ref,
            acl=("group:ops",) if hidden else None,
            text=SOURCE,
            title="Doc" if kind is EvidenceKind.DOC else None,
        )
    return records


# --- the shapes: each yields pieces of Markdown, forever ------------------------------------------


def backticks() -> Iterator[str]:
    """Runs of backticks of growing width, none closed by a run of its own width."""
    for width in itertools.count(1):
        yield "`" * width + " a "


def brackets() -> Iterator[str]:
    """One run of opening brackets, then closing ones (links that never form)."""
    while True:
        yield "[" * 64


def bracket_pairs() -> Iterator[str]:
    while True:
        yield "[a](b [c]"


def emphasis() -> Iterator[str]:
    """Openers that never close, of both kinds and growing runs."""
    for width in itertools.count(1):
        yield "*" * (width % 50 + 1) + "a _b "


def sentence_ends() -> Iterator[str]:
    while True:
        yield "a. "


def open_parens() -> Iterator[str]:
    """Sentences inside parentheses and quotations that never close."""
    while True:
        yield '(a. "b. '


def list_markers() -> Iterator[str]:
    while True:
        yield "1. - * + 1) "


def fences() -> Iterator[str]:
    """Fences of growing width that never close, and tildes."""
    for width in itertools.count(3):
        yield "`" * (width % 200 + 3) + "\n~~~ a [OBS-1].\n"


def pipe_rows() -> Iterator[str]:
    """Lines of pipes with no delimiter row: no table, each line a sentence-less paragraph."""
    while True:
        yield "| a |\n"


def indented_code() -> Iterator[str]:
    while True:
        yield "    a.\n"


def html_blocks() -> Iterator[str]:
    while True:
        yield "<div>\na. [OBS-1]\n"


def nested_lists() -> Iterator[str]:
    while True:
        yield "- " * 500 + "Aurora waited near buoy 7 [OBS-1].\n"


def nested_quotes() -> Iterator[str]:
    while True:
        yield "> " * 500 + "Aurora waited near buoy 7 [OBS-1].\n"


def indented_lists() -> Iterator[str]:
    """A list nested one level deeper on every line."""
    for depth in itertools.count():
        yield "  " * (depth % 2000) + "- Aurora waited [OBS-2].\n"


def table() -> Iterator[str]:
    yield "| Claim | Note |\n|---|---|\n"
    for i in itertools.count():
        yield f"| Aurora waited near buoy 7 [OBS-{1 + i % 900}]. | x |\n"


def citations() -> Iterator[str]:
    for i in itertools.count():
        n = 1 + i % 333  # 999 distinct ids: under the limit of 1,000 (rule 2)
        yield f"Aurora waited near buoy 7 [OBS-{n}][DOC-{n}][EVT-{n}]. "


def lookalike_misses() -> Iterator[str]:
    """Near look-alikes that never close (each a place the look-alike scan must try)."""
    while True:
        yield "[DOC-*é [DOC-&#8203; 【DOC- "


SHAPES: dict[str, Callable[[], Iterator[str]]] = {
    "backticks": backticks,
    "brackets": brackets,
    "bracket-pairs": bracket_pairs,
    "emphasis": emphasis,
    "a.-runs": sentence_ends,
    "open-parens": open_parens,
    "list-markers": list_markers,
    "fences": fences,
    "pipe-rows": pipe_rows,
    "indented-code": indented_code,
    "html-blocks": html_blocks,
    "nested-lists": nested_lists,
    "nested-quotes": nested_quotes,
    "indented-lists": indented_lists,
    "table": table,
    "citations": citations,
    "lookalike-misses": lookalike_misses,
}


def envelope(markdown: str) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "draft_id": "d-adv",
        "turn_id": "t-adv",
        "attempt": 0,
        "tenant_id": "acme",
        "principal": {"user_id": "alice", "groups": ["analysts"]},
        "kind": "answer",
        "output": {"answer_markdown": markdown},
    }


def draft(shape: Callable[[], Iterator[str]], size: int) -> bytes:
    """The envelope bytes of ``shape``'s Markdown, as close to ``size`` bytes as whole pieces
    allow (never over)."""
    budget = size - len(orjson.dumps(envelope("")))
    pieces: list[str] = []
    used = 0
    for piece in shape():
        cost = len(orjson.dumps(piece)) - 2  # its JSON-escaped bytes
        if used + cost > budget:
            break
        pieces.append(piece)
        used += cost
    value = orjson.dumps(envelope("".join(pieces)))
    assert len(value) <= size, len(value)
    return value


def decide(value: bytes, records: dict[CitationRef, EvidenceRecord]) -> str:
    """The core's whole decision on one record value, as the worker and ``check`` make it."""
    admitted = admit(b"t-adv", value, max_bytes=MAX_BYTES, policies=POLICIES)
    if not isinstance(admitted, Admitted):
        return f"dead_letter ({admitted.error_class.value})"
    found = {r: records[r] for r in admitted.refs if r in records}
    judgement = judge(admitted, None, found, NOW, retention_s=None)
    codes = judgement.failure_codes
    return judgement.outcome.value + (f" ({codes[0]})" if codes else "")


def cpu(work: Callable[[], object]) -> tuple[float, object]:
    start = time.process_time()
    result = work()
    return time.process_time() - start, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.25,0.5,1", help="draft sizes in MiB")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="which shapes")
    parser.add_argument("--limit", type=float, default=1.0, help="CPU seconds allowed per draft")
    parser.add_argument(
        "--gc",
        choices=("on", "paused"),
        default="paused",
        help="paused (default): the heap frozen and no collection while a draft is decided, as "
        "the worker decides a batch and check a draft; on: CPython's collector as is",
    )
    args = parser.parse_args(argv)
    if args.gc == "paused":
        gc.collect()
        gc.freeze()
    sizes = [float(s) for s in args.sizes.split(",")]
    shapes = args.shapes.split(",")
    records = corpus()
    print(f"{'shape':18} {'MiB':>6} {'outcome':>34} {'cpu s':>8} {'s/MiB':>8} {'x decode':>9}")
    worst = (0.0, "", 0.0)
    for name in shapes:
        for mib in sizes:
            value = draft(SHAPES[name], min(int(mib * MIB), MAX_BYTES))
            size = len(value) / MIB
            decode, _ = cpu(functools.partial(orjson.loads, value))
            if args.gc == "paused":
                gc.disable()
            seconds, outcome = cpu(functools.partial(decide, value, records))
            gc.enable()
            ratio = seconds / decode if decode > 0 else float("inf")
            print(
                f"{name:18} {size:6.3f} {outcome!s:>34} {seconds:8.3f} {seconds / size:8.3f}"
                f" {ratio:9.0f}",
                flush=True,
            )
            worst = max(worst, (seconds, name, size))
    seconds, name, size = worst
    print(f"max: {seconds:.3f} s ({name}, {size:.3f} MiB); limit {args.limit:.1f} s; gc {args.gc}")
    return 1 if seconds > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
