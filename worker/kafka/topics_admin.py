"""``grounding-worker topics``: create the declared topics idempotently, list them, or check them.

``check`` compares what the broker has with ``topic_specs``: a missing topic, another partition
count, another replication factor or a declared config with another value is drift (exit 1).
Configs the declarations do not name are the operator's business and are not compared.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import TopicAlreadyExistsError

from worker.core.contract import TopicRole
from worker.kafka.access import client_security
from worker.kafka.topic_specs import TopicSpec, topic_specs
from worker.settings import Settings


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


class Observed(NamedTuple):
    """What the broker says about one topic."""

    partitions: int
    replication_factor: int
    config: Mapping[str, str]


def drift(spec: TopicSpec, observed: Observed | None) -> list[str]:
    """How ``observed`` differs from ``spec``, one line per difference (empty: none)."""
    if observed is None:
        return ["missing"]
    found = []
    if observed.partitions != spec.partitions:
        found.append(f"partitions {observed.partitions}, declared {spec.partitions}")
    if observed.replication_factor != spec.replication_factor:
        found.append(
            f"replication factor {observed.replication_factor}, declared {spec.replication_factor}"
        )
    for key, want in sorted(spec.config.items()):
        have = observed.config.get(key)
        if have is None or not _same_config(key, have, want):
            found.append(f"{key}={have}, declared {want}")
    return found


def _same_config(key: str, have: str, want: str) -> bool:
    if key == "cleanup.policy":  # a list: "compact,delete" is "delete,compact"
        return set(have.replace(" ", "").split(",")) == set(want.split(","))
    return have == want


async def observe(admin: Any, names: Sequence[str]) -> dict[str, Observed]:
    """Partitions, replication factor and configs of those of ``names`` that exist."""
    # Only topics that exist: a metadata request naming a missing topic makes a broker with
    # auto.create.topics.enable create it, and a check must change nothing.
    existing = set(await admin.list_topics())
    wanted = [name for name in names if name in existing]
    if not wanted:
        return {}
    described = await admin.describe_topics(wanted)
    present = {
        t["topic"]: t["partitions"] for t in described if t["error_code"] == 0 and t["partitions"]
    }
    if not present:
        return {}
    responses = await admin.describe_configs(
        [ConfigResource(ConfigResourceType.TOPIC, name) for name in present]
    )
    configs: dict[str, dict[str, str]] = {}
    for response in responses:
        for resource in response.to_object()["resources"]:
            configs[resource["resource_name"]] = {
                e["config_names"]: e["config_value"] for e in resource["config_entries"]
            }
    return {
        name: Observed(
            partitions=len(parts),
            replication_factor=max((len(p["replicas"]) for p in parts), default=0),
            config=configs.get(name, {}),
        )
        for name, parts in present.items()
    }


async def check_topics(settings: Settings) -> dict[str, list[str]]:
    """Every declared topic and its drift (an empty list when it matches)."""
    specs = topic_specs(settings)
    admin = AIOKafkaAdminClient(
        bootstrap_servers=settings.kafka_bootstrap_servers, **client_security(settings)
    )
    await admin.start()
    try:
        observed = await observe(admin, [s.name for s in specs])
    finally:
        await admin.close()
    return {s.name: drift(s, observed.get(s.name)) for s in specs}


def topics_command(settings: Settings, action: str) -> int:
    """Run ``topics create``, ``list`` or ``check``; return the exit code (check: 1 on drift)."""
    if action == "create":
        created = asyncio.run(create_topics(settings))
        print(f"created {len(created)} topic(s): {', '.join(created) or '-'}")
        return 0
    if action == "list":
        for name, exists in asyncio.run(list_topics(settings)).items():
            print(f"{'ok     ' if exists else 'missing'} {name}")
        return 0
    if action == "check":
        report = asyncio.run(check_topics(settings))
        for name, problems in report.items():
            if not problems:
                print(f"ok      {name}")
            for problem in problems:
                print(f"drift   {name}: {problem}")
        return 1 if any(report.values()) else 0
    print(f"unknown action {action!r}: use create, list or check")
    return 2
