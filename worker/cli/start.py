"""How every subcommand starts: the settings, the services it needs, and the one line and exit
code it ends with when either is wrong (no traceback: exit 2 for a usage error or a bad setting,
3 for a service that does not answer, ``worker/runtime/startup.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer

from worker.settings import Settings, SettingsInvalidError, load_settings

#: Exit code of a usage error, a bad setting included (as ``replay`` and ``check`` use it).
EXIT_USAGE = 2


def read_settings() -> Settings:
    """The settings, or one line naming the bad environment variable and exit 2 (no traceback)."""
    try:
        return load_settings()
    except SettingsInvalidError as exc:
        typer.echo(f"grounding-worker: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None


def kafka_settings(command: str) -> Settings:
    """The settings, once the services ``command`` needs answer, after one connection to Kafka
    as this process's clients will connect.

    A service that does not answer within ``GW_STARTUP_TIMEOUT_S`` ends the command with one
    ``startup.gave_up`` log line and exit 3 (``worker/runtime/startup.py``). Wrong SASL credentials
    or an
    untrusted broker certificate, a security protocol the broker's listener does not speak, or
    a ``GW_WEB_PORT`` another process holds end it with one line naming the settings to fix and
    exit 2, rather than clients retrying forever or a web server's traceback.
    """
    import asyncio

    from worker.kafka.access import KafkaAccessError, check_access
    from worker.runtime.startup import SERVES_PAGES, WebPortUnavailableError, check_web_port

    settings = read_settings()
    try:
        if command in SERVES_PAGES:
            check_web_port(settings)
        asyncio.run(check_access(settings))  # a refusal ends the command before any wait
        return started(command, settings)
    except (KafkaAccessError, WebPortUnavailableError) as exc:
        typer.echo(f"grounding-worker: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from None


def started(command: str, settings: Settings | None = None) -> Settings:
    """The settings, once the services ``command`` needs answered
    (``worker/runtime/startup.py``)."""
    from worker.runtime.logs import configure_logging
    from worker.runtime.startup import EXIT_UNREACHABLE, DependencyUnreachableError, await_services

    settings = settings or read_settings()
    configure_logging(settings.log_level, json=settings.log_json)
    try:
        await_services(settings, command)
    except DependencyUnreachableError as exc:
        gave_up(exc.service, exc.address, exc.reason, round(exc.waited_s, 1))
        raise typer.Exit(EXIT_UNREACHABLE) from None
    return settings


@contextmanager
def lost(command: str) -> Iterator[None]:
    """A service that answered at start but fails during ``command``: the same one line and
    exit 3 as at start, rather than a driver's traceback."""
    from aiokafka.errors import KafkaConnectionError
    from pymongo.errors import ConnectionFailure

    from worker.faults import RetriableFault
    from worker.runtime.startup import EXIT_UNREACHABLE, NEEDS

    try:
        yield
    except (OSError, TimeoutError, RetriableFault, KafkaConnectionError, ConnectionFailure) as exc:
        services = NEEDS.get(command, ())
        service = getattr(exc, "store", None) or (services[0] if len(services) == 1 else "")
        gave_up(service or "+".join(services), "", f"{type(exc).__name__}: {exc}"[:160], None)
        raise typer.Exit(EXIT_UNREACHABLE) from None


def gave_up(service: str, address: str, reason: str, waited_s: float | None) -> None:
    """The one line a command ends with when a service it needs does not answer."""
    import structlog

    from worker.runtime.startup import EXIT_UNREACHABLE, SETTING

    structlog.get_logger("worker.startup").error(
        "startup.gave_up",
        dependency=service,
        address=address,
        reason=reason,
        waited_s=waited_s,
        setting=SETTING.get(service, ""),  # type: ignore[call-overload]
        exit_code=EXIT_UNREACHABLE,
    )
