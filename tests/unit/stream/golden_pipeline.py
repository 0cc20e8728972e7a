"""The golden run: fixed inputs through ``BatchProcessor``, every output record as it left.

The hot path was rebuilt for speed; its outputs must stay byte-identical. The inputs
(``golden/inputs.json``) are every example of ``schemas/examples`` (demo corpus evidence) and
240 drafts of the benchmark mix over three tenants (``bench``: its corpus and its
generator, with a fixed clock), in batches, with a redelivered batch and a regeneration
deadline. ``golden/outputs.jsonl`` holds what the code before that rebuild published for them.

Rebuild both (only when an output is *meant* to change, and say why in the commit), from the
checkout's root, where ``bench`` is found::

    .venv/bin/python -m tests.unit.stream.golden_pipeline --write
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import re
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from worker.core import (
    ControlKind,
    EvidenceRecord,
    Incoming,
    InMemoryEvidenceStore,
    PolicyBook,
    control_record,
)
from worker.runtime.metrics import Metrics
from worker.settings import Settings
from worker.stream.memory import MemoryPublisher, MemoryTurns
from worker.stream.processing.pipeline import BatchProcessor

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
GOLDEN = HERE / "golden"
INPUTS = GOLDEN / "inputs.json"
OUTPUTS = GOLDEN / "outputs.jsonl"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
DRAFTS_TOPIC = "agent.drafts"


def _b(value: bytes | None) -> Any:
    if value is None:
        return None
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(value).decode("ascii")}


def _unb(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return base64.b64decode(value["b64"])
    return str(value).encode("utf-8")


def _incoming(raw: dict[str, Any], offset: int) -> Incoming:
    return Incoming(
        topic=DRAFTS_TOPIC,
        partition=int(raw["partition"]),
        offset=offset,
        timestamp_ms=int(raw["timestamp_ms"]),
        key=_unb(raw["key"]),
        value=_unb(raw["value"]) or b"",
        headers=tuple((k, _unb(v) or b"") for k, v in raw["headers"]),
    )


def run(inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """Every output of the golden batches, one dict per record, in hand-over order."""
    evidence = InMemoryEvidenceStore(
        {
            tenant: [EvidenceRecord.model_validate(r) for r in recs]
            for tenant, recs in inputs["evidence"].items()
        }
    )
    recorder = MemoryPublisher()
    clock = {"now": NOW}
    processor = BatchProcessor(
        settings=Settings(),
        evidence=evidence,
        turns=MemoryTurns(),
        publisher=recorder,
        policies=PolicyBook(),
        metrics=Metrics(),
        worker_version="golden",
        clock=lambda: clock["now"],
    )
    out: list[dict[str, Any]] = []

    async def go() -> None:
        offset = 0
        for number, batch in enumerate(inputs["batches"]):
            clock["now"] = NOW + timedelta(seconds=int(batch["at_s"]))
            records = []
            for raw in batch["records"]:
                records.append(_incoming(raw, offset))
                offset += 1
            start = len(recorder.records)
            await processor.process(records)
            for topic, key, value, headers, partition in recorder.records[start:]:
                out.append(
                    {
                        "batch": number,
                        "topic": topic,
                        "key": _b(key),
                        "partition": partition,
                        "headers": [[k, _b(v)] for k, v in headers],
                        "sha256": hashlib.sha256(value).hexdigest(),
                        "bytes": len(value),
                        # The values themselves for the examples (readable diffs), digests after.
                        "value": _b(value) if number == 0 else None,
                    }
                )

    asyncio.run(go())
    return out


def load_inputs() -> dict[str, Any]:
    """The committed inputs."""
    return dict(orjson.loads(INPUTS.read_bytes()))


def load_outputs() -> list[dict[str, Any]]:
    """The committed outputs."""
    return [orjson.loads(line) for line in OUTPUTS.read_bytes().splitlines() if line]


# ----------------------------------------------------------------------------------------------
# Building the inputs (needs the checkout's `bench` package; run by hand, see the module docstring)


def _record(
    key: bytes | None,
    value: bytes,
    headers: Sequence[tuple[str, bytes]],
    partition: int,
    at: datetime,
) -> dict[str, Any]:
    return {
        "key": _b(key),
        "value": _b(value),
        "headers": [[k, _b(v)] for k, v in headers],
        "partition": partition,
        "timestamp_ms": int(at.timestamp() * 1000),
    }


def _examples() -> Iterator[dict[str, Any]]:
    for path in sorted((ROOT / "schemas" / "examples").glob("*.json")):
        if path.name == "expected.json":
            continue
        value = path.read_bytes()
        try:
            key = str(orjson.loads(value)["turn_id"]).encode("utf-8")
        except (orjson.JSONDecodeError, KeyError, TypeError):
            key = path.stem.encode("utf-8")
        yield _record(
            key, value, [("traceparent", b"00-" + b"ab" * 16 + b"-" + b"cd" * 8 + b"-01")], 0, NOW
        )


def build_inputs() -> dict[str, Any]:
    """Examples and the benchmark mix, as committed in ``golden/inputs.json``."""
    from dev.bench import corpus as bench_corpus  # noqa: PLC0415 - only for building
    from dev.bench import drafts as bench_drafts  # noqa: PLC0415

    class FixedClock(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> FixedClock:  # type: ignore[override]
            return cls(2026, 12, 2, 11, 59, 30, tzinfo=UTC)

    bench_drafts.datetime = FixedClock  # type: ignore[misc]  # produced_at, deterministic
    corpus, rows = bench_corpus.build("golden", 3, 5_000_000)
    evidence: dict[str, list[Any]] = {
        tenant: [orjson.loads(rec.model_dump_json()) for rec in recs]
        for tenant, recs in bench_corpus.records(rows).items()
    }
    from worker.stores.demo import load_corpus  # noqa: PLC0415
    from worker.tools.evidence_fixture import corpus_records  # noqa: PLC0415

    for tenant, recs in corpus_records(load_corpus()).items():
        evidence.setdefault(tenant, []).extend(orjson.loads(r.model_dump_json()) for r in recs)

    mix = bench_drafts.MixGenerator(corpus.tenants, run_id=0x60D, seed=11)
    batches: list[dict[str, Any]] = [{"at_s": 0, "records": list(_examples())}]
    first_mix: list[dict[str, Any]] = []
    for n in range(4):
        drafts = mix.take(60)
        records = [
            _record(d.key, d.value, d.headers, d.index % 4, NOW + timedelta(seconds=n))
            for d in drafts
        ]
        if n == 0:
            first_mix = records
        batches.append({"at_s": n, "records": records})
    # A redelivered batch (a crash before the offsets were committed): the same records again.
    batches.append({"at_s": 5, "records": first_mix})
    # Past every regeneration deadline: a control for each turn still waiting.
    waiting = [r for r in first_mix[:60] if b'"attempt":0' in (_unb(r["value"]) or b"")][:12]
    controls = []
    for r in waiting:
        turn = (_unb(r["key"]) or b"").decode("utf-8")
        c = control_record(
            ControlKind.REGENERATION_DEADLINE,
            turn,
            int(r["partition"]),
            NOW + timedelta(seconds=121),
        )
        controls.append(
            _record(c.key, c.value, c.headers, c.partition, NOW + timedelta(seconds=200))
        )
    batches.append({"at_s": 200, "records": controls})
    # Only the records some input could cite (a dangling id stays absent either way).
    text = " ".join(str(r["value"]) for b in batches for r in b["records"])
    cited = {int(n) for n in re.findall(r"\d+", text)}
    evidence = {t: [r for r in recs if r["ref"][1] in cited] for t, recs in evidence.items()}
    return {"evidence": evidence, "batches": batches}


def main() -> None:
    """``--write``: rebuild the inputs and record the current code's outputs."""
    if "--write" not in sys.argv[1:]:
        raise SystemExit("usage: python -m tests.unit.stream.golden_pipeline --write")
    GOLDEN.mkdir(exist_ok=True)
    inputs = build_inputs()
    INPUTS.write_bytes(orjson.dumps(inputs, option=orjson.OPT_SORT_KEYS))
    outputs = run(load_inputs())
    OUTPUTS.write_bytes(
        b"".join(orjson.dumps(o, option=orjson.OPT_SORT_KEYS) + b"\n" for o in outputs)
    )
    topics: dict[str, int] = {}
    for o in outputs:
        topics[o["topic"]] = topics.get(o["topic"], 0) + 1
    count = sum(len(b["records"]) for b in inputs["batches"])
    print(f"{count} inputs -> {len(outputs)} outputs {topics}")


if __name__ == "__main__":
    main()
