"""A store call that returns by its deadline, even when the driver's cleanup does not.

``asyncio.wait_for`` cancels a call past its timeout and then waits for the cancelled call to
finish: on Python 3.11 for as long as that takes. A driver that swallows the cancellation, or
whose cleanup waits on a server that just restarted (a pooled connection's release, a cursor's
close), would hold the batch for ever, with nothing in the log after the last ``store.retry``.
:func:`within` gives the cancelled call a short grace to clean up, then leaves it running on its
own (logged as ``store.call_abandoned``) and raises ``TimeoutError`` like ``wait_for``: the caller
sees a timeout, which the adapters report as the store unavailable, and the retry rules go on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

import structlog

log = structlog.get_logger("worker.stores")

T = TypeVar("T")

#: How long a call cancelled at its deadline may take to clean up before it is left behind.
CLEANUP_GRACE_S = 1.0


async def within(
    limit_s: float, call: Awaitable[T], *, what: str, grace_s: float = CLEANUP_GRACE_S
) -> T:
    """``call``'s result, or ``TimeoutError`` by ``limit_s + grace_s`` whatever ``call`` does.

    Past ``limit_s`` the call is cancelled; if it has not ended ``grace_s`` later it is left to
    end on its own. A call that ends despite the cancellation gives its own result or error, as
    with ``wait_for``. Cancelling the caller cancels the call, without waiting for it.
    """
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait({task}, timeout=limit_s)
        if not done:
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=grace_s)
    except asyncio.CancelledError:
        task.cancel()
        task.add_done_callback(_retrieve)
        raise
    if not done:
        task.add_done_callback(_retrieve)
        log.warning("store.call_abandoned", call=what, after_s=round(limit_s + grace_s, 3))
        raise TimeoutError(f"{what}: no answer in {limit_s} s")
    if task.cancelled():
        raise TimeoutError(f"{what}: no answer in {limit_s} s")
    return task.result()


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Read a left-behind call's outcome, so asyncio does not log it as never retrieved."""
    with contextlib.suppress(BaseException):
        task.exception()
