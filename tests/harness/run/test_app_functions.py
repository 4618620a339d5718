"""Application functions in ``harness run``: an agent factory that returns a plain function.

The function builds nothing the runner can hand a config to: it invokes the real agent
(``create_agent``, as LangChain's docs write it) itself. The runner captures it the way the
``tool_recorder`` fixture does, through LangChain's configure hooks, sync, async and on
threads that carry the context; concurrent runs never cross; spans and cassettes see the runs.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables.config import ContextThreadPoolExecutor
from langchain_core.tools import tool

from harness.cassettes import CassetteStore
from harness.cassettes.scenarios import wrap_scenarios
from harness.expectation import Expectation
from harness.metrics.accuracy import ToolCallAccuracy
from harness.models.scripted import ScriptedChatModel
from harness.run.invocation import NOTHING_SEEN
from harness.run.runner import RunOptions, run_scenarios
from harness.scenarios import AgentRef, Scenario
from harness.span_export import configure_export
from tracing.otlp.file_format import iter_spans

SECRET = "sk-live-app-fn-42"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def call_api(endpoint: str, api_key: str) -> str:
    """Call an API with a key."""
    return f"{endpoint}: 200"


def sync_app(model: BaseChatModel) -> Callable[[Any], Any]:
    agent = create_agent(model, [add, call_api])

    def answer(payload: Any) -> Any:
        return agent.invoke(payload)

    return answer


def async_app(model: BaseChatModel) -> Callable[[Any], Any]:
    agent = create_agent(model, [add, call_api])

    async def answer(payload: Any) -> Any:
        return await agent.ainvoke(payload)

    return answer


def langchain_pool_app(model: BaseChatModel) -> Callable[[Any], Any]:
    """The agent runs on a thread of LangChain's own executor (it copies the context)."""
    agent = create_agent(model, [add, call_api])

    def answer(payload: Any) -> Any:
        with ContextThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(agent.invoke, payload).result()

    return answer


def to_thread_app(model: BaseChatModel) -> Callable[[Any], Any]:
    """An async function handing the sync agent to ``asyncio.to_thread`` (copies the context)."""
    agent = create_agent(model, [add, call_api])

    async def answer(payload: Any) -> Any:
        return await asyncio.to_thread(agent.invoke, payload)

    return answer


def bare_thread_app(model: BaseChatModel) -> Callable[[Any], Any]:
    """The agent runs on a thread the app starts by hand: no context, nothing to capture."""
    agent = create_agent(model, [add, call_api])

    def answer(payload: Any) -> Any:
        out: dict[str, Any] = {}
        worker = threading.Thread(target=lambda: out.update(state=agent.invoke(payload)))
        worker.start()
        worker.join()
        return out["state"]

    return answer


def adds(name: str, factory: Callable[..., Any], a: int = 2, b: int = 3, **model: Any) -> Scenario:
    script = [
        {"tool_calls": [{"name": "add", "args": {"a": a, "b": b}}]},
        {"content": str(a + b)},
    ]
    return Scenario(
        suite="app",
        name=name,
        file="<test>",
        line=None,
        agent=AgentRef(f"test:{factory.__name__}", factory),
        model=ScriptedChatModel(script, **model),
        input={"messages": [("user", f"{a} + {b}?")]},
        input_text=f"{a} + {b}?",
        expected=(Expectation("add", {"a": a, "b": b}),),
        metrics=(ToolCallAccuracy(threshold=1.0),),
        timeout=20,
    )


def test_sync_async_and_context_carrying_threads_are_all_captured() -> None:
    apps = [sync_app, async_app, langchain_pool_app, to_thread_app]
    result = run_scenarios([adds(app.__name__, app) for app in apps], RunOptions(concurrency=4))
    for scenario in result.scenarios:
        assert scenario.status == "passed", (scenario.name, scenario.reasons)
        (run,) = scenario.runs
        assert [(c.name, c.args, c.status, c.result) for c in run.calls] == [
            ("add", {"a": 2, "b": 3}, "ok", "5")
        ], scenario.name
        assert run.output == "5"


