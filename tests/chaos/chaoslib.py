"""What the chaos scenarios share: a marked evidence corpus, the mixed-route draft stream, a fleet
of worker processes that notices crashes, and the check over every output topic and the ledger.

Everything talks to the real bed: the corpus is written to PostgreSQL and the MongoDB-protocol
server, drafts go through Kafka to real ``grounding-worker run`` processes
(``harness.WorkerProcess``) and faults are real (SIGKILL, ``scripts/services stop``).

The corpus has two tenants and four principals. Every evidence item carries a unique marker in its
title / text / summary (``MK`` + hex + ``Q``); an item a principal may not see (ACL'd to someone
else, ``acl: []``, revoked, a document without an ``acl`` field, or another tenant's) must never
show its marker, and - within the tenant - its id, to that principal (contract §3.5).
"""

# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dev.harness import Bus, Received, WorkerProcess, answer, draft

# --------------------------------------------------------------------------------------------------
# Scale

QUICK = os.environ.get("CHAOS_SCALE", "quick") != "full"


def scale(quick: float, full: float) -> float:
    return quick if QUICK else full


# --------------------------------------------------------------------------------------------------
# The marked corpus

#: Ids of the chaos corpus live in [BASE, BASE + 10_000_000); dangling ids above DANGLING.
BASE = 771_000_000_000
DANGLING = BASE + 9_000_000


@dataclass(frozen=True)
class Principal:
    tenant: str
    user: str
    groups: tuple[str, ...]

    @property
    def fields(self) -> dict[str, Any]:
        return {"tenant_id": self.tenant, "user_id": self.user, "groups": list(self.groups)}


PRINCIPALS = (
    Principal("chaos-a", "u-a1", ("g-red",)),
    Principal("chaos-a", "u-a2", ("g-blue",)),
    Principal("chaos-b", "u-b1", ("g-red",)),
    Principal("chaos-b", "u-b2", ()),
)


@dataclass(frozen=True)
class Item:
    kind: str  # OBS | EVT | DOC
    ident: int
    tenant: str
    #: JSON-able acl; ``"missing"`` for a document without the field.
    acl: Any
    revoked: bool
    marker: str

    @property
    def token(self) -> str:
        return f"[{self.kind}-{self.ident}]"

    def visible_to(self, p: Principal) -> bool:
        if self.tenant != p.tenant or self.revoked or self.acl == "missing":
            return False
        if self.acl is None:
            return True
        admitted = {f"user:{p.user}", *(f"group:{g}" for g in p.groups)}
        return bool(admitted & set(self.acl))


def _acl_variants(tenant: str) -> list[tuple[Any, bool]]:
    """(acl, revoked) per item class; the list's order is the items' cycle."""
    second = "u-a2" if tenant == "chaos-a" else "u-b2"
    return [
        (None, False),  # whole tenant
        (None, False),
        (None, False),
        (["group:g-red"], False),  # the red principal only
        ([f"user:{second}"], False),  # the second principal only
        ([], False),  # nobody
        (None, True),  # revoked
        (["group:legal"], False),  # nobody of ours
        ("missing", False),  # documents: no acl field (nobody); OBS/EVT: treated as []
    ]


def build_corpus(per_kind: int = 27) -> list[Item]:
    items: list[Item] = []
    ident = BASE
    for tenant in ("chaos-a", "chaos-b"):
        variants = _acl_variants(tenant)
        for kind in ("OBS", "EVT", "DOC"):
            for k in range(per_kind):
                acl, revoked = variants[k % len(variants)]
                if acl == "missing" and kind != "DOC":
                    acl = []
                ident += 1
                items.append(Item(kind, ident, tenant, acl, revoked, f"MK{ident:x}Q"))
    return items


CORPUS = build_corpus()
BY_ID = {(i.kind, i.ident): i for i in CORPUS}
PAST = datetime(2025, 1, 1, tzinfo=UTC)


