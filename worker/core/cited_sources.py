"""The cited sources of one draft once the stores answered, for ``worker.core.verdict``'s
``evaluate``: rule 4's resolutions and a failure per failing occurrence (``resolve_cited``), what
each id publishes in its wire form (``per_id``: citation key, source, ledger row), the texts rule
6b reads (``source_texts``), tolerant quotes in their source's own words
(``quotes_in_source_words``) and rule 5's last check of all that is published
(``gate_published``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from worker.core.citations.evidence import (
    CitationRef,
    EvidenceKind,
    EvidenceRecord,
    QuoteCheck,
    Resolution,
    resolve_all,
)
from worker.core.citations.quotes import source_quote
from worker.core.citations.redaction import redact_text
from worker.core.citations.rendered import render_gate, strings_in, titles_to_hide
from worker.core.claims.gate import gate_claims, gate_output, gate_sources
from worker.core.claims.policy import LostSupportPolicy, TenantPolicy
from worker.core.envelope.draft import Draft
from worker.core.failures import Failure, FailureCode
from worker.core.messages.models import GroundingStatus, LedgerSupport
from worker.core.messages.wire import WireParts

_NONE = QuoteCheck.NONE
_NO_SUPPORT = LedgerSupport.NONE
_RESOLVED = Resolution.RESOLVED
#: Resolutions that fail the draft at each occurrence (rule 4).
_FAILING = frozenset({Resolution.DANGLING, Resolution.NOT_IN_RETRIEVAL})


def gate_published(  # noqa: PLR0917 -- the published parts the gate reads, in place
    output: Any,
    strings: tuple[str, ...] | None,
    redacted: dict[str, Any],
    claims: WireParts,
    sources: WireParts,
    hidden: frozenset[CitationRef],
    resolved: Mapping[CitationRef, object],
    evidence: Mapping[CitationRef, EvidenceRecord],
    policy: TenantPolicy,
    replaced: list[int],
) -> dict[str, Any]:
    """Rule 5's last check of everything published (``worker.core.claims.gate``): the redacted
    output (returned, mended), the claims and the sources (mended in place). ``output`` and
    ``strings``: the prepared output and its strings as the agent wrote them (``Prepared``)."""
    doc = EvidenceKind.DOC
    titles = titles_to_hide(
        [evidence[r].title for r in hidden if r.kind is doc and r in evidence],
        [evidence[r].title for r in resolved if r.kind is doc],
    )
    gate = render_gate(hidden, titles)
    omit = policy.lost_support is LostSupportPolicy.OMIT
    words = "" if omit else policy.hedge_sentence
    hedged = (
        None
        if omit
        else {"text": words, "citations": [], "grounding_status": GroundingStatus.HEDGED}
    )
    agents = {id(text) for text in (strings_in(output) if strings is None else strings)}
    redacted = gate_output(redacted, gate, words, replaced, agents)
    replaced.extend([1] * gate_claims(claims, gate, hedged))
    gate_sources(sources, gate)
    return redacted


def quotes_in_source_words(
    redacted: dict[str, Any],
    worst: Mapping[CitationRef, QuoteCheck],
    evidence: Mapping[CitationRef, EvidenceRecord],
    visible: frozenset[CitationRef],
) -> dict[str, Any]:
    """The output's ``citations[]`` with each quote that checked ``tolerant`` in its source's
    own words (only the ``visible`` refs' tokens kept), or without a quote where those cannot
    be placed (rule 5)."""
    entries = redacted.get("citations")
    if not isinstance(entries, list):
        return redacted
    out: list[Any] = []
    for entry in entries:
        quote = entry.get("quote") if isinstance(entry, dict) else None
        ref = CitationRef(EvidenceKind(entry["kind"]), entry["id"]) if quote else None
        if not isinstance(quote, str) or ref is None or worst.get(ref) is not QuoteCheck.TOLERANT:
            out.append(entry)
            continue
        own = source_quote(quote, evidence[ref].text)
        entry = {k: v for k, v in entry.items() if k != "quote"}  # noqa: PLW2901
        if own is not None:
            entry["quote"] = redact_text(own, visible)
        out.append(entry)
    return {**redacted, "citations": out}


def source_texts(
    resolved: Mapping[CitationRef, object],
    evidence: Mapping[CitationRef, EvidenceRecord],
    first_quote: Mapping[CitationRef, str],
    worst: Mapping[CitationRef, QuoteCheck],
) -> dict[CitationRef, str]:
    """Rule 6b (v4): what each resolved ref is checked against — the whole visible source, its
    ``summary`` (OBS, EVT) or ``title`` and ``text`` (DOC); a verified quote is part of its
    source, so it never narrows it. Hidden refs are not resolved, so they have none."""
    del first_quote, worst  # v3 narrowed a source to its verified quote; v4 does not
    texts: dict[CitationRef, str] = {}
    doc = EvidenceKind.DOC
    for ref in resolved:
        record = evidence[ref]
        if ref.kind is doc and record.title:
            texts[ref] = f"{record.title}\n{record.text or ''}"
        else:
            texts[ref] = record.text or ""
    return texts


def resolve_cited(  # noqa: PLR0917 -- the prepared draft's parts, then what the stores said
    draft: Draft,
    cited: Sequence[CitationRef],
    cited_at: Sequence[str],
    evidence: Mapping[CitationRef, EvidenceRecord],
    now: datetime,
    failures: list[Failure],
) -> tuple[dict[CitationRef, Resolution], dict[CitationRef, list[str]]]:
    """Rule 4: every distinct ref's resolution (in order of first citation), the distinct paths
    citing it, and a failure per occurrence of a dangling or ``not_in_retrieval`` ref."""
    paths: dict[CitationRef, list[str]] = {}
    # Distinct (ref, path) pairs in order, found in C: a string citing a ref twice is one step.
    for ref, path in dict.fromkeys(zip(cited, cited_at, strict=True)):
        seen = paths.get(ref)
        if seen is None:
            paths[ref] = [path]
        else:
            seen.append(path)
    resolutions = resolve_all(paths, evidence, draft.principal, draft.retrieval_set(), now)
    if _FAILING.isdisjoint(resolutions.values()):
        return resolutions, paths
    for ref, path in zip(cited, cited_at, strict=True):  # a failure per occurrence, in order
        state = resolutions[ref]
        if state is Resolution.DANGLING:
            failures.append(
                Failure(
                    code=FailureCode.DANGLING_CITATION,
                    path=path,
                    citation=ref.label,
                    detail="no such source for this tenant",
                )
            )
        elif state is Resolution.NOT_IN_RETRIEVAL:
            failures.append(
                Failure(
                    code=FailureCode.NOT_IN_RETRIEVAL,
                    path=path,
                    citation=ref.label,
                    detail="not among the sources retrieved for this turn",
                )
            )
    return resolutions, paths


def per_id(
    resolutions: Mapping[CitationRef, Resolution],
    paths: Mapping[CitationRef, list[str]],
    evidence: Mapping[CitationRef, EvidenceRecord],
    first_quote: Mapping[CitationRef, str],
    worst: Mapping[CitationRef, QuoteCheck],
    *,
    visible: frozenset[CitationRef],
) -> tuple[dict[CitationRef, dict[str, Any]], WireParts, WireParts]:
    """One pass over the distinct refs, in order of first citation, writing the wire form of
    what each one publishes: a resolved ref's ``CitationKey`` (by ref, for the claims) and its
    source; every ref's ledger row (metadata only).

    Every string published in a source passes ``redact_text``: a store's title may name any id
    (one the reader may not see), and the agent's quote may hold a hidden token (§3.5):
    ``visible`` holds the refs of ``resolutions`` that are not hidden.
    """
    doc = EvidenceKind.DOC
    keys: dict[CitationRef, dict[str, Any]] = {}
    sources, rows = WireParts(), WireParts()
    for ref, state in resolutions.items():
        kind, ident = ref
        check = worst.get(ref, _NONE)
        rows.append(
            {
                "kind": kind,
                "source_id": str(ident),
                "resolution": state,
                "quote_check": check,
                "paths": paths[ref],
                "support": _NO_SUPPORT,  # rule 6b's lowest, once the units are checked
            }
        )
        if state is not _RESOLVED:
            continue
        keys[ref] = {"id": ident, "kind": kind}
        source = {"kind": kind, "id": ident, "quote_check": check}
        if kind is doc and (title := evidence[ref].title) is not None:
            source["title"] = redact_text(title, visible)
        if (quote := first_quote.get(ref)) is not None:
            if check is QuoteCheck.TOLERANT:  # in the source's own words (rule 5)
                quote = source_quote(quote, evidence[ref].text)
            if quote is not None:
                source["quote"] = redact_text(quote, visible)
        sources.append(source)
    return keys, sources, rows
