#!/usr/bin/env python3
"""Build ``tests/data/real_prose/`` from public model outputs (provenance of the real-prose set).

    .venv/bin/python -m dev.real_prose_build ALPACA_EVAL_CHECKOUT CLLM_CHECKOUT

``ALPACA_EVAL_CHECKOUT``: a checkout of https://github.com/tatsu-lab/alpaca_eval (commit
cd543a149df89434d8a54582c0151c0b945c3d20); ``CLLM_CHECKOUT``: one of
https://github.com/kid1999/CLLM (commit 3f579ad11219e4f6b9c29a8a71b3f6ca1c4bc09c). The selection
is deterministic (the first qualifying answers in file order), so the set can be rebuilt and
checked; ``tests/data/real_prose/README.md`` names the sources and their licences.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "real_prose"
#: English: long-form answers of two chat models to AlpacaEval's 805 instructions.
EN_MODELS = ("gpt4_1106_preview", "claude-3-opus-20240229")
EN_PER_MODEL = 25
#: Chinese: the first of the ten sampled answers to each question (MIX and BASE sets).
ZH_FILES = ("MIX/gpt", "MIX/google", "MIX/chatglm", "BASE/gpt", "BASE/google")
ZH_PER_FILE = 12


def _markdown(text: str) -> bool:
    return "**" in text or "\n- " in text or "\n1. " in text or "\n#" in text


def _chinese(text: str) -> bool:
    """Mostly Chinese: some answers to the Chinese questions came back in English."""
    han = sum(1 for c in text if "\u4e00" <= c <= "\u9fff")
    return han >= 0.3 * len(text)


def main(alpaca: Path, cllm: Path) -> None:
    en: list[dict[str, str]] = []
    for model in EN_MODELS:
        rows = json.loads((alpaca / "results" / model / "model_outputs.json").read_text("utf-8"))
        picked = [r for r in rows if 600 <= len(r["output"]) <= 2500 and _markdown(r["output"])][
            :EN_PER_MODEL
        ]
        en += [
            {"id": f"en-{model}-{i}", "source": f"alpaca_eval/results/{model}", "text": r["output"]}
            for i, r in enumerate(picked)
        ]
    zh: list[dict[str, str]] = []
    for name in ZH_FILES:
        rows = json.loads((cllm / "datas" / f"{name}.json").read_text("utf-8"))
        answers = [r["answers"][0] for r in rows]
        picked = [a for a in answers if len(a) >= 200 and _markdown(a) and _chinese(a)]
        picked = picked[:ZH_PER_FILE]
        zh += [
            {"id": f"zh-{name.replace('/', '-')}-{i}", "source": f"CLLM/datas/{name}", "text": a}
            for i, a in enumerate(picked)
        ]
    for lang, rows in (("en", en), ("zh", zh)):
        with (OUT / f"{lang}.jsonl").open("w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
