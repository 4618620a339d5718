"""Real LangGraph agents with real tools, driven by ScriptedChatModel, one builder per case.

Every builder returns an :class:`AgentCase`: the compiled graph, the input to give it, the
(name, args, status) list a correct capture must produce in request order, and the exception
the run raises, if any. The graph is the classic ReAct loop (``agent`` node calling the model
with the tools bound, ``tools`` node = LangGraph's ``ToolNode``, ``tools_condition`` routing),
built by hand with the same node names as ``create_react_agent`` (deprecated in LangGraph 1.x).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool, StructuredTool, ToolException, tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import StreamMode
from pydantic import BaseModel, ConfigDict

from harness.models.scripted import ScriptedChatModel, TurnSpec

Expected = tuple[str, dict[str, Any], str]
"""(tool name, arguments, status) of one call, as every capture must report it."""

SLOW_SECONDS = 0.03
"""How long ``slow_lookup`` sleeps, so parallel calls finish out of request order."""

LOOKUP_TABLE = {"alpha": "first", "beta": "second", "france": "Paris", "japan": "Tokyo"}


# --- tools -------------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def lookup(key: str) -> str:
    """Look a key up in a small fixed table."""
    return LOOKUP_TABLE.get(key, "unknown")


@tool
def slow_lookup(key: str) -> str:
    """Look a key up, slowly (so a parallel sibling finishes first)."""
    time.sleep(SLOW_SECONDS)
    return LOOKUP_TABLE.get(key, "unknown")


@tool
def echo(token: str) -> str:
    """Return the token unchanged."""
    return token


@tool
def explode(reason: str) -> str:
    """Always fail with a plain ValueError (not handled by a default ToolNode)."""
    raise ValueError(f"explode failed: {reason}")


def _flaky(x: int) -> str:
    raise ToolException(f"flaky cannot handle x={x}")


flaky = StructuredTool.from_function(
    _flaky,
    name="flaky",
    description="Always fails with a ToolException that the tool itself turns into an error.",
    handle_tool_error=True,
)


class StrictAddArgs(BaseModel):
    """Arguments of strict_add: integers only, no coercion, no extra keys."""

    model_config = ConfigDict(strict=True, extra="forbid")

    a: int
    b: int


def _strict_add(a: int, b: int) -> int:
    return a + b


strict_add = StructuredTool.from_function(
    _strict_add,
    name="strict_add",
    description="Add two integers given as JSON integers (strings are rejected).",
    args_schema=StrictAddArgs,
)


# --- graph -------------------------------------------------------------------------------


def build_react_graph(
    model: ScriptedChatModel,
    tools: Sequence[BaseTool],
    *,
    name: str = "agent",
    checkpointer: Any = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The ReAct loop: model with tools bound -> ToolNode -> model ..., until no tool call."""
    bound = model.bind_tools(list(tools))

    def call_model(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke(state["messages"], config)]}

    async def acall_model(
        state: MessagesState, config: RunnableConfig
    ) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"], config)]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", RunnableLambda(call_model, afunc=acall_model, name="agent"))
    builder.add_node("tools", ToolNode(list(tools)))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(name=name, checkpointer=checkpointer)


def user_input(text: str) -> dict[str, list[BaseMessage]]:
    """The graph input for one user message."""
    return {"messages": [HumanMessage(content=text)]}


@dataclass(frozen=True)
class AgentCase:
    """One runnable scenario: graph, input, expected calls in request order, expected failure."""

    name: str
    graph: CompiledStateGraph[Any, Any, Any, Any]
    input: dict[str, Any]
    expected: list[Expected]
    raises: type[BaseException] | None = None
    model: ScriptedChatModel | None = None
    notes: dict[str, Any] = field(default_factory=dict)


def _case(
    name: str,
    turns: Sequence[TurnSpec],
    tools: Sequence[BaseTool],
    expected: list[Expected],
    *,
    prompt: str,
    latency: float = 0.0,
    raises: type[BaseException] | None = None,
    **notes: Any,
) -> AgentCase:
    model = ScriptedChatModel(turns, latency=latency)
    graph = build_react_graph(model, tools, name=name)
    return AgentCase(name, graph, user_input(prompt), expected, raises, model, dict(notes))


