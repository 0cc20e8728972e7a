#!/usr/bin/env python3
"""CPU time of the pure core's whole decision on adversarial drafts up to the size limit.

    .venv/bin/python -m dev.bench.adversarial [--sizes 0.25,0.5,1] [--shapes a,b] [--limit 1.0]

Contract rule 7: every stage from parsing to the decision is linear in the draft's size, and any
draft up to the size limit, adversarial shapes included, is decided in well under a second of
CPU. Each shape fills a draft (mostly an answer's ``answer_markdown``; ``duplicate-quotes`` its
``citations[]``) until the envelope is the given size in MiB (1 MiB is the default limit,
``GW_MAX_DRAFT_BYTES``; never over it). Each draft goes through
``worker.core.grounding``'s ``admit`` and ``judge``, the functions the worker and ``check`` both
run, with the evidence from an in-memory corpus; its CPU time (``time.process_time``) is printed
with the seconds per MiB (flat across sizes when linear) and, as the same-run baseline, how many
times the JSON decode of the same bytes (``orjson.loads``) it costs. Exits 1 when any draft
takes over ``--limit`` seconds of CPU.

The collector runs as in production by default (``--gc worker``): the worker collects and
freezes its start-up heap once (``worker/stream/processing/collector.py``) and turns automatic
collection off while a batch is decided (``GW_GC_PAUSED_IN_BATCH``, on by default) and while a
look-ahead admits the next batch's records (``worker/stream/intake/lookahead.py``), so
``admit`` and ``judge`` both run with it off; ``check`` decides the same way. ``--gc on`` shows
CPython's collector untouched. ``--gc paused`` (``check``'s way, once apart from the worker's)
is now the same as ``worker`` and kept only as a deprecated alias of it. The last line says
which mode ran, and on which Python: production runs a PGO+LTO build of CPython 3.11, and
``scripts/bench`` makes ``.venv-bench`` on one where the machine has it (Debian's
``/usr/bin/python3.11``), so ``.venv-bench/bin/python -m dev.bench.adversarial`` measures what
production pays (over the whole table, 14-36 % less CPU here than the development venv's
pyenv build; ``docs/benchmarks.md``). Not a test: timings depend on the machine, and on a
shared one CPU time is the figure to read, not wall time.
"""

from __future__ import annotations

import argparse
import functools
import gc
import itertools
import platform
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, NamedTuple

import orjson

from worker.core import (
    Admitted,
    CitationRef,
    EvidenceKind,
    EvidenceRecord,
    PolicyBook,
    admit,
    judge,
)

NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)
MIB = 1 << 20
MAX_BYTES = MIB
POLICIES = PolicyBook()
SOURCE = "The vessel Aurora entered the corridor and waited near buoy 7 for three hours."


#: A source with a number in most of its words (``sources-numbers``: each of the 1,000 cited
#: sources holds them).
NUMBERS_SOURCE = (
    "Aurora entered corridor 7 at 04:30 on 2026-12-01, waited 3 hours near buoy 12 at 12.5 knots,"
    " 2.4 miles from pier 19, with 18 crew, 4,200 tonnes, 37% load, in 1999 built, 6th of 9."
)
#: About 20 KB of text (``duplicate-quotes``: one source many entries quote).
LONG_SOURCE = " ".join(f"{SOURCE} Entry {i} of the log." for i in range(200))


#: The documents hidden from the reader in most shapes' corpus.
HIDDEN = frozenset({9})
#: ``hidden-many``'s: every document it cites (998 of them, with OBS-1 the 999 distinct ids
#: rule 2 allows).
MANY_HIDDEN = frozenset(range(1, 999))


