"""``score_trace``'s shortcuts decide as the one scoring path does: ``score_sample`` then
``verdict``, with a passing run kept lean (its scores, not its calls or details)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.run.results import CheckResult, RunResult, ScenarioResult
from harness.sample import Sample
from harness.scenarios import Scenario, iter_scenarios
from harness.scenarios.discovery import load_paths
from harness.scoring import (
    check_forbid,
    judge,
    score_sample,
    scored_run,
    verdict,
)
from harness.traces.evaluate import RecordedTrace, ScenarioIndex, _lean_score, score_trace
from tracing.otel.span_view import SpanView
from tracing.records import ToolCall

SUITE = """suite: shop
agent: {agent}:build
model: {{provider: demo}}
scenarios:
  - name: refund
    input: refund order 7
    expect:
      tool_calls:
        - {{name: get_order, args: {{order_id: 7}}}}
        - {{name: refund, args: {{order_id: 7}}}}
      order: strict
  - name: lookup
    input: where is order 9
    expect:
      tool_calls: [{{name: get_order, args: {{order_id: 9}}}}]
      forbid: [refund]
  - name: known-bug
    input: refund order 7
    xfail: the refund tool is not wired yet
    expect:
      tool_calls: [{{name: refund, args: {{order_id: 7}}}}]
"""

TRACE_ID = "ab" * 16


@pytest.fixture
def scenarios(tmp_path: Path) -> dict[str, Scenario]:
    agent = tmp_path / "agent.py"
    agent.write_text("def build(model):\n    return None\n", encoding="utf-8")
    suite = tmp_path / "shop.yaml"
    suite.write_text(SUITE.format(agent=agent), encoding="utf-8")
    return {s.name: s for s in iter_scenarios(load_paths([str(suite)]))}


def _trace(*calls: ToolCall, root: SpanView | None = None) -> RecordedTrace:
    return RecordedTrace(TRACE_ID, list(calls), root, None, "t.json", 4)


def _by_steps(scenario: Scenario, trace: RecordedTrace) -> ScenarioResult:
    """What score_trace(lean=False) must give: the live run's scoring, step by step."""
    sample = Sample(
        input=scenario.input_text,
        tool_calls=trace.calls,
        expected_tool_calls=list(scenario.expected),
        output=trace.output,
        metadata={"scenario": scenario.id, "trace": trace.trace_id},
        trace_id=trace.trace_id,
    )
    run = score_sample(scenario, sample, trace_id=trace.trace_id)
    return verdict(scenario, (run,), 1, 0.0, trace_id=trace.trace_id, source=trace.source)


def _fields(result: ScenarioResult) -> tuple[Any, ...]:
    runs = tuple(
        (
            run.index,
            run.passed,
            tuple((s.name, s.value, s.threshold, s.passed, s.reason) for s in run.scores),
            run.checks,
            run.error,
            run.trace_id,
        )
        for run in result.runs
    )
    return (result.id, result.status, result.reasons, result.xfail, result.source, runs)


ORDER = ToolCall("get_order", {"order_id": 7})
REFUND = ToolCall("refund", {"order_id": 7})
WRONG_REFUND = ToolCall("refund", {"order_id": 8})


@pytest.mark.parametrize(
    ("name", "calls", "status"),
    [
        ("refund", (ORDER, REFUND), "passed"),
        ("refund", (ORDER, WRONG_REFUND), "failed"),
        ("refund", (REFUND, ORDER), "failed"),
        ("lookup", (ToolCall("get_order", {"order_id": 9}),), "passed"),
        ("lookup", (ToolCall("get_order", {"order_id": 9}), REFUND), "failed"),
        ("known-bug", (REFUND,), "xpassed"),
        ("known-bug", (ORDER,), "xfailed"),
    ],
)
def test_score_trace_decides_as_score_sample_then_verdict(
    scenarios: dict[str, Scenario], name: str, calls: tuple[ToolCall, ...], status: str
) -> None:
    scenario, trace = scenarios[name], _trace(*calls)
    stepwise = _by_steps(scenario, trace)
    full = score_trace(scenario, trace, lean=False)
    lean = score_trace(scenario, trace)
    assert stepwise.status == status
    assert _fields(full) == _fields(stepwise) == _fields(lean)
    assert full.runs[0].sample == stepwise.runs[0].sample
    if status == "passed":
        # lean: neither the calls nor the scores' details are kept
        assert lean.runs[0].sample is None
        assert all(not score.details.pairs for score in lean.runs[0].scores)
    else:
        # a result that did not pass (an xpassed one too) keeps everything for its report
        assert lean.runs[0].sample == stepwise.runs[0].sample
        assert [s.details for s in lean.runs[0].scores] == [
            s.details for s in stepwise.runs[0].scores
        ]


