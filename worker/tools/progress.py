"""A progress display on stderr: one rewritten line on a terminal, plain lines otherwise.

:class:`Meter` turns a count toward a known total into ``120/450 (26.7%), 85.2/s, eta 4s``: the
rate is the average since the meter started (steadier than the last interval's, which a chunk's
acknowledgements make jumpy), and the time left assumes it holds, rounded up so ``eta 0s`` means
done.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import NamedTuple, TextIO


class Progress:
    """Reports counts at most every ``interval_s`` (a terminal gets a faster, rewritten line)."""

    def __init__(
        self,
        stream: TextIO,
        *,
        interval_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._tty = stream.isatty()
        self._interval = 0.2 if self._tty else interval_s
        self._clock = clock
        self._last = clock()
        self._shown = False

    def update(self, text: str, *, force: bool = False) -> None:
        """Show ``text`` if enough time passed since the last display (or ``force``)."""
        now = self._clock()
        if not force and now - self._last < self._interval:
            return
        self._last = now
        if self._tty:
            self._stream.write("\r\x1b[2K" + text)
            self._shown = True
        else:
            self._stream.write(text + "\n")
        self._stream.flush()

    def done(self, text: str) -> None:
        """The final counts, always shown, ending the rewritten line."""
        self.update(text, force=True)
        if self._tty and self._shown:
            self._stream.write("\n")
            self._stream.flush()


def duration(seconds: float) -> str:
    """``4s``, ``2m05s`` or ``1h02m``: whole seconds, rounded up."""
    whole = math.ceil(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class Reading(NamedTuple):
    """A count toward a total, in two parts a display may place apart."""

    #: ``120/450 (26.7%)``
    done: str
    #: ``85.2/s, eta 4s``; ``?`` for what cannot be known yet.
    pace: str

    def __str__(self) -> str:
        return f"{self.done}, {self.pace}"


def reading(done: int, total: int, elapsed_s: float) -> Reading:
    """``done`` of ``total`` after ``elapsed_s`` seconds."""
    left = max(total - done, 0)
    share = f"{100 * done / total:.1f}%" if total else "100.0%"
    if left and share == "100.0%":
        share = "99.9%"  # not done: never rounded up to 100
    rate = done / elapsed_s if elapsed_s > 0 else None
    if left == 0:
        eta = duration(0)
    elif rate:
        eta = duration(left / rate)
    else:
        eta = "?"
    shown_rate = "?" if rate is None else f"{rate:.1f}"
    return Reading(f"{done}/{total} ({share})", f"{shown_rate}/s, eta {eta}")


class Meter:
    """A count toward ``total``, timed from when the meter was made."""

    def __init__(self, total: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self._clock = clock
        self._start = clock()

    def read(self, done: int) -> Reading:
        """The reading of ``done`` now."""
        return reading(done, self.total, self._clock() - self._start)
