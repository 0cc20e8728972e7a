"""The edges of the hot path, before and after the ledger and store steps, in one process.

    .venv/bin/python -m dev.bench.edges [--repeat 7] [--postgres]

Each figure is the minimum over ``--repeat`` timeit runs (µs per unit), the "before" code
(reproduced here as it was) and the "after" code (imported) timed alternately, so machine noise
hits both alike:

- ledger decode: one ``citations.ledger`` message of 10 rows into the values the writer sends
  (before: a pydantic ``LedgerRecord`` per row, then a tuple per row with ``Decimal`` and enum
  ``.value``; after: ``ledger_rows`` and the one JSON parameter of the insert);
- evidence rows: one ``observations`` row and one document into an ``EvidenceRecord`` (before:
  the checks, then the model validates; after: ``parse_sql_row`` / ``parse_document``).

``--postgres`` (needs ``POSTGRES_DSN``) also writes 500-row batches into a scratch copy of
``citation_ledger`` (created and dropped here) both ways: the old pipelined ``executemany`` and
the new single ``INSERT ... FROM jsonb_array_elements``, with this process's CPU and the server
backend's CPU (from /proc: the server must run on this machine) per row.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import time
import timeit
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

from worker.core import CitationRef, EvidenceKind, EvidenceRecord
from worker.ledger.message import ledger_records, ledger_rows
from worker.stores import rows as store_rows
from worker.stores.ledger_rows import LedgerRecord, LedgerRow

COLUMNS = (
    "tenant_id, turn_id, draft_id, attempt, outcome, policy_version, event_id,"
    " kind, source_id, resolution, quote_check, paths"
)


def ledger_message(turn: int = 0) -> bytes:
    rows = [
        {
            "kind": ("OBS", "DOC", "EVT")[i % 3],
            "paths": ["answer_markdown", f"claims[{i}].text"][: 1 + i % 2],
            "quote_check": "exact" if i % 3 == 0 else "none",
            "resolution": "resolved" if i else "dangling",
            "source_id": str(7 * 10**15 + 37 * i),
        }
        for i in range(10)
    ]
    return orjson.dumps(
        {
            "attempt": 0, "draft_id": f"d-edges-{turn}", "event_id": "783b5aa8-b2e2-5470",
            "outcome": "grounded", "policy_version": "default-1", "rows": rows,
            "schema_version": 1, "tenant_id": "bench-tenant-01", "turn_id": f"t-edges-{turn}",
        },
        option=orjson.OPT_SORT_KEYS,
    )  # fmt: skip


def old_args(records: list[LedgerRecord]) -> list[tuple[Any, ...]]:
    """What ``PostgresLedger.write_ledger`` built before: a tuple per row for executemany."""
    return [
        (
            r.tenant_id, r.turn_id, r.draft_id, r.attempt, r.outcome, r.policy_version,
            r.event_id, r.kind.value, Decimal(r.source_id), r.resolution.value,
            r.quote_check.value, list(r.paths),
        )
        for r in records
    ]  # fmt: skip


def new_payload(rows: list[LedgerRow]) -> str:
    """What ``PostgresLedger.write_ledger`` builds now: one JSON parameter."""
    return orjson.dumps([(*r[:8], str(r[8]), *r[9:]) for r in rows]).decode()


def old_sql_row(table: str, kind: EvidenceKind, row: dict[str, Any]) -> EvidenceRecord:
    ref = CitationRef(kind, store_rows._source_id(table, row["id"]))
    return EvidenceRecord(
        ref=ref,
        acl=store_rows._acl(table, ref, row["acl"]),
        revoked_at=store_rows._revoked_at(table, ref, row["revoked_at"]),
        text=store_rows._optional_text(table, ref, "summary", row["summary"]),
    )


def old_document(collection: str, doc: dict[str, Any]) -> EvidenceRecord:
    ref = CitationRef(EvidenceKind.DOC, store_rows._source_id(collection, doc.get("_id")))
    return EvidenceRecord(
        ref=ref,
        acl=store_rows._acl(collection, ref, doc["acl"]) if "acl" in doc else (),
        revoked_at=store_rows._revoked_at(collection, ref, doc.get("revoked_at")),
        text=store_rows._optional_text(collection, ref, "text", doc.get("text")),
        title=store_rows._optional_text(collection, ref, "title", doc.get("title")),
    )


def compare(
    name: str, unit: str, before: Callable[[], Any], after: Callable[[], Any], n: int, repeat: int
) -> None:
    best = {"before": float("inf"), "after": float("inf")}
    for _ in range(repeat):
        for label, fn in (("before", before), ("after", after)):
            best[label] = min(best[label], timeit.timeit(fn, number=n) / n * 1e6)
    print(
        f"{name:34s} before {best['before']:7.2f} µs/{unit}   after {best['after']:7.2f} µs/{unit}"
        f"   {best['before'] / best['after']:5.1f}x"
    )


def in_process(repeat: int) -> None:
    value = ledger_message()
    # The "before" code predates the ledger's support column (each row's last field, added
    # after it): the columns it wrote agree.
    old = [(*a[:8], str(a[8]), *a[9:]) for a in old_args(ledger_records(value))]
    width = len(COLUMNS.split(","))
    new = [row[:width] for row in orjson.loads(new_payload(ledger_rows(value)))]
    assert new == orjson.loads(orjson.dumps(old))
    compare(
        "ledger decode (10-row message)", "msg",
        lambda: old_args(ledger_records(value)), lambda: new_payload(ledger_rows(value)),
        2000, repeat,
    )  # fmt: skip
    row = {
        "id": 7 * 10**15 + 1234, "acl": ["group:analysts", "user:u-7"], "revoked_at": None,
        "summary": "Checkout p99 latency rose from 180 ms to 1.4 s at 14:10 UTC.",
    }  # fmt: skip
    doc = {"_id": 7 * 10**15 + 9876, "acl": None, "title": "Runbook", "text": "Restart the pool."}
    obs = EvidenceKind.OBS
    assert store_rows.parse_sql_row("observations", obs, row) == old_sql_row(
        "observations", obs, row
    )
    assert store_rows.parse_document("documents", doc) == old_document("documents", doc)
    compare(
        "evidence row (Postgres)", "row",
        lambda: old_sql_row("observations", obs, row),
        lambda: store_rows.parse_sql_row("observations", obs, row), 20000, repeat,
    )  # fmt: skip
    compare(
        "evidence document (MongoDB)", "row",
        lambda: old_document("documents", doc),
        lambda: store_rows.parse_document("documents", doc), 20000, repeat,
    )  # fmt: skip


def _backend_cpu(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def postgres(repeat: int) -> None:
    import asyncpg  # noqa: PLC0415 - only with --postgres

    from worker.settings import Settings  # noqa: PLC0415
    from worker.stores.ledger import PostgresLedger  # noqa: PLC0415

    table = "bench_edges_ledger"
    key = "ON CONFLICT (tenant_id, turn_id, draft_id, kind, source_id) DO NOTHING"
    old_insert = (
        f"INSERT INTO {table} ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
        f" $12) {key}"
    )
    new_insert = PostgresLedger(None, Settings(ledger_table=table))._insert
    conn = await asyncpg.connect(os.environ["POSTGRES_DSN"])
    backend = await conn.fetchval("SELECT pg_backend_pid()")
    turns = itertools.count()

    def batch() -> list[bytes]:
        return [ledger_message(next(turns)) for _ in range(50)]

    async def old(messages: list[bytes]) -> None:
        args = old_args([r for m in messages for r in ledger_records(m)])
        await conn.executemany(old_insert, args)

    async def new(messages: list[bytes]) -> None:
        await conn.execute(new_insert, new_payload([r for m in messages for r in ledger_rows(m)]))

    await conn.execute(f"DROP TABLE IF EXISTS {table}")
    await conn.execute(f"CREATE TABLE {table} (LIKE citation_ledger INCLUDING ALL)")
    try:
        best: dict[str, tuple[float, float]] = {}
        for _ in range(repeat):
            for label, write in (("before", old), ("after", new)):
                batches = [batch() for _ in range(20)]
                rows = 20 * 50 * 10
                server0, client0 = _backend_cpu(backend), time.process_time()
                for messages in batches:
                    await write(messages)
                client = (time.process_time() - client0) / rows * 1e6
                server = (_backend_cpu(backend) - server0) / rows * 1e6
                prev = best.get(label, (float("inf"), float("inf")))
                best[label] = min(prev, (client, server), key=sum)
        for label, (client, server) in best.items():
            print(
                f"ledger write, decode included ({label:6s}) client {client:5.2f} + server"
                f" {server:5.2f} = {client + server:5.2f} µs CPU per row"
            )
        assert await conn.fetchval(f"SELECT count(*) FROM {table}") == 2 * repeat * 20 * 500
    finally:
        await conn.execute(f"DROP TABLE IF EXISTS {table}")
        await conn.close()


def main() -> None:
    p = argparse.ArgumentParser(
        prog="python -m dev.bench.edges",
        description=__doc__,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--postgres", action="store_true", help="also time the ledger writes")
    a = p.parse_args()
    in_process(a.repeat)
    if a.postgres:
        asyncio.run(postgres(a.repeat))


if __name__ == "__main__":
    main()
