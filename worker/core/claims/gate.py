"""The last check of what a reader is shown (contract §3.5): every published string, rendered.

After redaction, each string of the output, each published claim's text and each published
source's title and quote is rendered by the reference renderer and searched as a reader sees it
(``worker.core.citations.rendered.RenderGate``): no hidden id, no look-alike, no hidden
document's title. Where one shows, the earlier passes missed it, so the gate fails closed:

- in a string of the output, each finest sentence (``worker.core.claims.hidden_words``) that
  shows one alone has its words replaced as rule 5 replaces them (the hedge sentence, or
  nothing where the policy omits); if the string still shows one (a shape spread over
  sentences), the whole string is replaced. A string redaction left as the agent wrote it is
  searched for hidden titles only: rule 2 read its citations as rendered already, and it holds
  no hidden token (redaction would have cut it);
- a published claim that shows one is hedged (or left out where the policy omits);
- a source's title or quote that shows one is left out (both are optional in a citation).

Each replacement counts as a rule 5 replacement, so a ``refuse`` policy ends the turn. Drafts
with no hidden citation skip the gate: their strings are the agent's own, which rule 2 already
read as rendered (``shows_lookalike``).
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from worker.core.citations.redaction import replace_spans
from worker.core.citations.rendered import RenderGate, strings_in
from worker.core.claims.hidden_words import regions, sentences_of

__all__ = ["gate_claims", "gate_output", "gate_sources"]


def gate_output(
    output: Any, gate: RenderGate, words: str, replaced: list[int], agents: Container[int]
) -> Any:
    """``output`` with every string that shows what ``gate`` hides mended (module docstring);
    the same object where nothing shows. ``agents``: the ``id`` of each string of the agent's
    own output — one redaction left as it was is only searched for hidden titles
    (``RenderGate.names_title``)."""
    shows = gate.shows
    hits = {
        text
        for text in strings_in(output)
        if (gate.names_title(text) if id(text) in agents else shows(text))
    }
    return _mend(output, gate, words, replaced, hits) if hits else output


def _mend(output: Any, gate: RenderGate, words: str, replaced: list[int], hits: set[str]) -> Any:
    if isinstance(output, str):
        return _gate_text(output, gate, words, replaced) if output in hits else output
    if isinstance(output, dict):
        return {k: _mend(v, gate, words, replaced, hits) for k, v in output.items()}
    if isinstance(output, list):
        return [_mend(v, gate, words, replaced, hits) for v in output]
    return output


#: At most this many sentences of a string are rendered one by one to find which show what
#: must not; a longer string that shows one is replaced whole (a bound: each render has a
#: fixed cost, and an adversarial string could hold a hundred thousand sentences).
MAX_SENTENCES = 64


def _gate_text(text: str, gate: RenderGate, words: str, replaced: list[int]) -> str:
    sentences = [span for region in regions(text) for span in sentences_of(text, region)]
    spans: list[tuple[int, int, str]] = []
    if len(sentences) <= MAX_SENTENCES:
        for start, end in sentences:
            piece = text[start:end]
            if piece.strip() and gate.shows(piece):
                spans.append((start, end, words))
    mended = replace_spans(text, spans) if spans else text
    if not spans or gate.shows(mended):
        replaced.append(1)
        return words
    replaced.extend([1] * len(spans))
    return mended


def gate_claims(
    claims: list[dict[str, Any]], gate: RenderGate, hedged: dict[str, Any] | None
) -> int:
    """Hedge (``hedged``) or leave out (``None``) each published claim whose text shows what
    ``gate`` hides, in place; how many it changed."""
    changed = 0
    for i in range(len(claims) - 1, -1, -1):
        text = claims[i].get("text")
        if isinstance(text, str) and gate.shows(text):
            changed += 1
            if hedged is None:
                del claims[i]
            else:
                claims[i] = hedged
    return changed


def gate_sources(sources: list[dict[str, Any]], gate: RenderGate) -> None:
    """Leave out, in place, each source's title or quote that shows what ``gate`` hides."""
    for source in sources:
        for key in ("title", "quote"):
            value = source.get(key)
            if isinstance(value, str) and gate.shows(value):
                del source[key]
