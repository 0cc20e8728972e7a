"""Faust's internals the worker uses are the ones they were read from, and still do their job.

The version pin: ``worker/stream/faust_internals.py`` reaches into private parts of
faust-streaming (and aiokafka) read from one release; on any other release this fails first, so an
upgrade re-reads them. The fetch wait: Faust fixes ``fetch_max_wait_ms=1500``; a fetch covering
only idle partitions then holds the drafts partitions for 1.5 s under load. No broker here: the
aiokafka consumer is built by the app's own consumer thread, never started, and read back.
"""

from __future__ import annotations

import ast
import asyncio
import importlib.metadata
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import faust
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.consumer.fetcher import Fetcher, FetchResult
from aiokafka.consumer.subscription_state import SubscriptionState

from worker.settings import Settings
from worker.stream.faust_app import new_app
from worker.stream.faust_internals import (
    FAUST_VERSION_READ,
    UndecodedTopic,
    WorkerTransport,
    partition_name,
    recovery_state,
)


async def fetch_wait_ms(settings: Settings) -> int:
    return (await built_consumer_ms(settings))[0]


async def built_consumer_ms(settings: Settings) -> tuple[int, int]:
    """The fetch wait and metadata age (ms) of the consumer the app builds."""
    app = new_app(settings)
    transport = app.transport
    assert isinstance(transport, WorkerTransport)
    built = app.consumer._thread._create_worker_consumer(transport)
    try:
        assert isinstance(built, AIOKafkaConsumer)
        return int(built._fetch_max_wait_ms), int(built._client._metadata_max_age_ms)
    finally:
        await built.stop()  # never started: closes its client
        # The loops made with the consumer (its thread's, and the app's if not this one).
        for loop in (app.consumer._thread.thread_loop, app.loop):
            if loop is not asyncio.get_running_loop() and not loop.is_closed():
                loop.close()


async def test_the_drafts_consumer_waits_at_most_the_configured_fetch_wait(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, consumer_fetch_max_wait_s=0.05, app_id="fetch-wait")
    assert await fetch_wait_ms(settings) == 50


async def test_the_default_is_a_tenth_of_a_second_not_fausts_one_and_a_half(tmp_path: Path) -> None:
    assert await fetch_wait_ms(Settings(data_dir=tmp_path, app_id="fetch-default")) == 100


async def test_the_consumer_rereads_metadata_at_the_configured_age_not_five_minutes(
    tmp_path: Path,
) -> None:
    """A worker that joined before its topics were visible (a broker just started: "Ignoring
    missing topic") is assigned nothing until the consumer next reads the metadata."""
    default = await built_consumer_ms(Settings(data_dir=tmp_path, app_id="metadata-default"))
    assert default[1] == 30_000
    settings = Settings(data_dir=tmp_path, app_id="metadata-age", broker_metadata_max_age_s=2.5)
    assert (await built_consumer_ms(settings))[1] == 2_500


def test_aiokafka_still_hands_the_wait_to_its_fetcher() -> None:
    """The attribute set above is what ``AIOKafkaConsumer.start`` gives the fetcher."""
    import inspect  # noqa: PLC0415

    assert "fetch_max_wait_ms=self._fetch_max_wait_ms" in inspect.getsource(AIOKafkaConsumer.start)


def test_fausts_stalled_stream_check_reads_the_inbound_time_the_channel_intake_sets() -> None:
    """``worker.stream.intake.delivery.DraftsChannel`` sets ``monitor.stream_inbound_time`` as a
    stream's sensor would; the consumer's check for stalled streams is what reads it."""
    import inspect  # noqa: PLC0415

    from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread  # noqa: PLC0415

    assert "monitor.stream_inbound_time.get(tp)" in inspect.getsource(
        AIOKafkaConsumerThread.verify_event_path
    )


def test_faust_is_the_release_its_internals_were_read_from() -> None:
    assert importlib.metadata.version("faust-streaming") == FAUST_VERSION_READ


def test_every_private_attribute_the_worker_reaches_still_exists() -> None:
    """The names ``faust_internals`` calls or overrides, on the classes that define them."""
    import faust  # noqa: PLC0415
    from faust.stores.rocksdb import Store  # noqa: PLC0415
    from faust.streams import Stream  # noqa: PLC0415
    from faust.transport.drivers import aiokafka as driver  # noqa: PLC0415

    expected = {
        faust.App: ("_new_web", "_new_transport"),
        driver.Consumer: ("_new_consumer_thread", "_seek"),
        driver.AIOKafkaConsumerThread: (
            "_create_worker_consumer",
            "seek",
            "call_thread",
            "_fetch_records",
        ),
        Stream: ("_enable_passive",),
        driver.Producer: ("_ensure_producer",),
        faust.Topic: ("_compile_decode",),
        Store: ("_get_bucket_for_key", "_db_for_partition", "_dbs_for_key", "_iteritems"),
    }
    missing = [
        f"{cls.__name__}.{name}"
        for cls, names in expected.items()
        for name in names
        if not hasattr(cls, name)
    ]
    assert missing == []


