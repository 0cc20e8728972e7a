"""Throughput of the pure core: prepare + evaluate + decide (+ serialization) per draft.

    .venv/bin/python -m dev.bench.core [--rounds 7] [--seconds 1.0] [--profile N]

Two workloads: a typical answer (~2 KB of Markdown, 8 claims, 10 distinct citations, one of them
hidden from the reader) and a large report (50 sections, a timeline). Each round runs the workload
for about ``--seconds`` on one core; the median drafts/s over the rounds is printed, by the wall
clock and by the process's CPU time (``cpu``: steadier on a machine shared with other work). Not a
test: timings depend on the machine. Targets: >= 10,000 typical drafts/s, >= 2,000
report drafts/s.

``--profile N``: instead, cProfile each of the two workloads and print the share of the core's
time in each stage (prepare, evaluate, decide) and the N functions with the most own time.

Baseline (house rule: every figure also as a ratio against a baseline measured in the same run):
``parse_envelope`` of the very same record values (orjson decode plus the envelope checks), timed
in each round just before the core, so machine noise hits both alike. The ratio says how many
envelope parses one draft through the core costs; it moves only when the core does.
Drafts are parsed from their envelope bytes up front, so no two drafts share an output object.

Support (rule 6b): the typical answer and the report with the check (the default ``enforce``)
and without it (``support: off``), in alternate slices of each round; printed as the share of
the core's CPU time the check takes (target <= 25 %), twice: with one ``SourceIndex`` for the 64
drafts as the worker shares one per batch (``per batch``: every source is read once a pass) and
with one per draft (``per draft``: as if no two drafts of a batch cited the same source). Every
source of the bench says what the drafts say, so the drafts are grounded and the check runs on
every cited unit.

Typed claims (rule 7b): the same drafts with and without ten declared claims in the tenant's
policy, timed in alternate slices of each round (the envelope carries the same twenty facts in
both, so only the check differs): a proposal whose ten claims all find facts (a cheap draft: the
check's cost shows the most there); the typical answer under the same claims, which name proposal
fields and are all ``omitted``; and the typical answer under ten claims that all find facts
(``tool_calls_made`` against ten entities). Target: with claims >= 0.9 x without.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from worker.core import (
    CitationRef,
    DeclaredClaim,
    Draft,
    DraftKind,
    EvidenceKind,
    EvidenceRecord,
    Principal,
    SourceIndex,
    SupportPolicy,
    TenantPolicy,
    decide,
    evaluate,
    parse_envelope,
    prepare,
)

NOW = datetime(2026, 12, 2, 12, tzinfo=UTC)
POLICY = TenantPolicy()
PRINCIPAL = Principal(user_id="alice", groups=("analysts",))


#: What every source of the bench says: the drafts below say it back (contract rule 6b), so they
#: are grounded and the support check runs to its end on every unit.
SOURCE_TEXT = (
    "The vessel Aurora was seen moving slowly through the northern corridor, roughly 4.5 nm from "
    "buoy No. 7, with its transponder on; it moved north, then slowed near the buoy and waited. "
    "The watch team flagged it for review at 04:10, 04:11, 04:12, 04:13, 04:14, 04:15, 04:16 and "
    "04:17 UTC; guidance applied as written."
)
QUOTE = "The watch team flagged it for review at 04:10, 04:11, 04:12, 04:13"


def corpus() -> dict[CitationRef, EvidenceRecord]:
    records: dict[CitationRef, EvidenceRecord] = {}
    for i in range(1, 200):
        for kind in EvidenceKind:
            ref = CitationRef(kind, i)
            hidden = kind is EvidenceKind.DOC and i == 9
            records[ref] = EvidenceRecord(
                ref=ref,
                acl=("group:ops",) if hidden else None,
                text=SOURCE_TEXT,
                title=f"Document {i}" if kind is EvidenceKind.DOC else None,
            )
    return records


def typical_answer() -> dict[str, Any]:
    refs = [f"[OBS-{i}]" for i in range(1, 6)] + [f"[DOC-{i}]" for i in range(6, 10)] + ["[EVT-10]"]
    sentences = []
    for i in range(8):
        a, b = refs[i], refs[(i + 3) % 10]
        sentences.append(
            f"- Seen from the coast, the vessel Aurora was moving slowly through the northern "
            f"corridor, roughly 4.5 nm from buoy No. 7, with its transponder on {a}{b}. "
            f"Analysts e.g. the watch team flagged it for review at 04:1{i % 4} UTC {a}."
        )
    markdown = "## Summary\n\n" + "\n".join(sentences) + "\n\nWhat happened next is unclear?\n"
    return {
        "answer_markdown": markdown,
        "citations": [
            {"kind": "OBS", "id": 1, "quote": QUOTE},
            {"kind": "EVT", "id": 10, "quote": QUOTE.lower()},  # checked tolerant
        ],
        "claims": [
            {
                "text": f"The watch team flagged the vessel for review {refs[i]}.",
                "citations": [{"kind": "OBS", "id": 1 + i % 5}],
            }
            for i in range(8)
        ],
        "tool_calls_made": ["query_observations", "search_corpus"],
    }


def large_report() -> dict[str, Any]:
    return {
        "title": "After-action report",
        "sections": [
            {
                "heading": f"Section {i}",
                "body_markdown": (
                    f"During that phase the vessel moved north [OBS-{1 + i % 150}]. "
                    f"It then slowed near the buoy and waited [EVT-{1 + i % 90}]. "
                    f"Guidance applied as written [DOC-{1 + i % 40}]."
                ),
                "citations": [{"kind": "OBS", "id": 1 + (i * 7) % 150}],
            }
            for i in range(50)
        ],
        "timeline": [
            {
                "at": f"2026-12-01T{i % 24:02d}:00:00Z",
                "text": "The vessel waited near the buoy",
                "citations": [{"kind": "EVT", "id": 1 + i}],
            }
            for i in range(20)
        ],
        "base_rates": [{"metric": "loiter_pctile", "value": 0.9, "sample_n": 40, "interval": None}],
        "status": "DRAFT",
    }


def typical_proposal() -> dict[str, Any]:
    return {
        "proposal_type": "entity_flag",
        "summary": "Flag vessel Aurora for review: it loitered near buoy 7 [OBS-3] [EVT-4].",
        "grounding": {
            "reasoning": "It entered the corridor at dawn [OBS-1] and slowed [OBS-2].",
            "observations": [1, 2, 3],
        },
        "confidence": 0.8,
        "gate": "Q9",
        "auto_appliable": False,
        "patch": {"entity_id": "vessel:aurora", "flag": "review", "reason": "loitering"},
    }


#: Ten declared claims over a proposal's typed fields (the entity taken from the output or fixed),
#: as (answer field, fact field); never its prose nor an object holding it (``summary``,
#: ``grounding.reasoning``, ``grounding``: refused at load, rule 7b).
CLAIM_FIELDS = (
    ("patch.flag", "patch.flag"),
    ("patch.reason", "patch.reason"),
    ("patch.entity_id", "patch.entity_id"),
    ("confidence", "confidence"),
    ("gate", "gate"),
    ("auto_appliable", "auto_appliable"),
    ("proposal_type", "proposal_type"),
    ("patch", "patch"),
    ("grounding.observations", "grounding.observations"),
    ("grounding.observations", "observed"),
)
TEN_CLAIMS = TenantPolicy(
    claims=tuple(
        DeclaredClaim.model_validate(
            {
                "answer_field": path,
                "entity": {"from": "patch.entity_id"} if path.startswith("patch") else "run",
                "field": field,
            }
        )
        for path, field in CLAIM_FIELDS
    )
)


def facts_for(output: dict[str, Any]) -> list[dict[str, Any]]:
    """Two facts per claimed field: an early value, and the settling one equal to the output's."""
    facts: list[dict[str, Any]] = []
    for iteration in (0, 1):
        for path, field in CLAIM_FIELDS:
            node: Any = output
            for segment in path.split("."):
                node = node.get(segment) if isinstance(node, dict) else None
            facts.append(
                {
                    "entity": "vessel:aurora" if path.startswith("patch") else "run",
                    "field": field,
                    "value": node if iteration else "stale",
                    "tool_name": "lookup",
                    "tool_call_id": f"call-{iteration}-{field}",
                    "iteration": iteration,
                    "measured_at": "2026-12-02T11:00:00Z",
                }
            )
    return facts


