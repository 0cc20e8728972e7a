"""Figures out: the JSON document, the chart, the terminal table and the target check."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent


def machine() -> dict[str, Any]:
    """nproc, CPU model, RAM and load: the context every figure needs."""
    model = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    mem_kb = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kb = int(line.split()[1])
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_model": model,
        "ram_gib": round(mem_kb / 1024 / 1024, 1),
        "python": platform.python_version(),
        "loadavg_at_start": list(os.getloadavg()),
    }


def git_revision() -> dict[str, Any]:
    """HEAD and whether worker/ has uncommitted changes (others edit the checkout too)."""

    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True, timeout=10
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {
        "head": git("rev-parse", "--short", "HEAD"),
        "worker_dirty": bool(git("status", "--porcelain", "worker")),
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0 or math.isnan(a) or math.isnan(b):
        return None
    return round(a / b, 3)


def targets(doc: dict[str, Any]) -> dict[str, Any]:
    """Each issue-7 target with its value and whether it is met (reported, never asserted)."""
    w1 = doc["worker"]["tenants_1"]
    out: dict[str, Any] = {
        "throughput_vs_faust_passthrough": {
            "target": ">= 0.6",
            "value": doc["ratio_vs_faust_passthrough"],
        },
        "p99_ms_at_50pct_of_saturation": {
            "target": "<= 100",
            "value": next(
                (p["p99_ms"] for p in w1.get("latency", []) if p["fraction"] == 0.5), None
            ),
        },
        "store_queries_per_draft": {
            "target": "<= 0.05",
            "value": w1["saturation"].get("store_queries_per_draft"),
        },
    }
    many = [k for k in doc["worker"] if k != "tenants_1"]
    if many:
        out["many_tenants_vs_1"] = {
            "target": ">= 0.8",
            "value": doc.get("ratios", {}).get("many_tenants_vs_1"),
        }
        out["store_queries_per_draft_many_tenants"] = {
            "target": "<= 0.05",
            "value": doc["worker"][many[0]]["saturation"].get("store_queries_per_draft"),
        }
    if "scale_out" in doc:
        out["two_processes_vs_one"] = {"target": ">= 1.7", "value": doc["scale_out"].get("ratio")}
        out["cpu_per_draft_2_processes_vs_1"] = {
            "target": "<= 1.15",
            "value": doc["scale_out"].get("cpu_per_draft_2_vs_1"),
        }
    for t in out.values():
        bound = float(t["target"].split()[1])
        v = t["value"]
        t["met"] = (
            None if v is None else (v >= bound if t["target"].startswith(">=") else v <= bound)
        )
    return out


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median drafts/s (the lower middle of an even count), and every run's rate.

    The figures stay those of one real run (never a mix of runs); ``runs`` keeps each run's
    drafts/s and CPU per draft, so the spread is reported next to the figure.
    """
    ranked = sorted(runs, key=lambda r: r["throughput_per_s"] or 0.0)
    chosen = dict(ranked[(len(ranked) - 1) // 2])
    if len(runs) > 1:
        chosen["runs"] = [
            {
                "throughput_per_s": r["throughput_per_s"],
                "process_cpu_ms_per_draft": r.get("process_cpu_ms_per_draft"),
            }
            for r in runs
        ]
    return chosen


def median(values: list[float | None]) -> float | None:
    """The median of the known values (the lower middle of an even count)."""
    known = sorted(v for v in values if v is not None)
    return known[(len(known) - 1) // 2] if known else None


def rate_cell(run: dict[str, Any]) -> str:
    """Drafts/s, with the range over the runs when the scenario was repeated."""
    tp = _fmt(run["throughput_per_s"])
    rates = [r["throughput_per_s"] for r in run.get("runs", ()) if r["throughput_per_s"]]
    if len(rates) < 2:
        return tp
    return f"{tp} (median of {len(run['runs'])}: {_fmt(min(rates))}-{_fmt(max(rates))})"


def finish(doc: dict[str, Any]) -> None:
    """Fill in the ratios and the target check."""
    base = doc["baselines"]
    faust = base["faust_passthrough"]["throughput_per_s"]
    raw = base["aiokafka_raw"]["throughput_per_s"]
    ratios: dict[str, Any] = {}
    for key, section in doc["worker"].items():
        tp = section["saturation"]["throughput_per_s"]
        ratios[f"worker_{key}_vs_faust_passthrough"] = _ratio(tp, faust)
        ratios[f"worker_{key}_vs_aiokafka_raw"] = _ratio(tp, raw)
    ratios["faust_passthrough_vs_aiokafka_raw"] = _ratio(faust, raw)
    many = [k for k in doc["worker"] if k != "tenants_1"]
    if many and "tenants_1" in doc["worker"]:
        ratios["many_tenants_vs_1"] = _ratio(
            doc["worker"][many[0]]["saturation"]["throughput_per_s"],
            doc["worker"]["tenants_1"]["saturation"]["throughput_per_s"],
        )
    doc["ratios"] = ratios
    doc["ratio_vs_faust_passthrough"] = ratios["worker_tenants_1_vs_faust_passthrough"]
    doc["targets"] = targets(doc)


def cpu_cell(run: dict[str, Any]) -> str:
    """``worker + sink = total`` CPU ms per draft (``worker (sink inside)`` when in-process)."""
    if "total_cpu_ms_per_draft" not in run:
        return _fmt(run.get("process_cpu_ms_per_draft"), ".3f")
    worker = _fmt(run["worker_cpu_ms_per_draft"], ".3f")
    if run.get("ledger_sink_mode") == "in-process":
        return f"{worker} (sink inside)"
    sink = _fmt(run.get("ledger_sink_cpu_ms_per_draft"), ".3f")
    return f"{worker} + {sink} = {_fmt(run['total_cpu_ms_per_draft'], '.3f')}"


def cpu_line(run: dict[str, Any]) -> str:
    """The CPU per draft of a worker run, said in full."""
    if run.get("ledger_sink_mode") == "in-process":
        return f"CPU ms/draft: worker {run['worker_cpu_ms_per_draft']} (ledger sink inside it)"
    startup = run.get("ledger_sink_startup_cpu_s")
    return (
        f"CPU ms/draft: worker {run.get('worker_cpu_ms_per_draft')}"
        f" + ledger sink {run.get('ledger_sink_cpu_ms_per_draft')}"
        f" = {run.get('total_cpu_ms_per_draft')} (both whole processes; the sink's start-up"
        f" was {startup} s)"
    )


def stages_line(run: dict[str, Any]) -> str:
    """Where a worker run's batches spent their time, per batch."""
    return (
        f"ms per batch (window / evidence / decide / publish): "
        f"{_stages_cell(run.get('stage_ms_per_batch'))}, mean batch {run.get('mean_batch_size')}"
    )


def ledger_line(run: dict[str, Any]) -> str:
    """Whether the ledger of a saturation run arrived in Postgres."""
    led = run.get("ledger") or {}
    return (
        f"ledger {'arrived' if led.get('arrived') else '**NOT COMPLETE**'}:"
        f" {led.get('decided_drafts')} decided drafts, {led.get('batches_published')} batches"
        f" published, {led.get('batches_committed_by_sink')} committed by the sink,"
        f" {led.get('drafts_with_rows_in_postgres')} drafts with rows in Postgres"
        f" ({led.get('rows_in_postgres')} rows); sink caught up"
        f" {led.get('sink_caught_up_s_after_outputs')} s after the last output"
    )


def _fmt(v: Any, spec: str = ".0f") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return format(v, spec) if isinstance(v, int | float) else str(v)


def _row(*cells: Any) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table(doc: dict[str, Any]) -> str:
    """The short Markdown table printed to the terminal (and pasted into docs/benchmarks.md)."""
    faust = doc["baselines"]["faust_passthrough"]["throughput_per_s"]
    sink = doc.get("settings", {}).get("ledger_sink", "in-process")
    cpu_head = (
        "CPU ms/draft (worker + ledger sink = total)"
        if sink == "process"
        else "CPU ms/draft (ledger sink in the worker)"
    )
    lines = [
        _row(
            "run", "drafts/s", "× Faust passthrough", cpu_head, "store queries/draft",
            "peak RSS MiB",
        ),
        "|---|---:|---:|---:|---:|---:|",
    ]  # fmt: skip
    for name, b in doc["baselines"].items():
        tp = b["throughput_per_s"]
        lines.append(
            _row(
                name, rate_cell(b), _fmt(_ratio(tp, faust), ".2f"), cpu_cell(b), "-",
                _fmt(b.get("peak_rss_mb")),
            )
        )  # fmt: skip
    for section in doc["worker"].values():
        s = section["saturation"]
        tp = s["throughput_per_s"]
        lines.append(
            _row(
                f"worker, {s['tenants']} tenant(s)",
                rate_cell(s),
                _fmt(_ratio(tp, faust), ".2f"),
                cpu_cell(s),
                _fmt(s.get("store_queries_per_draft"), ".4f"),
                _fmt(s.get("peak_rss_mb")),
            )
        )
    if "scale_out" in doc:
        so = doc["scale_out"]
        for k in ("processes_1", "processes_2"):
            tp = so[k]["throughput_per_s"]
            parts = doc["settings"]["partitions"]
            name = f"worker ×{so[k]['processes']} process(es), {parts} partitions"
            ratio = _fmt(_ratio(tp, faust), ".2f")
            lines.append(_row(name, rate_cell(so[k]), ratio, cpu_cell(so[k]), "-", "-"))
    lines += [
        "",
        _row(
            "run",
            "offered/s",
            "achieved/s",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "batch",
            "ms per batch: window / evidence / decide / publish",
        ),
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    series = [
        (f"worker, {section['saturation']['tenants']} tenant(s)", section.get("latency", []))
        for section in doc["worker"].values()
    ]
    series.append(("Faust passthrough", doc.get("faust_passthrough_latency", [])))
    for name, points in series:
        for p in points:
            lines.append(
                _row(
                    f"{name}, {round(p['fraction'] * 100)} %",
                    *(_fmt(p[k]) for k in ("offered_per_s", "achieved_per_s")),
                    *(_fmt(p[k]) for k in ("p50_ms", "p95_ms", "p99_ms")),
                    _fmt(p.get("mean_batch_size")),
                    _stages_cell(p.get("stage_ms_per_batch")),
                )
            )
    lines += ["", "| target | value | met |", "|---|---:|---|"]
    for name, t in doc["targets"].items():
        met = {True: "yes", False: "**no**", None: "-"}[t["met"]]
        lines.append(_row(f"{name} {t['target']}", _fmt(t["value"], ".3g"), met))
    return "\n".join(lines)


def chart(doc: dict[str, Any], path: Path) -> None:
    """Throughput and latency against offered load, the baselines drawn in."""
    import matplotlib  # noqa: PLC0415 - only when a chart is wanted

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=90)
    colours = {"tenants_1": "tab:blue", "tenants_50": "tab:orange"}
    for key, section in doc["worker"].items():
        pts = section.get("latency", [])
        label = f"worker, {section['saturation']['tenants']} tenant(s)"
        c = colours.get(key, "tab:green")
        sat = section["saturation"]["throughput_per_s"]
        if pts:
            ax1.plot(
                [p["offered_per_s"] for p in pts],
                [p["achieved_per_s"] for p in pts],
                "o-",
                color=c,
                label=label,
            )
            for q, style in (("p50_ms", ":"), ("p95_ms", "--"), ("p99_ms", "-")):
                ax2.plot(
                    [p["offered_per_s"] for p in pts],
                    [p[q] for p in pts],
                    style,
                    marker="o",
                    color=c,
                    label=f"{label} {q[:3]}",
                )
        if sat:
            ax1.axhline(sat, color=c, linestyle=":", linewidth=1, label=f"{label} saturated")
    fpts = doc.get("faust_passthrough_latency", [])
    if fpts:
        ax2.plot(
            [p["offered_per_s"] for p in fpts],
            [p["p99_ms"] for p in fpts],
            "-",
            marker="s",
            color="grey",
            label="Faust passthrough p99",
        )
    for name, style in (("faust_passthrough", "--"), ("aiokafka_raw", "-.")):
        tp = doc["baselines"][name]["throughput_per_s"]
        if tp:
            ax1.axhline(tp, color="black", linestyle=style, linewidth=1, label=f"{name} saturated")
    offered = [p["offered_per_s"] for s in doc["worker"].values() for p in s.get("latency", [])]
    if offered:
        lo, hi = min(offered) * 0.8, max(offered) * 1.1
        ax1.plot([lo, hi], [lo, hi], color="lightgrey", linewidth=0.8, label="achieved = offered")
    ax1.set_yscale("log")
    ax1.set_xlabel("offered drafts/s")
    ax1.set_ylabel("drafts/s (log)")
    ax1.set_title("Throughput")
    ax1.legend(fontsize=7, loc="lower right")
    ax2.axhline(100, color="red", linewidth=0.8, label="p99 target 100 ms")
    ax2.set_xlabel("offered drafts/s")
    ax2.set_ylabel("draft → output latency, ms")
    ax2.set_yscale("log")
    ax2.set_title("Latency (produce → output timestamps)")
    ax2.legend(fontsize=7)
    fig.suptitle(
        f"grounding-worker e2e bench {doc['meta']['started']} ({doc['meta']['mode']})", fontsize=9
    )
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write(doc: dict[str, Any], json_path: Path) -> None:
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(doc, indent=2, default=str) + "\n")


def _stages_cell(stages: dict[str, float] | None) -> str:
    """``window / evidence / decide / publish`` in ms, or ``-`` (a baseline has no stages)."""
    if not stages:
        return "-"
    return " / ".join(_fmt(stages.get(k)) for k in ("window", "evidence", "decide", "publish"))
