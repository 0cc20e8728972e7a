"""Claim statuses (contract §3.7) of one evaluated draft; the redacted output is ``redacted``.

Decisions:

- *Support* is a ``resolved`` citation. A dangling or ``not_in_retrieval`` citation supports
  nothing (it already fails the draft), so a unit whose only citations are dangling is not
  ``cited``; if it also had a hidden citation its support counts as lost through redaction and the
  policy applies (hedge/omit/refuse), so its original words never reach a regenerate request.
  A unit whose citations are all dangling or outside the retrieval and none hidden gets no status
  and no extra failure: the citation failures already say what is wrong.
- A proposal is one unit (path ``grounding``) and is the whole output: when its support is lost
  it cannot be hedged or omitted without publishing a patch built from hidden evidence, so it is
  refused (``unsupported_answer``) whatever the policy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from enum import StrEnum
from typing import Any, NamedTuple

from worker.core.citations.evidence import HIDDEN, CitationRef, Resolution
from worker.core.citations.redaction import remove_tokens
from worker.core.claims.hidden_words import Keeps, hidden_only_group
from worker.core.claims.policy import LostSupportPolicy, SupportPolicy, TenantPolicy
from worker.core.claims.support import (
    Cited,
    SourceIndex,
    SupportLevel,
    SupportResult,
    UnitMemo,
    check_cited,
    supported_cited,
)
from worker.core.claims.units import ClaimUnit, UnitKind
from worker.core.failures import Failure, FailureCode, checked_failure
from worker.core.messages.models import GroundingStatus
from worker.core.messages.wire import WireParts

#: ``tuple.__new__``: builds a NamedTuple from already-checked parts without its Python ``__new__``.
_new = tuple.__new__


class UnitStatus(StrEnum):
    """What became of one claim unit."""

    CITED = "cited"
    HEDGED = "hedged"
    OMITTED = "omitted"
    REFUSED = "refused"
    #: No citation at all: ``uncited_claim``.
    UNCITED = "uncited"
    #: Only dangling / not-in-retrieval citations: those failures speak for it.
    FAILED = "failed"


class UnitVerdict(NamedTuple):
    """A unit and its status."""

    unit: ClaimUnit
    status: UnitStatus


def unit_status(
    unit: ClaimUnit, resolutions: Mapping[CitationRef, Resolution], policy: LostSupportPolicy
) -> UnitStatus:
    """The status of one unit (see the module docstring)."""
    if not unit.refs:
        return UnitStatus.UNCITED
    states = [resolutions.get(ref, Resolution.DANGLING) for ref in unit.refs]
    hidden = [ref for ref, s in zip(unit.refs, states, strict=True) if s in HIDDEN]
    if Resolution.RESOLVED in states and not (hidden and hidden_only_group(unit.text, hidden)):
        return UnitStatus.CITED
    if not hidden:
        return UnitStatus.FAILED
    return _lost(unit, policy)


class Support(NamedTuple):
    """Rule 6b's results for one draft."""

    #: Position of the unit in the draft's units -> its result (cited units only).
    of_unit: dict[int, SupportResult]
    #: The lowest support of the checked units citing each ref (ledger rows, contract §6).
    of_ref: dict[CitationRef, SupportLevel]


#: Lowest first: a ledger row shows the worst that was found.
_SUPPORT_RANK = {
    SupportLevel.UNSUPPORTED: 0,
    SupportLevel.WEAK: 1,
    SupportLevel.UNCHECKED: 2,
    SupportLevel.SUPPORTED: 3,
}


