"""Every route of the contract, end to end: drafts in on Kafka, the worker process, verdicts out.

One worker serves the whole module (private topics; each test uses its own turn ids), once per
drafts intake (``GW_DRAFTS_INTAKE``: the agent's stream, and the conductor channel), so every
route holds under both. It runs with ``GW_MAX_DRAFT_BYTES=4096`` so the oversized route needs
only a small draft. Evidence is the demo corpus: acme users u-ana (analysts), u-bob (sales), u-cy
(no groups).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.request
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from dev.harness import Bus, Received, WorkerProcess, answer, draft, running, unique_id
from worker import __version__

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

MAX_DRAFT_BYTES = 4096
DLQ_HEADERS = (
    "dlq.original.topic",
    "dlq.original.partition",
    "dlq.original.offset",
    "dlq.original.timestamp",
    "dlq.error.class",
    "dlq.error.message",
    "dlq.failed_at",
    "dlq.worker.version",
    "dlq.replay.count",
)
VERDICT_ROLES = ("validated", "regenerate", "could_not_ground")

ANA = {"user_id": "u-ana", "groups": ("analysts",)}
BOB = {"user_id": "u-bob", "groups": ("sales",)}
CY = {"user_id": "u-cy", "groups": ()}

DOC_9002_TITLE = "Q2 refund anomaly analysis"
DOC_9002_TEXT = (
    "EU card refunds rose sharply in the second quarter. Most of the excess is explained by "
    "duplicate charges created when the payment provider retried timed-out captures. Refunds "
    "outside the EU stayed within their usual range."
)
OBS_1001_QUOTE = "Checkout p95 latency rose from 180 ms to 840 ms"


@pytest.fixture(scope="module", params=["stream", "channel"])
async def wb(
    new_worker: Callable[..., WorkerProcess], request: pytest.FixtureRequest
) -> AsyncIterator[tuple[WorkerProcess, Bus]]:
    env = {"GW_MAX_DRAFT_BYTES": str(MAX_DRAFT_BYTES), "GW_DRAFTS_INTAKE": request.param}
    worker = new_worker(f"routes-{request.param}", env=env)
    async with running(worker) as pair:
        yield pair


@pytest.fixture
def bus(wb: tuple[WorkerProcess, Bus]) -> Bus:
    return wb[1]


@pytest.fixture
def worker(wb: tuple[WorkerProcess, Bus]) -> WorkerProcess:
    return wb[0]


def reasons_of(rec: Received) -> list[dict[str, Any]]:
    return list(rec.json()["reasons"])


async def only_on(
    bus: Bus, turn: str, role: str, count: int = 1, also: tuple[str, ...] = ()
) -> list[Received]:
    """Wait for ``count`` records on ``role`` for ``turn``; then none on other verdict topics
    (but ``also``) nor on the dead-letter topic."""
    got = await bus.wait_for(role, key=turn, count=count)
    await bus.settle(1.0)
    got = bus.messages(role, key=turn)
    assert len(got) == count, [r.value for r in got]
    for other in (*VERDICT_ROLES, "dlq"):
        if other != role and other not in also:
            assert bus.messages(other, key=turn) == [], f"unexpected {other} for {turn}"
    return got


async def ledger_rows(pg: Any, turn: str, count: int, wait_s: float = 30.0) -> list[Any]:
    """The ``citation_ledger`` rows of ``turn`` once there are at least ``count``."""
    deadline = time.monotonic() + wait_s
    while True:
        rows = await pg.fetch(
            "SELECT * FROM citation_ledger WHERE turn_id = $1 ORDER BY draft_id, kind, source_id",
            turn,
        )
        if len(rows) >= count or time.monotonic() > deadline:
            return list(rows)
        await asyncio.sleep(0.3)


# --------------------------------------------------------------------------------------------------
# Verdict routes


async def test_grounded(bus: Bus, pg: Any) -> None:
    turn = unique_id("t-grounded")
    env = draft(
        turn,
        answer(
            "Checkout latency rose after the deploy [OBS-1001]. The runbook says to roll back "
            "a deploy younger than an hour [DOC-9001].",
            citations=[{"kind": "OBS", "id": 1001, "quote": OBS_1001_QUOTE}],
        ),
        **ANA,
    )
    await bus.send(env)
    (rec,) = await only_on(bus, turn, "validated")
    msg = rec.json()
    assert msg["status"] == "grounded"
    assert (msg["turn_id"], msg["draft_id"], msg["attempt"]) == (turn, env["draft_id"], 0)
    assert (msg["tenant_id"], msg["user_id"], msg["kind"]) == ("acme", "u-ana", "answer")
    assert msg["output"] == env["output"]
    by_ref = {(c["kind"], c["id"]): c for c in msg["citations"]}
    assert set(by_ref) == {("OBS", 1001), ("DOC", 9001)}
    assert by_ref["OBS", 1001]["quote_check"] == "exact"
    assert by_ref["DOC", 9001]["title"] == "Payments incident runbook"
    assert "title" not in by_ref["OBS", 1001]
    assert [c["grounding_status"] for c in msg["claims"]] == ["cited", "cited"]
    (ledger,) = await bus.wait_for("ledger", key=turn)
    batch = ledger.json()
    assert batch["outcome"] == "grounded"
    assert {(r["kind"], r["source_id"], r["resolution"]) for r in batch["rows"]} == {
        ("OBS", "1001", "resolved"),
        ("DOC", "9001", "resolved"),
    }
    rows = await ledger_rows(pg, turn, 2)
    assert [(r["kind"], int(r["source_id"]), r["resolution"], r["outcome"]) for r in rows] == [
        ("DOC", 9001, "resolved", "grounded"),
        ("OBS", 1001, "resolved", "grounded"),
    ]
    assert rows[1]["quote_check"] == "exact"


async def test_regenerate_then_grounded(bus: Bus) -> None:
    turn = unique_id("t-regen-ok")
    first = draft(turn, answer("Latency rose after the deploy [OBS-999999]."), **ANA)
    await bus.send(first)
    (regen,) = await bus.wait_for("regenerate", key=turn)
    req = regen.json()
    assert (req["draft_id"], req["attempt"], req["kind"]) == (first["draft_id"], 1, "answer")
    assert req["principal"] == {"user_id": "u-ana", "groups": ["analysts"]}
    assert req["reasons"] == [
        {
            "code": "dangling_citation",
            "path": "answer_markdown",
            "citation": "OBS-999999",
            "detail": "no such source for this tenant",
        }
    ]
    assert req["previous_output"] == first["output"]
    assert req["deadline"].endswith("Z")

    second = draft(turn, answer("Latency rose after the deploy [OBS-1001]."), attempt=1, **ANA)
    await bus.send(second)
    (rec,) = await only_on(bus, turn, "validated", also=("regenerate",))
    msg = rec.json()
    assert (msg["draft_id"], msg["attempt"], msg["status"]) == (second["draft_id"], 1, "grounded")
    assert len(bus.messages("regenerate", key=turn)) == 1
    ledger = await bus.wait_for("ledger", key=turn, count=2)
    assert [b.json()["outcome"] for b in ledger] == ["regenerate", "grounded"]


async def test_regenerate_then_could_not_ground(bus: Bus, pg: Any) -> None:
    turn = unique_id("t-regen-cng")
    first = draft(turn, answer("Latency rose [OBS-999999]."), **ANA)
    await bus.send(first)
    await bus.wait_for("regenerate", key=turn)
    second = draft(turn, answer("Latency rose [EVT-999999]."), attempt=1, **ANA)
    await bus.send(second)
    (rec,) = await bus.wait_for("could_not_ground", key=turn)
    await bus.settle(1.0)
    assert len(bus.messages("could_not_ground", key=turn)) == 1
    assert len(bus.messages("regenerate", key=turn)) == 1
    assert bus.messages("validated", key=turn) == []
    msg = rec.json()
    assert msg["status"] == "could_not_ground"
    assert (msg["draft_id"], msg["attempt"], msg["attempts"]) == (second["draft_id"], 1, 2)
    # Codes and paths only: no citation, detail or excerpt.
    assert msg["reasons"] == [{"code": "dangling_citation", "path": "answer_markdown"}]
    assert "999999" not in rec.value.decode()
    rows = await ledger_rows(pg, turn, 2)
    assert {(r["draft_id"], r["outcome"], r["resolution"]) for r in rows} == {
        (first["draft_id"], "regenerate", "dangling"),
        (second["draft_id"], "could_not_ground", "dangling"),
    }


async def test_buried_dangling_ids_are_named_with_their_path(bus: Bus) -> None:
    turn = unique_id("t-buried")
    report = {
        "title": "Checkout latency incident",
        "status": "DRAFT",
        "sections": [
            {
                "heading": "Impact",
                "body_markdown": "Checkout latency rose to 840 ms [OBS-1001].",
                "citations": [{"kind": "EVT", "id": 999997}],
            }
        ],
        "timeline": [
            {"at": "2026-12-01T14:05:00Z", "text": "Deploy of payments-api 2.3.0 [EVT-501]."},
            {"at": "2026-12-01T14:15:00Z", "text": "Latency alert fired [OBS-999998]."},
        ],
    }
    await bus.send(draft(turn, report, kind="report", **ANA))
    (regen,) = await only_on(bus, turn, "regenerate")
    reasons = regen.json()["reasons"]
    dangling = sorted(
        ((r["path"], r["citation"]) for r in reasons if r["code"] == "dangling_citation"),
    )
    assert dangling == [
        ("sections[0].citations[0]", "EVT-999997"),
        ("timeline[1].text", "OBS-999998"),
    ]
    assert {r["code"] for r in reasons} == {"dangling_citation"}


async def test_cross_tenant_id_is_indistinguishable_from_an_absent_one(bus: Bus, pg: Any) -> None:
    """acme citing globex's OBS-2001 reads exactly like citing an id that never existed."""
    text = "Scanner uptime was high last week [OBS-{}]."
    turns = {2001: unique_id("t-xtenant"), 2999: unique_id("t-absent")}
    for source, turn in turns.items():
        await bus.send(draft(turn, answer(text.format(source)), draft_id=f"{turn}-d", **ANA))
    requests = {}
    for source, turn in turns.items():
        (regen,) = await bus.wait_for("regenerate", key=turn)
        requests[source] = regen.json()

    def neutral(msg: dict[str, Any], source: int, turn: str) -> str:
        body = {k: v for k, v in msg.items() if k not in {"event_id", "deadline"}}
        return json.dumps(body, sort_keys=True).replace(str(source), "N").replace(turn, "T")

    assert requests[2001]["reasons"][0]["citation"] == "OBS-2001"
    assert requests[2999]["reasons"][0]["citation"] == "OBS-2999"
    assert neutral(requests[2001], 2001, turns[2001]) == neutral(requests[2999], 2999, turns[2999])
    for source, turn in turns.items():
        (batch,) = await bus.wait_for("ledger", key=turn)
        assert batch.json()["rows"] == [
            {
                "kind": "OBS",
                "source_id": str(source),
                "resolution": "dangling",
                "quote_check": "none",
                "paths": ["answer_markdown"],
                "support": "none",
            }
        ]
        (row,) = await ledger_rows(pg, turn, 1)
        assert (row["kind"], int(row["source_id"]), row["resolution"]) == (
            "OBS",
            source,
            "dangling",
        )


