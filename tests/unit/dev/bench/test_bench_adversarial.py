"""``python -m dev.bench.adversarial`` runs and prints its table: one row per shape and size, then
the maximum. The figures themselves are the script's to print (no timed test)."""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from dev.bench.adversarial import (
    GC_ALIASES,
    GC_MODES,
    LONG_SOURCE,
    NUMBERS_SOURCE,
    corpus,
    draft,
    shape_of,
)
from worker.core import CitationRef, EvidenceKind
from worker.core.citations.rendered import titles_to_hide
from worker.settings import Settings

ROOT = Path(__file__).resolve().parents[4]
ROW = re.compile(
    r"^(?P<shape>\S+) +(?P<mib>\d+\.\d{3}) +(?P<outcome>grounded|regenerate|could_not_ground)"
    r"(?: \((?P<code>[a-z_]+)\))? +(?P<cpu>\d+\.\d{3}) +(?P<per>\d+\.\d{3}) +(?P<ratio>\d+|inf)$"
)


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m dev.bench.adversarial`` with ``args``, run from the checkout's root."""
    return subprocess.run(
        [sys.executable, "-m", "dev.bench.adversarial", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )


def test_the_table_has_a_row_per_shape_and_size_then_the_max() -> None:
    sizes = ["0.016", "0.024"]  # sources-numbers needs ~9 KB for its 1,000 tokens
    done = bench("--sizes", ",".join(sizes), "--limit", "1000")
    assert done.returncode == 0, done.stderr
    header, *rows, last = done.stdout.splitlines()
    assert header.split() == ["shape", "MiB", "outcome", "cpu", "s", "s/MiB", "x", "decode"]
    parsed = [ROW.match(row) for row in rows]
    assert all(parsed), [r for r, m in zip(rows, parsed, strict=True) if m is None]
    shapes = list(dict.fromkeys(m["shape"] for m in parsed if m))
    assert shapes == [
        "backticks", "brackets", "bracket-pairs", "emphasis", "a.-runs", "open-parens",
        "list-markers", "fences", "pipe-rows", "indented-code", "html-blocks", "nested-lists",
        "nested-quotes", "indented-lists", "table", "citations", "lookalike-misses",
        "terminator-runs", "quote-stops", "sources-numbers", "duplicate-quotes", "missing-words",
        "inline-html", "link-nesting", "empty-items", "form-feeds", "hidden-mixed",
        "hidden-headings", "hidden-lines", "hidden-rows", "hidden-claims", "stray-brackets",
        "short-claims", "short-hidden", "hidden-many", "hidden-titles", "hidden-claims-many",
    ]  # fmt: skip
    assert [m["shape"] for m in parsed if m] == [shape for shape in shapes for _ in sizes]
    for i, m in enumerate(parsed):  # each draft as large as whole pieces allow, never over
        assert m is not None
        assert 0 < float(m["mib"]) <= float(sizes[i % len(sizes)])
    top = max(float(m["cpu"]) for m in parsed if m)
    worst = [
        f"{m['cpu']} s ({m['shape']}, {m['mib']} MiB)"
        for m in parsed
        if m and float(m["cpu"]) == top
    ]
    head, tail = last.removeprefix("max: ").split("; limit 1000.0 s; ")
    assert head in worst
    assert tail == (
        f"gc worker: {GC_MODES['worker']}; python {platform.python_version()} ({sys.executable});"
        " CPU time of this process, not wall time"
    )
    assert "GW_GC_PAUSED_IN_BATCH=true" in tail


def test_the_collector_runs_as_the_worker_runs_it() -> None:
    """The worker freezes its start-up heap and pauses the collector around a batch
    (``worker/stream/processing/collector.py``, on by default); the bench's default mode says so."""
    assert Settings.model_fields["gc_paused_in_batch"].default is True
    assert GC_MODES["worker"].startswith("as the worker runs (GW_GC_PAUSED_IN_BATCH=true)")


def test_the_worker_and_check_are_one_mode_and_paused_is_its_alias() -> None:
    """The look-ahead pauses the collector too, so the worker admits and judges with it off,
    as ``check`` does: one mode, ``worker``; ``--gc paused`` runs it (deprecated, says so)."""
    assert tuple(GC_MODES) == ("worker", "on")
    assert "as check decides" in GC_MODES["worker"]
    assert GC_ALIASES == {"paused": "worker"}
    done = bench("--sizes", "0.004", "--shapes", "a.-runs", "--limit", "1000", "--gc", "paused")
    assert done.returncode == 0, done.stderr
    assert "--gc paused is deprecated: it runs --gc worker" in done.stderr
    assert f"; gc worker: {GC_MODES['worker']}; " in done.stdout.splitlines()[-1]


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("terminator-runs", "Aurora " + "!" * 20_000 + "x "),
        ("terminator-runs", "Aurora " + "。" * 20_000 + "x "),
        ("quote-stops", '!"!"!"'),
        ("sources-numbers", "[OBS-999][EVT-1]."),
        ("duplicate-quotes", '"quote":"VESSEL AURORA ENTERED"},{"kind":"DOC"'),
        ("inline-html", '<span class="a"><b><i title="x>y">a <span'),
        ("link-nesting", "[[[[[a](#)](#)](#)](#)](#)"),
        ("hidden-mixed", "Aurora waited near buoy 1 [DOC-9][OBS-2]. "),
        ("hidden-headings", "# Aurora waited 1 [DOC-9] [OBS-2]\n\n"),
        ("hidden-lines", "    code 1 [DOC-9]\n[OBS-2] Aurora waited."),
        ("hidden-rows", "| Aurora waited [DOC-9] | near buoy 7 [OBS-2] |"),
        ("hidden-claims", '"text":"Aurora waited near buoy 7 [DOC-9] [OBS-2]."'),
        ("stray-brackets", '"text":"[note 1] Aurora waited near buoy 7 [OBS-2]."'),
        ("short-claims", "Aurora 1 [OBS-2]. Aurora 2 [OBS-3]. "),
        ("short-hidden", "Aurora 1 [DOC-9][OBS-2]. Aurora 2 [DOC-9][OBS-3]. "),
        ("hidden-many", "Aurora 0 [DOC-1][OBS-1]. Aurora 1 [DOC-2][OBS-1]. "),
        ("hidden-claims-many", '"text":"Aurora waited near buoy 7 [DOC-2] [OBS-1]."'),
    ],
)
def test_the_new_shapes_build_what_they_name(name: str, needle: str) -> None:
    value = draft(shape_of(name), 200_000)
    assert 190_000 < len(value) <= 200_000
    output = orjson.loads(value)["output"]
    assert needle in (
        output["answer_markdown"]
        + orjson.dumps(output.get("citations")).decode()
        + orjson.dumps(output.get("claims")).decode()
    )


