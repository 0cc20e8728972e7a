"""Where the test bed lives: this checkout, its state directory and the download cache.

State, pids and logs live in ``.services/`` in the repository root, so two checkouts keep two
beds. Downloads and builds are cached per user, shared by every checkout.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATE = ROOT / ".services"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "grounding-worker"
SERVICES = ("kafka", "postgres", "mongo")
#: Started only when named (`scripts/services start NAME`); `down` and `status` cover them too.
OPTIONAL_SERVICES = ("mongo-memory",)
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0


class ServiceError(Exception):
    """A service could not be prepared, started or stopped; the message says what to look at."""


def say(msg: str) -> None:
    """Progress and errors go to stderr: stdout carries only what `status` and `env` print."""
    print(f"[services] {msg}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """Serialise concurrent invocations (two `up`s at once must not start two brokers)."""
    STATE.mkdir(exist_ok=True)
    with (STATE / "lock").open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
