"""What a LangChain callback event means: pure readings shared by the recorder and the emitter.

No state: each function takes an event's payload (or, for :func:`run_origin` and
:func:`execution_origin`, the task or thread delivering it) and says what it holds, so
:class:`~tracing.langchain.recorder.ToolCallRecorder` and :class:`~tracing.otel.emitter.SpanEmitter`
read events the same way and cannot drift apart.
"""

from __future__ import annotations

from asyncio import _get_running_loop, current_task
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from threading import get_ident
from typing import Any, TypeGuard

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.outputs import LLMResult

from tracing.agent_paths import agent_path, namespace_nodes
from tracing.records import content_text

__all__ = [
    "agent_path",
    "answered_call_id",
    "content_text",
    "event_name",
    "execution_origin",
    "graph_namespace",
    "invalid_requests",
    "is_error_message",
    "is_interrupt",
    "namespace_nodes",
    "node_of",
    "plain_result",
    "reply_message",
    "run_origin",
    "thread_of",
    "tool_call_id_of",
    "tool_inputs",
    "tool_outcome",
    "tool_scope_prefix",
]

_INTERRUPTS = frozenset(("GraphInterrupt", "NodeInterrupt"))


def event_name(serialized: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> Any:
    """The run's name: the ``name`` keyword LangChain passes, else the serialized one (or None)."""
    return kwargs.get("name") or (serialized or {}).get("name")


def reply_message(response: LLMResult) -> AIMessage | None:
    """The model's reply: the first generation's message, if it is an AI message."""
    for generations in response.generations:
        for generation in generations:
            message = getattr(generation, "message", None)
            return message if isinstance(message, AIMessage) else None
    return None


def invalid_requests(reply: AIMessage) -> list[Mapping[str, Any]]:
    """The calls LangChain could not parse (``invalid_tool_calls``: name, raw args, id, error)."""
    calls = getattr(reply, "invalid_tool_calls", None) or ()
    return [call for call in calls if isinstance(call, Mapping)]


def is_error_message(message: Any) -> TypeGuard[ToolMessage]:
    """Is this an error ToolMessage (a handled ToolException, failed validation, unknown tool)?"""
    return isinstance(message, ToolMessage) and message.status == "error"


def is_interrupt(error: BaseException) -> bool:
    """Is this LangGraph pausing the run (``interrupt()``), rather than a failure?

    Read by class name along the MRO, so that tracing needs no LangGraph import to tell, and
    subclasses (``NodeInterrupt``) count too.
    """
    return any(cls.__name__ in _INTERRUPTS for cls in type(error).__mro__)


def _is_command(output: Any) -> bool:
    """Is this a LangGraph ``Command``? Read by class name, so tracing needs no LangGraph import."""
    return type(output).__name__ == "Command"


def _command_messages(output: Any) -> list[ToolMessage] | None:
    """The ToolMessages of a LangGraph ``Command(update={"messages": [...]})``, else None."""
    if not _is_command(output):
        return None
    update = getattr(output, "update", None)
    messages: Any = update.get("messages") if isinstance(update, Mapping) else None
    if not isinstance(messages, Iterable):
        return []
    return [message for message in messages if isinstance(message, ToolMessage)]


def tool_outcome(output: Any, call_id: str | None = None) -> tuple[Any, str | None]:
    """A tool end event's result and error text (None unless the tool reported an error).

    The error text is set for an error ToolMessage, returned as is or inside a ``Command``'s
    state update (the tool failed, yet no exception reached the callbacks). Of a Command's
    messages, the one answering ``call_id`` counts (else the first).
    """
    messages = _command_messages(output)
    if messages is not None:
        answer = next((m for m in messages if call_id and m.tool_call_id == call_id), None)
        answer = answer or (messages[0] if messages else None)
        if answer is None:
            return output, None
        output = answer
    if not isinstance(output, ToolMessage):
        return output, None
    content = output.content
    return content, (str(content) if output.status == "error" else None)


def plain_result(output: Any) -> bool:
    """Neither a ToolMessage nor a ``Command``: what :func:`tool_outcome` gives back as it is,
    with no error (most tools return such a value)."""
    return not isinstance(output, ToolMessage) and not _is_command(output)


def answered_call_id(output: Any) -> str | None:
    """The call id a tool end's ToolMessage answers (None for any other output, or no id).

    An execution that started without an id (langchain-core before 1.0, a hand-written tool
    node) is still named by the ToolMessage it returns.
    """
    if isinstance(output, ToolMessage) and output.tool_call_id:
        return output.tool_call_id
    return None


def tool_inputs(inputs: Any) -> Any:
    """The arguments of a tool start's ``inputs``, unwrapping a whole LangChain ToolCall dict."""
    # ``type(...) is dict`` first: what LangChain passes, without the ABC check's cost
    if (type(inputs) is dict or isinstance(inputs, Mapping)) and inputs.get("type") == "tool_call":
        args = inputs.get("args")
        if isinstance(args, Mapping):
            return args
    return inputs


def tool_call_id_of(tool_call_id: Any, inputs: Any) -> str | None:
    """The call id of a tool start: the keyword, else the id of a ToolCall dict given as input.

    langchain-core before 1.1.2 passes no ``tool_call_id`` keyword to ``on_tool_start``; a tool
    node that hands the tool the model's whole ToolCall still has it in ``inputs``.
    """
    if isinstance(tool_call_id, str) and tool_call_id:
        return tool_call_id
    if (type(inputs) is dict or isinstance(inputs, Mapping)) and inputs.get("type") == "tool_call":
        found = inputs.get("id")
        if isinstance(found, str) and found:
            return found
    return None


def node_of(metadata: Mapping[str, Any] | None) -> str | None:
    """The LangGraph node a run belongs to (``langgraph_node`` metadata), if any."""
    node = metadata.get("langgraph_node") if metadata else None
    return node if isinstance(node, str) else None


def thread_of(metadata: Mapping[str, Any] | None) -> str | None:
    """The conversation a run belongs to: LangGraph's ``thread_id`` (copied into metadata)."""
    if not metadata:
        return None
    thread = metadata.get("thread_id")
    if isinstance(thread, (str, int)) and not isinstance(thread, bool) and str(thread):
        return str(thread)
    return None


Origin = tuple[str, int]
"""Where a top-level run started: ``("task", id)`` of an asyncio task, else ``("thread", id)``."""

_ORIGIN: ContextVar[Origin | None] = ContextVar("toolcall_harness_origin", default=None)
"""The origin of the last top-level model or graph run started in this context, so the work it
hands on (a tool on an executor thread, a task it starts) is known to come from there."""


def _here() -> Origin:
    if _get_running_loop() is not None:
        task = current_task()
        if task is not None:
            return ("task", id(task))
    return ("thread", get_ident())


def run_origin() -> Origin:
    """Where a top-level model or graph run starts (a run that may ask for tool calls): its
    asyncio task, else its OS thread (handlers run inline, on the caller's task or thread).

    Remembered in the context: LangChain runs a sync tool's ``ainvoke`` on an executor thread
    in a copy of the task's context, and a task started there (``asyncio.gather``) copies it
    too, so :func:`execution_origin` finds where such a tool was called from. Concurrent runs
    have different origins; runs of one origin follow one another. An id can be reused once
    its task or thread is gone, which only ever pairs a run with earlier ones.
    """
    origin = _here()
    if _ORIGIN.get() != origin:
        _ORIGIN.set(origin)
    return origin


def execution_origin() -> Origin:
    """Where a top-level tool run comes from: the origin of the last model or graph run started
    in this context or the one it was copied from (:func:`run_origin`), else its own."""
    return _ORIGIN.get() or _here()


def graph_namespace(metadata: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The node names of a run's LangGraph checkpoint namespace, outermost first.

    ``langgraph_checkpoint_ns`` is ``node:task_id|node:task_id|...``; the last entry is the node
    the run is in, the ones before it the subgraph nodes it is nested under.
    """
    if not metadata:
        return ()
    ns = metadata.get("langgraph_checkpoint_ns") or metadata.get("checkpoint_ns")
    return namespace_nodes(ns)


def tool_scope_prefix(agent: str | None, prefix: tuple[str, ...], tool: str) -> tuple[str, ...]:
    """The agents the runs inside a tool run are in: the tool's own agent path, then the tool.

    ``agent`` is the path the tool call ran in (None: the enclosing scope's ``prefix``); an
    agent used as a tool is one more agent level (docs/architecture.md "Capture").
    """
    outer = tuple(agent.split("/")) if agent else prefix
    return (*outer, tool)
