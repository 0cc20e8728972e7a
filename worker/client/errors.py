"""What the producer client raises: one root, one class per cause, each saying if a retry helps.

::

    ClientError (GroundingFault)       root; never raised itself
    ├── ClientNotStartedError          ask/submit before start() or after stop()
    ├── ClientStartError               start() could not reach Kafka in time (retriable)
    ├── DraftRejectedError             the draft would be dead-lettered: refused before
    │                                  publishing; ``field`` names the field (also a ValueError)
    ├── PublishFailedError             Kafka refused or lost the draft (retriable)
    │   └── PublishTimeoutError        no acknowledgement within the timeout (also TimeoutError)
    └── VerdictTimeoutError            published, no verdict within the timeout (also TimeoutError)

A draft the worker dead-letters (what the client cannot check: ``identity_mismatch``, a fault)
is not an error but a result, :class:`worker.client.DeadLettered`.
"""

from __future__ import annotations

from worker.faults import GroundingFault


class ClientError(GroundingFault):
    """Root of what :class:`worker.client.GroundingClient` raises."""


class ClientNotStartedError(ClientError, RuntimeError):
    """The client is not connected: call ``await client.start()`` or use ``async with``."""


class ClientStartError(ClientError):
    """``start()`` could not connect to Kafka within its timeout; nothing is left open."""

    retriable = True


class DraftRejectedError(ClientError, ValueError):
    """The worker would dead-letter this draft (contract §2), so it was not published.

    ``field`` is the envelope field at fault (``schema_version``, ``turn_id``,
    ``principal.user_id``, ...), or ``envelope`` for the envelope as a whole; ``error_class`` the
    ``dlq.error.class`` the worker would give it.
    """

    def __init__(self, field: str, error_class: str, message: str) -> None:
        super().__init__(f"draft refused before publishing: {field}: {message} ({error_class})")
        self.field = field
        self.error_class = error_class


class PublishFailedError(ClientError):
    """Kafka did not take the draft. It may still arrive: re-sending the same draft (same
    ``draft_id``) is safe, since the worker treats a redelivery as a redelivery. ``retriable``
    is Kafka's client's own verdict on the cause (a record too large is not)."""

    retriable = True


class PublishTimeoutError(PublishFailedError, TimeoutError):
    """Kafka did not acknowledge the draft within the timeout (broker down or stalled?)."""


class VerdictTimeoutError(ClientError, TimeoutError):
    """The draft was published but no verdict arrived within the timeout (is a worker running?)."""

    retriable = True
