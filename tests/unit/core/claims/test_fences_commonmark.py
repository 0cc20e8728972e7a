"""Fence openers against CommonMark (markdown-it-py), on generated lines.

A line the splitter takes for a fence hides what follows from the claim check, so it must never
take a line for a fence that CommonMark renders as a paragraph (since contract v3 indented code
is exempt too, like a fence). Each document is ``<line>`` + a claim + a closing fence; the claim
must be an assertion sentence of the splitter exactly when markdown-it-py renders it as
paragraph text (not as code).
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from worker.core.claims.sentences import sentence_spans

CLAIM = "Falcon is priced at 4.2B."
_md = MarkdownIt("commonmark")


def claim_is_prose_for_commonmark(doc: str) -> bool:
    return any(t.type == "inline" and CLAIM in t.content for t in _md.parse(doc))


def claim_is_a_sentence(doc: str) -> bool:
    start = doc.index(CLAIM)
    return any(s <= start < e for s, e in sentence_spans(doc))


openers = st.builds(
    lambda indent, char, width, info: " " * indent + char * width + info,
    st.integers(0, 6),
    st.sampled_from("`~"),
    st.integers(3, 5),
    st.text(alphabet="`~ ab", max_size=6),
)


@given(opener=openers)
@settings(max_examples=400, deadline=None)
@example(opener="```Falcon``` is")
@example(opener="```python")
@example(opener="~~~ `x`")
@example(opener="    ```")
def test_fence_openers_follow_commonmark(opener: str) -> None:
    # A closer longer than any opener closes whatever fence the opener line makes.
    run = opener.lstrip(" ")[0] * 12
    doc = f"{opener}\n{CLAIM}\n{run}\n"
    assert claim_is_a_sentence(doc) == claim_is_prose_for_commonmark(doc), doc


def test_a_fence_inside_a_list_item_may_be_indented_past_the_marker() -> None:
    doc = f"- item [OBS-1]\n\n    ```\n    {CLAIM}\n    ```\n"
    assert not claim_is_prose_for_commonmark(doc)
    assert not claim_is_a_sentence(doc)
