"""aiokafka's consumer records as the core's record values (``worker.core.messages.records``).

The values themselves (:class:`Incoming`, ``OutRecord``, ``Headers``) are the core's, so the
core can plan and decide a batch of them; this module is where a client's records become them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from worker.core import Headers, Incoming

__all__ = ["from_consumer_record", "normalize_headers"]


def from_consumer_record(raw: Any) -> Incoming:
    """An aiokafka ``ConsumerRecord`` (timestamp in ms) as a value; a null value becomes ``b""``."""
    return Incoming(
        topic=raw.topic,
        partition=raw.partition,
        offset=raw.offset,
        timestamp_ms=raw.timestamp,
        key=raw.key,
        value=raw.value or b"",
        headers=normalize_headers(raw.headers),
    )


def normalize_headers(raw: Iterable[tuple[str, bytes | None]] | None) -> Headers:
    """Kafka headers as a tuple of ``(str, bytes)``; a null header value becomes ``b""``."""
    return tuple((k, v if v is not None else b"") for k, v in (raw or ()))
