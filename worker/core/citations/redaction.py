"""Removing citation tokens (and replacing spans) from text without ever creating a new token.

Contract §3.5: where the text around a removed token would join into a citation token
(``[DOC-5[DOC-7]1]`` with DOC-7 hidden), a space is left in its place.

Rule (global, position-aware, one pass): the text is cut into *kept pieces* of the original and
*replacements*; they are joined, the result is scanned once, and every token of the result that
straddles a junction between two pieces gets a space inserted at its first straddled junction.
Why one pass suffices: a token holds exactly one ``[`` (its first character) and one ``]`` (its
last), so a space inside it leaves no ``[`` from which a new token could start, and no token can
start before it and reach into it. Every token that lies wholly inside a kept piece is a token of
the original at that place (the grammar has no context), so the tokens of the output are exactly
the kept original tokens and the replacements' own tokens, in order. Linear in the text.

Tidying (decided: yes, it reads better and is safe): when a removal (empty replacement) has
whitespace, the end of the text, or closing punctuation (``.,;:!?)``) after it, the spaces and
tabs before it are dropped (``foo [DOC-7] bar`` → ``foo bar``, ``foo [DOC-7].`` → ``foo.``); at
the start of the text or of a line, those after it are (``[DOC-7] Next`` → ``Next``). Whitespace
is never part of a token, and the junction guard runs after tidying, so tidying cannot create a
token either. Closing brackets are not tidied (``[DOC-5 [DOC-7]]`` keeps its space).

Overlong tokens (see ``citations``) are tokens too: ``remove_all_tokens`` removes them.

``redact_text`` is the one redaction of a string that leaves the worker and did not pass the
output's own extraction (a store's title, the agent's quote as published, a raw excerpt, a detail
naming a value): it keeps only the tokens of refs the caller names visible, and removes every
citation look-alike (``worker.core.citations.lookalikes``). A removal joins the text around it, and
the
junction guard may leave ``[DOC- 5]``, itself a look-alike, so the removal is repeated until the
text is clean; past ``_MAX_PASSES`` (only crafted nesting gets there) every bracket goes. The
same holds for every other removal from a published string (``remove_tokens``, and the
output's redaction in ``claim_status``): ``without_lookalikes`` rescans what a removal left.
"""

from __future__ import annotations

from collections.abc import Container, Sequence

from worker.core.citations.evidence import CitationRef
from worker.core.citations.lookalikes import BRACKET_LIKE, lookalike_spans
from worker.core.citations.tokens import TOKEN_RE, scan_tokens

_HSPACE = " \t"
_CLOSING = ".,;:!?)"
_MAX_PASSES = 4
_NO_BRACKETS = str.maketrans(dict.fromkeys(BRACKET_LIKE + "&\\"))


def redact_text(text: str, visible: Container[CitationRef]) -> str:
    """``text`` with only the tokens of ``visible`` refs and no citation look-alike.

    A token of a ref outside ``visible`` goes (hidden, or never resolved for this draft, as a
    token inside a store's title), overlong tokens go, look-alikes go; no new token or look-alike
    is formed (see the module docstring).
    """
    if text.isascii() and "[" not in text and "&" not in text and "\\" not in text:
        # Nothing to cut: a token needs ``[``; an ASCII look-alike starts at ``[``, ``&`` or
        # ``\\`` (``lookalikes._candidates``). Titles and quotes mostly look like this.
        return text
    return _redact_passes(text, visible)


def _redact_passes(text: str, visible: Container[CitationRef]) -> str:
    """``redact_text`` without its shortcut for text that holds nothing to cut."""
    for _ in range(_MAX_PASSES):
        cuts = [(t.start, t.end) for t in scan_tokens(text) if not _kept(t.ref, visible)]
        cuts.extend(lookalike_spans(text))
        if not cuts:
            return text
        text = replace_spans(text, [(s, e, "") for s, e in _union(cuts)])
    return _last_resort(text, visible)


def _last_resort(text: str, visible: Container[CitationRef]) -> str:
    """Past ``_MAX_PASSES``: the text if clean, else without anything that can make a bracket."""
    clean = not lookalike_spans(text) and all(_kept(t.ref, visible) for t in scan_tokens(text))
    return text if clean else text.translate(_NO_BRACKETS)


def without_lookalikes(text: str) -> str:
    """``text`` with every citation look-alike removed, its own tokens kept (contract §3.5).

    For a string that was clean and lost something: a removal joins the text around it, which
    can leave a look-alike (``[[DOC-9]DOC-9]`` without ``[DOC-9]`` is ``[ DOC-9]``), and removing
    that can leave another; so it repeats, ``_MAX_PASSES`` times at most (one per level of
    crafted nesting), then every bracket goes. Each pass is linear, so the whole is.
    """
    for _ in range(_MAX_PASSES):
        spans = lookalike_spans(text)
        if not spans:
            return text
        text = replace_spans(text, [(s, e, "") for s, e in spans])
    return text if not lookalike_spans(text) else text.translate(_NO_BRACKETS)


