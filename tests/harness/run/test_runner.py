"""The runner against real LangGraph agents and real tools: verdicts, errors, timeouts, gating."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

from harness.run.results import ScenarioResult, SuiteResult
from harness.run.runner import Runner, RunOptions, final_output, run_scenarios
from harness.scenarios import Scenario, load_file
from tests.support.paths import FIXTURES

AGENT_FILE = FIXTURES / "fixture_agent.py"


def scenarios(tmp_path: Path, body: str, factory: str = "build") -> list[Scenario]:
    text = (
        f"suite: s\nagent: {AGENT_FILE}:{factory}\nmodel: {{provider: scripted}}\n"
        "defaults: {timeout: 10}\nscenarios:\n"
        + textwrap.indent(textwrap.dedent(body).lstrip("\n"), "  ")
    )
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return list(load_file(path).scenarios)


def run(items: list[Scenario], **options: Any) -> SuiteResult:
    return run_scenarios(items, RunOptions(**options))


def one(tmp_path: Path, body: str, factory: str = "build", **options: Any) -> ScenarioResult:
    result = run(scenarios(tmp_path, body, factory), **options)
    (scenario,) = result.scenarios
    return scenario


ADD_23 = "[{tool_calls: [{name: add, args: {a: 2, b: 3}}]}, {content: 'It is 5'}]"


def test_passing_scenario_records_calls_scores_and_output(tmp_path: Path) -> None:
    result = one(
        tmp_path,
        f"""
        - name: adds
          input: "2 + 3?"
          script: {ADD_23}
          expect:
            tool_calls: [{{name: add, args: {{a: 2, b: {{$one_of: [3, 4]}}}}}}]
            output: {{$contains: "5"}}
            no_errors: true
        """,
    )
    assert result.status == "passed" and result.reasons == ()
    (run_result,) = result.runs
    assert [(c.name, dict(c.args), c.status) for c in run_result.calls] == [
        ("add", {"a": 2, "b": 3}, "ok")
    ]
    assert run_result.output == "It is 5"
    assert [(s.name, s.value) for s in run_result.scores] == [("tool_call_accuracy", 1.0)]
    assert [(c.name, c.passed) for c in run_result.checks] == [
        ("no_errors", True),
        ("output", True),
    ]


def test_wrong_call_fails_with_reasons_and_forbid_check(tmp_path: Path) -> None:
    result = one(
        tmp_path,
        """
        - name: wrong
          input: "2 + 3?"
          script:
            - tool_calls:
                - {name: add, args: {a: 2, b: 4}}
                - {name: delete_account, args: {account_id: 7}}
            - content: "6"
          expect:
            tool_calls: [{name: add, args: {a: 2, b: 3}}]
            forbid: [delete_account]
            output: "5"
        """,
    )
    assert result.status == "failed"
    forbid, output = result.runs[0].checks
    assert (forbid.passed, forbid.code, forbid.calls) == (False, "unexpected_call", (1,))
    assert forbid.reason == "forbidden tool called: #2 delete_account(account_id=7)"
    assert (output.passed, output.code) == (False, "wrong_output")
    assert output.reason == "final answer '6' does not match '5'"
    assert result.reasons[0].startswith("tool_call_accuracy 0.00 < 1.00: ")
    assert result.reasons[1:] == (forbid.reason, output.reason)


def test_tool_that_raises_inside_a_surviving_run_is_a_call_error_not_a_scenario_error(
    tmp_path: Path,
) -> None:
    result = one(
        tmp_path,
        """
        - name: boom
          input: explode
          script: [{tool_calls: [{name: explode, args: {reason: bad}}]}, {content: sorry}]
          expect: {tool_calls: [explode], no_errors: true}
        """,
    )
    assert result.status == "failed"
    (call,) = result.runs[0].calls
    assert call.status == "error" and "explode failed: bad" in (call.error or "")
    assert result.runs[0].error is None
    assert result.runs[0].scores[0].passed  # the call was made: accuracy is satisfied
    (check,) = result.runs[0].checks
    assert check.code == "tool_error" and check.calls == (0,)
    assert check.reason.startswith("tool error: #1 explode(reason='bad') failed: ")


def test_tool_that_raises_and_crashes_the_run_is_an_error_with_traceback(tmp_path: Path) -> None:
    result = one(
        tmp_path,
        """
        - name: crash
          input: explode
          script: [{tool_calls: [{name: explode, args: {reason: bad}}]}]
          expect: {tool_calls: [explode]}
        """,
        factory="build_strict",
    )
    assert result.status == "error"
    error = result.runs[0].error
    assert error is not None and error.phase == "run" and error.type == "ValueError"
    assert "explode failed: bad" in error.traceback and "Traceback" in error.traceback
    assert result.reasons == ("error (run): ValueError: explode failed: bad",)
    assert [c.name for c in result.runs[0].calls] == ["explode"]  # captured before the crash


def test_factory_that_raises_is_that_scenarios_error_only(tmp_path: Path) -> None:
    result = run(scenarios(tmp_path, "- {name: broken, input: hi, script: []}", "build_raises"))
    (scenario,) = result.scenarios
    assert scenario.status == "error"
    error = scenario.runs[0].error
    assert error is not None and error.phase == "factory"
    assert error.message.endswith("build_raises raised: factory is broken on purpose")
    assert "RuntimeError" in error.traceback


def test_hang_past_timeout_keeps_what_was_captured_and_others_still_run(tmp_path: Path) -> None:
    items = scenarios(
        tmp_path,
        """
        - name: hangs
          input: wait
          timeout: 0.3
          script: [{tool_calls: [{name: add, args: {a: 1, b: 1}}]},
                   {tool_calls: [{name: wait_forever, args: {seconds: 60}}]}]
        - name: fine
          input: "1 + 1"
          script: [{tool_calls: [{name: add, args: {a: 1, b: 1}}]}]
          expect: {tool_calls: [add]}
        """,
    )
    hangs, fine = run(items).scenarios
    assert hangs.status == "error" and fine.status == "passed"
    error = hangs.runs[0].error
    assert error is not None and error.phase == "timeout"
    assert error.message == "the run did not finish within the timeout of 0.3s"
    assert [c.name for c in hangs.runs[0].calls] == ["add", "wait_forever"]


def test_sync_agent_that_hangs_times_out_on_a_daemon_thread(tmp_path: Path) -> None:
    result = one(tmp_path, "- {name: h, input: x, script: [], timeout: 0.2}", "build_sync_hang")
    assert result.status == "error"
    assert result.runs[0].error is not None and result.runs[0].error.phase == "timeout"


def test_sync_only_agent_runs_on_a_worker_thread_and_is_recorded(tmp_path: Path) -> None:
    result = one(
        tmp_path,
        f"- {{name: s, input: x, script: {ADD_23}, expect: {{tool_calls: [add]}}}}",
        "build_sync",
    )
    assert result.status == "passed"
    assert [c.name for c in result.runs[0].calls] == ["add"]


def test_repeat_with_pass_rate_gate(tmp_path: Path) -> None:
    body = """
    - name: flaky
      input: "1 + 1"
      repeat: 5
      pass_rate: {rate}
      script: []
      expect: {{tool_calls: [{{name: add, args: {{a: 1, b: 1}}}}]}}
    """
    lenient = one(tmp_path, body.format(rate=0.6), "build_alternating")
    assert lenient.status == "passed" and (lenient.passes, len(lenient.runs)) == (3, 5)
    assert lenient.reasons[-1] == "passed 3 of 5 runs (60%), meets pass_rate 60% (needs 3)"
    strict = one(tmp_path, body.format(rate=0.8), "build_alternating")
    assert strict.status == "failed" and strict.passes == 3
    assert strict.reasons[0].startswith("[runs 2, 4] tool_call_accuracy 0.00 < 1.00")
    assert strict.reasons[-1] == "passed 3 of 5 runs (60%), below pass_rate 80% (needs 4)"


def test_cli_repeat_override(tmp_path: Path) -> None:
    result = one(tmp_path, f"- {{name: r, input: x, script: {ADD_23}}}", repeat=3)
    assert result.repeat == 3 and len(result.runs) == 3 and result.status == "passed"


def test_xfail_inverts_and_xpass_does_not_fail_the_run(tmp_path: Path) -> None:
    items = scenarios(
        tmp_path,
        f"""
        - name: known bad
          input: x
          xfail: the model adds wrongly
          script: [{{tool_calls: [{{name: add, args: {{a: 2, b: 4}}}}]}}]
          expect: {{tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]}}
        - name: surprisingly fine
          input: x
          xfail: true
          script: {ADD_23}
          expect: {{tool_calls: [add]}}
        """,
    )
    result = run(items)
    assert [s.status for s in result.scenarios] == ["xfailed", "xpassed"]
    assert result.scenarios[1].xfail == "expected to fail"
    assert result.ok and result.counts["xfailed"] == 1 and result.counts["xpassed"] == 1


def test_concurrency_bounds_overlap(tmp_path: Path) -> None:
    body = "\n".join(f"- {{name: g{i}, input: x, script: []}}" for i in range(12))
    items = scenarios(tmp_path, body, "build_gate")
    in_flight = items[0].agent.factory.__globals__["InFlight"]
    in_flight.peak = 0
    run(items, concurrency=3)
    assert in_flight.peak == 3
    in_flight.peak = 0
    run(items, concurrency=1)
    assert in_flight.peak == 1


def test_fail_fast_starts_nothing_after_a_failure(tmp_path: Path) -> None:
    body = "- {name: bad, input: x, script: [], expect: {tool_calls: [add]}}\n" + "\n".join(
        f"- {{name: ok{i}, input: x, script: []}}" for i in range(5)
    )
    result = run(scenarios(tmp_path, body), concurrency=1, fail_fast=True)
    assert [s.name for s in result.scenarios] == ["bad"]
    assert result.not_run == 5 and not result.ok


def test_progress_callback_sees_every_result(tmp_path: Path) -> None:
    seen: list[str] = []
    body = "\n".join(f"- {{name: p{i}, input: x, script: []}}" for i in range(4))
    result = run(scenarios(tmp_path, body), progress=lambda r: seen.append(r.name))
    assert sorted(seen) == ["p0", "p1", "p2", "p3"]
    assert [s.name for s in result.scenarios] == ["p0", "p1", "p2", "p3"]  # input order kept


async def test_cancellation_returns_partial_result(tmp_path: Path) -> None:
    body = f"""
    - {{name: quick, input: x, script: {ADD_23}}}
    - name: slow
      input: x
      script: [{{tool_calls: [{{name: wait_forever, args: {{seconds: 60}}}}]}}]
    """
    items = scenarios(tmp_path, body)
    finished = asyncio.Event()
    runner = Runner(RunOptions(concurrency=2, progress=lambda r: finished.set()))
    task = asyncio.ensure_future(runner.run(items))
    await asyncio.wait_for(finished.wait(), 10)
    task.cancel()
    result = await task
    assert result.interrupted and result.not_run == 1
    assert [s.name for s in result.scenarios] == ["quick"]


def test_final_output_shapes() -> None:
    from langchain_core.messages import AIMessage

    assert final_output({"messages": [AIMessage(content="hi")]}) == "hi"
    assert (
        final_output({"messages": [{"role": "assistant", "content": [{"text": "a"}, "b"]}]}) == "ab"
    )
    assert final_output({"output": 3}) == 3
    assert final_output("plain") == "plain"
