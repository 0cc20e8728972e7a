"""The verdict on one draft, in two pure steps so the worker can batch its store look-ups.

``prepare`` (no evidence needed): canonicalize a string output (§3.1), validate it (§3.2), extract
every citation (§3.3) and cut the claim units (§3.7). ``evaluate`` (with what the stores said):
resolve (§3.4), redact (§3.5), check quotes (§3.6), give every unit its status (§3.7).

Decisions:

- A draft that fails ``malformed_output`` or ``schema_invalid`` stops there: its citations are not
  resolved (nothing to look up), it yields no ledger rows, and the regenerate request carries no
  ``previous_output`` (with nothing resolved, nothing could be redacted safely); its reasons carry
  the paths. ``published_status`` and ``auto_apply_not_allowed`` do not stop the verdict: the
  output is well-formed, so every other finding is reported too (one regeneration only).
- ``schema_invalid`` found after extraction: a token id of more than 1,000 digits (path of the
  string holding it) and more than 1,000 distinct citations (path of the 1,001st).
- Citation failures are per occurrence (``dangling_citation``/``not_in_retrieval`` with the
  occurrence's path and the ``citation`` label, e.g. ``timeline[2].text`` / ``EVT-6``). A hidden id
  never yields a failure, so it is never named.
- Quotes are checked for visible sources only (``resolved`` and ``not_in_retrieval``): a hidden
  citation's entry and quote are removed anyway, and a mismatch on it would tell the reader
  something about a source they may not see. A ledger row's ``quote_check`` is the worst check of
  that id (mismatch > tolerant > exact > none); the published citation carries the first quote.
- Failures are ordered by the contract's list of codes, then by position in the output.
- ``agent_no_grounding`` (path ``no_grounding``) and ``unsupported_answer`` (path of the unit)
  are failures too; ``no_grounding``/``refused`` flags make the turn terminal at once (§3.8).
- Typed claims (rule 7b, ``worker.core.claims.typed``) are checked only when the tenant declares
  some and the output validated: against the validated output before redaction (the values are
  compared, never published). A ``contradicted`` claim is ``contradicted_claim`` at its answer
  field, after every other failure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import compress
from operator import itemgetter
from types import MappingProxyType
from typing import Any, NamedTuple

from worker.core.citations.evidence import (
    HIDDEN,
    MAX_SOURCE_ID,
    CitationRef,
    EvidenceRecord,
    QuoteCheck,
    Resolution,
)
from worker.core.citations.extraction import cite, find_overlong_ids
from worker.core.citations.lookalikes import lookalike_paths
from worker.core.citations.quotes import check_quotes
from worker.core.citations.rendered import rendered_lookalike_paths, strings_in
from worker.core.citations.tokens import Tokens
from worker.core.cited_sources import (
    gate_published,
    per_id,
    quotes_in_source_words,
    resolve_cited,
    source_texts,
)
from worker.core.claims.policy import LostSupportPolicy, TenantPolicy
from worker.core.claims.redacted import hidden_places, redact_output
from worker.core.claims.status import check_claim_units, lost_citation_keeps
from worker.core.claims.support import SourceIndex, SupportResult
from worker.core.claims.typed import ClaimCheck, check_claims, contradictions
from worker.core.claims.units import ClaimUnit, claim_units
from worker.core.envelope.canonical import Malformed, canonicalize
from worker.core.envelope.draft import Draft
from worker.core.failures import Failure, FailureCode
from worker.core.messages.wire import WireParts
from worker.core.outputs.validation import SCHEMA_FIELDS, validate_output

MAX_DISTINCT_CITATIONS = 1000
_CODE_ORDER = {code: i for i, code in enumerate(FailureCode)}
_ID = itemgetter(1)
#: ``tuple.__new__``: builds a NamedTuple from already-checked parts without its Python ``__new__``.
_new = tuple.__new__


class Prepared(NamedTuple):
    """A draft made ready for resolution."""

    draft: Draft
    #: The validated agent output (the agent's own dict); ``None`` when parsing or schema failed.
    output: dict[str, Any] | None
    #: Rule 1-2 findings so far.
    failures: tuple[Failure, ...]
    #: Every citation in document order, as two parallel sequences: ``cited[i]`` is the ref of
    #: the citation at ``cited_at[i]`` (a field path: ``answer_markdown``, ``citations[0]``…).
    cited: Sequence[CitationRef]
    cited_at: Sequence[str]
    units: tuple[ClaimUnit, ...]
    #: Distinct ids a store could hold (empty when parsing failed): what the worker looks up.
    refs_to_resolve: frozenset[CitationRef]
    #: Every string of the output, as the agent wrote it, where rule 2 read them one by one
    #: (the render gate leaves those redaction did not change to that reading); ``None``:
    #: not read one by one.
    strings: tuple[str, ...] | None = None


class Evaluation(NamedTuple):
    """Everything the decision and the output messages need about one draft."""

    failures: tuple[Failure, ...]
    #: The agent said ``no_grounding: true``.
    no_grounding: bool
    #: A ``refuse`` policy hit (or a proposal whose support was hidden).
    refused: bool
    #: The output after redaction; ``None`` when it could not be parsed or validated.
    redacted_output: dict[str, Any] | None
    #: Cited and hedged units (omitted ones are absent), text after redaction: ``ClaimOut``s in
    #: their wire form (as every part here: written once, by the verdict).
    claims: WireParts
    #: One per distinct visible resolved (kind, id), in order of first citation: ``CitationOut``s.
    citations: WireParts
    #: One per distinct cited (kind, id), hidden and dangling included: ``LedgerRow``s.
    ledger_rows: WireParts
    #: One per claim the tenant declares (rule 7b); empty when it declares none or the output
    #: could not be validated.
    claim_checks: tuple[ClaimCheck, ...] = ()
    #: Every distinct cited id and how it resolved, in order of first citation (hidden ones
    #: included: never publish); empty when the output could not be validated.
    resolutions: Mapping[CitationRef, Resolution] = MappingProxyType({})
    #: Rule 6b: each cited unit's support, by its position among the prepared units (``check``
    #: shows it); empty when the check is off or nothing was cited.
    unit_support: Mapping[int, SupportResult] = MappingProxyType({})

    @property
    def grounded(self) -> bool:
        """Nothing failed, nothing refused, and the agent claimed grounding."""
        return not self.failures and not self.no_grounding and not self.refused


def _stopped(draft: Draft, failures: list[Failure]) -> Prepared:
    return Prepared(draft, None, tuple(failures), (), (), (), frozenset())


def prepare(draft: Draft, policy: TenantPolicy) -> Prepared:
    """Rules 1-3 and the claim units: everything that needs no store."""
    kind = draft.kind.value
    if isinstance(draft.output, str):
        canonical = canonicalize(draft.output, SCHEMA_FIELDS[kind])
        if isinstance(canonical, Malformed):
            failure = Failure(
                code=FailureCode.MALFORMED_OUTPUT,
                detail=canonical.detail,
                raw_excerpt=canonical.raw_excerpt,
            )
            return _stopped(draft, [failure])
        obj: Any = canonical.value
    else:
        obj = draft.output
    validated = validate_output(kind, obj, auto_apply_threshold=policy.auto_apply_threshold)
    if isinstance(validated, list):
        return _stopped(draft, validated)
    output = validated.value
    overlong = find_overlong_ids(output) if validated.long_digit_run else []
    if overlong:
        detail = "a citation id has more than 1,000 digits"
        return _stopped(
            draft,
            [
                Failure(code=FailureCode.SCHEMA_INVALID, path=o.path, detail=detail)
                for o in overlong
            ],
        )
    lookalikes = lookalike_paths(output) if validated.maybe_lookalike else []
    if lookalikes:
        detail = "a citation look-alike: write citations exactly as [OBS-1], [DOC-2] or [EVT-3]"
        return _stopped(
            draft,
            [Failure(code=FailureCode.SCHEMA_INVALID, path=p, detail=detail) for p in lookalikes],
        )
    tokens = Tokens()
    found = cite(output, tokens)
    # What the renderer shows (rule 2): the raw scan above misses shapes. The token counts are
    # the extraction's, read once; the output's JSON text clears most drafts at once.
    strings: tuple[str, ...] | None = None
    if validated.maybe_shows_more:
        strings = tuple(strings_in(output))
        count = tokens.refs
        lookalikes = rendered_lookalike_paths(output, strings, lambda text: len(count(text)))
    if lookalikes:
        detail = "a citation look-alike: write citations exactly as [OBS-1], [DOC-2] or [EVT-3]"
        return _stopped(
            draft,
            [Failure(code=FailureCode.SCHEMA_INVALID, path=p, detail=detail) for p in lookalikes],
        )
    distinct = dict.fromkeys(found.refs)
    if len(distinct) > MAX_DISTINCT_CITATIONS:
        return _stopped(draft, [_too_many(found.refs, found.paths)])
    if distinct and max(map(_ID, distinct)) > MAX_SOURCE_ID:
        queryable = frozenset([r for r in distinct if r.queryable])
    else:  # every id fits a store: no Python step per ref
        queryable = frozenset(distinct)
    return Prepared(
        draft=draft,
        output=output,
        failures=validated.failures,
        cited=found.refs,
        cited_at=found.paths,
        units=tuple(claim_units(output, kind, tokens)),
        refs_to_resolve=queryable,
        strings=strings,
    )


def _too_many(refs: Sequence[CitationRef], paths: Sequence[str]) -> Failure:
    """``schema_invalid`` at the citation of the first distinct ref past the limit."""
    seen: set[CitationRef] = set()
    at = ""
    for ref, path in zip(refs, paths, strict=True):
        if ref not in seen:
            seen.add(ref)
            if len(seen) > MAX_DISTINCT_CITATIONS:
                at = path
                break
    return Failure(
        code=FailureCode.SCHEMA_INVALID,
        path=at,
        detail=f"more than {MAX_DISTINCT_CITATIONS} distinct citations",
    )


def evaluate(
    prepared: Prepared,
    evidence: Mapping[CitationRef, EvidenceRecord],
    policy: TenantPolicy,
    now: datetime,
    index: SourceIndex | None = None,
) -> Evaluation:
    """Rules 4-7 for a prepared draft, given the records the stores returned for its tenant.

    ``index``: the batch's memo of source texts read for rule 6b (one per call when ``None``).
    """
    output = prepared.output
    if output is None:
        return Evaluation(
            prepared.failures, False, False, None, WireParts(), WireParts(), WireParts()
        )
    draft = prepared.draft
    failures = list(prepared.failures)
    resolutions, paths = resolve_cited(
        draft, prepared.cited, prepared.cited_at, evidence, now, failures
    )
    # The refs whose resolution is hidden, selected in C (one step per distinct ref otherwise).
    hidden = frozenset(compress(resolutions, map(HIDDEN.__contains__, resolutions.values())))
    first_quote, worst = check_quotes(output, resolutions, evidence, failures)
    visible = frozenset(resolutions).difference(hidden)
    resolved, sources, rows = per_id(
        resolutions, paths, evidence, first_quote, worst, visible=visible
    )
    texts = source_texts(resolved, evidence, first_quote, worst)
    verdicts, claims, refused, support = check_claim_units(
        prepared.units, resolved, hidden, resolutions, policy, failures, texts, index
    )
    if support.of_ref:  # the ledger rows, in order of first citation like the resolutions
        of_ref = support.of_ref
        for row, ref in zip(rows, resolutions, strict=True):
            level = of_ref.get(ref)
            if level is not None:
                row["support"] = level
    no_grounding = output.get("no_grounding") is True
    if no_grounding:
        failures.append(
            Failure(
                code=FailureCode.AGENT_NO_GROUNDING,
                path="no_grounding",
                detail="the agent found nothing in scope to ground an answer",
            )
        )
    checks = check_claims(policy.claims, draft.facts, output) if policy.claims else ()
    if checks:
        failures.extend(contradictions(checks))
    failures.sort(key=lambda f: _CODE_ORDER[f.code])
    places = (  # the paths citing a hidden ref, selected in C (one step per citation otherwise)
        hidden_places(compress(prepared.cited_at, map(hidden.__contains__, prepared.cited)))
        if hidden
        else None
    )
    replaced: list[int] = []  # rule 5 outside the claim units (headings, questions, titles...)
    omit = policy.lost_support is LostSupportPolicy.OMIT
    redacted = redact_output(
        output,
        verdicts,
        hidden,
        policy.hedge_sentence,
        places=places,
        omit=omit,
        replaced=replaced,
        keeps=lost_citation_keeps(resolved, texts, index) if hidden else None,
        unit_spans=[u.span for u in prepared.units if u.span is not None],
    )
    if QuoteCheck.TOLERANT in worst.values():
        redacted = quotes_in_source_words(redacted, worst, evidence, visible)
    if hidden:  # the last word: what a reader is shown (rule 5, ``claims.gate``)
        redacted = gate_published(
            output,
            prepared.strings,
            redacted,
            claims,
            sources,
            hidden,
            resolved,
            evidence,
            policy,
            replaced,
        )
    if replaced and policy.lost_support is LostSupportPolicy.REFUSE:
        refused = True
    return Evaluation(
        failures=tuple(failures),
        no_grounding=no_grounding,
        refused=refused,
        redacted_output=redacted,
        claims=claims,
        citations=sources,
        ledger_rows=rows,
        claim_checks=checks,
        resolutions=resolutions,
        unit_support=support.of_unit,
    )
