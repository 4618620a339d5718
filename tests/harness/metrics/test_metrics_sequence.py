"""ToolCallSequenceAccuracy (docs/metrics.md), and compat="ragas" against the reference vectors.

Tests named ``test_ragas_ruleN_*`` pin rule N of reference/ragas-tool-call-metrics.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from harness import Expectation, Sample, SampleError, ToolCall
from harness.errors import MetricConfigError
from harness.metrics import ToolCallSequenceAccuracy

C = ToolCall.of


def seq(
    actual: list[ToolCall], expected: Sequence[ToolCall | Expectation], **options: Any
) -> float:
    metric = ToolCallSequenceAccuracy(**options)
    return metric.evaluate(Sample(tool_calls=actual, expected_tool_calls=expected)).value


def ragas(actual: list[ToolCall], expected: list[ToolCall], **options: Any) -> float:
    return seq(actual, expected, compat="ragas", **options)


# -- our semantics ----------------------------------------------------------------------------


def test_defaults() -> None:
    metric = ToolCallSequenceAccuracy()
    assert (metric.order, metric.comparator, metric.compat) == ("strict", "exact", None)
    assert metric.name == "tool_call_sequence_accuracy"


def test_strict_gate_looks_only_at_the_first_k_names() -> None:
    expected = [C("a", x=1), C("b", y=1), C("c")]
    assert seq([C("a", x=1), C("b", y=1)], expected) == 2 / 3
    assert seq([C("a", x=1), C("c"), C("b", y=1)], expected) == 0.0


def test_flexible_gate_needs_a_name_preserving_pairing_of_size_k() -> None:
    expected = [C("a"), C("b")]
    assert seq([C("b"), C("a")], expected, order="flexible") == 1.0
    assert seq([C("b"), C("b")], expected, order="flexible") == 0.0
    # k = 1: one b to pair with the expected b is enough; coverage 1/2.
    assert seq([C("b")], expected, order="flexible") == 0.5


def test_flexible_maximises_summed_argument_score() -> None:
    expected = [C("f", x=1, y=1), C("f", x=2, y=2)]
    actual = [C("f", x=2, y=1), C("f", x=1, y=1)]
    # Best: e0-a1 (1.0) + e1-a0 (0.5) = 1.5; positional pairing gives 0.5 + 0.0.
    assert seq(actual, expected, order="flexible") == 1.5 / 2
    assert seq(actual, expected, order="strict") == 0.5 / 2


def test_argument_score_edge_rules() -> None:
    assert seq([C("f")], [C("f")]) == 1.0  # both arg sets empty
    assert seq([C("f", x=1)], [C("f")]) == 0.0  # reference empty, predicted not
    assert seq([C("f")], [C("f", x=1)]) == 0.0  # missing key scores 0
    assert seq([C("f", x=1, extra=2)], [C("f", x=1)]) == 1.0  # extras ignored


def test_exact_comparator_allows_matchers() -> None:
    expected = [Expectation.of("f", q={"$icase": "berlin"}, n={"$approx": 1.0, "$tol": 0.1})]
    assert seq([C("f", q="BERLIN", n=1.05)], expected) == 1.0
    assert seq([C("f", q="Paris", n=1.05)], expected) == 0.5


def test_string_comparator() -> None:
    assert seq([C("f", x="1")], [C("f", x=1)], comparator="string") == 1.0
    assert seq([C("f", x="1")], [C("f", x=1)]) == 0.0


def test_similarity_comparator_uses_normalised_levenshtein() -> None:
    # "Berlin" vs "berlin": one edit over six characters.
    value = seq([C("f", city="berlin")], [C("f", city="Berlin")], comparator="similarity")
    assert value == pytest.approx(5 / 6)


def test_callable_comparator_gets_expected_then_actual() -> None:
    seen: list[tuple[Any, Any]] = []

    def half_credit(expected: Any, actual: Any) -> float:
        seen.append((expected, actual))
        return 1.0 if expected == actual else 0.5

    assert seq([C("f", x=1, y=3)], [C("f", x=1, y=2)], comparator=half_credit) == 0.75
    assert seen == [(1, 1), (2, 3)]


def test_callable_comparator_out_of_range_is_a_clear_error() -> None:
    with pytest.raises(MetricConfigError, match=r"comparator <lambda> returned 2.0"):
        seq([C("f", x=1)], [C("f", x=1)], comparator=lambda e, a: 2.0)

    def too_big(expected: Any, actual: Any) -> float:
        return 2.0

    with pytest.raises(MetricConfigError, match=r"comparator too_big returned 2.0"):
        seq([C("f", x=1)], [C("f", x=1)], comparator=too_big)


def test_unknown_options_name_the_valid_values() -> None:
    with pytest.raises(MetricConfigError, match=r"order must be one of 'strict', 'flexible'"):
        ToolCallSequenceAccuracy(order="loose")
    with pytest.raises(MetricConfigError, match=r"comparator must be one of 'exact', 'string'"):
        ToolCallSequenceAccuracy(comparator="fuzzy")
    with pytest.raises(MetricConfigError, match=r"compat must be one of None, 'ragas'"):
        ToolCallSequenceAccuracy(compat="deepeval")


def test_pair_details_carry_scores_and_diffs() -> None:
    metric = ToolCallSequenceAccuracy()
    score = metric.evaluate(
        Sample(tool_calls=[C("f", x=1, y=0)], expected_tool_calls=[C("f", x=1, y=2)])
    )
    (pair,) = score.details.pairs
    assert pair.score == 0.5
    assert [(d.path, d.code) for d in pair.diffs] == [("/y", "wrong_args")]


def test_nothing_recorded_raises() -> None:
    with pytest.raises(SampleError):
        ToolCallSequenceAccuracy().evaluate(Sample(tool_calls=None, expected_tool_calls=[C("f")]))


# -- compat="ragas" ---------------------------------------------------------------------------


def test_ragas_rule5_both_empty_is_one() -> None:
    assert ragas([], []) == 1.0
    assert ragas([], [], order="flexible") == 1.0


def test_ragas_rule5_one_side_empty_is_zero() -> None:
    assert ragas([], [C("f", x=1)]) == 0.0
    assert ragas([C("f", x=1)], []) == 0.0


def test_ragas_rule10_longer_prediction_scores_zero_unlike_our_coverage() -> None:
    expected = [C("search", q="x")]
    actual = [C("search", q="x"), C("book", id=1)]
    assert ragas(actual, expected) == 0.0
    assert ragas(actual, expected, order="flexible") == 0.0
    assert seq(actual, expected) == 1.0


def test_ragas_rule10_shorter_prediction_scores_zero_unlike_our_coverage() -> None:
    expected = [C("search", q="x"), C("book", id=1)]
    actual = [C("search", q="x")]
    assert ragas(actual, expected) == 0.0
    assert ragas(actual, expected, order="flexible") == 0.0
    assert seq(actual, expected) == 0.5


def test_ragas_rule9_strict_gate_is_list_equality_of_names() -> None:
    expected = [C("a", x=1), C("b", x=1)]
    assert ragas([C("b", x=1), C("a", x=1)], expected) == 0.0
    assert ragas([C("b", x=1), C("a", x=1)], expected, order="flexible") == 1.0


def test_ragas_rule7_string_sort_puts_10_before_9() -> None:
    # Sorted by str(value): ref ["10", "9"], pred ["10", "11"] -> 10-10 (1) and 9-11 (0).
    # A numeric sort would pair 9-10 and 10-11 for 0.0.
    expected = [C("f", x=9), C("f", x=10)]
    actual = [C("f", x=10), C("f", x=11)]
    assert ragas(actual, expected, order="flexible") == 0.5


def test_ragas_rule7_uppercase_sorts_before_lowercase() -> None:
    # By code point "B" < "a": ref ["B", "a"], pred ["B", "c"] -> B-B (1), a-c (0).
    expected = [C("f", s="a"), C("f", s="B")]
    actual = [C("f", s="B"), C("f", s="c")]
    assert ragas(actual, expected, order="flexible") == 0.5


def test_ragas_rule13_v61_sort_pairing_misses_the_better_pairing() -> None:
    expected = [C("f", x=1), C("f", x=3)]
    actual = [C("f", x=3), C("f", x=4)]
    assert ragas(actual, expected, order="flexible") == 0.0
    assert seq(actual, expected, order="flexible") == 0.5


def test_ragas_rule13_an_early_sorting_extra_argument_shifts_the_pairing() -> None:
    # Extra arg "a" enters the sort key before "x": pred sorts as (a='b', x=2), (a='z', x=1).
    expected = [C("f", x=1), C("f", x=2)]
    actual = [C("f", x=1, a="z"), C("f", x=2, a="b")]
    assert ragas(actual, expected, order="flexible") == 0.0
    assert seq(actual, expected, order="flexible") == 1.0


def test_ragas_rule11_mismatched_names_in_zip_add_nothing_but_gate_still_decides() -> None:
    expected = [C("a", x=1), C("b", x=1)]
    assert ragas([C("a", x=1), C("c", x=1)], expected) == 0.0


def test_ragas_rule12_scores_are_not_rounded() -> None:
    value = ragas([C("f", a=1, b=2, c=4)], [C("f", a=1, b=2, c=3)])
    assert value == 0.6666666666666666


def test_ragas_rule14_argument_score_rules() -> None:
    assert ragas([C("f")], [C("f")]) == 1.0
    assert ragas([C("f", x=1)], [C("f")]) == 0.0
    assert ragas([C("f")], [C("f", x=1)]) == 0.0
    assert ragas([C("f", x=1, extra=0)], [C("f", x=1)]) == 1.0
    assert ragas([C("f", X=1)], [C("f", x=1)]) == 0.0  # keys are case-sensitive


@pytest.mark.parametrize(
    ("reference", "predicted", "expected_score"),
    [
        (1, "1", 1.0),
        (1, 1.0, 0.0),  # "1" != "1.0"
        (100.0, 100, 0.0),  # V50: 1e2 parses as 100.0
        (True, 1, 0.0),
        (0, False, 0.0),
        (True, "True", 1.0),
        (True, "true", 0.0),
        (None, "None", 1.0),
        ({"a": 1}, "{'a': 1}", 1.0),  # a dict matches its Python repr ...
        ({"a": 1}, '{"a": 1}', 0.0),  # ... but not its JSON
        ([1, 2], "[1, 2]", 1.0),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, 0.0),  # str(dict): key order matters
        ([1, 2], [2, 1], 0.0),
        ([], {}, 0.0),
        ([], "", 0.0),
        ("Berlin", "berlin", 0.0),
        ("Berlin", "Berlin ", 0.0),
    ],
)
def test_ragas_rule15_default_comparator_is_str_equality(
    reference: Any, predicted: Any, expected_score: float
) -> None:
    assert ragas([C("f", v=predicted)], [C("f", v=reference)]) == expected_score


@pytest.mark.parametrize(
    ("reference", "predicted", "ours"),
    [
        (1, "1", 0.0),
        (1, 1.0, 1.0),
        (True, "True", 0.0),
        (True, 1, 0.0),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, 1.0),
        (None, "None", 0.0),
    ],
)
def test_default_exact_comparator_differs_from_ragas_str_equality(
    reference: Any, predicted: Any, ours: float
) -> None:
    assert seq([C("f", v=predicted)], [C("f", v=reference)]) == ours


def test_ragas_rule16_v69_like_similarity_mean_of_two_args() -> None:
    # city: 1 - 1/6 (one edit over "Berlin"); unit: exact. (0.8333333333333334 + 1.0) / 2.
    value = ragas(
        [C("weather", city="berlin", unit="C")],
        [C("weather", city="Berlin", unit="C")],
        comparator="similarity",
    )
    assert value == 0.9166666666666667


def test_ragas_rule16_v70_like_dict_reprs_four_edits_over_sixteen_chars() -> None:
    value = ragas(
        [C("f", filter={"b": 2, "a": 1})],
        [C("f", filter={"a": 1, "b": 2})],
        comparator="similarity",
    )
    assert value == 0.75


def test_ragas_rule16_custom_comparator_receives_strings() -> None:
    seen: list[tuple[Any, Any]] = []

    def record(expected: Any, actual: Any) -> float:
        seen.append((expected, actual))
        return 1.0

    assert ragas([C("f", x=1.0)], [C("f", x=1)], comparator=record) == 1.0
    assert seen == [("1", "1.0")]


def test_ragas_compat_rejects_matchers_it_cannot_express() -> None:
    with pytest.raises(SampleError, match=r"compat='ragas' compares literal values only"):
        seq([C("f", x="a")], [Expectation.of("f", x={"$regex": "a"})], compat="ragas")


def test_ragas_rule17_score_stays_within_unit_interval_with_duplicates() -> None:
    # 0.2.x scored this above 1 (#2079): two predictions of the same call against one reference.
    assert ragas([C("f", x=1), C("f", x=1)], [C("f", x=1)]) == 0.0
