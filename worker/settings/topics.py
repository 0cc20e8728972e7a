"""The topic names a deployment may override (contract §1): one field per topic role."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from worker.core import DEFAULT_TOPICS, TopicRole


class TopicNames(BaseModel):
    """Topic names (contract §1). Override with ``GW_TOPICS__DRAFTS=...`` and so on."""

    model_config = ConfigDict(frozen=True)

    drafts: str = Field(
        default=DEFAULT_TOPICS[TopicRole.DRAFTS],
        min_length=1,
        description="drafts from the agents (input)",
    )
    regenerate: str = Field(
        default=DEFAULT_TOPICS[TopicRole.REGENERATE],
        min_length=1,
        description="regenerate requests",
    )
    validated: str = Field(
        default=DEFAULT_TOPICS[TopicRole.VALIDATED], min_length=1, description="grounded answers"
    )
    could_not_ground: str = Field(
        default=DEFAULT_TOPICS[TopicRole.COULD_NOT_GROUND],
        min_length=1,
        description="could-not-ground events",
    )
    ledger: str = Field(
        default=DEFAULT_TOPICS[TopicRole.LEDGER], min_length=1, description="the citation ledger"
    )
    dlq: str = Field(
        default=DEFAULT_TOPICS[TopicRole.DLQ], min_length=1, description="dead letters"
    )

    def by_role(self) -> dict[TopicRole, str]:
        """Each topic's name by what it is for (the core addresses its records by role)."""
        return {
            TopicRole.DRAFTS: self.drafts,
            TopicRole.REGENERATE: self.regenerate,
            TopicRole.VALIDATED: self.validated,
            TopicRole.COULD_NOT_GROUND: self.could_not_ground,
            TopicRole.LEDGER: self.ledger,
            TopicRole.DLQ: self.dlq,
        }
