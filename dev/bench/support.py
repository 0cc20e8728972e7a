"""``python -m dev.bench.support``: the support check (contract rule 6b) against human labels.

The labelled set is WiCE (Kamoi, Goyal, Rodriguez, Durrett, "WiCE: Real-World Entailment for
Claims in Wikipedia", EMNLP 2023; annotations ODC-BY 1.0, claims CC BY-SA 4.0, evidence web text
archived by Common Crawl; ``../shared/data/wice/README.md``). One claim per draft citing its
page: the page's ``(meta data) TITLE:`` line is the document's title, its other sentences the
text, and the claim is checked by the worker's own ``check_cited`` against that one document
(one :class:`SourceIndex` for the split, as one batch). Thresholds are tuned on
``claim-dev.jsonl`` only; the figures that count are ``claim-test.jsonl``'s.

Printed: per label, the share ``unsupported`` (``supported`` accused; ``not_supported`` and
``partially_supported`` caught) and the share ``unsupported`` or ``weak``; the same for the
plain content-word baseline (share of the claim's content words found in the page below 0.5);
per kind of finding, how often it fires and its precision (``partially_supported`` and
``not_supported`` both count as unsupported); and on ``tokens-*.jsonl`` how many of the words
a verdict names as missing the annotators marked unsupported.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from worker.core import (
    FAILING,
    CitationRef,
    EvidenceKind,
    Finding,
    SourceIndex,
    SourceText,
    SupportLevel,
    SupportResult,
    check_cited,
    check_support,
)

#: Where the set is: beside the checkout (``../shared/data/wice``).
DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "wice"
LABELS = ("supported", "not_supported", "partially_supported")
_TITLE = "(meta data) TITLE:"
_DOC = CitationRef(EvidenceKind.DOC, 1)
_WORD = re.compile(r"\w+")
#: The baseline's stop words: the list the worker itself used before words weighed by rarity
#: (support.py until contract v4), and the single letters a split leaves.
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "then",
        "than",
        "that",
        "this",
        "these",
        "those",
        "there",
        "here",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "as",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "after",
        "before",
        "during",
        "between",
        "through",
        "within",
        "across",
        "per",
        "via",
        "up",
        "down",
        "out",
        "off",
        "again",
        "further",
        "once",
        "is",
        "am",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "do",
        "does",
        "did",
        "doing",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
        "it",
        "its",
        "it's",
        "they",
        "them",
        "their",
        "theirs",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "we",
        "us",
        "our",
        "ours",
        "you",
        "your",
        "yours",
        "i",
        "me",
        "my",
        "mine",
        "who",
        "whom",
        "whose",
        "which",
        "what",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "so",
        "too",
        "very",
        "just",
        "also",
        "not",
        "no",
        "nor",
        "never",
        "s",
        "t",
        "also",
        "while",
        "since",
        "until",
        "both",
        "either",
        "yet",
        "already",
        "still",
        "said",
        "says",
        "say",
        "reported",
        "report",
        "reports",
        "according",
        "per",
        "cent",
        "percent",
        "approximately",
        "about",
        "around",
        "roughly",
        "nearly",
        "almost",
        "some",
        "several",
        "many",
        "much",
    ]
) | frozenset("abcdefghijklmnopqrstuvwxyz")


class Item(NamedTuple):
    label: str
    claim: str
    title: str
    text: str


class Judged(NamedTuple):
    item: Item
    result: SupportResult
    baseline_accused: bool


class Figures(NamedTuple):
    """The table's figures for one split."""

    n: dict[str, int]
    #: Per label: share ``unsupported`` by the worker, share ``unsupported`` or ``weak``, and the
    #: baseline's share accused.
    unsupported: dict[str, float]
    flagged: dict[str, float]
    baseline: dict[str, float]
    #: Per kind: (fired, precision or None).
    kinds: dict[Finding, tuple[int, float | None]]


def page(evidence: Sequence[str]) -> tuple[str, str]:
    """The cited page as a document: its title line, and its other sentences joined."""
    title = ""
    rest = list(evidence)
    if rest and rest[0].startswith(_TITLE):
        title = rest.pop(0)[len(_TITLE) :].strip()
    return title, " ".join(rest)


def load(path: Path) -> list[Item]:
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            title, text = page(row["evidence"])
            items.append(Item(row["label"], row["claim"], title, text))
    return items


def check(items: Sequence[Item]) -> list[SupportResult]:
    """Each claim checked as the worker checks a unit citing one document (``verdict.py``'s
    source text: ``title``, newline, ``text``), one index for the set."""
    index = SourceIndex()
    out = []
    for item in items:
        cited = index.cited({_DOC: f"{item.title}\n{item.text}" if item.title else item.text})
        out.append(check_cited(item.claim, [_DOC], cited, index))
    return out


def baseline_share(item: Item) -> float:
    """The plain content-word baseline: the share of the claim's content words in the page."""
    words = [w for w in _WORD.findall(item.claim.lower()) if w not in _STOP]
    if not words:
        return 1.0
    seen = set(_WORD.findall(f"{item.title} {item.text}".lower()))
    return sum(w in seen for w in words) / len(words)


