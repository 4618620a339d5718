"""The agent shapes the recording rules are about: pauses, id-less tools, malformed calls, ...

Each builder returns a :class:`ShapeCase`: a real LangGraph / LangChain agent, the inputs of
its invocations on one thread (a pause is resumed with ``Command(resume=...)``), and the ground
truth every capture must give: ``(name, args, status)`` in request order, plus each call's
agent path and attempt count. The shapes (docs/capture.md "What it records"):

* ``hitl_approve`` / ``hitl_reject`` / ``hitl_edit`` / ``hitl_paused``: ``create_agent`` with
  ``HumanInTheLoopMiddleware`` on both tools; the reviewer approves both, rejects the email,
  edits the email, or never answers;
* ``interrupt_in_tool`` / ``interrupt_in_tool_paused``: a tool calling ``interrupt()``;
* ``interrupt_in_node``: a review node calling ``interrupt()`` between the model and the tools;
* ``idless_tool_node``: LangGraph's tutorial tool node, ``tool.invoke(call["args"])``;
* ``invalid_args``: a chat model that, like langchain-openai, puts a call whose arguments are
  not JSON in ``AIMessage.invalid_tool_calls``;
* ``command_error``: a tool returning ``Command(update={"messages": [error ToolMessage]})``;
* ``retry``: ``ToolRetryMiddleware`` around a tool that fails twice, then succeeds;
* ``supervisor``: a hand-written supervisor graph with two sub-agents as subgraphs;
* ``tool_loop``: LangChain's tool-calling guide, by hand: the model, each tool with the model's
  call, the model again, each an ``invoke`` of its own (so each a top-level run, a trace of
  its own); ``tool_loop_chain``: the same loop inside one ``@chain`` (one run);
* ``structured_output``: ``create_agent(..., response_format=ToolStrategy(WeatherReport))``,
  whose structured-output call is bookkeeping, not a tool call.

``langchain`` (``create_agent`` and its middleware) is needed for the ``hitl_*``, ``retry``,
``interrupt_in_tool*`` and ``structured_output`` shapes; :data:`SHAPES` lists only what can be
built here.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, cast

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolCallChunk,
    ToolMessage,
)
from langchain_core.output_parsers.openai_tools import make_invalid_tool_call, parse_tool_call
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda, chain
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, StreamMode, interrupt
from pydantic import BaseModel, Field

from harness.models.scripted import ScriptedChatModel
from tests.support.agents import Expected, add, build_react_graph, lookup, user_input

HAS_LANGCHAIN = importlib.util.find_spec("langchain") is not None

# --- tools ---------------------------------------------------------------------------------


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"sent to {to}"


@tool
def book(city: str) -> str:
    """Book a trip, after the user confirms it."""
    answer = interrupt({"confirm": city})
    return f"booked {city}: {answer}"


@tool
def note(text: str) -> str:
    """Write a note down."""
    return f"noted {text}"


@tool
def pay(amount: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
    """Pay an amount; the card is always declined, which the tool reports in a Command."""
    message = ToolMessage(f"card declined for {amount}", tool_call_id=tool_call_id, status="error")
    return Command(update={"messages": [message]})


def make_flaky(failures: int) -> BaseTool:
    """A tool that raises on its first ``failures`` executions, then answers."""
    seen = {"count": 0}

    @tool
    def fetch(url: str) -> str:
        """Fetch a URL (flaky)."""
        seen["count"] += 1
        if seen["count"] <= failures:
            raise ConnectionError(f"attempt {seen['count']} failed")
        return f"page {url}"

    return fetch


# --- a chat model that reports malformed calls the way langchain-openai does -------------


class OpenAIStyleChatModel(ScriptedChatModel):
    """Plays raw OpenAI ``tool_calls`` (``arguments`` a JSON string, possibly malformed).

    Like langchain-openai: each raw call is parsed with ``parse_tool_call``; those that fail
    go to ``AIMessage.invalid_tool_calls`` with the parse error; the raw list stays in
    ``additional_kwargs["tool_calls"]``. Streaming yields ``tool_call_chunks`` with the raw
    argument text, which ``AIMessageChunk`` itself sorts into valid and invalid calls.
    """

    raw_turns: list[list[dict[str, Any]]] = Field(default_factory=list)

    def reply_for(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """The raw calls of this turn, parsed like langchain-openai, or the final answer."""
        turn = sum(1 for message in messages if isinstance(message, AIMessage))
        if turn >= len(self.raw_turns):
            return super().reply_for(messages)
        raw_calls = self.raw_turns[turn]
        valid: list[Any] = []
        invalid: list[Any] = []
        for raw in raw_calls:
            try:
                parsed = parse_tool_call(raw, return_id=True)
            except OutputParserException as exc:
                invalid.append(make_invalid_tool_call(raw, str(exc)))
                continue
            if parsed is not None:
                valid.append(parsed)
        return AIMessage(
            content="",
            tool_calls=valid,
            invalid_tool_calls=invalid,
            additional_kwargs={"tool_calls": raw_calls},
            response_metadata={"model_name": self.model_name, "finish_reason": "tool_calls"},
        )

    def _chunk(self, messages: Sequence[BaseMessage]) -> ChatGenerationChunk:
        reply = self.reply_for(messages)
        turn = sum(1 for message in messages if isinstance(message, AIMessage))
        raw_calls = self.raw_turns[turn] if turn < len(self.raw_turns) else []
        chunks = [
            ToolCallChunk(
                name=raw["function"]["name"],
                args=raw["function"]["arguments"],
                id=raw.get("id"),
                index=index,
                type="tool_call_chunk",
            )
            for index, raw in enumerate(raw_calls)
        ]
        message = AIMessageChunk(
            content=reply.content,
            tool_call_chunks=chunks,
            response_metadata=reply.response_metadata,
            chunk_position="last",
        )
        return ChatGenerationChunk(message=message)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        yield self._chunk(messages)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        yield self._chunk(messages)


def raw_call(name: str, arguments: str, call_id: str) -> dict[str, Any]:
    """One raw OpenAI tool call: ``{"id", "type": "function", "function": {name, arguments}}``."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# --- cases -----------------------------------------------------------------------------------