def envelope(
    output: dict[str, Any], kind: DraftKind, n: int, facts: list[dict[str, Any]] | None = None
) -> bytes:
    """The record value a producer would write for one draft of ``output``."""
    value: dict[str, Any] = {
        "schema_version": 1,
        "draft_id": f"d-{n}",
        "turn_id": f"t-{n}",
        "attempt": 0,
        "tenant_id": "acme",
        "principal": {"user_id": PRINCIPAL.user_id, "groups": list(PRINCIPAL.groups)},
        "kind": kind.value,
        "output": output,
    }
    if facts is not None:
        value["facts"] = facts
    return orjson.dumps(value)


def parsed(value: bytes, n: int) -> Draft:
    d = parse_envelope(f"t-{n}".encode(), value, max_bytes=1 << 20)
    assert isinstance(d, Draft), d
    return d


def one(
    d: Draft,
    records: dict[CitationRef, EvidenceRecord],
    policy: TenantPolicy = POLICY,
    index: SourceIndex | None = None,
) -> str:
    """One draft through the core (``index``: the batch's source memo; ``None``: its own)."""
    prepared = prepare(d, policy)
    evidence = {r: records[r] for r in prepared.refs_to_resolve if r in records}
    ev = evaluate(prepared, evidence, policy, NOW, index)
    return decide(None, prepared, ev, policy, NOW, "bench").outcome


