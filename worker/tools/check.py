"""``grounding-worker check``: the worker's verdict on one draft, without Kafka.

For people building agent producers. The draft goes through exactly the worker's path — the
core's batch use case, ``worker.core.batch``'s ``plan_batch`` and ``decide_batch`` on a batch of
one, around one evidence fetch — so check and the worker cannot disagree. The report names
failure codes with their field paths, claim statuses and how much would be redacted, as counts: a
hidden citation's id never appears, because whoever runs check may not be the principal the draft
is for.

Decisions:

- The draft is the first of its turn (state *open*). ``--attempt N`` overrides the envelope's
  attempt (on an open turn, a failing attempt ≥ 1 ends could-not-ground); ``--after-regeneration``
  evaluates it as the draft that answers a regenerate request (state *regenerating*, same
  identity), where any failure is final.
- A bare agent output (``--tenant`` and ``--user`` given) is wrapped in an envelope with
  ``turn_id`` ``check-turn`` and ``draft_id`` ``check-draft``; a file that is not a JSON object is
  taken as the model's raw text (canonicalized like a string ``output``).
- An envelope is read as if its record key were its ``turn_id`` (what a correct producer sends).
- Typed claims (rule 7b): when the tenant's policy declares claims, the report lists one claim
  check per declared claim (empty when the output did not validate: nothing typed to check);
  otherwise the report has no ``claim_checks`` at all, as the messages have none.
- Exit codes: 0 grounded; 1 regenerate or could-not-ground; 2 unusable input (unreadable file,
  a dead-letter class, bad options); 3 the evidence stores could not be asked.
- A bug on a draft (any exception but a store fault) is what the worker makes of it: the dead
  letter ``internal_error`` naming the exception's class, never a traceback (one could quote
  draft text).
"""

from __future__ import annotations

import contextlib
import gc
from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any, NamedTuple

from worker.core import (
    DEFAULT_TOPICS,
    HIDDEN,
    BatchPlan,
    BatchRules,
    CitationRef,
    ClaimUnit,
    EnvelopeRejection,
    ErrorClass,
    EvidenceRecord,
    EvidenceStore,
    Incoming,
    Judgement,
    Outcome,
    PolicyBook,
    Resolution,
    SupportResult,
    TopicRole,
    TurnState,
    UnitKind,
    awaiting_regeneration,
    claim_checks_wire,
    decide_batch,
    dumps_json,
    loads_json,
    plan_batch,
)

EXIT_GROUNDED = 0
EXIT_NOT_GROUNDED = 1
EXIT_UNUSABLE = 2
EXIT_STORES_DOWN = 3
BARE_TURN = "check-turn"
BARE_DRAFT = "check-draft"
PREVIOUS_DRAFT = "check-previous-draft"


class BareOutput(NamedTuple):
    """Who and what a bare agent output is for."""

    tenant_id: str
    user_id: str
    groups: tuple[str, ...]
    kind: str


class CheckRequest(NamedTuple):
    """One check."""

    content: bytes
    bare: BareOutput | None = None
    attempt: int | None = None
    after_regeneration: bool = False


def to_record(request: CheckRequest) -> tuple[bytes | None, bytes]:
    """The (key, value) the worker would consume for this request."""
    if request.bare is None:
        try:  # the core's reader, as the worker's: ids past 64 bits are ids, not bad JSON
            obj = loads_json(request.content)
        except (ValueError, RecursionError):
            obj = None
        turn = obj.get("turn_id") if isinstance(obj, dict) else None
        return (turn.encode("utf-8") if isinstance(turn, str) else None), request.content
    b = request.bare
    output: Any
    try:
        output = loads_json(request.content)
    except (ValueError, RecursionError):
        output = None
    if not isinstance(output, dict):
        output = request.content.decode("utf-8", errors="replace")
    envelope = {
        "schema_version": 1,
        "draft_id": BARE_DRAFT,
        "turn_id": BARE_TURN,
        "attempt": 0,
        "tenant_id": b.tenant_id,
        "principal": {"user_id": b.user_id, "groups": list(b.groups)},
        "kind": b.kind,
        "output": output,
    }
    return BARE_TURN.encode(), dumps_json(envelope).encode()