Runner = Callable[[Any, str, RunnableConfig], Awaitable[Any]]
"""Runs one input of a shape in a mode (``invoke``, ``ainvoke``, ``stream``, ``astream``)."""


@dataclass(frozen=True)
class ShapeCase:
    """One agent shape: graph, the inputs of its invocations on one thread, the ground truth."""

    name: str
    graph: Any
    inputs: list[Any]
    expected: list[Expected]
    agents: list[str | None]
    """The agent path of each expected call."""
    attempts: list[int] = field(default_factory=list)
    """The number of attempts of each expected call (empty: one per executed call)."""
    raises: type[BaseException] | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    runner: Runner | None = None
    """How one input runs (None: the graph's ``invoke``, ``ainvoke``, ``stream``, ``astream``)."""
    traces: int | None = None
    """The top-level runs (so traces) the inputs make (None: one each)."""

    def trace_count(self) -> int:
        """How many traces a run of the shape writes."""
        return self.traces if self.traces is not None else len(self.inputs)

    def attempt_counts(self) -> list[int]:
        """The attempts each expected call must have (0 for a call that never ran)."""
        if self.attempts:
            return self.attempts
        return [1 if status in ("ok", "error") else 0 for _, _, status in self.expected]


def _calls(*specs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "args": a} for n, a in specs]}


_WEATHER = ("get_weather", {"city": "Paris"})
_EMAIL = ("send_email", {"to": "ann@example.com", "body": "Sunny."})


def _hitl(name: str, decisions: list[dict[str, Any]] | None, expected: list[Expected]) -> ShapeCase:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    model = ScriptedChatModel([_calls(_WEATHER, _EMAIL)], final_answer="Sent.")
    graph = create_agent(
        model,
        [get_weather, send_email],
        middleware=[
            HumanInTheLoopMiddleware(interrupt_on={"get_weather": True, "send_email": True})
        ],
        checkpointer=InMemorySaver(),
        name="assistant",
    )
    inputs: list[Any] = [user_input("Weather in Paris, then email Ann.")]
    if decisions is not None:
        inputs.append(Command(resume={"decisions": decisions}))
    return ShapeCase(name, graph, inputs, expected, ["assistant"] * len(expected))


