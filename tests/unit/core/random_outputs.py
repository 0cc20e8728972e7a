"""Random agent outputs for the property tests of the core's fast paths.

Tokens of every resolution (resolved, hidden to one principal or both, revoked, dangling, leading
zeros, huge ids) appear in every kind of string, structured arrays and quotes; Markdown pieces
exercise the sentence splitter. Values only: drafts are built by the tests (``fixtures``).
"""

from __future__ import annotations

import random
from typing import Any

TOKENS = [
    "[OBS-50412]", "[OBS-50418]", "[EVT-2741]", "[DOC-9931]", "[DOC-777]", "[DOC-888]",
    "[DOC-4242]", "[DOC-5555]", "[OBS-60001]", "[OBS-60002]", "[OBS-0050412]", "[DOC-",
    "[OBS-99999999999999999999999]",
]  # fmt: skip
PIECES = [
    "a", "Vessel", " ", "  ", "\t", "\n", "\n\n", "7", "4.5", ".", "..", "!", "?", "…", ":", ",",
    '"', "'", "”", ")", "]", "[", "*", "_", "`", "```", "~~~", "# ", "## ", "- ", "* ", "+ ",
    "1. ", "2) ", "> ", "|", "| a | b |", "|---|---|", "---", "===", "e.g.", "No.", "no.", "Dr.",
    "J.", "etc.", "U.S.", "1st.", "2023.", " A", " b", "The ship moved", " north", "Jan.", " 5",
    "Inc.", "a.m.", "x", *TOKENS, *TOKENS,
]  # fmt: skip
ENTRIES = [
    ("OBS", 50412), ("OBS", 50418), ("EVT", 2741), ("DOC", 9931), ("DOC", 777), ("DOC", 888),
    ("DOC", 4242), ("DOC", 5555), ("OBS", 60001), ("OBS", 60002), ("OBS", 12),
]  # fmt: skip
QUOTES = [None, "entered the northern corridor", "closed to TANKERS after dusk", "nonsense", ""]


def markdown(r: random.Random, size: int = 40) -> str:
    return "".join(r.choice(PIECES) for _ in range(r.randint(0, size)))


def entry(r: random.Random, quote: bool = False) -> dict[str, Any]:
    kind, ident = r.choice(ENTRIES)
    out: dict[str, Any] = {"kind": kind, "id": ident}
    if quote and r.random() < 0.6:
        out["quote"] = r.choice(QUOTES)
    return out


def entries(r: random.Random, most: int, quote: bool = False) -> list[dict[str, Any]]:
    return [entry(r, quote) for _ in range(r.randint(0, most))]


def answer(r: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {"answer_markdown": markdown(r, 60)}
    if r.random() < 0.7:
        out["citations"] = entries(r, 4, quote=True)
    if r.random() < 0.6:
        out["claims"] = [
            {"text": markdown(r, 10), "citations": entries(r, 2)} for _ in range(r.randint(0, 3))
        ]
    if r.random() < 0.3:
        out["tool_calls_made"] = [markdown(r, 3) for _ in range(2)]
    if r.random() < 0.2:
        out["withheld"] = [{"reason": markdown(r, 5), "metric": r.choice([None, markdown(r, 3)])}]
    if r.random() < 0.1:
        out["no_grounding"] = r.random() < 0.5
    return out


def report(r: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {
        "title": markdown(r, 5),
        "sections": [
            {
                "heading": markdown(r, 4),
                "body_markdown": markdown(r, 30),
                "citations": entries(r, 2),
            }
            for _ in range(r.randint(0, 4))
        ],
        "timeline": [
            {"at": "2026-12-01T04:10:00Z", "text": markdown(r, 8), "citations": entries(r, 2)}
            for _ in range(r.randint(0, 3))
        ],
        "status": r.choice(["DRAFT"] * 5 + ["FINAL"]),
    }
    if r.random() < 0.5:
        interval = r.choice([None, markdown(r, 3)])
        out["base_rates"] = [
            {"metric": markdown(r, 3), "value": 0.5, "sample_n": 3, "interval": interval}
        ]
    return out


def proposal(r: random.Random) -> dict[str, Any]:
    kind = r.choice(["entity_flag", "case_update", "adjudication", "source_mapping"])
    patch = {
        "entity_flag": {"entity_id": "v", "flag": "review", "reason": markdown(r, 8)},
        "case_update": {"case_id": "c", "note": markdown(r, 8)},
        "adjudication": {"subject_id": "s", "decision": "defer", "rationale": markdown(r, 8)},
        "source_mapping": {
            "source_id": markdown(r, 3),
            "entity_type": "vessel",
            "mappings": [{"source_field": markdown(r, 3), "target_field": "name"}],
        },
    }[kind]
    observations = [r.choice([50412, 50418, 60001, 7]) for _ in range(r.randint(0, 3))]
    return {
        "proposal_type": kind,
        "summary": markdown(r, 15),
        "patch": patch,
        "grounding": {"reasoning": markdown(r, 10), "observations": observations},
        "confidence": r.choice([0.5, 0.95]),
        "gate": r.choice(["Q8", "Q10"]),
        "auto_appliable": r.random() < 0.5,
    }


def output(r: random.Random) -> tuple[str, dict[str, Any]]:
    """``(kind, output)``: a random schema-valid output (mostly; a report may be published)."""
    kind = r.choice(["answer"] * 5 + ["report"] * 3 + ["proposal"] * 2)
    make = {"answer": answer, "report": report, "proposal": proposal}[kind]
    return kind, make(r)
