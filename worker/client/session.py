"""The client's connection: one producer, one shared reply consumer, and every call bounded.

One client holds one producer (idempotent, ``acks=all``, keyed by ``turn_id`` as the contract
requires) and **one shared reply consumer** of the three verdict topics and the dead-letter
topic, without a consumer group (every partition, from the end, so it reads only what was
published after it started). Each :meth:`~GroundingClient.ask` waits for the first verdict whose
``turn_id`` and ``draft_id`` are its draft's, or for the dead letter whose ``dlq.original.*``
headers name the partition and offset its draft was written to (headers only: a client never
reads a dead letter's value, which may belong to another tenant). Verdicts for other turns are
skipped (a process running many agents shares one client). Delivery is at least once: a
duplicate after the first is ignored. Unknown fields in a verdict are kept in ``message``
(contract §1).

Every call ends within its timeout: :meth:`start` (``ClientStartError``, with both aiokafka
clients closed again), :meth:`ask` (``PublishTimeoutError`` while Kafka has not acknowledged the
draft, then ``VerdictTimeoutError``), :meth:`stop`. A call on a client that is not started
raises ``ClientNotStartedError`` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, Self

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import KafkaError

from worker.client.drafts import DEFAULT_MAX_DRAFT_BYTES, encode_draft, regeneration
from worker.client.errors import (
    ClientNotStartedError,
    ClientStartError,
    PublishFailedError,
    PublishTimeoutError,
    VerdictTimeoutError,
)
from worker.client.verdicts import (
    CouldNotGround,
    DeadLettered,
    Grounded,
    Regenerate,
    Verdict,
    dead_lettered,
    parse_verdict,
)
from worker.core import ORIGINAL_OFFSET, ORIGINAL_PARTITION, ORIGINAL_TOPIC
from worker.settings import TopicNames

#: Dead letters seen before their draft's acknowledgement reached the caller (a fast worker):
#: kept by origin so the ask that publishes them still finds its answer; the oldest go first.
_EARLY_DEAD_LETTERS = 1024

Origin = tuple[int, int]


class GroundingClient:
    """Publishes drafts and awaits their verdicts over one shared reply consumer."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        topics: TopicNames | None = None,
        max_draft_bytes: int = DEFAULT_MAX_DRAFT_BYTES,
        **client_options: Any,
    ) -> None:
        """``client_options`` go to both aiokafka clients (``security_protocol``, SASL, TLS);
        ``max_draft_bytes`` is the worker's ``GW_MAX_DRAFT_BYTES`` (larger drafts are refused)."""
        self._bootstrap = bootstrap_servers
        self._topics = topics or TopicNames()
        self._max_draft_bytes = max_draft_bytes
        self._options = client_options
        self._role = {
            self._topics.validated: "validated",
            self._topics.regenerate: "regenerate",
            self._topics.could_not_ground: "could_not_ground",
        }
        self._drafts_topic = self._topics.drafts.encode()
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._waiting: dict[tuple[str, str], asyncio.Future[Verdict]] = {}
        self._origins: dict[Origin, tuple[str, str]] = {}
        self._early: OrderedDict[Origin, tuple[bytes | None, dict[str, bytes]]] = OrderedDict()
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

    @property
    def started(self) -> bool:
        """Connected and reading replies."""
        return self._reader is not None and not self._reader.done()

    async def start(self, *, timeout_s: float = 30.0) -> None:
        """Connect both clients; return once the reply consumer's positions are fixed.

        Raises :class:`ClientStartError` (naming the bootstrap servers and the cause) when that
        takes longer than ``timeout_s`` or Kafka refuses; both clients are closed again then.
        """
        if self.started:
            return
        self._producer = AIOKafkaProducer(
            bootstrap_servers=self._bootstrap, acks="all", enable_idempotence=True, **self._options
        )
        self._consumer = AIOKafkaConsumer(
            *self._role,
            self._topics.dlq,
            bootstrap_servers=self._bootstrap,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="latest",
            **self._options,
        )
        try:
            async with asyncio.timeout(timeout_s):
                await self._connect(self._producer, self._consumer)
        except BaseException as exc:
            await self._close(deadline=asyncio.get_running_loop().time() + 5.0)
            if isinstance(exc, TimeoutError):
                raise ClientStartError(
                    f"Kafka at {self._bootstrap} did not answer within {timeout_s} s"
                ) from None
            if isinstance(exc, KafkaError | OSError):
                raise ClientStartError(
                    f"Kafka at {self._bootstrap} could not be reached: {type(exc).__name__}: {exc}"
                ) from exc
            raise
        self._reader = asyncio.create_task(
            self._read(self._consumer), name="grounding-client-replies"
        )

    @staticmethod
    async def _connect(producer: AIOKafkaProducer, consumer: AIOKafkaConsumer) -> None:
        await producer.start()
        await consumer.start()
        # Without a group, the consumer reads every partition; asking each position now fixes
        # "latest" before the first draft is sent, so no verdict can slip past.
        partitions: set[Any] = set()
        while not partitions:
            partitions = consumer.assignment()
            if not partitions:
                await asyncio.sleep(0.05)
        for tp in partitions:
            await consumer.position(tp)

    async def stop(self, *, timeout_s: float = 10.0) -> None:
        """Stop reading and close both clients within ``timeout_s`` (drafts not yet acknowledged
        by then are dropped); pending asks fail with ``CancelledError``."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            await asyncio.wait({reader}, timeout=timeout_s / 3)
        for waiter in self._waiting.values():
            waiter.cancel()
        await self._close(deadline=deadline)

    async def _close(self, *, deadline: float) -> None:
        """Close both clients by ``deadline`` (loop time).

        aiokafka's ``stop()`` waits for the broker (the producer flushes, the consumer's fetcher
        drains) and swallows the cancellation a timeout would use, so each runs as a task of its
        own; past its share of the time its connections are closed under it, which fails what
        it waits for, and it ends.
        """
        producer, consumer = self._producer, self._consumer
        self._producer = self._consumer = None
        loop = asyncio.get_running_loop()
        if consumer is not None:
            budget = max(0.1, (deadline - loop.time()) / 2)
            await _stop_within(consumer.stop(), consumer._client, budget)
        if producer is not None:
            budget = max(0.1, deadline - loop.time())
            await _stop_within(producer.stop(), producer.client, budget)

    def _require_started(self) -> AIOKafkaProducer:
        if not self.started or self._producer is None:
            raise ClientNotStartedError(
                "the client is not started: `await client.start()` or `async with client`"
            )
        return self._producer

    async def submit(
        self,
        envelope: Mapping[str, Any],
        *,
        timeout_s: float = 30.0,
        traceparent: str | None = None,
    ) -> Origin:
        """Publish ``envelope`` to the drafts topic, keyed by its turn, and wait for the ack;
        return the (partition, offset) it was written to."""
        producer = self._require_started()
        key, value = encode_draft(envelope, max_bytes=self._max_draft_bytes)
        return await self._publish(producer, key, value, timeout_s, traceparent)

    async def _publish(
        self,
        producer: AIOKafkaProducer,
        key: bytes,
        value: bytes,
        timeout_s: float,
        traceparent: str | None,
    ) -> Origin:
        headers = [("traceparent", traceparent.encode("ascii"))] if traceparent else None
        try:
            async with asyncio.timeout(timeout_s):
                meta = await producer.send_and_wait(
                    self._topics.drafts, value, key=key, headers=headers
                )
        except TimeoutError:
            raise PublishTimeoutError(
                f"Kafka at {self._bootstrap} did not acknowledge the draft within {timeout_s} s"
            ) from None
        except KafkaError as exc:
            failed = PublishFailedError(f"publishing the draft failed: {type(exc).__name__}: {exc}")
            failed.retriable = bool(getattr(exc, "retriable", False))  # as Kafka's client says
            raise failed from exc
        return int(meta.partition), int(meta.offset)

    async def ask(
        self,
        envelope: Mapping[str, Any],
        *,
        timeout_s: float = 30.0,
        traceparent: str | None = None,
    ) -> Verdict:
        """Publish ``envelope`` and return its verdict, or :class:`DeadLettered`.

        Returns or raises within ``timeout_s``: :class:`DraftRejectedError` (nothing published),
        :class:`PublishTimeoutError` / :class:`PublishFailedError`, :class:`VerdictTimeoutError`.
        """
        producer = self._require_started()
        key, value = encode_draft(envelope, max_bytes=self._max_draft_bytes)
        ids = (str(envelope["turn_id"]), str(envelope["draft_id"]))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        waiter: asyncio.Future[Verdict] = loop.create_future()
        self._waiting[ids] = waiter
        origin: Origin | None = None
        try:
            origin = await self._publish(producer, key, value, timeout_s, traceparent)
            self._origins[origin] = ids
            early = self._early.pop(origin, None)
            if early is not None:
                self._settle_dead_letter(origin, *early)
            try:
                return await asyncio.wait_for(waiter, max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise VerdictTimeoutError(
                    f"no verdict for turn {ids[0]} draft {ids[1]} within {timeout_s} s"
                    " (is a worker running on these topics?)"
                ) from None
        finally:
            self._waiting.pop(ids, None)
            if origin is not None:
                self._origins.pop(origin, None)

    async def run_turn(
        self,
        first: Mapping[str, Any],
        regenerate: Callable[[Regenerate], Awaitable[Mapping[str, Any] | str]],
        *,
        timeout_s: float = 30.0,
    ) -> Grounded | CouldNotGround | DeadLettered:
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

    async def _read(self, consumer: AIOKafkaConsumer) -> None:
        async for record in consumer:
            if record.topic == self._topics.dlq:
                self._dead_letter(record.key, record.headers)
                continue
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

    def _dead_letter(self, key: bytes | None, raw: Any) -> None:
        """A dead letter: by its ``dlq.original.*`` headers, the answer to one of our drafts?"""
        headers = {str(k): bytes(v) for k, v in raw or ()}
        if headers.get(ORIGINAL_TOPIC) != self._drafts_topic:
            return
        try:
            origin = (int(headers[ORIGINAL_PARTITION]), int(headers[ORIGINAL_OFFSET]))
        except (KeyError, ValueError):
            return
        if origin in self._origins:
            self._settle_dead_letter(origin, key, headers)
        else:
            self._early[origin] = (key, headers)
            while len(self._early) > _EARLY_DEAD_LETTERS:
                self._early.popitem(last=False)

    def _settle_dead_letter(
        self, origin: Origin, key: bytes | None, headers: dict[str, bytes]
    ) -> None:
        ids = self._origins[origin]
        if key is not None and key != ids[0].encode("utf-8", "surrogatepass"):
            return  # the same offset of another topic's partition: not ours
        waiter = self._waiting.get(ids)
        if waiter is not None and not waiter.done():
            waiter.set_result(dead_lettered(ids[0], ids[1], headers))


#: Stops that outlived their time and were left to end on their own (a reference keeps them).
_ABANDONED: set[asyncio.Future[Any]] = set()


def _forget(task: asyncio.Future[Any]) -> None:
    _ABANDONED.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: a failed close has nothing to add


async def _stop_within(stop: Awaitable[Any], kafka: Any, seconds: float) -> None:
    """Await ``stop`` for at most ``seconds``; then close ``kafka``'s (an ``AIOKafkaClient``)
    connections under it and give it one more second to notice."""
    task = asyncio.ensure_future(stop)
    task.add_done_callback(_forget)
    _ABANDONED.add(task)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if done:
        return
    for conn in list(getattr(kafka, "_conns", {}).values()):
        with contextlib.suppress(Exception):
            conn.close()  # aiokafka has no abort(): its connections are what stop() waits on
    await asyncio.wait({task}, timeout=1.0)
