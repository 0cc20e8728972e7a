"""Every series the Grafana dashboard and the Prometheus rules read is one a running worker exports.

A worker process decides a grounded draft, a could-not-ground draft and a malformed record (so
its labelled counters have samples), then its ``/metrics`` is compared with the metric names and
labels found in ``deploy/grafana/*.json`` and ``deploy/prometheus/*.yaml``
(``scripts/promql_names.py``). A renamed metric or label fails here instead of leaving a panel
blank or an alert silent.

Series that only exist once a parallel change is merged are listed, in one place, in
``PENDING_METRICS`` and ``PENDING_LABELS`` below. The test fails as soon as one of them is
exported, so the list is emptied at merge time rather than forgotten.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families

from dev.generators import promql_names
from dev.harness import Bus, WorkerProcess, answer, draft, running, unique_id
from worker.runtime.metrics import Metrics

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]

#: Metrics the dashboard reads that the worker exports only after the prod-ready change
#:: the process collector and the build-info gauge.
PENDING_METRICS: set[str] = set()
#: (metric, label) pairs read by the dashboard and the rules that the worker exports only after
#: the prod-ready change: the ``store`` label of the store metrics.
PENDING_LABELS: set[tuple[str, str]] = set()
#: Made by Prometheus itself, not exported by the worker.
PROMETHEUS_SERIES = {"up"}
#: Added by the scrape job (deploy/prometheus/prometheus.yml), not by the worker.
TARGET_LABELS = {"job", "instance", "namespace", "pod"}


def sample_names(family_name: str, kind: str) -> list[str]:
    """The sample names a metric family of this type is exported as."""
    if kind == "counter":
        return [f"{family_name}_total"]
    if kind == "histogram":
        return [f"{family_name}_bucket", f"{family_name}_sum", f"{family_name}_count"]
    if kind == "summary":
        return [family_name, f"{family_name}_sum", f"{family_name}_count"]
    if kind == "info":
        return [f"{family_name}_info"]
    return [family_name]


def declared_labels() -> dict[str, set[str]]:
    """Label names each family of the worker's registry declares (for families with no sample)."""
    out: dict[str, set[str]] = {}
    for value in vars(Metrics()).values():
        if isinstance(value, MetricWrapperBase):
            out[value._name] = set(value._labelnames)
    return out


def exported(text: str) -> dict[str, set[str]]:
    """Sample name -> label names, from a /metrics exposition."""
    declared = declared_labels()
    out: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for name in sample_names(family.name, family.type):
            labels = {k for s in family.samples if s.name == name for k in s.labels}
            if not any(s.name == name for s in family.samples):
                # Declared, no sample yet (a labelled metric nothing has touched).
                labels = declared.get(family.name, set()) | (
                    {"le"} if name.endswith("_bucket") else set()
                )
            out[name] = labels
    return out


@pytest.fixture(scope="module")
async def metrics_text(
    new_worker: Callable[..., WorkerProcess],
) -> AsyncIterator[str]:
    worker = new_worker("metrics-coverage")
    async with running(worker) as (_, bus):
        await drive(bus)
        # The lag gauge is set after a batch, or by the stall watchdog's next check (every
        # GW_STALL_CHECK_INTERVAL_S): wait for its first sample.
        deadline = time.monotonic() + 30
        text = await worker.metrics()
        while "grounding_consumer_lag{" not in text and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            text = await worker.metrics()
        yield text


async def drive(bus: Bus) -> None:
    """One record down each labelled path: grounded, could-not-ground, dead-lettered."""
    grounded = unique_id("t-cov-ok")
    await bus.send(draft(grounded, answer("Checkout latency rose after the deploy [OBS-1001].")))
    refused = unique_id("t-cov-cng")
    await bus.send(draft(refused, answer("I found nothing in scope.", no_grounding=True)))
    broken = unique_id("t-cov-dlq")
    await bus.send(b"not json", key=broken)
    await bus.wait_for("validated", key=grounded)
    await bus.wait_for("could_not_ground", key=refused)
    await bus.wait_for("dlq", key=broken)


