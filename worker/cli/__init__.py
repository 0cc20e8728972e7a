"""The ``grounding-worker`` command line: one entry point, one subcommand per job.

Each subcommand parses its options, builds the settings once and hands over to the module that
does the work; no logic lives here.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from worker import __version__
from worker.cli.start import EXIT_USAGE, kafka_settings, lost, read_settings, started
from worker.core import DraftKind, ErrorClass

app = typer.Typer(
    name="grounding-worker",
    help="Ground AI agents' drafts against tenant evidence before anyone reads them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"grounding-worker {__version__}")
        raise typer.Exit


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", callback=_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Ground AI agents' drafts against tenant evidence before anyone reads them."""


@app.command()
def run() -> None:
    """Run the worker: consume agent.drafts, publish verdicts, write the ledger."""
    from worker.runtime.spans import SpansUnavailableError
    from worker.stream.main import run_worker

    try:
        run_worker(kafka_settings("run"))
    except SpansUnavailableError as exc:
        typer.echo(f"grounding-worker: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None


@app.command()
def migrate() -> None:
    """Create or upgrade the Postgres tables and MongoDB indexes (idempotent)."""
    from worker.stores.migrate import migrate_all

    settings = started("migrate")
    with lost("migrate"):
        migrate_all(settings)


class TopicsAction(StrEnum):
    """What ``topics`` does."""

    CREATE = "create"
    LIST = "list"
    CHECK = "check"


@app.command()
def topics(
    action: Annotated[
        TopicsAction,
        typer.Argument(help="`create` (idempotent), `list`, or `check` (exit 1 on drift)."),
    ] = TopicsAction.CREATE,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the topics or the findings as JSON.")
    ] = False,
) -> None:
    """Create the declared Kafka topics (idempotent), list them, or check them for drift.

    `check` compares partitions, replication factor and every declared config
    with the broker's and exits 1 when anything differs or is missing.

    `--json`: `list` gives each topic's partitions, replication factor and
    configs; `check` each finding and an `ok` flag.
    """
    from worker.kafka.topics_admin import topics_command

    settings = kafka_settings("topics")
    with lost("topics"):
        code = topics_command(settings, action.value, json_output=json_output)
    raise typer.Exit(code)


@app.command("ledger-sink")
def ledger_sink() -> None:
    """Run only the ledger sink: citations.ledger into Postgres citation_ledger, idempotently.

    For deployments that run the worker with GW_RUN_LEDGER_SINK=false and the sink apart.
    """
    from worker.ledger.main import run_ledger_sink

    run_ledger_sink(kafka_settings("ledger-sink"))


@app.command("seed-demo")
def seed_demo() -> None:
    """Load the small demo corpus (two tenants, a few users, ACL'd and revoked evidence)."""
    from worker.stores.demo import seed_demo_corpus

    settings = started("seed-demo")
    with lost("seed-demo"):
        seed_demo_corpus(settings)


# The options of `replay`, one alias each, so the command reads as a list of its options.
# Choices (the enums' values): `--help` lists them, and any other value is a usage error (exit 2).
_ErrorClassOpt = Annotated[
    list[ErrorClass] | None,
    typer.Option("--error-class", help="Only this dlq.error.class (repeatable)."),
]
_TenantOpt = Annotated[
    list[str] | None,
    typer.Option(help="Only drafts whose value's tenant_id is this (repeatable)."),
]
_PartitionOpt = Annotated[
    list[int] | None, typer.Option(help="Only this DLQ partition (repeatable).", min=0)
]
_FromOffsetOpt = Annotated[
    int | None, typer.Option(help="First DLQ offset, inclusive (needs one --partition).", min=0)
]
_ToOffsetOpt = Annotated[
    int | None, typer.Option(help="Last DLQ offset, inclusive (needs one --partition).", min=0)
]
_SinceOpt = Annotated[
    str | None,
    typer.Option(help="DLQ record time >= this: RFC 3339, epoch ms, or an age like 2h."),
]
_UntilOpt = Annotated[
    str | None,
    typer.Option(help="DLQ record time < this: RFC 3339, epoch ms, or an age like 30m."),
]
_DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Publish nothing; list what would be replayed.")
]
_LimitOpt = Annotated[
    int | None, typer.Option(help="Replay at most this many dead letters.", min=1)
]
_RateOpt = Annotated[
    float | None, typer.Option(help="At most this many records per second.", min=0.001)
]
_MaxReplaysOpt = Annotated[
    int | None,
    typer.Option(
        help="Skip dead letters replayed this often (default: GW_REPLAY_MAX_COUNT).", min=0
    ),
]
_FromBeginningOpt = Annotated[
    bool,
    typer.Option("--from-beginning", help="Ignore the replay log: replay again what was replayed."),
]
_JsonOpt = Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")]
_AllClassesOpt = Annotated[
    bool,
    typer.Option(
        "--all-classes",
        help="Also replay classes a replay cannot fix (malformed_envelope, oversized, "
        "identity_mismatch); by default only infra_unavailable, internal_error and "
        "unsupported_schema_version, plus any named with --error-class.",
    ),
]


