"""ResultSample's rule, checked against a plain restatement of it on random streams."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from harness.run.results import STATUSES, ResultSample


@dataclass(frozen=True)
class _Item:
    number: int
    status: str


def _reference(items: list[_Item], limit: int | None) -> tuple[list[_Item], dict[str, int]]:
    """The docstring's rule, literally: scan back for the most recent passing result kept."""
    kept: list[_Item] = []
    omitted: dict[str, int] = {}
    for item in items:
        if limit is None or len(kept) < limit:
            kept.append(item)
            continue
        passing = [i for i, k in enumerate(kept) if k.status == "passed"]
        if item.status != "passed" and passing:
            del kept[passing[-1]]
            omitted["passed"] = omitted.get("passed", 0) + 1
            kept.append(item)
            continue
        omitted[item.status] = omitted.get(item.status, 0) + 1
    return kept, omitted


@given(
    st.lists(st.sampled_from(STATUSES), max_size=80),
    st.one_of(st.none(), st.integers(min_value=0, max_value=12)),
)
def test_sample_keeps_what_the_rule_says(statuses: list[str], limit: int | None) -> None:
    items = [_Item(n, status) for n, status in enumerate(statuses)]
    sample: ResultSample[_Item] = ResultSample(limit)
    for item in items:
        sample.add(item)
    kept, omitted = _reference(items, limit)
    assert list(sample.scenarios) == kept
    assert sample.omitted == omitted
    assert len(sample.scenarios) + sum(sample.omitted.values()) == len(items)
