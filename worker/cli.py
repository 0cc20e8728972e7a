"""The ``grounding-worker`` command line: one entry point, one subcommand per job.

Each subcommand parses its options, builds the settings once and hands over to the module that
does the work; no logic lives here.
"""

from __future__ import annotations

from typing import Annotated

import typer

from worker.settings import Settings

app = typer.Typer(
    name="grounding-worker",
    help="Ground AI agents' drafts against tenant evidence before anyone reads them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def run() -> None:
    """Run the worker: consume agent.drafts, publish verdicts, write the ledger."""
    from worker.stream.main import run_worker

    run_worker(Settings())


@app.command()
def migrate() -> None:
    """Create or upgrade the Postgres tables and MongoDB indexes (idempotent)."""
    from worker.stores.migrate import migrate_all

    migrate_all(Settings())


@app.command()
def topics(
    action: Annotated[str, typer.Argument(help="`create` (idempotent) or `list`.")] = "create",
) -> None:
    """Create the Kafka topics of the contract (idempotent), or list them."""
    from worker.stream.topics_admin import topics_command

    raise typer.Exit(topics_command(Settings(), action))


@app.command("seed-demo")
def seed_demo() -> None:
    """Load the small demo corpus (two tenants, a few users, ACL'd and revoked evidence)."""
    from worker.stores.demo import seed_demo_corpus

    seed_demo_corpus(Settings())


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
