"""The process's event loop (``GW_EVENT_LOOP``) and thread switching, set once at an entry point.

uvloop runs the same asyncio programs on libuv: the worker's Faust agent, aiokafka's fetcher
and sender, asyncpg and PyMongo spend less CPU per record in the loop itself. The standard
library's loop stays one setting away (``GW_EVENT_LOOP=asyncio``), e.g. to rule uvloop out when
chasing a bug. Set before the first loop is made: Faust's worker and ``asyncio.run`` then both
use it.

Faust runs its Kafka consumer (aiokafka's fetcher) in a thread of its own, beside the event
loop's. While the loop's thread decides a batch it holds the interpreter lock, and CPython hands
it to the other thread only every ``sys.getswitchinterval()`` seconds (5 ms by default).
:func:`use_thread_switch_interval` shortens that interval (``GW_THREAD_SWITCH_INTERVAL_S``,
0.5 ms): same-run pairs at saturation gave ~10 % more drafts/s and less CPU per draft
(``docs/decisions.md``).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Literal

EventLoop = Literal["uvloop", "asyncio"]


def use_event_loop(name: EventLoop) -> None:
    """Make ``name`` the policy every new event loop of this process comes from."""
    if name == "uvloop":
        import uvloop  # noqa: PLC0415 - only the processes that run a loop need it

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    else:
        asyncio.set_event_loop_policy(asyncio.DefaultEventLoopPolicy())


def use_thread_switch_interval(seconds: float) -> None:
    """How long a thread may hold the interpreter lock before another may take it."""
    sys.setswitchinterval(seconds)
