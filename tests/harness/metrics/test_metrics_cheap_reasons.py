"""A passing score's reason is known without building its details, and is the same text.

``harness eval-traces`` reads the reason of every passing score (its lean results keep the
reason, not the details), so the metrics give that reason up front (docs/architecture.md,
"Metric"); the details are still built on first access.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness import Sample, ToolCall
from harness.metrics import ToolCallAccuracy, ToolCallF1, ToolCallSequenceAccuracy
from harness.metrics.base import Score

C = ToolCall.of

_PLAN = [C("search", q="berlin", n=3), C("get_weather", city="Berlin", units=[1, 2.0])]
_METRICS: list[Any] = [
    ToolCallAccuracy(),
    ToolCallAccuracy(threshold=0.5),
    ToolCallF1(),
    ToolCallSequenceAccuracy(order="strict"),
    ToolCallSequenceAccuracy(order="flexible"),
]
_SAMPLES = {
    "to plan": Sample(tool_calls=_PLAN, expected_tool_calls=_PLAN),
    "reordered": Sample(tool_calls=_PLAN[::-1], expected_tool_calls=_PLAN),
    "one extra call": Sample(tool_calls=[*_PLAN, C("search", q="x")], expected_tool_calls=_PLAN),
    "3 vs 3.0": Sample(tool_calls=[C("search", q="berlin", n=3.0)], expected_tool_calls=_PLAN[:1]),
    "wrong argument": Sample(tool_calls=[C("search", q="paris", n=3)], expected_tool_calls=_PLAN),
}


def _explained(score: Score) -> str:
    """The reason the score's explain function builds, whatever was known up front."""
    explain = score._explain
    return explain()[0] if explain is not None else score.reason


@pytest.mark.parametrize("metric", _METRICS, ids=lambda m: f"{m.name}")
@pytest.mark.parametrize("case", list(_SAMPLES))
def test_reason_up_front_is_the_explained_reason(metric: Any, case: str) -> None:
    score = metric.evaluate(_SAMPLES[case])
    assert score.reason == _explained(metric.evaluate(_SAMPLES[case]))
    fresh = metric.evaluate(_SAMPLES[case])
    assert fresh.details == metric.evaluate(_SAMPLES[case]).details


def test_a_full_match_does_not_build_details_for_its_reason() -> None:
    for metric in _METRICS:
        score = metric.evaluate(_SAMPLES["to plan"])
        assert score.value == 1.0
        assert score.reason
        assert score._explain is not None, metric.name  # details still unbuilt
        assert score.details.pairs  # and built on demand
        assert score._explain is None


def test_a_failing_reason_is_still_explained() -> None:
    score = ToolCallAccuracy().evaluate(_SAMPLES["wrong argument"])
    assert score.reason == "0/2 expected calls matched; missing: search(q='berlin', n=3), " + (
        "get_weather(city='Berlin', units=[1, 2.0])"
    )
    assert score._explain is None