def test_a_run_that_saw_no_langchain_run_says_so_and_why() -> None:
    result = run_scenarios([adds("bare", bare_thread_app)])
    (scenario,) = result.scenarios
    assert scenario.status == "failed"
    (run,) = scenario.runs
    assert run.calls == []
    reasons = run.reasons()
    assert reasons[0].startswith("tool_call_accuracy 0.00 < 1.00: " + NOTHING_SEEN)
    assert "a thread it started itself" in reasons[0]
    assert "missing: add(a=2, b=3)" in reasons[0]


def test_a_passing_run_that_saw_nothing_is_a_warning() -> None:
    quiet = adds("quiet", bare_thread_app)
    quiet = replace(quiet, expected=(), metrics=())
    result = run_scenarios([quiet, adds("seen", sync_app)])
    assert [s.status for s in result.scenarios] == ["passed", "passed"]
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith("app::quiet: passed, but no LangChain run was seen")


def test_concurrent_app_functions_never_cross() -> None:
    # every run is slow enough (scripted latency) that all of them are in flight together
    scenarios = [
        adds(f"s{i}", sync_app if i % 2 else async_app, a=i, b=100 + i, latency=0.05)
        for i in range(12)
    ]
    result = run_scenarios(scenarios, RunOptions(concurrency=12, repeat=2))
    for i, scenario in enumerate(result.scenarios):
        assert scenario.status == "passed", (scenario.name, scenario.reasons)
        for run in scenario.runs:
            assert [(c.name, c.args) for c in run.calls] == [("add", {"a": i, "b": 100 + i})]


def test_the_span_exporter_and_its_secret_watcher_see_an_app_functions_runs(
    tmp_path: Path,
) -> None:
    script = [
        {"tool_calls": [{"name": "call_api", "args": {"endpoint": "/v1", "api_key": SECRET}}]},
        {"content": "done"},
    ]
    scenario = Scenario(
        suite="app",
        name="keyed",
        file="<test>",
        line=None,
        agent=AgentRef("test:sync_app", sync_app),
        model=ScriptedChatModel(script),
        input={"messages": [("user", "call the api")]},
        input_text="call the api",
        expected=(Expectation("call_api", {"endpoint": "/v1"}),),
        metrics=(ToolCallAccuracy(threshold=1.0),),
        timeout=20,
    )
    trace_file = tmp_path / "t.json"
    pipeline = configure_export(trace_file=trace_file, capture_content=True)
    try:
        options = RunOptions(tracer_provider=pipeline.tracer_provider, capture_content=True)
        result = run_scenarios([scenario], options)
    finally:
        pipeline.shutdown()
    (run,) = result.scenarios[0].runs
    assert run.passed, run.reasons()
    spans = list(iter_spans(trace_file))
    (root,) = [s for s in spans if s.parent_id is None]
    assert root.name == "scenario keyed" and root.trace_id == run.trace_id
    by_id = {s.span_id: s for s in spans}
    (tool_span,) = [s for s in spans if s.name == "execute_tool call_api"]
    # under the scenario's root, through the agent's own spans
    parent = tool_span
    while parent.parent_id is not None:
        parent = by_id[parent.parent_id]
    assert parent is root and tool_span.trace_id == run.trace_id
    assert any(s.name.startswith("chat") for s in spans if s.trace_id == run.trace_id)
    assert SECRET not in trace_file.read_text()  # the watcher ran before the emitter
    assert run.calls[0].args["api_key"] == SECRET  # the tool really got it


def test_record_then_replay_an_app_function_records_each_call_once(tmp_path: Path) -> None:
    scenarios = [adds("sync", sync_app), adds("async", async_app, a=4, b=5)]
    store = CassetteStore("record")
    recorded = run_scenarios(wrap_scenarios(scenarios, store, tmp_path), RunOptions())
    assert store.finish() == []
    replay = CassetteStore("replay")
    # the replayed model is another script: only the cassette can give the right answers
    replaced = [replace(s, model=ScriptedChatModel([{"content": "wrong"}])) for s in scenarios]
    replayed = run_scenarios(wrap_scenarios(replaced, replay, tmp_path), RunOptions())
    assert replay.finish() == []
    for result in (recorded, replayed):
        for scenario, (a, b) in zip(result.scenarios, [(2, 3), (4, 5)], strict=True):
            assert scenario.status == "passed", scenario.reasons
            (run,) = scenario.runs
            # the recorder/replayer's inner model is never captured as a second run
            assert [(c.name, c.args, c.status) for c in run.calls] == [
                ("add", {"a": a, "b": b}, "ok")
            ]
