"""The draft mix: ~2 KB analyst answers in the proportions the benchmark asks for.

Per 20 drafts: 14 grounded, 3 regenerate (a dangling citation at attempt 0), 1 could-not-ground
(alternately ``no_grounding: true`` and the second, still dangling, attempt of an earlier
regenerated turn), 1 grounded after redacting a hidden document (one of its sentences is hedged)
and 1 malformed envelope (alternately truncated JSON and a missing ``principal.user_id``), which
is dead-lettered.

Each draft carries a W3C ``traceparent`` whose trace id encodes its index; the worker copies it
onto every derived message (and the DLQ keeps it), so an output is matched to its draft exactly.
"""

from __future__ import annotations

import random
from collections import deque
from datetime import UTC, datetime
from typing import Any, NamedTuple

import orjson

from dev.bench.corpus import TenantEvidence

#: The decisive output topic role of each category (ledger batches are not counted).
EXPECTED_ROLE = {
    "grounded": "validated",
    "hidden": "validated",
    "regenerate": "regenerate",
    "no_grounding": "could_not_ground",
    "second_attempt": "could_not_ground",
    "malformed": "dlq",
}
CYCLE = ["grounded"] * 14 + ["regenerate"] * 3 + ["cng", "hidden", "malformed"]
INDEX_BITS = 32


class DraftRecord(NamedTuple):
    """One record to produce on the drafts topic."""

    index: int  # type: ignore[assignment]  # the field, not tuple.index
    category: str
    key: bytes
    value: bytes
    headers: list[tuple[str, bytes]]
    tenant_id: str
    #: The envelope's ``draft_id``.
    draft_id: str


def traceparent(run_id: int, index: int) -> bytes:
    """A valid traceparent whose trace id carries the run and the draft's index."""
    trace = (run_id << INDEX_BITS) | index
    return f"00-{trace:032x}-{index + 1:016x}-01".encode()


def index_of(traceparent_value: bytes, run_id: int) -> int | None:
    """The draft index a traceparent carries, or None when it is not one of this run's."""
    try:
        trace = int(traceparent_value[3:35], 16)
    except ValueError:
        return None
    if trace >> INDEX_BITS != run_id:
        return None
    return trace & ((1 << INDEX_BITS) - 1)


def _cite(ref: tuple[str, int, str]) -> str:
    return f"[{ref[0]}-{ref[1]}]"


def _said(text: str) -> str:
    """The first sentence of a source's text, without its stop: what a finding citing it says
    (and what a quote of it quotes), so a grounded draft of the mix is supported (rule 6b)."""
    return text.split(".", 1)[0].strip()


