"""Per-agent expectations: ``expect: {agents: {name: {tool_calls, forbid}}}`` is scored on the
calls made in that agent only, as ``<agent>.<metric>`` scores, next to the scenario-level
expectations (which score every call); match tables name each call's agent when calls come
from several agents.

The agent is a real multi-agent LangGraph system on the project's scripted model: the parity
suite's supervisor (a planner, a research and a math sub-agent, each a subgraph), whose calls
are ``note`` in ``supervisor/planner``, ``lookup`` in ``supervisor/research_agent`` and ``add``
in ``supervisor/math_agent``.
"""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.redaction import Scrubber
from harness.report.html import render_html
from harness.report.text import match_table
from harness.report.view import run_view
from harness.run.results import RunResult, ScenarioResult, SuiteResult
from harness.run.runner import RunOptions, run_scenarios
from harness.sample import Sample
from harness.scenarios import Scenario, load_file
from harness.scoring import score_sample
from tests.support.parity_agents import run_shape, supervisor, thread_config
from tracing.langchain.recorder import ToolCallRecorder

HERE = Path(__file__).resolve()


def parity_supervisor(model: Any) -> Any:
    """The agent factory the suites below name: the supervisor on its own scripted models."""
    return supervisor().graph


def _scenarios(tmp_path: Path, body: str) -> list[Scenario]:
    path = tmp_path / "scopes.yaml"
    head = f"suite: scopes\nagent: {HERE}:parity_supervisor\nscenarios:\n"
    path.write_text(head + textwrap.indent(textwrap.dedent(body), "  "), encoding="utf-8")
    return list(load_file(path).scenarios)


def _run(tmp_path: Path, body: str) -> ScenarioResult:
    (result,) = run_scenarios(_scenarios(tmp_path, body), RunOptions(concurrency=1)).scenarios
    return result


def _scores(run: RunResult) -> dict[str, bool]:
    return {score.name: score.passed for score in run.scores}


def test_each_block_is_scored_on_its_agents_calls_only(tmp_path: Path) -> None:
    """Precision per agent: the planner's note and the other worker's call are not extras."""
    result = _run(
        tmp_path,
        """
        - name: per agent
          input: go
          metrics:
            tool_call_f1: {threshold: 1.0}
            no_unexpected_tool_calls: {threshold: 1.0}
          expect:
            agents:
              research_agent:
                tool_calls: [{name: lookup, args: {key: france}}]
                forbid: [add]
              supervisor/math_*:
                tool_calls: [{name: add, args: {a: 3, b: 4}}]
        """,
    )
    assert result.status == "passed", result.reasons
    (run,) = result.runs
    # only blocks expect calls: the metrics score per agent, none on the whole run
    assert _scores(run) == {
        "research_agent.tool_call_f1": True,
        "research_agent.no_unexpected_tool_calls": True,
        "supervisor/math_*.tool_call_f1": True,
        "supervisor/math_*.no_unexpected_tool_calls": True,
    }
    (forbid,) = run.checks
    assert forbid.passed and forbid.reason == "research_agent: no call of add"


def test_the_scenario_level_expectations_still_score_every_call(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
        - name: both levels
          input: go
          metrics:
            no_unexpected_tool_calls: {threshold: 1.0}
          expect:
            tool_calls: [note]
            agents:
              research_agent:
                tool_calls: [lookup]
        """,
    )
    (run,) = result.runs
    # lookup and add are extras for the whole run; in research_agent lookup is all there is
    assert _scores(run) == {
        "no_unexpected_tool_calls": False,
        "research_agent.no_unexpected_tool_calls": True,
    }
    assert result.status == "failed"
    assert any(reason.startswith("no_unexpected_tool_calls") for reason in result.reasons)


def test_a_call_made_in_another_agent_does_not_count_for_a_block(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
        - name: wrong agent
          input: go
          expect:
            agents:
              math_agent:
                tool_calls: [lookup]
              research_agent:
                tool_calls: [{name: lookup, args: {key: france}}]
        """,
    )
    (run,) = result.runs
    # no metric named: a block with calls gets tool_call_accuracy at 1.0, like a scenario
    assert _scores(run) == {
        "math_agent.tool_call_accuracy": False,
        "research_agent.tool_call_accuracy": True,
    }
    assert result.status == "failed"
    assert any(r.startswith("math_agent.tool_call_accuracy") for r in result.reasons)


