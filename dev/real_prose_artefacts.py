#!/usr/bin/env python3
"""How often the segmentation makes a unit of real prose that is not really a claim.

    .venv/bin/python -m dev.real_prose_artefacts [--code CHECKOUT] [--lang en|zh] [--list]
        [--sample] [--labels tests/data/real_prose/labels.json]

Runs the claim units of ``worker.core.claims.units`` (of the checkout ``--code``, this one by
default:
point it at a worktree of another commit to measure that commit) over the public model answers of
``tests/data/real_prose/`` as uncited ``answer_markdown``, so every unit it lists is one the
verdict would fail as ``uncited_claim``. Each unit gets a hint from simple detectors of the
artefacts the contract's rule 7 exempts or forbids:

- ``heading_bold``: a unit that is all emphasis (a bold line used as a heading);
- ``lead_in``: it ends in ``:`` or ``：`` (closing emphasis allowed);
- ``label``: a few words and no terminator (a caption, a name, a heading without marks);
- ``split_enclosure``: it opens a parenthesis or quotation it does not close, or the reverse;
- ``abbreviation``: it ends in a short word and ``.`` and the next unit starts in lower case;
- ``cjk_unsplit``: it holds ``。``, ``！`` or ``？`` followed by more text (several sentences).

Labels (hand-made, ``tests/data/real_prose/labels.json``): ``claim``, one of the kinds above,
``question`` (a question read as an assertion), or ``filler`` (a sentence with nothing to check:
"Certainly!", "Enjoy your meal!"). The segmentation artefact rate leaves fillers out: the
contract makes them units and no split can tell them from claims.

Hints are not labels. The hand labels (``--labels``, keyed by answer id and the unit's text) say
what each unit of the sample really is; the artefact rate is artefacts / labelled units of the
sample. ``--sample`` lists the sample only (the units whose key hashes to the sample: the same
unit text is in the sample before and after a change), ``--list`` every unit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "real_prose"
#: One unit in ``SAMPLE_EVERY`` (by a hash of its key) is in the hand-labelled sample.
SAMPLE_EVERY = {"en": 3, "zh": 2}
KINDS = (
    "heading_bold",
    "lead_in",
    "label",
    "split_enclosure",
    "abbreviation",
    "cjk_unsplit",
)

_ALL_EMPHASIS = re.compile(r"(\*{1,3}|_{1,3})\S.*\S\1[.:：]?|(\*{1,3}|_{1,3})\S\2[.:：]?", re.S)
_LEAD_IN = re.compile(r".*[:：][*_\s]*", re.S)
_CJK_INNER = re.compile(r"[。！？][」』”’）)]*\s*\S")
_SHORT_END = re.compile(r"(?:^|\s)[A-Za-z]{1,4}\.$")
_PAIRS = {"(": ")", "（": "）", "“": "”", "「": "」", "『": "』"}


#: Run in the checkout named by ``--code`` (its ``worker`` is the first one found from there): the
#: sentence units of each text read from stdin, one JSON list per line.
_UNITS_IN_CHECKOUT = """
import json, sys
from worker.core.claims.units import claim_units
for line in sys.stdin:
    units = claim_units({"answer_markdown": json.loads(line)}, "answer")
    print(json.dumps([u.text for u in units], ensure_ascii=False))
