"""``grounding-worker topics``: create the contract's topics idempotently, or list them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from worker.kafka_access import client_security
from worker.settings import Settings
from worker.stream.topic_specs import TopicRole, topic_specs


async def create_topics(settings: Settings, only: Collection[TopicRole] | None = None) -> list[str]:
    """Create every missing topic (or those of ``only``); return the names created."""
    admin = AIOKafkaAdminClient(
        bootstrap_servers=settings.kafka_bootstrap_servers, **client_security(settings)
    )
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        wanted = [
            s
            for s in topic_specs(settings)
            if s.name not in existing and (only is None or s.role in only)
        ]
        if not wanted:
            return []
        new = [
            NewTopic(
                name=s.name,
                num_partitions=s.partitions,
                replication_factor=s.replication_factor,
                topic_configs=s.config,
            )
            for s in wanted
        ]
        # Another process may create them between our list and create: that is the goal anyway.
        with contextlib.suppress(TopicAlreadyExistsError):
            await admin.create_topics(new)
        return [s.name for s in wanted]
    finally:
        await admin.close()


async def list_topics(settings: Settings) -> dict[str, bool]:
    """Each contract topic and whether it exists."""
    admin = AIOKafkaAdminClient(
        bootstrap_servers=settings.kafka_bootstrap_servers, **client_security(settings)
    )
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        return {s.name: s.name in existing for s in topic_specs(settings)}
    finally:
        await admin.close()


def topics_command(settings: Settings, action: str) -> int:
    """Run ``topics create`` or ``topics list``; return the exit code."""
    if action == "create":
        created = asyncio.run(create_topics(settings))
        print(f"created {len(created)} topic(s): {', '.join(created) or '-'}")
        return 0
    if action == "list":
        for name, exists in asyncio.run(list_topics(settings)).items():
            print(f"{'ok     ' if exists else 'missing'} {name}")
        return 0
    print(f"unknown action {action!r}: use create or list")
    return 2
