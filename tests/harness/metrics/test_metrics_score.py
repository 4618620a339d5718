"""Score: immutable, explained lazily, equal and picklable once explained."""

from __future__ import annotations

import pickle

import pytest

from harness import Sample, ToolCall
from harness.metrics import Score, ToolCallAccuracy
from harness.metrics.base import Details, Issue, lazy_score, make_score

C = ToolCall.of


def test_explanation_is_built_once_on_first_access() -> None:
    calls: list[int] = []

    def explain() -> tuple[str, Details]:
        calls.append(1)
        return "why", Details(issues=(Issue("missing_call", "gone", 0),))

    score = lazy_score("m", 0.5, 0.8, explain)
    assert (score.value, score.passed) == (0.5, False)
    assert calls == []
    assert score.reason == "why"
    assert score.codes == ("missing_call",)
    assert score.details.issues[0].message == "gone"
    assert calls == [1]


def test_score_is_immutable() -> None:
    score = make_score("m", 1.0, 1.0, "ok")
    with pytest.raises(AttributeError, match="immutable"):
        score.value = 0.0


def test_lazy_and_eager_scores_compare_equal() -> None:
    details = Details(unmatched_expected=(1,))
    eager = make_score("m", 0.5, 0.5, "r", details)
    lazy = lazy_score("m", 0.5, 0.5, lambda: ("r", details))
    assert eager == lazy
    assert eager != make_score("m", 0.5, 0.5, "other", details)


def test_pickling_resolves_the_explanation() -> None:
    sample = Sample(tool_calls=[C("a", x=2)], expected_tool_calls=[C("a", x=1), C("b")])
    score = ToolCallAccuracy().evaluate(sample)
    copy = pickle.loads(pickle.dumps(score))
    assert isinstance(copy, Score)
    assert copy == score
    assert copy.reason == "0/2 expected calls matched; missing: a(x=1), b()"


def test_explanation_does_not_follow_later_mutation_of_the_sample() -> None:
    sample = Sample(tool_calls=[C("a")], expected_tool_calls=[C("a"), C("b")])
    score = ToolCallAccuracy().evaluate(sample)
    assert sample.tool_calls is not None
    sample.tool_calls.clear()
    sample.expected_tool_calls.clear()
    assert score.reason == "1/2 expected calls matched; missing: b()"


def test_make_score_force_fail_and_inclusive_threshold() -> None:
    assert make_score("m", 0.8, 0.8, "").passed
    assert not make_score("m", 0.8, 0.8, "", force_fail=True).passed
    assert make_score("m", 0.5, 0.5, "").details == Details()