async def seed_corpus(pg_pool: Any, mongo_db: Any) -> None:
    """Upsert the chaos corpus (idempotent)."""
    rows: dict[str, list[tuple[Any, ...]]] = {"observations": [], "events": []}
    docs = []
    for it in CORPUS:
        acl = None if it.acl is None else ([] if it.acl == "missing" else list(it.acl))
        revoked = PAST if it.revoked else None
        text = f"Evidence {it.marker} says latency rose on the {it.tenant} checkout path."
        if it.kind == "DOC":
            doc: dict[str, Any] = {
                "_id": it.ident,
                "tenant_id": it.tenant,
                "revoked_at": revoked,
                "title": f"Report {it.marker}",
                "text": text,
            }
            if it.acl != "missing":
                doc["acl"] = acl
            docs.append(doc)
        else:
            table = "observations" if it.kind == "OBS" else "events"
            rows[table].append((it.ident, it.tenant, acl, revoked, text))
    for table, values in rows.items():
        await pg_pool.executemany(
            f"INSERT INTO {table} (id, tenant_id, acl, revoked_at, summary)"
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET"
            " tenant_id = EXCLUDED.tenant_id, acl = EXCLUDED.acl,"
            " revoked_at = EXCLUDED.revoked_at, summary = EXCLUDED.summary",
            values,
        )
    coll = mongo_db["documents"]
    await coll.delete_many({"_id": {"$in": [d["_id"] for d in docs]}})
    await coll.insert_many(docs, ordered=False)


def visible(p: Principal, kinds: Iterable[str] = ("OBS", "EVT", "DOC")) -> list[Item]:
    return [i for i in CORPUS if i.kind in kinds and i.visible_to(p)]


def hidden_in_tenant(p: Principal) -> list[Item]:
    return [i for i in CORPUS if i.tenant == p.tenant and not i.visible_to(p)]


def other_tenant(p: Principal) -> list[Item]:
    return [i for i in CORPUS if i.tenant != p.tenant]


# --------------------------------------------------------------------------------------------------
# The mixed-route stream


@dataclass
class Expect:
    """What a fault-free run does with one turn."""

    turn: str
    route: str
    principal: Principal
    terminal: str  # validated | could_not_ground | dlq
    codes: tuple[str, ...] = ()
    regenerate: bool = False
    draft_ids: list[str] = field(default_factory=list)
    #: Drafts whose ledger batch must put rows in Postgres (schema failures record none).
    ledger_drafts: list[str] = field(default_factory=list)


ROUTES = (
    ["grounded"] * 8
    + ["hidden"] * 3
    + ["regen_fixed"] * 2
    + ["regen_timeout", "cng", "cross_tenant", "malformed_output", "malformed"]
)


def _sentence(rng: random.Random, item: Item) -> str:
    """What the item's evidence says ("latency rose on the checkout path"), in other words: a
    grounded draft of the stream is supported too (contract rule 6b)."""
    verb = rng.choice(("rose", "fell", "doubled", "stalled", "recovered"))
    return f"Checkout latency {verb} {item.token}."