def judge(items: Sequence[Item]) -> list[Judged]:
    return [
        Judged(item, result, baseline_share(item) < 0.5)
        for item, result in zip(items, check(items), strict=True)
    ]


def figures(judged: Sequence[Judged]) -> Figures:
    n = {label: sum(j.item.label == label for j in judged) for label in LABELS}

    def share(label: str, hit: object) -> float:
        rows = [j for j in judged if j.item.label == label]
        return sum(bool(hit(j)) for j in rows) / len(rows) if rows else 0.0  # type: ignore[operator]

    unsupported = {
        label: share(label, lambda j: j.result.level is SupportLevel.UNSUPPORTED)
        for label in LABELS
    }
    flagged = {
        label: share(
            label, lambda j: j.result.level in (SupportLevel.UNSUPPORTED, SupportLevel.WEAK)
        )
        for label in LABELS
    }
    baseline = {label: share(label, lambda j: j.baseline_accused) for label in LABELS}
    kinds: dict[Finding, tuple[int, float | None]] = {}
    for kind in Finding:
        fired = [j for j in judged if kind in j.result.findings]
        right = sum(j.item.label != "supported" for j in fired)
        kinds[kind] = (len(fired), right / len(fired) if fired else None)
    return Figures(n, unsupported, flagged, baseline, kinds)


def token_agreement(path: Path) -> tuple[int, int]:
    """Of the words the verdicts name as missing, how many the annotators marked unsupported
    (``tokens-*.jsonl``): (named and marked, named)."""
    index = SourceIndex()
    named = marked = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        title, text = page(row["evidence"])
        cited = index.cited({_DOC: f"{title}\n{text}" if title else text})
        result = check_cited(row["claim"], [_DOC], cited, index)
        unsupported = {
            t.casefold()
            for t, flag in zip(row["claim_tokens"], row["non_supported_spans"], strict=True)
            if flag
        }
        for word in result.missing_words:
            named += 1
            marked += word.casefold() in unsupported
    return marked, named


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def table(fig: Figures) -> str:
    lines = [
        "| label | n | worker: `unsupported` | worker: `unsupported` or `weak` | baseline |",
        "|---|---:|---:|---:|---:|",
    ]
    what = {
        "supported": "`supported` accused",
        "not_supported": "`not_supported` caught",
        "partially_supported": "`partially_supported` caught",
    }
    for label in LABELS:
        lines.append(
            f"| {what[label]} | {fig.n[label]} | {_pct(fig.unsupported[label])} | "
            f"{_pct(fig.flagged[label])} | {_pct(fig.baseline[label])} |"
        )
    lines += ["", "| kind of finding | fires | precision | fails |", "|---|---:|---:|---|"]
    for kind, (fired, precision) in fig.kinds.items():
        p = "-" if precision is None else f"{precision:.2f}"
        fails = "yes" if kind in FAILING else "no"
        lines.append(f"| `{kind.value}` | {fired} | {p} | {fails} |")
    return "\n".join(lines)


def linear(sources: int = 1000, numbers: int = 147_000) -> tuple[int, float]:
    """One sentence citing ``sources`` sources with ``numbers`` numbers (1 MiB at the defaults):
    its size and the CPU seconds its check takes (one index, as one batch). The check is linear
    by construction (``index.py``); this is the figure the adversarial round measured."""
    texts = [
        SourceText(
            CitationRef(EvidenceKind.OBS, i + 1), f"Sensor {i} read {i * 7} units, {i}.5 ms."
        )
        for i in range(sources)
    ]
    unit = "Readings were " + ", ".join(str(k * 7 % 100_000) for k in range(numbers)) + "."
    check_support("Warm up: 1.", texts[:1])  # the word tables load once per process
    start = time.process_time()
    check_support(unit, texts, SourceIndex())
    return len(unit), time.process_time() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--split", choices=("dev", "test"), default="test")
    parser.add_argument("--misses", action="store_true", help="print each miss and accusation")
    parser.add_argument(
        "--linear", action="store_true", help="time one sentence, 1,000 sources, 147,000 numbers"
    )
    args = parser.parse_args(argv)
    if args.linear:
        for sources, numbers in ((100, 14_700), (1000, 147_000)):
            size, seconds = linear(sources, numbers)
            print(f"{sources} sources, {numbers} numbers, {size} B: {seconds:.2f} s of CPU")
        return 0
    if not (args.data / f"claim-{args.split}.jsonl").exists():
        print(f"no WiCE data at {args.data}", file=sys.stderr)
        return 2
    judged = judge(load(args.data / f"claim-{args.split}.jsonl"))
    print(table(figures(judged)))
    marked, named = token_agreement(args.data / f"tokens-{args.split}.jsonl")
    share = marked / named if named else 0.0
    print(f"\nmissing words the annotators marked unsupported: {marked} of {named} ({_pct(share)})")
    if args.misses:
        for j in judged:
            accused = j.result.level is SupportLevel.UNSUPPORTED
            if accused != (j.item.label != "supported"):
                r = j.result
                print(
                    f"\n[{j.item.label} -> {r.level.value} {r.score}] {j.item.claim}\n"
                    f"   findings={[f.value for f in r.findings]} values={r.missing_numbers} "
                    f"words={r.missing_words[:8]}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
