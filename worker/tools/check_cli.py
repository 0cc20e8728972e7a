"""The shell of ``check``: read the file and the options, pick the evidence, print the report."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import orjson
from pydantic import ValidationError

from worker.core.outputs import DraftKind
from worker.core.policy import PolicyBook
from worker.core.ports import EvidenceStore
from worker.faults import GroundingFault
from worker.settings import Settings
from worker.tools.check import (
    EXIT_STORES_DOWN,
    EXIT_UNUSABLE,
    BareOutput,
    CheckRequest,
    check,
    readable,
)
from worker.tools.evidence_fixture import load_fixture


class UsageError(Exception):
    """Options or input check cannot use (exit 2)."""


def _request(
    draft: Path,
    *,
    tenant: str | None,
    user: str | None,
    groups: tuple[str, ...],
    kind: str,
    attempt: int | None,
    after_regeneration: bool,
) -> CheckRequest:
    try:
        content = sys.stdin.buffer.read() if str(draft) == "-" else draft.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {draft}: {exc.strerror or type(exc).__name__}") from None
    bare = None
    if tenant is not None or user is not None:
        if not tenant or not user:
            raise UsageError("a bare output needs both --tenant and --user")
        if kind not in {k.value for k in DraftKind}:
            raise UsageError(f"--kind must be answer, proposal or report, not {kind!r}")
        bare = BareOutput(tenant, user, groups, kind)
    elif groups or kind != "answer":
        raise UsageError("--group and --kind describe a bare output: give --tenant and --user")
    return CheckRequest(content, bare, attempt, after_regeneration)


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
            raise UsageError(f"cannot use evidence file {fixture}: {type(exc).__name__}") from None

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
    """Run one check; print the report on ``out``; return the exit code."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        request = _request(
            draft,
            tenant=tenant,
            user=user,
            groups=groups,
            kind=kind,
            attempt=attempt,
            after_regeneration=after_regeneration,
        )
        policies = _policies(settings, policy)
        result = asyncio.run(_run(settings, request, evidence, policies, show_messages))
    except UsageError as exc:
        err.write(f"check: {exc}\n")
        return EXIT_UNUSABLE
    except (GroundingFault, OSError, TimeoutError) as exc:
        err.write(f"check: evidence stores unavailable ({type(exc).__name__}): {exc}\n")
        return EXIT_STORES_DOWN
    if json_output:
        out.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out.write("\n".join(readable(result)) + "\n")
    return int(result["exit_code"])