class Stream:
    """Deterministic drafts over the routes; turn ids ``<run>-<n>``."""

    def __init__(self, run: str, seed: int = 1) -> None:
        self.run = run
        self.rng = random.Random(seed)
        self.n = 0
        self.plan: dict[str, Expect] = {}

    def _good(self, p: Principal, extra_hidden: bool = False) -> dict[str, Any]:
        rng = self.rng
        cites = rng.sample(visible(p), 2)
        text = " ".join(_sentence(rng, c) for c in cites)
        if extra_hidden:
            text += " " + _sentence(rng, rng.choice(hidden_in_tenant(p)))
        return answer(text)

    def next_turn(self, routes: list[str] | None = None) -> list[tuple[str, Any]]:
        """The next turn's records as (key, value); a value is a dict, or bytes for poison."""
        rng = self.rng
        route = rng.choice(routes or ROUTES)
        p = rng.choice(PRINCIPALS)
        turn = f"{self.run}-{self.n:05d}"
        self.n += 1
        ident = {"user_id": p.user, "groups": p.groups, "tenant_id": p.tenant}
        dangling = f"[OBS-{DANGLING + rng.randint(0, 999_999)}]"
        exp = Expect(turn, route, p, "validated")
        out: list[dict[str, Any]] = []
        if route == "grounded":
            out.append(draft(turn, self._good(p), **ident))
        elif route == "hidden":
            out.append(draft(turn, self._good(p, extra_hidden=True), **ident))
        elif route == "regen_fixed":
            bad = self._good(p, extra_hidden=True)
            bad["answer_markdown"] += f" Refunds doubled {dangling}."
            out.append(draft(turn, bad, **ident))
            out.append(draft(turn, self._good(p), attempt=1, **ident))
            exp.regenerate = True
        elif route == "regen_timeout":
            out.append(draft(turn, answer(f"Refunds doubled {dangling}."), **ident))
            exp.regenerate, exp.terminal, exp.codes = (
                True,
                "could_not_ground",
                ("regeneration_timeout",),
            )
        elif route == "cng":
            out.append(draft(turn, answer(f"Refunds doubled {dangling}."), attempt=1, **ident))
            exp.terminal, exp.codes = "could_not_ground", ("dangling_citation",)
        elif route == "cross_tenant":
            foreign = rng.choice(other_tenant(p))
            out.append(draft(turn, answer(_sentence(rng, foreign)), attempt=1, **ident))
            exp.terminal, exp.codes = "could_not_ground", ("dangling_citation",)
        elif route == "malformed_output":
            hidden = rng.choice(hidden_in_tenant(p))
            prose = f"I think {hidden.token} shows it, sorry no JSON {dangling}"
            out.append(draft(turn, prose, **ident))
            out.append(draft(turn, self._good(p), attempt=1, **ident))
            exp.regenerate = True
        else:  # malformed envelope: poison, dead-lettered
            exp.terminal, exp.codes = "dlq", ("malformed_envelope",)
            env = draft(turn, self._good(p, extra_hidden=True), **ident)
            if self.n % 2:
                raw = json.dumps(env).encode()[:-7]
            else:
                env["principal"].pop("user_id")
                raw = json.dumps(env).encode()
            exp.draft_ids.append(env["draft_id"])
            self.plan[turn] = exp
            return [(turn, raw)]
        for d in out:
            exp.draft_ids.append(d["draft_id"])
        exp.ledger_drafts = [d["draft_id"] for d in out if not isinstance(d["output"], str)]
        self.plan[turn] = exp
        return [(turn, d) for d in out]

    def take(self, n_drafts: int, routes: list[str] | None = None) -> list[tuple[str, Any]]:
        recs: list[tuple[str, Any]] = []
        while len(recs) < n_drafts:
            recs.extend(self.next_turn(routes))
        return recs


async def produce(bus: Bus, records: list[tuple[str, Any]]) -> None:
    """Send records in order, waiting for every acknowledgement (values: dict or raw bytes)."""
    producer = bus._producer
    assert producer is not None
    futures = []
    for key, value in records:
        raw = value if isinstance(value, bytes) else json.dumps(value).encode()
        futures.append(await producer.send(bus.name("drafts"), raw, key=key.encode()))
    await asyncio.gather(*futures)


async def produce_paced(
    bus: Bus,
    records: list[tuple[str, Any]],
    rate: float,
    on_tick: Callable[[int], Any] | None = None,
) -> None:
    """Send ``rate`` records per second (chunks of a tenth of a second)."""
    chunk = max(1, int(rate / 10))
    for start in range(0, len(records), chunk):
        t0 = time.monotonic()
        await produce(bus, records[start : start + chunk])
        if on_tick is not None:
            on_tick(start + chunk)
        await asyncio.sleep(max(0.0, 0.1 - (time.monotonic() - t0)))


# --------------------------------------------------------------------------------------------------
# Workers


class ChaosWorker(WorkerProcess):
    """A worker that may share its group: healthy once ``/health`` answers with at least
    ``min_partitions`` assigned (all of them for the first of a group)."""

    min_partitions: int = 1

    def healthy(self, health: dict[str, Any]) -> bool:
        return len(health.get("assigned_partitions", [])) >= self.min_partitions

    def peak_rss_mib(self) -> float | None:
        if self.process is None:
            return None
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return None


