"""Hypothesis properties every metric must keep, whatever the calls."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness import Sample, SampleError, ToolCall
from harness.metrics import (
    Metric,
    NoUnexpectedToolCalls,
    RagasToolCallF1,
    ToolArgumentCorrectness,
    ToolCallAccuracy,
    ToolCallF1,
    ToolCallOrder,
    ToolCallSequenceAccuracy,
    ToolSelectionAccuracy,
)

# Few names, keys and values, so that collisions (same-name calls, equal args) are common.
values = st.one_of(
    st.integers(-2, 2),
    st.sampled_from([1.0, 2.5, True, False, None, "a", "b"]),
    st.lists(st.integers(0, 2), max_size=2),
)
calls = st.builds(
    ToolCall,
    name=st.sampled_from(["a", "b", "c"]),
    args=st.dictionaries(st.sampled_from(["x", "y", "z"]), values, max_size=3),
)
call_lists = st.lists(calls, max_size=6)

ALL_METRICS: list[Metric] = [
    ToolCallAccuracy(),
    NoUnexpectedToolCalls(),
    ToolCallOrder(),
    ToolArgumentCorrectness(),
    ToolArgumentCorrectness(strict=True),
    ToolSelectionAccuracy(),
    ToolSelectionAccuracy(ordered=True),
    ToolCallSequenceAccuracy(),
    ToolCallSequenceAccuracy(order="flexible"),
    ToolCallSequenceAccuracy(comparator="similarity", order="flexible"),
    ToolCallSequenceAccuracy(compat="ragas"),
    ToolCallSequenceAccuracy(compat="ragas", order="flexible"),
    ToolCallF1(),
    ToolCallF1(compat="ragas"),
]

ORDER_FREE: list[Metric] = [
    ToolCallAccuracy(),
    NoUnexpectedToolCalls(),
    ToolArgumentCorrectness(),
    ToolArgumentCorrectness(strict=True),
    ToolSelectionAccuracy(),
    ToolCallF1(),
    ToolCallF1(compat="ragas"),
    ToolCallSequenceAccuracy(order="flexible"),
]


def evaluate(metric: Metric, actual: list[ToolCall], expected: list[ToolCall]) -> Any:
    try:
        return metric.evaluate(Sample(tool_calls=actual, expected_tool_calls=expected))
    except SampleError:
        # Only ToolCallAccuracy refuses a sample, and only one without expectations.
        assert isinstance(metric, ToolCallAccuracy) and not expected
        return None


@settings(max_examples=150, deadline=None)
@given(actual=call_lists, expected=call_lists)
def test_every_score_is_a_float_in_unit_interval(
    actual: list[ToolCall], expected: list[ToolCall]
) -> None:
    for metric in ALL_METRICS:
        score = evaluate(metric, actual, expected)
        if score is None:
            continue
        assert isinstance(score.value, float), metric.name
        assert 0.0 <= score.value <= 1.0, (metric.name, score.value)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), actual=call_lists, expected=call_lists)
def test_order_free_scores_ignore_permutations(
    data: st.DataObject, actual: list[ToolCall], expected: list[ToolCall]
) -> None:
    shuffled_actual = data.draw(st.permutations(actual))
    shuffled_expected = data.draw(st.permutations(expected))
    for metric in ORDER_FREE:
        base = evaluate(metric, actual, expected)
        if base is None:
            continue
        for a, e in ((shuffled_actual, expected), (actual, shuffled_expected)):
            other = evaluate(metric, a, e)
            # Exact equality: counts are integers and sums go through math.fsum.
            assert other.value == base.value, (metric.name, base.reason, other.reason)
            assert other.passed == base.passed, metric.name


@settings(max_examples=150, deadline=None)
@given(actual=call_lists, expected=call_lists, comparator=st.sampled_from(["exact", "similarity"]))
def test_flexible_sequence_accuracy_is_at_least_strict(
    actual: list[ToolCall], expected: list[ToolCall], comparator: str
) -> None:
    strict = evaluate(ToolCallSequenceAccuracy(comparator=comparator), actual, expected)
    flexible = evaluate(
        ToolCallSequenceAccuracy(comparator=comparator, order="flexible"), actual, expected
    )
    # The positional pairing is one of the pairings flexible maximises over; the tolerance only
    # absorbs float rounding in the assignment solver's sums of similarity scores.
    assert flexible.value >= strict.value - 1e-12


@settings(max_examples=150, deadline=None)
@given(
    actual=call_lists,
    expected=call_lists,
    threshold=st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.5, 2 / 3, 0.8, 1.0])),
)
def test_passed_iff_value_reaches_threshold(
    actual: list[ToolCall], expected: list[ToolCall], threshold: float
) -> None:
    metrics: list[Metric] = [
        ToolCallAccuracy(threshold=threshold),
        NoUnexpectedToolCalls(threshold=threshold),
        ToolCallOrder(threshold=threshold),
        ToolArgumentCorrectness(threshold=threshold),
        ToolSelectionAccuracy(threshold=threshold, ordered=True),
        ToolCallSequenceAccuracy(threshold=threshold, order="flexible"),
        ToolCallF1(threshold=threshold),
        ToolCallF1(threshold=threshold, compat="ragas"),
    ]
    for metric in metrics:
        score = evaluate(metric, actual, expected)
        if score is None:
            continue
        assert score.threshold == threshold
        assert score.passed == (score.value >= threshold), metric.name


@settings(max_examples=100, deadline=None)
@given(actual=call_lists, expected=call_lists, threshold=st.floats(0.0, 1.0))
def test_strict_argument_correctness_passes_only_without_extras(
    actual: list[ToolCall], expected: list[ToolCall], threshold: float
) -> None:
    score = evaluate(ToolArgumentCorrectness(strict=True, threshold=threshold), actual, expected)
    has_extra = "extra_arg" in score.codes
    assert score.passed == (score.value >= threshold and not has_extra)


@settings(max_examples=100, deadline=None)
@given(actual=call_lists)
def test_calls_compared_with_themselves_score_one(actual: list[ToolCall]) -> None:
    # Self-comparison: every metric is perfect, except where Ragas's own rules say otherwise.
    for metric in ALL_METRICS:
        score = evaluate(metric, actual, actual)
        if score is None:
            continue
        if isinstance(metric, RagasToolCallF1) and metric.compat == "ragas" and not actual:
            assert score.value == 0.0  # rule 21: both empty is 0.0 in Ragas's F1
            continue
        assert math.isclose(score.value, 1.0), (metric.name, score.reason)
