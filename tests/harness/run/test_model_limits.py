"""``model: {provider: module:callable, max_concurrency: N}``: a custom model and its own limit.

The model is a user's own ``BaseChatModel`` subclass (written to a file, loaded by the suite
like ``agent:``) that counts the calls it has in flight, in shared memory, so a forked ``-n``
worker counts into the same numbers. The agents are ``create_agent`` graphs, awaited (the
model's async path) or invoked by an application function on a thread (its sync path).
"""

from __future__ import annotations

import sys
import textwrap
import time
import types
from pathlib import Path

import pytest

from harness.parallel.runs import run_scenarios_in_workers
from harness.run.runner import RunOptions, run_scenarios
from harness.scenarios import Scenario, load_file

MODEL_FILE = '''
"""A local chat model of the user's own: one request at a time would be its comfort."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
import time
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

_fork = multiprocessing.get_context("fork")
IN_FLIGHT = _fork.Value("i", 0)
PEAK = _fork.Value("i", 0)
CALLS = _fork.Value("i", 0)
RELEASE = threading.Event()
"""Set by the test: a 'hang' call returns."""


def reset() -> None:
    with IN_FLIGHT.get_lock():
        IN_FLIGHT.value = PEAK.value = CALLS.value = 0


def _enter() -> None:
    with IN_FLIGHT.get_lock():
        IN_FLIGHT.value += 1
        CALLS.value += 1
        PEAK.value = max(PEAK.value, IN_FLIGHT.value)


def _leave() -> None:
    with IN_FLIGHT.get_lock():
        IN_FLIGHT.value -= 1


class LocalEngineChatModel(BaseChatModel):
    """Calls the tool the user names (``a+b``), then answers the tool's result."""

    seconds: float = 0.1

    @property
    def _llm_type(self) -> str:
        return "local-engine"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _answer(self, messages: Any) -> ChatResult:
        last = messages[-1]
        if last.type == "tool":
            reply = AIMessage(content=str(last.content))
        else:
            a, b = (int(x) for x in str(last.content).split()[-1].split("+"))
            call = {"name": "add", "args": {"a": a, "b": b}, "id": f"call-{a}-{b}"}
            reply = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        _enter()
        try:
            if "hang" in str(messages[-1].content):
                RELEASE.wait(30)
            time.sleep(self.seconds)
            return self._answer(messages)
        finally:
            _leave()

    async def _agenerate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        _enter()
        try:
            await asyncio.sleep(self.seconds)
            return self._answer(messages)
        finally:
            _leave()


def build(seconds: float = 0.1) -> LocalEngineChatModel:
    return LocalEngineChatModel(seconds=seconds)
'''

