"""Conversations: ``turns:`` with ``resume:``, per-turn expectations, paused results, turn()."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from langgraph.types import Command

from harness.assertions import expect_tools
from harness.demo.approvals import Ledger, build
from harness.errors import ConfigError
from harness.models import make_model
from harness.run.results import ScenarioResult
from harness.run.runner import RunOptions, run_scenarios
from harness.sample import Sample
from harness.scenarios import load_file
from tests.support.paths import ROOT, documentation
from tracing.langchain.recorder import ToolCallRecorder


def _run_file(path: Path) -> dict[str, ScenarioResult]:
    suite = load_file(path)
    result = run_scenarios(list(suite.scenarios), RunOptions(concurrency=2))
    return {scenario.name: scenario for scenario in result.scenarios}


def _suite(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "conv.yaml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_shipped_approvals_suite_pauses_resumes_and_records_the_pause() -> None:
    results = _run_file(ROOT / "scenarios" / "approvals.yaml")
    assert {name: r.status for name, r in results.items()} == {
        "approved payment is sent": "passed",
        "rejected payment is not sent": "passed",
        "balance then payment, left waiting for the reviewer": "passed",
    }
    approved = results["approved payment is sent"].runs[0]
    assert approved.paused == ()  # the last turn finished
    assert [(c.name, c.status) for c in approved.calls] == [("send_payment", "ok")]
    assert approved.sample is not None
    turns = approved.sample.metadata["turns"]
    assert turns[0]["paused"] == [
        {"action": "send_payment", "payee_name": "Alice Martin", "amount": 250.0}
    ]
    assert turns[1]["paused"] == []
    names = [score.name for score in approved.scores]
    assert "turn1.tool_call_accuracy" in names and "tool_call_accuracy" in names

    rejected = results["rejected payment is not sent"].runs[0]
    assert [(c.name, c.status) for c in rejected.calls] == [("send_payment", "error")]

    waiting = results["balance then payment, left waiting for the reviewer"].runs[0]
    assert waiting.paused == (
        {"action": "send_payment", "payee_name": "Carol White", "amount": 40.0},
    )
    assert waiting.error is None and waiting.passed


def test_turn_expectations_score_only_that_turn(tmp_path: Path) -> None:
    path = _suite(
        tmp_path,
        """
        agent: harness.demo.approvals:build
        scenarios:
          - name: balance asked in the wrong turn
            turns:
              - input: "Send 40 EUR to customer Carol White"
                expect:
                  tool_calls: [get_balance]          # it happens in turn 2, not here
              - resume: approve
              - input: "What is my balance?"
                expect:
                  tool_calls: [get_balance]
                  output: {$contains: "960.00 EUR"}
            expect:
              tool_calls: [send_payment, get_balance]   # all turns together: both happen
        """,
    )
    result = _run_file(path)["balance asked in the wrong turn"]
    assert result.status == "failed"
    run = result.runs[0]
    verdicts = {score.name: score.passed for score in run.scores}
    assert verdicts == {
        "tool_call_accuracy": True,
        "turn1.tool_call_accuracy": False,
        "turn3.tool_call_accuracy": True,
    }
    assert [check.reason for check in run.checks] == ["turn3: final answer matches"]
    reasons = run.reasons()
    assert any(reason.startswith("turn1.tool_call_accuracy 0.00 < 1.00") for reason in reasons)


def test_resume_of_a_graph_that_is_not_paused_is_a_clear_scenario_error(tmp_path: Path) -> None:
    path = _suite(
        tmp_path,
        """
        agent: harness.demo.approvals:build
        scenarios:
          - name: nothing to resume
            turns:
              - input: "What is my balance?"
              - resume: approve
        """,
    )
    result = _run_file(path)["nothing to resume"]
    assert result.status == "error"
    error = result.runs[0].error
    assert error is not None and error.type == "ScenarioRunError"
    assert "turns[1] resumes the graph, but it is not paused" in error.message
    # what the finished turn recorded is kept
    assert [call.name for call in result.runs[0].calls] == ["get_balance"]


@pytest.mark.parametrize(
    ("scenario", "line", "message"),
    [
        (
            """\
          - name: mixed
            input: hi
            turns:
              - input: hello
            """,
            6,
            "scenarios[0].turns: give either 'turns' (a conversation) or 'input'",
        ),
        (
            """\
          - name: resume first
            turns:
              - resume: approve
            """,
            6,
            "scenarios[0].turns[0].resume: the first turn cannot resume: nothing has paused yet",
        ),
        (
            """\
          - name: both
            turns:
              - input: hi
              - input: again
                resume: approve
            """,
            7,
            "scenarios[0].turns[1]: a turn is either a user message",
        ),
        (
            """\
          - name: empty turn
            turns:
              - input: hi
              - expect: {tool_calls: [get_balance]}
            """,
            7,
            "scenarios[0].turns[1]: expected exactly one of 'input' (the user's message), "
            "'messages'",
        ),
    ],
)
def test_bad_turns_are_load_errors(tmp_path: Path, scenario: str, line: int, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "agent: harness.demo.approvals:build\nmodel: {provider: demo}\nscenarios:\n"
        + textwrap.indent(textwrap.dedent(scenario), "  "),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_file(path)
    texts = [str(issue) for issue in caught.value.issues]
    assert any(f":{line}: {message}" in text for text in texts), texts


def test_recorder_turns_split_a_conversation() -> None:
    ledger = Ledger()
    agent = build(make_model("demo"), ledger)
    recorder = ToolCallRecorder()
    config = {**recorder.config, "configurable": {"thread_id": "conversation-1"}}
    with recorder.turn() as first:
        paused = agent.invoke({"messages": [("user", "Send 60 EUR to customer Dan Brook")]}, config)
    assert paused["__interrupt__"][0].value["amount"] == 60.0
    assert [(c.name, c.status) for c in first] == [("send_payment", "interrupted")]
    with recorder.turn() as second:
        agent.invoke(Command(resume="approve"), config)
    # the resumed call stays in the turn that requested it, now with its final status
    assert len(second) == 0
    expect_tools(first).called("send_payment", payee_name="Dan Brook", amount=60).no_errors()
    assert ledger.payments == [("Dan Brook", 60.0)]
    with recorder.turn() as third:
        agent.invoke({"messages": [("user", "What is my balance?")]}, config)
    expect_tools(third).called("get_balance").no_unexpected_calls()
    assert "940.00 EUR" in str(Sample.from_recorder(third).output)
    assert len(recorder.calls()) == 2


def test_tool_recorder_fixture_turns_without_config(tool_recorder: ToolCallRecorder) -> None:
    agent = build(make_model("demo"))
    thread = {"configurable": {"thread_id": "fixture-thread"}}  # no callbacks: captured anyway
    with tool_recorder.turn() as ask:
        agent.invoke({"messages": [("user", "Send 5 EUR to customer Eve Stone")]}, thread)
    with tool_recorder.turn() as answer:
        agent.invoke(Command(resume="reject"), thread)
    expect_tools(ask).called("send_payment", amount=5)
    assert [c.status for c in ask] == ["error"]
    assert len(answer) == 0
    assert "rejected" in str(tool_recorder.last_output())


_README_YAML = re.compile(r"<!-- readme-yaml: (?P<file>\S+) -->\s*```yaml\n(?P<code>.*?)```", re.S)


def test_readme_yaml_examples_run_and_pass(tmp_path: Path) -> None:
    examples = _README_YAML.findall(documentation())
    assert {name for name, _ in examples} >= {"concierge.yaml", "approvals.yaml"}
    for name, code in examples:
        path = tmp_path / name
        path.write_text(code, encoding="utf-8")
        results = _run_file(path)
        assert {n: r.status for n, r in results.items()} == dict.fromkeys(results, "passed"), [
            r.reasons for r in results.values()
        ]
