"""The pure core: values in, values out.

Nothing in this package imports Faust, aiokafka, asyncpg or pymongo, reads the clock, or logs;
the stream loop in ``worker.stream`` feeds it and routes what it returns. The front door is
``batch`` (``plan_batch``, then ``decide_batch``), which the worker and ``check`` both call.

This module is the core's face: code outside ``worker/core`` imports from ``worker.core`` only,
never from a submodule (``tests/unit/checkout/test_layers.py``, an allow-list). ``__all__``
names the front door, the contract's vocabulary and the values that cross it, the evidence
port, and, last, the single rules the benchmarks and generators time or exercise alone (the
shells must not call those: the same test). The core's own modules import each other
directly, never this face, so importing one of them cannot cycle through it; and the face loads
each name on first use, so ``from worker.core import ErrorClass`` costs what importing
``contract`` costs.

Where each rule of the contract's §3 lives (packages lowest first; each imports only those
before it in this list: ``tests/unit/checkout/test_layers.py``):

- ``contract``, ``failures``: the vocabulary (classes, outcomes, topics, headers) and failures.
- ``citations``: rule 3 (``tokens``, ``extraction``, walking ``paths`` and reading ``entries``),
  rule 4's values (``evidence``), rule 6 (``quotes``), rule 5's removal (``redaction``), rules 2
  and 5's look-alikes (``lookalikes`` on the raw text, ``rendered`` on what cmark-gfm shows:
  ``visible``, in the reader's form of ``reading``).
- ``outputs``: rule 2, the agent-output schemas and their validation.
- ``messages``: the grounded answer, regenerate request, could-not-ground event and ledger batch
  (§3-§6), their wire form, records and trace context.
- ``evidence_store``: the one IO seam, what the stores know of each cited id (rule 4).
- ``claims``: rule 7 (``markdown``, read by ``markdown_reader`` with ``cmark_gfm`` and
  ``html_text``; ``sentences``, with its stop grammar ``stops`` and ``pairs``; ``units``,
  ``status``), rule 5's hidden words (``hidden_words``), the redacted output (``redacted``) and
  its last check of what a reader is shown (``gate``), rule 6b (``support``), rule 7b
  (``typed``), the tenant policy (``policy``).
- ``envelope``: §2 and rule 1 (``draft``, ``canonical``).
- ``cited_sources``: rules 4-6 per cited id once the stores answered (resolution failures, the
  published parts, source texts, rule 5's render gate over them).
- ``verdict``: rules 1-7 on one draft, in two pure steps around the store look-up.
- ``turns``: rule 8, the turn state machine, its control records, deadlines and event ids.
- ``grounding``: one draft through the batch (``admit``, ``judge``).
- ``batch_values``: what a batch is planned and decided into (plans, routes, turn writes).
- ``batch``: the batch use case.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what mypy reads; at run time each name is loaded on first use
    from worker.core.batch import (
        decide_batch,
        failed_batch,
        internal_error,
        plan_batch,
        plan_record,
        store_gave_up,
    )
    from worker.core.batch_values import (
        BatchOutcome,
        BatchPlan,
        BatchRules,
        Planned,
        Route,
        Unavailable,
        wanted_of,
    )
    from worker.core.citations.evidence import (
        HIDDEN,
        MISSING_ACL,
        CitationRef,
        EvidenceKind,
        EvidenceRecord,
        Principal,
        QuoteCheck,
        Resolution,
        resolve_all,
    )
    from worker.core.citations.extraction import extract
    from worker.core.citations.redaction import remove_all_tokens
    from worker.core.citations.tokens import find_tokens
    from worker.core.claims.markdown import blocks
    from worker.core.claims.policy import PolicyBook, SupportPolicy, TenantPolicy
    from worker.core.claims.redacted import HiddenRefs, hidden_of, remove_hidden
    from worker.core.claims.sentences import sentence_spans
    from worker.core.claims.support import (
        FAILING,
        Finding,
        SourceIndex,
        SourceText,
        SupportResult,
        check_cited,
        check_support,
    )
    from worker.core.claims.typed import DeclaredClaim, claim_checks_wire
    from worker.core.claims.units import ClaimUnit, UnitKind
    from worker.core.contract import (
        DEFAULT_TOPICS,
        DLQ_HEADERS,
        ERROR_CLASS,
        ERROR_MESSAGE,
        FAILED_AT,
        ORIGINAL_HEADERS,
        ORIGINAL_OFFSET,
        ORIGINAL_PARTITION,
        ORIGINAL_TIMESTAMP,
        ORIGINAL_TOPIC,
        REPLAY_COUNT,
        WORKER_VERSION,
        ErrorClass,
        LedgerOutcome,
        Outcome,
        SupportLevel,
        TopicRole,
    )
    from worker.core.envelope.dead_letter import replay_count
    from worker.core.envelope.draft import (
        SUPPORTED_SCHEMA_VERSIONS,
        Draft,
        DraftEnvelopeWire,
        EnvelopeRejection,
        parse_envelope,
    )
    from worker.core.envelope.json_text import dumps_json, loads_json
    from worker.core.evidence_store import EvidenceStore, Found, InMemoryEvidenceStore, Wanted
    from worker.core.grounding import Admitted, Judgement, admit, judge
    from worker.core.messages.models import (
        CouldNotGround,
        GroundedAnswer,
        LedgerBatch,
        LedgerSupport,
        RegenerateRequest,
    )
    from worker.core.messages.records import Headers, Incoming, OutRecord, last_header
    from worker.core.messages.tracecontext import TraceContext, parse_traceparent
    from worker.core.outputs.schemas import AnalystAnswer, DraftKind, Proposal, ReportDraft
    from worker.core.turns.control import ControlKind, control_record
    from worker.core.turns.deadline_index import DeadlineIndex
    from worker.core.turns.machine import (
        Decision,
        TurnState,
        awaiting_regeneration,
        decide,
        on_deadline,
    )
    from worker.core.verdict import evaluate, prepare

#: The module each name of the face lives in, read on first use (PEP 562): importing one core
#: module, or the face for the contract's vocabulary, does not load the whole core (its word
#: lists, ICU, the Markdown reader). ``tests/unit/checkout/test_layers.py`` checks it matches
#: the imports.
_HOMES: dict[str, tuple[str, ...]] = {
    "worker.core.batch": (
        "decide_batch",
        "failed_batch",
        "internal_error",
        "plan_batch",
        "plan_record",
        "store_gave_up",
    ),
    "worker.core.batch_values": (
        "BatchOutcome",
        "BatchPlan",
        "BatchRules",
        "Planned",
        "Route",
        "Unavailable",
        "wanted_of",
    ),
    "worker.core.citations.evidence": (
        "HIDDEN",
        "MISSING_ACL",
        "CitationRef",
        "EvidenceKind",
        "EvidenceRecord",
        "Principal",
        "QuoteCheck",
        "Resolution",
        "resolve_all",
    ),
    "worker.core.citations.extraction": ("extract",),
    "worker.core.citations.redaction": ("remove_all_tokens",),
    "worker.core.citations.tokens": ("find_tokens",),
    "worker.core.claims.markdown": ("blocks",),
    "worker.core.claims.policy": ("PolicyBook", "SupportPolicy", "TenantPolicy"),
    "worker.core.claims.sentences": ("sentence_spans",),
    "worker.core.claims.redacted": ("HiddenRefs", "hidden_of", "remove_hidden"),
    "worker.core.claims.support": (
        "FAILING",
        "Finding",
        "SourceIndex",
        "SourceText",
        "SupportResult",
        "check_cited",
        "check_support",
    ),
    "worker.core.claims.typed": ("DeclaredClaim", "claim_checks_wire"),
    "worker.core.claims.units": ("ClaimUnit", "UnitKind"),
    "worker.core.contract": (
        "DEFAULT_TOPICS",
        "DLQ_HEADERS",
        "ERROR_CLASS",
        "ERROR_MESSAGE",
        "FAILED_AT",
        "ORIGINAL_HEADERS",
        "ORIGINAL_OFFSET",
        "ORIGINAL_PARTITION",
        "ORIGINAL_TIMESTAMP",
        "ORIGINAL_TOPIC",
        "REPLAY_COUNT",
        "WORKER_VERSION",
        "ErrorClass",
        "LedgerOutcome",
        "Outcome",
        "SupportLevel",
        "TopicRole",
    ),
    "worker.core.envelope.draft": (
        "SUPPORTED_SCHEMA_VERSIONS",
        "Draft",
        "DraftEnvelopeWire",
        "EnvelopeRejection",
        "parse_envelope",
    ),
    "worker.core.envelope.dead_letter": ("replay_count",),
    "worker.core.envelope.json_text": ("dumps_json", "loads_json"),
    "worker.core.evidence_store": ("EvidenceStore", "Found", "InMemoryEvidenceStore", "Wanted"),
    "worker.core.grounding": ("Admitted", "Judgement", "admit", "judge"),
    "worker.core.messages.models": (
        "CouldNotGround",
        "GroundedAnswer",
        "LedgerBatch",
        "LedgerSupport",
        "RegenerateRequest",
    ),
    "worker.core.messages.records": ("Headers", "Incoming", "OutRecord", "last_header"),
    "worker.core.messages.tracecontext": ("TraceContext", "parse_traceparent"),
    "worker.core.outputs.schemas": ("AnalystAnswer", "DraftKind", "Proposal", "ReportDraft"),
    "worker.core.turns.control": ("ControlKind", "control_record"),
    "worker.core.turns.deadline_index": ("DeadlineIndex",),
    "worker.core.turns.machine": (
        "Decision",
        "TurnState",
        "awaiting_regeneration",
        "decide",
        "on_deadline",
    ),
    "worker.core.verdict": ("evaluate", "prepare"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [  # noqa: RUF022 - grouped by purpose (each group sorted), not one alphabet
    # The front door: plan a batch, look its ids up (the shell), decide it.
    "BatchOutcome",
    "BatchPlan",
    "BatchRules",
    "Planned",
    "Route",
    "decide_batch",
    "plan_batch",
    "plan_record",
    "wanted_of",
    # What the shell applies when a batch's evidence cannot be read or the batch fails as a
    # whole: the classes and dead letters the core names.
    "Unavailable",
    "failed_batch",
    "internal_error",
    "store_gave_up",
    # The contract's vocabulary (§2-§7): classes, outcomes, topics, the dead-letter headers.
    "DEFAULT_TOPICS",
    "DLQ_HEADERS",
    "ERROR_CLASS",
    "ERROR_MESSAGE",
    "FAILED_AT",
    "ORIGINAL_HEADERS",
    "ORIGINAL_OFFSET",
    "ORIGINAL_PARTITION",
    "ORIGINAL_TIMESTAMP",
    "ORIGINAL_TOPIC",
    "REPLAY_COUNT",
    "SUPPORTED_SCHEMA_VERSIONS",
    "WORKER_VERSION",
    "ErrorClass",
    "replay_count",
    "LedgerOutcome",
    "Outcome",
    "SupportLevel",
    "TopicRole",
    # Values in and out: records, the envelope, the messages and their schemas, trace context.
    "AnalystAnswer",
    "CouldNotGround",
    "Draft",
    "DraftEnvelopeWire",
    "DraftKind",
    "EnvelopeRejection",
    "GroundedAnswer",
    "Headers",
    "Incoming",
    "LedgerBatch",
    "LedgerSupport",
    "OutRecord",
    "Proposal",
    "RegenerateRequest",
    "ReportDraft",
    "TraceContext",
    "dumps_json",
    "last_header",
    "loads_json",
    "parse_traceparent",
    "parse_envelope",
    # Citations and rule 4: the evidence port the stores implement, and what they return.
    "HIDDEN",
    "MISSING_ACL",
    "CitationRef",
    "EvidenceKind",
    "EvidenceRecord",
    "EvidenceStore",
    "Found",
    "InMemoryEvidenceStore",
    "Principal",
    "QuoteCheck",
    "Resolution",
    "Wanted",
    "resolve_all",
    # Policies, and what ``check`` reports of a draft (its judgement, claim units and checks).
    "ClaimUnit",
    "DeclaredClaim",
    "Judgement",
    "PolicyBook",
    "SupportPolicy",
    "SupportResult",
    "TenantPolicy",
    "UnitKind",
    "claim_checks_wire",
    # Turns: the state the table stores, control records, deadlines.
    "ControlKind",
    "DeadlineIndex",
    "TurnState",
    "awaiting_regeneration",
    "control_record",
    # The steps behind the door, one rule at a time: for the benchmarks and generators only.
    "FAILING",
    "Admitted",
    "Decision",
    "Finding",
    "HiddenRefs",
    "SourceIndex",
    "SourceText",
    "admit",
    "blocks",
    "check_cited",
    "check_support",
    "decide",
    "evaluate",
    "extract",
    "find_tokens",
    "hidden_of",
    "judge",
    "on_deadline",
    "prepare",
    "remove_all_tokens",
    "remove_hidden",
    "sentence_spans",
]


def __getattr__(name: str) -> Any:
    """A name of the face, imported from its module the first time it is asked for."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
