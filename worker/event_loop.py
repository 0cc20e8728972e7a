"""The process's event loop, chosen once at an entry point (``GW_EVENT_LOOP``).

uvloop runs the same asyncio programs on libuv: the worker's Faust agent, aiokafka's fetcher
and sender, asyncpg and PyMongo spend less CPU per record in the loop itself. The standard
library's loop stays one setting away (``GW_EVENT_LOOP=asyncio``), e.g. to rule uvloop out when
chasing a bug. Set before the first loop is made: Faust's worker and ``asyncio.run`` then both
use it.
"""

from __future__ import annotations

import asyncio
from typing import Literal

EventLoop = Literal["uvloop", "asyncio"]


def use_event_loop(name: EventLoop) -> None:
    """Make ``name`` the policy every new event loop of this process comes from."""
    if name == "uvloop":
        import uvloop  # noqa: PLC0415 - only the processes that run a loop need it

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    else:
        asyncio.set_event_loop_policy(asyncio.DefaultEventLoopPolicy())