class MixGenerator:
    """Deterministic drafts for a run; indices never repeat, so every turn is fresh."""

    def __init__(
        self, tenants: tuple[TenantEvidence, ...], run_id: int, seed: int = 11, scope: str = ""
    ) -> None:
        self._tenants = tenants
        self._run_id = run_id
        #: In every turn and draft id, so two scenarios of a run never share one (the ledger
        #: check counts a scenario's drafts in Postgres by their ids).
        self._scope = scope
        self._rng = random.Random(seed)
        self._next = 0
        self._awaiting_retry: deque[dict[str, Any]] = deque()
        self._cng_count = 0
        self._malformed_count = 0

    def take(self, count: int, categories: list[str] | None = None) -> list[DraftRecord]:
        """The next ``count`` drafts of the mix (or of the given categories, cycled)."""
        out = []
        for _ in range(count):
            index = self._next
            self._next += 1
            if categories is not None:
                category = categories[index % len(categories)]
            else:
                cycle_pos = index % len(CYCLE)
                if cycle_pos == 0:
                    self._order = CYCLE[:]
                    self._rng.shuffle(self._order)
                category = self._order[cycle_pos]
            out.append(self._draft(index, category))
        return out

    # ------------------------------------------------------------------------------------------
    def _draft(self, index: int, category: str) -> DraftRecord:
        tenant = self._tenants[index % len(self._tenants)]
        turn_id = f"t-{self._run_id:x}{self._scope}-{index}"
        attempt = 0
        dangling = hidden = False
        no_grounding = False
        if category == "cng":
            self._cng_count += 1
            if self._cng_count % 2 == 0 and self._awaiting_retry:
                first = self._awaiting_retry.popleft()
                tenant, turn_id, attempt = first["tenant"], first["turn_id"], 1
                category, dangling = "second_attempt", True
            else:
                category, no_grounding = "no_grounding", True
        elif category == "regenerate":
            dangling = True
        elif category == "hidden":
            hidden = True
        draft_id = f"d-{self._run_id:x}{self._scope}-{index}"
        envelope = {
            "schema_version": 1,
            "draft_id": draft_id,
            "turn_id": turn_id,
            "attempt": attempt,
            "tenant_id": tenant.tenant_id,
            "principal": {"user_id": tenant.user_id, "groups": list(tenant.groups)},
            "kind": "answer",
            "output": None,
            "retrieval": None,
            "produced_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        output, cited = self._answer(tenant, index, dangling=dangling, hidden=hidden)
        if no_grounding:
            output["no_grounding"] = True
        envelope["output"] = output
        envelope["retrieval"] = [{"kind": k, "id": i} for k, i in sorted(cited)]
        if category == "regenerate":
            self._awaiting_retry.append({"tenant": tenant, "turn_id": turn_id})
        value = orjson.dumps(envelope)
        if category == "malformed":
            self._malformed_count += 1
            if self._malformed_count % 2:
                value = value[: len(value) // 2]  # cut mid-way: not JSON
            else:
                envelope["principal"] = {"groups": list(tenant.groups)}
                value = orjson.dumps(envelope)
        headers = [("traceparent", traceparent(self._run_id, index))]
        return DraftRecord(
            index,
            category,
            turn_id.encode(),
            value,
            headers,
            tenant.tenant_id,
            draft_id,
        )

    def _answer(
        self, tenant: TenantEvidence, index: int, *, dangling: bool, hidden: bool
    ) -> tuple[dict[str, Any], set[tuple[str, int]]]:
        rng = self._rng
        refs = rng.sample(tenant.visible, 8)
        cited = {(r[0], r[1]) for r in refs}
        lines = []
        # Every finding restates the first sentence of the source it cites first, so a grounded
        # draft of the mix is supported too (contract rule 6b): the benchmark measures the check.
        for i in range(6):
            a, b = refs[i], refs[(i + 1) % 8]
            tokens = _cite(a) + (_cite(b) if i % 2 == 0 else "")
            if dangling and i == 2:
                ghost = tenant.dangling_base + index % 500
                tokens += f"[OBS-{ghost}]"
                cited.add(("OBS", ghost))
            if hidden and i == 3:
                secret = rng.choice(tenant.hidden_docs)
                tokens += f"[DOC-{secret}]"
                cited.add(("DOC", secret))
            lines.append(f"- {_said(a[2])} {tokens}.")
        if hidden:
            secret = rng.choice(tenant.hidden_docs)
            lines.append(f"- The restructuring memo names the owners of the change [DOC-{secret}].")
            cited.add(("DOC", secret))
        markdown = (
            f"## Summary\n\n{_said(refs[7][2])} {_cite(refs[7])}.\n\n"
            + "\n".join(lines)
            + "\n\nWhat triggered the first alert is still open?\n"
        )
        quoted = [r for r in refs if r[0] in ("OBS", "DOC")][:2]
        output: dict[str, Any] = {
            "answer_markdown": markdown,
            "citations": [{"kind": r[0], "id": r[1], "quote": _said(r[2])} for r in quoted],
            "claims": [
                {
                    "text": f"{_said(refs[i][2])} {_cite(refs[i])}.",
                    "citations": [{"kind": refs[i + 4][0], "id": refs[i + 4][1]}],
                }
                for i in range(3)
            ],
            "tool_calls_made": ["query_observations", "search_corpus"],
        }
        return output, cited
