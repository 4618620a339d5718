"""ToolSelectionAccuracy (docs/metrics.md): tool names only, unordered F1 or ordered LCS."""

from __future__ import annotations

from harness import Sample, ToolCall
from harness.metrics import ToolSelectionAccuracy

C = ToolCall.of


def names(*tools: str) -> list[ToolCall]:
    return [C(tool) for tool in tools]


def evaluate(actual: list[ToolCall], expected: list[ToolCall], **kw: bool) -> tuple[float, str]:
    score = ToolSelectionAccuracy(**kw).evaluate(
        Sample(tool_calls=actual, expected_tool_calls=expected)
    )
    return score.value, score.reason


def test_unordered_f1_over_name_multisets() -> None:
    # tp = 2 (a, b), |actual| = 3, |expected| = 3 -> F1 = 2·2 / 6.
    value, reason = evaluate(names("a", "b", "d"), names("a", "b", "c"))
    assert value == 4 / 6
    assert reason == "tool-name F1 0.67 (precision 0.67, recall 0.67); missing: c; unexpected: d"


def test_unordered_ignores_arguments_and_order() -> None:
    value, _ = evaluate([C("b", y=0), C("a", x=0)], [C("a", x=1), C("b", y=1)])
    assert value == 1.0


def test_unordered_duplicates_count() -> None:
    value, reason = evaluate(names("a", "a"), names("a"))
    assert value == 2 * 1 / 3
    assert reason.endswith("unexpected: a")


def test_ordered_is_lcs_over_the_longer_list() -> None:
    value, reason = evaluate(names("c", "a", "b"), names("a", "b", "c"), ordered=True)
    assert value == 2 / 3
    assert reason == "2 of 3 tool names in order; out of order: c"


def test_ordered_penalises_extra_calls_through_the_longer_length() -> None:
    value, reason = evaluate(names("a", "x", "b", "y"), names("a", "b"), ordered=True)
    assert value == 2 / 4
    assert reason == "2 of 4 tool names in order; unexpected: x, y"


def test_empty_rules_match_argument_correctness() -> None:
    assert evaluate([], []) == (1.0, "no tool calls expected and none were made")
    assert evaluate(names("a"), [])[0] == 0.0
    assert evaluate([], names("a")) == (0.0, "expected 1 tool call(s) but none were made")
    assert evaluate([], [], ordered=True)[0] == 1.0


def test_issue_codes() -> None:
    score = ToolSelectionAccuracy(ordered=True).evaluate(
        Sample(tool_calls=names("b", "a", "z"), expected_tool_calls=names("a", "b", "c"))
    )
    assert set(score.codes) == {"wrong_order", "missing_call", "unexpected_call"}
