"""tool_call_partial_order (docs/metrics.md): the truth table, the tie-break, the edge cases,
and a brute force over every pairing of small samples."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import Expectation, Sample, SampleError, ToolCall
from harness.labels import order_edges
from harness.metrics import ToolCallPartialOrder, get_metric
from harness.metrics.partial_order import order_matching
from harness.resolve import resolve_sample

METRIC = ToolCallPartialOrder()


def diamond(*, price_optional: bool = False) -> list[Expectation]:
    """find → {stock, price} → place: the order the issue asks to be expressible."""
    return [
        Expectation("find", label="find"),
        Expectation("stock", label="stock", after="find"),
        Expectation("price", label="price", after="find", optional=price_optional),
        Expectation("place", after=["stock", "price"]),
    ]


def score(expected: list[Expectation], names: Sequence[str]) -> float:
    sample = resolve_sample(
        Sample(tool_calls=[ToolCall(n) for n in names], expected_tool_calls=expected)
    )
    return METRIC.evaluate(sample).value


@pytest.mark.parametrize(
    ("names", "value"),
    [
        (["find", "stock", "price", "place"], 1.0),
        (["find", "price", "stock", "place"], 1.0),
        (["stock", "find", "price", "place"], 0.75),
        (["place", "find", "stock", "price"], 0.5),
        (["find", "stock", "place"], 0.5),
        (["place", "price", "stock", "find"], 0.0),
        ([], 0.0),
    ],
)
def test_the_documented_truth_table(names: list[str], value: float) -> None:
    assert score(diamond(), names) == value


@pytest.mark.parametrize(
    ("names", "value"), [(["find", "stock", "place"], 1.0), (["stock", "find", "place"], 2 / 3)]
)
def test_an_absent_optional_call_keeps_the_order_through_it(names: list[str], value: float) -> None:
    # price absent: place now comes after find directly (find → place), 3 edges in all
    assert score(diamond(price_optional=True), names) == pytest.approx(value)


def test_a_present_optional_call_counts_its_edges() -> None:
    assert score(diamond(price_optional=True), ["find", "stock", "place", "price"]) == 0.75


def test_the_tie_break_prefers_the_pairing_that_keeps_the_order() -> None:
    expected = [
        Expectation("check"),
        Expectation("check", label="a"),
        Expectation("pay", after="a"),
    ]
    calls = [ToolCall("check"), ToolCall("pay"), ToolCall("check")]
    result = METRIC.evaluate(Sample(tool_calls=calls, expected_tool_calls=expected))
    assert result.value == 1.0
    assert [(p.expected_index, p.actual_index) for p in result.details.pairs] == [
        (0, 2),
        (1, 0),
        (2, 1),
    ]
    assert result.details.extra == {"edges": 1, "kept": 1, "exhaustive": True}


def test_a_broken_edge_is_a_wrong_order_issue_naming_both_calls() -> None:
    expected = [
        Expectation("find", label="find"),
        Expectation("refund", label="refund", after="find"),
    ]
    result = METRIC.evaluate(
        Sample(tool_calls=[ToolCall("refund"), ToolCall("find")], expected_tool_calls=expected)
    )
    assert (result.value, result.passed) == (0.0, False)
    assert (
        result.reason
        == "0/1 order constraints kept; broken: 'find' (call #2) ran after 'refund' (call #1)"
    )
    assert result.codes == ("wrong_order",)


def test_an_unmatched_end_breaks_the_edge_and_is_named() -> None:
    expected = [Expectation("find", {"id": 1}, label="find"), Expectation("refund", after="find")]
    result = METRIC.evaluate(
        Sample(
            tool_calls=[ToolCall("find", {"id": 2}), ToolCall("refund")],
            expected_tool_calls=expected,
        )
    )
    assert result.value == 0.0
    assert "'find' before refund: 'find' not matched" in result.reason
    assert set(result.codes) == {"wrong_order", "missing_call"}


def test_edge_cases() -> None:
    plain = [Expectation("a"), Expectation("b")]
    assert (
        METRIC.evaluate(Sample(tool_calls=[ToolCall("b")], expected_tool_calls=plain)).value == 1.0
    )
    assert METRIC.evaluate(Sample(tool_calls=[], expected_tool_calls=plain)).value == 0.0
    assert METRIC.evaluate(Sample(tool_calls=[ToolCall("a")], expected_tool_calls=[])).value == 1.0
    with pytest.raises(SampleError, match="nothing was recorded"):
        METRIC.evaluate(Sample(tool_calls=None, expected_tool_calls=plain))


def test_it_is_registered_with_threshold_one() -> None:
    metric = get_metric("tool_call_partial_order")
    assert (metric.name, metric.threshold) == ("tool_call_partial_order", 1.0)


def test_past_the_search_budget_the_best_pairing_found_is_used_and_said() -> None:
    # twelve interchangeable `step` calls on a chain: the first descent already keeps every edge
    expected = [
        Expectation("step", label=f"s{i}", after=[f"s{i - 1}"] if i else ()) for i in range(12)
    ]
    calls = [ToolCall("step") for _ in range(12)]
    found = order_matching(expected, calls, order_edges(expected), budget=5)
    assert (len(found.pairs), len(found.kept), found.exhaustive) == (12, 11, False)


# --- against a brute force over every pairing --------------------------------------------------

NAMES = ("a", "b")


@st.composite
def samples(draw: st.DrawFn) -> tuple[list[Expectation], list[ToolCall]]:
    """Up to 5 expectations over two tools (some with an argument), a random DAG over them
    (edges only from lower to higher index, so it is acyclic), up to 5 calls."""
    n = draw(st.integers(1, 5))
    specs = [(draw(st.sampled_from(NAMES)), draw(st.sampled_from([None, 1, 2]))) for _ in range(n)]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    edges = draw(st.sets(st.sampled_from(pairs))) if pairs else set()
    expected = [
        Expectation(
            name,
            {} if arg is None else {"x": arg},
            label=f"e{i}",
            after=tuple(f"e{a}" for a, b in sorted(edges) if b == i),
        )
        for i, (name, arg) in enumerate(specs)
    ]
    m = draw(st.integers(0, 5))
    calls = [
        ToolCall(draw(st.sampled_from(NAMES)), {"x": draw(st.sampled_from([1, 2]))})
        for _ in range(m)
    ]
    return expected, calls


def brute_force(expected: list[Expectation], calls: list[ToolCall]) -> tuple[int, int]:
    """(size of a maximum matching, most edges kept by one of maximum size), by enumeration."""
    edges = order_edges(expected)
    best = (0, 0)
    options = [[None, *[j for j, c in enumerate(calls) if e.accepts(c)]] for e in expected]
    for choice in itertools.product(*options):
        taken = [j for j in choice if j is not None]
        if len(taken) != len(set(taken)):
            continue
        kept = sum(
            1
            for a, b in edges
            if choice[a] is not None and choice[b] is not None and choice[a] < choice[b]
        )
        best = max(best, (len(taken), kept))
    return best


@settings(max_examples=400, deadline=None)
@given(samples())
def test_it_equals_a_brute_force_over_every_pairing(
    sample: tuple[list[Expectation], list[ToolCall]],
) -> None:
    expected, calls = sample
    size, kept = brute_force(expected, calls)
    edges = order_edges(expected)
    result = METRIC.evaluate(Sample(tool_calls=calls, expected_tool_calls=expected))
    if not calls:
        assert result.value == 0.0
        return
    assert result.value == (kept / len(edges) if edges else 1.0)
    pairs = [(p.expected_index, p.actual_index) for p in result.details.pairs]
    assert len(pairs) == size  # a maximum matching ...
    assert all(expected[i].accepts(calls[j]) for i, j in pairs)  # ... under accepts ...
    assert len({j for _, j in pairs}) == len(pairs)  # ... one to one
    partner = dict(pairs)
    assert result.details.extra["kept"] == sum(
        1 for a, b in edges if a in partner and b in partner and partner[a] < partner[b]
    )
