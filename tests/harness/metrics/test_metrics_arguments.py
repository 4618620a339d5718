"""ToolArgumentCorrectness (docs/metrics.md, tool_argument_correctness) beyond the seed examples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from harness import Expectation, Sample, SampleError, ToolCall
from harness.metrics import Score, ToolArgumentCorrectness

C = ToolCall.of


def score_of(
    actual: list[ToolCall] | None, expected: Sequence[ToolCall | Expectation], **kw: Any
) -> Score:
    return ToolArgumentCorrectness(**kw).evaluate(
        Sample(tool_calls=actual, expected_tool_calls=expected)
    )


def test_empty_rules_in_documented_order() -> None:
    both = score_of([], [])
    assert (both.value, both.reason) == (1.0, "no tool calls expected and none were made")
    unexpected = score_of([C("f", x=1)], [])
    assert unexpected.value == 0.0
    assert unexpected.codes == ("unexpected_call",)
    none_made = score_of([], [C("f", x=1), C("g")])
    assert (none_made.value, none_made.reason) == (
        0.0,
        "expected 2 tool call(s) but none were made",
    )
    no_args = score_of([C("f")], [C("f")])
    assert (no_args.value, no_args.reason) == (1.0, "no arguments to compare")


def test_micro_average_over_all_expected_arguments() -> None:
    expected = [C("a", x=1), C("b", p=1, q=2, r=3)]
    actual = [C("a", x=0), C("b", p=1, q=2, r=3)]
    score = score_of(actual, expected)
    assert score.value == 3 / 4  # micro (3 of 4 args), not macro ((0 + 1) / 2)
    assert score.details.extra == {"correct_args": 3, "total_args": 4}


def test_unpaired_expectation_counts_all_its_args_wrong() -> None:
    score = score_of([C("a", x=1)], [C("a", x=1), C("b", y=1, z=2)])
    assert score.value == 1 / 3
    assert score.codes == ("missing_call",)
    assert score.reason == "expected b(y=1, z=2) but no such call was made."


def test_pairing_maximises_correct_arguments_over_all_pairs() -> None:
    # First-come pairing (e0-a0) earns 1 correct argument; the best one-to-one pairing earns 2.
    expected = [C("f", x=1, y=1), C("f", x=1, y=2)]
    actual = [C("f", x=1, y=2), C("f", x=9, y=9)]
    score = score_of(actual, expected)
    assert score.value == 2 / 4
    assert [(p.expected_index, p.actual_index) for p in score.details.pairs] == [(0, 1), (1, 0)]


def test_ties_on_correct_arguments_prefer_fewest_extras() -> None:
    expected = [C("f", x=1)]
    actual = [C("f", x=1, debug=True, trace=1), C("f", x=1)]
    score = score_of(actual, expected, strict=True)
    assert score.value == 1.0
    assert score.passed
    assert [(p.expected_index, p.actual_index) for p in score.details.pairs] == [(0, 1)]


def test_missing_argument_clause() -> None:
    score = score_of(
        [C("GetOrder", customerId="C42")], [C("GetOrder", orderId="12345", customerId="C42")]
    )
    assert score.value == 0.5
    assert score.reason == "GetOrder called without orderId, expected '12345'."
    assert score.codes == ("missing_arg",)


def test_reason_caps_clauses_then_counts_the_rest() -> None:
    expected = [C("f", a=1, b=2, c=3, d=4, e=5)]
    score = score_of([C("f", a=0, b=0, c=0, d=0, e=0)], expected)
    assert score.value == 0.0
    assert score.reason == (
        "f called with a=0, expected 1. f called with b=0, expected 2. "
        "f called with c=0, expected 3. (+2 more)"
    )
    assert len(score.details.issues) == 5


def test_nested_mismatch_points_into_the_argument() -> None:
    score = score_of(
        [C("f", filter={"status": "open", "n": 3})], [C("f", filter={"status": "closed", "n": 3})]
    )
    assert score.value == 0.0
    (diff,) = score.details.pairs[0].diffs
    assert diff.path == "/filter/status"
    assert score.reason == "f called with filter/status='open', expected 'closed'."


def test_matcher_patterns_are_described_in_dollar_form() -> None:
    expected = [Expectation.of("search", q={"$regex": "^Ber"})]
    score = score_of([C("search", q="Paris")], expected)
    assert score.value == 0.0
    assert score.reason.startswith("search called with q='Paris', expected $regex")


def test_strict_extras_join_the_denominator_for_each_paired_call() -> None:
    expected = [C("a", x=1), C("b", y=2)]
    actual = [C("a", x=1, extra1=1, extra2=2), C("b", y=2)]
    score = score_of(actual, expected, strict=True, threshold=0.0)
    assert score.value == 2 / 4
    assert not score.passed
    assert score.codes == ("extra_arg",)


def test_strict_without_extras_passes_normally() -> None:
    score = score_of([C("a", x=1)], [C("a", x=1)], strict=True)
    assert score.value == 1.0 and score.passed


def test_strict_must_be_a_bool() -> None:
    with pytest.raises(ValueError, match="strict must be true or false"):
        ToolArgumentCorrectness(strict="yes")  # type: ignore[arg-type]


def test_nothing_recorded_raises() -> None:
    with pytest.raises(SampleError):
        score_of(None, [C("a", x=1)])
