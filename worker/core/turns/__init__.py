"""Turns (contract rule 8): the state machine, its deadlines and its deterministic event ids.

- ``machine``: one pure transition per decided record.
- ``control``: the control records a partition carries (deadline ticks, expiry).
- ``deadline_index``: which turns will need a deadline tick, without decoding their states.
- ``ids``: the event ids a redelivered draft yields again.
"""