def corpus(
    source: str = SOURCE, hidden_docs: frozenset[int] = HIDDEN, titled: bool = False
) -> dict[CitationRef, EvidenceRecord]:
    """Ids 1-999 of every kind for tenant ``acme``, each holding ``source``; the documents of
    ``hidden_docs`` (DOC-9) are hidden from the reader. Each document is titled ``Doc``, or
    with ``titled`` a title of its own long enough to name it (the gate looks for each hidden
    one in what is published)."""
    records = {}
    for i, kind in itertools.product(range(1, 1000), EvidenceKind):
        ref = CitationRef(kind, i)
        hidden = kind is EvidenceKind.DOC and i in hidden_docs
        records[ref] = EvidenceRecord(
            ref=ref,
            acl=("group:ops",) if hidden else None,
            text=source,
            title=(f"Fleet report {letters(i)} of the northern corridor" if titled else "Doc")
            if kind is EvidenceKind.DOC
            else None,
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


#: Every terminator of rule 7 (``…`` too: it ends a sentence before whitespace).
TERMINATORS = ".!?。！？‽…"


def terminator_runs() -> Iterator[str]:
    """Runs of 20,000 of each terminator, alone, mixed, and before closers, quotation marks and
    brackets, each followed by a letter (so that it ends nothing): a stop search that tried every
    position of a failing run again was quadratic in the run (100,000 ``!`` took 19.6 s)."""
    runs = [c * 20_000 for c in TERMINATORS]
    runs += [
        TERMINATORS * 2500,
        "!?" * 10_000 + '")]」』）»”',
        '"' + "。！" * 10_000 + '"',
        "(" + "‽" * 20_000,
    ]
    for run in itertools.cycle(runs):
        yield "Aurora "
        yield from (run[k : k + 1000] for k in range(0, len(run), 1000))  # so a draft fills up
        yield "x "


def quote_stops() -> Iterator[str]:
    """A terminator closing a quotation, one every two characters (contract v4: each ends a
    sentence whatever follows), every other quote mark opening the next quotation."""
    while True:
        yield '!"' * 64


def sources_numbers() -> Iterator[str]:
    """Numbers, then (``sources_numbers_output``) one sentence's tokens of 1,000 sources."""
    for i in itertools.count():
        yield f"{i} "


#: The 1,000 distinct ids one sentence cites (the most rule 2 allows; DOC-9, hidden, left out).
THOUSAND_TOKENS = "".join(f"[OBS-{i}]" for i in range(1, 1000)) + "[EVT-1]"


def sources_numbers_output(pieces: list[Any]) -> dict[str, Any]:
    return {"answer_markdown": "Aurora waited " + "".join(pieces) + THOUSAND_TOKENS + "."}


def missing_words() -> Iterator[str]:
    """Distinct words no source has, then (``missing_words_output``) one citation: one sentence
    whose every word rule 6b names as missing (each named once, as the unit first spells it)."""
    for i in itertools.count():
        yield f"zq{letters(i)} "


def missing_words_output(pieces: list[Any]) -> dict[str, Any]:
    return {"answer_markdown": "Aurora " + "".join(pieces) + "[OBS-1]."}


def duplicate_quotes() -> Iterator[dict[str, Any]]:
    """One ``citations[]`` entry again and again, its quote matching only after normalising."""
    while True:
        yield {"kind": "DOC", "id": 1, "quote": "VESSEL AURORA ENTERED"}


def duplicate_quotes_output(pieces: list[Any]) -> dict[str, Any]:
    return {"answer_markdown": "Aurora entered the corridor [DOC-1].", "citations": pieces}


def inline_html() -> Iterator[str]:
    """Inline HTML nested deeper and deeper in one paragraph, never closed."""
    yield "Aurora waited near buoy 7 [OBS-1]. "
    while True:
        yield '<span class="a"><b><i title="x>y">a '


def link_nesting() -> Iterator[str]:
    """Links nested 1,000 deep, ``[[[[a](#)](#)](#)]``, then a cited sentence."""
    while True:
        yield "[" * 1000 + "a" + "](#)" * 1000 + " Aurora waited [OBS-1]. "


def empty_items() -> Iterator[str]:
    """Empty list items over a line of whitespace reaching their content column: cmark-gfm keeps
    each open, so the reader reads the text twice (``worker.core.claims.cmark_gfm.NOT_BLANK``)."""
    while True:
        yield "- \n \t\n"


def form_feeds() -> Iterator[str]:
    """Lines of a form feed over indented lines: a paragraph for cmark-gfm."""
    while True:
        yield "\f\n    Aurora waited [OBS-1].\n\n"


def hidden_mixed() -> Iterator[str]:
    """Sentences citing the hidden DOC-9 beside a visible source, so each lost a citation and
    its support by the visible one decides whether its words stay (contract v4 rule 5)."""
    for i in itertools.count():
        yield f"Aurora waited near buoy {i % 9} [DOC-9][OBS-{1 + i % 900}]. "


def hidden_headings() -> Iterator[str]:
    """Headings (exempt) that lost a citation: rule 5 asks rule 6b for each."""
    for i in itertools.count():
        yield f"# Aurora waited {i % 9} [DOC-9] [OBS-{1 + i % 900}]\n\n"


def hidden_lines() -> Iterator[str]:
    """A hidden-only group on every line, the next line opening with a visible token: groups
    must be cut at each block, and rule 5's regions read the parser's code blocks."""
    for i in itertools.count():
        yield f"    code {i} [DOC-9]\n[OBS-{1 + i % 900}] Aurora waited.\n\n"


def hidden_rows() -> Iterator[str]:
    """Table rows that lost a citation, under a header row that holds a hidden-only group."""
    yield "| Aurora [DOC-9] | waited |\n|---|---|\n"
    for i in itertools.count():
        yield f"| Aurora waited [DOC-9] | near buoy 7 [OBS-{1 + i % 900}] |\n"


def hidden_claims() -> Iterator[dict[str, Any]]:
    """``claims[]`` items citing the hidden DOC-9 beside a visible source (the gate reads each
    published claim)."""
    for i in itertools.count():
        yield {"text": f"Aurora waited near buoy 7 [DOC-9] [OBS-{1 + i % 900}].", "citations": []}


def short_claims() -> Iterator[str]:
    """The shortest cited sentences: a name and a number. Rule 6b reads each; what a draft
    costs per unit shows here (about 50,000 units in a MiB, against 22,000 in ``citations``)."""
    for i in itertools.count():
        yield f"Aurora {i % 9} [OBS-{1 + i % 900}]. "


def hidden_many() -> Iterator[str]:
    """Short sentences each citing another of 998 hidden documents beside a visible source:
    what is looked for per hidden id must not be scanned for one id at a time."""
    for i in itertools.count():
        yield f"Aurora {i % 9} [DOC-{1 + i % len(MANY_HIDDEN)}][OBS-1]. "


def hidden_claims_many() -> Iterator[dict[str, Any]]:
    """``claims[]`` items each citing another of 998 hidden documents beside a visible source:
    what is made of the hidden ids must be made once for the output, not once for each claim."""
    for i in itertools.count():
        yield {
            "text": f"Aurora waited near buoy 7 [DOC-{1 + i % len(MANY_HIDDEN)}] [OBS-1].",
            "citations": [],
        }


def short_hidden() -> Iterator[str]:
    """The shortest sentences that lost a citation: each asks rule 5 and rule 6b."""
    for i in itertools.count():
        yield f"Aurora {i % 9} [DOC-9][OBS-{1 + i % 900}]. "


def claims_output(pieces: list[Any]) -> dict[str, Any]:
    return {"answer_markdown": "Aurora waited near buoy 7 [OBS-1].", "claims": pieces}


def stray_brackets() -> Iterator[dict[str, Any]]:
    """Many short strings with a bracket that opens no token: rule 2 renders each."""
    for i in itertools.count():
        yield {
            "text": f"[note {i}] Aurora waited near buoy 7 [OBS-{1 + i % 900}].",
            "citations": [],
        }


def answer(pieces: list[Any]) -> dict[str, Any]:
    return {"answer_markdown": "".join(pieces)}


class Shape(NamedTuple):
    """Pieces that fill a draft, how they make its output, and the text of every source."""

    pieces: Callable[[], Iterator[Any]]
    output: Callable[[list[Any]], dict[str, Any]] = answer
    source: str = SOURCE
    #: The ids of the documents hidden from the reader.
    hidden: frozenset[int] = HIDDEN
    #: Whether each document has a title of its own (``corpus``).
    titled: bool = False


SHAPES: dict[str, Callable[[], Iterator[str]] | Shape] = {
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
    "terminator-runs": terminator_runs,
    "quote-stops": quote_stops,
    "sources-numbers": Shape(sources_numbers, sources_numbers_output, NUMBERS_SOURCE),
    "duplicate-quotes": Shape(duplicate_quotes, duplicate_quotes_output, LONG_SOURCE),
    "missing-words": Shape(missing_words, missing_words_output),
    "inline-html": inline_html,
    "link-nesting": link_nesting,
    "empty-items": empty_items,
    "form-feeds": form_feeds,
    "hidden-mixed": hidden_mixed,
    "hidden-headings": hidden_headings,
    "hidden-lines": hidden_lines,
    "hidden-rows": hidden_rows,
    "hidden-claims": Shape(hidden_claims, claims_output),
    "stray-brackets": Shape(stray_brackets, claims_output),
    "short-claims": short_claims,
    "short-hidden": short_hidden,
    "hidden-many": Shape(hidden_many, hidden=MANY_HIDDEN),
    "hidden-titles": Shape(hidden_many, hidden=MANY_HIDDEN, titled=True),
    "hidden-claims-many": Shape(hidden_claims_many, claims_output, hidden=MANY_HIDDEN),
}


def shape_of(name: str) -> Shape:
    found = SHAPES[name]
    return found if isinstance(found, Shape) else Shape(found)


def envelope(output: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "draft_id": "d-adv",
        "turn_id": "t-adv",
        "attempt": 0,
        "tenant_id": "acme",
        "principal": {"user_id": "alice", "groups": ["analysts"]},
        "kind": "answer",
        "output": output,
    }


def letters(n: int) -> str:
    """``n`` in base 26 with the letters a-z (``aa``, ``ab``, ...): a distinct word, no digit."""
    out = ""
    while True:
        n, r = divmod(n, 26)
        out = chr(97 + r) + out
        if n == 0:
            return "a" + out


def distinct(piece: Any, i: int) -> Any:
    """``piece`` with its first ``Aurora`` renamed ``Aurora<letters of i>``: no two pieces of a
    shape repeat, so nothing the core may remember of one unit answers for the next."""
    if isinstance(piece, str):
        return piece.replace("Aurora", "Aurora" + letters(i), 1)
    if isinstance(piece, dict) and isinstance(piece.get("text"), str):
        return {**piece, "text": piece["text"].replace("Aurora", "Aurora" + letters(i), 1)}
    return piece


def draft(shape: Shape | Callable[[], Iterator[str]], size: int, *, unique: bool = False) -> bytes:
    """The envelope bytes of ``shape``'s output, as close to ``size`` bytes as whole pieces
    allow (never over); with ``unique``, every piece made distinct (:func:`distinct`)."""
    if not isinstance(shape, Shape):
        shape = Shape(shape)
    budget = size - len(orjson.dumps(envelope(shape.output([]))))
    pieces: list[Any] = []
    used = 0
    for i, piece in enumerate(shape.pieces()):
        if unique:
            piece = distinct(piece, i)  # noqa: PLW2901 - the piece as it goes in
        # its JSON bytes: a string joins the others (no quotes), an object is one more item
        cost = len(orjson.dumps(piece)) + (-2 if isinstance(piece, str) else 1)
        if used + cost > budget:
            break
        pieces.append(piece)
        used += cost
    value = orjson.dumps(envelope(shape.output(pieces)))
    assert len(value) <= size, len(value)
    return value


#: What each ``--gc`` mode does around a draft's decision.
GC_MODES = {
    "worker": "as the worker runs (GW_GC_PAUSED_IN_BATCH=true) and as check decides: start-up "
    "heap collected and frozen once; no automatic collection in admit or judge (inside a batch, "
    "or a look-ahead's step)",
    "on": "CPython's collector as is, nothing frozen",
}

#: Former ``--gc`` modes, still accepted: the mode each now runs. ``paused`` (``check``'s way)
#: became the same as ``worker`` once the look-ahead paused the collector too.
GC_ALIASES = {"paused": "worker"}


def decide(
    value: bytes, records: dict[CitationRef, EvidenceRecord], collector: str = "worker"
) -> str:
    """The core's whole decision on one record value, as the worker and ``check`` make it, with
    the collector as ``collector`` says (``GC_MODES``)."""
    if collector != "on":
        gc.disable()
    try:
        admitted = admit(b"t-adv", value, max_bytes=MAX_BYTES, policies=POLICIES)
        if not isinstance(admitted, Admitted):
            return f"dead_letter ({admitted.error_class.value})"
        found = {r: records[r] for r in admitted.refs if r in records}
        judgement = judge(admitted, None, found, NOW, retention_s=None)
    finally:
        gc.enable()
    codes = judgement.failure_codes
    return judgement.outcome.value + (f" ({codes[0]})" if codes else "")


def cpu(work: Callable[[], object]) -> tuple[float, object]:
    start = time.process_time()
    result = work()
    return time.process_time() - start, result


def interpreter() -> str:
    """Which Python decided: production runs a PGO+LTO build (``scripts/bench`` makes
    ``.venv-bench`` on one; run this module with its ``python`` to measure on it)."""
    return f"python {platform.python_version()} ({sys.executable})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.25,0.5,1", help="draft sizes in MiB")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="which shapes")
    parser.add_argument("--limit", type=float, default=1.0, help="CPU seconds allowed per draft")
    parser.add_argument(
        "--gc",
        choices=(*GC_MODES, *GC_ALIASES),
        default="worker",
        help="; ".join(
            [f"{mode}: {what}" for mode, what in GC_MODES.items()]
            + [f"{alias}: deprecated, the same as {mode}" for alias, mode in GC_ALIASES.items()]
        ),
    )
    parser.add_argument(
        "--distinct",
        action="store_true",
        help="rename each piece's 'Aurora' apart (Auroraab, Auroraac, ...) so no unit repeats: "
        "what a per-draft memo of repeated units cannot answer",
    )
    args = parser.parse_args(argv)
    if args.gc in GC_ALIASES:
        print(f"--gc {args.gc} is deprecated: it runs --gc {GC_ALIASES[args.gc]}", file=sys.stderr)
        args.gc = GC_ALIASES[args.gc]
    sizes = [float(s) for s in args.sizes.split(",")]
    shapes = {name: shape_of(name) for name in args.shapes.split(",")}
    corpora = {
        key: corpus(*key) for key in {(s.source, s.hidden, s.titled) for s in shapes.values()}
    }
    if args.gc != "on":  # the worker settles once it is up (worker/stream/processing/collector.py)
        gc.collect()
        gc.freeze()
    print(f"{'shape':18} {'MiB':>6} {'outcome':>34} {'cpu s':>8} {'s/MiB':>8} {'x decode':>9}")
    worst = (0.0, "", 0.0)
    for name, shape in shapes.items():
        for mib in sizes:
            value = draft(shape, min(int(mib * MIB), MAX_BYTES), unique=args.distinct)
            size = len(value) / MIB
            decode, _ = cpu(functools.partial(orjson.loads, value))
            records = corpora[shape.source, shape.hidden, shape.titled]
            seconds, outcome = cpu(functools.partial(decide, value, records, args.gc))
            ratio = seconds / decode if decode > 0 else float("inf")
            print(
                f"{name:18} {size:6.3f} {outcome!s:>34} {seconds:8.3f} {seconds / size:8.3f}"
                f" {ratio:9.0f}",
                flush=True,
            )
            worst = max(worst, (seconds, name, size))
    seconds, name, size = worst
    print(
        f"max: {seconds:.3f} s ({name}, {size:.3f} MiB); limit {args.limit:.1f} s; "
        f"gc {args.gc}: {GC_MODES[args.gc]}; "
        f"{'distinct units; ' if args.distinct else ''}{interpreter()}; "
        "CPU time of this process, not wall time"
    )
    return 1 if seconds > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
