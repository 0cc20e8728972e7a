"""Show that citation extraction is linear in its input (contract §3.3): a benchmark, not a test.

Times ``find_tokens`` (the scanner under ``extract``) and ``remove_all_tokens`` on 1 MiB of plain
prose and on adversarial 1 MiB inputs, and prints each adversarial time as a ratio of plain prose.
A backtracking pattern would blow up on the adversarial cases by orders of magnitude; a linear
scanner stays within a small constant factor. Token-free prose is found by a C-level ``[`` search,
so its time is close to a memory scan; the second ratio compares with realistic cited prose,
which pays for building one object per token. It also times 2 MiB and 4 MiB of the worst case:
the time must roughly double with the size.

Usage: .venv/bin/python -m dev.bench.extract
"""

from __future__ import annotations

import time
from collections.abc import Callable

from worker.core import (
    CitationRef,
    EvidenceKind,
    extract,
    find_tokens,
    hidden_of,
    remove_all_tokens,
    remove_hidden,
    sentence_spans,
)

MIB = 1 << 20
PROSE = (
    "The vessel loitered in the northern corridor for 12.5 hours before turning south, "
    "and its AIS transponder went silent twice during the transit. "
)
CITED = "The vessel loitered in the corridor for 12.5 hours [OBS-50412][DOC-9931]. "


def fill(unit: str, size: int = MIB) -> str:
    """``unit`` repeated to exactly ``size`` characters."""
    return (unit * (size // len(unit) + 1))[:size]


def growing_ticks(size: int = MIB) -> str:
    """Runs of backticks of growing width, each a code-span opener without a closer of its
    width: the shape whose scan was cubic before code spans were found by width."""
    parts, width, total = [], 1, 0
    while total < size:
        part = "`" * width + " x "
        parts.append(part)
        total += len(part)
        width += 1
    return "".join(parts)[:size]


def best_of(fn: Callable[[str], object], text: str, rounds: int = 5) -> float:
    """The fastest of ``rounds`` runs, in seconds (the least disturbed by the machine)."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    cases = {
        "plain prose": fill(PROSE),
        "cited prose (1 token / 38 chars)": fill(CITED),
        'repeated "[OBS-"': fill("[OBS-"),
        'repeated "[OBS-1"': fill("[OBS-1"),
        'one "[OBS-" then digits': "[OBS-" + "7" * (MIB - 5),
        'repeated "[[[["': fill("["),
        'list items "- a\\n"': fill("- a\n"),
        'paragraphs "a.\\n\\n"': fill("a.\n\n"),
        "backtick runs of growing width": growing_ticks(),
    }
    functions: dict[str, Callable[[str], object]] = {
        "find_tokens": find_tokens,
        "extract": lambda text: extract({"answer_markdown": text}),
        "remove_all_tokens": remove_all_tokens,
        "sentence_spans": sentence_spans,
    }
    for name, fn in functions.items():
        print(f"\n{name} (1 MiB each, best of 5)")
        base = best_of(fn, cases["plain prose"])
        cited = best_of(fn, cases["cited prose (1 token / 38 chars)"])
        for label, text in cases.items():
            seconds = best_of(fn, text)
            ratio = seconds / base
            cited_ratio = seconds / cited
            print(f"  {label:34s} {seconds:8.4f} s  x{ratio:7.2f} plain  x{cited_ratio:5.2f} cited")
    print("\nsentence_spans on backtick runs of growing width: time per MiB")
    per = [best_of(sentence_spans, growing_ticks(n * MIB), rounds=3) / n for n in (1, 2, 4)]
    print("  " + "  ".join(f"{n} MiB: {p:.4f} s/MiB" for n, p in zip((1, 2, 4), per, strict=True)))
    print("\nscaling of the worst cases (find_tokens, sentence_spans): time per MiB")
    for label, unit in (('"[OBS-1"', "[OBS-1"), ('"[OBS-"', "[OBS-")):
        for fn_name in ("find_tokens", "sentence_spans"):
            fn = functions[fn_name]
            per = [best_of(fn, fill(unit, n * MIB), rounds=3) / n for n in (1, 2, 4)]
            sizes = zip((1, 2, 4), per, strict=True)
            shown = "  ".join(f"{n} MiB: {p:.4f} s/MiB" for n, p in sizes)
            print(f"  {fn_name:15s} {label:10s} {shown}")
    print("\nrule 5's hidden-words pass on hidden-only citations: time per MiB")
    hidden = hidden_of(frozenset({CitationRef(EvidenceKind.DOC, 9002)}), "Hedged.", [])
    for label, unit in (
        ('"x. [DOC-9002] "', "x. [DOC-9002] "),
        ('"a [DOC-9002] "', "a [DOC-9002] "),
        ('"| a [DOC-9002] "', "| a [DOC-9002] "),
    ):
        per = [
            best_of(lambda t: remove_hidden(t, hidden), fill(unit, n * MIB), rounds=3) / n
            for n in (1, 2, 4)
        ]
        shown = "  ".join(f"{n} MiB: {p:.4f} s/MiB" for n, p in zip((1, 2, 4), per, strict=True))
        print(f"  {label:20s} {shown}")


if __name__ == "__main__":
    main()
