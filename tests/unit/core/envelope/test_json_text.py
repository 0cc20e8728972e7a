"""``loads_json``: orjson only where it reads exactly what the standard parser would."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from worker.core.envelope.json_text import _DIGITS_AS_NUL, _TWENTY_NULS, loads_json

DIGIT_RUN = re.compile(rb"[0-9]{20}")
pieces = st.lists(
    st.one_of(
        st.sampled_from([b"0", b"7", b"9", b"1234567890", b" ", b",", b".", b"-", b"e", b"\0"]),
        st.binary(max_size=4),
    ),
    max_size=60,
).map(b"".join)


@given(pieces)
def test_the_digit_run_check_never_misses_a_run_and_agrees_without_nul_bytes(data: bytes) -> None:
    fast = _TWENTY_NULS in data.translate(_DIGITS_AS_NUL)
    slow = DIGIT_RUN.search(data) is not None
    assert fast or not slow  # never a miss: a miss would read a huge id as a float
    if b"\0" not in data:
        assert fast == slow


@given(st.integers(min_value=-(2**90), max_value=2**90))
@example(-(2**63) - 1)  # 19 digits below -2^63: orjson reads it as a float
@example(-(10**19) + 1)
@example(2**64 - 1)
def test_every_integer_is_read_exactly(n: int) -> None:
    assert loads_json(b'{"id": %d}' % n) == {"id": n}
    assert type(loads_json(b"[%d]" % n)[0]) is int
