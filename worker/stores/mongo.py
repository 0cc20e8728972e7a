"""MongoDB adapter: DOC look-ups with one ``find`` per batch of drafts, over ``AsyncMongoClient``.

One tenant is a plain equality on ``tenant_id`` plus ``_id: {$in: [...]}``; several are an ``$or``
of exactly those clauses, one per tenant (contract §8), so every id is matched with its own tenant,
under an ``_id: {$in: <all ids>}`` that only narrows it (FerretDB evaluates it first).
Works against real MongoDB and FerretDB 1.24 alike (checked by the integration tests).
Driver errors become ``worker.faults`` in ``_store_faults`` and nowhere else.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from pymongo import AsyncMongoClient
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import ConnectionFailure, ExecutionTimeout, OperationFailure, PyMongoError
from pymongo.monitoring import _EventListener

from worker.core import CitationRef, EvidenceKind, EvidenceRecord, Found, Wanted
from worker.faults import StoreUnavailable
from worker.settings import Settings
from worker.stores.deadline import within
from worker.stores.rows import parse_document, queryable_ids

#: Only what the core reads; ``tenant_id`` is already bound by the filter.
PROJECTION = {"_id": 1, "acl": 1, "revoked_at": 1, "title": 1, "text": 1}
#: Several tenants in one ``find``: each document also says whose it is.
PROJECTION_WITH_TENANT = PROJECTION | {"tenant_id": 1}

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

    async def fetch_batch(self, wanted: Wanted) -> Found:
        """Records of each tenant among its DOC refs (other kinds are ignored): one ``find`` in
        all."""
        found: dict[str, dict[CitationRef, EvidenceRecord]] = {t: {} for t in wanted}
        asked = {
            t: ids for t, refs in wanted.items() if (ids := queryable_ids(refs, EvidenceKind.DOC))
        }
        if not asked:
            return dict(found)
        if len(asked) == 1:
            ((tenant, ids),) = asked.items()
            query: dict[str, Any] = {"tenant_id": tenant, "_id": {"$in": ids}}
            projection = PROJECTION
        else:
            clauses = [{"tenant_id": t, "_id": {"$in": ids}} for t, ids in sorted(asked.items())]
            # The outer ``_id`` conjunct only narrows (every document must still match its
            # tenant's clause); FerretDB 1.24 checks it first, 7x faster than the bare $or.
            union = sorted({i for ids in asked.values() for i in ids})
            query = {"_id": {"$in": union}, "$or": clauses}
            projection = PROJECTION_WITH_TENANT
        size = sum(map(len, asked.values()))
        allowed = {t: set(ids) for t, ids in asked.items()}
        with _store_faults(f"find in {self._collection_name}"):
            docs = await within(
                self._timeout,
                self._find(query, projection, size),
                what=f"find in {self._collection_name}",
            )
        for doc in docs:
            owner = doc.pop("tenant_id") if len(asked) > 1 else next(iter(asked))
            record = parse_document(self._collection_name, doc)
            if record.ref.id not in allowed.get(owner, ()):
                # Impossible with a server that honours the filter; never let it answer for another.
                continue
            found[owner][record.ref] = record
        return dict(found)

    async def _find(
        self, query: dict[str, Any], projection: dict[str, int], size: int
    ) -> list[dict[str, Any]]:
        # The whole answer in the first reply, so one batch is one round trip: ``limit`` too,
        # since a server that returned exactly ``batch_size`` documents cannot know the cursor
        # is exhausted and a getMore round trip follows (every id found: the common case).
        # Exact: each asked (tenant, _id) pair matches at most one document, ``size`` in all.
        cursor = self._documents.find(query, projection, batch_size=size, limit=size)
        try:
            return await cursor.to_list(None)
        finally:
            await cursor.close()
