"""ToolCallF1 (docs/metrics.md, tool_call_f1), and compat="ragas" against reference rules 18-23."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from harness import Expectation, Sample, SampleError, ToolCall
from harness.errors import MetricConfigError
from harness.metrics import ToolCallF1

C = ToolCall.of


def f1(
    actual: list[ToolCall] | None, expected: Sequence[ToolCall | Expectation], **kw: Any
) -> float:
    return ToolCallF1(**kw).evaluate(Sample(tool_calls=actual, expected_tool_calls=expected)).value


def ragas_f1(actual: list[ToolCall], expected: list[ToolCall]) -> float:
    return f1(actual, expected, compat="ragas")


# -- our semantics ----------------------------------------------------------------------------


def test_perfect_match() -> None:
    score = ToolCallF1().evaluate(
        Sample(tool_calls=[C("a", x=1), C("b")], expected_tool_calls=[C("b"), C("a", x=1)])
    )
    assert score.value == 1.0
    assert score.details.extra["precision"] == 1.0
    assert score.reason == "F1 1.00 (precision 1.00, recall 1.00)"


def test_args_must_be_equivalent_both_ways() -> None:
    assert f1([C("a", x=1, y=2)], [C("a", x=1)]) == 0.0  # an extra actual argument
    assert f1([C("a", x=1)], [C("a", x=1, y=2)]) == 0.0  # a missing one
    assert f1([C("a", x=1.0)], [C("a", x=1)]) == 1.0  # top-level numbers by value


def test_duplicates_count_as_a_multiset() -> None:
    # [A, A] vs [A]: tp 1, precision 1/2, recall 1 -> F1 2/3 (Ragas collapses to 1.0).
    assert f1([C("a"), C("a")], [C("a")]) == 2 / 3
    # [A, A, A] vs [A, B]: tp 1 of 3 actual and 2 expected -> 2·1 / 5.
    assert f1([C("a"), C("a"), C("a")], [C("a"), C("b")]) == 2 / 5


def test_matchers_allowed_on_the_expected_side() -> None:
    expected = [Expectation.of("search", q={"$regex": "^fl"}, page={"$optional": 1})]
    assert f1([C("search", q="flights")], expected) == 1.0
    assert f1([C("search", q="flights", page=1)], expected) == 1.0
    assert f1([C("search", q="flights", page=2)], expected) == 0.0


def test_maximum_matching_not_greedy() -> None:
    expected = [Expectation.of("a", x={"$any": True}), Expectation.of("a", x=1)]
    assert f1([C("a", x=1), C("a", x=2)], expected) == 1.0


def test_empty_sides() -> None:
    assert f1([], []) == 1.0
    assert f1([C("a")], []) == 0.0
    assert f1([], [C("a")]) == 0.0


def test_precision_recall_in_details_and_reason() -> None:
    score = ToolCallF1().evaluate(
        Sample(tool_calls=[C("a"), C("b", y=2)], expected_tool_calls=[C("a"), C("b", y=1), C("c")])
    )
    assert score.value == 2 * 1 / 5
    assert score.details.extra["precision"] == 0.5
    assert score.details.extra["recall"] == 1 / 3
    assert score.reason == (
        "F1 0.40 (precision 0.50, recall 0.33); missing: b(y=1), c(); unexpected: b(y=2)"
    )
    assert set(score.codes) == {"missing_call", "unexpected_call", "wrong_args"}


def test_default_threshold_and_bad_compat() -> None:
    assert ToolCallF1().threshold == 0.8
    with pytest.raises(MetricConfigError, match="compat must be one of None, 'ragas'"):
        ToolCallF1(compat="Ragas")


def test_nothing_recorded_raises() -> None:
    with pytest.raises(SampleError):
        f1(None, [C("a")])


# -- compat="ragas" ---------------------------------------------------------------------------


def test_ragas_rule21_both_empty_is_zero() -> None:
    assert ragas_f1([], []) == 0.0


def test_ragas_rule21_one_side_empty_is_zero() -> None:
    assert ragas_f1([C("a")], []) == 0.0
    assert ragas_f1([], [C("a")]) == 0.0


def test_ragas_rule21_duplicates_collapse() -> None:
    assert ragas_f1([C("a"), C("a")], [C("a")]) == 1.0


def test_ragas_rule20_aaa_vs_ab_rounds_to_four_places() -> None:
    assert ragas_f1([C("a"), C("a"), C("a")], [C("a"), C("b")]) == 0.6667
    assert ragas_f1([C("a"), C("b")], [C("a"), C("a"), C("a")]) == 0.6667


@pytest.mark.parametrize(
    ("reference", "predicted", "score"),
    [
        (1, 1.0, 1.0),  # 1 == 1.0 == True under Python equality (V23, V24, V50, V67)
        (1, True, 1.0),
        (0, False, 1.0),
        (1, "1", 0.0),
        (None, "None", 0.0),
        ({"a": 1}, "{'a': 1}", 0.0),
        ({"a": {"b": 1, "c": 2}}, {"a": {"c": 2, "b": 1}}, 1.0),  # key order irrelevant, any depth
        ([1, 2], [2, 1], 0.0),  # list order matters
        ({"tags": [1, {"k": [2]}]}, {"tags": [1, {"k": [2]}]}, 1.0),  # nested: no TypeError (#2506)
    ],
)
def test_ragas_rule21_python_equality_on_values(
    reference: Any, predicted: Any, score: float
) -> None:
    assert ragas_f1([C("f", v=predicted)], [C("f", v=reference)]) == score


def test_ragas_rule21_whole_args_all_or_nothing() -> None:
    assert ragas_f1([C("f", x=1, y=2)], [C("f", x=1)]) == 0.0
    assert ragas_f1([C("f")], [C("f", x=1)]) == 0.0


def test_ragas_rule18_order_never_matters() -> None:
    assert ragas_f1([C("b"), C("a")], [C("a"), C("b")]) == 1.0


def test_ragas_f1_partial_value_is_rounded() -> None:
    # 1 of 3 predicted, 1 of 2 reference: P 1/3, R 1/2, F1 0.4.
    assert ragas_f1([C("a"), C("x"), C("y")], [C("a"), C("b")]) == 0.4
    # P 1/3, R 1/3 -> 0.3333 (0.33333... rounded).
    assert ragas_f1([C("a"), C("x"), C("y")], [C("a"), C("b"), C("c")]) == 0.3333


def test_ragas_compat_rejects_matchers() -> None:
    with pytest.raises(SampleError, match="compat='ragas'"):
        f1([C("f", x=1)], [Expectation.of("f", x={"$any": True})], compat="ragas")
