"""Contract v3, rule 7: where sentences end and which ones need a citation, case by case.

Spans are exact ``[start, end)`` offsets of ``sentence_spans`` (the assertion sentences: the
units that must carry a citation); an exempt sentence (question, lead-in, label) is absent. The
statuses at the end run a whole draft through ``check`` on the demo corpus, where u-cy may not
see DOC-9002 and may see OBS-1001.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from worker.cli import app
from worker.core.claims.sentences import has_assertion, sentence_spans

ROOT = Path(__file__).resolve().parents[4]
CORPUS = str(ROOT / "worker" / "demo" / "corpus.json")


def units(markdown: str) -> list[str]:
    spans = sentence_spans(markdown)
    assert has_assertion(markdown) == bool(spans)
    return [markdown[s:e] for s, e in spans]


# --- parentheses and quotations -----------------------------------------------------------------


def test_a_question_in_parentheses_is_no_question_and_ends_nothing() -> None:
    md = "Falcon is priced at 4.2B (closing in May?) [DOC-1]. It ships [DOC-2]."
    assert sentence_spans(md) == [(0, 51), (52, 69)]
    assert units(md) == [
        "Falcon is priced at 4.2B (closing in May?) [DOC-1].",
        "It ships [DOC-2].",
    ]


def test_a_quotation_closed_after_its_stop_ends_the_sentence_one_left_open_does_not() -> None:
    md = 'He said "stop." Then it left. "Stop. Go now," he said. He asked "why?" Fine.'
    assert units(md) == [
        'He said "stop."',
        "Then it left.",
        '"Stop. Go now," he said.',
        'He asked "why?"',  # the ? is inside the quotation: an assertion, not a question
        "Fine.",
    ]


def test_a_parenthesis_that_opens_the_sentence_may_end_it() -> None:
    assert units("(See the table.) Prices rose.") == ["(See the table.)", "Prices rose."]
    assert units("Prices rose (see the table.) again.") == ["Prices rose (see the table.) again."]


def test_a_stop_earlier_in_a_pair_does_not_hide_the_one_that_closes_it() -> None:
    """Each stop inside a pair is decided on its own: one that ends nothing does not skip the
    stop right before the pair's closer (until v4 the scan jumped past the closer)."""
    assert units('He said "a. b." Then it left.') == ['He said "a. b."', "Then it left."]
    assert units("(See e.g. the table.) Prices rose.") == ["(See e.g. the table.)", "Prices rose."]
    assert sentence_spans('Fine." vs. b."a') == [(0, 6), (7, 14), (14, 15)]
    # a CJK run that is the pair's last, inside a parenthesis that does not open the sentence
    assert sentence_spans("a(。。)b") == [(0, 6)]


def test_an_opener_never_closed_opens_nothing() -> None:
    md = "The ship ( left. It came back. Then it left [OBS-1]."
    assert units(md) == ["The ship ( left.", "It came back.", "Then it left [OBS-1]."]


# --- abbreviations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "md",
    [
        "The window opens at 2 p.m. UTC on Monday [OBS-1].",
        "The window opens at 9 a.m. EST on Monday [OBS-1].",
        "Acme Inc. CFO Jane Doe signed it [OBS-1].",
        "Smith et al. Found the same effect [OBS-1].",
        "A film by dir. Nolan was shown [OBS-1].",
        "Most ports, esp. Rotterdam, closed [OBS-1].",
        "It appeared in Nat. Methods in 2020 [OBS-1].",
        "The vessel reached the U.S. East Coast [OBS-1].",
    ],
)
def test_abbreviations_that_do_not_end_a_sentence(md: str) -> None:
    assert sentence_spans(md) == [(0, len(md))]


def test_p_m_and_inc_still_end_a_sentence_before_an_ordinary_capitalised_word() -> None:
    md = "It closed at 2 p.m. The port reopened [OBS-1]. It was sold to Acme Inc. The deal closed."
    assert units(md) == [
        "It closed at 2 p.m.",
        "The port reopened [OBS-1].",
        "It was sold to Acme Inc.",
        "The deal closed.",
    ]


def test_a_token_right_after_an_abbreviation_ends_the_sentence() -> None:
    md = "Refunds rose in the U.S. [DOC-1] Next, the port closed [DOC-2]."
    assert sentence_spans(md) == [(0, 32), (33, 63)]
    assert units(md)[0] == "Refunds rose in the U.S. [DOC-1]"
    assert units("Shown by J. [OBS-1] Smith then.") == ["Shown by J. [OBS-1]", "Smith then."]