async def test_a_seek_runs_on_the_consumer_thread_not_the_apps(tmp_path: Path) -> None:
    """aiokafka's fetcher state belongs to the consumer thread: a seek made from the app's thread
    raced ``Fetcher.fetched_records`` and crashed the worker with a ``KeyError``."""
    app = new_app(Settings(data_dir=tmp_path, app_id="seek-thread"))
    consumer = app.consumer
    real = consumer._thread
    seeks: list[tuple[object, int]] = []

    class Thread:
        on_thread = False

        def seek(self, tp: object, offset: int) -> None:
            assert self.on_thread, "seek called from the app's thread"
            seeks.append((tp, offset))

        async def call_thread(self, fun: Any, *args: object) -> None:
            self.on_thread = True
            try:
                await fun(*args)
            finally:
                self.on_thread = False

    try:
        consumer._thread = Thread()
        tp = faust.types.TP("drafts", 3)
        await consumer.seek(tp, 42)
        assert seeks == [(tp, 42)]
        assert consumer._read_offset[tp] == 42
    finally:
        consumer._thread = real
        for loop in (real.thread_loop, app.loop):
            if loop is not asyncio.get_running_loop() and not loop.is_closed():
                loop.close()


class Records:
    """aiokafka's records of one fetch response, as its ``FetchResult`` iterates them."""

    def __init__(self, first: int, last: int) -> None:
        self.next_fetch_offset = first
        self._offsets = range(first, last + 1)

    def __iter__(self) -> Iterator[SimpleNamespace]:
        for offset in self._offsets:
            self.next_fetch_offset = offset + 1
            yield SimpleNamespace(offset=offset)


async def handed_out(active: set[Any] | None, data_dir: Path) -> tuple[dict[Any, list[int]], int]:
    """What one fetch of the worker's consumer thread hands out, through aiokafka's own
    ``fetched_records``, of a changelog partition whose records 0-9 were fetched after a seek
    to 0 while Faust's active partitions are ``active``; and the partition's position after."""
    app = new_app(Settings(data_dir=data_dir, app_id="fetch-paused"))
    thread = app.consumer._thread
    tp = TopicPartition("turns-changelog", 2)
    subscriptions = SubscriptionState()
    subscriptions.assign_from_user({tp})
    subscriptions.seek(tp, 0)
    assignment = subscriptions.subscription.assignment
    fetcher = SimpleNamespace(
        _subscriptions=subscriptions,
        _records={
            tp: FetchResult(tp, assignment=assignment, partition_records=Records(0, 9), backoff=0)
        },
        _closed=False,
        _wait_consume_future=None,
        _notify=lambda future: None,
    )
    fetcher.fetched_records = partial(Fetcher.fetched_records, fetcher)
    consumer = SimpleNamespace(_fetcher=fetcher, _closed=False)
    try:
        got = await thread._fetch_records(consumer, active, timeout=0, max_records=None)
        return (
            {key: [r.offset for r in records] for key, records in got.items()},
            assignment.state_value(tp).position,
        )
    finally:
        for loop in (thread.thread_loop, app.loop):
            if loop is not asyncio.get_running_loop() and not loop.is_closed():
                loop.close()


async def test_a_fetch_hands_out_nothing_while_faust_has_every_partition_paused(
    tmp_path: Path,
) -> None:
    """After an assignment Faust pauses every partition (its active set is empty) until recovery
    resumes the changelogs it has sought; a fetch still in flight from before the rebalance used
    to hand out the changelog records just fetched (aiokafka reads an empty set as "all"), Faust
    dropped them with its flow stopped, and recovery waited forever for records already read."""
    assert await handed_out(set(), tmp_path) == (
        {},
        0,
    )  # nothing taken: the records wait for the resume


async def test_a_client_only_fetch_still_hands_out_every_partition(tmp_path: Path) -> None:
    """Faust passes ``None`` (not a set) for a client-only app: every partition, as before."""
    records, position = await handed_out(None, tmp_path)
    assert (list(records.values()), position) == ([list(range(10))], 10)


async def test_a_fetch_hands_out_the_partitions_faust_has_active(tmp_path: Path) -> None:
    tp = faust.types.TP("turns-changelog", 2)
    records, position = await handed_out({tp}, tmp_path)
    assert (list(records.values()), position) == ([list(range(10))], 10)


def test_a_changelog_partition_is_named_topic_and_partition_in_brackets() -> None:
    """The one format of a partition's name in the stall line: the keys of ``recovery_state``
    and the watchdog's ``waiting`` lines (``test_recovery_watchdog``) both go through it."""
    assert partition_name(faust.types.TP("turns-changelog", 2)) == "turns-changelog[2]"
    assert partition_name(TopicPartition("turns-changelog", 0)) == "turns-changelog[0]"


