"""The worker's Faust app itself: its broker, producer, store and web settings, the turn table,
the partitions it owns, its publisher, and Faust's records as the core's ``Incoming``.

``worker.stream.app`` wires the intake, the timers, the watchdogs and the pages onto it.
"""

from __future__ import annotations

from typing import Any

import faust

from worker.core import Incoming
from worker.kafka.publisher import ProducerPublisher
from worker.kafka.records import normalize_headers
from worker.kafka.topic_specs import FRAMING_BYTES, TURNS_TABLE
from worker.settings import Settings
from worker.stream.faust_access import faust_credentials
from worker.stream.faust_internals import InternalsApp, aiokafka_producer
from worker.stream.web import OwnViewsWeb

#: Per-partition producer batch (aiokafka's default is 16 KiB, six typical outputs): a batch of
#: drafts hands over hundreds of records at once, which then share a few compressed requests.
PRODUCER_BATCH_BYTES = 512 * 1024


def message_to_incoming(msg: Any) -> Incoming:
    """A Faust message as a plain value, with the record's own bytes (never re-serialised)."""
    return Incoming(
        topic=msg.topic,
        partition=msg.partition,
        offset=msg.offset,
        timestamp_ms=int(msg.timestamp * 1000),
        key=msg.key,
        value=msg.value if msg.value is not None else b"",
        headers=normalize_headers(msg.headers),
    )


def to_incoming(event: Any) -> Incoming:
    """A Faust event as a plain value (its message's, :func:`message_to_incoming`)."""
    return message_to_incoming(event.message)


class WorkerApp(InternalsApp):
    """The Faust app with a web server that serves only the worker's own pages, and a consumer
    whose fetches wait at most ``fetch_max_wait_ms`` (``worker.stream.faust_internals``)."""

    web_class = OwnViewsWeb
    #: Conductor channels to subscribe with the app's consumer (``worker.stream.intake.delivery``).
    intake_channels: tuple[Any, ...] = ()

    async def on_start(self) -> None:
        """Faust's start, then the intake channels handed to the conductor: in the running loop
        and before the conductor subscribes (it waits for the agents and the tables)."""
        await super().on_start()
        for channel in self.intake_channels:
            self.topics.add(channel)


def new_app(settings: Settings) -> WorkerApp:
    """The Faust app with the worker's broker, producer, store and web settings."""
    inbound_max = 2 * settings.max_draft_bytes + FRAMING_BYTES
    settings.data_dir.mkdir(parents=True, exist_ok=True)  # Faust creates only the last level
    app = WorkerApp(
        settings.app_id,
        broker=f"kafka://{settings.kafka_bootstrap_servers}",
        broker_credentials=faust_credentials(settings),
        store="rocksdb://" if settings.turn_store == "rocksdb" else "memory://",
        autodiscover=False,
        processing_guarantee="at_least_once",
        topic_partitions=settings.topic_partitions,
        topic_replication_factor=settings.topic_replication_factor,
        table_standby_replicas=settings.table_standby_replicas,
        consumer_auto_offset_reset="earliest",
        consumer_max_fetch_size=inbound_max,
        producer_max_request_size=4 * settings.max_draft_bytes + FRAMING_BYTES,
        producer_acks=-1,
        producer_compression_type=(
            None if settings.producer_compression == "none" else settings.producer_compression
        ),
        producer_linger=settings.producer_linger_s,
        producer_max_batch_size=PRODUCER_BATCH_BYTES,
        broker_commit_interval=1.0,
        broker_session_timeout=settings.broker_session_timeout_s,
        consumer_metadata_max_age_ms=round(settings.broker_metadata_max_age_s * 1000),
        web_enabled=True,
        # Belt and braces: OwnViewsWeb mounts none of these anyway.
        web_tables_enabled=False,
        web_router_enabled=False,
        web_stats_enabled=False,
        web_graph_enabled=False,
        web_metrics_enabled=False,
        web_port=settings.web_port,
        web_bind=settings.web_host,
        # One directory per app id: RocksDB data records changelog offsets, and a database
        # left by another app id (another changelog topic) would stop recovery.
        datadir=str(settings.data_dir / settings.app_id),
    )
    app.fetch_max_wait_ms = round(settings.consumer_fetch_max_wait_s * 1000)
    return app


def turn_table(app: WorkerApp, settings: Settings) -> Any:
    """The turn table: raw bytes, co-partitioned with ``agent.drafts``."""
    # key_type/value_type as well as the schema: Faust derives the changelog topic's serializers
    # from the types and writes them over the schema's (json for None), and recovery then fails
    # to decode the raw changelog records and never finishes.
    return app.Table(
        TURNS_TABLE,
        default=None,
        key_type=bytes,
        value_type=bytes,
        schema=faust.Schema(
            key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw"
        ),
        partitions=settings.topic_partitions,
        options=rocksdb_options(settings) if settings.turn_store == "rocksdb" else None,
    )


def rocksdb_options(settings: Settings) -> dict[str, int]:
    """RocksDB sizes per turn-table partition, so that a pod holding many partitions (12 active
    and as many standby) stays within its memory limit: Faust's defaults (3 memtables of 64 MiB
    and a 2 GiB block cache, *per partition*) would allow several GiB (docs/operations.md)."""
    mib = 1024 * 1024
    return {
        "write_buffer_size": settings.rocksdb_write_buffer_mib * mib,
        "max_write_buffer_number": 2,
        "block_cache_size": settings.rocksdb_block_cache_mib * mib,
        "block_cache_compressed_size": settings.rocksdb_block_cache_mib * mib,
    }


class FaustPartitions:
    """:class:`worker.stream.processing.loop.Partitions` over the Faust app: the one place that says
    which
    partitions of ``agent.drafts`` this process owns (for the pages, the loop and the timer)."""

    def __init__(self, app: faust.App, drafts_topic: str) -> None:
        self._app = app
        self._topic = drafts_topic

    def owned(self) -> frozenset[int]:
        return frozenset(
            tp.partition for tp in self._app.assignor.assigned_actives() if tp.topic == self._topic
        )

    def generation(self) -> int:
        return int(self._app.consumer_generation_id)

    async def seek(self, partition: int, offset: int) -> None:
        await self._app.consumer.seek(faust.types.TP(self._topic, partition), offset)


def app_publisher(app: faust.App) -> ProducerPublisher:
    """The publisher over the app's producer (its aiokafka producer for the bulk hand-over)."""
    producer = app.producer
    return ProducerPublisher(producer, lambda: aiokafka_producer(producer))
