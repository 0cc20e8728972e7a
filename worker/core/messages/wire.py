"""The one serializer of the outgoing messages: a message's wire form, derived from its model.

Each message is defined once, as a pydantic model (``worker.core.messages.models``;
``ClaimCheckOut``
in ``worker.core.claims.typed``): its field names and order, which fields are optional and their
defaults, its nested parts, and (``scripts/gen_schemas.py``) its JSON Schema. The hot path does
not instantiate the models: :func:`message_bytes` writes a message from its field values, and a
nested part may be *any* object that has the part model's fields as attributes (a
``CitationRef`` for a ``CitationKey``, a ``Failure``, a ``Principal``, a ``ClaimCheck``, or the
model itself), and a list of parts may be given already
in its wire form, as :class:`WireParts` (the verdict writes its claims, sources and ledger rows
so, once). How each field is written is derived once per model from its annotation:

- a part model, or a ``tuple`` of them: an object of the part's fields, recursively;
- ``None`` is omitted (never written as ``null``); a ``Literal[True] | None`` flag is written only
  when it is true (a ``ClaimCheck``'s ``superseded=False`` is absent, as the model cannot hold it);
- anything else as is: strings, numbers, str enums, tuples of strings, and the agent's own output
  dict, whose ``null``\\ s are the agent's and are kept.

So the bytes are those of ``to_json_bytes(Model(...))`` (``model_dump(exclude_none=True)``,
pydantic's own walk: the independent reference the unit tests compare against,
``tests/unit/core/fixtures.py``), without ~50 model instances per draft.

Decisions recorded here:

- UTF-8 JSON, keys sorted, no whitespace.
- orjson cannot write integers beyond 64 bits. A dangling id may be that large and may survive in a
  ``previous_output``; such a message falls back to the standard library encoder with the same
  settings (sorted keys, compact separators, UTF-8), so the same input still yields the same bytes.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import orjson
from pydantic import BaseModel
from pydantic.fields import FieldInfo

_SORTED = orjson.OPT_SORT_KEYS
Encoder = Callable[[Any], Any]


class _Layout(NamedTuple):
    """How one model is written."""

    #: One object of this model, from any value with its fields as attributes.
    encode: Encoder
    #: One object of this model, from its fields as keyword arguments.
    encode_fields: Callable[..., dict[str, Any]]


_LAYOUTS: dict[type[BaseModel], _Layout] = {}


#: The generated encoders' own names.
_RESERVED = frozenset({"d", "p", "v", "WireParts"})


class WireParts(list[dict[str, Any]]):
    """Parts already in their wire form: one dict per part, holding what the part model's
    encoder would write (its field names, an optional ``None`` field absent, nested parts as
    dicts too). A tuple-of-parts field given a ``WireParts`` is written as it is: the verdict
    builds its claims, sources and ledger rows this way, once (``tests/unit/core/test_fast_paths``
    checks the bytes against the models')."""

    __slots__ = ()


def dumps(data: Any) -> bytes:
    """The canonical bytes of a message's plain data: sorted keys, compact, UTF-8."""
    try:
        return orjson.dumps(data, option=_SORTED)
    except TypeError:
        # An integer beyond 64 bits (a dangling id in a previous output): same layout, stdlib.
        return json.dumps(
            data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode("utf-8")


def _without_none(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    return [annotation]


def _is_model(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)


def _is_flag(annotation: Any) -> bool:
    """``Literal[True] | None``."""
    args = _without_none(annotation)
    return (
        len(args) == 1
        and typing.get_origin(args[0]) is typing.Literal
        and typing.get_args(args[0]) == (True,)
        and len(args) < len(typing.get_args(annotation))
    )


def _part(annotation: Any) -> tuple[type[BaseModel], bool] | None:
    """The part model a field holds, and whether a tuple of them; ``None``: no part."""
    args = _without_none(annotation)
    if len(args) != 1:
        return None
    t = args[0]
    if _is_model(t):
        return t, False
    if typing.get_origin(t) is tuple:
        items = typing.get_args(t)
        if len(items) == 2 and items[1] is Ellipsis and _is_model(items[0]):
            return items[0], True
    return None


def _optional(info: FieldInfo) -> bool:
    """May be absent from the wire: it has a default, or may be ``None``."""
    return not info.is_required() or type(None) in typing.get_args(info.annotation)


def _inline(cls: type[BaseModel], var: str) -> str | None:
    """A dict display writing ``var`` as ``cls``, when every field is required and no part."""
    items = []
    for name, info in cls.model_fields.items():
        if _optional(info) or _part(info.annotation) is not None:
            return None
        items.append(f"{name!r}: {var}.{name}")
    return "{" + ", ".join(items) + "}"


def _compile(cls: type[BaseModel]) -> tuple[Encoder, Callable[..., dict[str, Any]]]:
    """Two functions writing one ``cls`` object: from any value with its fields as attributes,
    and from the fields as keyword arguments (optional ones may be left out).

    Generated once per model, as ``collections.namedtuple`` and ``dataclasses`` generate code,
    so that they cost what hand-written ones would: one read per field, a test only for optional
    fields, parts without optional fields written inline; Python itself binds the keywords (and
    refuses an unknown one).
    """
    env: dict[str, Any] = {"WireParts": WireParts}
    params: list[str] = []
    before: list[str] = []  # statements building parts, before the dict
    required: list[str] = []
    optional: list[str] = []
    for name, info in cls.model_fields.items():
        if name in _RESERVED or name.startswith(("_", "c_")) or info.default_factory is not None:
            raise TypeError(f"{cls.__name__}.{name}: not a field the wire encoders can write")
        if info.is_required():
            params.append(name)
        else:
            env[f"_default_{name}"] = info.get_default()
            params.append(f"{name}=_default_{name}")
        field = "{v}" + name
        build: list[str] = []  # statements that leave the field's wire value in ``c_<name>``
        read = field
        part = _part(info.annotation)
        if part is not None:
            model, many = part
            one = _inline(model, "p" if many else field)
            if one is None:
                env[f"_{name}"] = layout(model).encode
            if many:  # a loop, not a comprehension: no function call per part (Python 3.11)
                build = [f"if type({field}) is WireParts:", f"    c_{name} = {field}", "else:"]
                build += (
                    [f"    c_{name} = list(map(_{name}, {field}))"]
                    if one is None
                    else [
                        f"    c_{name} = []",
                        f"    for p in {field}:",
                        f"        c_{name}.append({one})",
                    ]
                )
                read = f"c_{name}"
            else:
                read = f"_{name}({field})" if one is None else one
        if _is_flag(info.annotation):
            optional.append(f"if {field} is True:\n    d[{name!r}] = True")
        elif _optional(info):
            lines = [f"if {field} is not None:", *(f"    {line}" for line in build)]
            optional.append("\n".join([*lines, f"    d[{name!r}] = {read}"]))
        else:
            before.extend(build)
            required.append(f"{name!r}: {read}")
    statements = [*before, "d = {" + ", ".join(required) + "}", *optional, "return d"]
    body = "".join(
        "    " + line + "\n" for statement in statements for line in statement.split("\n")
    )
    source = (
        "def encode(v):\n"
        + body.replace("{v}", "v.")
        + f"def encode_fields(*, {', '.join(params)}):\n"
        + body.replace("{v}", "")
    )
    exec(compile(source, f"<wire encoders of {cls.__name__}>", "exec"), env)  # noqa: S102
    return env["encode"], env["encode_fields"]


def layout(cls: type[BaseModel]) -> _Layout:
    """How ``cls`` is written (derived once from its fields, then cached)."""
    found = _LAYOUTS.get(cls)
    if found is None:
        found = _LAYOUTS[cls] = _Layout(*_compile(cls))
    return found


def wire(cls: type[BaseModel], values: Iterable[Any]) -> list[dict[str, Any]]:
    """The wire form of several ``cls`` objects, each given by any value with its fields."""
    return list(map(layout(cls).encode, values))


def message_bytes(cls: type[BaseModel], /, **values: Any) -> bytes:
    """The bytes of the message ``cls`` with these field values (optional ones may be left out).

    ``message_bytes(M, **fields) == to_json_bytes(M(**fields))`` for values ``M`` accepts, and
    a part may be given by any object with the part's fields (see the module docstring).
    """
    return dumps(layout(cls).encode_fields(**values))
