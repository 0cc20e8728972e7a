"""Checking a citation's quote against its source text (contract §3.6).

- ``None`` quote, or a quote that is empty or whitespace only: ``NONE`` (it asserts nothing, so
  there is nothing to check; an agent emitting ``"quote": ""`` should not trigger a regeneration).
- No source text (``None``): ``MISMATCH``, there is nothing the quote could be checked against.
- ``EXACT``: the quote, as given, is a substring of the source.
- ``TOLERANT``: after normalising both sides — NFKC, case-folding (then NFKC again, as in Unicode's
  NFKC_Casefold), typographic quotes to ASCII ``'``/``"``, every dash and minus to ``-``, soft
  hyphens and zero-width characters removed, every whitespace run to one space — the quote, split
  at ellipses (``…``, which NFKC turns into ``...``, or any run of three or more dots), gives
  pieces that all appear in the normalised source, in order and without overlapping. Greedy
  leftmost matching is complete for this (if any in-order placement exists, the leftmost does).
  A quote that is nothing but ellipses and spaces has no checkable piece: ``MISMATCH``.
- Anything else: ``MISMATCH``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from worker.core.citations.evidence import (
    CitationRef,
    EvidenceKind,
    EvidenceRecord,
    QuoteCheck,
    Resolution,
)
from worker.core.failures import Failure, FailureCode

_TRANSLATE = str.maketrans(
    {
        **dict.fromkeys("‘’‚‛′‵`´ʼ", "'"),
        **dict.fromkeys("“”„‟″‶«»", '"'),
        **dict.fromkeys("‐‑‒–—―−﹘﹣－⁃", "-"),
        **dict.fromkeys("\u00ad\u200b\u200c\u200d\u2060\ufeff", None),
    }
)
_WHITESPACE_RE = re.compile(r"\s+")
_ELLIPSIS_RE = re.compile(r"\.{3,}")


def check_quote(
    quote: str | None, source: str | None, normalized: Callable[[], str] | None = None
) -> QuoteCheck:
    """How ``quote`` compares with ``source`` (see the module docstring).

    ``normalized`` gives ``normalize(source)`` where the caller keeps it (one source may be
    quoted by many entries of a draft: normalising it per entry made the check quadratic).
    """
    if quote is None or not quote.strip():
        return QuoteCheck.NONE
    if source is None:
        return QuoteCheck.MISMATCH
    if quote in source:
        return QuoteCheck.EXACT
    pieces = [p.strip() for p in _ELLIPSIS_RE.split(normalize(quote))]
    pieces = [p for p in pieces if p]
    if pieces and appear_in_order(pieces, normalized() if normalized else normalize(source)):
        return QuoteCheck.TOLERANT
    return QuoteCheck.MISMATCH


def normalize(text: str) -> str:
    """NFKC, case-folded, quotes and dashes made ASCII, whitespace collapsed and trimmed."""
    text = unicodedata.normalize("NFKC", text)
    text = unicodedata.normalize("NFKC", text.casefold())
    text = text.translate(_TRANSLATE)
    return _WHITESPACE_RE.sub(" ", text).strip()


def appear_in_order(pieces: list[str], source: str) -> bool:
    """Whether every piece occurs in ``source``, in order, without overlapping."""
    at = 0
    for piece in pieces:
        found = source.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


_QUOTE_RANK = {
    QuoteCheck.NONE: 0,
    QuoteCheck.EXACT: 1,
    QuoteCheck.TOLERANT: 2,
    QuoteCheck.MISMATCH: 3,
}
_VISIBLE_SOURCE = frozenset({Resolution.RESOLVED, Resolution.NOT_IN_RETRIEVAL})
#: A kind's member by its value without the enum's call (``EvidenceKind(kind)`` for any other).
_KINDS = {k.value: k for k in EvidenceKind}
#: ``tuple.__new__``: a ``CitationRef`` from checked parts without its Python ``__new__``.
_new = tuple.__new__


def check_quotes(
    output: dict[str, Any],
    resolutions: Mapping[CitationRef, Resolution],
    evidence: Mapping[CitationRef, EvidenceRecord],
    failures: list[Failure],
) -> tuple[dict[CitationRef, str], dict[CitationRef, QuoteCheck]]:
    """Rule 6 over the top-level ``citations[]`` (the only place a quote may be): each ref's first
    quote and worst check (mismatch > tolerant > exact > none), a ``quote_mismatch`` per entry.

    Quotes of visible sources only (``resolved``, ``not_in_retrieval``): a hidden citation's entry
    is removed anyway, and a mismatch on it would tell the reader about a source they may not see.

    Linear in the entries (contract rule 7, last paragraph): each source is normalised at most
    once per draft, and a (ref, quote) pair repeated in ``citations[]`` is checked once, its
    check reused for every entry that repeats it (each still gets its own ``quote_mismatch``).
    """
    first_quote: dict[CitationRef, str] = {}
    worst: dict[CitationRef, QuoteCheck] = {}
    checked: dict[tuple[CitationRef, str], QuoteCheck] = {}
    sources: dict[CitationRef, str] = {}
    entries = output.get("citations")
    if not isinstance(entries, list):
        return first_quote, worst
    for index, entry in enumerate(entries):
        quote = entry.get("quote")
        if quote is None:
            continue
        kind = entry["kind"]
        member = _KINDS.get(kind) if type(kind) is str else None
        ref = _new(CitationRef, (member or EvidenceKind(kind), entry["id"]))
        if resolutions.get(ref) not in _VISIBLE_SOURCE:
            continue
        check = checked.get((ref, quote))  # a string: the output passed its schema
        if check is None:
            text = evidence[ref].text

            def normalized(ref: CitationRef = ref, text: str | None = text) -> str:
                if (found := sources.get(ref)) is None:
                    found = sources[ref] = normalize(text or "")
                return found

            check = checked[ref, quote] = check_quote(quote, text, normalized)
        first_quote.setdefault(ref, quote)
        if _QUOTE_RANK[check] > _QUOTE_RANK[worst.get(ref, QuoteCheck.NONE)]:
            worst[ref] = check
        if check is QuoteCheck.MISMATCH:
            failures.append(
                Failure(
                    code=FailureCode.QUOTE_MISMATCH,
                    path=f"citations[{index}].quote",
                    citation=ref.label,
                    detail="the quote does not appear in the cited source",
                )
            )
    return first_quote, worst


@lru_cache(maxsize=256)
def source_quote(quote: str, source: str | None) -> str | None:
    """A quote that checked ``exact`` or ``tolerant``, in its source's own words (rule 5: a
    tolerant quote is published as the source's text, so nothing the agent slipped between
    the characters, a zero-width payload say, reaches the reader): the quote itself when it is
    a substring, else each piece's matching stretch of the source, joined by `` … ``; ``None``
    where the stretches cannot be placed character by character (then nothing is published).

    The source is normalised a run at a time (an ASCII run by lower-casing and the quote table,
    one character each; any other character alone), keeping where each normalised character
    came from; a piece matches where the whole-text normalisation of ``check_quote`` would,
    except across a composition NFKC makes of two source characters (then ``None``). Memoised:
    the grounded answer's citation and the output's entry ask for the same quote.
    """
    if source is None:
        return None
    if quote in source:
        return quote
    normal: list[str] = []
    origin: list[int] = []
    for run in _RUN_RE.finditer(source):
        start, text = run.start(), run.group()
        if text[0].isspace():
            if normal and normal[-1] != " ":
                normal.append(" ")
                origin.append(start)
        elif text.isascii():
            normal.append(text.lower().translate(_TRANSLATE))
            origin.extend(range(start, run.end()))
        else:
            for at, char in enumerate(text, start):
                form = normalize(char)
                normal.append(form)
                origin.extend([at] * len(form))
    flat = "".join(normal)
    pieces = [p.strip() for p in _ELLIPSIS_RE.split(normalize(quote))]
    found: list[str] = []
    at = 0
    for piece in (p for p in pieces if p):
        start = flat.find(piece, at)
        if start < 0:
            return None
        end = start + len(piece)
        found.append(source[origin[start] : origin[end - 1] + 1])
        at = end
    return " … ".join(found) if found else None


#: Whitespace runs, ASCII runs and single other characters of a source (``source_quote``).
_RUN_RE = re.compile(r"\s+|[!-~]+|[^\s!-~]")
