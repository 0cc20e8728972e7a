"""Run a batch's store queries at once and report the fault that matters most.

``asyncio.gather`` would raise whichever failure finished first; here every query is awaited and
a retriable fault wins over a poison one, so an outage never dead-letters drafts because a
malformed row in the other store happened to answer sooner.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from worker.faults import GroundingFault

T = TypeVar("T")


async def gather_all(*aws: Awaitable[T]) -> list[T]:
    """Await all of ``aws`` concurrently; raise a retriable fault first, else the first error."""
    results = await asyncio.gather(*aws, return_exceptions=True)
    errors = [r for r in results if isinstance(r, BaseException)]
    if errors:
        retriable = [e for e in errors if isinstance(e, GroundingFault) and e.retriable]
        raise (retriable or errors)[0]
    return [r for r in results if not isinstance(r, BaseException)]