def test_initials_and_enumerators_do_not_end_a_sentence() -> None:
    md = (
        '"The Charleston" by James P. Johnson (1923) [OBS-1]. '
        "a. Traditional publishing: research agents [OBS-2]. iv. More [OBS-3]."
    )
    assert units(md) == [
        '"The Charleston" by James P. Johnson (1923) [OBS-1].',
        "a. Traditional publishing: research agents [OBS-2].",
        "iv. More [OBS-3].",
    ]


def test_a_number_opening_a_bold_heading_enumerates() -> None:
    assert units("**1. 重塑学习环境:**") == []
    assert units("**1. Goals:**\n\nIn 2023. Prices rose.") == ["In 2023.", "Prices rose."]


# --- CJK ----------------------------------------------------------------------------------------


def test_cjk_terminators_end_sentences_without_whitespace() -> None:
    md = "光是一种电磁波[DOC-1]。它的速度很快！你知道吗？最后一句"
    assert sentence_spans(md) == [(0, 15), (15, 22), (27, 31)]
    assert units(md) == ["光是一种电磁波[DOC-1]。", "它的速度很快！", "最后一句"]


def test_cjk_tokens_after_the_stop_and_lead_ins() -> None:
    md = "主要过程如下：\n\n细胞是基本单位。[OBS-1] 细胞能生长。"
    assert units(md) == ["细胞是基本单位。[OBS-1]", "细胞能生长。"]


def test_a_cjk_stop_inside_a_quotation_that_stays_open_ends_nothing() -> None:
    md = "他说：“我们走。然后离开。”"
    assert units(md) == [md]


def test_a_stop_closing_a_quotation_ends_the_sentence_whatever_follows() -> None:
    """Contract v4, rule 7: a terminator followed by the closer of the quotation around it ends
    the sentence even when the next one starts at once (until v3 ``他说：“我们走。”然后离开。``
    and ``回答了“谁？”的问题`` were one unit each)."""
    md = "它回答了“谁？”或“什么？”的问题。他说：“我们走。”然后离开。"
    assert sentence_spans(md) == [(0, 8), (8, 14), (14, 18), (18, 27), (27, 32)]
    assert units(md) == [
        "它回答了“谁？”",
        "或“什么？”",
        "的问题。",
        "他说：“我们走。”",
        "然后离开。",
    ]


@pytest.mark.parametrize(
    ("md", "spans"),
    [
        ('注："古之学者必有师也。" [DOC-1]这表明学习需要老师。', [(0, 21), (21, 31)]),
        ('注："古之学者必有师也。"[DOC-1]这表明学习需要老师。', [(0, 20), (20, 30)]),
        ("注：“古之学者必有师也。”这表明学习需要老师。", [(0, 13), (13, 23)]),
        ("注：「古之学者必有师也。」这表明学习需要老师。", [(0, 13), (13, 23)]),
        ("注：『古之学者必有师也！』这表明学习需要老师。", [(0, 13), (13, 23)]),
        # an unpaired quote mark: ``。`` needs nothing after it (v3), the quote changes nothing
        ('注："古之学者必有师也。这表明学习需要老师。', [(0, 12), (12, 22)]),
        ('He said "stop."Then it left [OBS-1].', [(0, 15), (15, 36)]),
        ("He said «stop!»Then it left.", [(0, 15), (15, 28)]),
    ],
)
def test_chinese_quotations_end_before_a_sentence_with_no_space(
    md: str, spans: list[tuple[int, int]]
) -> None:
    """Contract v4, rule 7 (``注："……也。" [DOC-1]这表明……`` is two units, the second
    uncited)."""
    assert sentence_spans(md) == spans


@pytest.mark.parametrize(
    "md",
    [
        'A stray."Quote mark then text.',  # an unpaired quote mark closes nothing
        'Thus "e.g."is kept open.',  # an abbreviation still ends nothing
        '(He said "stop."Then it left.)',  # a parenthesis needs whitespace after its closer
        "“他说「走。」然后”离开。",  # the outer quotation is still open
    ],
)
def test_a_closer_that_closes_no_quotation_around_the_stop_ends_nothing(md: str) -> None:
    assert sentence_spans(md) == [(0, len(md))]


# --- linear time (rule 7, last paragraph) ------------------------------------------------------

N = 50_000
ONE = [(0, N + 16)]  # "Aurora " + the run + "x waited.": one sentence
TWO = [(0, N + 7), (N + 7, N + 16)]  # a CJK stop or a closed quotation ends it at once


