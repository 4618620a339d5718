"""ToolCallAccuracy, NoUnexpectedToolCalls and ToolCallOrder (docs/metrics.md, Metrics)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from harness import Expectation, Sample, SampleError, ToolCall
from harness.metrics import NoUnexpectedToolCalls, ToolCallAccuracy, ToolCallOrder

C = ToolCall.of


def sample(actual: list[ToolCall] | None, expected: Sequence[ToolCall | Expectation]) -> Sample:
    return Sample(tool_calls=actual, expected_tool_calls=expected)


# -- ToolCallAccuracy -------------------------------------------------------------------------


def test_accuracy_defaults_and_name() -> None:
    metric = ToolCallAccuracy()
    assert metric.name == "tool_call_accuracy"
    assert metric.threshold == 1.0


def test_accuracy_each_actual_call_satisfies_at_most_one_expectation() -> None:
    expected = [C("get_time"), C("get_time")]
    score = ToolCallAccuracy().evaluate(sample([C("get_time")], expected))
    assert score.value == 0.5
    assert score.details.unmatched_expected == (1,)


def test_accuracy_matchers_on_the_expected_side() -> None:
    expected = [Expectation.of("search", q={"$regex": "^flights"}, limit={"$type": "integer"})]
    assert (
        ToolCallAccuracy()
        .evaluate(sample([C("search", q="flights to Rome", limit=5)], expected))
        .value
        == 1.0
    )
    assert (
        ToolCallAccuracy().evaluate(sample([C("search", q="hotels", limit=5)], expected)).value
        == 0.0
    )


def test_accuracy_names_are_case_sensitive() -> None:
    score = ToolCallAccuracy().evaluate(sample([C("Get_Time")], [C("get_time")]))
    assert score.value == 0.0
    assert score.codes == ("missing_call",)  # no same-name call, so no argument diff either


def test_accuracy_counts_calls_of_every_status() -> None:
    # requested-only and failed calls are still calls the model made.
    actual = [
        ToolCall("a", {"x": 1}, status="requested"),
        ToolCall("b", {}, status="error", error="boom"),
    ]
    score = ToolCallAccuracy().evaluate(sample(actual, [C("a", x=1), C("b")]))
    assert score.value == 1.0
    assert score.passed


def test_accuracy_tool_error_issue_is_informational() -> None:
    actual = [ToolCall("lookup", {"id": 7}, status="error", error="timeout after 5s")]
    score = ToolCallAccuracy().evaluate(sample(actual, [C("lookup", id=7)]))
    assert score.value == 1.0
    assert score.passed
    assert score.codes == ("tool_error",)
    assert score.details.issues[0].message == "lookup raised: timeout after 5s"
    assert score.details.issues[0].actual_index == 0


def test_accuracy_reason_caps_long_missing_lists() -> None:
    expected = [C(f"tool_{k}") for k in range(5)]
    score = ToolCallAccuracy().evaluate(sample([C("tool_0")], expected))
    assert score.reason == (
        "1/5 expected calls matched; missing: tool_1(), tool_2(), tool_3() (+1 more)"
    )


def test_accuracy_details_serialise_to_json_ready_dict() -> None:
    score = ToolCallAccuracy().evaluate(sample([C("f", x=2), C("g")], [C("f", x=1), C("g")]))
    data = score.details.to_dict()
    assert data["pairs"] == [{"expected": 1, "actual": 1, "score": 1.0, "diffs": []}]
    assert data["unmatched_expected"] == [0]
    assert data["unmatched_actual"] == [0]
    assert [issue["code"] for issue in data["issues"]] == ["missing_call", "wrong_args"]


# -- NoUnexpectedToolCalls --------------------------------------------------------------------


def test_no_unexpected_all_covered() -> None:
    score = NoUnexpectedToolCalls().evaluate(sample([C("a", x=1), C("b")], [C("b"), C("a", x=1)]))
    assert score.value == 1.0
    assert score.reason == "no unexpected tool calls (2 made, all expected)"


def test_no_unexpected_second_call_of_same_tool_is_an_extra() -> None:
    score = NoUnexpectedToolCalls().evaluate(sample([C("a"), C("a")], [C("a")]))
    assert score.value == 0.0
    assert score.details.unmatched_actual == (1,)
    assert score.reason == "1 unexpected call: a()"


def test_no_unexpected_uses_maximum_matching_for_coverage() -> None:
    # Greedy would let a() take a(x=1) and leave a(x=1)'s expectation without its call.
    expected = [Expectation.of("a"), Expectation.of("a", x=1)]
    score = NoUnexpectedToolCalls().evaluate(sample([C("a", x=1), C("a", x=2)], expected))
    assert score.value == 1.0


def test_no_unexpected_without_expectations_every_call_is_unexpected() -> None:
    assert NoUnexpectedToolCalls().evaluate(sample([], [])).value == 1.0
    assert NoUnexpectedToolCalls().evaluate(sample([C("a")], [])).value == 0.0


def test_no_unexpected_needs_a_recording() -> None:
    with pytest.raises(SampleError):
        NoUnexpectedToolCalls().evaluate(sample(None, [C("a")]))


# -- ToolCallOrder ----------------------------------------------------------------------------


def test_order_all_in_order_with_other_calls_between() -> None:
    actual = [C("a"), C("noise"), C("b"), C("noise"), C("c")]
    score = ToolCallOrder().evaluate(sample(actual, [C("a"), C("b"), C("c")]))
    assert score.value == 1.0
    assert score.reason == "3/3 expected calls in order"


def test_order_partial_order_is_the_longest_in_order_fraction() -> None:
    # c, a, b: the best alignment keeps a, b (2 of 3); greedy earliest-match would keep only c.
    actual = [C("c"), C("a"), C("b")]
    score = ToolCallOrder().evaluate(sample(actual, [C("a"), C("b"), C("c")]))
    assert score.value == 2 / 3
    assert score.codes == ("wrong_order",)
    assert score.reason == "2/3 expected calls in order; out of order: c()"


def test_order_missing_call_is_reported_as_missing_not_misordered() -> None:
    score = ToolCallOrder().evaluate(sample([C("a"), C("c")], [C("a"), C("b"), C("c")]))
    assert score.value == 2 / 3
    assert score.codes == ("missing_call",)


def test_order_arguments_must_match_for_a_call_to_count() -> None:
    score = ToolCallOrder().evaluate(sample([C("a", x=2), C("b")], [C("a", x=1), C("b")]))
    assert score.value == 0.5


def test_order_no_expectations_is_vacuously_in_order() -> None:
    score = ToolCallOrder().evaluate(sample([C("a")], []))
    assert score.value == 1.0


def test_order_needs_a_recording() -> None:
    with pytest.raises(SampleError):
        ToolCallOrder().evaluate(sample(None, [C("a")]))
