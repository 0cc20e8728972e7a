"""The sentence splitter against the plain one of the same rules (contract v3, rule 7).

``sentence_split_reference`` splits one block one character at a time; ``test_claims.py`` and
``test_sentences_v3.py`` hold the behaviour examples. Here random blocks built from the
characters the splitter acts on must yield the very same sentences, and ``has_assertion`` must
agree with ``sentence_spans``.
"""

from __future__ import annotations

import sentence_split_reference
from hypothesis import example, given, settings
from hypothesis import strategies as st

from worker.core.citations.tokens import Tokens
from worker.core.claims.sentences import _split, has_assertion, sentence_spans

PIECES = [
    "a", "Vessel", " ", "  ", "\t", "\n", "7", "4.5", ".", "..", "!", "?", "…", "‽", ":", ",",
    '"', "'", "”", "“", ")", "(", "]", "[", "*", "**", "_", "`", "``", "e.g.", "No.", "no.",
    "Dr.", "J.", "etc.", "U.S.", "1st.", "2023.", " A", " b", " UTC", " CFO", "[OBS-1]",
    "[DOC-22]", "[EVT-007]", "[OBS-", "vs.", "Fig.", "E.G.", "NO.", "ſt.", "x.No.", "No. 5",
    "i.e.)", "OBS-1]", "\r", "\u00a0", "²", "É.", "x:", ": [OBS-3]\n", "?)", "Jan.", "a.m.",
    "p.m.", "Inc.", "et al.", " al.", "Nat.", "a. ", "iv. ", "。", "！", "？", "：", "中文", "（",
    "）", "「", "」", "<br>", "<BR/>", "\\\n", "**Core idea.**", "*Label*", "_x_", "«", "»",
    "**1. ", "12. ", "2023. ", '。"', "。”", "！」", '."', "?»", "!!!", "。。！", "‽‽", "!)",
]  # fmt: skip
BLOCK = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


@given(BLOCK)
@settings(max_examples=3000, deadline=None)
@example("Vessel X loitered. [OBS-1][OBS-2] It left at dawn [DOC-3]! Next one?")
@example("The deal is 4.2B (closing in May?) [DOC-1]. Next one.")
@example('He said "stop." Then left (at dawn.) **Bold.** _Done._ Last')
@example("Shipments rose in the U.S. [DOC-1] Next, the port closed.")
@example("It starts at 2 p.m. UTC. Acme Inc. CFO Jane said so. Smith et al. found it.")
@example("**Core idea.** The rest. **A.** **b.** **c.**")
@example("中文句子。第二句！第三句？他说：“我们走。”然后离开。")
@example("Claim one.<br>Claim two.\\\nClaim three. (See above.) Next")
@example("a. Traditional publishing: research. iv. More. James P. Johnson")
@example("(No. 5) ends. [e.g. x] NO. 7 and x.No. 8 and 1No. 9; ſt. A vs. B. Fig. 2.")
@example("`a. b` ends. J. Smith [OBS-1]. etc. A")
@example("***a*** **x*y** __u__: *v*.")
@example('注："也。" [DOC-1]这表明。注：“也。”这表明「也！」这 "x."y "e.g."z (a."b) “a “b.” c”d')
@example('!!!!a ?!?!"x ‽‽‽ 。。！"b …… "!!"c')
@example('." vs. b."a')
@example("a(。。)b(。x。)c「。。」d")
@example('He said "a. b." Then (See e.g. it.) No. (x. "y.") z')
def test_split_matches_the_reference(block: str) -> None:
    assert _split(block) == sentence_split_reference.split(block)


@given(BLOCK)
@settings(max_examples=1000, deadline=None)
@example("**Summary**")
@example("Is it open?")
@example("The deal (closing?)")
@example("One line, an assertion")
def test_has_assertion_agrees_with_sentence_spans(markdown: str) -> None:
    expected = sentence_spans(markdown)
    assert has_assertion(markdown) == bool(expected)
    spans = Tokens().spans(markdown)
    assert sentence_spans(markdown, spans) == expected
    assert has_assertion(markdown, spans) == bool(expected)


def growing_ticks(n: int) -> str:
    """Runs of backticks of growing width: the shape that made the code-span scan cubic."""
    return "".join(f"{'`' * w} x{w}. " for w in range(1, n)) + " tail [OBS-1]."


@given(st.integers(1, 60), st.integers(0, 3))
@settings(max_examples=200, deadline=None)
def test_code_spans_found_by_width_match_the_reference_on_growing_runs(n: int, close: int) -> None:
    """Code spans found by a binary search among runs of the opener's width (linear: the time
    is measured by ``python -m dev.bench.sentences``) give the very spans the plain scan gave."""
    block = growing_ticks(n) + " ".join("`" * w for w in range(1, close + 1))
    assert _split(block) == sentence_split_reference.split(block)
