"""The chaos suite's report: the rows the scenarios wrote (JSON lines) as a table, a JSON file and
the summary line; optionally the table into a Markdown file between its markers.

Exit code: 0 when pytest passed, every scenario reported, and lost, conflicting, leaked,
worker_crashes and unrouted_hostile are all 0; 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

SUMS = ("lost", "conflicting", "leaked", "worker_crashes", "unrouted_hostile")
#: Every scenario's row prefix: a run missing one is a failed run.
EXPECTED = ("1 ", "2 postgres ", "2 mongo ", "2 postgres+mongo ", "3 ", "4 ", "5 ", "6 ")
START, END = "<!-- chaos:table:start -->", "<!-- chaos:table:end -->"


def dead_lettered(row: dict[str, Any]) -> str:
    dl = row.get("dead_letters") or {}
    if "patient" in dl:  # the outage scenario: two workers
        bounded = dl["bounded"].get("infra_unavailable", 0)
        planted = dl["patient"].get("malformed_envelope", 0) + dl["bounded"].get(
            "malformed_envelope", 0
        )
        return (
            f"{bounded} infra_unavailable (budget 2), {row.get('infra_unavailable_replayed')} "
            f"replayed; {planted} planted malformed"
        )
    parts = [f"{n} {cls}" for cls, n in sorted(dl.items())]
    unplanned = row.get("unplanned_dead_letters", 0)
    text = ", ".join(parts) or "0"
    if row["scenario"].startswith("5"):
        return text
    return f"{text} (planted); unplanned {unplanned}"


def recovery(row: dict[str, Any]) -> str:
    if row["scenario"].startswith("5"):
        return (
            f"p50 {row['p50_ms']} ms, p99 {row['p99_ms']} ms, max {row['max_ms']} ms per draft; "
            f"peak RSS {row['peak_rss_mib']} MiB"
        )
    r = row.get("recovery_s")
    return "did not drain" if r is None else f"{r} s"


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| scenario | load | faults injected | lost | conflicting | leaked | dead-lettered "
        "| recovery time | notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        notes = []
        if "same_id_republishes" in row:
            notes.append(f"{row['same_id_republishes']} same-id re-publishes")
        if row.get("ledger_duplicates") or row.get("ledger_missing"):
            notes.append(
                f"ledger: {row.get('ledger_duplicates')} duplicate, "
                f"{row.get('ledger_missing')} missing"
            )
        else:
            notes.append("ledger: 0 duplicate, 0 missing")
        if row.get("worker_crashes"):
            notes.append(f"{row['worker_crashes']} worker crash(es)")
        if row.get("restarts_after_stalled_recovery"):
            notes.append(f"{row['restarts_after_stalled_recovery']} exit(s) 75 + restart")
        if "unrouted_hostile" in row:
            notes.append(
                f"unrouted {row['unrouted_hostile']}, internal_error {row.get('internal_errors')}"
            )
        if "hidden_in_debug_log_lines" in row:
            notes.append(
                f"{row['log_lines']} log lines scanned: {row['leaked_info_log_lines']} INFO+ "
                f"and {row['hidden_in_debug_log_lines']} DEBUG with a hidden id or marker"
            )
        if "outage_verdicts_patient" in row:
            notes.append(
                f"{row['outage_verdicts_patient']} outage verdicts, "
                f"{row['replay_differs_from_baseline']} replayed turns unlike the baseline"
            )
        lines.append(
            f"| {row['scenario']} | {row.get('load', '')} | {row.get('faults', '')} "
            f"| {row.get('lost', 0)} | {row.get('conflicting', 0)} | {row.get('leaked', 0)} "
            f"| {dead_lettered(row)} | {recovery(row)} | {'; '.join(notes)} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", type=Path, required=True)
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--doc", type=Path)
    ap.add_argument("--mode", default="full")
    ap.add_argument("--pytest-status", type=int, default=0)
    ap.add_argument("--elapsed", type=int, default=0)
    args = ap.parse_args()

    rows = []
    if args.results.exists():
        rows = [json.loads(x) for x in args.results.read_text().splitlines() if x.strip()]
    rows.sort(key=lambda r: r["scenario"])
    sums = {k: sum(int(r.get(k, 0) or 0) for r in rows) for k in SUMS}
    missing = [p.strip() for p in EXPECTED if not any(r["scenario"].startswith(p) for r in rows)]
    text = table(rows)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    heading = (
        f"`scripts/chaos{' --quick' if args.mode == 'quick' else ''}`, {stamp}, "
        f"{args.elapsed // 60} min {args.elapsed % 60} s, {platform.machine()} "
        f"with {_cpus()} CPU(s) shared with the servers; pytest exit {args.pytest_status}"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {"mode": args.mode, "when": stamp, "elapsed_s": args.elapsed,
             "pytest_status": args.pytest_status, "missing_scenarios": missing, "sums": sums,
             "scenarios": rows},
            indent=2, default=str,
        ) + "\n"
    )  # fmt: skip
    if args.doc is not None:
        doc = args.doc.read_text() if args.doc.exists() else f"{START}\n{END}\n"
        if START not in doc or END not in doc:
            doc += f"\n{START}\n{END}\n"
        head, rest = doc.split(START, 1)
        _, tail = rest.split(END, 1)
        args.doc.write_text(f"{head}{START}\n{heading}\n\n{text}\n{END}{tail}")
    print()
    print(heading)
    print()
    print(text)
    print()
    if missing:
        print(f"[chaos] scenarios that reported nothing: {', '.join(missing)}", file=sys.stderr)
    print(f"[chaos] figures: {args.json}", file=sys.stderr)
    print(" ".join(f"{k}={v}" for k, v in sums.items()))
    return 0 if not any(sums.values()) and not missing and args.pytest_status == 0 else 1


def _cpus() -> int:
    import os  # noqa: PLC0415

    return os.cpu_count() or 0


if __name__ == "__main__":
    sys.exit(main())
