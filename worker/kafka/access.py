"""How every Kafka client of the project connects: one place turns the settings into options.

Every aiokafka client (the offset probe, the ledger sink, the topics admin, ``replay``) gets
:func:`client_security`; the worker's Faust app gets the same TLS context and SASL settings through
``worker.stream.faust_access.faust_credentials``. Secrets leave the
settings object only here, into the client that needs them.

:func:`check_access` opens one connection to a bootstrap server before a command starts, so
that wrong credentials or an untrusted certificate end the command with a line naming the
settings to fix, instead of a client retrying forever behind a generic "unable to bootstrap".
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.conn import create_conn
from aiokafka.errors import (
    KafkaConnectionError,
    KafkaError,
    SaslAuthenticationFailed,
    UnsupportedSaslMechanismError,
)

from worker.faults import UsageFault
from worker.settings import Settings

SASL_SETTINGS = "GW_KAFKA_SASL_USERNAME / GW_KAFKA_SASL_PASSWORD"
TLS_SETTINGS = "GW_KAFKA_SSL_CAFILE, GW_KAFKA_SSL_CHECK_HOSTNAME"


class KafkaAccessError(UsageFault):
    """Kafka refused this client's credentials or TLS; the message names the settings to fix."""


def ssl_context(settings: Settings) -> ssl.SSLContext | None:
    """The TLS context of ``SSL`` and ``SASL_SSL``, or ``None`` without TLS."""
    if not settings.kafka_security_protocol.endswith("SSL"):
        return None
    context = ssl.create_default_context(
        cafile=str(settings.kafka_ssl_cafile) if settings.kafka_ssl_cafile else None
    )
    context.check_hostname = settings.kafka_ssl_check_hostname
    if settings.kafka_ssl_certfile is not None and settings.kafka_ssl_keyfile is not None:
        password = settings.kafka_ssl_key_password
        context.load_cert_chain(
            str(settings.kafka_ssl_certfile),
            str(settings.kafka_ssl_keyfile),
            password=password.get_secret_value() if password else None,
        )
    return context


def client_security(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for any aiokafka client (producer, consumer, admin)."""
    options: dict[str, Any] = {"security_protocol": settings.kafka_security_protocol}
    context = ssl_context(settings)
    if context is not None:
        options["ssl_context"] = context
    if settings.kafka_security_protocol.startswith("SASL_"):
        password = settings.kafka_sasl_password
        options |= {
            "sasl_mechanism": settings.kafka_sasl_mechanism,
            "sasl_plain_username": settings.kafka_sasl_username,
            "sasl_plain_password": password.get_secret_value() if password else None,
        }
    return options


def describe_refusal(settings: Settings, exc: BaseException) -> str | None:
    """The one-line explanation of a refused connection, or ``None`` if ``exc`` is no refusal."""
    protocol = settings.kafka_security_protocol
    if isinstance(exc, SaslAuthenticationFailed):
        return (
            f"Kafka rejected the SASL credentials ({SASL_SETTINGS}, mechanism "
            f"GW_KAFKA_SASL_MECHANISM={settings.kafka_sasl_mechanism}): {exc}"
        )
    if isinstance(exc, UnsupportedSaslMechanismError):
        return (
            f"the broker does not offer GW_KAFKA_SASL_MECHANISM="
            f"{settings.kafka_sasl_mechanism}: {exc}"
        )
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"the broker's TLS certificate failed verification ({TLS_SETTINGS}): {exc}"
    if isinstance(exc, ssl.SSLError):
        return (
            f"TLS handshake with the broker failed (GW_KAFKA_SECURITY_PROTOCOL={protocol}, "
            f"GW_KAFKA_SSL_CERTFILE/GW_KAFKA_SSL_KEYFILE): {exc}"
        )
    return None


#: A listener of another security protocol answers at once, and always alike; a broker that is
#: only restarting may not. The verdict "mismatch" needs this many answers in a row, 1 s apart.
MISMATCH_ANSWERS = 3


async def check_access(settings: Settings, timeout_s: float = 15.0) -> None:
    """Connect once, as every client of this process will; raise :class:`KafkaAccessError` if
    the broker refuses the credentials or the certificate, or speaks another security protocol
    (plaintext included: a TLS listener closes a plaintext client's connection, a plaintext
    listener resets a TLS handshake). An unreachable broker is left to the clients, which
    retry."""
    # aiokafka logs each failed attempt itself; the refusal is reported once, below.
    quiet = logging.getLogger("aiokafka")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        await _check(settings, timeout_s)
    finally:
        quiet.setLevel(level)


async def _check(settings: Settings, timeout_s: float) -> None:
    security = client_security(settings)
    for server in settings.kafka_bootstrap_servers.split(","):
        host, _, port = server.strip().rpartition(":")
        mismatches = 0
        while True:
            try:
                conn = await asyncio.wait_for(
                    create_conn(host or "127.0.0.1", int(port), **security), timeout_s
                )
                break
            except (KafkaError, OSError, TimeoutError) as exc:
                reason = describe_refusal(settings, exc)
                if reason is not None:
                    raise KafkaAccessError(reason) from None
                mismatch = _mismatch(settings, server, exc)
                if mismatch is None:
                    conn = None
                    break  # unreachable: try the next server; the clients retry anyway
                mismatches += 1
                if mismatches >= MISMATCH_ANSWERS:
                    raise KafkaAccessError(mismatch) from None
                await asyncio.sleep(1.0)
        if conn is None:
            continue
        conn.close()
        await _first_request(settings, server, security, timeout_s)
        return


async def _first_request(
    settings: Settings, server: str, security: dict[str, Any], timeout_s: float
) -> None:
    """A metadata request over the connection the clients will use: a SASL listener closes the
    connection of a client that skipped SASL (GW_KAFKA_SECURITY_PROTOCOL=SSL, say)."""
    admin = AIOKafkaAdminClient(
        bootstrap_servers=server, request_timeout_ms=int(timeout_s * 1000), **security
    )
    try:
        await asyncio.wait_for(admin.start(), timeout_s)
    except KafkaConnectionError:
        raise KafkaAccessError(
            f"the broker at {server} closed the connection after the handshake: does "
            f"GW_KAFKA_SECURITY_PROTOCOL={settings.kafka_security_protocol} match its listener?"
        ) from None
    except (KafkaError, OSError, TimeoutError):
        return  # not a refusal: the clients retry
    finally:
        await admin.close()


def _mismatch(settings: Settings, server: str, exc: BaseException) -> str | None:
    """The one line for a broker that answered in another security protocol, else ``None``."""
    protocol = settings.kafka_security_protocol
    if isinstance(exc, KafkaError) and "closed" in str(exc):
        return (
            f"the broker at {server} closed the connection during the handshake: does "
            f"GW_KAFKA_SECURITY_PROTOCOL={protocol} match its listener?"
        )
    if isinstance(exc, ConnectionResetError | BrokenPipeError) and protocol.endswith("SSL"):
        return (
            f"the broker at {server} reset the TLS handshake, as a plaintext listener does: does "
            f"GW_KAFKA_SECURITY_PROTOCOL={protocol} match its listener?"
        )
    return None
