"""Rule 4 in one call (``resolve_all``) against the contract's §3.4 written out id by id."""

from __future__ import annotations

from datetime import datetime, timedelta

from fixtures import NOW
from hypothesis import given, settings
from hypothesis import strategies as st

from worker.core.citations.evidence import (
    MAX_SOURCE_ID,
    CitationRef,
    EvidenceKind,
    EvidenceRecord,
    Principal,
    Resolution,
    resolve_all,
)


def resolve(
    ref: CitationRef,
    record: EvidenceRecord | None,
    principal: Principal,
    retrieval: frozenset[CitationRef] | None,
    now: datetime,
) -> Resolution:
    """The first outcome of contract §3.4 that applies to one id, as the contract words it."""
    if record is None or not ref.queryable:
        return Resolution.DANGLING
    if record.revoked_at is not None and record.revoked_at <= now:
        return Resolution.REVOKED
    if record.acl is not None and principal.acl_entries().isdisjoint(record.acl):
        return Resolution.ACL_REDACTED
    if retrieval is not None and ref not in retrieval:
        return Resolution.NOT_IN_RETRIEVAL
    return Resolution.RESOLVED


_IDS = st.sampled_from([0, 1, 2, 7, MAX_SOURCE_ID, MAX_SOURCE_ID + 1, 2**70])
_REFS = st.builds(CitationRef, st.sampled_from(list(EvidenceKind)), _IDS)
_ACLS = st.sampled_from(
    [None, (), ("user:alice",), ("group:ops",), ("group:analysts", "user:bob"), ("User:alice",)]
)
_REVOKED = st.sampled_from([None, NOW - timedelta(seconds=1), NOW, NOW + timedelta(seconds=1)])
_PRINCIPALS = st.sampled_from(
    [
        Principal(user_id="alice"),
        Principal(user_id="bob", groups=("ops",)),
        Principal(user_id="carol", groups=("analysts", "ops")),
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    refs=st.lists(_REFS, max_size=12),
    stored=st.lists(st.tuples(_REFS, _ACLS, _REVOKED), max_size=12),
    principal=_PRINCIPALS,
    retrieval=st.none() | st.frozensets(_REFS, max_size=6),
)
def test_resolve_all_is_resolve_of_each_id_in_order(
    refs: list[CitationRef],
    stored: list[tuple[CitationRef, tuple[str, ...] | None, object]],
    principal: Principal,
    retrieval: frozenset[CitationRef] | None,
) -> None:
    evidence = {
        ref: EvidenceRecord(ref=ref, acl=acl, revoked_at=revoked, text="t")  # type: ignore[arg-type]
        for ref, acl, revoked in stored
    }
    got = resolve_all(refs, evidence, principal, retrieval, NOW)
    assert list(got) == list(dict.fromkeys(refs))
    assert got == {r: resolve(r, evidence.get(r), principal, retrieval, NOW) for r in refs}


def test_resolve_all_reads_each_outcome() -> None:
    obs = [CitationRef(EvidenceKind.OBS, i) for i in range(6)]
    evidence = {
        obs[1]: EvidenceRecord(ref=obs[1], acl=None, revoked_at=NOW),
        obs[2]: EvidenceRecord(ref=obs[2], acl=("group:ops",)),
        obs[3]: EvidenceRecord(ref=obs[3], acl=None),
        obs[4]: EvidenceRecord(ref=obs[4], acl=("user:alice",)),
    }
    got = resolve_all(obs[:5], evidence, Principal(user_id="alice"), frozenset(obs[4:]), NOW)
    assert got == {
        obs[0]: Resolution.DANGLING,
        obs[1]: Resolution.REVOKED,
        obs[2]: Resolution.ACL_REDACTED,
        obs[3]: Resolution.NOT_IN_RETRIEVAL,
        obs[4]: Resolution.RESOLVED,
    }
