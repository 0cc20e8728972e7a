"""Every private part of Faust (and of aiokafka under it) the worker relies on, in one place.

Faust offers no public seam for seven things the worker needs, so this module reaches into its
internals, as read from faust-streaming 0.15.3 (and aiokafka 0.12); ``FAUST_VERSION_READ`` pins
that, and ``tests/unit/stream/test_faust_internals.py`` fails on any other version and on any
missing attribute, so an upgrade re-reads them here before anything else changes:

- **The drafts consumer's fetch wait** (``WorkerTransport``). faust-streaming 0.15 builds the
  worker's aiokafka consumer with ``fetch_max_wait_ms=1500``, fixed. aiokafka keeps one fetch in
  flight per broker, and leaves out of a fetch every partition whose records the application has
  not drained yet. Under load all four ``agent.drafts`` partitions often still hold records when
  the fetcher looks, so the fetch it sends covers only partitions with nothing new (Faust's
  ``__assignor-__leader`` topic), and the broker holds it for the whole 1.5 s; meanwhile the
  drafts partitions drain and wait behind that fetch. A probe of the worker (a 15,000-draft run,
  then 959 drafts/s) showed exactly that: the intake stopped for 0.6-1.5 s at a time, the worker
  idled, and latency settled at ~1.7 s while the passthrough's stayed at 30 ms. A short wait
  bounds each such pause; an idle consumer asks the broker a little more often (one fetch per
  wait per broker). Seams: ``Transport.Consumer``, ``Consumer._new_consumer_thread``,
  ``AIOKafkaConsumerThread._create_worker_consumer``, aiokafka's ``_fetch_max_wait_ms`` (read when
  the consumer starts), and ``App._new_transport``.
- **A fetch hands out only the partitions Faust has active** (``_ConsumerThread._fetch_records``,
  ``OnlyThese``): Faust hands aiokafka's ``Fetcher.fetched_records`` its live set of active
  partitions, which aiokafka reads as "every partition" when it is empty, as it is while Faust has
  every partition paused after an assignment. A fetch started before the rebalance then handed
  out the changelog records recovery had just sought to, while Faust's flow was stopped: Faust
  dropped them, aiokafka's position had moved past them, and recovery waited forever ("No event
  received for active tp ... since recovery start", the stall the recovery watchdog exits on).
  Seams: ``AIOKafkaConsumerThread._fetch_records`` and aiokafka's ``fetched_records``.
- **Seeks on the consumer's thread** (``_Consumer._seek``): Faust seeks from the app's thread,
  racing aiokafka's fetcher in the consumer thread (a ``KeyError`` that stops the worker).
- **The app's web server** (``InternalsApp.web_class``, through ``App._new_web``): the worker's
  own pages only (``worker.stream.web``).
- **A passive stream** (``enable_passive``): the overlapped take (``worker.stream.intake.take``)
  feeds itself from the stream's channel as ``take_events`` does (``Stream._enable_passive``).
- **The aiokafka producer under Faust's** (``Producer._ensure_producer``): the bulk hand-over
  (``worker.kafka.publisher``, ``GW_PRODUCE_BATCHED``) appends to aiokafka's own batches.
- **A topic whose conductor delivery builds no event** (``UndecodedTopic``): ``Topic.__init__``
  compiles ``decode`` (``_compile_decode``) into an instance attribute that builds a Faust
  ``Event`` per record; the drafts channel (``worker.stream.intake.delivery``) keeps its own
  ``decode``. The conductor (``ConductorHandler.__call__`` in faust-streaming's Cython build, and
  ``ConductorCompiler.build``) delivers through ``chan.decode(message, propagate=True)``,
  ``chan.queue.full()``, ``chan.queue.put_nowait_enhanced(...)`` and, when full, ``chan.put``.
- **Where recovery's changelog partitions stand** (``recovery_state``): when table recovery
  stalls (``worker.stream.watchdogs.recovery``), the consumer's flow, the partitions it fetches,
  pauses and has read, and aiokafka's position, highwater and buffered records for each changelog
  partition recovery waits on (``Consumer._active_partitions``, ``_paused_partitions``,
  ``_read_offset``, ``_unacked_messages``, ``ThreadDelegateConsumer._thread``,
  ``AIOKafkaConsumerThread._consumer``, aiokafka's ``_subscription``, ``_fetcher`` and
  ``_records``), so that the one log line before the exit says where delivery stopped. Its
  partitions are named by ``partition_name``, as the watchdog's ``waiting`` lines are.
- **The RocksDB store by partition** (``RocksPartitions``): Faust's store picks a partition's
  database from the *current event*, which in a batch is another record's; the turn table goes
  through the store's own helpers instead (``_get_bucket_for_key``, ``_key_index``,
  ``_db_for_partition``, ``_dbs_for_key``, ``_iteritems``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import faust
from aiokafka import TopicPartition
from faust.transport.drivers import aiokafka as faust_aiokafka

#: The faust-streaming release these internals were read from (the test pins it).
FAUST_VERSION_READ = "0.15.3"


class OnlyThese:
    """The partitions a fetch may hand out: Faust's live set of active partitions, read at each
    record batch, where an empty set means none (aiokafka's ``fetched_records`` reads an empty
    ``partitions`` as *every* partition: ``if partitions and tp not in partitions``)."""

    __slots__ = ("_tps",)

    def __init__(self, tps: Any) -> None:
        self._tps = tps

    def __bool__(self) -> bool:
        return True

    def __contains__(self, tp: object) -> bool:
        return tp in self._tps

    def __iter__(self) -> Iterator[Any]:
        return iter(set(self._tps))

    def __len__(self) -> int:
        return len(self._tps)


class _ConsumerThread(faust_aiokafka.AIOKafkaConsumerThread):
    """Faust's consumer thread; its worker consumer waits at most the app's fetch wait, and a
    fetch never hands out the records of a partition Faust has paused (``_fetch_records``)."""

    def _create_worker_consumer(self, transport: Any) -> Any:
        consumer = super()._create_worker_consumer(transport)
        wait_ms = getattr(self.app, "fetch_max_wait_ms", None)
        if wait_ms is not None:
            consumer._fetch_max_wait_ms = wait_ms  # read by AIOKafkaConsumer.start()
        return consumer

    async def _fetch_records(
        self,
        consumer: Any,
        active_partitions: Any,
        timeout: float | None = None,  # noqa: ASYNC109 - Faust's signature
        max_records: int | None = None,
    ) -> Any:
        """Faust's fetch, limited to the partitions active when each batch is handed out.

        Faust passes its live set of active partitions, and a fetch started while the flow was
        active stays in flight (up to the fetch timeout) through a rebalance. After an
        assignment Faust pauses every partition (the set is empty) until recovery resumes the
        changelog partitions, and seeks those to where recovery starts in between; aiokafka took
        the empty set for "all", so the in-flight fetch handed out the changelog records just
        fetched from that position, and moved its position past them. Faust's ``getmany``, the
        flow still stopped, dropped them (its seek back to the committed offsets skips
        changelogs, which have none): recovery then waited forever for records already read.
        """
        # None (a client-only app) is aiokafka's "every partition", and meant so.
        only: Any = None if active_partitions is None else OnlyThese(active_partitions)
        return await super()._fetch_records(
            consumer, only, timeout=timeout, max_records=max_records
        )


class _Consumer(faust_aiokafka.Consumer):
    def _new_consumer_thread(self) -> _ConsumerThread:
        return _ConsumerThread(self, loop=self.loop, beacon=self.beacon)

    async def _seek(self, partition: Any, offset: int) -> None:
        """Seek on the consumer's own thread, as Faust's other consumer calls do.

        Faust's ``ThreadDelegateConsumer._seek`` calls aiokafka's ``seek`` from the app's thread
        while the consumer thread may be inside ``Fetcher.fetched_records``; both delete the
        partition from the fetcher's dict of fetched records, and the loser raises ``KeyError``,
        which crashes the fetcher and ends the worker (seen in the SIGKILL e2e test, where the
        offset guard seeks a partition back right after the restart).
        """
        thread = self._thread

        async def seek() -> None:
            thread.seek(partition, offset)

        await thread.call_thread(seek)


class WorkerTransport(faust_aiokafka.Transport):
    """``kafka://`` as Faust's aiokafka transport, with :class:`_ConsumerThread`."""

    Consumer = _Consumer


