"""``grounding-worker topics``: create the declared topics idempotently, list them, or check them.

``check`` compares what the broker has with ``topic_specs``: a missing topic, another partition
count, another replication factor or a declared config with another value is drift (exit 1).
Configs the declarations do not name are the operator's business and are not compared.

With ``--json``, ``list`` gives each declared topic as the broker has it (partitions, replication
factor, and the configs set on the topic itself, as ``kafka-configs --describe`` shows them: the
broker's defaults would bury them), and ``check`` each finding with the field, the observed and
the declared value, plus an ``ok`` flag. Exit codes are the text mode's.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple, TextIO

import orjson
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import TopicAlreadyExistsError

from worker.core import TopicRole
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


#: ``config_source`` of a DescribeConfigs entry set on the topic itself (DYNAMIC_TOPIC_CONFIG).
TOPIC_CONFIG_SOURCE = 1


class Observed(NamedTuple):
    """What the broker says about one topic."""

    partitions: int
    replication_factor: int
    config: Mapping[str, str]
    #: The keys of ``config`` set on the topic itself (not the broker's defaults).
    topic_keys: frozenset[str] = frozenset()


class Finding(NamedTuple):
    """One way a topic differs from its declaration."""

    topic: str
    #: ``exists``, ``partitions``, ``replication_factor`` or ``config``.
    field: str
    #: The config's name (``config`` findings only).
    key: str | None
    observed: bool | int | str | None
    declared: bool | int | str
    #: The text mode's line: ``missing``, ``partitions 3, declared 2``, ...
    message: str


def drift(spec: TopicSpec, observed: Observed | None) -> list[Finding]:
    """How ``observed`` differs from ``spec``, one finding per difference (empty: none)."""
    name = spec.name
    if observed is None:
        return [Finding(name, "exists", None, False, True, "missing")]
    found = []
    if observed.partitions != spec.partitions:
        found.append(
            Finding(
                name,
                "partitions",
                None,
                observed.partitions,
                spec.partitions,
                f"partitions {observed.partitions}, declared {spec.partitions}",
            )
        )
    if observed.replication_factor != spec.replication_factor:
        found.append(
            Finding(
                name,
                "replication_factor",
                None,
                observed.replication_factor,
                spec.replication_factor,
                f"replication factor {observed.replication_factor},"
                f" declared {spec.replication_factor}",
            )
        )
    for key, want in sorted(spec.config.items()):
        have = observed.config.get(key)
        if have is None or not _same_config(key, have, want):
            found.append(Finding(name, "config", key, have, want, f"{key}={have}, declared {want}"))
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
    topic_keys: dict[str, frozenset[str]] = {}
    for response in responses:
        for resource in response.to_object()["resources"]:
            entries = resource["config_entries"]
            configs[resource["resource_name"]] = {
                e["config_names"]: e["config_value"] for e in entries
            }
            topic_keys[resource["resource_name"]] = frozenset(
                e["config_names"] for e in entries if _set_on_topic(e)
            )
    return {
        name: Observed(
            partitions=len(parts),
            replication_factor=max((len(p["replicas"]) for p in parts), default=0),
            config=configs.get(name, {}),
            topic_keys=topic_keys.get(name, frozenset()),
        )
        for name, parts in present.items()
    }


def _set_on_topic(entry: Mapping[str, Any]) -> bool:
    """Whether a DescribeConfigs entry is set on the topic (v0 responses say only is_default)."""
    if "config_source" in entry:
        return bool(entry["config_source"] == TOPIC_CONFIG_SOURCE)
    return not entry.get("is_default", True)


async def _observe_declared(settings: Settings) -> tuple[list[TopicSpec], dict[str, Observed]]:
    specs = topic_specs(settings)
    admin = AIOKafkaAdminClient(
        bootstrap_servers=settings.kafka_bootstrap_servers, **client_security(settings)
    )
    await admin.start()
    try:
        observed = await observe(admin, [s.name for s in specs])
    finally:
        await admin.close()
    return specs, observed


async def check_topics(settings: Settings) -> dict[str, list[Finding]]:
    """Every declared topic and its drift (an empty list when it matches)."""
    specs, observed = await _observe_declared(settings)
    return {s.name: drift(s, observed.get(s.name)) for s in specs}


async def describe_topics(settings: Settings) -> list[dict[str, Any]]:
    """Every declared topic as the broker has it (``list --json``); ``null`` where missing."""
    specs, observed = await _observe_declared(settings)
    described = []
    for spec in specs:
        seen = observed.get(spec.name)
        described.append(
            {
                "name": spec.name,
                "role": spec.role.value,
                "exists": seen is not None,
                "partitions": seen.partitions if seen else None,
                "replication_factor": seen.replication_factor if seen else None,
                "config": ({k: seen.config[k] for k in sorted(seen.topic_keys)} if seen else None),
            }
        )
    return described


def check_json(specs: Sequence[TopicSpec], report: Mapping[str, list[Finding]]) -> dict[str, Any]:
    """``check --json``: ``ok``, each declared topic with its own ``ok``, and every finding."""
    return {
        "ok": not any(report.values()),
        "topics": [{"name": s.name, "role": s.role.value, "ok": not report[s.name]} for s in specs],
        "findings": [f._asdict() for s in specs for f in report[s.name]],
    }


def _dump(out: TextIO, body: Any) -> None:
    out.write(orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n")


def topics_command(
    settings: Settings, action: str, *, json_output: bool = False, out: TextIO | None = None
) -> int:
    """Run ``topics create``, ``list`` or ``check``; return the exit code (check: 1 on drift)."""
    out = out or sys.stdout
    if action == "create":
        created = asyncio.run(create_topics(settings))
        if json_output:
            _dump(out, {"created": created})
        else:
            out.write(f"created {len(created)} topic(s): {', '.join(created) or '-'}\n")
        return 0
    if action == "list":
        if json_output:
            _dump(out, asyncio.run(describe_topics(settings)))
            return 0
        for name, exists in asyncio.run(list_topics(settings)).items():
            out.write(f"{'ok     ' if exists else 'missing'} {name}\n")
        return 0
    if action == "check":
        report = asyncio.run(check_topics(settings))
        if json_output:
            _dump(out, check_json(topic_specs(settings), report))
        else:
            for name, problems in report.items():
                if not problems:
                    out.write(f"ok      {name}\n")
                for problem in problems:
                    out.write(f"drift   {name}: {problem.message}\n")
        return 1 if any(report.values()) else 0
    sys.stderr.write(f"unknown action {action!r}: use create, list or check\n")
    return 2