@app.command()
def replay(  # noqa: PLR0917 - one parameter per documented option
    error_class: _ErrorClassOpt = None,
    tenant: _TenantOpt = None,
    partition: _PartitionOpt = None,
    from_offset: _FromOffsetOpt = None,
    to_offset: _ToOffsetOpt = None,
    since: _SinceOpt = None,
    until: _UntilOpt = None,
    dry_run: _DryRunOpt = False,
    limit: _LimitOpt = None,
    rate: _RateOpt = None,
    max_replays: _MaxReplaysOpt = None,
    from_beginning: _FromBeginningOpt = False,
    json_output: _JsonOpt = False,
    all_classes: _AllClassesOpt = False,
) -> None:
    """Re-publish dead letters from the DLQ to agent.drafts, once each (see docs/tools.md).

    Exit codes: 0 done; 1 done, some skipped at the max replay count; 2 usage error;
    3 could not finish (run again to continue).
    """
    from datetime import UTC, datetime

    from worker.tools.replay_cli import ReplayArgs, run_replay_command

    args = ReplayArgs(
        error_classes=[c.value for c in error_class or ()],
        tenants=tenant or (),
        partitions=partition or (),
        from_offset=from_offset,
        to_offset=to_offset,
        since=since,
        until=until,
        dry_run=dry_run,
        limit=limit,
        rate=rate,
        max_replays=max_replays,
        from_beginning=from_beginning,
        json=json_output,
        all_classes=all_classes,
    )
    settings = kafka_settings("replay")
    raise typer.Exit(
        run_replay_command(
            settings, args, now=datetime.now(UTC), known_classes=[c.value for c in ErrorClass]
        )
    )


@app.command()
def check(  # noqa: PLR0917 - one parameter per documented option
    draft: Annotated[
        Path,
        typer.Argument(
            help="A draft envelope file, - for stdin (with --tenant/--user: a bare output); "
            "a directory (each *.json file) or a .jsonl file (each line) checks a batch."
        ),
    ],
    evidence: Annotated[
        Path | None,
        typer.Option(
            help="Evidence from this corpus file (worker/demo/corpus.json format) "
            "instead of the live stores."
        ),
    ] = None,
    tenant: Annotated[str | None, typer.Option(help="Bare output: the tenant.")] = None,
    user: Annotated[str | None, typer.Option(help="Bare output: the reader's user id.")] = None,
    group: Annotated[
        list[str] | None, typer.Option(help="Bare output: a group of the reader (repeatable).")
    ] = None,
    kind: Annotated[DraftKind, typer.Option(help="Bare output: the kind of output.")] = (
        DraftKind.ANSWER
    ),
    attempt: Annotated[
        int | None, typer.Option(help="Evaluate as this attempt (default: the envelope's).", min=0)
    ] = None,
    after_regeneration: Annotated[
        bool,
        typer.Option(
            "--after-regeneration", help="Evaluate as the draft answering a regenerate request."
        ),
    ] = False,
    policy: Annotated[
        Path | None, typer.Option(help="Tenant policy book (default: GW_POLICY_FILE).")
    ] = None,
    show_messages: Annotated[
        bool,
        typer.Option("--show-messages", help="Also print the messages the worker would publish."),
    ] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Print the worker's verdict on one draft, or a table of verdicts on a batch.

    See docs/tools.md. Exit codes: 0 grounded; 1 regenerate or could-not-ground;
    2 unusable input (unreadable file, dead-letter class, bad options);
    3 evidence stores unavailable.

    A batch exits 2 if any draft is unusable, else 1 if any is not grounded, else 0.
    """
    from worker.tools.check_cli import run_check

    raise typer.Exit(
        run_check(
            read_settings(),
            draft=draft,
            evidence=evidence,
            tenant=tenant,
            user=user,
            groups=tuple(group or ()),
            kind=kind.value,
            attempt=attempt,
            after_regeneration=after_regeneration,
            policy=policy,
            show_messages=show_messages,
            json_output=json_output,
        )
    )


def main() -> None:
    """Console-script entry point."""
    app()