class InternalsApp(faust.App):
    """A Faust app whose consumer uses :class:`WorkerTransport` and, when ``web_class`` is set,
    whose web server is that class."""

    #: Read by the transport's consumer thread when it builds the aiokafka consumer.
    fetch_max_wait_ms: int = 1500
    #: The web driver class (``None``: Faust's own).
    web_class: type[Any] | None = None

    def _new_web(self) -> Any:
        if self.web_class is None:
            return super()._new_web()
        return self.web_class(self)

    def _new_transport(self) -> Any:
        return WorkerTransport(self.conf.broker_consumer, self)


def enable_passive(stream: Any) -> None:
    """Make ``stream`` deliver its channel's events to its processors without being iterated by
    an agent body (what ``take_events`` does inside Faust)."""
    stream._enable_passive(aiter(stream.channel))


def aiokafka_producer(producer: Any) -> Any:
    """The aiokafka producer under a Faust producer, started once (Faust's own lazy start)."""
    return producer._ensure_producer()


class UndecodedTopic(faust.Topic):
    """A ``faust.Topic`` whose ``decode`` is the class's own method, not Faust's compiled one."""

    def _compile_decode(self) -> None:
        """Nothing: Faust's would set an instance ``decode`` that builds an ``Event``."""


class RocksPartitions:
    """A Faust RocksDB store's databases, addressed by partition rather than by current event."""

    __slots__ = ("_store",)

    def __init__(self, store: Any) -> None:
        self._store = store

    def get(self, key: bytes) -> bytes | None:
        """The value of ``key`` in whichever local database holds it (bloom filters first)."""
        found = self._store._get_bucket_for_key(key)
        return None if found is None else found.value

    def note(self, key: bytes, partition: int) -> None:
        """Tell the store which partition's database holds ``key``."""
        self._store._key_index[key] = partition

    def forget(self, key: bytes) -> None:
        """Drop ``key`` from the store's index of partitions."""
        self._store._key_index.pop(key, None)

    def db(self, partition: int) -> Any:
        """The database of ``partition`` (opened on first use)."""
        return self._store._db_for_partition(partition)

    def dbs_for(self, key: bytes) -> Iterator[Any]:
        """Every local database that may hold ``key``."""
        return iter(list(self._store._dbs_for_key(key)))

    def items(self) -> list[tuple[bytes, bytes]]:
        """Every key and value of every local database."""
        return list(self._store._iteritems())