#: ``--gc paused``: the core's rounds run as the worker runs a batch.
GC_PAUSED = False


def rate(work: Callable[[], int], seconds: float) -> tuple[float, float]:
    """Items per second of ``work`` (which returns how many items it did), for ``seconds``: by
    the wall clock and by the process's CPU time."""
    count = 0
    start, cpu = time.perf_counter(), time.process_time()
    while (elapsed := time.perf_counter() - start) < seconds:
        count += work()
    return count / elapsed, count / max(time.process_time() - cpu, 1e-9)


def bench(name: str, output: dict[str, Any], kind: DraftKind, rounds: int, seconds: float) -> None:
    """Drafts/s of the core and of the baseline, interleaved round by round; medians."""
    records = corpus()
    values = [envelope(output, kind, n) for n in range(64)]
    # Each draft has its own parsed output, as in the worker (no object shared between drafts).
    drafts = [parsed(v, n) for n, v in enumerate(values)]
    outcome = one(drafts[0], records)

    def core() -> int:
        if GC_PAUSED:  # as the worker runs a batch (worker/stream/processing/collector.py)
            gc.disable()
        try:
            for d in drafts:
                one(d, records)
        finally:
            if GC_PAUSED:
                gc.enable()
        return len(drafts)

    def baseline() -> int:
        for n, v in enumerate(values):
            parsed(v, n)
        return len(values)

    core_rates, cpu_rates, base_rates, ratios = [], [], [], []
    for _ in range(rounds):
        base, _ = rate(baseline, seconds / 4)
        got, cpu = rate(core, seconds)
        core_rates.append(got)
        cpu_rates.append(cpu)
        base_rates.append(base)
        ratios.append(base / got)
    print(
        f"{name:15s} outcome={outcome:9s} core median {statistics.median(core_rates):7.0f} "
        f"drafts/s (min {min(core_rates):.0f}, max {max(core_rates):.0f}; "
        f"cpu {statistics.median(cpu_rates):.0f}/s); "
        f"parse_envelope {statistics.median(base_rates):7.0f}/s; "
        f"core = {statistics.median(ratios):5.1f} x parse_envelope ({rounds} rounds, "
        f"{len(values[0])} B envelope)"
    )


