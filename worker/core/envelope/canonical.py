"""Turning a model's raw text output into the JSON object it meant, or failing closed (§3.1).

Only deterministic, content-preserving repairs of shapes seen from models, in this order, each a
named function recorded in ``Canonical.rules``:

1. ``fence``: the whole (stripped) text is one Markdown code fence (`````json`` … ````` or
   ```````` … `````` ````, three or more backticks or tildes, closing with the same character and at
   least as many); its content is kept. At most ONE fence is stripped in total: before the string
   wrapper, or, if there was none outside, inside it (``"```json\\n{...}\\n```"``).
2. ``json_string``: the text is exactly one JSON string literal; its content replaces the text.
   At most ONE level: a string that decodes to another string literal is ``Malformed`` (no model
   double-encodes by accident twice; unbounded decoding would only widen what is accepted).
3. The text parses as exactly one JSON value, which must be an object — or, only when the text
   does not *look like JSON* (its first character does not open an object, a string, or an array
   of values), ``prose_span``: the span from the first ``{`` to the last ``}`` parses as an object
   and no ``{`` follows it (that would be a second, truncated value). Text that looks like JSON
   must parse whole: ``{...} trailing words`` or ``{...}{...}`` are ``Malformed``, as in the seed.
4. ``wrapper_key``: an object with exactly one key, not in ``schema_fields``, whose value is an
   object, is replaced by that value. One level only.

JSON parsing (stdlib ``json``, strict): big integers parse exactly (orjson refuses > 64-bit ints,
which would turn a dangling id into a parse error), but an integer literal with more than
``MAX_ID_DIGITS`` significant digits is rejected (CPython's int() is quadratic and caps at 4,300);
``NaN``/``Infinity`` and floats that overflow to infinity are rejected; duplicate keys are rejected
(a parser keeps only one, so the other could hide an unchecked citation); lone surrogates are
rejected (they cannot be re-encoded as UTF-8); nesting too deep for the parser is rejected.

Anything else is ``Malformed``: plain prose, arrays, truncated JSON, several values, a top-level
non-object. ``Malformed.detail`` never quotes model text; ``raw_excerpt`` is the raw text with every
citation token removed, cut to 2,000 code points.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from worker.core.citations.redaction import remove_all_tokens
from worker.core.citations.tokens import MAX_ID_DIGITS

#: Contract §3.1: the excerpt is cut to this many Unicode code points.
EXCERPT_CODE_POINTS = 2000

_ARRAY_OF_VALUES_RE = re.compile(r"\[\s*(?:[\[{\"\]0-9-]|true\b|false\b|null\b)")
_WHITESPACE = " \t\r\n\ufeff"
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


class Canonical(NamedTuple):
    """A string output that canonicalized into a JSON object."""

    value: dict[str, Any]
    #: Names of the repairs applied, in order: ``fence``, ``json_string``, ``prose_span``,
    #: ``wrapper_key``.
    rules: tuple[str, ...]


class Malformed(NamedTuple):
    """A string output that is not one JSON object under the allowed repairs."""

    #: Short, human reason; never contains model text.
    detail: str
    raw_excerpt: str


class _RejectError(Exception):
    """Internal: a parse step failed closed with a detail."""


def canonicalize(raw: str, schema_fields: frozenset[str]) -> Canonical | Malformed:
    """Canonicalize a raw string ``output`` (contract §3.1) or fail closed."""
    try:
        value, rules = _canonicalize(raw, schema_fields)
    except _RejectError as exc:
        return Malformed(str(exc), raw_excerpt(raw))
    return Canonical(value, rules)


def raw_excerpt(raw: str) -> str:
    """``raw`` with every citation token removed, cut to its first 2,000 code points.

    Python slices by code point, so no character is split; a surrogate code point (only a lone
    one can occur in a ``str`` decoded from JSON) becomes U+FFFD, so the excerpt always encodes.
    """
    return _SURROGATE_RE.sub("\ufffd", remove_all_tokens(raw)[:EXCERPT_CODE_POINTS])


def _canonicalize(
    raw: str, schema_fields: frozenset[str]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    rules: list[str] = []
    text = raw.strip(_WHITESPACE)
    fenced = strip_fence(text)
    if fenced is not None:
        text = fenced
        rules.append("fence")
    decoded = decode_string_wrapper(text)
    if decoded is not None:
        text = decoded
        rules.append("json_string")
        if "fence" not in rules:
            fenced = strip_fence(text)
            if fenced is not None:
                text = fenced
                rules.append("fence")
        if decode_string_wrapper(text) is not None:
            raise _RejectError("a JSON string wrapper nested more than one level")
    obj, used_span = parse_object_or_span(text)
    if used_span:
        rules.append("prose_span")
    unwrapped = unwrap_wrapper_key(obj, schema_fields)
    if unwrapped is not None:
        obj = unwrapped
        rules.append("wrapper_key")
    return obj, tuple(rules)


def strip_fence(text: str) -> str | None:
    """The stripped content of ``text`` when all of it is one Markdown code fence, else ``None``."""
    char = text[:1]
    if char not in ("`", "~"):
        return None
    width = len(text) - len(text.lstrip(char))
    first_nl = text.find("\n")
    last_nl = text.rfind("\n")
    if width < 3 or first_nl < 0:
        return None
    info = text[width:first_nl]
    closing = text[last_nl + 1 :].strip(" \t")
    if (char == "`" and "`" in info) or len(closing) < width or closing.strip(char):
        return None
    return text[first_nl + 1 : last_nl].strip(_WHITESPACE)


def decode_string_wrapper(text: str) -> str | None:
    """The stripped content of ``text`` when it is one JSON string literal, else ``None``."""
    if not text.startswith('"'):
        return None
    try:
        value = parse_json(text)
    except _RejectError:
        return None
    return value.strip(_WHITESPACE) if isinstance(value, str) else None


def parse_object_or_span(text: str) -> tuple[dict[str, Any], bool]:
    """The object ``text`` is, or (for prose) the object its ``{…}`` span is; flag: span used."""
    if looks_like_json(text):
        value = parse_json(text)
        if not isinstance(value, dict):
            raise _RejectError(f"the output is a JSON {_json_type(value)}, not an object")
        return value, False
    return prose_span(text), True


def looks_like_json(text: str) -> bool:
    """Whether ``text`` opens an object, a string, or an array of values (``[Note] …`` is prose)."""
    if text.startswith(("{", '"')):
        return True
    return _ARRAY_OF_VALUES_RE.match(text) is not None


def prose_span(text: str) -> dict[str, Any]:
    """The object spanning the first ``{`` to the last ``}`` of prose."""
    start = text.find("{")
    end = text.rfind("}")
    if start < 0 or end < start:
        raise _RejectError("no JSON object in the output")
    if "{" in text[end + 1 :]:
        raise _RejectError("the JSON object in the prose is followed by a truncated one")
    try:
        value = parse_json(text[start : end + 1])
    except _RejectError as exc:
        raise _RejectError(f"the braced span of the prose is not a JSON object: {exc}") from None
    if not isinstance(value, dict):  # pragma: no cover - a braced span can only be an object
        raise _RejectError("the braced span of the prose is not a JSON object")
    return value


def unwrap_wrapper_key(obj: dict[str, Any], schema_fields: frozenset[str]) -> dict[str, Any] | None:
    """The inner object of ``{"answer": {...}}`` when its one key is not a schema field."""
    if len(obj) != 1:
        return None
    ((key, inner),) = obj.items()
    if key in schema_fields or not isinstance(inner, dict):
        return None
    return inner


def parse_json(text: str) -> Any:
    """Strict JSON: one value, exact big ints up to a digit cap, no NaN, duplicates, surrogates."""
    try:
        value = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_int=_parse_int,
            parse_float=_parse_float,
            object_pairs_hook=_no_duplicates,
        )
    except _RejectError:
        raise
    except RecursionError:
        raise _RejectError("the JSON is nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise _RejectError(f"invalid JSON ({exc.msg})") from None
    except ValueError:
        raise _RejectError("invalid JSON") from None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise _RejectError("the JSON holds a lone surrogate") from None
    except RecursionError:
        raise _RejectError("the JSON is nested too deeply") from None
    return value


def _reject_constant(name: str) -> Any:
    raise _RejectError(f"{name} is not valid JSON")


def _parse_int(literal: str) -> int:
    if len(literal.lstrip("-").lstrip("0")) > MAX_ID_DIGITS:
        raise _RejectError(f"an integer with more than {MAX_ID_DIGITS} digits")
    return int(literal)


def _parse_float(literal: str) -> float:
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise _RejectError("a number too large for a float")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _RejectError("duplicate key in a JSON object")
    return obj


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number"
