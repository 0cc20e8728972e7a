"""Dead letters as the Kafka tools read them: the core's rules (contract §7), named here.

Composing a dead letter is the core's (``worker.core.envelope.dead_letter``, applied by
``worker.core.batch.decide_batch``); ``replay`` and its selection read ``dlq.replay.count``
with the core's rule, from here.
"""

from __future__ import annotations

from worker.core.envelope.dead_letter import replay_count

__all__ = ["replay_count"]
