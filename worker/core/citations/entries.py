"""The ref of a structured citation: a ``{kind, id}`` entry of a citation list, or a bare OBS
id of ``grounding.observations``; ``ValueError`` where the output is not schema-valid there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from worker.core.citations.evidence import CitationRef, EvidenceKind

#: Each kind by its name.
KINDS = {k.value: k for k in EvidenceKind}
#: ``tuple.__new__``: builds a NamedTuple from already-checked parts without its Python ``__new__``.
_new = tuple.__new__


def entry_ref(value: Any, path: str) -> CitationRef:
    """The ref of a structured ``{kind, id}`` entry; ``ValueError`` if it is not schema-valid."""
    ref = entry_ref_or_none(value)
    if ref is None:
        raise ValueError(f"structured citation at {path} is not a valid {{kind, id}}")
    return ref


def entry_ref_or_none(value: Any) -> CitationRef | None:
    """``entry_ref`` without the path: ``None`` if ``value`` is not a valid ``{kind, id}``
    (for callers that build the path only to report that)."""
    if type(value) is dict:  # the JSON case, checked with exact types first
        kind = value.get("kind")
        ident = value.get("id")
        if type(kind) is str and type(ident) is int and ident >= 0 and kind in KINDS:
            return _new(CitationRef, (KINDS[kind], ident))
    if isinstance(value, Mapping):
        kind = value.get("kind")
        ident = value.get("id")
        if (
            isinstance(kind, str)
            and kind in KINDS
            and isinstance(ident, int)
            and not isinstance(ident, bool)
            and ident >= 0
        ):
            return _new(CitationRef, (KINDS[kind], ident))
    return None


def observation_ref(value: Any, path: str) -> CitationRef:
    """The OBS ref of a ``grounding.observations`` entry; ``ValueError`` if it is not an id."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return CitationRef(EvidenceKind.OBS, value)
    raise ValueError(f"observation at {path} is not a non-negative integer")
