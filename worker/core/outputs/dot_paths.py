"""Dot paths a tenant's policy may name (``patch.flag``), checked against the agent-output schemas.

Decided in ``docs/decisions.md``: every segment must be a field of some agent-output schema, and a
path never passes through an array (``claims.text`` is refused: which item would it mean?). Nor
may it name a prose field of contract rule 7 (``answer_markdown``, a report's ``title``, a
proposal's ``summary``, ``grounding.reasoning``; the others sit in arrays), nor an object that
holds one (``grounding``, compared or shown whole with its ``reasoning``): prose is read as
claim units, hedged and redacted, and a typed claim that reads it would compare, or echo as its
entity, words a reader may not be shown (rule 7b).
"""

from __future__ import annotations

import re
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, Field

from worker.core.outputs.validation import AnalystAnswer, Proposal, ReportDraft

#: ``patch.flag``: identifier segments joined by dots (what a policy may name).
DOT_PATH_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z_][A-Za-z0-9_]{0,63}){0,15}$"
_DOT_PATH = re.compile(DOT_PATH_PATTERN)
#: The prose fields of contract rule 7 a dot path could name (the rest are items of arrays).
PROSE_PATHS = frozenset({"answer_markdown", "title", "summary", "grounding.reasoning"})


def _models_of(annotation: Any) -> tuple[list[type[BaseModel]], bool]:
    """The object models a field's type can hold, and whether it can hold an array."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _models_of(get_args(annotation)[0])
    if origin is Union or origin is UnionType:
        models: list[type[BaseModel]] = []
        array = False
        for arg in get_args(annotation):
            found, is_array = _models_of(arg)
            models += found
            array = array or is_array
        return models, array
    if origin in {list, tuple}:
        return [], True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation], False
    return [], False


_ROOTS: tuple[type[BaseModel], ...] = (
    AnalystAnswer,
    *_models_of(Proposal)[0],
    ReportDraft,
)


def path_problem(path: str) -> str | None:
    """Why ``path`` cannot name a field of an agent output, or ``None`` when it can."""
    if not _DOT_PATH.fullmatch(path):
        return "a dot path of identifiers (letters, digits, _), e.g. patch.flag"
    if path in PROSE_PATHS:
        return f"{path} is prose (contract rule 7): a typed claim names a structured field"
    holds = sorted(p for p in PROSE_PATHS if p.startswith(path + "."))
    if holds:  # compared or shown whole, the object would carry its prose along
        return (
            f"{path} holds prose ({', '.join(holds)}, contract rule 7):"
            " a typed claim names a structured field"
        )
    segments = path.split(".")
    current = list(_ROOTS)
    for i, segment in enumerate(segments):
        annotations = [
            c.model_fields[segment].annotation for c in current if segment in c.model_fields
        ]
        here = ".".join(segments[: i + 1])
        if not annotations:
            return f"{here} is not a field of any agent output"
        if i == len(segments) - 1:
            return None
        nxt: list[type[BaseModel]] = []
        array = False
        for annotation in annotations:
            found, is_array = _models_of(annotation)
            nxt += [m for m in found if m not in nxt]
            array = array or is_array
        if not nxt:
            if array:
                return f"{here} is an array: a path may not pass through one"
            return f"{here} is not an object"
        current = nxt
    return None  # pragma: no cover - the loop returns on its last segment


def _dot_path(path: str) -> str:
    problem = path_problem(path)
    if problem is not None:
        raise ValueError(problem)
    return path


#: The pattern is for the JSON Schema; ``_dot_path`` checks it with a clearer message.
DotPath = Annotated[
    str, Field(json_schema_extra={"pattern": DOT_PATH_PATTERN}), AfterValidator(_dot_path)
]