def report(
    judgement: Judgement,
    *,
    state: str,
    messages: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    """The check report (the ``--json`` form). Hidden ids appear only as counts."""
    admitted, evaluation, outcome = judgement.admitted, judgement.evaluation, judgement.outcome
    draft = admitted.draft
    resolutions = judgement.resolutions
    hidden = {ref for ref, r in resolutions.items() if r in HIDDEN}
    by_resolution = Counter(r.value for r in resolutions.values())
    body: dict[str, Any] = {
        "outcome": outcome.value,
        "exit_code": EXIT_GROUNDED if outcome is Outcome.GROUNDED else EXIT_NOT_GROUNDED,
        "kind": draft.kind.value,
        "tenant_id": draft.tenant_id,
        "user_id": draft.principal.user_id,
        "attempt": draft.attempt,
        "state": state,
        "failures": [
            {"code": f.code.value, "path": f.path, "citation": f.citation}
            for f in evaluation.failures
        ],
        "claims": [
            _claim(u, status.value, evaluation.unit_support.get(position))
            for position, (u, status) in enumerate(judgement.unit_statuses)
        ],
        "citations": {r.value: by_resolution[r.value] for r in Resolution},
        "redacted": {
            "ids": len(hidden),
            "occurrences": sum(1 for ref in admitted.prepared.cited if ref in hidden),
        },
    }
    if admitted.policy.claims:
        body["claim_checks"] = claim_checks_wire(evaluation.claim_checks)
    if messages is not None:
        body["messages"] = messages
    return body


#: The field a non-sentence unit's text is, under its path (``claims[2]`` -> ``claims[2].text``).
_UNIT_FIELD = {
    UnitKind.CLAIM: ".text",
    UnitKind.SECTION: ".body_markdown",
    UnitKind.TIMELINE: ".text",
}


def _claim(unit: ClaimUnit, status: str, support: SupportResult | None) -> dict[str, Any]:
    """One unit of the report, with where it is: ``field``, the string it is part of, and
    ``start``/``end``, its character offsets there (a sentence's span in ``answer_markdown``; the
    whole string for an item, a section body or a proposal's summary). With rule 6b's evidence
    when it was checked: the level, the share of its words found, its own numbers and words no
    cited source has, and the visible source that came closest (only visible sources are ever
    compared)."""
    if unit.span is not None:
        field, (start, end) = unit.path, unit.span
    elif unit.kind is UnitKind.PROPOSAL:
        field, start, end = "summary", 0, len(unit.text)
    else:
        field, start, end = unit.path + _UNIT_FIELD.get(unit.kind, ""), 0, len(unit.text)
    entry: dict[str, Any] = {
        "kind": unit.kind.value,
        "path": unit.path,
        "index": unit.index,
        "field": field,
        "start": start,
        "end": end,
        "status": status,
    }
    if support is not None:
        entry["support"] = {
            "level": support.level.value,
            "score": support.score,
            "missing_numbers": list(support.missing_numbers),
            "missing_words": list(support.missing_words),
            "negation_flip": support.negation_flip,
            "closest": support.closest.label if support.closest is not None else None,
        }
    return entry


def dead_letter_report(rejection: EnvelopeRejection) -> dict[str, Any]:
    """The report of a draft the worker would dead-letter."""
    return {
        "outcome": Outcome.DEAD_LETTER.value,
        "exit_code": EXIT_UNUSABLE,
        "dead_letter_class": rejection.error_class.value,
        "reason": rejection.message,
    }


#: What a check decides under: the contract's topic names, and no retention (the turn is new).
_RULES = BatchRules(topics=DEFAULT_TOPICS, retention_s=None)


async def check(
    request: CheckRequest,
    evidence: EvidenceStore,
    policies: PolicyBook,
    now: datetime,
    *,
    max_bytes: int,
    show_messages: bool = False,
) -> dict[str, Any]:
    """The verdict on one draft (store faults propagate: the caller exits 3).

    Any other exception is a bug the worker would dead-letter as ``internal_error`` (naming the
    exception's class only, as it does), and so does ``check``: never a traceback. The core's
    batch door already routes a record whose planning or decision raised that way.

    Planning and deciding run with the cyclic garbage collector paused, as the worker decides a
    batch (``GW_GC_PAUSED_IN_BATCH``): a 1 MiB draft of hundreds of thousands of sentences costs
    the same CPU here as in the worker.
    """
    key, value = to_record(request)
    record = Incoming(DEFAULT_TOPICS[TopicRole.DRAFTS], 0, 0, 0, key, value, ())
    with _collector_paused():
        plan = plan_batch([record], policies, max_bytes=max_bytes)
    if request.attempt is not None:
        try:
            plan = BatchPlan(tuple(p.with_attempt(request.attempt, policies) for p in plan.records))
        except Exception as exc:  # noqa: BLE001 - the batch door catches the same
            return _internal_error(exc)
    # One draft: at most one tenant, asked through the worker's own batch door.
    wanted = plan.wanted
    found: Mapping[str, Mapping[CitationRef, EvidenceRecord]] = (
        await evidence.fetch_batch(wanted) if wanted else {}
    )
    states: dict[str, TurnState] = {}
    admitted = plan.records[0].admitted
    if request.after_regeneration and admitted is not None:
        draft = admitted.draft
        states[draft.turn_id] = awaiting_regeneration(
            draft, admitted.policy.version, PREVIOUS_DRAFT
        )
    with _collector_paused():
        (route,) = decide_batch(plan, found, states, now, _RULES).routes
    if route.dead_letter is not None:
        return dead_letter_report(route.dead_letter)
    judgement = route.judgement
    if judgement is None:
        raise TypeError("a decided draft's route carries its judgement")
    messages = None
    if show_messages:
        # The ledger records hidden ids by kind and id: it is never shown here.
        messages = [
            {"topic": o.topic.value, "value": loads_json(o.value)}
            for o in judgement.decision.outbound
            if o.topic is not TopicRole.LEDGER
        ]
    return report(
        judgement,
        state="regenerating" if request.after_regeneration else "open",
        messages=messages,
    )


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No automatic garbage collection inside (restored as it was); the batch's objects die by
    reference counting when it ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _internal_error(exc: Exception) -> dict[str, Any]:
    """The report of a draft the worker would dead-letter as ``internal_error``."""
    rejection = EnvelopeRejection(
        ErrorClass.INTERNAL_ERROR, f"internal error: {type(exc).__name__}"
    )
    return dead_letter_report(rejection)


def _claim_check_lines(result: dict[str, Any]) -> list[str]:
    if "claim_checks" not in result:
        return []
    checks = result["claim_checks"]
    if not checks:
        return ["claim checks: not run (the output did not validate)"]
    counts = Counter(c["disposition"] for c in checks)
    lines = [
        f"claim checks: {len(checks)} ("
        + ", ".join(f"{n} {d}" for d, n in sorted(counts.items()))
        + ")"
    ]
    for c in checks:
        fact = f"{c.get('entity', '-')} {c['field']}"
        superseded = " (superseded)" if c.get("superseded") else ""
        lines.append(f"  {c['answer_field']:<24} {fact:<30} {c['disposition']}{superseded}")
    return lines


def readable(result: dict[str, Any]) -> list[str]:
    """The report for people."""
    if result["outcome"] == "dead_letter":
        return [
            f"outcome: dead_letter ({result['dead_letter_class']})",
            f"  {result['reason']}",
            "  the worker would not decide this draft; it would go to the dead-letter topic",
        ]
    where = (
        "answer to a regenerate request"
        if result["state"] == "regenerating"
        else "first draft of the turn"
    )
    lines = [
        f"outcome: {result['outcome']}  ({result['kind']}, {where}, attempt {result['attempt']},"
        f" tenant {result['tenant_id']}, user {result['user_id']})"
    ]
    failures = result["failures"]
    lines.append(f"failures: {len(failures)}")
    for f in failures:
        extra = f"  {f['citation']}" if f["citation"] else ""
        lines.append(f"  {f['code']:<24} {f['path'] or '-'}{extra}")
    claims = result["claims"]
    counts = Counter(c["status"] for c in claims)
    lines.append(
        f"claims: {len(claims)}"
        + (" (" + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + ")" if claims else "")
    )
    for c in claims:
        unit = f"{c['path']} sentence {c['index'] + 1}" if c["kind"] == "sentence" else c["path"]
        unit = f"{unit} [{c['start']}:{c['end']}]"
        support = c.get("support")
        if support is None:
            lines.append(f"  {unit:<40} {c['status']}")
            continue
        lines.append(
            f"  {unit:<40} {c['status']}, {support['level']}"
            f" ({round(support['score'] * 100)}% of its words in the sources;"
            f" closest {support['closest']})"
        )
        if support["missing_numbers"]:
            numbers = ", ".join(support["missing_numbers"])
            lines.append(f"    numbers no cited source has: {numbers}")
        if support["negation_flip"]:
            lines.append("    it negates what no cited source negates")
        if support["level"] != "supported" and support["missing_words"]:
            lines.append(f"    words no cited source has: {', '.join(support['missing_words'])}")
    lines.extend(_claim_check_lines(result))
    cited = {k: v for k, v in result["citations"].items() if v}
    lines.append(
        f"citations: {sum(cited.values())} distinct"
        + (" (" + ", ".join(f"{n} {r}" for r, n in cited.items()) + ")" if cited else "")
    )
    red = result["redacted"]
    lines.append(
        f"redacted for this reader: {red['ids']} source(s), {red['occurrences']} occurrence(s)"
        " (ids not shown)"
    )
    for m in result.get("messages", []):
        lines.append(f"message to {m['topic']}:")
        lines.append("  " + dumps_json(m["value"], sort_keys=True))
    return lines
