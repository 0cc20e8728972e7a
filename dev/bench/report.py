"""Figures out: the JSON document, the SVG plot, the terminal table and the target check."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


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
                "cpu_ms_per_draft_saturated": r.get("cpu_ms_per_draft_saturated"),
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


def write(doc: dict[str, Any], json_path: Path) -> None:
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(doc, indent=2, default=str) + "\n")


def _stages_cell(stages: dict[str, float] | None) -> str:
    """``window / evidence / decide / publish`` in ms, or ``-`` (a baseline has no stages)."""
    if not stages:
        return "-"
    return " / ".join(_fmt(stages.get(k)) for k in ("window", "evidence", "decide", "publish"))


# --- the interpreter -----------------------------------------------------------------------------


def interpreter() -> dict[str, Any]:
    """Which Python runs the benchmark (and the processes it starts: the same executable)."""
    config = str(sysconfig.get_config_var("CONFIG_ARGS") or "")
    shared = False
    with open("/proc/self/maps") as maps:
        shared = any("libpython" in line for line in maps)
    real = os.path.realpath(sys.executable)
    # Debian builds its /usr/bin/python3.X with PGO and LTO and keeps those flags out of
    # sysconfig (its changelog: "Don't propagate lto flags to the _sysconfigdata module").
    debian = real.startswith("/usr/bin/python3") and Path("/etc/debian_version").exists()
    return {
        "executable": sys.executable,
        "real": real,
        "distribution_build": "Debian (PGO+LTO, flags not in sysconfig)" if debian else None,
        "version": platform.python_version(),
        "compiler": platform.python_compiler(),
        "libpython": "shared library" if shared else "linked into the executable",
        "configure_enable_optimizations": "--enable-optimizations" in config,
        "configure_with_lto": "--with-lto" in config,
    }


def interpreter_line(i: dict[str, Any]) -> str:
    opts = [o for o in ("enable_optimizations", "with_lto") if i.get(f"configure_{o}")]
    return (
        f"{i['executable']} -> {i['real']} (Python {i['version']}, {i['compiler']}, "
        f"libpython {i['libpython']}"
        + (
            f", configured with {' '.join('--' + o.replace('_', '-') for o in opts)}"
            if opts
            else ""
        )
        + (f", {i['distribution_build']}" if i.get("distribution_build") else "")
        + ")"
    )


# --- figures -------------------------------------------------------------------------------------


def _at_rate(points: list[dict[str, Any]] | None, rate: float) -> dict[str, Any] | None:
    return next((p for p in points or () if p["offered_per_s"] == rate), None)


def finish(doc: dict[str, Any], *, tenants: int, headline_rate: float) -> None:
    """The ratios, the headline and the target check."""
    ratios: dict[str, Any] = {}
    cpu = doc.get("cpu_ms_per_draft_saturated", {})
    ratios["cpu_worker_vs_floor_saturated"] = _ratio(cpu.get("worker"), cpu.get("floor"))
    floor_pts = doc["floor"].get("latency", [])
    for key, section in doc["worker"].items():
        for p in section.get("latency", []):
            f = _at_rate(floor_pts, p["offered_per_s"])
            if f is not None:
                p["cpu_vs_floor"] = _ratio(p.get("cpu_ms_per_draft"), f.get("cpu_ms_per_draft"))
                for q in ("p50_ms", "p99_ms", "max_ms"):
                    # What the worker adds to the floor's latency at the same offered rate.
                    mine, floor_q = p.get(q), f.get(q)
                    p[f"{q[:-3]}_added_ms"] = (
                        None if mine is None or floor_q is None else mine - floor_q
                    )
        sat = section.get("saturation")
        if sat:
            ratios[f"worker_{key}_vs_floor_drafts_per_s"] = _ratio(
                sat["throughput_per_s"], doc["floor"]["faust"]["throughput_per_s"]
            )
            for name, b in doc.get("baselines", {}).items():
                ratios[f"worker_{key}_vs_{name}_drafts_per_s"] = _ratio(
                    sat["throughput_per_s"], b["throughput_per_s"]
                )
    many = doc["worker"].get(f"tenants_{tenants}", {}).get("saturation")
    one = doc["worker"].get("tenants_1", {}).get("saturation")
    if many and one:
        ratios["many_tenants_vs_1"] = _ratio(many["throughput_per_s"], one["throughput_per_s"])
    doc["ratios"] = ratios
    p1 = _at_rate(doc["worker"].get("tenants_1", {}).get("latency"), headline_rate)
    pn = _at_rate(doc["worker"].get(f"tenants_{tenants}", {}).get("latency"), headline_rate)
    doc["headline"] = {
        "cpu_ratio_vs_floor": ratios["cpu_worker_vs_floor_saturated"],
        f"p99_ms_at_{headline_rate:g}": p1["p99_ms"] if p1 else None,
        f"p99_ms_at_{headline_rate:g}_{tenants}t": pn["p99_ms"] if pn else None,
    }
    doc["targets"] = targets(doc, tenants, headline_rate)


def headline_line(headline: dict[str, Any]) -> str:
    """``cpu_ratio_vs_floor=<x.xx> p99_ms_at_500=<ms> p99_ms_at_500_50t=<ms>`` (``nan``: none)."""
    cells = []
    for name, value in headline.items():
        bad = value is None or (isinstance(value, float) and math.isnan(value))
        spec = ".2f" if name.startswith("cpu") else ".0f"
        cells.append(f"{name}={'nan' if bad else format(value, spec)}")
    return " ".join(cells)


def targets(doc: dict[str, Any], tenants: int, rate: float) -> dict[str, Any]:
    """Each target with its value and whether it is met (reported, never asserted)."""
    out: dict[str, Any] = {
        "cpu_ratio_vs_floor": {"target": "<= 2.5", "value": doc["headline"]["cpu_ratio_vs_floor"]},
    }
    for key in ("tenants_1", f"tenants_{tenants}"):
        p = _at_rate(doc["worker"].get(key, {}).get("latency"), rate)
        n = key.split("_")[1]
        if p is None:
            continue
        out[f"p50_ms_at_{rate:g}_{n}t"] = {"target": "<= 10", "value": p["p50_ms"]}
        out[f"p99_ms_at_{rate:g}_{n}t"] = {"target": "<= 40", "value": p["p99_ms"]}
    worst = [
        p.get(f"pauses_over_{1000}ms")
        for section in doc["worker"].values()
        for p in section.get("latency", [])
    ]
    if worst:
        out["pauses_over_1s"] = {
            "target": "<= 0",
            "value": None if None in worst else sum(worst),
        }
    if "ratios" in doc and "many_tenants_vs_1" in doc["ratios"]:
        out["many_tenants_vs_1_drafts_per_s"] = {
            "target": ">= 0.8",
            "value": doc["ratios"]["many_tenants_vs_1"],
        }
    for key in ("tenants_1", f"tenants_{tenants}"):
        sat = doc["worker"].get(key, {}).get("saturation")
        if sat:
            out[f"store_queries_per_draft_{key}"] = {
                "target": "<= 0.05",
                "value": sat.get("store_queries_per_draft"),
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


def sat_line(run: dict[str, Any]) -> str:
    """A saturation run in one line: drafts/s and the process's CPU per draft."""
    return (
        f"{_fmt(run['throughput_per_s'])} drafts/s, "
        f"{_fmt(run.get('cpu_ms_per_draft_saturated'), '.3f')} ms CPU a draft "
        f"(the process while the timed drafts went through; whole process "
        f"{_fmt(run.get('process_cpu_ms_per_draft'), '.3f')})"
    )


