"""Support: does a cited unit say what its visible sources say? (contract rule 6b)

Deterministic, no model and no network, linear in the unit and its sources, and explained: a
:class:`SupportResult` names the values and words of the unit that no source has, the kinds of
finding, and the source that covered the most. Only the texts the caller passes count, and the
caller passes the *visible* sources only: words that only a hidden source supports fail here
even inside a unit that also cites a visible source. The measure and its thresholds:
``docs/support.md``; their choice: ``docs/decisions.md``.

- ``values``: the grammar of one value (numbers, amounts, units, percentages), with ``dates``
  (dates, ranges, months, decades, times, quarters) and ``spelled`` (numbers in words);
- ``scan``: the values of a whole text as the reader sees it, a unit's or a source's;
- ``words``: words stemmed (Snowball) and weighed by rarity (Zipf frequencies);
- ``index``: each source read once per batch, the union of a unit's sources looked up once;
- ``verdict``: the findings and the level, from each kind's measured precision.
"""

from worker.core.claims.support.index import Cited, SourceIndex, SourceText
from worker.core.claims.support.verdict import (
    FAILING,
    LOW_COVERAGE_BELOW,
    MIN_WEIGHT_TO_ACCUSE,
    WEAK_BELOW,
    Finding,
    SupportResult,
    UnitMemo,
    check_cited,
    check_support,
    supported_cited,
)
from worker.core.contract import SupportLevel

__all__ = [
    "FAILING",
    "LOW_COVERAGE_BELOW",
    "MIN_WEIGHT_TO_ACCUSE",
    "WEAK_BELOW",
    "Cited",
    "Finding",
    "SourceIndex",
    "SourceText",
    "SupportLevel",
    "SupportResult",
    "UnitMemo",
    "check_cited",
    "check_support",
    "supported_cited",
]
