"""One shape per seam (docs/decisions.md, code layout): the publisher takes one ``OutRecord``,
the evidence port has one method, and every implementation in the product keeps to that shape."""

from __future__ import annotations

import inspect

from worker.core.evidence_store import EvidenceStore, InMemoryEvidenceStore
from worker.kafka.publisher import ProducerPublisher
from worker.stores.evidence import CompositeEvidence
from worker.stores.mongo import MongoEvidence
from worker.stores.observed import ObservedStore
from worker.stores.postgres import PostgresEvidence
from worker.stream.memory import MemoryBulkPublisher, MemoryPublisher
from worker.stream.seams import BulkPublisher, Publisher


def _public(cls: type) -> set[str]:
    return {name for name in vars(cls) if not name.startswith("_")}


def test_the_publisher_takes_one_out_record() -> None:
    assert _public(Publisher) == {"send"}
    assert _public(BulkPublisher) == {"send_many"}
    for cls in (Publisher, MemoryPublisher, ProducerPublisher):
        assert list(inspect.signature(cls.send).parameters) == ["self", "record"], cls
    for cls in (BulkPublisher, MemoryBulkPublisher, ProducerPublisher):
        assert list(inspect.signature(cls.send_many).parameters) == ["self", "records"], cls


def test_the_evidence_port_has_one_method() -> None:
    assert _public(EvidenceStore) == {"fetch_batch"}
    stores = (
        InMemoryEvidenceStore,
        CompositeEvidence,
        ObservedStore,
        PostgresEvidence,
        MongoEvidence,
    )
    for cls in stores:
        assert "fetch_batch" in vars(cls), cls
        assert not hasattr(cls, "fetch"), cls
