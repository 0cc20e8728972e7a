"""MongoDB adapter: DOC look-ups with one ``find`` per (tenant, call), over ``AsyncMongoClient``.

Works against real MongoDB and FerretDB alike: the query is a plain equality on ``tenant_id``
plus ``_id: {$in: [...]}`` with a projection, nothing a wire-compatible server could get wrong.
Driver errors become ``worker.faults`` in ``_store_faults`` and nowhere else.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Collection, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from pymongo import AsyncMongoClient
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import ConnectionFailure, ExecutionTimeout, OperationFailure, PyMongoError
from pymongo.monitoring import _EventListener

from worker.core.evidence import CitationRef, EvidenceKind, EvidenceRecord
from worker.faults import StoreUnavailable
from worker.settings import Settings
from worker.stores.rows import parse_document, queryable_ids

#: Only what the core reads; ``tenant_id`` is already bound by the filter.
PROJECTION = {"_id": 1, "acl": 1, "revoked_at": 1, "title": 1, "text": 1}

#: Server error codes that mean "shutting down / not serving": HostUnreachable, HostNotFound,
#: ExceededTimeLimit, InterruptedAtShutdown, InterruptedDueToReplStateChange, ShutdownInProgress,
#: NotWritablePrimary / NotPrimary*, SocketException.
_UNAVAILABLE_CODES = frozenset({6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436})


def _is_unavailable(exc: BaseException) -> bool:
    if isinstance(exc, ConnectionFailure | ExecutionTimeout | OSError | TimeoutError):
        # ConnectionFailure covers AutoReconnect, NetworkTimeout, ServerSelectionTimeoutError,
        # NotPrimaryError and WaitQueueTimeoutError.
        return True
    if isinstance(exc, OperationFailure) and exc.code in _UNAVAILABLE_CODES:
        return True
    return isinstance(exc, PyMongoError) and exc.timeout


@contextmanager
def _store_faults(what: str) -> Iterator[None]:
    """Translate driver errors into ``StoreUnavailable``; let everything else through."""
    try:
        yield
    except StoreUnavailable:
        raise
    except Exception as exc:
        if not _is_unavailable(exc):
            raise
        raise StoreUnavailable(f"mongodb: {what}: {type(exc).__name__}: {exc}") from exc


class MongoEvidence:
    """The MongoDB half of the evidence port.

    Build it with ``async with MongoEvidence.connect(settings) as mongo``. The client connects in
    the background and reconnects by itself; short timeouts turn an outage into a fast
    ``StoreUnavailable`` instead of a 30-second hang.
    """

    def __init__(self, client: AsyncMongoClient[dict[str, Any]], settings: Settings) -> None:
        self._client = client
        self._timeout = settings.store_timeout_s
        self._db: AsyncDatabase[dict[str, Any]] = client[settings.mongo_database]
        self._collection_name = settings.documents_collection
        self._documents: AsyncCollection[dict[str, Any]] = self._db[settings.documents_collection]

    @classmethod
    @asynccontextmanager
    async def connect(
        cls, settings: Settings, *, event_listeners: Sequence[_EventListener] = ()
    ) -> AsyncIterator[MongoEvidence]:
        """Create the client (no round trip yet) and close it on the way out."""
        timeout_ms = max(1, int(settings.store_timeout_s * 1000))
        client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
            settings.mongo_url.get_secret_value(),
            tz_aware=True,
            appname=settings.app_id,
            serverSelectionTimeoutMS=timeout_ms,
            connectTimeoutMS=timeout_ms,
            socketTimeoutMS=timeout_ms,
            event_listeners=list(event_listeners),
        )
        try:
            yield cls(client, settings)
        finally:
            await client.close()

    @property
    def database(self) -> AsyncDatabase[dict[str, Any]]:
        """The configured database, for the index migration and the demo seeder."""
        return self._db

    async def fetch(
        self, tenant_id: str, refs: Collection[CitationRef]
    ) -> Mapping[CitationRef, EvidenceRecord]:
        """Records of ``tenant_id`` among the DOC ``refs``; other kinds are ignored."""
        ids = queryable_ids(refs, EvidenceKind.DOC)
        if not ids:
            return {}
        with _store_faults(f"find in {self._collection_name}"):
            docs = await asyncio.wait_for(self._find(tenant_id, ids), self._timeout)
        records = [parse_document(self._collection_name, doc) for doc in docs]
        return {record.ref: record for record in records}

    async def _find(self, tenant_id: str, ids: list[int]) -> list[dict[str, Any]]:
        # batch_size: the whole answer in the first reply, so one batch is one round trip.
        cursor = self._documents.find(
            {"tenant_id": tenant_id, "_id": {"$in": ids}}, PROJECTION, batch_size=len(ids)
        )
        try:
            return await cursor.to_list(None)
        finally:
            await cursor.close()