AGENT_FILE = '''
from langchain.agents import create_agent
from langchain_core.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def graph(model):
    return create_agent(model, [add])


def app(model):
    agent = create_agent(model, [add])

    def answer(payload):
        return agent.invoke(payload)

    return answer
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "engine.py").write_text(MODEL_FILE, encoding="utf-8")
    (tmp_path / "agents.py").write_text(AGENT_FILE, encoding="utf-8")
    return tmp_path


def suite(folder: Path, model: str, count: int, name: str = "s", **options: str) -> Path:
    """``count`` scenarios, adding i + 10; odd ones through the app function (sync calls)."""
    lines = [f"suite: {name}", "agent: agents.py:graph", f"model: {model}"]
    lines += [f"{key}: {value}" for key, value in options.items()]
    lines.append("scenarios:")
    for i in range(count):
        agent = "agents.py:app" if i % 2 else "agents.py:graph"
        lines.append(
            textwrap.indent(
                f"- name: add{i}\n  agent: {agent}\n  input: '{i}+10'\n"
                f"  expect: {{tool_calls: [{{name: add, args: {{a: {i}, b: 10}}}}]}}",
                "  ",
            )
        )
    path = folder / f"{name}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def engine(scenarios: list[Scenario]) -> types.ModuleType:
    """The model file's module, as the loader imported it (its counters)."""
    model = scenarios[0].model
    inner = getattr(model, "inner", model)
    return sys.modules[inner.factory.__module__]


def test_the_limit_bounds_the_calls_the_model_sees_sync_and_async(project: Path) -> None:
    limited = suite(project, "{provider: 'engine.py:build', max_concurrency: 2}", 12, "limited")
    scenarios = list(load_file(limited).scenarios)
    counters = engine(scenarios)
    counters.reset()
    result = run_scenarios(scenarios, RunOptions(concurrency=8))
    assert [s.status for s in result.scenarios] == ["passed"] * 12, [
        s.reasons for s in result.scenarios
    ]
    assert counters.CALLS.value == 24  # two turns each: the tool call, then the answer
    assert counters.PEAK.value == 2  # never above the limit, and the limit was used

    # the same model without a limit: the calls really overlap (the counter can see it)
    free = suite(project, "{provider: 'engine.py:build'}", 12, "free")
    counters.reset()
    result = run_scenarios(list(load_file(free).scenarios), RunOptions(concurrency=8))
    assert all(s.status == "passed" for s in result.scenarios)
    assert counters.PEAK.value > 2


def test_one_limit_is_shared_across_suites_with_the_same_model_config(project: Path) -> None:
    model = "{provider: 'engine.py:build', max_concurrency: 1, seconds: 0.05}"
    first = suite(project, model, 4, "first")
    second = suite(project, model, 4, "second")
    other = suite(project, model.replace("max_concurrency: 1", "max_concurrency: 2"), 2, "other")
    scenarios = [*load_file(first).scenarios, *load_file(second).scenarios]
    assert scenarios[0].model.gate is scenarios[-1].model.gate
    assert load_file(other).scenarios[0].model.gate is not scenarios[0].model.gate
    counters = engine(scenarios)
    counters.reset()
    result = run_scenarios(scenarios, RunOptions(concurrency=8))
    assert all(s.status == "passed" for s in result.scenarios)
    assert counters.PEAK.value == 1


def test_forked_workers_share_the_limit(project: Path) -> None:
    limited = suite(project, "{provider: 'engine.py:build', max_concurrency: 1}", 8, "forked")
    scenarios = list(load_file(limited).scenarios)
    counters = engine(scenarios)
    counters.reset()
    result = run_scenarios_in_workers(scenarios, RunOptions(concurrency=8), workers=2)
    assert all(s.status == "passed" for s in result.scenarios), [
        s.reasons for s in result.scenarios
    ]
    assert counters.CALLS.value == 16
    assert counters.PEAK.value == 1


def test_waiting_for_a_slot_does_not_count_against_the_timeout(project: Path) -> None:
    # 5 scenarios x 2 calls x 0.4 s, one at a time: the last run ends ~4 s after it started,
    # past its 3 s timeout, though its own calls took 0.8 s
    model = "{provider: 'engine.py:build', max_concurrency: 1, seconds: 0.4}"
    path = suite(project, model, 5, "queued", defaults="{timeout: 3}")
    scenarios = list(load_file(path).scenarios)
    start = time.perf_counter()
    result = run_scenarios(scenarios, RunOptions(concurrency=5))
    assert time.perf_counter() - start >= 4.0
    assert [s.status for s in result.scenarios] == ["passed"] * 5, [
        s.reasons for s in result.scenarios
    ]
    assert max(s.duration for s in result.scenarios) > 3.0  # its deadline moved by the wait


def test_a_call_stuck_in_its_slot_holds_the_others_one_more_timeout_at_most(
    project: Path,
) -> None:
    model = "{provider: 'engine.py:build', max_concurrency: 1, seconds: 0.01}"
    path = suite(project, model, 2, "stuck", defaults="{timeout: 0.6}")
    text = path.read_text().replace("input: '1+10'", "input: 'hang 1+10'")
    path.write_text(text)
    scenarios = list(load_file(path).scenarios)
    counters = engine(scenarios)
    hung = next(s for s in scenarios if s.name == "add1")  # the app function: a sync call
    waiting = next(s for s in scenarios if s.name == "add0")
    try:
        start = time.perf_counter()
        first = run_scenarios([hung], RunOptions())
        assert first.scenarios[0].status == "error"  # its own timeout, as any hung call
        result = run_scenarios([waiting], RunOptions())
        elapsed = time.perf_counter() - start
    finally:
        counters.RELEASE.set()
    (scenario,) = result.scenarios
    assert scenario.status == "error"
    error = scenario.runs[0].error
    assert error is not None and error.phase == "timeout"
    assert "waited for a max_concurrency slot" in error.message
    assert elapsed < 8  # the hung run's timeout, then at most 2 x timeout: far from the 30 s
    # once the stuck call returns, its slot is free again
    deadline = time.monotonic() + 5
    while counters.IN_FLIGHT.value and time.monotonic() < deadline:
        time.sleep(0.05)
    again = run_scenarios([waiting], RunOptions())
    assert again.scenarios[0].status == "passed", again.scenarios[0].reasons


def test_async_calls_cancelled_holding_or_waiting_leave_no_slot_taken(project: Path) -> None:
    # two awaited runs, one slot, calls far longer than the timeout: one run is cancelled
    # holding the slot, the other while its call waits for it
    model = "{provider: 'engine.py:build', max_concurrency: 1, seconds: 1.5}"
    path = suite(project, model, 3, "cancel", defaults="{timeout: 0.3}")
    scenarios = [s for s in load_file(path).scenarios if s.name in ("add0", "add2")]
    result = run_scenarios(scenarios, RunOptions(concurrency=2))
    assert [s.status for s in result.scenarios] == ["error", "error"]
    slots = scenarios[0].model.gate._slots
    # a waiter's thread may still be handing back a slot it won after its run ended
    deadline = time.monotonic() + 3
    while not slots.acquire(False):
        assert time.monotonic() < deadline, "a cancelled call kept its slot"
        time.sleep(0.05)
    slots.release()
