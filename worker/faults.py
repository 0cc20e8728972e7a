"""Typed faults: exceptions are for faults, never for verdicts.

::

    GroundingFault                  root; never raised itself
    ├── RetriableFault              back off and try again (retriable = True)
    │   ├── StoreUnavailable        a store cannot be reached or timed out
    │   └── BrokerUnavailable       Kafka cannot be reached or timed out
    ├── PoisonFault                 deterministic: dead-letter the draft (retriable = False)
    │   └── MalformedEvidence       a store returned a row of the wrong shape
    ├── UsageFault                  what the caller gave cannot be used: one line, exit 2
    │   ├── SettingsInvalidError        a setting (worker/settings/)
    │   ├── KafkaAccessError            Kafka refused the credentials or the certificate
    │   ├── SpansUnavailableError       spans asked for without the SDK
    │   ├── InvalidIdentifierError      a table or collection name (also a ValueError)
    │   ├── ToolUsageError              options or input of `check` or `replay`
    │   └── BatchInputError             a `check` batch that cannot be read
    └── GaveUpFault                 a command cannot go on: one line, exit 3 (or the draft waits)
        ├── DependencyUnreachableError  a service did not answer at start
        (worker/runtime/startup.py)
        ├── RetryBudgetExhaustedError   a retriable fault outlived its budget
        ├── ReplayFailedError           `replay` could not finish
        └── BatchStoresDownError        the stores failed during a `check` batch

A verdict (dangling citation, schema error, ...) is a value the core returns, not one of these.
Adapters translate driver errors into this tree in one place, ``raise ... from exc``.
"""

from __future__ import annotations


class GroundingFault(Exception):
    """Root of every fault the worker raises on purpose."""

    retriable: bool = False


class RetriableFault(GroundingFault):
    """Infrastructure is unavailable: nothing may be decided; retry with backoff."""

    retriable = True


class StoreUnavailable(RetriableFault):
    """An evidence store (Postgres or MongoDB) could not be reached or timed out."""

    #: Which store (``postgres``, ``mongo``), set where the worker observes the call.
    store: str = "unknown"


class BrokerUnavailable(RetriableFault):
    """The Kafka broker could not be reached or timed out."""


class PoisonFault(GroundingFault):
    """A deterministic failure: retrying cannot help, so the draft is dead-lettered."""


class MalformedEvidence(PoisonFault):
    """A store returned a row whose shape the worker cannot read."""


class UsageFault(GroundingFault):
    """What the caller gave (a setting, an option, an input) cannot be used; one line, exit 2."""


class GaveUpFault(GroundingFault):
    """A command cannot go on (a service does not answer, a budget is spent); exit 3."""


class ToolUsageError(UsageFault):
    """Options or input ``check`` or ``replay`` cannot use (exit 2); each entry of
    ``problems`` is one problem, and the message joins them."""

    def __init__(self, *problems: str) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)
