"""The core's shortcuts against the plain computations they stand for, on random drafts.

Each shortcut keeps the published bytes; these properties check it where a reader might doubt it
(``random_outputs`` puts tokens of every resolution in every kind of string).
"""

from __future__ import annotations

import random
from typing import Any

from fixtures import ALICE, BOB, NOW, lookup, make_draft
from hypothesis import given, settings
from hypothesis import strategies as st
from random_outputs import output

from worker.core.claim_status import UnitVerdict, redact_output, unit_status
from worker.core.evidence import HIDDEN, resolve
from worker.core.policy import LostSupportPolicy, TenantPolicy
from worker.core.verdict import evaluate, prepare

POLICIES = [TenantPolicy(version="p", lost_support=lost) for lost in LostSupportPolicy]


def _draft(r: random.Random) -> tuple[Any, TenantPolicy]:
    kind, out = output(r)
    draft = make_draft(out, kind=kind, principal=r.choice([ALICE, BOB]))
    return draft, r.choice(POLICIES)


@settings(max_examples=300, deadline=None)
@given(st.randoms(use_true_random=False))
def test_redaction_rebuilds_only_where_hidden_refs_are(r: random.Random) -> None:
    draft, policy = _draft(r)
    prepared = prepare(draft, policy)
    if prepared.output is None:
        return
    evidence = lookup(draft.tenant_id, prepared.refs_to_resolve)
    ev = evaluate(prepared, evidence, policy, NOW)
    retrieval = draft.retrieval_set()
    resolutions = {
        o.ref: resolve(o.ref, evidence.get(o.ref), draft.principal, retrieval, NOW)
        for o in prepared.occurrences
    }
    hidden = frozenset(ref for ref, state in resolutions.items() if state in HIDDEN)
    verdicts = [
        UnitVerdict(u, unit_status(u, resolutions, policy.lost_support)) for u in prepared.units
    ]
    everything = redact_output(prepared.output, verdicts, hidden, policy.hedge_sentence)
    assert ev.redacted_output == everything
