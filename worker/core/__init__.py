"""The pure core: values in, values out.

Nothing in this package imports Faust, aiokafka, asyncpg or pymongo, reads the clock, or logs;
the stream loop in ``worker.stream`` feeds it and routes what it returns. The front door is
``batch`` (``plan_batch``, then ``decide_batch``), which the worker and ``check`` both call.

Where each rule of the contract's §3 lives (packages lowest first; each imports only those
before it in this list: ``tests/unit/test_layers.py``):

- ``contract``, ``failures``: the vocabulary (classes, outcomes, topics, headers) and failures.
- ``citations``: rule 3 (``tokens``, ``extraction``), rule 4's values (``evidence``), rule 6
  (``quotes``), rule 5's removal (``redaction``), rules 2 and 5's look-alikes (``lookalikes``
  on the raw text, ``rendered`` on what cmark-gfm shows).
- ``outputs``: rule 2, the agent-output schemas and their validation.
- ``messages``: the grounded answer, regenerate request, could-not-ground event and ledger batch
  (§3-§6), their wire form, records and trace context.
- ``evidence_store``: the one IO seam, what the stores know of each cited id (rule 4).
- ``claims``: rule 7 (``markdown``, ``sentences``, ``units``, ``status``), rule 5's hidden
  words (``hidden_words``) and its last check of what a reader is shown (``gate``), rule 6b
  (``support``), rule 7b (``typed``), the tenant policy (``policy``).
- ``envelope``: §2 and rule 1 (``draft``, ``canonical``).
- ``verdict``: rules 1-7 on one draft, in two pure steps around the store look-up.
- ``turns``: rule 8, the turn state machine, its control records, deadlines and event ids.
- ``grounding``: one draft through the batch (``admit``, ``judge``).
- ``batch``: the batch use case.
"""