def test_sources_numbers_cites_a_thousand_sources_that_hold_numbers() -> None:
    output = orjson.loads(draft(shape_of("sources-numbers"), 100_000))["output"]
    text = output["answer_markdown"]
    assert len(set(re.findall(r"\[(?:OBS|DOC|EVT)-\d+\]", text))) == 1000
    assert "[DOC-9]" not in text  # hidden in the corpus
    assert len(re.findall(r"\d+ ", text)) > 10_000
    assert shape_of("sources-numbers").source == NUMBERS_SOURCE
    assert len(re.findall(r"\d+", NUMBERS_SOURCE)) >= 15


def test_duplicate_quotes_quote_one_twenty_kilobyte_source_after_normalising() -> None:
    output = orjson.loads(draft(shape_of("duplicate-quotes"), 1 << 20))["output"]
    entries = output["citations"]
    assert len(entries) > 19_000
    assert len({orjson.dumps(e) for e in entries}) == 1
    assert len(LONG_SOURCE) > 20_000
    assert entries[0]["quote"] not in LONG_SOURCE
    assert entries[0]["quote"].lower() in LONG_SOURCE.lower()


def test_it_fails_when_a_draft_takes_longer_than_the_limit() -> None:
    done = bench("--sizes", "0.004", "--shapes", "a.-runs", "--limit", "0")
    assert done.returncode == 1, done.stdout
    assert "; limit 0.0 s; gc worker: " in done.stdout.splitlines()[-1]


@pytest.mark.parametrize("name", ["hidden-mixed", "table", "hidden-claims"])
def test_distinct_pieces_never_repeat_a_unit(name: str) -> None:
    """``--distinct``: the same shape and size, but no two of its units alike once their tokens
    are set aside (a memo of repeated units answers nothing), where the plain shape repeats."""
    size = 20_000
    plain = orjson.loads(draft(shape_of(name), size))["output"]
    apart = orjson.loads(draft(shape_of(name), size, unique=True))["output"]
    assert plain.keys() == apart.keys()

    def units(output: dict[str, object]) -> list[str]:
        if name == "hidden-claims":
            texts = [str(c["text"]) for c in output["claims"]]  # type: ignore[attr-defined]
        else:
            texts = re.split(r"(?<=\.) |\n", str(output["answer_markdown"]))
        return [TOKEN.sub("", s) for s in texts if "Aurora" in s]

    assert len(set(units(apart))) == len(units(apart)) > 50
    assert len(set(units(plain))) < len(units(plain)) / 10


TOKEN = re.compile(r"\[(?:OBS|DOC|EVT)-[0-9]+\]")


def test_hidden_many_cites_998_hidden_documents_beside_one_visible_source() -> None:
    shape = shape_of("hidden-many")
    records = corpus(shape.source, shape.hidden)
    text = orjson.loads(draft(shape, 100_000))["output"]["answer_markdown"]
    cited = {CitationRef(EvidenceKind.DOC, int(i)) for i in re.findall(r"\[DOC-(\d+)\]", text)}
    assert len(cited) == 998
    assert all(records[ref].acl == ("group:ops",) for ref in cited)
    assert records[CitationRef(EvidenceKind.OBS, 1)].acl is None
    assert records[CitationRef(EvidenceKind.DOC, 999)].acl is None  # the rest stay visible


def test_hidden_titles_gives_each_document_a_title_of_its_own_long_enough_to_hide() -> None:
    shape = shape_of("hidden-titles")
    records = corpus(shape.source, shape.hidden, shape.titled)
    titles = {records[CitationRef(EvidenceKind.DOC, i)].title for i in shape.hidden}
    assert len(titles) == 998
    assert len(titles_to_hide(titles, [])) == 998
