"""The byte-identity shortcut (harness.matching.pattern_bytes) never changes a value.

Equal bytes must prove ``args_equal``; the count that uses them (match_count) must equal the
matching engine's, including on values where bytes and equivalence disagree (3 vs 3.0, True vs
1, tuples, NaN, -0.0, subclasses, non-str keys, dict order). Semantics: docs/metrics.md, Values
and Matching.
"""

from __future__ import annotations

import copy
import enum
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.expectation import Expectation
from harness.matching import call_bytes, max_matching, pattern_bytes
from harness.metrics import ToolCallAccuracy, ToolCallF1, ToolCallSequenceAccuracy
from harness.metrics._common import match_count
from harness.sample import Sample
from harness.values import args_equal, args_match
from tracing.records import ToolCall

NAN = float("nan")


class _Str(str):
    """A str subclass: marshal refuses it, equivalence accepts it."""


class _Level(enum.IntEnum):
    ONE = 1


_scalars = st.sampled_from(
    [1, 1.0, 3, 3.0, -0.0, 0.0, True, False, None, "a", "A", NAN, Decimal("3"), _Level.ONE]
)
_values = st.recursive(
    _scalars | st.just(_Str("a")),
    lambda inner: (
        st.lists(inner, max_size=2)
        | st.lists(inner, max_size=2).map(tuple)
        | st.dictionaries(st.sampled_from(["p", "q", 1]), inner, max_size=2)
    ),
    max_leaves=4,
)
_args = st.dictionaries(st.sampled_from("xyz"), _values, max_size=3)
_names = st.sampled_from(["f", "g"])
_calls = st.lists(st.builds(ToolCall.of, _names, _args), max_size=6)


@st.composite
def _samples(draw: st.DrawFn) -> Sample:
    actual = draw(_calls)
    # Copies of the calls (identical bytes unless a subclass or NaN is inside), reordered
    # copies (same values, other dict order) and fresh expectations.
    copied = draw(st.lists(st.sampled_from(actual), max_size=5)) if actual else []
    expected = [Expectation(call.name, copy.deepcopy(dict(call.args))) for call in copied]
    expected += (
        [
            Expectation(call.name, dict(reversed(list(call.args.items()))))
            for call in draw(st.lists(st.sampled_from(actual), max_size=2))
        ]
        if actual
        else []
    )
    expected += draw(st.lists(st.builds(Expectation, _names, _args), max_size=3))
    order = draw(st.permutations(range(len(expected))))
    return Sample(tool_calls=actual, expected_tool_calls=[expected[i] for i in order])


def _engine_size(sample: Sample, relation: Any) -> int:
    def edge(exp: Expectation, call: ToolCall) -> bool:
        return exp.name == call.name and relation(exp.args, call.args)

    expected, actual = sample.expected_tool_calls, sample.require_recorded()
    return max_matching(expected, actual, edge, key=lambda item: item.name).size


@settings(max_examples=300, deadline=None)
@given(_args, _args)
def test_equal_bytes_prove_args_equal(pattern: dict[str, Any], args: dict[str, Any]) -> None:
    expected = pattern_bytes(Expectation("f", pattern).args)
    if expected is not None and expected == call_bytes(args):
        assert args_equal(Expectation("f", pattern).args, args)
        assert args_match(Expectation("f", pattern).args, args)


@settings(max_examples=300, deadline=None)
@given(_samples())
def test_counts_equal_the_engine(sample: Sample) -> None:
    expected, actual = sample.expected_tool_calls, sample.require_recorded()
    assert match_count(expected, actual, args_match) == _engine_size(sample, args_match)
    assert match_count(expected, actual, args_equal, keyed=True) == _engine_size(sample, args_equal)


def test_bytes_refuse_what_they_cannot_prove() -> None:
    assert pattern_bytes({"x": [NAN]}) is None  # NaN's bytes equal themselves
    assert pattern_bytes({"x": (1,)}) is None  # tuples and lists are alike to equivalence
    assert pattern_bytes({"x": {1: "a"}}) is None  # non-str keys
    assert pattern_bytes(Expectation("f", {"x": {"$any": True}}).args) is None
    assert call_bytes({"x": _Str("a")}) is None
    assert pattern_bytes({"x": 3}) != call_bytes({"x": 3.0})  # equal values, other bytes
    assert pattern_bytes({"x": [1, {"y": None}]}) == call_bytes({"x": [1, {"y": None}]})


def test_scoped_expectations_and_invalid_calls_skip_the_shortcut() -> None:
    scoped = Expectation("f", {"x": 1}, agent="research")
    assert scoped.exact is None
    call = ToolCall("f", {"x": 1}, agent="supervisor/writer")
    sample = Sample(tool_calls=[call], expected_tool_calls=[scoped])
    assert ToolCallAccuracy().evaluate(sample).value == 0.0
    invalid = ToolCall("f", {"x": 1}, status="invalid")
    sample = Sample(tool_calls=[invalid], expected_tool_calls=[Expectation("f", {"x": 1})])
    assert ToolCallAccuracy().evaluate(sample).value == 0.0
    assert ToolCallF1().evaluate(sample).value == 0.0


def test_identical_calls_keep_reason_and_details() -> None:
    calls = [ToolCall.of("f", {"x": [1, 2]}), ToolCall.of("g", {"y": "a"})]
    sample = Sample(tool_calls=calls, expected_tool_calls=list(reversed(calls)))
    for metric in (ToolCallAccuracy(), ToolCallF1(), ToolCallSequenceAccuracy(order="flexible")):
        score = metric.evaluate(sample)
        assert score.value == 1.0
        assert len(score.details.pairs) == 2
        assert score.reason
