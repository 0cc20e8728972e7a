"""Hostile drafts: a seeded grammar of mutations over valid envelopes, and a hand-made corpus.

Every draft is raw bytes (JSON that ``json.dumps`` could never produce included: duplicate keys,
``1e400``, ``NaN``, lone surrogates, invalid UTF-8, nesting past any limit). The test sends each
with a ``traceparent`` header that carries its index, so its outcome is found whatever the
mutation did to its ids.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any


class Raw(str):
    """Emitted verbatim (``1e400``, ``NaN``, ``"\\ud800"``, a 1,000-digit number)."""


class Dup(list[tuple[str, Any]]):
    """An object whose keys may repeat."""


def enc(v: Any) -> str:
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, Dup):
        return "{" + ",".join(f"{json.dumps(k)}:{enc(x)}" for k, x in v) + "}"
    if isinstance(v, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{enc(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list | tuple):
        return "[" + ",".join(enc(x) for x in v) + "]"
    return json.dumps(v)


def envelope(turn: str, output: Any = None, **over: Any) -> dict[str, Any]:
    env: dict[str, Any] = {
        "schema_version": 1,
        "draft_id": f"{turn}-d",
        "turn_id": turn,
        "attempt": 0,
        "tenant_id": "acme",
        "principal": {"user_id": "u-ana", "groups": ["analysts"]},
        "kind": "answer",
        "output": output
        if output is not None
        else {"answer_markdown": "Checkout latency rose after the deploy [OBS-1001] [EVT-501]."},
        "produced_at": "2026-12-02T12:00:00Z",
    }
    env.update(over)
    return env


WEIRD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1.5,
    2**63,
    -(2**63) - 1,
    "",
    "x",
    " ",
    [],
    {},
    [1, "a"],
    {"a": 1},
    Raw("1e400"),
    Raw("-1e400"),
    Raw("NaN"),
    Raw("Infinity"),
    Raw('"\\ud800"'),
    Raw('"a\\u0000b"'),
    Raw("1" * 1000),
    Raw("-0"),
    Raw("1.0"),
    Raw("[[[[[[]]]]]]"),
    "[DOC-" * 50,
    "[[[[",
    "[OBS-1001",
    "[OBS-٣٣]",
    "\u202e[OBS-1001]",
]
ENVELOPE_FIELDS = [
    "schema_version",
    "draft_id",
    "turn_id",
    "attempt",
    "tenant_id",
    "principal",
    "kind",
    "output",
    "retrieval",
    "produced_at",
    "facts",
]
OUTPUT_FIELDS = ["answer_markdown", "citations", "claims", "no_grounding", "confidence"]
CITE_IDS = [
    Raw("9223372036854775808"),
    Raw("9223372036854775807"),
    Raw("1" * 1000),
    -1,
    0,
    1.5,
    Raw("1e400"),
    "1001",
    Raw("1001.0"),
    None,
    [1001],
    {"id": 1001},
    True,
]


def _text(rng: random.Random) -> str:
    parts = [
        "Latency rose [OBS-1001].",
        "[[[[" * rng.randint(1, 2000),
        "[DOC-" * rng.randint(1, 20000),
        "[OBS-" + "9" * rng.randint(19, 1200) + "]",
        "\u0000",
        "\ufffd",
        "[EVT-501]" * rng.randint(1, 300),
        "```json\n{}\n```",
        "# Heading",
        "- item [OBS-1001]\n",
        "Refunds [DOC-9002].",
        "Done?",
        "x" * rng.randint(0, 5000),
        "[OBS-1001]]]][[[DOC-9002",
        "[DOC-5[DOC-9002]1]",
    ]
    return " ".join(rng.choice(parts) for _ in range(rng.randint(1, 6)))


def mutate(rng: random.Random, turn: str) -> tuple[str, bytes]:
    """One generated draft: (key, bytes)."""
    env = envelope(turn)
    key = turn
    kind = rng.randrange(14)
    if kind == 0:  # a wrong type in an envelope field
        env[rng.choice(ENVELOPE_FIELDS)] = rng.choice(WEIRD_VALUES)
    elif kind == 1:  # a field missing
        env.pop(rng.choice(ENVELOPE_FIELDS), None)
    elif kind == 2:  # a wrong type in the output
        env["output"][rng.choice(OUTPUT_FIELDS)] = rng.choice(WEIRD_VALUES)
    elif kind == 3:  # hostile text
        env["output"]["answer_markdown"] = _text(rng)
    elif kind == 4:  # structured citations with hostile ids / kinds
        env["output"]["citations"] = [
            {
                "kind": rng.choice(["OBS", "DOC", "EVT", "obs", "", 1, None]),
                "id": rng.choice(CITE_IDS),
            }
            for _ in range(rng.randint(1, 5))
        ]
    elif kind == 5:  # nesting around the limit
        depth = rng.choice([62, 63, 64, 65, 66, 200, 1000])
        env["output"]["claims"] = Raw("[" * depth + "]" * depth)
    elif kind == 6:  # duplicate keys
        items = list(env.items())
        dup_key = rng.choice(ENVELOPE_FIELDS[:7])
        items.append((dup_key, rng.choice([*WEIRD_VALUES, f"{turn}-other"])))
        rng.shuffle(items)
        return key, enc(Dup(items)).encode()
    elif kind == 7:  # principal / groups / retrieval shapes
        env["principal"] = rng.choice(
            [
                {"user_id": "u-ana", "groups": rng.choice(WEIRD_VALUES)},
                {"user_id": rng.choice(WEIRD_VALUES)},
                {"groups": ["analysts"]},
                {"user_id": "u-ana", "groups": ["a"] * rng.randint(0, 3000)},
            ]
        )
        env["retrieval"] = rng.choice(
            [None, [], [{"kind": "OBS", "id": rng.choice(CITE_IDS)}], rng.choice(WEIRD_VALUES)]
        )
    elif kind == 8:  # string output, canonicalisation paths
        inner = json.dumps({"answer_markdown": _text(rng)})
        env["output"] = rng.choice(
            [
                inner,
                json.dumps(inner),
                "```json\n" + inner + "\n```",
                "prose " + inner + " tail",
                _text(rng),
                json.dumps(json.dumps(inner)),
                "{" * 500,
            ]
        )
    elif kind == 9:  # other kinds with answer-shaped or junk outputs
        env["kind"] = rng.choice(["proposal", "report", "Answer", "", "answer "])
        if rng.random() < 0.5:
            env["output"] = {
                "title": _text(rng),
                "status": rng.choice(["DRAFT", "PUBLISHED", 1]),
                "sections": rng.choice(WEIRD_VALUES),
            }
    elif kind == 10:  # key trouble
        key = rng.choice([f"{turn}-x", "", "\u0000"])
    elif kind == 11:  # byte-level damage after encoding
        raw = enc(env).encode()
        cut = rng.randrange(len(raw))
        damage = rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00", b"", b"\\", b'"'])
        return key, raw[:cut] + damage + raw[cut + rng.choice([0, 1]) :]
    elif kind == 12:  # numbers
        env[rng.choice(["attempt", "schema_version"])] = rng.choice(
            [Raw("1e400"), Raw("1" * 1000), -1, 1.0, Raw("0.0"), 2**64, Raw("1E2")]
        )
    else:  # several at once
        for _ in range(3):
            env["output"][rng.choice(OUTPUT_FIELDS)] = rng.choice(WEIRD_VALUES)
        env["attempt"] = rng.choice([0, 1, 2, 10**6])
    return key, enc(env).encode()


def generated(run: str, n: int, seed: int = 5) -> Iterator[tuple[str, str, bytes]]:
    """(name, key, bytes) for ``n`` generated drafts."""
    rng = random.Random(seed)
    for i in range(n):
        key, raw = mutate(rng, f"{run}-g{i:05d}")
        yield f"generated-{i}", key, raw


def hand_made(run: str) -> Iterator[tuple[str, str, bytes]]:
    """The hand-made corpus: one draft per named hostility."""
    n = 0

    def t() -> str:
        nonlocal n
        n += 1
        return f"{run}-h{n:03d}"

    def case(name: str, env_or_raw: Any, key: str | None = None) -> tuple[str, str, bytes]:
        turn = (
            key
            if key is not None
            else (env_or_raw.get("turn_id") if isinstance(env_or_raw, dict) else t())
        )
        raw = env_or_raw if isinstance(env_or_raw, bytes) else enc(env_or_raw).encode()
        return name, str(turn), raw

    ok_text = "Checkout latency rose [OBS-1001]."
    mib = 1 << 20
    yield case(
        "nesting 65 in claims",
        envelope(tt := t(), {"answer_markdown": ok_text, "claims": Raw("[" * 65 + "]" * 65)}),
        tt,
    )
    yield case("nesting 100,000 raw", envelope(tt := t(), Raw("[" * 100_000 + "]" * 100_000)), tt)
    yield case(
        "nesting 100,000 with a 25-digit id (stdlib parser)",
        envelope(tt := t(), Raw("[" * 100_000 + "1" * 25 + "]" * 100_000)),
        tt,
    )
    yield case(
        "nested objects 70 deep", envelope(tt := t(), Raw('{"a":' * 70 + "1" + "}" * 70)), tt
    )
    yield case("1 MiB string (oversized)", envelope(tt := t(), {"answer_markdown": "a" * mib}), tt)
    yield case(
        "1 MiB - 4 KiB string",
        envelope(tt := t(), {"answer_markdown": "a " * ((mib - 4096) // 2)}),
        tt,
    )
    yield case("1 MiB of [[[[", envelope(tt := t(), {"answer_markdown": "[" * (mib - 4096)}), tt)
    yield case("[DOC- x 100,000", envelope(tt := t(), {"answer_markdown": "[DOC-" * 100_000}), tt)
    yield case(
        "[DOC-1 x 100,000 unclosed",
        envelope(tt := t(), {"answer_markdown": "[DOC-1" * 100_000}),
        tt,
    )
    yield case(
        "100,000 citations", envelope(tt := t(), {"answer_markdown": "x [OBS-1001]" * 60_000}), tt
    )
    yield case(
        "invalid UTF-8 in text",
        enc(envelope(tt := t(), {"answer_markdown": "AAA"}))
        .encode()
        .replace(b"AAA", b"A\xff\xfeA"),
        tt,
    )
    yield case(
        "invalid UTF-8 in turn_id",
        enc(envelope(tt := t())).encode().replace(tt.encode(), tt.encode() + b"\xc3\x28", 1),
        tt,
    )
    yield case(
        "lone surrogate in text",
        envelope(tt := t(), {"answer_markdown": Raw('"a\\ud800b [OBS-1001]."')}),
        tt,
    )
    yield case("lone surrogate in turn_id", envelope(tt := t(), turn_id=Raw(f'"{tt}\\udc00"')), tt)
    yield case(
        "lone surrogate in string output",
        envelope(tt := t(), Raw('"{\\"answer_markdown\\": \\"a\\\\ud800\\"}"')),
        tt,
    )
    yield case("NUL in text", envelope(tt := t(), {"answer_markdown": "a\u0000b [OBS-1001]."}), tt)
    yield case("NUL in tenant", envelope(tt := t(), tenant_id="acme\u0000"), tt)
    yield case(
        "NUL in user",
        envelope(tt := t(), principal={"user_id": "u-ana\u0000", "groups": ["analysts\u0000"]}),
        tt,
    )
    yield case(
        "raw NUL byte",
        enc(envelope(tt := t(), {"answer_markdown": "ZZZ"})).encode().replace(b"ZZZ", b"Z\x00Z"),
        tt,
    )
    yield case(
        "id 2^63 inline",
        envelope(tt := t(), {"answer_markdown": "Rose [OBS-9223372036854775808]."}),
        tt,
    )
    yield case(
        "id 2^63-1 inline",
        envelope(tt := t(), {"answer_markdown": "Rose [OBS-9223372036854775807]."}),
        tt,
    )
    yield case(
        "id 1,000 digits inline",
        envelope(tt := t(), {"answer_markdown": f"Rose [DOC-{'7' * 1000}]."}),
        tt,
    )
    yield case(
        "id 1,001 digits inline",
        envelope(tt := t(), {"answer_markdown": f"Rose [DOC-{'7' * 1001}]."}),
        tt,
    )
    yield case(
        "id 100,000 digits inline",
        envelope(tt := t(), {"answer_markdown": f"Rose [DOC-{'7' * 100_000}]."}),
        tt,
    )
    yield case(
        "id 1,000 digits structured",
        envelope(
            tt := t(),
            {"answer_markdown": ok_text, "citations": [{"kind": "DOC", "id": Raw("7" * 1000)}]},
        ),
        tt,
    )
    yield case(
        "id 2^64 structured",
        envelope(
            tt := t(), {"answer_markdown": ok_text, "citations": [{"kind": "OBS", "id": 2**64}]}
        ),
        tt,
    )
    yield case(
        "negative id",
        envelope(
            tt := t(), {"answer_markdown": ok_text, "citations": [{"kind": "OBS", "id": -1001}]}
        ),
        tt,
    )
    yield case(
        "float id",
        envelope(
            tt := t(), {"answer_markdown": ok_text, "citations": [{"kind": "OBS", "id": 1001.0}]}
        ),
        tt,
    )
    yield case(
        "1e400 id",
        envelope(
            tt := t(),
            {"answer_markdown": ok_text, "citations": [{"kind": "OBS", "id": Raw("1e400")}]},
        ),
        tt,
    )
    yield case("1e400 attempt", envelope(tt := t(), attempt=Raw("1e400")), tt)
    yield case("1e400 schema_version", envelope(tt := t(), schema_version=Raw("1e400")), tt)
    yield case("attempt 1,000 digits", envelope(tt := t(), attempt=Raw("9" * 1000)), tt)
    yield case(
        "NaN confidence",
        envelope(tt := t(), {"answer_markdown": ok_text, "confidence": Raw("NaN")}),
        tt,
    )
    yield case(
        "duplicate turn_id", Dup([*list(envelope(tt := t()).items()), ("turn_id", f"{tt}-b")]), tt
    )
    yield case(
        "duplicate output key",
        Dup(
            [
                *envelope(tt := t()).items(),
                ("output", {"answer_markdown": "Refunds [DOC-9002]."}),
            ]
        ),
        tt,
    )
    yield case(
        "duplicate key inside output",
        envelope(
            tt := t(),
            Dup([("answer_markdown", ok_text), ("answer_markdown", "Refunds [DOC-9002].")]),
        ),
        tt,
    )
    yield case(
        "duplicate key in string output",
        envelope(tt := t(), '{"answer_markdown": "a [OBS-1001].", "answer_markdown": "b"}'),
        tt,
    )
    for field in ENVELOPE_FIELDS:
        for bad in (None, 7, "7", [], {}, True, 1.5):
            yield case(f"{field} = {bad!r}", envelope(tt := t(), **{field: bad}), tt)
    for field in [*OUTPUT_FIELDS, "sections", "timeline", "title"]:
        for bad in (None, 7, "7", [], {}, True):
            yield case(
                f"output.{field} = {bad!r}",
                envelope(tt := t(), {"answer_markdown": ok_text, field: bad}),
                tt,
            )
    yield case("[[[[ only", envelope(tt := t(), {"answer_markdown": "[[[[" * 10_000}), tt)
    yield case("empty value", b"", t())
    yield case("JSON null", b"null", t())
    yield case("JSON list", b"[]", t())
    yield case("JSON number 1e400", b"1e400", t())
    yield case("BOM + object", b"\xef\xbb\xbf" + enc(envelope(tt := t())).encode(), tt)
    yield case("trailing garbage", enc(envelope(tt := t())).encode() + b"}}", tt)
    yield case("key differs", envelope(t()), f"{run}-mismatch")
    yield case(
        "2,000 distinct citations",
        envelope(tt := t(), {"answer_markdown": " ".join(f"[OBS-{i}]" for i in range(2000))}),
        tt,
    )
    yield case("string wrapped 12 times", envelope(tt := t(), _wrap(12)), tt)


def _wrap(n: int) -> str:
    s = json.dumps({"answer_markdown": "Checkout latency rose [OBS-1001]."})
    for _ in range(n):
        s = json.dumps(s)
    return s
