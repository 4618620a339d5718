"""Agents and tools that misbehave: each ends as its own scenario's error, the run goes on.

Real LangGraph ReAct graphs (tests/support/agents.py) driven by the scripted model call real
tools that raise what would stop a program, ignore cancellation or block the event loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool, tool

from harness.models.scripted import ScriptedChatModel
from harness.run.results import ScenarioResult, SuiteResult
from harness.run.runner import GRACE_SECONDS, Runner, RunOptions, run_scenarios
from harness.scenarios import AgentRef, Scenario
from tests.support.agents import add, build_react_graph, user_input
from tests.support.paths import ROOT

HARNESS = Path(sys.executable).parent / "harness"


class ToolSaysStop(BaseException):
    """A BaseException of a tool's own (as some frameworks define for control flow)."""


@tool
def exits_3(reason: str) -> str:
    """A sync tool that ends like an argparse/click program: SystemExit(3)."""
    raise SystemExit(3)


@tool
def presses_ctrl_c(reason: str) -> str:
    """A sync tool that raises KeyboardInterrupt itself (no signal was sent)."""
    raise KeyboardInterrupt


@tool
async def async_presses_ctrl_c(reason: str) -> str:
    """An async tool raising KeyboardInterrupt on the event loop's thread."""
    raise KeyboardInterrupt


@tool
async def async_exits_0(reason: str) -> str:
    """An async tool calling sys.exit(0)."""
    sys.exit(0)


@tool
def closes_generator(reason: str) -> str:
    """A tool raising GeneratorExit."""
    raise GeneratorExit


@tool
async def says_stop(reason: str) -> str:
    """An async tool raising a BaseException subclass of its own."""
    raise ToolSaysStop("stop everything")


@tool
async def cancels_itself(reason: str) -> str:
    """An async tool raising CancelledError although nobody cancelled it."""
    raise asyncio.CancelledError