def _calls(*specs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "args": a} for n, a in specs]}


# --- cases -------------------------------------------------------------------------------


def single_call_agent(latency: float = 0.0) -> AgentCase:
    """One turn, one call: add(a=2, b=3) -> 5."""
    return _case(
        "single_call",
        [_calls(("add", {"a": 2, "b": 3}))],
        [add],
        [("add", {"a": 2, "b": 3}, "ok")],
        prompt="What is 2 + 3?",
        latency=latency,
        results={"add": "5"},
    )


def parallel_calls_agent(latency: float = 0.0) -> AgentCase:
    """Turn 0 asks for slow_lookup and add at once (add finishes first); turn 1 asks for echo."""
    return _case(
        "parallel_calls",
        [
            _calls(("slow_lookup", {"key": "alpha"}), ("add", {"a": 1, "b": 2})),
            _calls(("echo", {"token": "after"})),
        ],
        [slow_lookup, add, echo],
        [
            ("slow_lookup", {"key": "alpha"}, "ok"),
            ("add", {"a": 1, "b": 2}, "ok"),
            ("echo", {"token": "after"}, "ok"),
        ],
        prompt="Look up alpha and add 1 and 2, then echo.",
        latency=latency,
    )


def raising_tool_agent(latency: float = 0.0) -> AgentCase:
    """add succeeds, then explode raises ValueError, which a default ToolNode re-raises."""
    return _case(
        "raising_tool",
        [_calls(("add", {"a": 1, "b": 1})), _calls(("explode", {"reason": "boom"}))],
        [add, explode],
        [("add", {"a": 1, "b": 1}, "ok"), ("explode", {"reason": "boom"}, "error")],
        prompt="Add then explode.",
        latency=latency,
        raises=ValueError,
        error_contains="explode failed: boom",
    )


def tool_exception_agent(latency: float = 0.0) -> AgentCase:
    """flaky raises ToolException with handle_tool_error=True: an error ToolMessage, run goes on."""
    return _case(
        "tool_exception",
        [_calls(("flaky", {"x": 7}))],
        [flaky],
        [("flaky", {"x": 7}, "error")],
        prompt="Try flaky.",
        latency=latency,
        error_contains="flaky cannot handle x=7",
    )


def bad_args_agent(latency: float = 0.0) -> AgentCase:
    """strict_add gets a string for an int: schema validation fails, ToolNode reports the error."""
    return _case(
        "bad_args",
        [_calls(("strict_add", {"a": "1", "b": 2}))],
        [strict_add],
        [("strict_add", {"a": "1", "b": 2}, "error")],
        prompt="Add '1' and 2 strictly.",
        latency=latency,
        error_contains="a",
    )


def unknown_tool_agent(latency: float = 0.0) -> AgentCase:
    """One turn asks for add and for teleport, which the agent lacks: teleport stays requested."""
    return _case(
        "unknown_tool",
        [_calls(("add", {"a": 4, "b": 4}), ("teleport", {"to": "mars"}))],
        [add],
        [("add", {"a": 4, "b": 4}, "ok"), ("teleport", {"to": "mars"}, "requested")],
        prompt="Add 4 and 4 and teleport to mars.",
        latency=latency,
        error_contains="teleport",
    )


def make_research_tool(inner: CompiledStateGraph[Any, Any, Any, Any]) -> BaseTool:
    """Wrap an inner agent as a tool; the inner run inherits the caller's callbacks."""

    def _final(result: dict[str, Any]) -> str:
        last = result["messages"][-1]
        return str(last.content) if isinstance(last, AIMessage) else ""

    def research(question: str) -> str:
        return _final(inner.invoke(user_input(question)))

    async def aresearch(question: str) -> str:
        return _final(await inner.ainvoke(user_input(question)))

    return StructuredTool.from_function(
        research,
        coroutine=aresearch,
        name="research",
        description="Ask the research agent a question.",
    )


