"""Write the Grafana dashboard of the worker, ``deploy/grafana/grounding-worker.json``.

    .venv/bin/python scripts/gen_dashboard.py

The panels are declared once here, as data; tests/unit/deploy/test_dashboard.py fails when the
committed JSON is stale. Every query reads only series the worker exports (checked against a
running worker by tests/e2e/test_metrics_coverage.py) and filters on the ``namespace`` label that
the scrape job in ``deploy/prometheus/prometheus.yml`` adds. How to read each panel:
docs/operations.md, "Reading the dashboard".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from dev.generators import write_artefact

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "deploy" / "grafana" / "grounding-worker.json"

NS = 'namespace=~"$namespace"'
RI = "$__rate_interval"
DS = {"type": "prometheus", "uid": "${datasource}"}


def q(expr: str, legend: str) -> dict[str, Any]:
    return {"expr": expr, "legendFormat": legend}


def rate(metric: str, by: str = "", where: str = "") -> str:
    sel = f"{metric}{{{NS}{', ' + where if where else ''}}}"
    grouping = f" by ({by})" if by else ""
    return f"sum{grouping} (rate({sel}[{RI}]))"


def quantile(phi: float, metric: str, by: str = "") -> str:
    labels = f"le, {by}" if by else "le"
    return f"histogram_quantile({phi}, sum by ({labels}) (rate({metric}_bucket{{{NS}}}[{RI}])))"


LAG = f"max by (topic, partition) (grounding_consumer_lag{{{NS}}})"
FINISHED = 'outcome=~"grounded|could_not_ground"'
CNG = 'outcome="could_not_ground"'

#: (row title, [(panel title, description, unit, kind, [targets])])
ROWS: list[tuple[str, list[tuple[str, str, str, str, list[dict[str, Any]]]]]] = [
    (
        "Traffic and verdicts",
        [
            (
                "Throughput by route",
                "Drafts decided per second, by route (grounded, regenerate, could_not_ground; "
                "unchanged = a redelivered draft answered from the turn's recorded state), and "
                "records dead-lettered.",
                "ops",
                "timeseries",
                [
                    q(rate("grounding_drafts_total", "outcome"), "{{outcome}}"),
                    q(rate("grounding_dead_letters_total"), "dead-lettered"),
                ],
            ),
            (
                "Could-not-ground share of finished turns",
                "could_not_ground / (grounded + could_not_ground): turns that end without a "
                "grounded answer. Alert GroundingCouldNotGroundRateHigh at 20 % for 15 min.",
                "percentunit",
                "timeseries",
                [
                    q(
                        f"{rate('grounding_drafts_total', where=CNG)}"
                        f" / {rate('grounding_drafts_total', where=FINISHED)}",
                        "could-not-ground share",
                    )
                ],
            ),
            (
                "Failure codes",
                "Failure codes found in decided drafts (both the regenerate and the "
                "could-not-ground route), by code (contract §3).",
                "ops",
                "timeseries",
                [q(rate("grounding_failure_codes_total", "code"), "{{code}}")],
            ),
            (
                "Dead letters by class",
                "Records written to agent.drafts.dlq per second, by dlq.error.class. Bad input "
                "(malformed_envelope, unsupported_schema_version, oversized, identity_mismatch) "
                "is the producer's to fix; infra_unavailable and internal_error are ours. "
                "Replay with `grounding-worker replay` (docs/operations.md).",
                "ops",
                "timeseries",
                [q(rate("grounding_dead_letters_total", "error_class"), "{{error_class}}")],
            ),
        ],
    ),
    (
        "Backlog",
        [
            (
                "Consumer lag by partition",
                "Records of agent.drafts not yet decided, per partition (the worst report of "
                "any pod). KEDA scales on the same lag, read from the broker.",
                "short",
                "timeseries",
                [q(LAG, "{{topic}} {{partition}}")],
            ),
            (
                "Total lag",
                "Sum over partitions. Alert GroundingConsumerLagHigh above 24,000 for 10 min "
                "(12 replicas x KEDA's 2,000 target: scaling is exhausted).",
                "short",
                "stat",
                [q(f"sum ({LAG})", "total lag")],
            ),
            (
                "Stall watchdog re-reads",
                "Partitions sought back to their committed offset because they lagged without "
                "progress (docs/decisions.md, stall watchdog). A steady rate means records are "
                "being passed over and re-read.",
                "short",
                "timeseries",
                [
                    q(
                        f"sum (increase(grounding_partition_rereads_total{{{NS}}}[{RI}]))",
                        "re-reads",
                    )
                ],
            ),
        ],
    ),
    (
        "Latency and batches",
        [
            (
                "Draft latency, end to end (p50, p99)",
                "From the draft's produced_at (else its record's timestamp) to the broker "
                "acknowledging its outputs: what an agent waits for its verdict. Producer clocks "
                "count; lag shows here first.",
                "s",
                "timeseries",
                [
                    q(quantile(0.5, "grounding_draft_latency_seconds"), "p50"),
                    q(quantile(0.99, "grounding_draft_latency_seconds"), "p99"),
                ],
            ),
            (
                "Rebalances",
                "Consumer-group rebalances, as counted by the pod that saw the most (every pod "
                "takes part in each one). Each pauses every partition; a steady rate means pods "
                "are restarting or the group is unstable.",
                "short",
                "timeseries",
                [
                    q(
                        f"max (increase(grounding_rebalances_total{{{NS}}}[{RI}]))",
                        "rebalances",
                    )
                ],
            ),
            (
                "Batch processing time (p50, p99)",
                "From taking a batch to its outputs acknowledged by the broker. Every draft of "
                "a batch waits this long, plus up to GW_BATCH_WAIT_S to fill the batch.",
                "s",
                "timeseries",
                [
                    q(quantile(0.5, "grounding_batch_processing_seconds"), "p50"),
                    q(quantile(0.99, "grounding_batch_processing_seconds"), "p99"),
                ],
            ),
            (
                "Batch time by stage (mean per batch)",
                "Where a batch's time goes: window (waiting for the batch to close), evidence "
                "(admission and the store look-up left after the read-ahead), decide, publish "
                "(until the broker acknowledged the outputs). A growing evidence share means "
                "the stores are slow; a growing decide share, CPU.",
                "s",
                "timeseries",
                [
                    q(
                        f"{rate('grounding_batch_stage_seconds_sum', 'stage')}"
                        f" / {rate('grounding_batch_stage_seconds_count', 'stage')}",
                        "{{stage}}",
                    )
                ],
            ),
            (
                "Batch size",
                "Records per processed batch: p50, p99 and mean. Small batches under load mean "
                "the batch window closes first (GW_BATCH_WAIT_S); batches at GW_BATCH_SIZE "
                "mean the worker is saturated.",
                "short",
                "timeseries",
                [
                    q(quantile(0.5, "grounding_batch_size"), "p50"),
                    q(quantile(0.99, "grounding_batch_size"), "p99"),
                    q(
                        f"{rate('grounding_batch_size_sum')}"
                        f" / {rate('grounding_batch_size_count')}",
                        "mean",
                    ),
                ],
            ),
            (
                "Evidence store latency (p50, p99)",
                "One batched look-up (one query per table or collection for a tenant's "
                "citations), by store.",
                "s",
                "timeseries",
                [
                    q(quantile(0.5, "grounding_store_fetch_seconds", "store"), "p50 {{store}}"),
                    q(quantile(0.99, "grounding_store_fetch_seconds", "store"), "p99 {{store}}"),
                ],
            ),
            (
                "Store retries",
                "Retries of an unavailable evidence store, by store. Any sustained rate means "
                "partitions are waiting (alert GroundingStoresUnreachable).",
                "ops",
                "timeseries",
                [q(rate("grounding_store_retries_total", "store"), "{{store}}")],
            ),
        ],
    ),
    (
        "Processes",
        [
            (
                "Resident memory per pod",
                "RSS of each pod's process. Workers: limit 2 GiB (peak measured 150-160 MiB at "
                "the default batch of ~2 KB drafts, up to 1.3 GiB on 0.9 MiB drafts); ledger "
                "sinks: limit 512 MiB (idle ~58 MiB).",
                "bytes",
                "timeseries",
                [q(f"process_resident_memory_bytes{{{NS}}}", "{{pod}}")],
            ),
            (
                "CPU per pod",
                "Cores used by each pod's process (one event loop: a worker uses about one "
                "core at most, a ledger sink far less).",
                "short",
                "timeseries",
                [q(f"rate(process_cpu_seconds_total{{{NS}}}[{RI}])", "{{pod}}")],
            ),
            (
                "Versions running",
                "Pods per version, workers and ledger sinks (grounding_build_info).",
                "short",
                "stat",
                [q(f"count by (version) (grounding_build_info{{{NS}}})", "{{version}}")],
            ),
        ],
    ),
]


def panel(
    pid: int,
    title: str,
    desc: str,
    unit: str,
    kind: str,
    targets: list[Any],
    x: int,
    y: int,
    w: int,
) -> dict[str, Any]:
    refs = [{**t, "refId": chr(ord("A") + i), "datasource": DS} for i, t in enumerate(targets)]
    out: dict[str, Any] = {
        "id": pid,
        "type": kind,
        "title": title,
        "description": desc,
        "datasource": DS,
        "gridPos": {"h": 8, "w": w, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": refs,
    }
    if kind == "timeseries":
        out["options"] = {
            "legend": {"displayMode": "list", "placement": "bottom"},
            "tooltip": {"mode": "multi"},
        }
    else:
        out["options"] = {"reduceOptions": {"calcs": ["lastNotNull"]}}
    return out


def build() -> str:
    panels: list[dict[str, Any]] = []
    pid, y = 1, 0
    for row_title, row_panels in ROWS:
        panels.append(
            {
                "id": pid,
                "type": "row",
                "title": row_title,
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
                "panels": [],
            }
        )
        pid, y = pid + 1, y + 1
        width = 24 // 2 if len(row_panels) % 2 == 0 else 24 // 3
        for i, (title, desc, unit, kind, targets) in enumerate(row_panels):
            per_line = 24 // width
            x = (i % per_line) * width
            panels.append(
                panel(pid, title, desc, unit, kind, targets, x, y + (i // per_line) * 8, width)
            )
            pid += 1
        y += ((len(row_panels) + (24 // width) - 1) // (24 // width)) * 8
    dashboard = {
        "uid": "grounding-worker",
        "title": "Grounding worker",
        "description": "Throughput, verdicts, dead letters, lag, latency and resources of the "
        "grounding worker (docs/operations.md).",
        "tags": ["grounding-worker"],
        "editable": True,
        "graphTooltip": 1,
        "refresh": "30s",
        "schemaVersion": 39,
        "time": {"from": "now-6h", "to": "now"},
        "timezone": "utc",
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "Data source",
                    "type": "datasource",
                    "query": "prometheus",
                    "current": {},
                    "hide": 0,
                },
                {
                    "name": "namespace",
                    "label": "Namespace",
                    "type": "query",
                    "datasource": DS,
                    "query": {
                        "query": "label_values(grounding_drafts_total, namespace)",
                        "refId": "namespace",
                    },
                    "refresh": 2,
                    "includeAll": False,
                    "multi": False,
                    "current": {},
                    "hide": 0,
                },
            ]
        },
        "annotations": {"list": []},
        "panels": panels,
    }
    return json.dumps(dashboard, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    return write_artefact(OUT, build())


if __name__ == "__main__":
    sys.exit(main())
