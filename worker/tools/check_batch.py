"""``check`` on many drafts at once, for an agent's CI: a directory or a JSON Lines file.

The pure part of batch mode: which drafts an input holds, and how their reports add up to a
table, a JSON summary and one exit code. Each draft is checked exactly as ``check`` checks a file
alone (``worker.tools.check.check``), with the same options.

Decisions:

- A directory is a batch of its ``*.json`` files, sorted by name, not recursive; a file whose name
  ends in ``.jsonl`` is a batch of its lines, one draft per line; anything else (``-`` included)
  is one draft, with one draft's report and exit codes unchanged.
- A JSON Lines line is exactly what a producer would send as one record value. A blank line is
  skipped (it holds no draft); any other line that is not a draft the worker would take is that
  line's verdict, ``dead_letter`` with the class the worker would give it (``malformed_envelope``
  for a line that is not JSON), reported at ``file:line`` (1-based, counting blank lines), and
  the batch goes on. A file of the directory that cannot be read is its row, outcome
  ``unreadable``, and the batch goes on.
- Exit code: 2 when any draft is unusable (``dead_letter`` or ``unreadable``, as one such draft
  exits 2), else 1 when any is not grounded, else 0. An input that holds no draft at all exits 2:
  a CI step pointed at the wrong place must not pass. Stores that cannot be asked stop the batch
  (exit 3), as they would fail every draft after.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from worker.core import Outcome
from worker.faults import UsageFault
from worker.tools.check import EXIT_GROUNDED, EXIT_NOT_GROUNDED, EXIT_UNUSABLE

#: The outcome of a file of a directory that could not be read.
UNREADABLE = "unreadable"
#: Every outcome a batch row can have, in the order totals list them.
OUTCOMES = (
    Outcome.GROUNDED.value,
    Outcome.REGENERATE.value,
    Outcome.COULD_NOT_GROUND.value,
    Outcome.DEAD_LETTER.value,
    UNREADABLE,
)


class BatchInputError(UsageFault):
    """The batch itself cannot be read (exit 2)."""


class BatchItem(NamedTuple):
    """One draft of a batch: where it is, and its bytes (``None``: ``error`` says why not)."""

    file: str
    line: int | None
    content: bytes | None
    error: str | None = None

    @property
    def source(self) -> str:
        """``file``, or ``file:line`` for a line of a JSON Lines file."""
        return self.file if self.line is None else f"{self.file}:{self.line}"


def is_batch(path: Path) -> bool:
    """Whether ``path`` names a batch (a directory or a ``.jsonl`` file) rather than one draft."""
    return str(path) != "-" and (path.is_dir() or path.suffix == ".jsonl")


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def batch_items(path: Path) -> list[BatchItem]:
    """The drafts of the directory or JSON Lines file ``path``, in order."""
    if path.is_dir():
        try:
            files = sorted(p for p in path.glob("*.json") if not p.is_dir())
        except OSError as exc:
            raise BatchInputError(f"cannot read {path}: {_reason(exc)}") from None
        items = []
        for file in files:
            try:
                items.append(BatchItem(str(file), None, file.read_bytes()))
            except OSError as exc:
                items.append(BatchItem(str(file), None, None, f"cannot read: {_reason(exc)}"))
        if not items:
            raise BatchInputError(f"no drafts in {path}: it has no *.json file")
        return items
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise BatchInputError(f"cannot read {path}: {_reason(exc)}") from None
    items = [
        BatchItem(str(path), number, line.removesuffix(b"\r"))
        for number, line in enumerate(content.split(b"\n"), start=1)
        if line.strip()
    ]
    if not items:
        raise BatchInputError(f"no drafts in {path}: every line is blank")
    return items


def unreadable_report(item: BatchItem) -> dict[str, Any]:
    """The report of a file that could not be read."""
    return {"outcome": UNREADABLE, "exit_code": EXIT_UNUSABLE, "reason": item.error}


def batch_result(item: BatchItem, report: dict[str, Any]) -> dict[str, Any]:
    """One entry of ``--json``'s ``results``: where the draft is, then its report."""
    return {"file": item.file, "line": item.line, **report}


def batch_exit_code(results: list[dict[str, Any]]) -> int:
    """2 if any draft is unusable, else 1 if any is not grounded, else 0."""
    codes = {r["exit_code"] for r in results}
    if not results or EXIT_UNUSABLE in codes:
        return EXIT_UNUSABLE
    return EXIT_NOT_GROUNDED if EXIT_NOT_GROUNDED in codes else EXIT_GROUNDED


def _codes(result: dict[str, Any]) -> list[str]:
    """A row's distinct failure codes in order; a dead letter's class."""
    if result["outcome"] == Outcome.DEAD_LETTER.value:
        return [result["dead_letter_class"]]
    return list(dict.fromkeys(f["code"] for f in result.get("failures", [])))


def batch_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The totals of a batch: drafts per outcome, drafts per failure code and dead-letter class
    (a draft failing one code twice counts once), and the exit code."""
    outcomes = Counter(r["outcome"] for r in results)
    failure_codes: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    for r in results:
        if r["outcome"] == Outcome.DEAD_LETTER.value:
            classes[r["dead_letter_class"]] += 1
        elif r["outcome"] != UNREADABLE:
            failure_codes.update(_codes(r))
    return {
        "drafts": len(results),
        "outcomes": {o: outcomes[o] for o in OUTCOMES},
        "failure_codes": dict(sorted(failure_codes.items())),
        "dead_letter_classes": dict(sorted(classes.items())),
        "exit_code": batch_exit_code(results),
    }


def batch_json(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``--json`` form of a batch."""
    return {"results": results, "summary": batch_summary(results)}


def batch_lines(results: list[dict[str, Any]]) -> list[str]:
    """The table of a batch for people: one row per draft, then the totals."""
    rows = [
        ("draft", "outcome", "failures"),
        *(
            (
                (r["file"] if r["line"] is None else f"{r['file']}:{r['line']}"),
                r["outcome"],
                (r["reason"] if r["outcome"] == UNREADABLE else ", ".join(_codes(r)) or "-"),
            )
            for r in results
        ),
    ]
    wide = [max(len(row[i]) for row in rows) + 2 for i in range(2)]
    lines = [f"{a:<{wide[0]}}{b:<{wide[1]}}{c}" for a, b, c in rows]
    summary = batch_summary(results)
    counts = ", ".join(f"{n} {o}" for o, n in summary["outcomes"].items() if n)
    lines.append(f"total: {summary['drafts']} draft(s) ({counts})")
    if summary["failure_codes"]:
        lines.append(
            "failure codes: "
            + ", ".join(f"{code} {n}" for code, n in summary["failure_codes"].items())
        )
    if summary["dead_letter_classes"]:
        lines.append(
            "dead-letter classes: "
            + ", ".join(f"{cls} {n}" for cls, n in summary["dead_letter_classes"].items())
        )
    return lines