async def test_every_series_the_dashboard_and_rules_read_is_exported(metrics_text: str) -> None:
    have = exported(metrics_text)
    exprs = promql_names.all_exprs()
    assert len(exprs) >= 20
    missing: list[str] = []
    pending_seen: set[object] = set()
    for where, expr in exprs:
        usage = promql_names.scan(expr)
        for metric in sorted(usage.metrics):
            if metric in PROMETHEUS_SERIES:
                continue
            if metric in PENDING_METRICS:
                pending_seen.add(metric)
                assert metric not in have, (
                    f"{metric} is exported now: remove it from PENDING_METRICS"
                )
            elif metric not in have:
                missing.append(f"{where}: no series {metric}")
        labels_of_expr = set().union(*(have.get(m, set()) for m in usage.metrics))
        for m in usage.matchers:
            if m.label in TARGET_LABELS or m.metric in PROMETHEUS_SERIES | PENDING_METRICS:
                continue
            if (m.metric, m.label) in PENDING_LABELS:
                pending_seen.add((m.metric, m.label))
            elif m.label not in have.get(m.metric, set()):
                missing.append(f"{where}: {m.metric} has no label {m.label}")
        for label in sorted(usage.grouping - TARGET_LABELS):
            pending = {(metric, label) for metric in usage.metrics} & PENDING_LABELS
            if pending:
                pending_seen |= pending
                continue
            if usage.metrics <= PENDING_METRICS | PROMETHEUS_SERIES:
                continue
            if label not in labels_of_expr:
                missing.append(f"{where}: no series of {sorted(usage.metrics)} has label {label}")
    assert not missing, "\n".join(missing)
    for metric, label in PENDING_LABELS:
        assert label not in have.get(metric, set()), (
            f"{metric} has label {label} now: remove it from PENDING_LABELS"
        )
    unused = (PENDING_METRICS | PENDING_LABELS) - pending_seen
    assert not unused, f"PENDING entries no query reads: {unused}"


async def test_the_drive_left_samples_on_every_labelled_path(metrics_text: str) -> None:
    """The comparison above is only as good as the samples: each labelled family has one."""
    families = {f.name: f for f in text_string_to_metric_families(metrics_text)}
    labels = {
        name: {(k, v) for s in families[name].samples for k, v in s.labels.items()}
        for name in ("grounding_drafts", "grounding_failure_codes", "grounding_dead_letters")
    }
    assert ("outcome", "grounded") in labels["grounding_drafts"]
    assert ("outcome", "could_not_ground") in labels["grounding_drafts"]
    assert ("code", "agent_no_grounding") in labels["grounding_failure_codes"]
    assert ("error_class", "malformed_envelope") in labels["grounding_dead_letters"]
    lag = families["grounding_consumer_lag"].samples
    assert lag
    assert {s.labels["partition"] for s in lag} <= {"0", "1"}
    assert len({s.labels["topic"] for s in lag}) == 1
    assert families["grounding_rebalances"].samples[0].value >= 1
    latency = {
        s.labels["since"]: s.value
        for s in families["grounding_draft_latency_seconds"].samples
        if s.name == "grounding_draft_latency_seconds_count"
    }
    assert latency["produced_at"] >= 2  # each decided draft, once its outputs were acknowledged


def test_exported_names_follow_the_metric_types() -> None:
    text = (
        '# HELP a_total x\n# TYPE a_total counter\na_total{k="v"} 1.0\n'
        '# HELP h x\n# TYPE h histogram\nh_bucket{le="1.0"} 1.0\nh_bucket{le="+Inf"} 1.0\n'
        "h_sum 1.0\nh_count 1.0\n"
        "# HELP grounding_drafts_total x\n# TYPE grounding_drafts_total counter\n"
    )
    got = exported(text)
    assert got["a_total"] == {"k"}
    assert got["h_bucket"] == {"le"}
    assert got["h_count"] == set()
    assert got["grounding_drafts_total"] == {"outcome"}  # declared, no sample yet
    assert "a" not in got
