"""What a draft comes back as: a verdict of the worker, or a dead letter (contract §3–§5, §7)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from worker.core import ERROR_CLASS, ERROR_MESSAGE, REPLAY_COUNT


@dataclass(frozen=True, slots=True)
class Grounded:
    """The draft was published to the UI topic: ``output`` is what the reader sees."""

    turn_id: str
    draft_id: str
    attempt: int
    output: dict[str, Any]
    claims: list[dict[str, Any]]
    citations: list[dict[str, Any]]
    message: dict[str, Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class Regenerate:
    """The worker asks for one regeneration before ``deadline``; ``reasons`` say what to fix."""

    turn_id: str
    draft_id: str
    reasons: list[dict[str, Any]]
    deadline: str
    message: dict[str, Any] = field(repr=False)

    @property
    def codes(self) -> list[str]:
        """The failure codes, in the worker's order."""
        return [r["code"] for r in self.reasons]


@dataclass(frozen=True, slots=True)
class CouldNotGround:
    """The turn ended without a grounded answer; ``reasons`` carry codes and paths only."""

    turn_id: str
    draft_id: str
    reasons: list[dict[str, Any]]
    message: dict[str, Any] = field(repr=False)

    @property
    def codes(self) -> list[str]:
        """The failure codes, in the worker's order."""
        return [r["code"] for r in self.reasons]


@dataclass(frozen=True, slots=True)
class DeadLettered:
    """The worker dead-lettered the draft (contract §7): no verdict will follow.

    Read from the dead letter's ``dlq.*`` headers only, never its value. ``error_class`` is
    ``dlq.error.class`` (``identity_mismatch``: a later draft of the turn changed tenant, user or
    groups; ``infra_unavailable``/``internal_error``: the worker's fault, on-call may replay it).
    """

    turn_id: str
    draft_id: str
    error_class: str
    error_message: str
    replay_count: int
    headers: dict[str, bytes] = field(repr=False)


Verdict = Grounded | Regenerate | CouldNotGround | DeadLettered


def parse_verdict(topic_role: str, message: dict[str, Any]) -> Verdict:
    """The verdict a message of ``topic_role`` (validated / regenerate / could_not_ground) is."""
    turn, draft = message["turn_id"], message["draft_id"]
    if topic_role == "validated":
        return Grounded(
            turn,
            draft,
            int(message["attempt"]),
            message["output"],
            list(message.get("claims", ())),
            list(message.get("citations", ())),
            message,
        )
    if topic_role == "regenerate":
        return Regenerate(turn, draft, list(message["reasons"]), message["deadline"], message)
    return CouldNotGround(turn, draft, list(message.get("reasons", ())), message)


def dead_lettered(turn_id: str, draft_id: str, headers: Mapping[str, bytes]) -> DeadLettered:
    """The result for a draft whose dead letter carries ``headers``."""

    def text(name: str) -> str:
        return (headers.get(name) or b"").decode("utf-8", "replace")

    count = text(REPLAY_COUNT)
    return DeadLettered(
        turn_id,
        draft_id,
        text(ERROR_CLASS),
        text(ERROR_MESSAGE),
        int(count) if count.isdigit() else 0,
        dict(headers),
    )