def latency_line(points: list[dict[str, Any]]) -> str:
    """The latency points in one line."""
    return "; ".join(
        f"{p['offered_per_s']:g}/s: p50 {_fmt(p['p50_ms'])} p99 {_fmt(p['p99_ms'])} "
        f"max {_fmt(p['max_ms'])} ms, {p.get('pauses_over_1000ms')} pause(s) > 1 s, "
        f"{_fmt(p.get('cpu_ms_per_draft'), '.3f')} ms CPU a draft"
        for p in points
    )


def _cpu_of(run: dict[str, Any]) -> float | None:
    """CPU ms per draft of a saturated scenario: the median over its rounds (the figure the
    headline divides), else its one run's; a scale-out burst's is its processes' together."""
    rounds = [r.get("cpu_ms_per_draft_saturated") for r in run.get("runs", ())]
    if any(v is not None for v in rounds):
        return median(rounds)
    if "cpu_ms_per_draft_saturated" in run:
        return run["cpu_ms_per_draft_saturated"]  # type: ignore[no-any-return]
    return run.get("process_cpu_ms_per_draft") if "processes" in run else None


def table(doc: dict[str, Any]) -> str:
    """The Markdown tables printed to the terminal (and pasted into docs/benchmarks.md)."""
    floor = doc["floor"]["faust"]
    lines = [
        _row(
            "run (saturated)", "drafts/s", "CPU ms/draft (the process alone, median)",
            "× floor CPU",
            "× floor drafts/s", "store queries/draft", "peak RSS MiB",
        ),
        "|---|---:|---:|---:|---:|---:|---:|",
    ]  # fmt: skip
    fcpu = doc.get("cpu_ms_per_draft_saturated", {}).get("floor")
    rows: list[tuple[str, dict[str, Any]]] = [
        ("floor, Faust (worker's transport)", floor),
        ("floor, raw aiokafka", doc["floor"]["aiokafka_raw"]),
    ]
    if "floor_repeat" in doc:
        rows.append(("floor, Faust, again at the end (drift check)", doc["floor_repeat"]))
    rows += [(f"passthrough {k} (information only)", b) for k, b in doc["baselines"].items()]
    rows += [
        (f"worker, {s['saturation']['tenants']} tenant(s)", s["saturation"])
        for s in doc["worker"].values()
        if "saturation" in s
    ]
    if "scale_out" in doc:
        for k in ("processes_1", "processes_2"):
            rows.append(
                (f"worker ×{doc['scale_out'][k]['processes']} process(es)", doc["scale_out"][k])
            )
    for name, run in rows:
        cpu = _cpu_of(run)
        lines.append(
            _row(
                name,
                rate_cell(run),
                _fmt(cpu, ".3f"),
                _fmt(_ratio(cpu, fcpu), ".2f"),
                _fmt(_ratio(run["throughput_per_s"], floor["throughput_per_s"]), ".2f"),
                _fmt(run.get("store_queries_per_draft"), ".4f"),
                _fmt(run.get("peak_rss_mb")),
            )
        )
    lines += [
        "",
        _row(
            "run", "offered/s", "achieved/s", "p50 ms", "p99 ms", "max ms",
            "p50 / p99 added to the floor's, ms", "pauses > 1 s", "CPU ms/draft", "× floor CPU",
            "batch", "ms per batch: window / evidence / decide / publish",
        ),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]  # fmt: skip
    series = [("floor, Faust", doc["floor"].get("latency", []))]
    series += [
        (f"worker, {k.split('_')[1]} tenant(s)", s.get("latency", []))
        for k, s in doc["worker"].items()
    ]
    for name, points in series:
        for p in points:
            lines.append(
                _row(
                    name,
                    *(_fmt(p[k]) for k in ("offered_per_s", "achieved_per_s")),
                    *(_fmt(p[k]) for k in ("p50_ms", "p99_ms", "max_ms")),
                    f"{_fmt(p.get('p50_added_ms'))} / {_fmt(p.get('p99_added_ms'))}"
                    if "p99_added_ms" in p
                    else "-",
                    p.get("pauses_over_1000ms"),
                    _fmt(p.get("cpu_ms_per_draft"), ".3f"),
                    _fmt(p.get("cpu_vs_floor"), ".2f"),
                    _fmt(p.get("mean_batch_size")),
                    _stages_cell(p.get("stage_ms_per_batch")),
                )
            )
    lines += ["", "| target | value | met |", "|---|---:|---|"]
    for name, t in doc["targets"].items():
        met = {True: "yes", False: "**no**", None: "-"}[t["met"]]
        lines.append(_row(f"{name} {t['target']}", _fmt(t["value"], ".3g"), met))
    return "\n".join(lines)