@tool
async def ignores_cancellation(seconds: float) -> str:
    """An async tool that swallows every cancellation and keeps waiting."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            continue
    return "done"


@tool
async def blocks_the_loop(seconds: float) -> str:
    """An async tool that blocks the event loop with a synchronous sleep."""
    time.sleep(seconds)
    return "slept"


@tool
async def naps(seconds: float) -> str:
    """An async tool that waits without blocking."""
    await asyncio.sleep(seconds)
    return "rested"


class _SwallowingAgent:
    """An async agent (a LangGraph graph inside) that swallows its own cancellation."""

    def __init__(self, model: Any, seconds: float = 30) -> None:
        self.graph = build_react_graph(model, [add])
        self.seconds = seconds

    async def ainvoke(self, payload: Any, config: Any = None) -> Any:
        result = await self.graph.ainvoke(payload, config=config)
        end = time.monotonic() + self.seconds
        while time.monotonic() < end:
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                continue
        return result


def calling(tool_name: str, **args: Any) -> list[dict[str, Any]]:
    """A script: one call of ``tool_name``, then a final answer."""
    return [{"tool_calls": [{"name": tool_name, "args": args}]}, {"content": "done"}]


def scenario(
    name: str,
    tools: Sequence[BaseTool],
    turns: Sequence[dict[str, Any]],
    *,
    timeout: float = 2.0,
    factory: Callable[[Any], Any] | None = None,
) -> Scenario:
    """A scenario running a real ReAct graph over ``tools`` with a scripted model."""
    build = factory or (lambda model: build_react_graph(model, list(tools), name=name))
    return Scenario(
        suite="misbehaving",
        name=name,
        file="misbehaving.yaml",
        line=None,
        agent=AgentRef(f"tests:{name}", build),
        model=ScriptedChatModel(turns),
        input=user_input("go"),
        input_text="go",
        timeout=timeout,
    )


def quick(name: str = "quick") -> Scenario:
    return scenario(name, [add], calling("add", a=1, b=2))


def by_name(result: SuiteResult) -> dict[str, ScenarioResult]:
    return {s.name: s for s in result.scenarios}


# --- what would stop a program stops only its scenario ------------------------------------


@pytest.mark.parametrize(
    ("tool_", "error_type"),
    [
        (exits_3, "SystemExit"),
        (presses_ctrl_c, "KeyboardInterrupt"),
        (async_presses_ctrl_c, "KeyboardInterrupt"),
        (async_exits_0, "SystemExit"),
        pytest.param(
            closes_generator,
            "GeneratorExit",
            # LangGraph's coroutine that saw it complains when collected; not the harness's
            marks=pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
        ),
        (says_stop, "ToolSaysStop"),
    ],
    ids=lambda v: getattr(v, "name", v),
)
def test_a_tool_raising_a_base_exception_is_its_scenarios_error(
    tool_: BaseTool, error_type: str
) -> None:
    bad = scenario("bad", [tool_], calling(tool_.name, reason="x"))
    result = run_scenarios([quick("before"), bad, quick("after")], RunOptions(concurrency=1))
    assert not result.interrupted and result.not_run == 0
    results = by_name(result)
    assert results["before"].status == "passed" and results["after"].status == "passed"
    error = results["bad"].runs[0].error
    assert results["bad"].status == "error" and error is not None
    assert (error.type, error.phase) == (error_type, "run")
    assert [c.name for c in results["bad"].runs[0].calls] == [tool_.name]  # capture kept


def test_system_exit_0_does_not_end_the_run_green() -> None:
    result = run_scenarios(
        [scenario("exits", [async_exits_0], calling("async_exits_0", reason="x"))]
    )
    assert not result.ok and result.scenarios[0].status == "error"


def _factory_exits(model: Any) -> Any:
    raise SystemExit(3)


def test_a_factory_raising_system_exit_is_its_error_at_once_not_a_timeout() -> None:
    bad = scenario(
        "factory exits", [add], calling("add", a=1, b=1), timeout=30, factory=_factory_exits
    )
    started = time.perf_counter()
    result = run_scenarios([bad, quick("after")], RunOptions(concurrency=1))
    waited = time.perf_counter() - started
    results = by_name(result)
    error = results["factory exits"].runs[0].error
    assert error is not None and (error.type, error.phase) == ("SystemExit", "factory")
    assert "timeout" not in error.message
    assert results["after"].status == "passed"
    assert waited < 30  # it did not wait out the scenario's timeout


class _CancellingAgent:
    """An agent that runs its graph, then raises CancelledError (a misused inner timeout)."""

    def __init__(self, model: Any) -> None:
        self.graph = build_react_graph(model, [add])

    async def ainvoke(self, payload: Any, config: Any = None) -> Any:
        await self.graph.ainvoke(payload, config=config)
        raise asyncio.CancelledError


def cancelling() -> Scenario:
    return scenario("cancels", [add], calling("add", a=1, b=1), factory=_CancellingAgent)


def test_cancelled_error_raised_by_an_agent_is_its_error_not_an_interrupted_run() -> None:
    result = run_scenarios([cancelling(), quick()], RunOptions(concurrency=2))
    assert not result.interrupted and result.not_run == 0
    results = by_name(result)
    assert results["quick"].status == "passed"
    error = results["cancels"].runs[0].error
    assert error is not None and (error.type, error.phase) == ("CancelledError", "run")
    assert [c.name for c in results["cancels"].runs[0].calls] == ["add"]


async def test_cancelled_error_from_an_agent_under_runner_run_too() -> None:
    result = await Runner(RunOptions(concurrency=2)).run([cancelling(), quick()])
    assert not result.interrupted
    assert [s.status for s in result.scenarios] == ["error", "passed"]


def test_cancelled_error_raised_by_a_tool_is_its_scenarios_error() -> None:
    bad = scenario("cancels", [cancels_itself], calling("cancels_itself", reason="x"))
    result = run_scenarios([bad, quick()], RunOptions(concurrency=2))
    assert not result.interrupted
    error = by_name(result)["cancels"].runs[0].error
    assert error is not None and error.phase == "run"
    assert error.type in ("CancelledError", "NodeCancelledError")  # LangGraph may rename it


# --- timeouts always fire ------------------------------------------------------------------


def test_a_tool_that_ignores_cancellation_times_out_and_the_suite_finishes() -> None:
    stubborn = scenario(
        "stubborn", [ignores_cancellation], calling("ignores_cancellation", seconds=30), timeout=0.5
    )
    start = time.monotonic()
    result = run_scenarios([stubborn, quick()], RunOptions(concurrency=2))
    assert time.monotonic() - start < 0.5 + GRACE_SECONDS + 5
    results = by_name(result)
    assert results["quick"].status == "passed"
    error = results["stubborn"].runs[0].error
    assert results["stubborn"].status == "error" and error is not None
    assert error.phase == "timeout"
    assert error.message.startswith("the run did not finish within the timeout of 0.5s")


def test_an_agent_that_swallows_its_cancellation_is_abandoned_and_reported_so() -> None:
    stubborn = scenario(
        "stubborn", [add], calling("add", a=1, b=1), timeout=0.5, factory=_SwallowingAgent
    )
    start = time.monotonic()
    result = run_scenarios([stubborn, quick()], RunOptions(concurrency=2))
    assert time.monotonic() - start < 0.5 + GRACE_SECONDS + 5
    results = by_name(result)
    assert results["quick"].status == "passed"
    error = results["stubborn"].runs[0].error
    assert error is not None and error.phase == "timeout"
    assert "ignored its cancellation" in error.message and "abandoned" in error.message
    assert [c.name for c in results["stubborn"].runs[0].calls] == ["add"]


async def test_stopping_the_run_does_not_wait_for_an_agent_that_swallows_cancellation() -> None:
    # the first Ctrl-C cancels the run: it must return although this agent never stops
    # on a loop it does not own (here pytest-asyncio's), an abandoned call lives on until it
    # ends by itself, and the loop's teardown waits for it: 3 s, not 30
    stubborn = scenario(
        "stubborn",
        [add],
        calling("add", a=1, b=1),
        factory=lambda model: _SwallowingAgent(model, 3),
    )
    finished = asyncio.Event()
    runner = Runner(RunOptions(concurrency=2, progress=lambda r: finished.set()))
    task = asyncio.ensure_future(runner.run([quick(), stubborn]))
    await asyncio.wait_for(finished.wait(), 10)
    await asyncio.sleep(0.2)
    task.cancel()
    result = await asyncio.wait_for(task, GRACE_SECONDS + 1)  # the agent goes on for 3 s
    assert result.interrupted and result.not_run == 1
    assert [s.name for s in result.scenarios] == ["quick"]
    assert len(runner.abandoned) == 1  # still running, kept referenced, reported nowhere else


def test_an_agent_blocking_the_event_loop_fails_and_does_not_stall_the_others() -> None:
    blocker = scenario(
        "blocker", [blocks_the_loop], calling("blocks_the_loop", seconds=40), timeout=1.0
    )
    others = [quick(f"quick{i}") for i in range(3)]
    start = time.monotonic()
    result = run_scenarios([blocker, *others], RunOptions(concurrency=4))
    elapsed = time.monotonic() - start
    assert elapsed < 10, f"the blocked loop stalled the run for {elapsed:.1f}s"
    results = by_name(result)
    assert all(results[s.name].status == "passed" for s in others)
    error = results["blocker"].runs[0].error
    assert results["blocker"].status == "error" and error is not None
    assert error.phase == "timeout"
    assert "blocked the event loop" in error.message


def test_the_harness_blocking_its_own_loop_is_never_interrupted_nor_blamed_on_others() -> None:
    # a slow progress callback (a reporter) blocks the loop while another run's deadline passes:
    # the watchdog must not raise into the harness's code, and the waiting run gets the time back
    napper = scenario("napper", [naps], calling("naps", seconds=0.5), timeout=1.0)

    def slow_progress(result: ScenarioResult) -> None:
        if result.name == "quick":
            time.sleep(1.5)

    result = run_scenarios([quick(), napper], RunOptions(concurrency=2, progress=slow_progress))
    assert [(s.name, s.status) for s in result.scenarios] == [
        ("quick", "passed"),
        ("napper", "passed"),
    ]


def test_a_blocking_agent_off_the_main_thread_is_still_a_timeout() -> None:
    # no signal can reach a loop on another thread: the block is detected once it returns
    blocker = scenario(
        "blocker", [blocks_the_loop], calling("blocks_the_loop", seconds=1.5), timeout=0.5
    )
    box: list[SuiteResult] = []
    worker = threading.Thread(target=lambda: box.append(run_scenarios([blocker])))
    worker.start()
    worker.join(30)
    (result,) = box
    error = result.scenarios[0].runs[0].error
    assert error is not None and error.phase == "timeout"
    assert "blocked the event loop" in error.message


# --- the process's own signals -------------------------------------------------------------

AGENT_MODULE = '''
import time
from pathlib import Path

from langchain_core.tools import tool

from tests.support.agents import add, build_react_graph


@tool
def hang(marker: str) -> str:
    """Write the marker file, then hang (a sync tool on a worker thread)."""
    Path(marker).write_text("started")
    time.sleep(120)
    return "never"


def build(model):
    return build_react_graph(model, [add, hang])
'''


def _project(tmp_path: Path, timeout: float) -> tuple[Path, Path]:
    (tmp_path / "hang_agent.py").write_text(AGENT_MODULE, encoding="utf-8")
    marker = tmp_path / "hanging"
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        textwrap.dedent(
            f"""\
            agent: hang_agent.py:build
            model: {{provider: scripted}}
            scenarios:
              - name: ok
                input: x
                script: [{{tool_calls: [{{name: add, args: {{a: 1, b: 2}}}}]}}]
                expect: {{tool_calls: [add]}}
              - name: hangs
                input: x
                timeout: {timeout}
                script: [{{tool_calls: [{{name: hang, args: {{marker: "{marker}"}}}}]}}]
            """
        ),
        encoding="utf-8",
    )
    return suite, marker


def _wait_for(path: Path, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.05)


def _env() -> dict[str, str]:
    root = str(ROOT)
    return {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}


@pytest.mark.skipif(os.name != "posix", reason="SIGTERM delivery is POSIX-specific")
def test_sigterm_writes_the_partial_report_and_exits_143(tmp_path: Path) -> None:
    suite, marker = _project(tmp_path, timeout=60)
    report = tmp_path / "partial.json"
    proc = subprocess.Popen(
        [str(HARNESS), "run", str(suite), "--json", str(report), "--concurrency", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=_env(),
    )
    _wait_for(marker)
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    data = json.loads(report.read_text())
    assert data["interrupted"] is True and data["not_run"] == 1
    assert [s["name"] for s in data["scenarios"]] == ["ok"]


def test_pytest_exits_although_a_sync_tool_hangs_past_its_timeout(tmp_path: Path) -> None:
    _project(tmp_path, timeout=0.5)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--harness-scenarios", "-q"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(),
        timeout=100,  # the tool sleeps 120 s: a pytest that waits for it fails here
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 failed, 1 passed" in proc.stdout
    assert time.monotonic() - start < 60