def check_claim_units(  # noqa: PLR0917 -- the parts of the verdict's state rule 7 reads
    units: tuple[ClaimUnit, ...],
    resolved: Mapping[CitationRef, dict[str, Any]],
    hidden: frozenset[CitationRef],
    resolutions: Mapping[CitationRef, Resolution],
    policy: TenantPolicy,
    failures: list[Failure],
    sources: Mapping[CitationRef, str] | None = None,
    index: SourceIndex | None = None,
) -> tuple[list[UnitVerdict], WireParts, bool, Support]:
    """Rule 7 in one pass over the units: the verdict of each unit that is neither cited nor
    uncited (a unit with a resolved ref is cited: no ``unit_status``; one with no ref at all is
    uncited; ``redact_output``, the one reader of the verdicts, does nothing with either);
    ``uncited_claim`` and ``unsupported_answer`` per unit; the published claims in their wire
    form (cited and hedged units, omitted ones absent; a cited unit's text without its hidden
    tokens, its citations the resolved refs' ``CitationKey``s, ``resolved``'s values); whether
    any unit was refused; and rule 6b, the support of every cited unit by the texts of its
    resolved refs (``sources``: the text each resolved ref is checked against), with
    ``unsupported_claim`` under the policy ``enforce``."""
    hedged_status = UnitStatus.HEDGED
    cited_claim = GroundingStatus.CITED
    hedged = {
        "text": policy.hedge_sentence,
        "citations": [],
        "grounding_status": GroundingStatus.HEDGED,
    }
    lost = policy.lost_support
    key_of = resolved.__getitem__
    cites = frozenset(resolved)
    verdicts: list[UnitVerdict] = []
    claims = WireParts()
    refused = False
    enforce = policy.support is SupportPolicy.ENFORCE
    support = Support({}, {})
    # The index and each resolved ref's text as the check takes it, read once for the draft's
    # units; ``None``: no check (``support: off``), and no index made for it.
    reading: tuple[SourceIndex, dict[CitationRef, Cited]] | None = None
    if policy.support is not SupportPolicy.OFF and sources is not None:
        reading = _reading(index, sources)
    checking = reading  # made on first need where the policy turns the check off
    memo = _DraftMemo(hidden)  # each distinct unit text read once
    # The hidden ids as digits, once a draft (not once an unsupported unit: a draft may hide a
    # thousand ids and have fifty thousand units).
    hidden_ids = frozenset(str(ref.id) for ref in hidden)
    uncited_claim = FailureCode.UNCITED_CLAIM
    sentence = UnitKind.SENTENCE
    for position, unit in enumerate(units):
        refs = unit.refs
        if not refs:  # no citation at all (most units of a long uncited draft): its failure,
            # and no verdict (``UNCITED``: redaction does nothing with it)
            failures.append(
                checked_failure(
                    uncited_claim,
                    unit.path,
                    f"assertion sentence {unit.index + 1} has no citation"
                    if unit.kind is sentence
                    else "an assertion without any citation",
                )
            )
            continue
        redact = hidden and not hidden.isdisjoint(refs)
        if not cites.isdisjoint(refs) and not (redact and memo.only_hidden(unit.text)):
            # Cited: no verdict (redaction acts on the others). A sentence that also carries a
            # group of hidden-only tokens is not: its words go by the policy (rule 5).
            cited = refs if cites.issuperset(refs) else [r for r in refs if r in cites]
            text = memo.without(unit.text) if redact else unit.text
            claim = {
                "text": text,
                "citations": list(map(key_of, cited)),
                "grounding_status": cited_claim,
            }
            if reading is not None:
                result = _support(unit, text, cited, reading, support, position, memo.units)
                claim["support"] = result.level
            elif redact:  # rule 5 asks rule 6b even where the policy turns it off
                checking = checking or _reading(index, sources)
                result = check_cited(
                    text,
                    cited,
                    checking[1],
                    checking[0],
                    words_accuse=unit.kind is not UnitKind.PROPOSAL,
                    memo=memo.units,
                )
            if not redact or result.level is SupportLevel.SUPPORTED:
                if reading is not None and enforce and result.level is SupportLevel.UNSUPPORTED:
                    failures.append(_unsupported(unit, result, hidden_ids))
                claims.append(claim)
                continue
            # It lost a citation and its visible sources do not support it alone: its words
            # may come from the hidden one (rule 5), so they go by the policy.
            status = _lost(unit, lost)
        else:
            status = unit_status(unit, resolutions, lost)
        verdicts.append(_new(UnitVerdict, (unit, status)))
        if status is hedged_status:
            claims.append(hedged)
        elif status is UnitStatus.REFUSED:
            refused = True
            failures.append(
                Failure(
                    code=FailureCode.UNSUPPORTED_ANSWER,
                    path=unit.path,
                    detail="its only support is not visible to the reader",
                )
            )
    return verdicts, claims, refused, support


class _DraftMemo:
    """One draft's units, each distinct text read once (a draft may repeat a sentence many
    times): rule 6b's check (``units``, per text and sources) and, for a unit that lost a
    citation, its hidden-only groups and its text without the hidden tokens (pure functions of
    the text and the hidden refs). Never kept past the draft."""

    __slots__ = ("_hidden", "_only", "_without", "units")

    def __init__(self, hidden: frozenset[CitationRef]) -> None:
        self._hidden = hidden
        self.units: UnitMemo = {}
        self._only: dict[str, bool] = {}
        self._without: dict[str, str] = {}

    def only_hidden(self, text: str) -> bool:
        """``hidden_only_group(text, hidden)``."""
        found = self._only.get(text)
        if found is None:
            found = self._only[text] = hidden_only_group(text, self._hidden)
        return found

    def without(self, text: str) -> str:
        """``remove_tokens(text, hidden)``."""
        found = self._without.get(text)
        if found is None:
            found = self._without[text] = remove_tokens(text, self._hidden)
        return found