def hitl_approve() -> ShapeCase:
    """Both calls wait for review, both are approved: two calls, both ok."""
    return _hitl(
        "hitl_approve",
        [{"type": "approve"}, {"type": "approve"}],
        [(*_WEATHER, "ok"), (*_EMAIL, "ok")],
    )


def hitl_reject() -> ShapeCase:
    """The email is rejected: requested (with the reviewer's reason as error), never executed."""
    case = _hitl(
        "hitl_reject",
        [{"type": "approve"}, {"type": "reject", "message": "not now"}],
        [(*_WEATHER, "ok"), (*_EMAIL, "requested")],
    )
    case.notes["error_contains"] = "not now"
    return case


EDITED_EMAIL = {"to": "bob@example.com", "body": "Sunny."}


def hitl_edit() -> ShapeCase:
    """The reviewer edits the email's recipient: the call ran with the edited arguments."""
    edit = {"type": "edit", "edited_action": {"name": "send_email", "args": EDITED_EMAIL}}
    return _hitl(
        "hitl_edit",
        [{"type": "approve"}, edit],
        [(*_WEATHER, "ok"), ("send_email", EDITED_EMAIL, "ok")],
    )


def hitl_paused() -> ShapeCase:
    """The run ends waiting for the reviewer: both calls are interrupted."""
    return _hitl("hitl_paused", None, [(*_WEATHER, "interrupted"), (*_EMAIL, "interrupted")])


def _booking(name: str, resume: bool) -> ShapeCase:
    from langchain.agents import create_agent

    model = ScriptedChatModel([_calls(("book", {"city": "Rome"}))], final_answer="Booked.")
    graph = create_agent(model, [book], checkpointer=InMemorySaver(), name="booker")
    inputs: list[Any] = [user_input("Book Rome.")]
    if resume:
        inputs.append(Command(resume="yes"))
    status = "ok" if resume else "interrupted"
    return ShapeCase(name, graph, inputs, [("book", {"city": "Rome"}, status)], ["booker"])


def interrupt_in_tool() -> ShapeCase:
    """book pauses inside the tool and is resumed: one call, ok (not an error, then ok)."""
    return _booking("interrupt_in_tool", True)


def interrupt_in_tool_paused() -> ShapeCase:
    """book pauses inside the tool and the run ends there: interrupted, not error."""
    case = _booking("interrupt_in_tool_paused", False)
    return ShapeCase(case.name, case.graph, case.inputs, case.expected, case.agents, [0])


def interrupt_in_node() -> ShapeCase:
    """A review node between model and tools pauses; resumed, the call runs once."""
    model = ScriptedChatModel([_calls(("add", {"a": 2, "b": 2}))]).bind_tools([add])

    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"], config)]}

    async def aagent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"], config)]}

    def review(state: MessagesState) -> dict[str, Any]:
        interrupt({"review": "ok to add?"})
        return {}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "review" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node("agent", RunnableLambda(agent, afunc=aagent, name="agent"))
    builder.add_node("review", review)
    builder.add_node("tools", ToolNode([add]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["review", END])
    builder.add_edge("review", "tools")
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=InMemorySaver(), name="reviewed")
    return ShapeCase(
        "interrupt_in_node",
        graph,
        [user_input("2 + 2?"), Command(resume="yes")],
        [("add", {"a": 2, "b": 2}, "ok")],
        ["reviewed"],
    )


def idless_tool_node() -> ShapeCase:
    """LangGraph's tutorial tool node: ``tool.invoke(args)``, no call id reaches the tool."""
    tools = {t.name: t for t in (add, lookup)}
    model = ScriptedChatModel(
        [_calls(("add", {"a": 1, "b": 2}), ("lookup", {"key": "alpha"}))]
    ).bind_tools(list(tools.values()))

    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        return {"messages": [model.invoke(state["messages"], config)]}

    async def aagent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"], config)]}

    def tool_node(state: MessagesState) -> dict[str, list[BaseMessage]]:
        last = cast(AIMessage, state["messages"][-1])
        out: list[BaseMessage] = []
        for call in last.tool_calls:
            observation = tools[call["name"]].invoke(call["args"])
            out.append(ToolMessage(content=str(observation), tool_call_id=call["id"]))
        return {"messages": out}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", RunnableLambda(agent, afunc=aagent, name="agent"))
    builder.add_node("tools", tool_node)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return ShapeCase(
        "idless_tool_node",
        builder.compile(name="tutorial"),
        [user_input("Add and look up.")],
        [("add", {"a": 1, "b": 2}, "ok"), ("lookup", {"key": "alpha"}, "ok")],
        ["tutorial", "tutorial"],
    )