#: Ten claims an answer can satisfy: the tools it called, as ten tools' runs reported them.
TEN_ANSWER_CLAIMS = TenantPolicy(
    claims=tuple(
        DeclaredClaim(answer_field="tool_calls_made", entity=f"run-{i}", field="tools")
        for i in range(10)
    )
)


def answer_facts(output: dict[str, Any]) -> list[dict[str, Any]]:
    """Two facts per ``TEN_ANSWER_CLAIMS`` entity: a stale list, then the answer's own."""
    return [
        {
            "entity": f"run-{i}",
            "field": "tools",
            "value": output["tool_calls_made"] if iteration else ["stale"],
            "tool_name": "trace",
            "tool_call_id": f"call-{iteration}-{i}",
            "iteration": iteration,
        }
        for iteration in (0, 1)
        for i in range(10)
    ]


def alternating(
    drafts: list[Draft],
    records: dict[CitationRef, EvidenceRecord],
    first: TenantPolicy,
    second: TenantPolicy,
    rounds: int,
    seconds: float,
    *,
    cpu: bool,
    batch_index: bool = False,
) -> tuple[list[float], list[float]]:
    """Drafts/s of the core under two policies, per round (by CPU time or the wall clock), in
    four alternating short slices per round so that drift hits both alike. ``batch_index``: the
    drafts share one ``SourceIndex`` per pass, as the worker's batch does; otherwise each draft
    has its own."""

    def work(policy: TenantPolicy) -> Callable[[], int]:
        def run() -> int:
            index = SourceIndex() if batch_index else None
            for d in drafts:
                one(d, records, policy, index)
            return len(drafts)

        return run

    which = 1 if cpu else 0
    a_rates, b_rates = [], []
    for _ in range(rounds):
        a, b = [], []
        for _ in range(4):
            a.append(rate(work(first), seconds / 8)[which])
            b.append(rate(work(second), seconds / 8)[which])
        a_rates.append(statistics.mean(a))
        b_rates.append(statistics.mean(b))
    return a_rates, b_rates


def bench_claims(
    name: str,
    output: dict[str, Any],
    kind: DraftKind,
    claims: TenantPolicy,
    facts: list[dict[str, Any]],
    rounds: int,
    seconds: float,
) -> None:
    """Drafts/s without and with ten declared claims, alternating slices; medians and ratio."""
    records = corpus()
    drafts = [parsed(envelope(output, kind, n, facts), n) for n in range(64)]
    outcomes = {one(drafts[0], records, p) for p in (POLICY, claims)}
    checks = evaluate(prepare(drafts[0], claims), records, claims, NOW).claim_checks
    dispositions = sorted({c.disposition.value for c in checks})

    without, with_claims = alternating(drafts, records, POLICY, claims, rounds, seconds, cpu=False)
    ratios = [w / wo for w, wo in zip(with_claims, without, strict=True)]
    print(
        f"{name:15s} outcome={'/'.join(sorted(outcomes)):9s} no claims "
        f"{statistics.median(without):7.0f} drafts/s; 10 claims ({', '.join(dispositions)}) "
        f"{statistics.median(with_claims):7.0f} drafts/s; with/without = "
        f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}; "
        f"{rounds} rounds)"
    )


SUPPORT_OFF = TenantPolicy(support=SupportPolicy.OFF)