def nested_agent(latency: float = 0.0) -> AgentCase:
    """Outer agent calls research (an inner agent as a tool), which calls lookup twice.

    Expected order: a nested call comes right after the call whose tool ran it (depth first),
    then the outer agent's later calls.
    """
    inner_model = ScriptedChatModel(
        [_calls(("lookup", {"key": "france"}), ("lookup", {"key": "japan"}))],
        final_answer="Paris and Tokyo",
        latency=latency,
    )
    inner = build_react_graph(inner_model, [lookup], name="researcher")
    research = make_research_tool(inner)
    case = _case(
        "nested",
        [_calls(("research", {"question": "capitals?"})), _calls(("add", {"a": 5, "b": 6}))],
        [research, add],
        [
            ("research", {"question": "capitals?"}, "ok"),
            ("lookup", {"key": "france"}, "ok"),
            ("lookup", {"key": "japan"}, "ok"),
            ("add", {"a": 5, "b": 6}, "ok"),
        ],
        prompt="Research capitals then add.",
        latency=latency,
    )
    case.notes["inner_model"] = inner_model
    return case


SHARED_ECHO_IDS = ("echo-a", "echo-b", "echo-c")
"""The fixed call ids ``echo_agent(shared_ids=True)`` uses in every run (ids reused by design)."""


def echo_agent(token: str, latency: float = 0.0, *, shared_ids: bool = False) -> AgentCase:
    """Echo the token twice (two calls in one turn) and once more alone: for concurrency tests.

    With ``shared_ids`` every run uses the same call ids (``SHARED_ECHO_IDS``), as a provider
    that numbers calls per response would: captures must still keep the runs apart.
    """
    ids = SHARED_ECHO_IDS if shared_ids else (None, None, None)

    def call(suffix: str, call_id: str | None) -> dict[str, Any]:
        return {"name": "echo", "args": {"token": f"{token}-{suffix}"}, "id": call_id}

    return _case(
        f"echo_{token}",
        [
            {"tool_calls": [call("a", ids[0]), call("b", ids[1])]},
            {"tool_calls": [call("c", ids[2])]},
        ],
        [echo],
        [
            ("echo", {"token": f"{token}-a"}, "ok"),
            ("echo", {"token": f"{token}-b"}, "ok"),
            ("echo", {"token": f"{token}-c"}, "ok"),
        ],
        prompt=f"echo {token}",
        latency=latency,
    )


CASES: dict[str, Callable[..., AgentCase]] = {
    "single_call": single_call_agent,
    "parallel_calls": parallel_calls_agent,
    "raising_tool": raising_tool_agent,
    "tool_exception": tool_exception_agent,
    "bad_args": bad_args_agent,
    "unknown_tool": unknown_tool_agent,
    "nested": nested_agent,
}
"""Every standard case by name (echo_agent takes a token, so it is not listed)."""


# --- running -----------------------------------------------------------------------------

MODES = ("invoke", "ainvoke", "stream", "astream")
"""The four ways a graph is driven; the stream modes stream tokens and state values."""

_STREAM_MODES: list[StreamMode] = ["values", "messages"]


async def arun_case(
    case: AgentCase, mode: str, config: RunnableConfig | None = None
) -> dict[str, Any]:
    """Run the case's graph in ``mode``; return the final state (the run's exception propagates)."""
    if mode == "invoke":
        return dict(case.graph.invoke(case.input, config))
    if mode == "ainvoke":
        return dict(await case.graph.ainvoke(case.input, config))
    final: dict[str, Any] = {}
    if mode == "stream":
        for kind, payload in case.graph.stream(case.input, config, stream_mode=_STREAM_MODES):
            if kind == "values":
                final = dict(cast(Mapping[str, Any], payload))
        return final
    if mode == "astream":
        async for kind, payload in case.graph.astream(
            case.input, config, stream_mode=_STREAM_MODES
        ):
            if kind == "values":
                final = dict(cast(Mapping[str, Any], payload))
        return final
    raise ValueError(f"unknown run mode {mode!r}; use one of {', '.join(MODES)}")


def run_case(case: AgentCase, mode: str, config: RunnableConfig | None = None) -> dict[str, Any]:
    """Synchronous wrapper of :func:`arun_case` (async modes run in a fresh event loop)."""
    import asyncio

    return asyncio.run(arun_case(case, mode, config))
