"""Run ``grounding-worker run`` under pyinstrument; write a text profile when it stops.

    python -m dev.bench.profile_worker OUT.txt      (settings from GW_* as for the worker)

The benchmark stops it with SIGTERM once every output is in; Faust then shuts down and returns,
and the profile covers the whole life of the process (start-up included, so read the agent's
subtree). The session is saved next to it
(``.pyisession``) for ``pyinstrument --load FILE --show-all``.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from pyinstrument import Profiler

from worker.settings import Settings
from worker.stream.main import run_worker


def main(out: Path) -> None:
    profiler = Profiler(interval=0.001, async_mode="disabled")
    profiler.start()
    try:
        with contextlib.suppress(SystemExit, KeyboardInterrupt):
            run_worker(Settings())
    finally:
        profiler.stop()
        tree = profiler.output_text(unicode=True, color=False, show_all=False)
        out.write_text(tree)
        # The whole session, library frames included, for `pyinstrument --load`.
        if profiler.last_session is not None:
            profiler.last_session.save(str(out.with_suffix(".pyisession")))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
