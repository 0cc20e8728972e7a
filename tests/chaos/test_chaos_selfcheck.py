"""The checks themselves can fail: a leak, a lost turn and a conflicting turn planted in fake
records are found (no servers needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chaoslib import PRINCIPALS, Stream, hidden_in_tenant, scan_leaks, scan_logs, stuck_lines

from dev.harness import Received


class FakeBus:
    def __init__(self, records: dict[str, list[Received]]) -> None:
        self.records = records

    def messages(self, role: str, **_: Any) -> list[Received]:
        return self.records.get(role, [])


def rec(role: str, key: str, value: dict[str, Any], headers: tuple[Any, ...] = ()) -> Received:
    return Received(role, role, 0, 0, 0, key.encode(), json.dumps(value).encode(), headers)


def test_a_hidden_id_or_marker_is_found_in_values_and_headers() -> None:
    stream = Stream("self", seed=1)
    stream.take(50)
    turn, exp = next((t, e) for t, e in stream.plan.items() if e.terminal == "validated")
    hidden = hidden_in_tenant(exp.principal)[0]
    clean = rec("validated", turn, {"turn_id": turn, "output": {"answer_markdown": "ok"}})
    assert scan_leaks(FakeBus({"validated": [clean]}), stream.plan) == []  # type: ignore[arg-type]
    by_id = rec("validated", turn, {"citations": [{"kind": hidden.kind, "id": hidden.ident}]})
    by_marker = rec("regenerate", turn, {"previous_output": f"see {hidden.marker}"})
    in_header = rec("validated", turn, {}, (("x-debug", str(hidden.ident).encode()),))
    found = scan_leaks(
        FakeBus({"validated": [by_id, in_header], "regenerate": [by_marker]}),  # type: ignore[arg-type]
        stream.plan,
    )
    assert len(found) == 3, found


def test_a_marker_in_an_info_log_line_is_a_leak_and_debug_is_apart(tmp_path: Path) -> None:
    stream = Stream("self", seed=2)
    stream.take(20)
    hidden = hidden_in_tenant(PRINCIPALS[0])[0]

    class Logs:
        def log_text(self) -> str:
            return "\n".join([
                json.dumps({"event": "draft.routed", "level": "info", "turn_id": "x"}),
                json.dumps({"event": "x", "level": "info", "detail": hidden.marker}),
                f"[2026-12-03 08:23:05,010] [1] [DEBUG] reply {hidden.marker}",
                f"WARNING pymongo reply {hidden.marker}",
            ])  # fmt: skip

    found = scan_logs([Logs()], stream.plan)  # type: ignore[list-item]
    assert (len(found["info_plus"]), len(found["debug"])) == (2, 1)


def test_a_failed_scenario_shows_what_a_worker_was_stuck_on() -> None:
    events = [
        {"event": "draft.routed", "turn_id": "t-1"},
        {"event": "batch.slow", "in_hand_s": 60.2, "tasks": ["Task-9: pipeline.py:120 process"]},
        {"event": "store.retry", "attempt": 2},
        {"event": "store.call_abandoned", "call": "find in documents", "after_s": 3.0},
    ]
    lines = stuck_lines(events)
    assert [json.loads(line)["event"] for line in lines] == ["batch.slow", "store.call_abandoned"]
    assert "pipeline.py:120 process" in lines[0]
    assert stuck_lines(events[:1]) == []
