"""The wire contract's vocabulary (``docs/contract.md``), spelled once.

Every module that names a dead-letter class, an outcome, a topic's role or a ``dlq.*`` header
imports it from here: the core emits these values, the shell writes them to Kafka, the tools
read them back, and the generators (``scripts/gen_schemas.py``, ``scripts/gen_topics.py``) write
them into the published schemas. Failure codes (§3) are :class:`worker.core.failures.FailureCode`.

Decisions:

- :class:`Outcome` is what one decided record led to: the ``outcome`` label of
  ``grounding_drafts_total``, the ``outcome`` of the ``draft.routed`` log line and of the check
  report. :class:`LedgerOutcome` is its part a ledger batch carries (a draft that was decided);
  its values are :class:`Outcome`'s, so the two cannot drift apart. It keeps its name and
  docstring because the ledger batch's JSON Schema names it (``$defs/LedgerOutcome``).
- :class:`TopicRole` is what a topic is for, independent of its configured name: the core's
  outbound messages name their topic by role, the shell maps roles to names.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorClass(StrEnum):
    """``dlq.error.class`` values (contract §7)."""

    MALFORMED_ENVELOPE = "malformed_envelope"
    UNSUPPORTED_SCHEMA_VERSION = "unsupported_schema_version"
    OVERSIZED = "oversized"
    IDENTITY_MISMATCH = "identity_mismatch"
    INFRA_UNAVAILABLE = "infra_unavailable"
    INTERNAL_ERROR = "internal_error"


class Outcome(StrEnum):
    """What one decided record led to."""

    GROUNDED = "grounded"
    REGENERATE = "regenerate"
    COULD_NOT_GROUND = "could_not_ground"
    #: A redelivery or a later draft of a finished turn: the recorded messages, nothing new.
    UNCHANGED = "unchanged"
    DEAD_LETTER = "dead_letter"
    #: A finished turn past its retention, forgotten (an ``expire_turn`` control record).
    EXPIRED = "expired"


class LedgerOutcome(StrEnum):
    """What the decided draft led to."""

    GROUNDED = Outcome.GROUNDED.value
    REGENERATE = Outcome.REGENERATE.value
    COULD_NOT_GROUND = Outcome.COULD_NOT_GROUND.value


class TopicRole(StrEnum):
    """What a topic is for, independent of its (configurable) name."""

    DRAFTS = "drafts"
    REGENERATE = "regenerate"
    VALIDATED = "validated"
    COULD_NOT_GROUND = "could_not_ground"
    LEDGER = "ledger"
    DLQ = "dlq"
    REPLAY_LOG = "replay_log"
    TURNS_CHANGELOG = "turns_changelog"


#: The contract's topic names (§1), each overridable in the settings (``GW_TOPICS__*``).
DEFAULT_TOPICS: dict[TopicRole, str] = {
    TopicRole.DRAFTS: "agent.drafts",
    TopicRole.REGENERATE: "agent.regenerate",
    TopicRole.VALIDATED: "answers.validated",
    TopicRole.COULD_NOT_GROUND: "answers.could_not_ground",
    TopicRole.LEDGER: "citations.ledger",
    TopicRole.DLQ: "agent.drafts.dlq",
}


# --- what a unit's check concluded (contract rules 6b and 7b) ---------------------------------


class SupportLevel(StrEnum):
    """How well a cited unit's visible sources support it (contract rule 6b)."""

    SUPPORTED = "supported"
    WEAK = "weak"
    UNSUPPORTED = "unsupported"
    UNCHECKED = "unchecked"


class Disposition(StrEnum):
    """What the check concluded about one declared claim, in the contract's order."""

    OMITTED = "omitted"
    UNCOLLECTED = "uncollected"
    ADVISORY = "advisory"
    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"


# --- dead-letter headers (contract §7) -----------------------------------------------------------
ORIGINAL_TOPIC = "dlq.original.topic"
ORIGINAL_PARTITION = "dlq.original.partition"
ORIGINAL_OFFSET = "dlq.original.offset"
ORIGINAL_TIMESTAMP = "dlq.original.timestamp"
ERROR_CLASS = "dlq.error.class"
ERROR_MESSAGE = "dlq.error.message"
FAILED_AT = "dlq.failed_at"
WORKER_VERSION = "dlq.worker.version"
REPLAY_COUNT = "dlq.replay.count"

ORIGINAL_HEADERS = (ORIGINAL_TOPIC, ORIGINAL_PARTITION, ORIGINAL_OFFSET, ORIGINAL_TIMESTAMP)
#: Every ``dlq.*`` header; a dead letter replaces any earlier copy of these, never duplicates one.
DLQ_HEADERS = (
    *ORIGINAL_HEADERS,
    ERROR_CLASS,
    ERROR_MESSAGE,
    FAILED_AT,
    WORKER_VERSION,
    REPLAY_COUNT,
)
