"""The shell of ``check``: read the file (or the batch) and the options, pick the evidence, print
the report."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from pydantic import ValidationError

from worker.core import DraftKind, EvidenceStore, PolicyBook, dumps_json
from worker.faults import GaveUpFault, GroundingFault
from worker.faults import ToolUsageError as UsageError
from worker.settings import Settings
from worker.tools.check import (
    EXIT_STORES_DOWN,
    EXIT_UNUSABLE,
    BareOutput,
    CheckRequest,
    check,
    readable,
)
from worker.tools.check_batch import (
    BatchInputError,
    BatchItem,
    batch_exit_code,
    batch_items,
    batch_json,
    batch_lines,
    batch_result,
    is_batch,
    unreadable_report,
)
from worker.tools.evidence_fixture import describe_fixture_error, load_fixture


def _bare(
    *, tenant: str | None, user: str | None, groups: tuple[str, ...], kind: str
) -> BareOutput | None:
    """Who a bare output is for, or ``None`` for envelopes."""
    if tenant is not None or user is not None:
        if not tenant or not user:
            raise UsageError("a bare output needs both --tenant and --user")
        if kind not in {k.value for k in DraftKind}:
            raise UsageError(f"--kind must be answer, proposal or report, not {kind!r}")
        return BareOutput(tenant, user, groups, kind)
    if groups or kind != "answer":
        raise UsageError("--group and --kind describe a bare output: give --tenant and --user")
    return None


def _content(draft: Path) -> bytes:
    try:
        return sys.stdin.buffer.read() if str(draft) == "-" else draft.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {draft}: {exc.strerror or type(exc).__name__}") from None


def _batch_items(draft: Path, *, show_messages: bool, json_output: bool) -> list[BatchItem]:
    if show_messages and not json_output:
        raise UsageError("--show-messages on a directory or .jsonl file needs --json")
    return batch_items(draft)


def _policies(settings: Settings, path: Path | None) -> PolicyBook:
    path = path or settings.policy_file
    if path is None:
        return PolicyBook()
    try:
        return PolicyBook.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        # Where and why, without echoing the input: an operator's file, but keep the line short.
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in exc.errors(include_url=False, include_input=False)[:3]
        )
        raise UsageError(f"cannot use policy file {path}: {problems}") from None
    except OSError as exc:
        raise UsageError(f"cannot use policy file {path}: {type(exc).__name__}") from None


def _evidence(settings: Settings, fixture: Path | None) -> AbstractAsyncContextManager[Any]:
    if fixture is not None:
        try:
            store = load_fixture(fixture)
        except (OSError, ValidationError, ValueError) as exc:
            raise UsageError(describe_fixture_error(fixture, exc)) from None

        @asynccontextmanager
        async def fixed() -> AsyncIterator[EvidenceStore]:
            yield store

        return fixed()
    from worker.stores.evidence import open_evidence  # noqa: PLC0415 - drivers only when live

    return open_evidence(settings)


async def _run(
    settings: Settings,
    request: CheckRequest,
    fixture: Path | None,
    policies: PolicyBook,
    show_messages: bool,
) -> dict[str, Any]:
    async with _evidence(settings, fixture) as store:
        return await check(
            request,
            store,
            policies,
            datetime.now(UTC),
            max_bytes=settings.max_draft_bytes,
            show_messages=show_messages,
        )


class _DraftOptions(NamedTuple):
    """What every draft of a run is evaluated as (``CheckRequest`` without the content)."""

    bare: BareOutput | None
    attempt: int | None
    after_regeneration: bool


class BatchStoresDownError(GaveUpFault):
    """The stores failed while checking the draft at ``source`` (exit 3)."""

    def __init__(self, source: str, fault: Exception) -> None:
        super().__init__(str(fault))
        self.source = source
        self.fault = fault


async def _run_batch(
    settings: Settings,
    items: list[BatchItem],
    options: _DraftOptions,
    *,
    fixture: Path | None,
    policies: PolicyBook,
    show_messages: bool,
) -> list[dict[str, Any]]:
    """Every draft's report in order, against one evidence store opened once."""
    results = []
    async with _evidence(settings, fixture) as store:
        for item in items:
            if item.content is None:
                results.append(batch_result(item, unreadable_report(item)))
                continue
            request = CheckRequest(item.content, *options)
            try:
                report = await check(
                    request,
                    store,
                    policies,
                    datetime.now(UTC),
                    max_bytes=settings.max_draft_bytes,
                    show_messages=show_messages,
                )
            except (GroundingFault, OSError, TimeoutError) as exc:
                raise BatchStoresDownError(item.source, exc) from exc
            results.append(batch_result(item, report))
    return results


def _write_json(out: TextIO, body: Any) -> None:
    out.write(dumps_json(body, indent=True) + "\n")


def _write_lines(out: TextIO, lines: list[str]) -> None:
    out.write("\n".join(lines) + "\n")


def run_check(
    settings: Settings,
    *,
    draft: Path,
    evidence: Path | None,
    tenant: str | None,
    user: str | None,
    groups: tuple[str, ...],
    kind: str,
    attempt: int | None,
    after_regeneration: bool,
    policy: Path | None,
    show_messages: bool,
    json_output: bool,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run one check, or one per draft of a directory or JSON Lines file (``check_batch``);
    print the report on ``out``; return the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    batch = is_batch(draft)
    try:
        if batch:
            items = _batch_items(draft, show_messages=show_messages, json_output=json_output)
        else:
            content = _content(draft)
        options = _DraftOptions(
            _bare(tenant=tenant, user=user, groups=groups, kind=kind), attempt, after_regeneration
        )
        policies = _policies(settings, policy)
        if not batch:
            request = CheckRequest(content, *options)
            result = asyncio.run(_run(settings, request, evidence, policies, show_messages))
            if json_output:
                _write_json(out, result)
            else:
                _write_lines(out, readable(result))
            return int(result["exit_code"])
        results = asyncio.run(
            _run_batch(
                settings,
                items,
                options,
                fixture=evidence,
                policies=policies,
                show_messages=show_messages,
            )
        )
    except (UsageError, BatchInputError) as exc:
        err.write(f"check: {exc}\n")
        return EXIT_UNUSABLE
    except BatchStoresDownError as exc:
        fault = exc.fault
        err.write(
            f"check: evidence stores unavailable ({type(fault).__name__}) at {exc.source}:"
            f" {fault}\n"
        )
        return EXIT_STORES_DOWN
    except (GroundingFault, OSError, TimeoutError) as exc:
        err.write(f"check: evidence stores unavailable ({type(exc).__name__}): {exc}\n")
        return EXIT_STORES_DOWN
    if json_output:
        _write_json(out, batch_json(results))
    else:
        _write_lines(out, batch_lines(results))
    return batch_exit_code(results)
