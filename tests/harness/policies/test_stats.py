"""Figure: exact quantiles against the standard library's, merging equals one pass, and a
bounded sample past the limit (its sums and max still exact)."""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.policies import stats as stats_module
from harness.policies.stats import Figure

values = st.lists(
    st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False),
    min_size=2,
    max_size=200,
)


@given(values)
def test_quantiles_match_the_standard_library(found: list[float]) -> None:
    figure = Figure()
    for value in found:
        figure.add(value)
    data = figure.to_json()
    expected = statistics.quantiles(found, n=100, method="inclusive")
    assert data["count"] == len(found) and data["max"] == max(found)
    assert data["mean"] == pytest.approx(statistics.fmean(found), rel=1e-9, abs=1e-6)
    for name, index in (("p50", 49), ("p95", 94), ("p99", 98)):
        assert data[name] == pytest.approx(expected[index], rel=1e-9, abs=1e-6)
    assert "exact" not in data


@given(values, st.integers(min_value=0, max_value=200))
def test_merging_parts_equals_one_pass(found: list[float], cut: int) -> None:
    whole, first, second = Figure(), Figure(), Figure()
    for value in found:
        whole.add(value)
    for value in found[:cut]:
        first.add(value)
    for value in found[cut:]:
        second.add(value)
    first.merge(second)
    assert first.to_json() == pytest.approx(whole.to_json())


def test_past_the_limit_a_uniform_sample_keeps_memory_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stats_module, "EXACT_LIMIT", 1000)
    figure = Figure()
    for value in range(100_000):
        figure.add(float(value))
    data = figure.to_json()
    assert len(figure.values) == 1000 and data["exact"] is False
    assert data["count"] == 100_000 and data["max"] == 99_999.0
    assert data["mean"] == pytest.approx(49_999.5)
    # a uniform sample of 1,000 puts the median within a few percent of the truth
    assert data["p50"] == pytest.approx(50_000, rel=0.1)
    assert data["p95"] == pytest.approx(95_000, rel=0.05)


@pytest.mark.parametrize(("first", "second"), [(800, 800), (0, 3000), (3000, 0), (1000, 1)])
def test_merging_past_the_limit_keeps_the_sums_and_max_of_all(
    monkeypatch: pytest.MonkeyPatch, first: int, second: int
) -> None:
    monkeypatch.setattr(stats_module, "EXACT_LIMIT", 1000)
    left, right = Figure(), Figure()
    for value in range(first):
        left.add(float(value))
    for value in range(first, first + second):
        right.add(float(value))
    left.merge(right)
    data = left.to_json()
    every = first + second
    assert len(left.values) == min(every, 1000) and data["count"] == every
    assert data["max"] == every - 1 and data["mean"] == pytest.approx((every - 1) / 2)
    assert data.get("exact", True) is (every <= 1000)
