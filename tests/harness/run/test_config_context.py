"""``config:`` and ``context:`` reach the agent; checkpointer graphs get a fresh thread per run."""

from __future__ import annotations

import asyncio
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.run.invocation import TurnOutcome, converse, run_config
from harness.run.results import ScenarioResult
from harness.run.runner import RunOptions, _invoke, run_scenarios
from harness.scenarios import load_file
from tracing.langchain.recorder import ToolCallRecorder

# A real StateGraph whose only node answers with what LangGraph handed it: the RunnableConfig
# (tags, metadata, configurable) and the runtime context; a second graph counts the messages
# its checkpointer kept for the thread, so a shared thread would show.
AGENTS = """
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.runtime import Runtime


@dataclass
class Caller:
    user: str
    plan: str = "free"


def echo(state: MessagesState, config: RunnableConfig, runtime: Runtime[Caller]) -> dict[str, Any]:
    context = runtime.context
    answer = {
        "tags": sorted(config.get("tags", [])),
        "channel": config.get("metadata", {}).get("channel"),
        "tenant": config.get("configurable", {}).get("tenant"),
        "thread": config.get("configurable", {}).get("thread_id"),
        "recursion_limit": config.get("recursion_limit"),
        "user": getattr(context, "user", None),
        "plan": getattr(context, "plan", None),
    }
    return {"messages": [AIMessage(content="ok", additional_kwargs={"seen": answer})]}


def _graph(checkpointer=None, context_schema=None):
    graph = StateGraph(MessagesState, context_schema=context_schema)
    graph.add_node("echo", echo)
    graph.add_edge(START, "echo")
    return graph.compile(checkpointer=checkpointer)


def with_context(model):
    return _graph(context_schema=Caller)


def plain(model):
    return _graph()


def remembering(model):
    return _graph(checkpointer=InMemorySaver())


def count(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(content=f"{len(state['messages'])} messages")]}


def counter(model):
    graph = StateGraph(MessagesState)
    graph.add_node("count", count)
    graph.add_edge(START, "count")
    return graph.compile(checkpointer=InMemorySaver())
"""


def _suite(tmp_path: Path, body: str) -> Path:
    (tmp_path / "cfg_agents.py").write_text(AGENTS, encoding="utf-8")
    path = tmp_path / "suite.yaml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def _run(path: Path) -> list[ScenarioResult]:
    suite = load_file(path)
    return list(run_scenarios(list(suite.scenarios), RunOptions(concurrency=2)).scenarios)


def test_config_and_context_reach_the_graph(tmp_path: Path) -> None:
    path = _suite(
        tmp_path,
        """
        suite: cfg
        agent: cfg_agents.py:with_context
        defaults:
          config:
            tags: [suite-tag]
            metadata: {channel: suite}
            configurable: {tenant: acme}
        scenarios:
          - name: merged
            input: hi
            context: {user: ann, plan: pro}
            config:
              tags: [own-tag]
              metadata: {channel: web}
              recursion_limit: 7
            expect:
              output: ok
        """,
    )
    suite = load_file(path)
    scenario = suite.scenarios[0]
    assert scenario.config == {
        "tags": ["suite-tag", "own-tag"],
        "metadata": {"channel": "web"},
        "configurable": {"tenant": "acme"},
        "recursion_limit": 7,
    }
    assert scenario.has_context and scenario.context == {"user": "ann", "plan": "pro"}

    agent = scenario.agent.factory(model=None)
    recorder = ToolCallRecorder()
    done: list[TurnOutcome] = []
    asyncio.run(
        converse(scenario, agent, run_config(scenario, agent, [recorder]), recorder, _invoke, done)
    )
    seen = done[0].state["messages"][-1].additional_kwargs["seen"]
    assert seen == {
        "tags": ["own-tag", "suite-tag"],
        "channel": "web",
        "tenant": "acme",
        "thread": None,  # no checkpointer, no conversation: no thread is made up
        "recursion_limit": 7,
        "user": "ann",
        "plan": "pro",
    }
    [result] = _run(path)
    assert result.status == "passed", result.reasons


def test_context_for_an_agent_without_context_schema_names_the_agent(tmp_path: Path) -> None:
    path = _suite(
        tmp_path,
        """
        agent: cfg_agents.py:plain
        scenarios:
          - name: stray context
            input: hi
            context: {user: ann}
        """,
    )
    [result] = _run(path)
    assert result.status == "error"
    message = result.runs[0].error.message  # type: ignore[union-attr]
    assert "cfg_agents.py:plain" in message
    assert "has no context_schema" in message


def test_checkpointer_graph_gets_a_fresh_thread_per_run(tmp_path: Path) -> None:
    path = _suite(
        tmp_path,
        """
        agent: cfg_agents.py:counter
        scenarios:
          - name: fresh memory every run
            input: hi
            repeat: 3
            expect:
              output: "1 messages"   # only this run's message: no earlier run's
        """,
    )
    [result] = _run(path)
    assert result.status == "passed", result.reasons
    assert [run.output for run in result.runs] == ["1 messages"] * 3


def test_scenario_thread_id_is_kept(tmp_path: Path) -> None:
    path = _suite(
        tmp_path,
        """
        agent: cfg_agents.py:remembering
        scenarios:
          - name: pinned thread
            input: hi
            config: {configurable: {thread_id: pinned-1}}
        """,
    )
    scenario = load_file(path).scenarios[0]
    agent = scenario.agent.factory(model=None)
    assert run_config(scenario, agent, [])["configurable"]["thread_id"] == "pinned-1"
    unpinned = replace(scenario, config={})
    first = run_config(unpinned, agent, [])["configurable"]["thread_id"]
    second = run_config(unpinned, agent, [])["configurable"]["thread_id"]
    assert first != second and first.startswith("harness-")


def test_recursion_limit_is_applied(tmp_path: Path) -> None:
    loop_agent = """
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph


def again(state: MessagesState):
    return {"messages": [AIMessage(content="again")]}


def build(model):
    graph = StateGraph(MessagesState)
    graph.add_node("again", again)
    graph.add_edge(START, "again")
    graph.add_edge("again", "again")
    return graph.compile()
"""
    (tmp_path / "loop_agent.py").write_text(loop_agent, encoding="utf-8")
    path = tmp_path / "loop.yaml"
    path.write_text(
        "agent: loop_agent.py:build\nscenarios:\n  - name: loops\n    input: hi\n"
        "    config: {recursion_limit: 3}\n",
        encoding="utf-8",
    )
    [result] = _run(path)
    assert result.status == "error"
    assert result.runs[0].error is not None
    assert "Recursion limit of 3" in result.runs[0].error.message


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("config: [tags]", "scenarios[0].config: expected a mapping"),
        ("config: {tags: [a], retries: 2}", "scenarios[0].config: unknown key 'retries'"),
        ("config: {recursion_limit: 0}", "scenarios[0].config.recursion_limit: "),
    ],
)
def test_bad_config_is_a_load_error_with_file_and_line(
    tmp_path: Path, config: str, message: str
) -> None:
    path = _suite(
        tmp_path,
        f"""
        agent: cfg_agents.py:plain
        scenarios:
          - name: bad
            input: hi
            {config}
        """,
    )
    with pytest.raises(ConfigError) as caught:
        load_file(path)
    [issue] = caught.value.issues
    text = str(issue)
    assert issue.line == 6, text
    assert f":6: {message}" in text
