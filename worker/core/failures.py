"""Failure codes and reasons: a failed rule is a value with a code and a field path."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class FailureCode(StrEnum):
    """Every failure code of contract §3, in the order the contract lists them."""

    MALFORMED_OUTPUT = "malformed_output"
    SCHEMA_INVALID = "schema_invalid"
    PUBLISHED_STATUS = "published_status"
    AUTO_APPLY_NOT_ALLOWED = "auto_apply_not_allowed"
    DANGLING_CITATION = "dangling_citation"
    NOT_IN_RETRIEVAL = "not_in_retrieval"
    UNCITED_CLAIM = "uncited_claim"
    QUOTE_MISMATCH = "quote_mismatch"
    UNSUPPORTED_ANSWER = "unsupported_answer"
    AGENT_NO_GROUNDING = "agent_no_grounding"
    REGENERATION_TIMEOUT = "regeneration_timeout"
    CONTRADICTED_CLAIM = "contradicted_claim"
    UNSUPPORTED_CLAIM = "unsupported_claim"


class Failure(BaseModel):
    """One reason a draft is not grounded.

    ``citation``, ``detail`` and ``raw_excerpt`` go to the agent (regenerate request) only; the
    could-not-ground event keeps ``code`` and ``path``. None of them ever names a hidden id.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: FailureCode
    #: Field path in the agent output, e.g. ``timeline[2].text`` or ``grounding.observations[0]``.
    path: str | None = None
    #: ``OBS-99``: only for dangling, not-in-retrieval and quote-mismatch citations; never hidden.
    citation: str | None = None
    detail: str | None = None
    #: Only for ``malformed_output``: the redacted, cut raw text (contract §3.1).
    raw_excerpt: str | None = None


_object_new = object.__new__
# The setters of ``BaseModel``'s slots, called directly: ``object.__setattr__`` looks each name
# up on the class first (a draft of many uncited sentences builds one ``Failure`` per sentence).
_slots = vars(BaseModel)
_set_dict = _slots["__dict__"].__set__
_set_fields = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__
#: The fields ``checked_failure`` sets, one set for every such failure: a frozen model's
#: ``__setattr__`` raises before it would add to it, and pydantic's copies copy it.
_CODE_PATH_DETAIL = {"code", "path", "detail"}


def checked_failure(code: FailureCode, path: str, detail: str) -> Failure:
    """``Failure(code=code, path=path, detail=detail)`` from values already of the fields' types,
    built without running the validator: equal to it, the same fields set (a draft of many
    uncited sentences builds one per sentence)."""
    failure = _object_new(Failure)
    _set_dict(
        failure,
        {"code": code, "path": path, "citation": None, "detail": detail, "raw_excerpt": None},
    )
    _set_fields(failure, _CODE_PATH_DETAIL)
    _set_extra(failure, None)
    _set_private(failure, None)
    return failure