class Fleet:
    """Worker processes of one group, watched: an exit we did not cause is a crash; a crashed
    worker is restarted so the scenario can go on (and the crash is counted)."""

    def __init__(self, workers: list[ChaosWorker]) -> None:
        self.workers = workers
        self.wanted: dict[int, bool] = {}
        self.crashes: list[str] = []
        self.stall_exits: list[str] = []
        self.exit_codes: list[int] = []
        self._task: asyncio.Task[None] | None = None
        self.restart_on_crash = True

    async def start(self, w: ChaosWorker, min_partitions: int = 1) -> None:
        w.min_partitions = min_partitions
        await w.start(timeout=180)
        self.wanted[id(w)] = True

    async def kill(self, w: ChaosWorker) -> None:
        self.wanted[id(w)] = False
        await w.kill()

    async def stop(self, w: ChaosWorker) -> None:
        self.wanted[id(w)] = False
        await w.stop()

    async def watch(self) -> None:
        while True:
            for w in self.workers:
                if self.wanted.get(id(w)) and w.process is not None:
                    code = w.process.poll()
                    if code is not None:
                        self.wanted[id(w)] = False
                        self.exit_codes.append(code)
                        # 75: the documented exit on a stalled table recovery, for a restart.
                        (self.stall_exits if code == 75 else self.crashes).append(
                            f"{w.app_id} pid {w.pid} exited {code} at {time.strftime('%X')}; "
                            f"log tail:\n{w.log_tail(15)}"
                        )
                        if self.restart_on_crash:
                            with contextlib.suppress(Exception):
                                await self.start(w, min_partitions=0)
            await asyncio.sleep(0.3)

    async def __aenter__(self) -> Fleet:
        self._task = asyncio.create_task(self.watch())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if exc[0] is not None:
            # A scenario failed (a wait timed out, say): what each worker said it was stuck on.
            for w in self.workers:
                with contextlib.suppress(OSError):
                    for line in stuck_lines(w.log_events()):
                        print(f"{w.app_id}: {line}")
        for w in self.workers:
            self.wanted[id(w)] = False
            await w.stop()


#: The worker's own lines that say a batch is stuck or a store call was left behind.
STUCK_EVENTS = ("batch.slow", "store.call_abandoned")


def stuck_lines(events: list[dict[str, Any]], last: int = 3) -> list[str]:
    """The last ``batch.slow`` and ``store.call_abandoned`` lines of a worker's log events."""
    stuck = [e for e in events if e.get("event") in STUCK_EVENTS]
    return [json.dumps(e, default=str)[:4000] for e in stuck[-last:]]


# --------------------------------------------------------------------------------------------------
# The check over every output topic and the ledger table


def terminal_turns(bus: Bus) -> set[str]:
    done = {r.key_str for r in bus.messages("validated")}
    done |= {r.key_str for r in bus.messages("could_not_ground")}
    return {t for t in done if t is not None}


def settled(bus: Bus, plan: Mapping[str, Expect]) -> Callable[[], bool]:
    """Every planned turn has its terminal record (or its dead letter)."""

    def check() -> bool:
        done = terminal_turns(bus)
        dlq = {r.key_str for r in bus.messages("dlq")}
        return all((t in dlq) if e.terminal == "dlq" else (t in done) for t, e in plan.items())

    return check


