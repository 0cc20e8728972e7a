"""The source index (contract rule 6b): each visible source read once per batch, and what a
draft's units look values and words up in.

A source is read once per :class:`SourceIndex` (one per batch in the worker, one per draft in
``check``): its stems and whether it negates at once, its value keys the first time a unit with
values needs them. The union of the keys and stems of the sources a unit cites is built once
per distinct set of sources, so a unit's values and words are looked up in one ``set`` each:
the check is linear in the unit and its sources (one sentence citing 1,000 sources with
147,000 numbers is 147,000 lookups, not numbers × sources).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from worker.core.citations.evidence import CitationRef
from worker.core.claims.support.dates import Key
from worker.core.claims.support.scan import source_keys, visible
from worker.core.claims.support.words import Words, negates, tokens

__all__ = ["Cited", "SourceIndex", "SourceRead", "SourceText"]


class SourceText(NamedTuple):
    """One visible cited source's text, as the caller chose it (contract rule 6b: the whole
    visible source: ``summary``, or a document's ``title`` and ``text``)."""

    ref: CitationRef
    text: str


class SourceRead(NamedTuple):
    """One source text, read once: its stems (every word, common ones too) and its negation."""

    stems: frozenset[str]
    negates: bool
    #: It has a number word (``nine``): its values are read in words too.
    number_words: bool


#: A cited source with words, and its reading (``SourceIndex.cited``).
Cited = tuple[SourceText, SourceRead]


class SourceIndex:
    """A memo of source texts read once, shared by every draft of one batch (sources are cited by
    many drafts); the caller makes one per batch and drops it after. Never process-wide: a cache
    across batches would make a benchmark of repeated drafts measure less than the worker pays."""

    __slots__ = (
        "_keys",
        "_read",
        "_union_keys",
        "_union_stems",
        "words",
    )

    def __init__(self) -> None:
        self._read: dict[str, SourceRead] = {}
        self._keys: dict[str, frozenset[Key]] = {}
        self._union_keys: dict[tuple[str, ...], frozenset[Key]] = {}
        self._union_stems: dict[tuple[str, ...], frozenset[str]] = {}
        #: The batch's memo of words (stems, weights), units' and sources' alike.
        self.words = Words()

    def read(self, text: str) -> SourceRead:
        """The source ``text`` read (once per index): its stems and negation."""
        found = self._read.get(text)
        if found is None:
            seen = visible(text)
            words = self.words.of(set(tokens(seen)))
            found = self._read[text] = SourceRead(
                frozenset(w.stem for w in words), negates(seen), any(w.number for w in words)
            )
        return found

    def cited(self, texts: Mapping[CitationRef, str]) -> dict[CitationRef, Cited]:
        """Each ref of ``texts`` whose text has words, with that text read (for ``check_cited``:
        one draft's sources, read once for all its units)."""
        return {
            ref: (SourceText(ref, text), self.read(text))
            for ref, text in texts.items()
            if text and not text.isspace()
        }

    def keys(self, text: str) -> frozenset[Key]:
        """The value keys of the source ``text`` (read once per index, when first needed)."""
        found = self._keys.get(text)
        if found is None:
            found = self._keys[text] = frozenset(source_keys(text, self.read(text).number_words))
        return found

    def union_keys(self, texts: Sequence[SourceText]) -> frozenset[Key]:
        """The value keys of all of ``texts`` (once per distinct set of sources)."""
        if len(texts) == 1:
            return self.keys(texts[0].text)
        names = tuple(sorted({s.text for s in texts}))
        found = self._union_keys.get(names)
        if found is None:
            found = self._union_keys[names] = frozenset().union(*map(self.keys, names))
        return found

    def union_stems(
        self, texts: Sequence[SourceText], read: Sequence[SourceRead]
    ) -> frozenset[str]:
        """The stems of all of ``texts`` (once per distinct set of sources)."""
        if len(read) == 1:
            return read[0].stems
        names = tuple(sorted({s.text for s in texts}))
        found = self._union_stems.get(names)
        if found is None:
            found = self._union_stems[names] = frozenset().union(*(r.stems for r in read))
        return found