# --- the plot ------------------------------------------------------------------------------------

_W, _H, _L, _R, _T, _B = 640, 360, 60, 170, 30, 45


def svg(doc: dict[str, Any]) -> str:
    """Latency (p50 and p99, log scale) against the offered rate, worker and floor, as SVG."""
    series: list[tuple[str, str, list[dict[str, Any]]]] = [
        ("floor", "#555555", doc["floor"].get("latency", []))
    ]
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c"]
    for n, (key, section) in enumerate(doc["worker"].items()):
        series.append((f"worker {key.split('_')[1]}t", colours[n % 3], section.get("latency", [])))
    rates: list[float] = sorted(
        {float(p["offered_per_s"]) for _, _, pts in series for p in pts}
    ) or [1.0]
    values = [
        v
        for _, _, pts in series
        for p in pts
        for v in (p.get("p50_ms"), p.get("p99_ms"))
        if isinstance(v, int | float) and v > 0
    ] or [1.0]
    lo = 10 ** math.floor(math.log10(min([*values, 10.0])))
    hi = 10 ** math.ceil(math.log10(max([*values, 40.0]) * 1.01))
    x0, x1 = min(rates), max(rates)

    def x(rate: float) -> float:
        span = (x1 - x0) or 1.0
        pad = 0.0 if x1 > x0 else 0.5
        return _L + (_W - _L - _R) * ((rate - x0) / span * (1 - 0.1) + 0.05 + pad * 0.9)

    def y(ms: float) -> float:
        frac = (math.log10(max(ms, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        return _H - _B - (_H - _T - _B) * frac

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{_W}" height="{_H}" fill="white"/>',
        f'<text x="{_L}" y="18" font-size="12">draft → output latency vs offered rate '
        f"({doc['meta']['mode']} run {doc['meta']['started']})</text>",
        f'<line x1="{_L}" y1="{_H - _B}" x2="{_W - _R}" y2="{_H - _B}" stroke="black"/>',
        f'<line x1="{_L}" y1="{_T}" x2="{_L}" y2="{_H - _B}" stroke="black"/>',
    ]
    decade = lo
    while decade <= hi:
        out.append(
            f'<line x1="{_L}" y1="{y(decade):.1f}" x2="{_W - _R}" y2="{y(decade):.1f}" '
            'stroke="#dddddd"/>'
            f'<text x="{_L - 6}" y="{y(decade) + 4:.1f}" text-anchor="end">{decade:g}</text>'
        )
        decade *= 10
    for rate in rates:
        out.append(
            f'<text x="{x(rate):.1f}" y="{_H - _B + 16}" text-anchor="middle">{rate:g}</text>'
        )
    out.append(
        f'<text x="{(_L + _W - _R) / 2}" y="{_H - 8}" text-anchor="middle">offered drafts/s</text>'
        f'<text x="14" y="{(_T + _H - _B) / 2}" transform="rotate(-90 14 {(_T + _H - _B) / 2})" '
        'text-anchor="middle">ms (log)</text>'
    )
    for target, label in ((10, "p50 target"), (40, "p99 target")):
        out.append(
            f'<line x1="{_L}" y1="{y(target):.1f}" x2="{_W - _R}" y2="{y(target):.1f}" '
            'stroke="red" stroke-dasharray="2,3"/>'
            f'<text x="{_W - _R + 4}" y="{y(target) + 4:.1f}" fill="red">{label} {target}</text>'
        )
    legend_y = _T + 60
    for name, colour, pts in series:
        for q, dash in (("p50_ms", "4,3"), ("p99_ms", "")):
            xy = [
                (x(p["offered_per_s"]), y(p[q]))
                for p in pts
                if isinstance(p.get(q), int | float) and p[q] > 0
            ]
            if not xy:
                continue
            path = " ".join(f"{a:.1f},{b:.1f}" for a, b in xy)
            out.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"'
                + (f' stroke-dasharray="{dash}"' if dash else "")
                + "/>"
            )
            out += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{colour}"/>' for a, b in xy]
            out.append(
                f'<line x1="{_W - _R + 4}" y1="{legend_y}" x2="{_W - _R + 24}" y2="{legend_y}" '
                f'stroke="{colour}" stroke-width="2"'
                + (f' stroke-dasharray="{dash}"' if dash else "")
                + f'/><text x="{_W - _R + 28}" y="{legend_y + 4}">{name} {q[:3]}</text>'
            )
            legend_y += 16
    out.append("</svg>")
    return "\n".join(out) + "\n"