def partition_name(tp: Any) -> str:
    """A changelog partition as the stall report names it, ``topic[partition]`` (anything
    without a partition: its ``str``). The one place of that format: the keys of
    :func:`recovery_state` and the recovery watchdog's ``waiting`` lines
    (``worker.stream.watchdogs.recovery``) must name a partition alike, so that on-call can match
    the two fields of the one log line."""
    return f"{tp.topic}[{tp.partition}]" if hasattr(tp, "partition") else str(tp)


def recovery_state(app: Any, tps: Iterable[Any]) -> dict[str, Any]:
    """The consumer's delivery, and each of ``tps`` (changelog partitions) as Faust's consumer and
    aiokafka's fetcher hold it: read-only, for the stall report (never raises past a field)."""
    consumer = app.consumer
    state: dict[str, Any] = {
        "flow_active": bool(consumer.flow_active),
        "flow_control_active": bool(app.flow_control.is_active()),
        "rebalancing": bool(app.rebalancing),
        "generation": app.consumer_generation_id,
        "changelog_queued": app.tables.changelog_queue.qsize(),
        "unacked": len(consumer._unacked_messages),
    }
    active = consumer._active_partitions or set()
    paused = consumer._paused_partitions
    read = consumer._read_offset
    records: Any = {}
    try:
        aiokafka_consumer = consumer._thread._consumer
        assignment = aiokafka_consumer._subscription.subscription.assignment
        if aiokafka_consumer._fetcher is not None:  # built when the consumer starts
            records = aiokafka_consumer._fetcher._records
    except AttributeError:  # not started, or not subscribed yet
        assignment = None
    partitions: dict[str, dict[str, Any]] = {}
    for tp in tps:
        entry: dict[str, Any] = {
            "fetching": tp in active,
            "paused": tp in paused,
            "read_offset": read.get(tp),
        }
        aiotp = TopicPartition(tp.topic, tp.partition)
        if assignment is not None and aiotp in assignment.tps:
            tp_state = assignment.state_value(aiotp)
            entry["position"] = tp_state.position if tp_state.has_valid_position else None
            entry["highwater"] = tp_state.highwater
            entry["buffered"] = aiotp in records
        else:
            entry["assigned"] = False
        partitions[partition_name(tp)] = entry
    state["partitions"] = partitions
    return state
