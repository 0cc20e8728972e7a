"""A progress display on stderr: one rewritten line on a terminal, plain lines otherwise."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO


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
