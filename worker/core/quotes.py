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

from worker.core.evidence import QuoteCheck

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


def check_quote(quote: str | None, source: str | None) -> QuoteCheck:
    """How ``quote`` compares with ``source`` (see the module docstring)."""
    if quote is None or not quote.strip():
        return QuoteCheck.NONE
    if source is None:
        return QuoteCheck.MISMATCH
    if quote in source:
        return QuoteCheck.EXACT
    pieces = [p.strip() for p in _ELLIPSIS_RE.split(normalize(quote))]
    pieces = [p for p in pieces if p]
    if pieces and appear_in_order(pieces, normalize(source)):
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
