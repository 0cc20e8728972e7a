"""The optimised sentence splitter against the plain one it replaced (contract §3.7).

``sentences_reference`` is the splitter as first written; ``test_claims.py`` holds the behaviour
examples. Here random Markdown built from the characters the splitter acts on must yield the very
same spans, with and without the caller's token spans, and ``has_assertion`` must agree.
"""

from __future__ import annotations

import sentences_reference
from hypothesis import example, given, settings
from hypothesis import strategies as st

from worker.core.citations import Tokens, scan_tokens
from worker.core.sentences import has_assertion, sentence_spans

PIECES = [
    "a", "Vessel", " ", "  ", "\t", "\n", "\n\n", "7", "4.5", ".", "..", "!", "?", "…", ":", ",",
    '"', "'", "”", ")", "]", "[", "*", "_", "`", "```", "~~~", "# ", "## ", "- ", "* ", "+ ", "1. ",
    "2) ", "> ", "|", "| a | b |", "|---|---|", "---", "===", "e.g.", "No.", "no.", "Dr.", "J.",
    "etc.", "U.S.", "1st.", "2023.", " A", " b", "[OBS-1]", "[DOC-22]", "[EVT-007]", "[OBS-",
    "(", "vs.", "Fig.", "E.G.", "NO.", "ſt.", "x.No.", "No. 5", "Vol.\n7", "i.e.)",
    "OBS-1]", "``", "\r", "\u00a0", "²", "É.", "x:", ": [OBS-3]\n", "?)", "Jan.", "a.m.",
]  # fmt: skip
MARKDOWN = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@given(MARKDOWN)
@settings(max_examples=1500, deadline=None)
@example("Vessel X loitered. [OBS-1][OBS-2] It left at dawn [DOC-3]! Next one?")
@example("> - Note:\n> [OBS-1]\n> next. e.g. here [DOC-2].")
@example("```\ncode. [OBS-1]\n```\nText `a. b` ends. J. Smith [OBS-1]. etc. A")
@example("Note: [OBS-1]\n  [DOC-2] \r\nNext: x. No. 5 ends?) [EVT-3] here")
@example("(No. 5) ends. [e.g. x] NO. 7 and x.No. 8 and 1No. 9; ſt. A vs. B. Fig. 2.")
def test_sentence_spans_match_the_reference(markdown: str) -> None:
    expected = sentences_reference.sentence_spans(markdown)
    assert sentence_spans(markdown) == expected
    spans = Tokens().spans(markdown)
    assert spans == [(t.start, t.end) for t in scan_tokens(markdown)]
    assert sentence_spans(markdown, spans) == expected
    assert has_assertion(markdown) == bool(expected)
    assert has_assertion(markdown, spans) == bool(expected)


def growing_ticks(n: int) -> str:
    """Runs of backticks of growing width: the shape that made the code-span scan cubic."""
    return "".join(f"{'`' * w} x{w}. " for w in range(1, n)) + " tail [OBS-1]."


@given(st.integers(1, 60), st.integers(0, 3))
@settings(max_examples=200, deadline=None)
def test_code_spans_found_by_width_match_the_reference_on_growing_runs(n: int, close: int) -> None:
    """Code spans found by a binary search among runs of the opener's width (linear: the time
    is measured by ``python -m bench.extract``) give the very spans the plain scan gave."""
    markdown = growing_ticks(n) + " ".join("`" * w for w in range(1, close + 1))
    assert sentence_spans(markdown) == sentences_reference.sentence_spans(markdown)