def _kept(ref: CitationRef | None, visible: Container[CitationRef]) -> bool:
    return ref is not None and ref in visible


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans, overlapping ones fused."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def remove_tokens(
    text: str,
    hidden: Container[CitationRef],
    tokens: Sequence[tuple[CitationRef | None, int, int]] | None = None,
) -> str:
    """``text`` without the tokens of ``hidden`` refs; no new token is ever formed, and no
    look-alike is left (``without_lookalikes``).

    ``tokens``: the tokens of ``text`` (``RawToken``/``TokenMatch``) when the caller has them.
    """
    found = scan_tokens(text) if tokens is None else tokens
    cuts = [(t[1], t[2], "") for t in found if _hidden(t[0], hidden)]
    return without_lookalikes(replace_spans(text, cuts)) if cuts else text


def _hidden(ref: CitationRef | None, hidden: Container[CitationRef]) -> bool:
    return ref is not None and ref in hidden


def remove_all_tokens(text: str) -> str:
    """``text`` without any citation token (overlong ones included) or look-alike of one."""
    return redact_text(text, ())


def replace_spans(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    """Replace each ``text[start:end]`` by its string, guarding every junction against new tokens.

    ``edits`` must be sorted and non-overlapping (touching is fine); an empty replacement is a
    removal and gets the whitespace tidying described in the module docstring. The output's tokens
    are the original's tokens outside the edited spans plus each replacement's own tokens, in order.
    Spans must not cut a token of the original in two (sentence spans never do).
    """
    previous_end = 0
    for start, end, _ in edits:
        if start < previous_end or end < start or end > len(text):
            raise ValueError("edits must be sorted, non-overlapping and inside the text")
        previous_end = end
    merged = _merge(edits)
    pieces: list[str] = []
    cursor = 0
    for n, (start, stop, replacement) in enumerate(merged):
        end = max(stop, cursor)
        pieces.append(text[cursor : max(start, cursor)])
        if replacement:
            pieces.append(replacement)
        else:
            _tidy_before(pieces, text, end)
            if not _last_char(pieces) or _last_char(pieces) == "\n":
                limit = merged[n + 1][0] if n + 1 < len(merged) else len(text)
                while end < limit and text[end] in _HSPACE:
                    end += 1
        cursor = end
    pieces.append(text[cursor:])
    return _guard(pieces)


def _merge(edits: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Fuse touching removals (``[DOC-7][DOC-8]``) so they form one junction."""
    merged: list[tuple[int, int, str]] = []
    for start, end, replacement in edits:
        if merged and not replacement and not merged[-1][2] and merged[-1][1] == start:
            merged[-1] = (merged[-1][0], end, "")
        else:
            merged.append((start, end, replacement))
    return merged


def _last_char(pieces: list[str]) -> str:
    for piece in reversed(pieces):
        if piece:
            return piece[-1]
    return ""


def _tidy_before(pieces: list[str], text: str, end: int) -> None:
    """Drop the horizontal spaces before a removal when what follows makes them redundant."""
    after = text[end] if end < len(text) else ""
    if not (after == "" or after.isspace() or after in _CLOSING):
        return
    for i in range(len(pieces) - 1, -1, -1):
        if pieces[i]:
            pieces[i] = pieces[i].rstrip(_HSPACE)
            return


def _guard(pieces: list[str]) -> str:
    """Join ``pieces``; break with a space every token that straddles a junction between pieces.

    A token holds one ``[``, its first character. So the only token that can have junction ``j``
    as the first junction it straddles starts at the last ``[`` in ``[previous junction, j)``:
    one bounded ``rfind`` and one anchored match per junction (linear overall, no rescan).
    """
    joined = "".join(pieces)
    breaks: list[int] = []
    offset = 0
    previous = 0
    for piece in pieces[:-1]:
        offset += len(piece)
        if offset == previous:  # an empty piece: the same junction again (or the start)
            continue
        start = joined.rfind("[", previous, offset)
        if start >= 0:
            token = TOKEN_RE.match(joined, start)
            if token is not None and token.end() > offset:
                breaks.append(offset)
        previous = offset
    if not breaks:
        return joined
    out: list[str] = []
    cursor = 0
    for at in breaks:
        out.append(joined[cursor:at])
        out.append(" ")
        cursor = at
    out.append(joined[cursor:])
    return "".join(out)