def bench_support(
    name: str,
    output: dict[str, Any],
    kind: DraftKind,
    rounds: int,
    seconds: float,
    *,
    batch_index: bool,
) -> None:
    """Drafts/s with the support check (rule 6b, the default ``enforce``) and without it
    (``support: off``), alternating slices; medians and the share of the core's time it takes.
    ``batch_index``: the 64 drafts share one ``SourceIndex`` as the worker's batch does (``batch``:
    the bench's drafts all cite the same sources, so their texts are read once per pass, the
    least the worker pays); otherwise each draft reads its sources afresh (``draft``: no source
    shared by two drafts, the most)."""
    records = corpus()
    drafts = [parsed(envelope(output, kind, n), n) for n in range(64)]
    outcomes = {one(drafts[0], records, p) for p in (POLICY, SUPPORT_OFF)}

    off, on = alternating(
        drafts, records, SUPPORT_OFF, POLICY, rounds, seconds, cpu=True, batch_index=batch_index
    )
    shares = [1 - n / f for n, f in zip(on, off, strict=True)]  # the check's share of the CPU
    print(
        f"{name:15s} outcome={'/'.join(sorted(outcomes)):9s} source index per "
        f"{'batch' if batch_index else 'draft'}: support off {statistics.median(off):7.0f} "
        f"drafts/s (cpu); enforce {statistics.median(on):7.0f} drafts/s (cpu); the check is "
        f"{statistics.median(shares):.0%} of the core's time (min {min(shares):.0%}, max "
        f"{max(shares):.0%}; {rounds} rounds; target <= 25%)"
    )


def profile(name: str, output: dict[str, Any], kind: DraftKind, top: int) -> None:
    """cProfile of the core on one workload: each stage's share, then the costliest functions."""
    records = corpus()
    drafts = [parsed(envelope(output, kind, n), n) for n in range(64)]
    profiler = cProfile.Profile()
    deadline = time.perf_counter() + 2.0
    profiler.enable()
    while time.perf_counter() < deadline:
        for d in drafts:
            one(d, records)
    profiler.disable()
    stats = pstats.Stats(profiler)
    by_name = {func[2]: row[3] for func, row in stats.stats.items()}  # type: ignore[attr-defined]
    total = by_name["one"]
    shares = ", ".join(
        f"{stage} {by_name.get(stage, 0.0) / total:5.1%}"
        for stage in ("prepare", "evaluate", "decide")
    )
    print(f"== {name}: share of the core's time (cProfile): {shares}")
    stats.sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m dev.bench.core", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument(
        "--gc",
        choices=("on", "paused"),
        default="on",
        help="on: CPython's collector as is (default); paused: the start-up heap frozen and no "
        "automatic collection while a batch of 64 drafts is decided, as the worker runs a batch",
    )
    args = parser.parse_args()
    global GC_PAUSED  # noqa: PLW0603 - one switch for the whole run
    GC_PAUSED = args.gc == "paused"
    if GC_PAUSED:
        gc.collect()
        gc.freeze()
    if args.profile:
        profile("typical answer", typical_answer(), DraftKind.ANSWER, args.profile)
        profile("large report", large_report(), DraftKind.REPORT, args.profile)
        return
    bench("typical answer", typical_answer(), DraftKind.ANSWER, args.rounds, args.seconds)
    bench("large report", large_report(), DraftKind.REPORT, args.rounds, args.seconds)
    for batch_index in (True, False):
        for name, output, kind in (
            ("support/answer", typical_answer(), DraftKind.ANSWER),
            ("support/report", large_report(), DraftKind.REPORT),
        ):
            bench_support(name, output, kind, args.rounds, args.seconds, batch_index=batch_index)
    proposal, answer = typical_proposal(), typical_answer()
    for name, output, kind, claims, facts in (
        ("claims/proposal", proposal, DraftKind.PROPOSAL, TEN_CLAIMS, facts_for(proposal)),
        ("claims/answer", answer, DraftKind.ANSWER, TEN_CLAIMS, facts_for(proposal)),
        ("claims/answer+", answer, DraftKind.ANSWER, TEN_ANSWER_CLAIMS, answer_facts(answer)),
    ):
        bench_claims(name, output, kind, claims, facts, args.rounds, args.seconds)


if __name__ == "__main__":
    main()