def _codes(msg: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(sorted({r["code"] for r in msg.get("reasons", [])}))


def leak_patterns() -> dict[tuple[str, str], re.Pattern[str]]:
    """Per (tenant, user): markers of everything it may not see, and ids hidden in its tenant."""
    out = {}
    for p in PRINCIPALS:
        words = [i.marker for i in CORPUS if not i.visible_to(p)]
        words += [str(i.ident) for i in hidden_in_tenant(p)]
        out[(p.tenant, p.user)] = re.compile("|".join(map(re.escape, words)))
    return out


ALL_MARKERS = re.compile("|".join(re.escape(i.marker) for i in CORPUS))
HIDDEN_TO_ALL = re.compile(
    "|".join(str(i.ident) for i in CORPUS if i.revoked or i.acl in ([], "missing", ["group:legal"]))
)


def scan_leaks(bus: Bus, plan: Mapping[str, Expect]) -> list[str]:
    """Hidden markers / ids in the user-facing and regenerate topics, and in any header."""
    patterns = leak_patterns()
    found = []
    for role in ("validated", "could_not_ground", "regenerate", "ledger", "dlq"):
        for rec in bus.messages(role):
            exp = plan.get(rec.key_str or "")
            if exp is None:
                continue
            pat = patterns[(exp.principal.tenant, exp.principal.user)]
            if role in ("validated", "could_not_ground", "regenerate"):
                text = rec.value.decode("utf-8", "replace")
                if m := pat.search(text):
                    found.append(f"{role} {rec.key_str}: {m.group(0)}")
                if role == "could_not_ground" and (m := ALL_MARKERS.search(text)):
                    found.append(f"{role} {rec.key_str}: marker {m.group(0)}")
            # The ledger is metadata only: no marker (title/text) of anything, ever.
            if role == "ledger" and (m := ALL_MARKERS.search(rec.value.decode("utf-8", "replace"))):
                found.append(f"ledger {rec.key_str}: {m.group(0)}")
            for name, value in rec.headers:
                text = f"{name}={value.decode('utf-8', 'replace')}"
                if m := pat.search(text) or ALL_MARKERS.search(text):
                    found.append(f"{role} header {rec.key_str}: {m.group(0)}")
    return found


_LEVELS = "DEBUG|INFO|WARNING|ERROR|CRITICAL"
#: Faust's "[time] [pid] [LEVEL] ..." and the stdlib fallback "LEVEL name ...".
_STDLIB_LEVEL = re.compile(rf"(?:\[[^\]]*\] \[\d+\] \[({_LEVELS})\])|({_LEVELS}) ")


def scan_logs(workers: Iterable[WorkerProcess], plan: Mapping[str, Expect]) -> dict[str, Any]:
    """Hidden markers / ids in the workers' log lines: INFO and above strictly, DEBUG apart."""
    patterns = leak_patterns()
    info_hits: list[str] = []
    debug_hits: list[str] = []
    lines = 0
    for w in workers:
        for line in w.log_text().splitlines():
            lines += 1
            level = "info"
            turn = None
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    doc = json.loads(line)
                    level = str(doc.get("level", "info")).lower()
                    turn = doc.get("turn_id")
            elif m := _STDLIB_LEVEL.match(line):  # "[time] [pid] [LEVEL] ..." or "LEVEL name ..."
                level = (m.group(1) or m.group(2)).lower()
            exp = plan.get(turn) if isinstance(turn, str) else None
            pat = patterns[(exp.principal.tenant, exp.principal.user)] if exp else HIDDEN_TO_ALL
            m = ALL_MARKERS.search(line) or pat.search(line)
            if m:
                (debug_hits if level == "debug" else info_hits).append(
                    f"{m.group(0)}: {line[:300]}"
                )
    return {"lines": lines, "info_plus": info_hits, "debug": debug_hits}


@dataclass
class Verdict:
    """The figures of one check."""

    turns: int
    drafts: int
    lost: list[str]
    conflicting: list[str]
    wrong: list[str]
    duplicates: int
    unplanned_dlq: list[str]
    dlq: Counter[str]
    leaked: list[str]
    ledger_missing: list[str]
    ledger_duplicates: int

    def summary(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "drafts": self.drafts,
            "lost": len(self.lost),
            "conflicting": len(self.conflicting) + len(self.wrong),
            "conflicting_terminal": len(self.conflicting),
            "wrong_outcome": len(self.wrong),
            "same_id_republishes": self.duplicates,
            "unplanned_dead_letters": len(self.unplanned_dlq),
            "dead_letters": dict(self.dlq),
            "leaked": len(self.leaked),
            "ledger_missing": len(self.ledger_missing),
            "ledger_duplicates": self.ledger_duplicates,
            "examples": {
                "lost": self.lost[:5],
                "conflicting": self.conflicting[:5],
                "wrong": self.wrong[:5],
                "unplanned_dlq": self.unplanned_dlq[:5],
                "leaked": self.leaked[:5],
                "ledger_missing": self.ledger_missing[:5],
            },
        }


async def check(
    bus: Bus,
    plan: Mapping[str, Expect],
    pg_pool: Any,
    *,
    allowed_dlq: Callable[[Received], bool] = lambda r: False,
    ledger_timeout: float = 120.0,
) -> Verdict:
    """Compare everything collected with the plan; query the ledger table."""
    terminal: dict[str, set[tuple[str, str]]] = defaultdict(set)
    outcome: dict[str, tuple[str, tuple[str, ...]]] = {}
    seen_ids: Counter[tuple[str, str]] = Counter()
    regen: dict[str, set[str]] = defaultdict(set)
    for role in ("validated", "could_not_ground", "regenerate", "ledger"):
        for rec in bus.messages(role):
            msg = rec.json()
            seen_ids[(role, msg["event_id"])] += 1
            if role == "regenerate":
                regen[msg["turn_id"]].add(msg["event_id"])
            elif role != "ledger":
                terminal[msg["turn_id"]].add((role, msg["event_id"]))
                outcome[msg["turn_id"]] = (role, _codes(msg))
    duplicates = sum(c - 1 for c in seen_ids.values())
    dlq_by_turn: dict[str, list[Received]] = defaultdict(list)
    dlq_classes: Counter[str] = Counter()
    for rec in bus.messages("dlq"):
        if (rec.key_str or "") not in plan:
            continue
        dlq_by_turn[rec.key_str or ""].append(rec)
        dlq_classes[(rec.header("dlq.error.class") or b"?").decode()] += 1
    lost, conflicting, wrong, unplanned = [], [], [], []
    for turn, exp in plan.items():
        if exp.terminal == "dlq":
            if not dlq_by_turn.get(turn):
                lost.append(f"{turn} ({exp.route}): no dead letter")
            if turn in terminal or turn in regen:
                wrong.append(f"{turn} ({exp.route}): poison got a verdict")
            continue
        for rec in dlq_by_turn.get(turn, []):
            if not allowed_dlq(rec):
                cls = rec.header("dlq.error.class")
                unplanned.append(
                    f"{turn} ({exp.route}): {cls!r} {rec.header('dlq.error.message')!r}"
                )
        ends = terminal.get(turn, set())
        if not ends:
            lost.append(f"{turn} ({exp.route}): no terminal event; so far {bus._summary(turn)}")
            continue
        if len(ends) > 1 or len(regen.get(turn, ())) > 1:
            conflicting.append(f"{turn} ({exp.route}): {sorted(ends)} regen {regen.get(turn)}")
        role, codes = outcome[turn]
        if role != exp.terminal or codes != tuple(sorted(exp.codes)):
            wrong.append(
                f"{turn} ({exp.route}): {role} {codes}, expected {exp.terminal} {exp.codes}"
            )
        if bool(regen.get(turn)) != exp.regenerate:
            wrong.append(f"{turn} ({exp.route}): regenerate {bool(regen.get(turn))}")
    leaked = scan_leaks(bus, plan)

    # Ledger: a batch on the topic per decided draft, rows in Postgres, no duplicate rows.
    on_topic = {rec.json()["draft_id"] for rec in bus.messages("ledger")}
    want_rows = {d for e in plan.values() for d in e.ledger_drafts}
    want_batch = {d for e in plan.values() if e.terminal != "dlq" for d in e.draft_ids}
    missing = [f"topic: {d}" for d in sorted(want_batch - on_topic)]
    turns = list(plan)
    deadline = time.monotonic() + ledger_timeout
    stored: set[str] = set()
    while True:
        rows = await pg_pool.fetch(
            "SELECT DISTINCT draft_id FROM citation_ledger WHERE turn_id = ANY($1::text[])", turns
        )
        stored = {r["draft_id"] for r in rows}
        if want_rows <= stored or time.monotonic() > deadline:
            break
        await asyncio.sleep(1.0)
    missing += [f"postgres: {d}" for d in sorted(want_rows - stored)]
    dupes = await pg_pool.fetchval(
        "SELECT count(*) FROM (SELECT 1 FROM citation_ledger WHERE turn_id = ANY($1::text[])"
        " GROUP BY tenant_id, turn_id, draft_id, kind, source_id HAVING count(*) > 1) d",
        turns,
    )
    return Verdict(
        turns=len(plan),
        drafts=sum(len(e.draft_ids) for e in plan.values()),
        lost=lost,
        conflicting=conflicting,
        wrong=wrong,
        duplicates=duplicates,
        unplanned_dlq=unplanned,
        dlq=dlq_classes,
        leaked=leaked,
        ledger_missing=missing,
        ledger_duplicates=int(dupes or 0),
    )


async def wait_settled(bus: Bus, plan: Mapping[str, Expect], timeout: float) -> float:
    """Seconds until every planned turn ended (raises TimeoutError past ``timeout``)."""
    t0 = time.monotonic()
    with contextlib.suppress(TimeoutError):
        await bus.wait_until(settled(bus, plan), timeout=timeout, what="every turn ended")
    return time.monotonic() - t0


def policy(deadline_s: float) -> dict[str, Any]:
    return {
        "tenants": {
            t: {"version": f"chaos-{t}", "regeneration_deadline_s": deadline_s}
            for t in ("chaos-a", "chaos-b")
        }
    }