async def test_the_stall_report_reads_a_real_consumer_and_its_fetcher(tmp_path: Path) -> None:
    """``recovery_state`` reads the release's own consumer (not started: no aiokafka consumer
    yet, so the partition is reported unassigned) and, once one is there, aiokafka's fetcher."""
    app = new_app(Settings(data_dir=tmp_path, app_id="stall-report"))
    consumer = app.consumer
    tp = faust.types.TP("turns-changelog", 2)
    try:
        consumer.pause_partitions({tp})
        state = recovery_state(app, [tp])
        assert state["partitions"] == {
            "turns-changelog[2]": {
                "fetching": False,
                "paused": True,
                "read_offset": None,
                "assigned": False,
            }
        }
        assert state["changelog_queued"] == 0
        assert (state["flow_active"], state["unacked"]) == (True, 0)

        built = consumer._thread._create_worker_consumer(app.transport)
        try:
            aiotp = TopicPartition(tp.topic, tp.partition)
            built._subscription.assign_from_user({aiotp})
            built._subscription.seek(aiotp, 5)
            consumer._thread._consumer = built
            (entry,) = recovery_state(app, [tp])["partitions"].values()
            assert (entry["position"], entry["highwater"], entry["buffered"]) == (5, None, False)
        finally:
            consumer._thread._consumer = None
            await built.stop()
    finally:
        for loop in (consumer._thread.thread_loop, app.loop):
            if loop is not asyncio.get_running_loop() and not loop.is_closed():
                loop.close()


#: Private names of other libraries the worker reaches, outside ``faust_internals``, and why:
#: none of them is Faust's (an upgrade of Faust cannot break them unseen).
NOT_FAUSTS = {
    ("client/session.py", "consumer._client"): (
        "aiokafka: the connections (its client's `_conns`) a stop past its time closes, no abort()"
    ),
    ("kafka/bounded_read.py", "consumer._client"): (
        "aiokafka: the consumer's metadata, no public seam"
    ),
    ("runtime/metrics_server.py", "site._server"): "aiohttp: the bound socket of a port-0 site",
    ("stores/ledger.py", "asyncpg.exceptions._base"): "asyncpg: its DataError base class",
    ("stream/watchdogs/recovery.py", "os._exit"): "the standard library's immediate exit",
    ("runtime/shutdown.py", "os._exit"): "the standard library's immediate exit",
}
#: The NamedTuple API: public, underscored so it cannot clash with field names.
_NAMEDTUPLE = {"_replace", "_asdict", "_fields", "_make"}


def _private_reaches(path: Path) -> set[str]:
    """Every ``x._name`` in ``path`` where ``x`` is not ``self``, ``cls`` or ``super()``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__") or node.attr in _NAMEDTUPLE:
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in {"self", "cls"}:
            continue
        if isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super":
            continue
        found.add(ast.unparse(node))
    return found


def test_only_faust_internals_reaches_into_a_private_attribute() -> None:
    """Faust's private parts are read in one module, pinned to the release above; anything else
    that reaches into another object's private attribute is a listed, non-Faust exception."""
    worker = Path(__file__).resolve().parents[3] / "worker"
    reaches = {
        (str(path.relative_to(worker)), reach)
        for path in sorted(worker.rglob("*.py"))
        if path.name != "faust_internals.py"
        for reach in _private_reaches(path)
    }
    assert reaches == set(NOT_FAUSTS)
    inside = _private_reaches(worker / "stream" / "faust_internals.py")
    assert "producer._ensure_producer" in inside  # the scan sees what it is meant to see


async def test_an_undecoded_topic_keeps_its_own_decode_under_both_conductors(
    tmp_path: Path,
) -> None:
    """Faust compiles ``decode`` into an instance attribute that builds an ``Event``; the drafts
    channel's ``decode`` must survive that, and both of Faust's conductor handlers (the Cython one
    and the Python one) must deliver through ``decode`` and the channel's queue."""
    from faust.transport._cython.conductor import ConductorHandler  # noqa: PLC0415
    from faust.transport.conductor import ConductorCompiler  # noqa: PLC0415
    from faust.types import TP, ConsumerMessage  # noqa: PLC0415

    app = new_app(Settings(data_dir=tmp_path, app_id="undecoded"))
    assert "decode" in vars(faust.Topic(app, topics=["t"]))  # the compiled one, per instance
    got: list[object] = []

    class Queue:
        def full(self) -> bool:
            return False

        def put_nowait_enhanced(self, value: object, **_: object) -> None:
            got.append(value)

    class Channel(UndecodedTopic):
        @property
        def queue(self) -> Any:  # the conductor's view of the channel
            return Queue()

        async def decode(self, message: Any, *, propagate: bool = False) -> Any:
            return ("decoded", message.offset)

    channel = Channel(app, topics=["t"], is_iterator=True)
    assert "decode" not in vars(channel)
    try:
        tp = TP("t", 0)
        app.flow_control.resume()
        for n, handler in enumerate(
            (
                ConductorHandler(app.topics, tp, {channel}),
                ConductorCompiler().build(app.topics, tp, {channel}),
            )
        ):
            await handler(ConsumerMessage("t", 0, n, 0.0, 0, [], b"k", b"v", None))
        assert got == [("decoded", 0), ("decoded", 1)]
    finally:
        for loop in (app.consumer._thread.thread_loop, app.loop):
            if loop is not asyncio.get_running_loop() and not loop.is_closed():
                loop.close()