BROKEN_ARGUMENTS = "{city: 'Paris'}"
"""Not JSON even to a partial-JSON parser (unquoted key): invalid in every invoke mode."""


def invalid_args() -> ShapeCase:
    """One valid call and one whose arguments are not JSON: ok, then invalid."""
    model = OpenAIStyleChatModel(
        raw_turns=[
            [
                raw_call("lookup", '{"key": "beta"}', "call_ok"),
                raw_call("get_weather", BROKEN_ARGUMENTS, "call_bad"),
            ]
        ],
        final_answer="Could not read the weather call.",
    )
    graph = build_react_graph(model, [lookup, get_weather], name="openai_like")
    return ShapeCase(
        "invalid_args",
        graph,
        [user_input("beta and the weather")],
        [
            ("lookup", {"key": "beta"}, "ok"),
            ("get_weather", {"__raw__": BROKEN_ARGUMENTS}, "invalid"),
        ],
        ["openai_like", "openai_like"],
    )


def command_error() -> ShapeCase:
    """pay returns a Command whose ToolMessage has status error: the call is an error."""
    model = ScriptedChatModel([_calls(("pay", {"amount": 5}))], final_answer="Declined.")
    graph = build_react_graph(model, [pay], name="payer")
    case = ShapeCase(
        "command_error",
        graph,
        [user_input("Pay 5.")],
        [("pay", {"amount": 5}, "error")],
        ["payer"],
    )
    case.notes["error_contains"] = "card declined"
    return case


