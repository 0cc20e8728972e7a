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

:meth:`GroundingClient.run_turn` is the whole agent loop of the contract: publish attempt 0; on a
regenerate request, call the agent again with the reasons and publish attempt 1; return the
turn's final verdict.

One client holds one producer (idempotent, ``acks=all``, keyed by ``turn_id`` as the contract
requires) and **one shared reply consumer** of the three verdict topics, without a consumer group
(every partition, from the end, so it reads only verdicts published after it started). Each
:meth:`~GroundingClient.ask` waits for the first verdict whose ``turn_id`` and ``draft_id`` are its
draft's; verdicts for other turns are skipped (a process running many agents shares one client).
Delivery is at least once: a duplicate verdict after the first is ignored. Unknown fields in a
verdict are kept in ``message`` and otherwise ignored (contract §1).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, Self

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from worker.core.envelope.draft import DraftEnvelopeWire
from worker.settings import TopicNames

Kind = Literal["answer", "proposal", "report"]


class VerdictTimeoutError(TimeoutError):
    """No verdict for the draft arrived within the timeout (is the worker running?)."""


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


Verdict = Grounded | Regenerate | CouldNotGround


def draft_envelope(
    *,
    tenant_id: str,
    user_id: str,
    kind: Kind,
    output: Mapping[str, Any] | str,
    groups: Sequence[str] = (),
    turn_id: str | None = None,
    draft_id: str | None = None,
    attempt: int = 0,
    retrieval: Sequence[Mapping[str, Any]] | None = None,
    facts: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A valid draft envelope (contract §2), checked against its schema before it is sent.

    ``turn_id`` and ``draft_id`` default to fresh UUIDs; ``produced_at`` is now. Raises
    pydantic's ``ValidationError`` naming the field when a value cannot be sent.
    """
    turn = turn_id or f"t-{uuid.uuid4()}"
    envelope: dict[str, Any] = {
        "schema_version": 1,
        "draft_id": draft_id or f"{turn}-a{attempt}-{uuid.uuid4().hex[:8]}",
        "turn_id": turn,
        "attempt": attempt,
        "tenant_id": tenant_id,
        "principal": {"user_id": user_id, "groups": list(groups)},
        "kind": kind,
        "output": output if isinstance(output, str) else dict(output),
        "produced_at": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    }
    if retrieval is not None:
        envelope["retrieval"] = [dict(r) for r in retrieval]
    if facts is not None:
        envelope["facts"] = [dict(f) for f in facts]
    DraftEnvelopeWire.model_validate(envelope)
    return envelope


def regeneration(first: Mapping[str, Any], output: Mapping[str, Any] | str) -> dict[str, Any]:
    """Attempt 1 of ``first``'s turn with the regenerated ``output`` (same turn, tenant, reader)."""
    return draft_envelope(
        tenant_id=first["tenant_id"],
        user_id=first["principal"]["user_id"],
        groups=first["principal"].get("groups") or (),
        kind=first["kind"],
        output=output,
        turn_id=first["turn_id"],
        attempt=1,
        retrieval=first.get("retrieval"),
        facts=first.get("facts"),
    )


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


class GroundingClient:
    """Publishes drafts and awaits their verdicts over one shared reply consumer."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        topics: TopicNames | None = None,
        **client_options: Any,
    ) -> None:
        """``client_options`` go to both aiokafka clients (``security_protocol``, SASL, TLS)."""
        self._topics = topics or TopicNames()
        self._role = {
            self._topics.validated: "validated",
            self._topics.regenerate: "regenerate",
            self._topics.could_not_ground: "could_not_ground",
        }
        self._producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap_servers,
            acks="all",
            enable_idempotence=True,
            **client_options,
        )
        self._consumer = AIOKafkaConsumer(
            *self._role,
            bootstrap_servers=bootstrap_servers,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="latest",
            **client_options,
        )
        self._waiting: dict[tuple[str, str], asyncio.Future[Verdict]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Connect both clients; return once the reply consumer's positions are fixed."""
        await self._producer.start()
        await self._consumer.start()
        # Without a group, the consumer reads every partition; asking each position now fixes
        # "latest" before the first draft is sent, so no verdict can slip past.
        partitions: set[Any] = set()
        while not partitions:
            partitions = self._consumer.assignment()
            if not partitions:
                await asyncio.sleep(0.05)
        for tp in partitions:
            await self._consumer.position(tp)
        self._reader = asyncio.create_task(self._read(), name="grounding-client-replies")

    async def stop(self) -> None:
        """Stop reading and close both clients; pending asks fail with ``CancelledError``."""
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        for waiter in self._waiting.values():
            waiter.cancel()
        await self._consumer.stop()
        await self._producer.stop()

    async def submit(self, envelope: Mapping[str, Any], *, traceparent: str | None = None) -> None:
        """Publish ``envelope`` to the drafts topic, keyed by its turn, and wait for the ack."""
        headers = [("traceparent", traceparent.encode("ascii"))] if traceparent else None
        await self._producer.send_and_wait(
            self._topics.drafts,
            orjson.dumps(envelope),
            key=str(envelope["turn_id"]).encode("utf-8"),
            headers=headers,
        )

    async def ask(
        self,
        envelope: Mapping[str, Any],
        *,
        timeout_s: float = 30.0,
        traceparent: str | None = None,
    ) -> Verdict:
        """Publish ``envelope`` and return its verdict.

        Raises :class:`VerdictTimeoutError` when none arrives within ``timeout_s``.
        """
        key = (str(envelope["turn_id"]), str(envelope["draft_id"]))
        waiter: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()
        self._waiting[key] = waiter
        try:
            await self.submit(envelope, traceparent=traceparent)
            return await asyncio.wait_for(waiter, timeout_s)
        except TimeoutError:
            raise VerdictTimeoutError(
                f"no verdict for turn {key[0]} draft {key[1]} within {timeout_s} s"
            ) from None
        finally:
            self._waiting.pop(key, None)

    async def run_turn(
        self,
        first: Mapping[str, Any],
        regenerate: Callable[[Regenerate], Awaitable[Mapping[str, Any] | str]],
        *,
        timeout_s: float = 30.0,
    ) -> Grounded | CouldNotGround:
        """The contract's agent loop: attempt 0; on a regenerate request, ``regenerate(request)``
        returns the new output and it is sent as attempt 1; return the turn's final verdict."""
        verdict = await self.ask(first, timeout_s=timeout_s)
        if not isinstance(verdict, Regenerate):
            return verdict
        second = regeneration(first, await regenerate(verdict))
        final = await self.ask(second, timeout_s=timeout_s)
        if isinstance(final, Regenerate):  # the worker never asks twice; be explicit if it did
            raise TypeError(f"turn {final.turn_id}: a second regenerate request")
        return final

    async def _read(self) -> None:
        async for record in self._consumer:
            role = self._role.get(record.topic)
            if role is None or record.value is None:
                continue
            try:
                message = orjson.loads(record.value)
                key = (str(message["turn_id"]), str(message["draft_id"]))
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue  # not a verdict this client can read: never a reason to stop reading
            waiter = self._waiting.get(key)
            if waiter is not None and not waiter.done():
                waiter.set_result(parse_verdict(role, message))
