"""Faust's aiokafka transport with a shorter fetch wait (``GW_CONSUMER_FETCH_MAX_WAIT_S``).

faust-streaming 0.15 builds the worker's aiokafka consumer with ``fetch_max_wait_ms=1500``,
fixed. aiokafka keeps one fetch in flight per broker, and leaves out of a fetch every partition
whose records the application has not drained yet. Under load all four ``agent.drafts``
partitions often still hold records when the fetcher looks, so the fetch it sends covers only
partitions with nothing new (Faust's ``__assignor-__leader`` topic), and the broker holds it for
the whole 1.5 s; meanwhile the drafts partitions drain and wait behind that fetch. A probe of
the worker (a 15,000-draft run, then 959 drafts/s) showed exactly that: the intake stopped for
0.6-1.5 s at a time, the worker idled, and latency settled at ~1.7 s while the passthrough's
stayed at 30 ms. A short wait bounds each such pause; an idle consumer asks the broker a little
more often (one fetch per wait per broker).

Uses Faust's transport seams (``Transport.Consumer``, ``Consumer._new_consumer_thread``,
``AIOKafkaConsumerThread._create_worker_consumer``) and aiokafka's ``_fetch_max_wait_ms``, read
when the consumer starts; the pins (faust-streaming < 0.16, aiokafka < 0.15) keep them stable,
and a unit test fails if the built consumer stops carrying the wait.
"""

from __future__ import annotations

from typing import Any

from faust.transport.drivers import aiokafka as faust_aiokafka


class _ConsumerThread(faust_aiokafka.AIOKafkaConsumerThread):
    """Faust's consumer thread; its worker consumer waits at most the app's fetch wait."""

    def _create_worker_consumer(self, transport: Any) -> Any:
        consumer = super()._create_worker_consumer(transport)
        wait_ms = getattr(self.app, "fetch_max_wait_ms", None)
        if wait_ms is not None:
            consumer._fetch_max_wait_ms = wait_ms  # read by AIOKafkaConsumer.start()
        return consumer


class _Consumer(faust_aiokafka.Consumer):
    def _new_consumer_thread(self) -> _ConsumerThread:
        return _ConsumerThread(self, loop=self.loop, beacon=self.beacon)


class WorkerTransport(faust_aiokafka.Transport):
    """``kafka://`` as Faust's aiokafka transport, with :class:`_ConsumerThread`."""

    Consumer = _Consumer