def retry() -> ShapeCase:
    """ToolRetryMiddleware: fetch fails twice, the third attempt succeeds: one call, 3 attempts."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import ToolRetryMiddleware

    model = ScriptedChatModel([_calls(("fetch", {"url": "a.example"}))], final_answer="Fetched.")
    graph = create_agent(
        model,
        [make_flaky(2)],
        middleware=[ToolRetryMiddleware(max_retries=3, initial_delay=0.0, jitter=False)],
        name="fetcher",
    )
    return ShapeCase(
        "retry",
        graph,
        [user_input("Fetch a.example.")],
        [("fetch", {"url": "a.example"}, "ok")],
        ["fetcher"],
        [3],
    )


def _subagent_node(
    name: str, graph: CompiledStateGraph[Any, Any, Any, Any], task: str
) -> RunnableLambda[Any, Any]:
    """A node that hands a sub-agent its own task and returns its answer to the supervisor."""

    def answer(result: Mapping[str, Any]) -> dict[str, list[BaseMessage]]:
        last = result["messages"][-1]
        return {"messages": [AIMessage(content=str(last.content), name=name)]}

    def run(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        return answer(graph.invoke({"messages": [HumanMessage(task)]}, config))

    async def arun(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        return answer(await graph.ainvoke({"messages": [HumanMessage(task)]}, config))

    return RunnableLambda(run, afunc=arun, name=name)


def supervisor() -> ShapeCase:
    """A supervisor notes the plan, then runs a research and a math sub-agent (subgraphs)."""
    research = build_react_graph(
        ScriptedChatModel([_calls(("lookup", {"key": "france"}))], final_answer="Paris"),
        [lookup],
        name="research_agent",
    )
    math = build_react_graph(
        ScriptedChatModel([_calls(("add", {"a": 3, "b": 4}))], final_answer="7"),
        [add],
        name="math_agent",
    )
    planner = ScriptedChatModel([_calls(("note", {"text": "research, then math"}))])
    planning = build_react_graph(planner, [note], name="planner")
    builder = StateGraph(MessagesState)
    builder.add_node("planner", planning)
    builder.add_node("research_agent", _subagent_node("research_agent", research, "capital?"))
    builder.add_node("math_agent", _subagent_node("math_agent", math, "3 + 4?"))
    builder.add_edge(START, "planner")
    builder.add_edge("planner", "research_agent")
    builder.add_edge("research_agent", "math_agent")
    builder.add_edge("math_agent", END)
    return ShapeCase(
        "supervisor",
        builder.compile(name="supervisor"),
        [user_input("Plan, research, compute.")],
        [
            ("note", {"text": "research, then math"}, "ok"),
            ("lookup", {"key": "france"}, "ok"),
            ("add", {"a": 3, "b": 4}, "ok"),
        ],
        ["supervisor/planner", "supervisor/research_agent", "supervisor/math_agent"],
    )


# --- LangChain's tool-calling guide, written by hand -------------------------------------------


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


LOOP_QUESTION = "What is 3 * 12? Also, what is 11 + 49?"
LOOP_CALLS = [("multiply", {"a": 3, "b": 12}), ("add", {"a": 11, "b": 49})]
_LOOP_TOOLS: dict[str, BaseTool] = {"add": add, "multiply": multiply}


def loop_model(
    calls: Sequence[tuple[str, dict[str, Any]]] = LOOP_CALLS,
    ids: Sequence[str] = (),
    latency: float = 0.0,
) -> Runnable[Any, BaseMessage]:
    """The guide's ``llm.bind_tools([add, multiply])``: ``calls`` in one turn, then the answer
    (``ids``: the call ids the model gives, as a provider reusing ids would; else fresh ones)."""
    specs = [
        {"name": name, "args": args, **({"id": ids[i]} if i < len(ids) else {})}
        for i, (name, args) in enumerate(calls)
    ]
    model = ScriptedChatModel([{"tool_calls": specs}], final_answer="Done.", latency=latency)
    return model.bind_tools(list(_LOOP_TOOLS.values()))


async def _model_turn(
    llm: Runnable[Any, BaseMessage], messages: list[BaseMessage], mode: str, config: Any
) -> BaseMessage:
    """One model call in ``mode``; streamed replies are added up chunk by chunk (the guide)."""
    if mode == "invoke":
        return llm.invoke(messages, config)
    if mode == "ainvoke":
        return await llm.ainvoke(messages, config)
    gathered: Any = None
    if mode == "stream":
        for chunk in llm.stream(messages, config):
            gathered = chunk if gathered is None else gathered + chunk
    else:
        async for chunk in llm.astream(messages, config):
            gathered = chunk if gathered is None else gathered + chunk
    return cast(BaseMessage, gathered)


async def run_tool_loop(
    llm: Runnable[Any, BaseMessage], question: str, mode: str, config: Any
) -> BaseMessage:
    """The guide's loop: each model and tool call an ``invoke(..., config)`` of its own."""
    messages: list[BaseMessage] = [HumanMessage(question)]
    reply = await _model_turn(llm, messages, mode, config)
    messages.append(reply)
    for tool_call in cast(AIMessage, reply).tool_calls:
        selected = _LOOP_TOOLS[tool_call["name"].lower()]
        if mode in ("invoke", "stream"):
            messages.append(selected.invoke(tool_call, config))
        else:
            messages.append(await selected.ainvoke(tool_call, config))
    return await _model_turn(llm, messages, mode, config)


def tool_loop() -> ShapeCase:
    """The guide's loop: 2 calls (requested in one run, executed in two others), 4 traces."""
    llm = loop_model()

    async def run(question: Any, mode: str, config: RunnableConfig) -> Any:
        return await run_tool_loop(llm, question, mode, config)

    return ShapeCase(
        "tool_loop",
        None,
        [LOOP_QUESTION],
        [(name, args, "ok") for name, args in LOOP_CALLS],
        [None, None],
        runner=run,
        traces=4,
    )


