"""How the worker's Faust app connects: the same settings as every other client
(``worker.kafka.access``), as Faust's ``broker_credentials``.

Faust's public API only; every private part of Faust the worker reaches is in
``worker.stream.faust_internals``, pinned to the release it was read from."""

from __future__ import annotations

from typing import Any

import faust

from worker.kafka.access import ssl_context
from worker.settings import Settings


def faust_credentials(settings: Settings) -> Any:
    """``broker_credentials`` of the Faust app (``None`` for plaintext)."""
    context = ssl_context(settings)
    if settings.kafka_security_protocol.startswith("SASL_"):
        password = settings.kafka_sasl_password
        return faust.SASLCredentials(
            username=settings.kafka_sasl_username,
            password=password.get_secret_value() if password else None,
            mechanism=settings.kafka_sasl_mechanism,
            ssl_context=context,
        )
    if context is not None:
        return faust.SSLCredentials(context)
    return None