def test_default_metrics_per_block_and_forbid_indices_name_the_whole_run(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
        - name: defaults
          input: go
          expect:
            agents:
              planner:
                tool_calls: []
              research_agent:
                forbid: [lookup]
        """,
    )
    (run,) = result.runs
    # `tool_calls: []` expects no call in that agent; a forbid-only block scores no metric
    assert _scores(run) == {"planner.no_unexpected_tool_calls": False}
    (forbid,) = run.checks
    assert not forbid.passed
    assert forbid.calls == (1,)  # lookup is the run's second call
    assert forbid.reason.startswith("research_agent: forbidden tool called: #2 lookup")


def test_a_turn_scores_its_own_agent_blocks(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
        - name: turns
          turns:
            - input: go
              expect:
                agents:
                  math_agent:
                    tool_calls: [{name: add, args: {a: 3, b: 4}}]
                    forbid: [lookup]
        """,
    )
    assert result.status == "passed", result.reasons
    (run,) = result.runs
    assert _scores(run) == {"turn1.math_agent.tool_call_accuracy": True}
    (forbid,) = run.checks
    assert forbid.reason == "turn1: math_agent: no call of lookup"


def test_score_sample_scores_blocks_on_a_recorded_run(tmp_path: Path) -> None:
    """The one scoring path (``harness run`` and ``eval-traces``) scores the blocks."""
    (scenario,) = _scenarios(
        tmp_path,
        """
        - name: offline
          input: go
          metrics:
            tool_call_f1: {threshold: 1.0}
          expect:
            agents:
              planner:
                tool_calls: [{name: note, args: {text: "research, then math"}}]
        """,
    )
    recorder = ToolCallRecorder()
    case = supervisor()
    run_shape(case, "invoke", thread_config(case, [recorder]))
    scored = score_sample(scenario, Sample.from_recorder(recorder))
    assert scored.passed and _scores(scored) == {"planner.tool_call_f1": True}


def test_match_tables_name_the_agent_of_each_call(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        """
        - name: table
          input: go
          metrics:
            tool_argument_correctness: {threshold: 1.0}
          expect:
            tool_calls: [note, lookup, {name: add, args: {a: 3, b: 4}}]
            agents:
              math_agent:
                tool_calls: [{name: add, args: {a: 3, b: 5}}]
        """,
    )
    (run,) = result.runs
    assert _scores(run) == {
        "tool_argument_correctness": True,
        "math_agent.tool_argument_correctness": False,
    }
    view = run_view(run, Scrubber())
    # The block's pairs index its own slice of the run: none of its diffs land on a row here.
    assert [(row.verdict, row.diffs) for row in view.rows] == [("ok", ())] * 3
    table = match_table(view)
    header, _rule, *lines = table.splitlines()
    assert header.split() == ["#", "expected", "actual", "agent", "verdict"]
    assert "supervisor/planner" in lines[0] and "supervisor/math_agent" in lines[2]
    page = render_html(SuiteResult(scenarios=(result,)))
    assert "<th>agent</th>" in page
    assert '<td class="agent">supervisor/research_agent</td>' in page


def test_a_single_agent_table_has_no_agent_column(tmp_path: Path) -> None:
    suite = tmp_path / "single.yaml"
    suite.write_text(
        textwrap.dedent(
            """
            agent: harness.demo.supervisor:build
            scenarios:
              - name: delegation
                input: "What's the weather in Berlin?"
                expect:
                  tool_calls: [{name: ask_weather_agent, args: {city: Oslo}}]
            """
        ),
        encoding="utf-8",
    )
    (result,) = run_scenarios(list(load_file(suite).scenarios), RunOptions()).scenarios
    (run,) = result.runs
    assert run.sample is not None and not run.passed
    # the supervisor and its weather worker made the calls: the table names each one's agent
    assert run_view(run, Scrubber()).several_agents
    # the supervisor's calls alone: one agent, no column
    own = [call for call in run.calls if call.agent == "supervisor"]
    single = RunResult(
        0, False, Sample(tool_calls=own, expected_tool_calls=run.sample.expected_tool_calls)
    )
    view = run_view(single, Scrubber())
    assert not view.several_agents
    assert match_table(view).splitlines()[0].split() == ["#", "expected", "actual", "verdict"]
    page = render_html(SuiteResult(scenarios=(replace(result, runs=(single,)),)))
    assert "<th>agent</th>" not in page and "<th>verdict</th>" in page