# --------------------------------------------------------------------------------------------------
# Redaction


#: A UUID (``event_id``, ``draft_id``) or the random hex of ``unique_id`` (a turn id's suffix).
_RANDOM_IDS = re.compile(
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|(?<=-)[0-9a-f]{8}\b"
)


def _blob(rec: Any) -> str:
    """A record's value and headers without random ids, whose hex digits could spell a hidden
    id by chance (an ``event_id`` holding ``-9002-`` once failed a run)."""
    return _RANDOM_IDS.sub("<id>", rec.value.decode() + repr(rec.headers))


def _clean(text: str) -> str:
    """Log text without ISO timestamps, whose digits could spell an id by chance."""
    return re.sub(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?Z?", "<ts>", text)


HIDDEN_SENTENCE = "EU refunds tripled because the provider retried captures"


async def test_hidden_document_is_redacted_everywhere(
    bus: Bus, worker: WorkerProcess, pg: Any
) -> None:
    """u-cy may not see DOC-9002: no verdict topic, header or log line names it or its words."""
    grounded, regen = unique_id("t-hidden-ok"), unique_id("t-hidden-cng")
    trace = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    hidden_output = answer(
        f"Latency rose after the deploy [OBS-1001]. {HIDDEN_SENTENCE} [DOC-9002].",
        citations=[{"kind": "DOC", "id": 9002, "quote": "duplicate charges created"}],
    )
    await bus.send(draft(grounded, hidden_output, **CY), headers=[("traceparent", trace)])
    # The same hidden citation beside a dangling one: regenerate, then could-not-ground.
    failing = answer(f"{HIDDEN_SENTENCE} [DOC-9002]. Latency rose [OBS-999999].")
    await bus.send(draft(regen, failing, **CY))
    await bus.wait_for("regenerate", key=regen)
    await bus.send(draft(regen, failing, attempt=1, **CY))

    (ok,) = await bus.wait_for("validated", key=grounded)
    await bus.wait_for("could_not_ground", key=regen)
    await bus.settle(1.0)
    msg = ok.json()
    assert msg["citations"] == [{"kind": "OBS", "id": 1001, "quote_check": "none"}]
    assert [c["grounding_status"] for c in msg["claims"]] == ["cited", "hedged"]
    assert msg["output"]["citations"] == []

    forbidden = ("9002", DOC_9002_TITLE, "duplicate charges", "refund", HIDDEN_SENTENCE)
    for turn in (grounded, regen):
        for role in VERDICT_ROLES:
            for rec in bus.messages(role, key=turn):
                blob = _blob(rec)
                for needle in forbidden:
                    assert needle.lower() not in blob.lower(), (role, needle, blob)
    assert DOC_9002_TEXT not in worker.log_text()
    for line in _clean(worker.log_text()).splitlines():
        assert not re.search(r"(?<!\d)9002(?!\d)", line), line
        assert DOC_9002_TITLE not in line
        assert HIDDEN_SENTENCE not in line

    # Only the ledger records it, by kind, id and resolution.
    (batch,) = bus.messages("ledger", key=grounded)
    rows = {(r["kind"], r["source_id"]): r for r in batch.json()["rows"]}
    assert rows["DOC", "9002"]["resolution"] == "acl_redacted"
    assert rows["OBS", "1001"]["resolution"] == "resolved"
    table = await ledger_rows(pg, grounded, 2)
    assert {(r["kind"], int(r["source_id"]), r["resolution"]) for r in table} == {
        ("DOC", 9002, "acl_redacted"),
        ("OBS", 1001, "resolved"),
    }


#: Shapes a hand-written reader once read differently from the renderer. In each, the sentence
#: with the hidden document's words is its own unit (cmark-gfm's reading), so u-cy gets it hedged.
RENDERER_SHAPES = {
    "fence_in_quote": f"> ```\n> code\n\n{HIDDEN_SENTENCE} [DOC-9002].",
    "setext_after_quote": f"> {HIDDEN_SENTENCE} [DOC-9002].\n---",
    "pipeless_table": f"Metric | Value\n--- | ---\n{HIDDEN_SENTENCE} [DOC-9002] | 3",
    "cjk": f"Latency rose after the deploy [OBS-1001]。{HIDDEN_SENTENCE}[DOC-9002]。",
    "abbreviation": f"{HIDDEN_SENTENCE} in the U.S. [DOC-9002] Latency rose [OBS-1001].",
    "question_in_parentheses": f"{HIDDEN_SENTENCE} (in May?) [DOC-9002].",
}


@pytest.mark.parametrize("shape", sorted(RENDERER_SHAPES))
async def test_hidden_only_words_never_ride_a_markdown_shape(bus: Bus, shape: str) -> None:
    turn = unique_id(f"t-shape-{shape}")
    markdown = f"Latency rose after the deploy [OBS-1001].\n\n{RENDERER_SHAPES[shape]}"
    await bus.send(draft(turn, answer(markdown), **CY))
    (rec,) = await only_on(bus, turn, "validated")
    msg = rec.json()
    assert "hedged" in [c["grounding_status"] for c in msg["claims"]], msg["claims"]
    blob = _blob(rec)
    for needle in ("9002", "refunds tripled", "retried captures", DOC_9002_TITLE):
        assert needle not in blob, (shape, needle)


#: The fourth adversarial round's Markdown shapes (contract v4 rule 5): in each, the words next
#: to DOC-9002 only, or a sentence that lost it and that OBS-1001 alone does not support, must not
#: reach u-cy, whose answer is grounded with the rest.
V4_SHAPES = {
    "group_across_blocks": f"# {HIDDEN_SENTENCE} [DOC-9002]\n[OBS-1001] Latency rose again.",
    "wrapped_question": "Did EU refunds triple\nbecause the provider retried captures? [DOC-9002]",
    "wrapped_setext_heading": (
        "EU refunds tripled because\nthe provider retried captures [DOC-9002]\n==="
    ),
    "wrapped_html_comment": (
        "<!-- EU refunds tripled because\nthe provider retried captures [DOC-9002] -->"
    ),
    "wrapped_image_alt": (
        "![EU refunds tripled because\nthe provider retried captures [DOC-9002]](c.png)"
    ),
    "table_header_row": (
        "| EU refunds tripled | because the provider retried captures [DOC-9002] |\n"
        "|---|---|\n| Latency [OBS-1001] | rose |"
    ),
    "heading_citing_hidden_and_visible": f"## {HIDDEN_SENTENCE} [DOC-9002] [OBS-1001]",
    "weak_beside_visible": (
        "Latency rose while EU refunds tripled because the provider retried captures "
        "[OBS-1001] [DOC-9002]."
    ),
}


async def test_v4_markdown_shapes_never_publish_hidden_only_words(bus: Bus) -> None:
    turns = {shape: unique_id(f"t-v4-{shape}") for shape in V4_SHAPES}
    for shape, turn in turns.items():
        markdown = f"Latency rose after the deploy [OBS-1001].\n\n{V4_SHAPES[shape]}"
        await bus.send(draft(turn, answer(markdown), **CY))
    for shape, turn in turns.items():
        (rec,) = await bus.wait_for("validated", key=turn)
        blob = _blob(rec)
        for needle in ("9002", "refund", "retried", "captures", DOC_9002_TITLE):
            assert needle not in blob, (shape, needle, blob)
    await bus.settle(0.5)
    for turn in turns.values():
        for other in ("regenerate", "could_not_ground", "dlq"):
            assert bus.messages(other, key=turn) == []


#: Each renders, in cmark-gfm with raw HTML allowed, as ``[DOC-9002]`` (rule 2, contract v4).
V4_LOOKALIKES = {
    "processing_instruction": "[DOC-<?x?>9002]",
    "cdata": "[DOC-<![CDATA[]]>9002]",
    "declaration": "[DOC-<!X y>9002]",
    "comment_holding_gt": "[DOC-<!-- a > b -->9002]",
    "gt_in_quoted_attribute": '[DOC-<span title="a>b">9002]',
    "attributes_over_two_lines": '[DOC-<span\ntitle="x">9002]',
    "empty_link_before_digits": "[DOC-[](#)9002]",
    "link_around_kind": "[[DOC-](#)9002]",
    "link_around_digits": "[DOC-[9002](#)]",
    "cyrillic_digits": "[DOC-9ОО2]",
    "modifier_minus": "[DOC˗9002]",
    "box_drawing_dash": "[DOC─9002]",
    "canadian_syllabics_d": "[ᗪOC-9002]",
    "right_to_left_override": "See \u202e[2009-COD]\u202c now",
}


async def test_v4_rendered_lookalikes_are_schema_invalid(bus: Bus) -> None:
    turns = {shape: unique_id(f"t-v4-look-{shape}") for shape in V4_LOOKALIKES}
    for shape, turn in turns.items():
        markdown = f"Latency rose after the deploy [OBS-1001].\n\n{V4_LOOKALIKES[shape]}"
        await bus.send(draft(turn, answer(markdown), attempt=1, **CY))
    for shape, turn in turns.items():
        (cng,) = await bus.wait_for("could_not_ground", key=turn)
        assert cng.json()["reasons"] == [{"code": "schema_invalid", "path": "answer_markdown"}], (
            shape
        )
        assert "9002" not in _blob(cng)


async def test_a_tolerant_quote_is_published_in_its_sources_words(bus: Bus) -> None:
    """Zero-width characters slipped between a quote's letters never reach the reader."""
    turn = unique_id("t-v4-quote")
    payload = "\u200b\u200c\u200d"
    quote = f"Checkout p95{payload} latency rose{payload}"
    output = answer(
        "Checkout latency rose after the deploy [OBS-1001].",
        citations=[{"kind": "OBS", "id": 1001, "quote": quote}],
    )
    await bus.send(draft(turn, output, **CY))
    (ok,) = await only_on(bus, turn, "validated")
    msg = ok.json()
    assert msg["citations"][0]["quote"] == "Checkout p95 latency rose"
    assert msg["citations"][0]["quote_check"] == "tolerant"
    assert msg["output"]["citations"][0]["quote"] == "Checkout p95 latency rose"
    for char in payload:
        assert char not in ok.value.decode()


async def test_two_principals_never_see_each_others_sources(bus: Bus) -> None:
    output = answer(
        "Latency rose [OBS-1001]. EU refunds rose [OBS-1002]. Initech slipped [OBS-1003]. "
        "The amendment was signed [EVT-502]. An incident was opened [EVT-504]. "
        "Refunds were analysed [DOC-9002]. The account plan targets renewal [DOC-9003]."
    )
    ana_only = {("OBS", 1002), ("EVT", 504), ("DOC", 9002)}
    bob_only = {("OBS", 1003), ("EVT", 502), ("DOC", 9003)}
    turns = {"u-ana": unique_id("t-ana"), "u-bob": unique_id("t-bob")}
    await bus.send(draft(turns["u-ana"], output, **ANA))
    await bus.send(draft(turns["u-bob"], output, **BOB))
    seen = {}
    for user, turn in turns.items():
        (rec,) = await bus.wait_for("validated", key=turn)
        msg = rec.json()
        cited = {(c["kind"], c["id"]) for c in msg["citations"]}
        for claim in msg["claims"]:
            cited |= {(c["kind"], c["id"]) for c in claim["citations"]}
        seen[user] = (cited, rec.value.decode())
    assert seen["u-ana"][0] == {("OBS", 1001)} | ana_only
    assert seen["u-bob"][0] == {("OBS", 1001)} | bob_only
    for user, others in (("u-ana", bob_only), ("u-bob", ana_only)):
        for kind, source in others:
            assert f"{kind}-{source}" not in seen[user][1]
            assert f'"id":{source}' not in seen[user][1]


# --------------------------------------------------------------------------------------------------
# Support (contract rule 6b): a cited source must say what the claim says

PLANTED = {
    # A changed number: OBS-1001 says 840 ms.
    "number": (
        "Checkout p95 latency rose to 940 ms after the 14:05 UTC deploy [OBS-1001].",
        "no cited source has 940",
    ),
    # A changed unit: OBS-1001 says 840 ms, not seconds.
    "unit": (
        "Checkout p95 latency rose to 840 seconds after the 14:05 UTC deploy [OBS-1001].",
        "no cited source has 840 seconds",
    ),
    # A changed magnitude: 840 ms, not 840 thousand.
    "magnitude": (
        "Checkout p95 latency rose to 840k ms after the 14:05 UTC deploy [OBS-1001].",
        "no cited source has 840k ms",
    ),
    # A decimal comma: OBS-1002 says 3.2x, and 3,5 is 3.5.
    "decimal comma": (
        "Refund volume for EU cards is 3,5x the 28-day baseline [OBS-1002].",
        "no cited source has 3,5",
    ),
    # A changed entity: the claim is about the Initech renewal, the event about a deploy.
    "entity": ("The Initech renewal slipped after the deploy [EVT-501].", "missing: Initech"),
    # A negation no source makes.
    "negation": (
        "Checkout p95 latency did not rise after the 14:05 UTC deploy [OBS-1001].",
        "it negates what no cited source negates",
    ),
    # An unrelated source.
    "unrelated": (
        "The harbour master resigned over cancelled fuel contracts [DOC-9001].",
        "missing: harbour",
    ),
}


@pytest.mark.parametrize("planted", sorted(PLANTED))
async def test_a_planted_unsupported_claim_is_sent_back_with_its_path(
    bus: Bus, pg: Any, planted: str
) -> None:
    text, detail = PLANTED[planted]
    turn = unique_id(f"t-unsupported-{planted}")
    env = draft(turn, answer(f"Latency rose after the deploy [OBS-1001]. {text}"), **ANA)
    await bus.send(env)
    (rec,) = await only_on(bus, turn, "regenerate")
    (reason,) = reasons_of(rec)
    assert (reason["code"], reason["path"]) == ("unsupported_claim", "answer_markdown")
    assert reason["detail"].startswith("assertion sentence 2: ")
    assert detail in reason["detail"]
    rows = await ledger_rows(pg, turn, 1)
    assert "unsupported" in {r["support"] for r in rows}


async def test_words_only_a_hidden_source_supports_are_hedged_beside_a_visible_citation(
    bus: Bus,
) -> None:
    """u-bob may not see OBS-1002 (refunds 3.2x): citing it beside OBS-1001 (latency) loses a
    citation, and OBS-1001 alone does not support the sentence, so its words go by the policy
    (contract v4 rule 5: hedged), never published."""
    turn = unique_id("t-hidden-words")
    env = draft(
        turn,
        answer("EU card refunds run at 3.2x the 28-day baseline [OBS-1001][OBS-1002]."),
        **BOB,
    )
    await bus.send(env)
    (rec,) = await only_on(bus, turn, "validated")
    msg = rec.json()
    assert [c["grounding_status"] for c in msg["claims"]] == ["hedged"]
    assert msg["output"]["answer_markdown"] == (
        "This statement could not be verified against sources you can access."
    )
    blob = _blob(rec)
    for needle in ("1002", "3.2", "refunds", "duplicate charge"):
        assert needle not in blob, needle


async def test_a_grounded_answer_carries_support_per_claim_and_in_the_ledger(
    bus: Bus, pg: Any
) -> None:
    turn = unique_id("t-supported")
    text = (
        "Checkout p95 latency rose from 180 ms to 840 ms after the 14:05 UTC deploy [OBS-1001]. "
        "The deploy of payments-api 2.3.0 went out to eu-west-1 [EVT-501]."
    )
    await bus.send(draft(turn, answer(text), **ANA))
    (rec,) = await only_on(bus, turn, "validated")
    assert [c["support"] for c in rec.json()["claims"]] == ["supported", "supported"]
    rows = await ledger_rows(pg, turn, 2)
    assert {(r["kind"], int(r["source_id"]), r["support"]) for r in rows} == {
        ("OBS", 1001, "supported"),
        ("EVT", 501, "supported"),
    }


# --------------------------------------------------------------------------------------------------
# Terminal without regeneration, and the schema routes


async def test_no_grounding_is_could_not_ground(bus: Bus) -> None:
    turn = unique_id("t-nogr")
    out = answer("I found nothing in scope to answer this.", no_grounding=True)
    await bus.send(draft(turn, out, **ANA))
    (rec,) = await only_on(bus, turn, "could_not_ground")
    msg = rec.json()
    assert msg["attempts"] == 1
    assert {"code": "agent_no_grounding", "path": "no_grounding"} in msg["reasons"]
    # The uncited sentence is reported too (core's choice; the verdict is the same).
    assert {r["code"] for r in msg["reasons"]} <= {"agent_no_grounding", "uncited_claim"}


async def test_published_report_is_sent_back(bus: Bus) -> None:
    turn = unique_id("t-published")
    report = {
        "title": "Latency incident",
        "status": "PUBLISHED",
        "sections": [{"heading": "Impact", "body_markdown": "Latency rose [OBS-1001]."}],
    }
    await bus.send(draft(turn, report, kind="report", **ANA))
    (regen,) = await only_on(bus, turn, "regenerate")
    assert [(r["code"], r.get("path")) for r in reasons_of(regen)] == [
        ("published_status", "status")
    ]


async def test_a_lying_producer_gets_one_regeneration_only(bus: Bus) -> None:
    """Two failing drafts both claiming ``attempt: 0``: the second is the final one."""
    turn = unique_id("t-liar")
    await bus.send(draft(turn, answer("Latency rose [OBS-999999]."), **ANA))
    await bus.wait_for("regenerate", key=turn)
    second = draft(turn, answer("Latency rose [OBS-999998]."), attempt=0, **ANA)
    await bus.send(second)
    (rec,) = await bus.wait_for("could_not_ground", key=turn)
    await bus.settle(1.0)
    assert len(bus.messages("regenerate", key=turn)) == 1
    assert len(bus.messages("could_not_ground", key=turn)) == 1
    msg = rec.json()
    assert (msg["draft_id"], msg["attempt"], msg["attempts"]) == (second["draft_id"], 0, 2)


async def test_published_title_and_quote_name_no_hidden_id(bus: Bus) -> None:
    """DOC-9008 (visible to u-cy) has a title and text naming DOC-9002 (hidden from
    u-cy); its title comes from MongoDB and the quote from the agent: neither may carry 9002."""
    turn = unique_id("t-title")
    output = answer(
        "See the refund analysis [DOC-9008].",  # what the verified quote says (rule 6b)
        citations=[{"kind": "DOC", "id": 9008, "quote": "See [DOC-9002] for the refund analysis."}],
    )
    await bus.send(draft(turn, output, **CY))
    (ok,) = await bus.wait_for("validated", key=turn)
    assert ok.json()["citations"] == [
        {
            "kind": "DOC",
            "id": 9008,
            "title": "Runbook index",
            "quote": "See for the refund analysis.",
            "quote_check": "exact",
        }
    ]
    assert "9002" not in _blob(ok)
    assert ok.json()["output"]["citations"][0]["quote"] == "See for the refund analysis."


async def test_a_lookalike_token_is_schema_invalid_end_to_end(bus: Bus) -> None:
    """A full-width look-alike of a hidden id fails the draft and never leaves."""
    turn = unique_id("t-lookalike")
    output = answer("Refunds tripled [DOC-９００２]. Latency rose [OBS-1001].")
    await bus.send(draft(turn, output, attempt=1, **CY))
    (cng,) = await bus.wait_for("could_not_ground", key=turn)
    assert cng.json()["reasons"] == [{"code": "schema_invalid", "path": "answer_markdown"}]
    assert "９００２" not in cng.value.decode()
    assert "9002" not in _blob(cng)


async def test_traceparent_is_propagated_to_every_derived_message(bus: Bus) -> None:
    turn = unique_id("t-trace")
    t0 = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    t1 = b"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
    state = b"vendor=opaque"
    await bus.send(
        draft(turn, answer("Latency rose [OBS-999999]."), **ANA),
        headers=[("traceparent", t0), ("tracestate", state), ("x-other", b"kept-out")],
    )
    (regen,) = await bus.wait_for("regenerate", key=turn)
    (ledger0,) = await bus.wait_for("ledger", key=turn)
    for rec in (regen, ledger0):
        assert rec.header_dict() == {"traceparent": t0, "tracestate": state}
    await bus.send(
        draft(turn, answer("Latency rose [OBS-1001]."), attempt=1, **ANA),
        headers=[("traceparent", t1)],
    )
    (ok,) = await bus.wait_for("validated", key=turn)
    ledger = await bus.wait_for("ledger", key=turn, count=2)
    for rec in (ok, ledger[1]):
        assert rec.header_dict() == {"traceparent": t1}


async def test_every_route_carries_the_drafts_traceparent(bus: Bus, worker: WorkerProcess) -> None:
    """Grounded, regenerate, could-not-ground and dead letter: each output has the draft's trace,
    and the worker's log lines about each draft carry its trace_id/span_id."""
    grounded, failing, dead = (unique_id(p) for p in ("t-tr-ok", "t-tr-cng", "t-tr-dlq"))
    traces = {
        grounded: b"00-11111111111111111111111111111111-1111111111111111-01",
        failing: b"00-22222222222222222222222222222222-2222222222222222-01",
        dead: b"00-33333333333333333333333333333333-3333333333333333-01",
    }
    retry = b"00-22222222222222222222222222222222-4444444444444444-01"
    await bus.send(
        draft(grounded, answer("Latency rose [OBS-1001]."), **ANA),
        headers=[("traceparent", traces[grounded])],
    )
    await bus.send(
        draft(failing, answer("Latency rose [OBS-999999]."), **ANA),
        headers=[("traceparent", traces[failing])],
    )
    await bus.send(b"{not json", key=dead, headers=[("traceparent", traces[dead])])
    (regen,) = await bus.wait_for("regenerate", key=failing)
    await bus.send(
        draft(failing, answer("Latency rose [OBS-999999]."), attempt=1, **ANA),
        headers=[("traceparent", retry)],
    )
    (ok,) = await bus.wait_for("validated", key=grounded)
    (cng,) = await bus.wait_for("could_not_ground", key=failing)
    (letter,) = await bus.wait_for("dlq", key=dead)
    ledgers = await bus.wait_for("ledger", key=failing, count=2)
    (ledger_ok,) = await bus.wait_for("ledger", key=grounded)
    assert ok.header("traceparent") == traces[grounded]
    assert ledger_ok.header("traceparent") == traces[grounded]
    assert regen.header("traceparent") == traces[failing]
    assert [b.header("traceparent") for b in ledgers] == [traces[failing], retry]
    assert cng.header("traceparent") == retry
    assert letter.header("traceparent") == traces[dead]

    routed = {
        e["turn_id"]: e
        for e in worker.log_events()
        if e.get("event") == "draft.routed" and e.get("turn_id") in (grounded, failing)
    }
    assert routed[grounded]["trace_id"] == "1" * 32
    assert routed[grounded]["span_id"] == "1" * 16
    assert routed[failing]["span_id"] == "4" * 16  # the last draft of the turn


async def test_identity_mismatch_is_dead_lettered(bus: Bus) -> None:
    turn = unique_id("t-ident")
    await bus.send(draft(turn, answer("Latency rose [OBS-1001]."), **ANA))
    await bus.wait_for("validated", key=turn)
    intruder = draft(turn, answer("Latency rose [OBS-1001]."), attempt=1, **BOB)
    meta = await bus.send(intruder)
    (dead,) = await bus.wait_for("dlq", key=turn)
    assert_dead_letter(dead, bus, meta, "identity_mismatch", turn.encode(), json.dumps(intruder))
    await bus.settle(1.0)
    assert len(bus.messages("validated", key=turn)) == 1  # the intruder changed nothing


# --------------------------------------------------------------------------------------------------
# Dead letters


def assert_dead_letter(
    dead: Received,
    bus: Bus,
    meta: Any,
    error_class: str,
    key: bytes | None,
    value: bytes | str,
) -> None:
    """Original key and value bytes, and every ``dlq.*`` header with the record's origin."""
    raw = value.encode() if isinstance(value, str) else value
    assert dead.key == key
    assert dead.value == raw
    headers = dead.header_dict()
    missing = [h for h in DLQ_HEADERS if h not in headers]
    assert not missing, missing
    assert headers["dlq.original.topic"] == bus.topics.drafts.encode()
    assert headers["dlq.original.partition"] == str(meta.partition).encode()
    assert headers["dlq.original.offset"] == str(meta.offset).encode()
    assert headers["dlq.original.timestamp"] == str(meta.timestamp).encode()
    assert headers["dlq.error.class"] == error_class.encode()
    assert headers["dlq.error.message"]
    assert headers["dlq.worker.version"] == b"0.1.0"
    assert headers["dlq.replay.count"] == b"0"
    failed_at = int(headers["dlq.failed_at"])
    assert meta.timestamp <= failed_at <= time.time() * 1000 + 1000


async def test_malformed_envelopes_and_junk_are_dead_lettered(bus: Bus) -> None:
    no_turn = draft("x", answer("Latency rose [OBS-1001]."), **ANA)
    del no_turn["turn_id"]
    cases: list[tuple[str, bytes | None, bytes]] = [
        ("missing turn_id", unique_id("k-noturn").encode(), json.dumps(no_turn).encode()),
        (
            "key differs from turn_id",
            unique_id("k-other").encode(),
            json.dumps(draft(unique_id("t-keyed"), answer("Fine [OBS-1001]."), **ANA)).encode(),
        ),
        ("not JSON", unique_id("k-junk").encode(), b"\x00\xffnot json at all {"),
        ("a JSON array", unique_id("k-array").encode(), b"[1, 2, 3]"),
    ]
    sent = []
    for _, key, value in cases:
        sent.append(await bus.send(value, key=key, headers=[("x-producer", b"e2e")]))
    for (name, key, value), meta in zip(cases, sent, strict=True):
        assert key is not None
        (dead,) = await bus.wait_for("dlq", key=key.decode())
        assert_dead_letter(dead, bus, meta, "malformed_envelope", key, value)
        assert dead.header("x-producer") == b"e2e", name
    await bus.settle(1.0)
    for _, key, _ in cases:
        assert key is not None
        assert bus.for_turn(key.decode()).keys() == {"dlq"}


async def test_oversized_draft_is_dead_lettered(bus: Bus) -> None:
    turn = unique_id("t-big")
    sentence = "Latency rose after the deploy [OBS-1001]. "
    env = draft(turn, answer(sentence * (MAX_DRAFT_BYTES // len(sentence) + 1)), **ANA)
    value = json.dumps(env)
    assert MAX_DRAFT_BYTES < len(value) < 2 * MAX_DRAFT_BYTES
    meta = await bus.send(env)
    (dead,) = await bus.wait_for("dlq", key=turn)
    assert_dead_letter(dead, bus, meta, "oversized", turn.encode(), value)
    await bus.settle(1.0)
    assert bus.for_turn(turn).keys() == {"dlq"}


async def test_unsupported_schema_version_is_dead_lettered(bus: Bus) -> None:
    turn = unique_id("t-v2")
    env = draft(turn, answer("Latency rose [OBS-1001]."), **ANA)
    env["schema_version"] = 2
    meta = await bus.send(env)
    (dead,) = await bus.wait_for("dlq", key=turn)
    assert_dead_letter(
        dead, bus, meta, "unsupported_schema_version", turn.encode(), json.dumps(env)
    )


async def test_a_replayed_dead_letter_that_fails_again_keeps_its_origin(bus: Bus) -> None:
    key = unique_id("k-replayed")
    origin = [
        ("dlq.original.topic", b"agent.drafts"),
        ("dlq.original.partition", b"3"),
        ("dlq.original.offset", b"12345"),
        ("dlq.original.timestamp", b"1764000000000"),
        ("dlq.error.class", b"malformed_envelope"),
        ("dlq.replay.count", b"2"),
    ]
    await bus.send(b"still not json", key=key, headers=origin)
    (dead,) = await bus.wait_for("dlq", key=key)
    headers = dead.header_dict()
    for name, value in origin[:4]:
        assert headers[name] == value
    assert headers["dlq.replay.count"] == b"2"
    assert headers["dlq.error.class"] == b"malformed_envelope"
    assert [k for k, _ in dead.headers].count("dlq.replay.count") == 1


# --------------------------------------------------------------------------------------------------
# Operations (runs last in this module: the counters include every route above)


async def test_health_and_metrics_report_what_the_worker_did(worker: WorkerProcess) -> None:
    health = await worker.health()
    assert health["status"] == "ok"
    assert health["assigned_partitions"] == list(range(worker.partitions))
    assert health["batches"] > 0

    def get(url: str) -> tuple[str, str]:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.headers["Content-Type"], resp.read().decode("utf-8")

    content_type, text = await asyncio.to_thread(get, worker.metrics_url)
    assert content_type.startswith("text/plain")

    def value(sample: str) -> float:
        line = next(x for x in text.splitlines() if x.startswith(sample + " "))
        return float(line.rsplit(" ", 1)[1])

    assert value('grounding_drafts_total{outcome="grounded"}') >= 1
    assert value('grounding_drafts_total{outcome="regenerate"}') >= 1
    assert value('grounding_drafts_total{outcome="could_not_ground"}') >= 1
    assert value('grounding_failure_codes_total{code="dangling_citation"}') >= 1
    assert value('grounding_dead_letters_total{error_class="malformed_envelope"}') >= 1
    assert value('grounding_dead_letters_total{error_class="oversized"}') >= 1
    assert value('grounding_store_fetch_seconds_count{store="postgres"}') >= 1
    assert value('grounding_store_fetch_seconds_count{store="mongo"}') >= 1
    assert value("grounding_batch_size_count") >= 1
    # The metrics name outcomes, codes and classes: never a citation.
    assert "DOC-9002" not in text


async def test_every_log_line_is_one_json_object(worker: WorkerProcess) -> None:
    """Faust's, aiokafka's and the worker's lines alike, on stderr; nothing on stdout."""
    stderr = worker.stderr_path.read_text(encoding="utf-8").splitlines()
    assert stderr
    loggers = set()
    for line in stderr:
        doc = json.loads(line)
        assert {"timestamp", "level", "logger", "event"} <= doc.keys(), line
        assert doc["service"] == "grounding-worker", line
        assert doc["version"] == __version__, line
        loggers.add(doc["logger"].split(".")[0])
    assert "worker" in loggers
    assert worker.stdout_path.read_text(encoding="utf-8") == ""