"""


def units_per_text(code: Path, texts: list[str]) -> list[list[str]]:
    """The sentence units of each text as uncited ``answer_markdown``, by the code at ``code``:
    in a child interpreter started in that checkout, so no import path is edited here."""
    feed = "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in texts)
    out = subprocess.run(
        [sys.executable, "-c", _UNITS_IN_CHECKOUT],
        cwd=code,
        input=feed,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return [json.loads(line) for line in out.stdout.splitlines()]


def hint(unit: str, following: str | None) -> str:
    """The artefact a simple detector suspects in ``unit``, or ``-``."""
    stripped = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", unit.strip())
    if _ALL_EMPHASIS.fullmatch(stripped):
        return "heading_bold"
    if _LEAD_IN.fullmatch(stripped):
        return "lead_in"
    if _CJK_INNER.search(stripped.rstrip("。！？」』”’）) ")):
        return "cjk_unsplit"
    for opener, closer in (*_PAIRS.items(), ('"', '"')):
        if opener == closer:
            if stripped.count(opener) % 2:
                return "split_enclosure"
        elif stripped.count(opener) != stripped.count(closer):
            return "split_enclosure"
    if _SHORT_END.search(stripped) and following is not None and following.strip()[:1].islower():
        return "abbreviation"
    words = stripped.split()
    cjk = sum(1 for c in stripped if "\u4e00" <= c <= "\u9fff")
    if stripped[-1:] not in ".!?。！？)" and (len(words) <= 4 if not cjk else cjk <= 6):
        return "label"
    return "-"


def key_of(answer_id: str, unit: str) -> str:
    digest = hashlib.sha256(f"{answer_id}\x00{unit}".encode()).hexdigest()
    return f"{answer_id}:{digest[:16]}"


def in_sample(key: str, lang: str) -> bool:
    return int(key.rsplit(":", 1)[1], 16) % SAMPLE_EVERY[lang] == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT)
    parser.add_argument("--lang", choices=("en", "zh"), action="append")
    parser.add_argument("--list", action="store_true", help="print every unit")
    parser.add_argument("--sample", action="store_true", help="print the sample's units")
    parser.add_argument("--labels", type=Path, default=DATA / "labels.json")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    labels: dict[str, dict[str, dict[str, str]]] = (
        json.loads(args.labels.read_text("utf-8")) if args.labels.exists() else {}
    )
    figures: dict[str, Any] = {}
    for lang in args.lang or ["en", "zh"]:
        rows = [json.loads(line) for line in (DATA / f"{lang}.jsonl").open(encoding="utf-8")]
        hints: Counter[str] = Counter()
        labelled: Counter[str] = Counter()
        artefacts: list[tuple[str, str, str]] = []
        total = sampled = unlabelled = 0
        for row, units in zip(
            rows, units_per_text(args.code.resolve(), [r["text"] for r in rows]), strict=True
        ):
            for n, unit in enumerate(units):
                total += 1
                guess = hint(unit, units[n + 1] if n + 1 < len(units) else None)
                hints[guess] += 1
                key = key_of(row["id"], unit)
                sample = in_sample(key, lang)
                if args.list or (args.sample and sample):
                    print(f"{key}\t{guess}\t{json.dumps(unit, ensure_ascii=False)}")
                if not sample:
                    continue
                sampled += 1
                label = labels.get(lang, {}).get(key)
                if label is None:
                    unlabelled += 1
                    continue
                labelled[label["label"]] += 1
                if label["label"] != "claim":
                    artefacts.append((key, label["label"], unit))
        done = sum(labelled.values())
        rate = (done - labelled["claim"]) / done if done else 0.0
        # Segmentation artefacts: what rule 7's reading gets wrong. A filler ("Certainly!") is
        # a sentence by the contract and no claim, but no split can tell: counted apart.
        segmentation = (done - labelled["claim"] - labelled["filler"]) / done if done else 0.0
        figures[lang] = {
            "answers": len(rows),
            "units": total,
            "hints": dict(hints),
            "sample": sampled,
            "labelled": done,
            "unlabelled": unlabelled,
            "labels": dict(labelled),
            "artefact_rate": round(rate, 4),
            "segmentation_artefact_rate": round(segmentation, 4),
        }
        if not args.json:
            print(
                f"[{lang}] {len(rows)} answers, {total} uncited units; hints: "
                + ", ".join(f"{k} {v}" for k, v in sorted(hints.items()))
            )
            print(
                f"[{lang}] sample {sampled} units, {done} labelled ({unlabelled} not): "
                + ", ".join(f"{k} {v}" for k, v in sorted(labelled.items()))
                + f"; segmentation artefacts {segmentation:.1%}, all non-claims {rate:.1%}"
            )
            for key, kind, unit in artefacts:
                print(f"    {kind:16s} {key}  {json.dumps(unit, ensure_ascii=False)[:160]}")
    if args.json:
        print(json.dumps(figures, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