def test_a_scoring_error_is_the_runs_error(scenarios: dict[str, Scenario]) -> None:
    scenario = scenarios["refund"]
    sample = Sample(expected_tool_calls=list(scenario.expected))  # tool_calls None: unrecorded
    judged = judge(scenario, sample)
    run = scored_run(scenario, sample, judged, index=2, trace_id=TRACE_ID)
    assert not run.passed and run.error is not None and run.error.phase == "scoring"
    assert run == score_sample(scenario, sample, index=2, trace_id=TRACE_ID)
    assert "nothing was recorded" in run.error.message


def test_lean_scores_are_shared_only_where_that_cannot_show(
    scenarios: dict[str, Scenario],
) -> None:
    one = _lean_score("m", 1.0, 0.8, True, "ok")
    assert _lean_score("m", 1.0, 0.8, True, "ok") is one
    as_int = _lean_score("m", 1, 0.8, True, "ok")  # equal keys, but 1 prints apart from 1.0
    assert as_int is not one and type(as_int.value) is int
    zero = _lean_score("m", -0.0, 0.0, True, "ok")  # -0.0 == 0.0, yet prints "-0.0"
    assert str(zero.value) == "-0.0"
    assert str(_lean_score("m", 0.0, 0.0, True, "ok").value) == "0.0"
    # traces that pass the same way share their lean scores
    first = score_trace(scenarios["refund"], _trace(ORDER, REFUND))
    again = score_trace(scenarios["refund"], _trace(ORDER, REFUND))
    shared = zip(first.runs[0].scores, again.runs[0].scores, strict=True)
    assert [s is t for s, t in shared] == [True, True]


def test_a_passing_forbid_check_names_the_forbidden_tools() -> None:
    calls = [ToolCall("get_order", {}), ToolCall("get_time", {})]
    plain = check_forbid(("refund", "delete"), calls)
    assert plain == CheckResult("forbid", True, "no call of refund, delete")
    assert check_forbid(["refund", "delete"], calls) == plain
    scoped = check_forbid(("refund",), calls, agent="billing")
    assert scoped == CheckResult("forbid", True, "billing: no call of refund")
    failing = check_forbid(("get_time",), calls)
    assert not failing.passed and failing.calls == (1,)


def test_a_single_runs_reasons_are_its_distinct_lines_in_order(
    scenarios: dict[str, Scenario],
) -> None:
    same = CheckResult("forbid", False, "forbidden tool called: #1 refund()", "unexpected_call")
    other = CheckResult("no_errors", False, "tool error: #1 refund() failed: boom", "tool_error")
    run = RunResult(0, False, None, (), (same, other, same))
    result = verdict(scenarios["refund"], (run,), 1, 0.0)
    assert result.reasons == (same.reason, other.reason)
    # two runs (repeat: 2) keep the tagged wording
    first = RunResult(0, False, None, (), (same, other))
    again = RunResult(1, False, None, (), (same,))
    both = verdict(scenarios["refund"], (first, again), 2, 0.0)
    assert both.reasons[:2] == (f"[runs 1, 2] {same.reason}", f"[run 1] {other.reason}")


def _root(**attributes: Any) -> SpanView:
    return SpanView(TRACE_ID, "01" * 8, "harness.run", attributes)


@pytest.mark.parametrize(
    ("attributes", "found"),
    [
        ({"harness.scenario": "refund"}, "refund"),
        ({"harness.scenario": "refund", "harness.suite": "shop"}, "refund"),
        ({"harness.scenario": "refund", "harness.suite": ""}, "refund"),  # empty: no suite
        ({"harness.scenario": "refund", "harness.suite": 3}, "refund"),  # not a string: none
        ({"harness.scenario": "refund", "harness.suite": "other"}, "no scenario other::refund"),
        ({"harness.scenario": ""}, "has no 'harness.scenario' attribute"),
        ({"harness.scenario": 7}, "has no 'harness.scenario' attribute"),
        (None, "has no 'harness.scenario' attribute"),
    ],
)
def test_scenario_index_reads_the_root_span_as_the_trace_does(
    scenarios: dict[str, Scenario], attributes: dict[str, Any] | None, found: str
) -> None:
    trace = _trace(ORDER, root=None if attributes is None else _root(**attributes))
    matched = ScenarioIndex(scenarios.values()).match(trace)
    if isinstance(matched, str):
        assert found in matched
    else:
        assert matched.name == found
        assert matched is scenarios[found]
    # the same answer the trace's own properties give
    if trace.scenario is None:
        assert isinstance(matched, str)
