"""Typed faults: exceptions are for faults, never for verdicts.

::

    GroundingFault                  root; never raised itself
    ├── RetriableFault              back off and try again (retriable = True)
    │   ├── StoreUnavailable        a store cannot be reached or timed out
    │   └── BrokerUnavailable       Kafka cannot be reached or timed out
    └── PoisonFault                 deterministic: dead-letter the draft (retriable = False)
        └── MalformedEvidence       a store returned a row of the wrong shape

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
