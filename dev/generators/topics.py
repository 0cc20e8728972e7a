"""Write the language-neutral topic declarations and the AsyncAPI document from topic_specs.

    .venv/bin/python scripts/gen_topics.py

``worker/kafka/topic_specs.py`` declares each topic once; this writes ``topics/topics.json``
(names, partitions, broker configs at the default settings) and ``topics/asyncapi.json`` (an
AsyncAPI 3.0 document whose payloads reference ``schemas/json``).
tests/unit/kafka/test_topics_fresh.py fails when either file is stale.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from worker import __version__
from worker.core import ControlKind, ErrorClass, TopicRole
from worker.kafka.topic_specs import TopicSpec, topic_specs
from worker.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "topics"

#: Who consumes what (the worker's point of view), for the AsyncAPI operations.
RECEIVED_BY_WORKER = {TopicRole.DRAFTS}


#: Kafka channel-binding topic configs (binding 0.5.0) and how each is typed there.
BINDING_CONFIGS = {"retention.ms", "max.message.bytes", "cleanup.policy", "retention.bytes"}

TRACEPARENT = {
    "type": "string",
    "pattern": "^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$",
    "description": "W3C trace context of the draft this message derives from (copied from the "
    "draft when it is W3C-valid; a regeneration timeout carries the turn's).",
}
TRACESTATE = {"type": "string", "description": "W3C tracestate, copied with a valid traceparent."}
MILLIS = {"type": "string", "pattern": "^[0-9]+$"}


def _header_schemas() -> dict[str, Any]:
    """Header sets by topic family, as JSON Schemas of the Kafka headers (UTF-8 values)."""
    dlq = {
        "dlq.original.topic": {"type": "string", "description": "where the record was read"},
        "dlq.original.partition": {**MILLIS, "description": "its partition (decimal)"},
        "dlq.original.offset": {**MILLIS, "description": "its offset (decimal)"},
        "dlq.original.timestamp": {**MILLIS, "description": "its timestamp, ms since the epoch"},
        "dlq.error.class": {"type": "string", "enum": [c.value for c in ErrorClass]},
        "dlq.error.message": {"type": "string", "maxLength": 1000, "description": "for people"},
        "dlq.failed_at": {**MILLIS, "description": "when it was dead-lettered, ms since the epoch"},
        "dlq.worker.version": {"type": "string"},
        "dlq.replay.count": {**MILLIS, "description": "how often `replay` re-published it"},
    }
    return {
        "TraceHeaders": {
            "type": "object",
            "description": "Headers of the worker's outputs.",
            "properties": {"traceparent": TRACEPARENT, "tracestate": TRACESTATE},
        },
        "DraftHeaders": {
            "type": "object",
            "description": "Headers of agent.drafts. `gw.control` marks the worker's own control "
            "records (value: a small JSON object, key: turn_id); every other consumer must ignore "
            "them. A replayed draft also carries its dead letter's `dlq.*` headers.",
            "properties": {
                "traceparent": TRACEPARENT,
                "tracestate": TRACESTATE,
                "gw.control": {
                    "type": "string",
                    "enum": [k.value for k in ControlKind],
                },
                **dlq,
            },
        },
        "DeadLetterHeaders": {
            "type": "object",
            "description": "The original record's headers, plus these (any earlier copy replaced).",
            "required": [
                "dlq.original.topic",
                "dlq.original.partition",
                "dlq.original.offset",
                "dlq.original.timestamp",
                "dlq.error.class",
                "dlq.error.message",
                "dlq.failed_at",
                "dlq.worker.version",
                "dlq.replay.count",
            ],
            "properties": {"traceparent": TRACEPARENT, "tracestate": TRACESTATE, **dlq},
        },
    }


REPLAY_LOG_VALUE = {
    "type": "object",
    "description": "What a replay-log record says, for people reading the topic (the key is what "
    "counts; a null value, a tombstone, forgets the key).",
    "required": ["replayed_at_ms", "replay_count", "error_class", "by"],
    "properties": {
        "replayed_at_ms": {"type": "integer", "minimum": 0},
        "replay_count": {"type": "integer", "minimum": 1},
        "error_class": {"type": "string", "enum": [c.value for c in ErrorClass]},
        "by": {"type": "string", "description": "`grounding-worker replay <version>`"},
    },
}


def _key(s: TopicSpec) -> dict[str, Any]:
    if s.role is TopicRole.REPLAY_LOG:
        return {
            "type": "string",
            "pattern": "^[0-9]+:[0-9]+$",
            "description": "<DLQ partition>:<DLQ offset> of the replayed dead letter",
        }
    if s.role is TopicRole.DLQ:
        return {"type": ["string", "null"], "description": "the original record's key, untouched"}
    return {"type": "string", "description": "turn_id (UTF-8)"}


def _message(s: TopicSpec, name: str) -> dict[str, Any]:
    headers = {
        TopicRole.DRAFTS: "DraftHeaders",
        TopicRole.DLQ: "DeadLetterHeaders",
        TopicRole.REPLAY_LOG: None,
        TopicRole.TURNS_CHANGELOG: None,
    }.get(s.role, "TraceHeaders")
    if s.value_schema:
        payload: dict[str, Any] = {"$ref": f"../schemas/json/{s.value_schema}"}
        content = "application/json"
    elif s.role is TopicRole.REPLAY_LOG:
        payload, content = REPLAY_LOG_VALUE, "application/json"
    elif s.role is TopicRole.TURNS_CHANGELOG:
        payload = {
            "type": "string",
            "format": "binary",
            "description": "the turn's state, zlib-compressed JSON (worker-internal; may change "
            "between versions)",
        }
        content = "application/octet-stream"
    else:
        payload = {
            "type": "string",
            "format": "binary",
            "description": "the dead-lettered record's original bytes, untouched",
        }
        content = "application/octet-stream"
    message: dict[str, Any] = {
        "name": name,
        "contentType": content,
        "payload": payload,
        "bindings": {"kafka": {"bindingVersion": "0.5.0", "key": _key(s)}},
    }
    if headers:
        message["headers"] = {"$ref": f"#/components/schemas/{headers}"}
    return message


def _binding_config(config: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in config.items():
        if key not in BINDING_CONFIGS:
            continue
        out[key] = value.split(",") if key == "cleanup.policy" else int(value)
    return out


def _dump(doc: Any) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def build() -> dict[str, str]:
    """File name -> file text, at the default settings."""
    # Defaults only: the environment of whoever runs this must not leak into the artefacts.
    specs = topic_specs(Settings.model_construct())
    declarations = {
        "schema_version": 1,
        "note": "Generated by scripts/gen_topics.py from worker/kafka/topic_specs.py; names and "
        "sizes are the defaults (GW_TOPICS__*, GW_TOPIC_PARTITIONS, GW_MAX_DRAFT_BYTES).",
        "topics": [
            {
                "role": s.role.value,
                "name": s.name,
                "partitions": s.partitions,
                "replication_factor": s.replication_factor,
                "key": "turn_id (UTF-8)",
                "config": s.config,
                "written_by": s.written_by,
                "description": s.description,
                "value_schema": f"../schemas/json/{s.value_schema}" if s.value_schema else None,
            }
            for s in specs
        ],
    }
    channels: dict[str, Any] = {}
    messages: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    for s in specs:
        msg_name = f"{s.role.value}Message"
        messages[msg_name] = _message(s, msg_name)
        channels[s.role.value] = {
            "address": s.name,
            "description": s.description,
            "messages": {msg_name: {"$ref": f"#/components/messages/{msg_name}"}},
            "bindings": {
                "kafka": {
                    "bindingVersion": "0.5.0",
                    "topic": s.name,
                    "partitions": s.partitions,
                    "replicas": s.replication_factor,
                    "topicConfiguration": _binding_config(s.config),
                }
            },
        }
        action = "receive" if s.role in RECEIVED_BY_WORKER else "send"
        operations[f"{action}_{s.role.value}"] = {
            "action": action,
            "channel": {"$ref": f"#/channels/{s.role.value}"},
        }
    asyncapi = {
        "asyncapi": "3.1.0",
        "info": {
            "title": "grounding-worker",
            "version": __version__,
            "description": "Topics the grounding worker reads and writes "
            "(see docs/contract.md §1). Operations are from the worker's point of view. "
            "Consumers must ignore fields and headers they do not know. Names, partitions and "
            "sizes are the defaults; production "
            "runs with GW_TOPIC_REPLICATION_FACTOR=3 and GW_TOPIC_MIN_INSYNC_REPLICAS=2.",
            "license": {"name": "Apache-2.0", "url": "https://www.apache.org/licenses/LICENSE-2.0"},
        },
        "defaultContentType": "application/json",
        "channels": channels,
        "operations": operations,
        "components": {"messages": messages, "schemas": _header_schemas()},
    }
    return {"topics.json": _dump(declarations), "asyncapi.json": _dump(asyncapi)}


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name, text in build().items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote topics/{name}")


if __name__ == "__main__":
    main()
