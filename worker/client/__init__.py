"""A producer client for agent developers: build a draft, publish it, await the turn's verdict.

::

    from worker.client import GroundingClient, draft_envelope

    async with GroundingClient("kafka:9092") as client:
        draft = draft_envelope(
            tenant_id="acme", user_id="u-ana", groups=["analysts"], kind="answer",
            output={"answer_markdown": "p95 rose to 840 ms [OBS-1001].",
                    "citations": [{"kind": "OBS", "id": 1001}]},
        )
        verdict = await client.ask(draft, timeout_s=30)
        match verdict:
            case Grounded():        ...  # verdict.output is what the reader sees
            case Regenerate():      ...  # verdict.reasons: code, path, detail per failure
            case CouldNotGround():  ...
            case DeadLettered():    ...  # verdict.error_class: the worker could not process it

:meth:`GroundingClient.run_turn` is the whole agent loop of the contract: publish attempt 0; on a
regenerate request, call the agent again with the reasons and publish attempt 1; return the
turn's final verdict. What each call raises, and why, is drawn in :mod:`worker.client.errors`;
how replies are matched in :mod:`worker.client.session`.
"""

from __future__ import annotations

from worker.client.drafts import Kind, draft_envelope, encode_draft, regeneration
from worker.client.errors import (
    ClientError,
    ClientNotStartedError,
    ClientStartError,
    DraftRejectedError,
    PublishFailedError,
    PublishTimeoutError,
    VerdictTimeoutError,
)
from worker.client.session import GroundingClient
from worker.client.verdicts import (
    CouldNotGround,
    DeadLettered,
    Grounded,
    Regenerate,
    Verdict,
    parse_verdict,
)

__all__ = [
    "ClientError",
    "ClientNotStartedError",
    "ClientStartError",
    "CouldNotGround",
    "DeadLettered",
    "DraftRejectedError",
    "Grounded",
    "GroundingClient",
    "Kind",
    "PublishFailedError",
    "PublishTimeoutError",
    "Regenerate",
    "Verdict",
    "VerdictTimeoutError",
    "draft_envelope",
    "encode_draft",
    "parse_verdict",
    "regeneration",
]
