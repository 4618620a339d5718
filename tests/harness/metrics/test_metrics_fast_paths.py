"""The metrics' counting fast paths give exactly what the matching engine gives.

Semantics: docs/metrics.md, Matching.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.expectation import Expectation
from harness.matching import max_matching
from harness.metrics import ToolCallAccuracy, ToolCallF1, ToolCallSequenceAccuracy
from harness.metrics._common import match_count
from harness.sample import Sample
from harness.values import args_equal, args_match
from tracing.records import ToolCall

NAN = float("nan")

# Few names, keys and values, so that calls collide, repeat and nearly match.
_scalars = st.sampled_from([1, 1.0, 3, 3.0, True, False, None, "a", "A", NAN, Decimal("3")])
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("pq"), inner),
    max_leaves=4,
)
_args = st.dictionaries(st.sampled_from("xyz"), _values, max_size=2)
_names = st.sampled_from(["f", "g"])
_calls = st.lists(st.builds(ToolCall.of, _names, _args), max_size=7)
_matchers = st.sampled_from([{"$any": True}, {"$absent": True}, {"$optional": 3}])
_patterns = st.dictionaries(st.sampled_from("xyz"), _values | _matchers, max_size=2)


@st.composite
def _samples(draw: st.DrawFn, *, matchers: bool) -> Sample:
    actual = draw(_calls)
    # Expectations copied from the calls (perfect or near-perfect runs) plus fresh ones.
    copied = draw(st.lists(st.sampled_from(actual), max_size=5)) if actual else []
    fresh = draw(st.lists(st.builds(Expectation, _names, _patterns if matchers else _args)))
    expected = [Expectation(call.name, call.args) for call in copied] + fresh
    order = draw(st.permutations(range(len(expected))))
    return Sample(tool_calls=actual, expected_tool_calls=[expected[i] for i in order])


def _exact_size(sample: Sample, relation: Any) -> int:
    def edge(exp: Expectation, call: ToolCall) -> bool:
        return exp.name == call.name and relation(exp.args, call.args)

    expected, actual = sample.expected_tool_calls, sample.require_recorded()
    return max_matching(expected, actual, edge, key=lambda item: item.name).size


@settings(max_examples=200, deadline=None)
@given(_samples(matchers=False))
def test_f1_count_equals_matching_on_literal_samples(sample: Sample) -> None:
    expected, actual = sample.expected_tool_calls, sample.require_recorded()
    size = _exact_size(sample, args_equal)
    assert match_count(expected, actual, args_equal, keyed=True) == size
    score = ToolCallF1().evaluate(sample)
    if expected or actual:
        assert score.value == 2 * size / (len(expected) + len(actual))
        assert len(score.details.pairs) == size


@settings(max_examples=200, deadline=None)
@given(_samples(matchers=True))
def test_counts_equal_matching_with_matchers(sample: Sample) -> None:
    expected, actual = sample.expected_tool_calls, sample.require_recorded()
    assert match_count(expected, actual, args_equal, keyed=True) == _exact_size(sample, args_equal)
    assert match_count(expected, actual, args_match) == _exact_size(sample, args_match)
    if expected:
        score = ToolCallAccuracy().evaluate(sample)
        assert score.value == _exact_size(sample, args_match) / len(expected)
        assert len(score.details.pairs) == _exact_size(sample, args_match)


def test_keyed_count_settles_a_group_greedy_cannot_certify() -> None:
    # Positional greedy pairs x↔x and y↔y; the second x stays unpaired although it accepts the
    # taken first call, and the free y call accepts the paired y: literal keys decide (2).
    x, y = {"v": 1}, {"v": 2}
    sample = Sample(
        tool_calls=[ToolCall.of("f", x), ToolCall.of("f", y), ToolCall.of("f", y)],
        expected_tool_calls=[ToolCall.of("f", x), ToolCall.of("f", x), ToolCall.of("f", y)],
    )
    assert match_count(sample.expected_tool_calls, sample.tool_calls, args_equal, keyed=True) == 2
    assert ToolCallF1().evaluate(sample).value == 2 * 2 / 6


def test_greedy_trap_is_resolved_exactly() -> None:
    # First-fit pairs the any-args expectation with the only call the specific one accepts.
    sample = Sample(
        tool_calls=[ToolCall.of("f", {"a": 1}), ToolCall.of("f", {"a": 2})],
        expected_tool_calls=[Expectation("f", {"a": {"$any": True}}), Expectation("f", {"a": 1})],
    )
    assert ToolCallAccuracy().evaluate(sample).value == 1.0


def test_nan_never_pairs_even_when_shared() -> None:
    args = {"x": [NAN]}
    sample = Sample(
        tool_calls=[ToolCall.of("f", args)], expected_tool_calls=[ToolCall.of("f", args)]
    )
    score = ToolCallF1().evaluate(sample)
    assert score.value == 0.0
    assert score.details.unmatched_expected == (0,)


@settings(max_examples=100, deadline=None)
@given(_samples(matchers=True))
def test_flexible_sequence_details_keep_their_pairs(sample: Sample) -> None:
    score = ToolCallSequenceAccuracy(order="flexible").evaluate(sample)
    pairs = score.details.pairs
    assert len({pair.actual_index for pair in pairs}) == len(pairs)
    expected = sample.expected_tool_calls
    if expected and sample.tool_calls and score.details.extra.get("gate") == 1.0:
        total = math.fsum(pair.score or 0.0 for pair in pairs)
        assert score.value == total / len(expected)


def test_large_samples_take_the_exact_route_with_the_same_numbers() -> None:
    # 80 × 80 same-name calls is past the greedy limit: keys (F1) and the engine (accuracy).
    expected = [ToolCall.of("f", {"q": i % 30, "tags": [i % 3]}) for i in range(80)]
    actual = [ToolCall.of("f", {"q": float(i % 40), "tags": [i % 3]}) for i in range(79, -1, -1)]
    sample = Sample(tool_calls=actual, expected_tool_calls=expected)
    f1_size = _exact_size(sample, args_equal)
    assert ToolCallF1().evaluate(sample).value == 2 * f1_size / 160
    assert ToolCallAccuracy().evaluate(sample).value == _exact_size(sample, args_match) / 80


def test_shifted_runs_pair_after_a_deleted_or_inserted_call() -> None:
    # A call missing at position 1 shifts every later one left; an extra one shifts them right.
    planned = [ToolCall.of(name, {"n": i}) for i, name in enumerate("fgfgf")]
    expected = [Expectation.coerce(call) for call in planned]
    deleted = planned[:1] + planned[2:]
    inserted = [*planned[:2], ToolCall.of("g", {"n": 99}), *planned[2:]]
    assert match_count(expected, deleted, args_match) == 4
    assert match_count(expected, inserted, args_match) == 5
    assert match_count(expected, inserted, args_equal, keyed=True) == 5


def test_leftover_of_another_tool_needs_no_search() -> None:
    # The unpaired f expectation cannot reach the free g call: every edge joins equal names.
    sample = Sample(
        tool_calls=[ToolCall.of("f", {"x": 1, "y": 2}), ToolCall.of("g", {"x": 2})],
        expected_tool_calls=[Expectation("f", {}), Expectation("f", {"x": 1})],
    )
    expected, actual = sample.expected_tool_calls, sample.require_recorded()
    assert match_count(expected, actual, args_match) == _exact_size(sample, args_match) == 1


def test_augmenting_path_through_a_greedy_pair_is_found() -> None:
    # First-fit gives the first call to the empty pattern; the specific expectation needs it,
    # and the empty pattern accepts the call left free: two pairs, not one.
    sample = Sample(
        tool_calls=[ToolCall.of("f", {"x": 1, "y": 2}), ToolCall.of("f", {"z": 3})],
        expected_tool_calls=[Expectation("f", {}), Expectation("f", {"x": 1})],
    )
    expected, actual = sample.expected_tool_calls, sample.require_recorded()
    assert match_count(expected, actual, args_match) == _exact_size(sample, args_match) == 2
    assert ToolCallAccuracy().evaluate(sample).value == 1.0
