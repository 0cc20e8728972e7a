"""Every citation of an agent output, with its path (contract §3.3).

The token grammar and the scan of one string are ``worker.core.citations.tokens`` (re-exported
here).

Decisions:

- ``extract`` walks the output with an explicit stack (no recursion limit) in document order. Only
  the contract's structured paths are structured (``citations[i]``, ``claims[i].citations[j]``,
  ``sections[i].citations[j]``, ``timeline[i].citations[j]``, ``grounding.observations[k]``); a
  ``citations`` key elsewhere is plain data whose strings are still scanned. A structured entry
  that is not a valid ``{kind, id}`` (or bare int for observations) raises ``ValueError``: the
  output must be schema-valid first, and skipping it would hide a citation.
- Overlong ids (``worker.core.citations.tokens``) are left out of the occurrences:
``find_overlong_ids``
  names the strings holding one, for the verdict to fail the draft first.

The plain walk and its paths are ``worker.core.citations.paths``, the refs of structured entries
``worker.core.citations.entries`` (both re-exported here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from worker.core.citations.entries import KINDS, entry_ref, observation_ref
from worker.core.citations.evidence import CitationRef
from worker.core.citations.paths import UNIT_LISTS, join_path, walk_strings
from worker.core.citations.tokens import (
    Tokens,
    has_overlong_token,
)

__all__ = [
    "Cited",
    "IdTooLong",
    "Occurrence",
    "cite",
    "extract",
    "find_overlong_ids",
]

#: ``tuple.__new__``: builds a NamedTuple from already-checked parts without its Python ``__new__``.
_new = tuple.__new__


class Occurrence(NamedTuple):
    """One citation of an output, where it sits, and whether it is inline or structured."""

    ref: CitationRef
    #: ``answer_markdown``, ``claims[0].text``, ``sections[1].citations[0]``, ``patch.fields.note``…
    path: str
    #: True: a token inside a string; False: an entry of a structured array.
    inline: bool


class IdTooLong(NamedTuple):
    """A string holding a token whose id has more than ``MAX_ID_DIGITS`` significant digits."""

    path: str


class Cited:
    """Every citation of an output in document order, as parallel lists (no object per
    citation): ``refs[i]`` is cited at ``paths[i]``; ``structured`` holds, in order, the indexes
    of the entries of structured arrays (every other one is a token inside a string)."""

    __slots__ = ("paths", "refs", "structured")

    def __init__(self) -> None:
        self.refs: list[CitationRef] = []
        self.paths: list[str] = []
        self.structured: list[int] = []

    def occurrences(self) -> list[Occurrence]:
        """The same citations, one ``Occurrence`` each (tests and tools)."""
        structured = frozenset(self.structured)
        return [
            Occurrence(ref, path, i not in structured)
            for i, (ref, path) in enumerate(zip(self.refs, self.paths, strict=True))
        ]


def extract(output: Mapping[str, Any], tokens: Tokens | None = None) -> list[Occurrence]:
    """Every citation of a schema-valid output, in document order, with its field path."""
    return cite(output, tokens).occurrences()


def cite(output: Mapping[str, Any], tokens: Tokens | None = None) -> Cited:
    """``extract``'s citations as parallel lists (what the verdict reads).

    Overlong tokens are left out: call ``find_overlong_ids`` first and fail the draft on any.
    ``tokens``: the draft's memo, shared with the claim units (a fresh one when ``None``); the
    refs of every string and structured citation list read here are in it afterwards.
    The walk is ``walk``'s, minus the nodes that cannot hold a citation (a string without ``[``,
    a scalar in a plain data position), with one function per structured role: the contract's
    positions are a few fixed levels (root, unit list, unit, citation list, grounding), so only
    plain data needs the general walk (an explicit stack: no recursion limit).
    """
    found = Cited()
    tokens = Tokens() if tokens is None else tokens
    if _shape(output) is _MAP:
        _root(found, tokens, output)
    else:
        _data(found, tokens, "", output)
    return found


_Found = Cited
_Scan = Tokens
#: What the walk needs to know of a value: string, list-like, mapping, or anything else.
_STR, _SEQ, _MAP, _SCALAR = "str", "seq", "map", "scalar"
_SHAPES: dict[type, str] = {
    str: _STR,
    list: _SEQ,
    tuple: _SEQ,
    dict: _MAP,
    int: _SCALAR,
    float: _SCALAR,
    bool: _SCALAR,
    type(None): _SCALAR,
}


def _shape(value: Any) -> str:
    """``_STR``, ``_SEQ`` (list or tuple), ``_MAP`` (any Mapping) or ``_SCALAR``; the exact JSON
    types by one lookup, anything else by ``isinstance`` (subclasses, other mappings)."""
    shape = _SHAPES.get(type(value))
    if shape is not None:
        return shape
    if isinstance(value, str):
        return _STR
    if isinstance(value, list | tuple):
        return _SEQ
    return _MAP if isinstance(value, Mapping) else _SCALAR


def _inline(found: _Found, tokens: _Scan, path: str, text: str) -> None:
    if "[" in text:
        refs = tokens.refs(text)
        if refs:
            found.refs += refs
            found.paths += [path] * len(refs)


def _root(found: _Found, tokens: _Scan, output: Mapping[Any, Any]) -> None:
    for key, child in output.items():
        shape = _shape(child)
        if shape is _STR:
            _inline(found, tokens, str(key), child)
        elif shape is _SEQ:
            if key == "citations":
                _entries(found, tokens, str(key), child)
            elif key in UNIT_LISTS:
                _units(found, tokens, str(key), child)
            else:
                _data(found, tokens, str(key), child)
        elif shape is _MAP:
            if key == "grounding":
                _grounding(found, tokens, str(key), child)
            else:
                _data(found, tokens, str(key), child)


def _entries(found: _Found, tokens: _Scan, path: str, items: Sequence[Any]) -> None:
    """A structured citation list: every item is an entry (its strings are plain data)."""
    refs: list[CitationRef] = []
    cited, paths, structured = found.refs, found.paths, found.structured
    kinds = KINDS
    for i, item in enumerate(items):
        if (  # the JSON case inline (``entry_ref_or_none``'s first test)
            type(item) is dict
            and type(kind := item.get("kind")) is str
            and type(ident := item.get("id")) is int
            and ident >= 0
            and kind in kinds
        ):
            ref = _new(CitationRef, (kinds[kind], ident))
            if len(item) == 2:  # a dict holding a checked kind and id: nothing else to read
                refs.append(ref)
                structured.append(len(cited))
                cited.append(ref)
                paths.append(f"{path}[{i}]")
                continue
            at = f"{path}[{i}]"
        else:
            at = f"{path}[{i}]"
            ref = entry_ref(item, at)
        refs.append(ref)
        structured.append(len(cited))
        cited.append(ref)
        paths.append(at)
        if len(item) == 2:  # a Mapping holding a checked kind and id: nothing else to read
            continue
        for key, child in item.items():
            shape = _shape(child)
            if shape is _STR:
                if "[" in child:
                    _inline(found, tokens, f"{at}.{key!s}", child)
            elif shape is not _SCALAR:
                _data(found, tokens, f"{at}.{key!s}", child)
    tokens.remember_entries(items, refs)


def _units(found: _Found, tokens: _Scan, path: str, items: Sequence[Any]) -> None:
    """``claims``/``sections``/``timeline``: each item may hold a structured citation list."""
    for i, item in enumerate(items):
        shape = _shape(item)
        if shape is _MAP:
            _unit(found, tokens, f"{path}[{i}]", item)
        elif shape is _STR:
            if "[" in item:
                _inline(found, tokens, f"{path}[{i}]", item)
        elif shape is _SEQ:
            _data(found, tokens, f"{path}[{i}]", item)


def _unit(found: _Found, tokens: _Scan, at: str, item: Mapping[Any, Any]) -> None:
    """One item of a unit list: its strings, its ``citations`` list, and any other data."""
    for key, child in item.items():
        kind = type(child)  # exact JSON types first: one identity test each
        if kind is str:
            if "[" in child:  # the path is built only for a string that cites
                refs = tokens.refs(child)
                if refs:
                    found.refs += refs
                    found.paths += [f"{at}.{key!s}"] * len(refs)
            continue
        if kind is int or kind is float or kind is bool or child is None:
            continue
        if kind is list and key == "citations":
            if (  # one checked {kind, id} entry (a unit's usual list): ``_entries`` inline
                len(child) == 1
                and type(entry := child[0]) is dict
                and len(entry) == 2
                and type(name := entry.get("kind")) is str
                and type(ident := entry.get("id")) is int
                and ident >= 0
                and name in KINDS
            ):
                ref = _new(CitationRef, (KINDS[name], ident))
                found.structured.append(len(found.refs))
                found.refs.append(ref)
                found.paths.append(f"{at}.{key!s}[0]")
                tokens.remember_entries(child, [ref])
            else:
                _entries(found, tokens, f"{at}.{key!s}", child)
            continue
        inner = _shape(child)
        if inner is _STR:
            if "[" in child:
                _inline(found, tokens, f"{at}.{key!s}", child)
        elif inner is _SEQ and key == "citations":
            _entries(found, tokens, f"{at}.{key!s}", child)
        elif inner is _SEQ or inner is _MAP:
            _data(found, tokens, f"{at}.{key!s}", child)


def _grounding(found: _Found, tokens: _Scan, path: str, grounding: Mapping[Any, Any]) -> None:
    """A proposal's grounding: ``observations`` are bare OBS ids."""
    for key, child in grounding.items():
        shape = _shape(child)
        if shape is _STR:
            _inline(found, tokens, f"{path}.{key!s}", child)
        elif shape is _SEQ and key == "observations":
            for k, value in enumerate(child):
                at = f"{path}.{key!s}[{k}]"
                found.structured.append(len(found.refs))
                found.refs.append(observation_ref(value, at))
                found.paths.append(at)
        elif shape is _SEQ or shape is _MAP:
            _data(found, tokens, f"{path}.{key!s}", child)


def _data(found: _Found, tokens: _Scan, path: str, value: Any) -> None:
    """Plain data: the tokens of every string below ``value``, in document order."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        path, value = stack.pop()
        shape = _shape(value)
        if shape is _STR:
            _inline(found, tokens, path, value)
        elif shape is _MAP:
            stack.extend(
                reversed([(join_path(path, str(k)), v) for k, v in value.items() if _may_cite(v)])
            )
        elif shape is _SEQ:
            stack.extend(
                reversed([(f"{path}[{i}]", v) for i, v in enumerate(value) if _may_cite(v)])
            )


def _may_cite(value: Any) -> bool:
    """Whether a plain data value could hold a citation: a container, or a string with ``[``."""
    shape = _shape(value)
    if shape is _STR:
        return "[" in value
    return shape is not _SCALAR


def find_overlong_ids(output: Mapping[str, Any]) -> list[IdTooLong]:
    """Paths of the strings that hold a token whose id has too many digits to be read."""
    return [IdTooLong(path) for path, text in walk_strings(output) if has_overlong_token(text)]
