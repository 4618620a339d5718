"""Every example of the three seed documents as a test; where we differ, the name says why.

Our semantics: docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from langchain_core.tools import tool

from harness import Expectation, Sample, SampleError, ToolCall
from harness.metrics import (
    NoUnexpectedToolCalls,
    ToolArgumentCorrectness,
    ToolCallAccuracy,
    ToolCallSequenceAccuracy,
    ToolSelectionAccuracy,
)

C = ToolCall.of


def sample(actual: list[ToolCall] | None, expected: Sequence[ToolCall | Expectation]) -> Sample:
    return Sample(tool_calls=actual, expected_tool_calls=expected)


# --------------------------------------------------------------------------------------------
# seed 000: Tool Call Accuracy (Java library)


@tool("get_weather")
def get_weather_tool(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


@tool("weather_lookup")
def renamed_weather(city: str) -> str:
    """Weather, under a custom tool name."""
    return f"rain in {city}"


def test_seed000_expected_call_performed_scores_one() -> None:
    score = ToolCallAccuracy().evaluate(
        sample([C("get_weather", city="Berlin")], [C("get_weather", city="Berlin")])
    )
    assert score.value == 1.0
    assert score.passed
    assert score.reason == "1/1 expected calls matched"
    assert [(p.expected_index, p.actual_index) for p in score.details.pairs] == [(0, 0)]


def test_seed000_method_reference_expectation_uses_the_tools_own_name() -> None:
    # Python analogue of expectedToolCall(WeatherTools::getWeather): the @tool's name, which
    # honours @tool("custom_name") where a hand-written function name would be wrong.
    assert renamed_weather.name == "weather_lookup"
    called = renamed_weather.invoke({"city": "Berlin"})
    assert called == "rain in Berlin"
    actual = [C("weather_lookup", city="Berlin")]
    score = ToolCallAccuracy().evaluate(
        sample(actual, [Expectation.of(renamed_weather, city="Berlin")])
    )
    assert score.value == 1.0
    wrong = ToolCallAccuracy().evaluate(sample(actual, [Expectation.of(get_weather_tool)]))
    assert wrong.value == 0.0


def test_seed000_expected_args_are_a_subset_of_actual_args() -> None:
    score = ToolCallAccuracy().evaluate(
        sample(
            [C("get_weather", city="Berlin", units="metric", day="tomorrow")],
            [C("get_weather", city="Berlin")],
        )
    )
    assert score.value == 1.0


def test_seed000_expectation_without_args_matches_any_call_of_that_name() -> None:
    score = ToolCallAccuracy().evaluate(
        sample([C("get_weather", city="Paris")], [Expectation.of("get_weather")])
    )
    assert score.value == 1.0


def test_seed000_max_matching_not_first_match_trap() -> None:
    # A first-match scan lets the no-args expectation take the only Berlin call, and then the
    # specific expectation fails (0.5). A maximum matching satisfies both.
    expected = [Expectation.of("get_weather"), Expectation.of("get_weather", city="Berlin")]
    actual = [C("get_weather", city="Berlin"), C("get_weather", city="Paris")]
    score = ToolCallAccuracy().evaluate(sample(actual, expected))
    assert score.value == 1.0
    assert sorted((p.expected_index, p.actual_index) for p in score.details.pairs) == [
        (0, 1),
        (1, 0),
    ]


def test_seed000_score_is_matched_over_expected() -> None:
    expected = [C("get_weather", city="Berlin"), C("get_time"), C("get_news", topic="ai")]
    actual = [C("get_weather", city="Berlin"), C("get_news", topic="ai")]
    score = ToolCallAccuracy().evaluate(sample(actual, expected))
    assert score.value == pytest.approx(2 / 3)
    assert score.value == 2 / 3
    assert not score.passed  # default threshold 1.0
    assert score.reason == "2/3 expected calls matched; missing: get_time()"
    assert score.details.unmatched_expected == (1,)
    assert "missing_call" in score.codes


def test_seed000_extra_actual_calls_do_not_lower_the_score() -> None:
    actual = [C("get_weather", city="Berlin"), C("get_time"), C("send_email", to="x")]
    s = sample(actual, [C("get_weather", city="Berlin")])
    score = ToolCallAccuracy().evaluate(s)
    assert score.value == 1.0
    assert score.details.unmatched_actual == (1, 2)
    # ... use assertNoUnexpectedToolCalls's analogue when extras should fail.
    extras = NoUnexpectedToolCalls().evaluate(s)
    assert extras.value == 0.0
    assert extras.reason == "2 unexpected calls: get_time(), send_email(to='x')"
    assert extras.codes == ("unexpected_call",)


def test_seed000_wrong_argument_value_is_not_a_match() -> None:
    score = ToolCallAccuracy().evaluate(
        sample([C("get_weather", city="Paris")], [C("get_weather", city="Berlin")])
    )
    assert score.value == 0.0
    assert score.codes == ("missing_call", "wrong_args")
    wrong = [i for i in score.details.issues if i.code == "wrong_args"]
    assert wrong[0].message == "get_weather called with city='Paris', expected 'Berlin'."


def test_seed000_top_level_numbers_compare_by_value_nested_by_type() -> None:
    # Java's Integer vs Long at the top level: equal; nested, types must agree (3 vs 3.0).
    top = sample([C("f", n=3.0)], [C("f", n=3)])
    assert ToolCallAccuracy().evaluate(top).value == 1.0
    nested = sample([C("f", filter={"n": 3.0})], [C("f", filter={"n": 3})])
    assert ToolCallAccuracy().evaluate(nested).value == 0.0
    nested_list = sample([C("f", ids=[1, 2.0])], [C("f", ids=[1, 2])])
    assert ToolCallAccuracy().evaluate(nested_list).value == 0.0


def test_seed000_no_expected_calls_raises() -> None:
    with pytest.raises(SampleError, match="no expected tool calls"):
        ToolCallAccuracy().evaluate(sample([C("get_weather", city="Berlin")], []))
    with pytest.raises(ValueError):  # SampleError is a ValueError, as docs/metrics.md requires
        ToolCallAccuracy().evaluate(sample([], []))


def test_seed000_nothing_recorded_raises() -> None:
    with pytest.raises(SampleError, match="nothing was recorded"):
        ToolCallAccuracy().evaluate(sample(None, [C("get_weather", city="Berlin")]))


def test_seed000_recorded_but_empty_scores_zero_unlike_the_docs_exception_wording() -> None:
    # The seed's real code scores an empty recorded list 0.0; its docs blur "none recorded"
    # (our tool_calls=None, an error) with "none made" (a legitimate failure).
    score = ToolCallAccuracy().evaluate(sample([], [C("get_weather", city="Berlin")]))
    assert score.value == 0.0
    assert score.reason == (
        "0/1 expected calls matched (no tool calls were made); missing: get_weather(city='Berlin')"
    )


# --------------------------------------------------------------------------------------------
# seed 002: ToolArgumentCorrectness (Java framework)


def test_seed002_wrong_order_id_example() -> None:
    s = sample([C("GetOrder", orderId="99999")], [C("GetOrder", orderId="12345")])
    score = ToolArgumentCorrectness(threshold=0.8).evaluate(s)
    assert score.value == 0.0
    assert score.passed is False
    assert score.reason == "GetOrder called with orderId='99999', expected '12345'."
    assert score.codes == ("wrong_args",)
    (pair,) = score.details.pairs
    assert [(d.path, d.expected, d.actual, d.code) for d in pair.diffs] == [
        ("/orderId", "12345", "99999", "wrong_args")
    ]


def test_seed002_correct_arguments_example() -> None:
    args = {"customerId": "cust-42", "status": "pending"}
    s = sample([C("SearchOrders", args)], [C("SearchOrders", args)])
    score = ToolArgumentCorrectness(threshold=0.8).evaluate(s)
    assert score.value == 1.0
    assert score.passed
    assert score.reason == "all 2 arguments correct"


def test_seed002_junit_example_threshold_09_with_one_of_two_arguments_wrong() -> None:
    expected = [C("GetOrder", orderId="12345", customerId="C42")]
    right = ToolArgumentCorrectness(threshold=0.9).evaluate(
        sample([C("GetOrder", orderId="12345", customerId="C42")], expected)
    )
    assert right.value == 1.0 and right.passed
    half = ToolArgumentCorrectness(threshold=0.9).evaluate(
        sample([C("GetOrder", orderId="12345", customerId="C7")], expected)
    )
    assert half.value == 0.5
    assert not half.passed
    assert half.reason == "GetOrder called with customerId='C7', expected 'C42'."


def test_seed002_default_threshold_is_08_and_strict_is_off() -> None:
    metric = ToolArgumentCorrectness()
    assert metric.threshold == 0.8
    assert metric.strict is False
    # 4 of 5 correct = 0.8 passes at the inclusive default threshold.
    expected = [C("f", a=1, b=2, c=3, d=4, e=5)]
    score = metric.evaluate(sample([C("f", a=1, b=2, c=3, d=4, e=0, extra=1)], expected))
    assert score.value == 0.8
    assert score.passed


def test_seed002_strict_mode_fails_on_extra_arguments() -> None:
    expected = [C("GetOrder", orderId="12345")]
    actual = [C("GetOrder", orderId="12345", verbose=True)]
    lenient = ToolArgumentCorrectness().evaluate(sample(actual, expected))
    assert lenient.value == 1.0 and lenient.passed
    strict = ToolArgumentCorrectness(strict=True, threshold=0.0).evaluate(sample(actual, expected))
    assert strict.value == 0.5  # the extra argument joins the denominator
    assert strict.passed is False  # and fails the score whatever the threshold
    assert strict.reason == "GetOrder called with unexpected argument verbose=True."
    assert strict.codes == ("extra_arg",)


def test_seed002_repeated_calls_pair_optimally_not_first_same_name_as_seed_code_does() -> None:
    # Seed 002's real code compares every expectation with the *first* GetOrder call, so this
    # scores 0.5 there; docs/metrics.md pairs one-to-one for the most correct arguments: 1.0.
    expected = [C("GetOrder", orderId="1"), C("GetOrder", orderId="2")]
    actual = [C("GetOrder", orderId="2"), C("GetOrder", orderId="1")]
    score = ToolArgumentCorrectness().evaluate(sample(actual, expected))
    assert score.value == 1.0
    assert sorted((p.expected_index, p.actual_index) for p in score.details.pairs) == [
        (0, 1),
        (1, 0),
    ]


def test_seed002_tool_selection_accuracy_is_names_only() -> None:
    s = sample([C("GetOrder", orderId="99999")], [C("GetOrder", orderId="12345")])
    assert ToolSelectionAccuracy().evaluate(s).value == 1.0
    assert ToolSelectionAccuracy().threshold == 0.8


# --------------------------------------------------------------------------------------------
# seed 003: Ragas-style order-aware accuracy (our ToolCallSequenceAccuracy)


def test_seed003_strict_order_requires_the_exact_sequence() -> None:
    expected = [C("search", q="flights"), C("book", id=7)]
    swapped = [C("book", id=7), C("search", q="flights")]
    strict = ToolCallSequenceAccuracy(order="strict").evaluate(sample(swapped, expected))
    assert strict.value == 0.0
    assert strict.codes == ("wrong_order",)
    inorder = ToolCallSequenceAccuracy(order="strict").evaluate(sample(expected, expected))
    assert inorder.value == 1.0


def test_seed003_flexible_order_allows_any_permutation() -> None:
    expected = [C("search", q="flights"), C("book", id=7)]
    swapped = [C("book", id=7), C("search", q="flights")]
    score = ToolCallSequenceAccuracy(order="flexible").evaluate(sample(swapped, expected))
    assert score.value == 1.0


def test_seed003_wrong_tool_sequence_yields_zero_whatever_the_arguments() -> None:
    score = ToolCallSequenceAccuracy().evaluate(
        sample([C("search", q="x"), C("cancel", id=7)], [C("search", q="x"), C("book", id=7)])
    )
    assert score.value == 0.0
    assert score.codes == ("wrong_tool",)
    assert score.details.extra["gate"] == 0.0


def test_seed003_partial_argument_match_scores_proportionally() -> None:
    expected = [C("search", q="flights", date="2024-05-01"), C("book", id=7)]
    actual = [C("search", q="flights", date="2024-05-02"), C("book", id=7)]
    score = ToolCallSequenceAccuracy().evaluate(sample(actual, expected))
    assert score.value == (0.5 + 1.0) / 2
    assert "search called with date='2024-05-02', expected '2024-05-01'." in score.reason


def test_seed003_argument_accuracy_averages_over_reference_args_extras_ignored() -> None:
    expected = [C("f", a=1, b=2, c=3)]
    actual = [C("f", a=1, b=2, c=4, d=5)]
    score = ToolCallSequenceAccuracy().evaluate(sample(actual, expected))
    assert score.value == 2 / 3
    assert score.details.pairs[0].score == 2 / 3


def test_seed003_edge_case_both_empty_is_one() -> None:
    assert ToolCallSequenceAccuracy().evaluate(sample([], [])).value == 1.0


def test_seed003_edge_case_no_predicted_calls_but_reference_is_zero() -> None:
    score = ToolCallSequenceAccuracy().evaluate(sample([], [C("f", a=1)]))
    assert score.value == 0.0
    assert score.reason == "expected 1 tool call(s) but none were made"


def test_seed003_length_mismatch_compares_prefix_with_coverage_penalty_as_its_prose_says() -> None:
    # Seed 003's prose: overlapping prefix, coverage min(P, R) / R. (Ragas's code scores 0.0:
    # see test_ragas_rule10_* in test_metrics_sequence.py.)
    expected = [C("search", q="x"), C("book", id=7)]
    shorter = ToolCallSequenceAccuracy().evaluate(sample([C("search", q="x")], expected))
    assert shorter.value == 0.5
    assert shorter.details.extra["coverage"] == 0.5
    assert shorter.details.unmatched_expected == (1,)
    longer = ToolCallSequenceAccuracy().evaluate(
        sample([*expected, C("notify", to="me")], expected)
    )
    assert longer.value == 1.0


def test_seed003_score_is_gate_times_mean_argument_accuracy_times_coverage() -> None:
    expected = [C("a", x=1, y=2), C("b", z=3), C("c")]
    actual = [C("a", x=1, y=0), C("b", z=3)]
    score = ToolCallSequenceAccuracy().evaluate(sample(actual, expected))
    mean, coverage = (0.5 + 1.0) / 2, 2 / 3
    assert score.value == pytest.approx(1 * mean * coverage)
    assert score.details.extra["mean_argument_score"] == mean


def test_seed003_flexible_pairing_is_optimal_not_a_string_sort_v61() -> None:
    # Seed 003's real code sorts both lists and zips: ref [f(x=1), f(x=3)] vs pred
    # [f(x=3), f(x=4)] pairs 1-3 and 3-4 for 0.0. The best pairing (3-3) is worth 0.5.
    s = sample([C("f", x=3), C("f", x=4)], [C("f", x=1), C("f", x=3)])
    assert ToolCallSequenceAccuracy(order="flexible").evaluate(s).value == 0.5
    assert ToolCallSequenceAccuracy(order="flexible", compat="ragas").evaluate(s).value == 0.0


def test_seed003_default_comparator_is_equivalence_not_string_match_as_in_ragas() -> None:
    # Seed 003 defaults to exact *string* match; our default is value equivalence (docs/metrics.md).
    s = sample([C("f", n=1.0)], [C("f", n=1)])
    assert ToolCallSequenceAccuracy().evaluate(s).value == 1.0
    assert ToolCallSequenceAccuracy(comparator="string").evaluate(s).value == 0.0
