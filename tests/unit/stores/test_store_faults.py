"""Driver errors become typed faults in one place per adapter; everything else passes through."""

from __future__ import annotations

import asyncpg
import pytest
from pymongo.errors import (
    AutoReconnect,
    ExecutionTimeout,
    NetworkTimeout,
    OperationFailure,
    ServerSelectionTimeoutError,
)

from worker.faults import StoreUnavailable
from worker.stores import mongo, postgres


@pytest.mark.parametrize(
    "exc",
    [
        ConnectionRefusedError(111, "refused"),
        TimeoutError(),
        asyncpg.exceptions.ConnectionDoesNotExistError("closed in the middle"),
        asyncpg.exceptions.CannotConnectNowError("starting up"),
        asyncpg.exceptions.AdminShutdownError("terminating"),
        asyncpg.exceptions.TooManyConnectionsError("too many"),
        asyncpg.exceptions.UndefinedTableError('relation "observations" does not exist'),
        asyncpg.exceptions.InterfaceError("cannot perform operation: connection is closed"),
        postgres._ConnectionLost("InternalClientError: another operation is in progress"),
    ],
)
def test_postgres_outages_are_store_unavailable(exc: BaseException) -> None:
    with (
        pytest.raises(StoreUnavailable, match=r"^postgres: select: ") as caught,
        postgres._store_faults("select"),
    ):
        raise exc
    assert caught.value.__cause__ is exc
    assert caught.value.retriable


@pytest.mark.parametrize(
    "exc",
    [
        asyncpg.exceptions.InterfaceError("the server expects 2 arguments, 1 was passed"),
        asyncpg.exceptions.DataError("invalid input"),
        ValueError("a bug"),
    ],
)
def test_other_postgres_errors_pass_through(exc: BaseException) -> None:
    with pytest.raises(type(exc)), postgres._store_faults("select"):
        raise exc


@pytest.mark.parametrize(
    "exc",
    [
        AutoReconnect("connection closed"),
        NetworkTimeout("timed out"),
        ServerSelectionTimeoutError("no servers"),
        ExecutionTimeout("operation exceeded time limit", code=50),
        OperationFailure("interrupted at shutdown", code=11600),
        ConnectionResetError(),
        TimeoutError(),
    ],
)
def test_mongo_outages_are_store_unavailable(exc: BaseException) -> None:
    with (
        pytest.raises(StoreUnavailable, match=r"^mongodb: find: ") as caught,
        mongo._store_faults("find"),
    ):
        raise exc
    assert caught.value.__cause__ is exc


@pytest.mark.parametrize(
    "exc", [OperationFailure("unknown operator $foo", code=2), KeyError("x"), ValueError("bug")]
)
def test_other_mongo_errors_pass_through(exc: BaseException) -> None:
    with pytest.raises(type(exc)), mongo._store_faults("find"):
        raise exc
