"""A turn's stored value reads back whatever integers its draft carried.

An envelope's ``attempt`` may be any integer >= 0, past 64 bits too; the turn keeps its first
draft's attempt. orjson reads such a number as a float (here: infinity, an error), so the turn
could not be read again and the draft answering its regenerate request was dead-lettered
``internal_error``. The RocksDB value is read with the core's reader, exact for any integer.
"""

from __future__ import annotations

from worker.core.turns.machine import TurnPhase, TurnState
from worker.stream.turns.table import decode_turn, encode_turn

HUGE = 10**400 + 7


def test_a_turn_with_a_huge_first_attempt_reads_back_exactly() -> None:
    state = TurnState(
        phase=TurnPhase.REGENERATING,
        turn_id="t-1",
        tenant_id="acme",
        user_id="u-1",
        groups=("analysts",),
        policy_version="p-1",
        first_draft_id="d-1",
        first_attempt=HUGE,
        kind="answer",
        regenerate_draft_id="d-1",
        regenerate_request='{"attempt":1,"n":' + str(HUGE) + "}",
        attempts_decided=1,
    )
    stored = decode_turn(encode_turn(3, state))
    assert stored.partition == 3
    assert stored.state == state
    assert stored.state.first_attempt == HUGE