@pytest.mark.parametrize(
    ("run", "spans"),
    [
        *((c, ONE) for c in ".!?‽…"),
        ("。", TWO),
        ("！", TWO),
        ("？", TWO[1:]),  # the first sentence is a question: exempt
        (".!?。！？‽…", ONE),
        ('!")', [(0, N + 5), (N + 5, N + 14)]),  # every other quotation closes after its "!"
        ("?»」", [(0, N + 14)]),  # closers with no opener close nothing
        ('!"', TWO),
        ("。”", TWO),
    ],
)
def test_a_long_run_of_terminators_is_read_once(run: str, spans: list[tuple[int, int]]) -> None:
    """50,000 characters of one run took 5 s when every position of a run that ends nothing was
    searched again (quadratic: 100,000 took 19.6 s); each run is now read once."""
    md = "Aurora " + run * (N // len(run)) + "x waited."
    started = time.process_time()
    assert sentence_spans(md) == spans
    assert time.process_time() - started < 0.5


# --- exempt: questions, lead-ins, labels --------------------------------------------------------


def test_lead_ins_with_closing_emphasis_or_tokens_after_the_colon() -> None:
    md = "**Key steps:** [OBS-1]\n\n- It left [OBS-2].\n\n*Why it matters*：\n\n- 它离开了。"
    assert units(md) == ["It left [OBS-2].", "它离开了。"]


@pytest.mark.parametrize(
    "md",
    ["**Summary**", "*Key facts:*", "**Core idea.**", "- **Choose the right knife**", "__Note__."],
)
def test_a_block_that_is_all_emphasis_is_a_label(md: str) -> None:
    assert units(md) == []


def test_labels_that_are_not_alone() -> None:
    # Two emphasis sentences in a row: no run-in label, both assertions.
    assert units("**It sank.** **It was raised.**") == ["**It sank.**", "**It was raised.**"]
    # Several sentences inside one emphasis: split as usual, each an assertion.
    assert units("**It sank. It was raised.**") == ["**It sank.", "It was raised.**"]
    # An emphasis sentence after an assertion ends the block: an assertion too.
    assert units("It sank. **It was raised.**") == ["It sank.", "**It was raised.**"]


def test_a_bold_run_in_label_belongs_to_the_sentence_after_it() -> None:
    md = "**Core idea.** The rest follows [OBS-1]. Another one."
    assert sentence_spans(md) == [(0, 40), (41, 53)]
    assert units(md)[0] == "**Core idea.** The rest follows [OBS-1]."


# --- hard breaks --------------------------------------------------------------------------------


def test_a_stop_before_a_br_or_a_backslash_hard_break_ends_the_sentence() -> None:
    md = "It left.<br>It came back.<BR/>Again.\\\nFinally [OBS-1]."
    assert units(md) == ["It left.", "It came back.", "Again.", "Finally [OBS-1]."]
    assert units("No stop<br>here.") == ["No stop<br>here."]


# --- statuses through the whole verdict ----------------------------------------------------------


def check(markdown: str) -> dict[str, Any]:
    draft = {
        "schema_version": 1,
        "draft_id": "d-v3",
        "turn_id": "t-v3",
        "attempt": 0,
        "tenant_id": "acme",
        "principal": {"user_id": "u-cy", "groups": []},
        "kind": "answer",
        "output": {"answer_markdown": markdown, "citations": [{"kind": "OBS", "id": 1001}]},
    }
    result = CliRunner().invoke(
        app, ["check", "--json", "--evidence", CORPUS, "-"], input=json.dumps(draft)
    )
    body: dict[str, Any] = json.loads(result.stdout)
    return body


def statuses(body: dict[str, Any]) -> list[tuple[int, int, str]]:
    return [(c["start"], c["end"], c["status"]) for c in body["claims"]]


def test_a_hidden_only_group_after_us_is_hedged_alone() -> None:
    """``U.S. [DOC-9002] Next…``: the hidden-only group ends its sentence, which is hedged;
    the visible sentence after it stays cited."""
    md = "Refunds rose in the U.S. [DOC-9002] Next, checkout p95 latency rose to 840 ms [OBS-1001]."
    body = check(md)
    assert statuses(body) == [(0, 35, "hedged"), (36, 89, "cited")]
    assert "DOC-9002" not in json.dumps(body["redacted"])


def test_statuses_of_questions_in_parentheses_labels_and_lead_ins() -> None:
    md = (
        "**Summary**\n\n"
        "Latency rose to 840 ms (was it the cache?) [OBS-1001].\n\n"
        "Latency rose:\n\n"
        "Was it the cache?\n\n"
        "延迟上升到840毫秒。"
    )
    body = check(md)
    # The label, the lead-in and the question are no units; the parenthesised question is one
    # cited assertion; the CJK sentence is an uncited claim.
    assert statuses(body) == [(13, 67, "cited"), (103, 114, "uncited")]
    assert [f["code"] for f in body["failures"]] == ["uncited_claim"]