def tool_loop_chain() -> ShapeCase:
    """The same loop inside one ``@chain``: one run, one trace, the same 2 calls."""
    llm = loop_model()

    @chain
    def answer(question: str) -> BaseMessage:
        """The guide's loop; the config reaches each call through the chain's run."""
        messages: list[BaseMessage] = [HumanMessage(question)]
        reply = cast(AIMessage, llm.invoke(messages))
        messages.append(reply)
        for tool_call in reply.tool_calls:
            messages.append(_LOOP_TOOLS[tool_call["name"].lower()].invoke(tool_call))
        return llm.invoke(messages)

    async def run(question: Any, mode: str, config: RunnableConfig) -> Any:
        if mode == "invoke":
            return answer.invoke(question, config)
        if mode == "ainvoke":
            return await answer.ainvoke(question, config)
        if mode == "stream":
            return list(answer.stream(question, config))
        return [chunk async for chunk in answer.astream(question, config)]

    return ShapeCase(
        "tool_loop_chain",
        answer,
        [LOOP_QUESTION],
        [(name, args, "ok") for name, args in LOOP_CALLS],
        ["answer", "answer"],
        runner=run,
    )


class WeatherReport(BaseModel):
    """The weather in a city, as structured data."""

    city: str
    conditions: str


REPORT = ("WeatherReport", {"city": "Paris", "conditions": "sunny"})


def structured_output() -> ShapeCase:
    """``ToolStrategy`` structured output: get_weather runs; the WeatherReport call is the
    agent's answer, not a tool call (tracing/langchain/final_answer.py)."""
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ToolStrategy

    model = ScriptedChatModel([_calls(_WEATHER), _calls(REPORT)])
    graph = create_agent(
        model, [get_weather], response_format=ToolStrategy(WeatherReport), name="weather"
    )
    return ShapeCase(
        "structured_output",
        graph,
        [user_input("Weather in Paris?")],
        [(*_WEATHER, "ok")],
        ["weather"],
    )


_NEEDS_LANGCHAIN = {
    "hitl_approve": hitl_approve,
    "hitl_reject": hitl_reject,
    "hitl_edit": hitl_edit,
    "hitl_paused": hitl_paused,
    "interrupt_in_tool": interrupt_in_tool,
    "interrupt_in_tool_paused": interrupt_in_tool_paused,
    "retry": retry,
    "structured_output": structured_output,
}

SHAPES: dict[str, Callable[[], ShapeCase]] = {
    **(_NEEDS_LANGCHAIN if HAS_LANGCHAIN else {}),
    "interrupt_in_node": interrupt_in_node,
    "idless_tool_node": idless_tool_node,
    "invalid_args": invalid_args,
    "command_error": command_error,
    "supervisor": supervisor,
    "tool_loop": tool_loop,
    "tool_loop_chain": tool_loop_chain,
}
"""Every shape that can be built with what is installed, by name."""


# --- running ---------------------------------------------------------------------------------

_STREAM_MODES: list[StreamMode] = ["values", "messages"]


def thread_config(
    case: ShapeCase, callbacks: Sequence[Any], thread: str = "thread-1"
) -> RunnableConfig:
    """The config of every invocation of a case: its callbacks and one thread."""
    return RunnableConfig(callbacks=list(callbacks), configurable={"thread_id": thread})


async def arun_shape(case: ShapeCase, mode: str, config: RunnableConfig) -> Any:
    """Invoke the case's graph once per input, in ``mode``, on the config's thread."""
    result: Any = None
    for step in case.inputs:
        if case.runner is not None:
            result = await case.runner(step, mode, config)
        elif mode == "invoke":
            result = case.graph.invoke(step, config)
        elif mode == "ainvoke":
            result = await case.graph.ainvoke(step, config)
        elif mode == "stream":
            for _ in case.graph.stream(step, config, stream_mode=_STREAM_MODES):
                pass
        elif mode == "astream":
            async for _ in case.graph.astream(step, config, stream_mode=_STREAM_MODES):
                pass
        else:
            raise ValueError(f"unknown run mode {mode!r}")
    return result


def run_shape(case: ShapeCase, mode: str, config: RunnableConfig) -> Any:
    """Synchronous wrapper of :func:`arun_shape` (async modes run in a fresh event loop)."""
    import asyncio

    return asyncio.run(arun_shape(case, mode, config))


def dump(value: Any) -> str:
    """Compact JSON of a value (for failure messages)."""
    return json.dumps(value, default=str)