def _reading(
    index: SourceIndex | None, sources: Mapping[CitationRef, str] | None
) -> tuple[SourceIndex, dict[CitationRef, Cited]]:
    """The source index and each resolved ref's text as rule 6b reads it."""
    index = index if index is not None else SourceIndex()
    return index, index.cited(sources or {})


def _lost(unit: ClaimUnit, policy: LostSupportPolicy) -> UnitStatus:
    """The status of a unit whose support went with a hidden citation (rule 7's policy; a
    proposal is the whole output: refused)."""
    if unit.kind is UnitKind.PROPOSAL or policy is LostSupportPolicy.REFUSE:
        return UnitStatus.REFUSED
    return UnitStatus.HEDGED if policy is LostSupportPolicy.HEDGE else UnitStatus.OMITTED


def lost_citation_keeps(
    resolved: Mapping[CitationRef, object],
    sources: Mapping[CitationRef, str],
    index: SourceIndex | None = None,
) -> Keeps:
    """Rule 5 for a sentence outside the claim units that lost a citation (a heading, a title,
    a question...): it keeps its words only where rule 6b finds it ``supported`` by the visible
    sources it still cites (``resolved``: the draft's visible resolved refs)."""
    checking: tuple[SourceIndex, dict[CitationRef, Cited]] | None = None

    def keeps(text: str, refs: tuple[CitationRef, ...]) -> bool:
        nonlocal checking
        cited = [ref for ref in refs if ref in resolved]
        if not cited:
            return False
        checking = checking or _reading(index, sources)
        return supported_cited(text, cited, checking[1], checking[0])

    return keeps


def _support(  # noqa: PLR0917 -- one cited unit's part of check_claim_units's state
    unit: ClaimUnit,
    text: str,
    cited: Sequence[CitationRef],
    reading: tuple[SourceIndex, Mapping[CitationRef, Cited]],
    support: Support,
    position: int,
    memo: UnitMemo | None = None,
) -> SupportResult:
    """Rule 6b for one cited unit: its text (hidden tokens already out) against the texts of its
    resolved refs only, so words only a hidden source supports find nothing to match."""
    index, texts = reading
    result = check_cited(
        text, cited, texts, index, words_accuse=unit.kind is not UnitKind.PROPOSAL, memo=memo
    )
    support.of_unit[position] = result
    rank = _SUPPORT_RANK[result.level]
    of_ref = support.of_ref
    for ref in cited:
        seen = of_ref.get(ref)
        if seen is None or rank < _SUPPORT_RANK[seen]:
            of_ref[ref] = result.level
    return result


def _unsupported(
    unit: ClaimUnit, result: SupportResult, hidden_ids: AbstractSet[str] = frozenset()
) -> Failure:
    """``unsupported_claim`` at the unit's path, naming what of the unit's own (visible) words
    no cited source has: never a source's text."""
    if result.missing_numbers:
        detail = "no cited source has " + ", ".join(result.missing_numbers[:5])
    elif result.negation_flip:
        detail = "it negates what no cited source negates"
    elif result.missing_words and result.score < 1.0:
        detail = (
            f"the cited sources cover {round(result.score * 100)}% of its words; missing: "
            + ", ".join(result.missing_words[:8])
        )
    else:  # words_accuse only ever lowers a level: unreachable, kept total
        detail = "the cited sources do not say it"
    if hidden_ids and _names_an_id(detail, hidden_ids):  # its own words, a hidden id's digits
        detail = "the cited sources do not say it"
    if unit.kind is UnitKind.SENTENCE:
        detail = f"assertion sentence {unit.index + 1}: {detail}"
    # Built unvalidated (``checked_failure``): its fields are already of their types, and a
    # draft of many unsupported units builds one per unit.
    return checked_failure(FailureCode.UNSUPPORTED_CLAIM, unit.path, detail[:300])


_NUMBERS = re.compile(r"[0-9]+")


def _names_an_id(text: str, hidden_ids: AbstractSet[str]) -> bool:
    """Whether a run of digits of ``text`` is a hidden id (``hidden_ids``: each as digits; rule
    5: no hidden id in a regenerate request, even one the agent wrote as a plain number)."""
    return any(run.lstrip("0") in hidden_ids for run in _NUMBERS.findall(text))
